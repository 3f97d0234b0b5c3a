"""`keras-laf scalars`: learning aggregation targets of sets of digits.

The first experiment of the LAF paper: sets of 2 to 10 digits (0..9) are
labelled by one of the twelve targets of `laf_experiments.data.TARGETS`
(count, sum, mean, max, ..., kurtosis); a DeepSets model (an embedding of
the digits, a sigmoid, an aggregation and a linear output) is trained with
the MAE loss for each aggregation, LAF and the baselines, and tested on
sets of up to 5, 10, ..., 50 elements to see how it generalises to larger
sets than it was trained on.
"""

from laf_experiments import regression
from laf_experiments.data import TARGETS
from laf_experiments.data import TEST_MAX_SIZES
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_methods_and_sizes_arguments
from laf_experiments.settings import choice_list

METHODS = ("laf", "deepsets", "pna", "lstm")
DEFAULT_TARGETS = ("count", "sum", "max", "mean")
QUICK_TARGETS = ("sum", "max")

# The budget of the default run: where LAF's count, sum and mean are exact
# on sets of 50 and DeepSets has learnt them too (the budget study of
# `benchmarks/section4_budgets.py`, RESULTS.md).
DEFAULTS = {
    "train_size": 20_000,
    "val_size": 1_000,
    "test_size": 1_000,
    "epochs": 10,
    "seeds": 3,
    "max_sizes": TEST_MAX_SIZES,
    "test_protocol": "diversified",
}
QUICK = {
    "train_size": 256,
    "val_size": 64,
    "test_size": 64,
    "epochs": 1,
    "seeds": 1,
    "max_sizes": (5, 10),
    "test_protocol": "diversified",
}

HELP = "integer sets: the twelve aggregation targets (no download)"
DESCRIPTION = f"""\
Learns aggregation targets of sets of digits with LAF and the paper's
baselines, and tests them on larger sets than they were trained on.

Each method ({", ".join(METHODS)}) is a DeepSets model: Embedding(10, 10),
a sigmoid, the aggregation (LAF with 9 units; DeepSets: sum, max and mean;
PNA: mean, max, sum, std, var, skewness, kurtosis; or an LSTM) and a linear
output, trained with Adam, the MAE loss and a learning-rate decay on
validation plateaus. Training sets have 2 to 10 uniform digits, fed as
padded batches with a mask. The test sets of maximum size M have 2 to M
diversified digits, or, with --test-protocol authors, are drawn the way
the paper's authors test: exactly M uniform digits for sum, mean, median
and the moments, 80%..100% of M for the count, extremes cycling through
the digits for max and min.

LAF on count, sum and mean takes the README's closed-forms route: the
closed_forms preset, then SnapToClosedForms and LeastSquaresHead at the
end of training (--laf-preset pooling turns it off).

Every method is trained with seeds 0..N-1 (--seeds); results.json,
summary.csv and mae.png give the mean and standard deviation over them.

The default run (targets {", ".join(DEFAULT_TARGETS)}; \
{DEFAULTS["train_size"]} training sets,
{DEFAULTS["epochs"]} epochs, {DEFAULTS["seeds"]} seeds) takes about 20 minutes
on two CPU cores, a fiftieth of the paper's steps. The paper's scale:

  keras-laf scalars --targets all --train-size 100000 --epochs 100
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf scalars`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--targets",
        type=choice_list(TARGETS, "target"),
        help=f"comma-separated targets, or 'all' for the twelve: "
        f"{', '.join(TARGETS)} (default: {','.join(DEFAULT_TARGETS)}; "
        f"--quick: {','.join(QUICK_TARGETS)})",
    )
    add_methods_and_sizes_arguments(
        group,
        METHODS,
        DEFAULTS,
        QUICK,
        optional_methods=regression.OPTIONAL_METHODS,
    )
    regression.add_test_protocol_argument(group)
    add_common_arguments(
        parser, "scalars", DEFAULTS, QUICK, laf_preset_by_target=True
    )


def build_model(method, laf_preset=None, laf_output_bound=None):
    """The paper's DeepSets model of integer sets with an aggregation."""
    from keras_laf.models import deep_sets
    from keras_laf.models.building_blocks import with_laf_arguments

    aggregation = regression.aggregation(
        method,
        laf_units=9,
        laf_preset=laf_preset,
        laf_output_bound=laf_output_bound,
    )
    return deep_sets(
        vocabulary_size=10,
        embedding_dim=10,
        phi_units=(),
        aggregation=aggregation,
        aggregation_kwargs=with_laf_arguments(
            aggregation, units=9, preset=laf_preset
        ),
        ragged=False,
        name=f"deep_sets_{method.replace('-', '_')}",
    )


def run(args):
    """Runs `keras-laf scalars`."""
    regression.run_digit_regression(
        args, build_model, DEFAULT_TARGETS, QUICK_TARGETS, padded=True
    )

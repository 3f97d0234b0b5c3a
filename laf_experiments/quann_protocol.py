"""`keras-laf mnist --protocol quann`: QUANN's MNIST benchmark.

The MNIST experiment of QUANN (Tokar et al., "Neuralized Kolmogorov
Mean", ICLR 2026; `MNIST_experiment.py` of its code): sets of 2 to 16
MNIST digits, of uniform size and uniform digits, labelled by their sum,
mean, maximum, variance or mode; a small convolutional encoder trained end
to end with the aggregation and a dense head; the MSE loss; test sets
drawn like the training sets. Its table stops at 16 digits; here the
trained models are also tested on sets of up to 50.
"""

from laf_experiments import methods
from laf_experiments import plots
from laf_experiments import quann_model
from laf_experiments import regression
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.settings import OPTIMIZER_DEFAULTS
from laf_experiments.settings import QUICK_SIZES
from laf_experiments.settings import STEPS_PER_EXECUTION
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import laf_options_for
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store
from laf_experiments.store import prepare_output_directory

TARGETS = ("sum", "mean", "max", "variance", "mode")
QUICK_TARGETS = ("sum",)
METHODS = ("laf", "deepsets_sum", "kolmogorov_mean")
OPTIONAL_METHODS = ("genagg", "st-pma")
MIN_SIZE = 2
TRAIN_MAX_SIZE = 16
# QUANN's protocol (`MNIST_experiment.py`), but one seed of its four on a
# CPU. Of its learning rates 1e-4, 5e-4 and 1e-3, 5e-4 has the lowest
# validation loss for QUANN-1 on four of the five targets in its records.
# It keeps the last epoch's model and never decays the learning rate: a
# patience of the 50 epochs never runs out within them.
DEFAULTS = {
    "train_size": 20_000,
    "val_size": 2_000,
    "test_size": 3_000,
    "epochs": 50,
    "seeds": 1,
    "max_sizes": (16, 30, 50),
    **OPTIMIZER_DEFAULTS,
    "batch_size": 32,
    "learning_rate": 5e-4,
    "lr_patience": 50,
}
QUICK = {**DEFAULTS, **QUICK_SIZES, "max_sizes": (16, 30)}

# QUANN's table: the test MSE on its test sets of 2 to 16 digits, the mean
# of 4 replicates at the learning rate of the lowest mean validation loss;
# and which of its models are ours.
QUANN_COLUMNS = (
    "DeepSet",
    "PointNet",
    "HPDS",
    "Set Transformer",
    "QUANN-1",
    "QUANN-2",
)
QUANN_TABLE = {
    "sum": (5.924, 18.740, 5.844, 4.090, 4.066, 2.861),
    "mean": (0.095, 0.115, 0.047, 0.031, 0.023, 0.023),
    "max": (0.120, 0.079, 0.071, 0.099, 0.067, 0.069),
    "mode": (3.903, 5.498, 4.011, 3.085, 2.219, 1.579),
    "variance": (1.747, 2.143, 1.265, 2.284, 0.605, 0.605),
}
QUANN_MODELS = {
    "DeepSet": "deepsets_sum",
    "Set Transformer": "st-pma",
    "QUANN-1": "kolmogorov_mean",
}

TABLE = "table.md"
FIGURE = "mse.png"


def published_points():
    """QUANN's values for our methods at 16 digits, as the `paper_points`
    of `plots.plot_error_by_size`.

    >>> published_points()[1]["sum"]["kolmogorov_mean"]
    4.066
    """
    return TRAIN_MAX_SIZE, {
        target: {
            QUANN_MODELS[column]: value
            for column, value in zip(QUANN_COLUMNS, values, strict=True)
            if column in QUANN_MODELS
        }
        for target, values in QUANN_TABLE.items()
    }


def training_sets(args, target, seed, train_images):
    """The training and validation sets of a run, as QUANN draws them.

    `args.train_size` and `args.val_size` sets of `MIN_SIZE` to
    `TRAIN_MAX_SIZE` digits, the size and each digit uniform, every digit
    an image of the train split (QUANN's validation sets come from
    MNIST's training images too); seeds `seed` and `VALIDATION_SEED +
    seed`.

    Returns:
        Two `MnistSets`.
    """
    from laf_experiments.data import make_training_sets

    return tuple(
        make_training_sets(
            num_sets,
            target,
            MIN_SIZE,
            TRAIN_MAX_SIZE,
            seed=data_seed,
            digit_images=train_images,
        )
        for num_sets, data_seed in (
            (args.train_size, seed),
            (args.val_size, VALIDATION_SEED + seed),
        )
    )


def evaluation_sets(args, target, test_images):
    """The test sets: for each M of `args.max_sizes`, `args.test_size`
    sets of `MIN_SIZE` to M digits drawn like the training sets, from the
    test split's images; the same for every run (seed `TEST_SEED`).

    Returns:
        A dict from M to an `MnistSets`.
    """
    from laf_experiments.data import make_test_sets

    return {
        size: make_test_sets(
            args.test_size,
            target,
            size,
            MIN_SIZE,
            seed=TEST_SEED,
            diversify=False,
            digit_images=test_images,
        )
        for size in args.max_sizes
    }


def run(args):
    """Runs `keras-laf mnist --protocol quann` on `args.targets` and
    `args.methods`, which the command has checked."""
    if args.test_protocol is not None:
        raise ExperimentError(
            "--test-protocol belongs to --protocol paper; --protocol quann "
            "draws its test sets like its training sets."
        )
    args.experiment = "mnist-quann"
    args.setting_defaults, args.quick_settings = DEFAULTS, QUICK
    settings = resolve_settings(args, extra_names=("max_sizes",))
    settings.update(
        protocol="quann",
        set_sizes=[MIN_SIZE, TRAIN_MAX_SIZE],
        weight_decay=quann_model.WEIGHT_DECAY,
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    prepare_output_directory(args.output)
    train_images, test_images = regression.load_digit_pools(args)
    settings.update(regression.image_settings(train_images, test_images))
    store = open_store(
        args,
        settings,
        regression.REGRESSION_KEY,
        lambda runs: regression.regression_records(runs, "mse"),
        group_fields=("method", "target", "max_size"),
        value_field="mse",
    )

    def training_data(key):
        train, validation = training_sets(
            args, key["target"], key["seed"], train_images
        )
        return (
            train.to_padded_batches(
                args.batch_size, TRAIN_MAX_SIZE, shuffle=True, seed=key["seed"]
            ),
            validation.to_padded_batches(args.batch_size, TRAIN_MAX_SIZE),
        )

    test_data = runner.cached(
        lambda key: regression.joined_test_data(
            evaluation_sets(args, key["target"], test_images), padded=True
        ),
        lambda key: key["target"],
    )

    runner.run_all(
        args,
        store,
        keys=[
            {"method": method, "target": target, "seed": seed}
            for target in args.targets
            for seed in args.seeds
            for method in args.methods
        ],
        describe=lambda key: (
            f"{key['method']} on {key['target']}, seed {key['seed']}"
        ),
        train=runner.fitting(
            args,
            settings,
            runner.cached(
                training_data, lambda key: (key["target"], key["seed"])
            ),
            build_model=lambda key: quann_model.build_model(
                key["method"], **laf_options_for(args.laf_preset, key["target"])
            ),
            loss="mean_squared_error",
            callbacks=lambda key, data: regression.closed_forms_route(
                args, key, data[0]
            ),
        ),
        evaluate=regression.evaluation(store, test_data, "mse"),
    )
    runner.report_written(args, store, write_records(args, store))


def write_records(args, store):
    """Writes `table.md` and `mse.png`; returns the names written."""
    summary = store.summary
    if not summary:
        return []
    text = markdown_tables(summary)
    (store.directory / TABLE).write_text(
        reports.quick_marked(text) if args.quick else text
    )
    if not plots.available():
        log(args.experiment, plots.MISSING)
        return [TABLE]
    plots.plot_error_by_size(
        summary,
        store.directory / FIGURE,
        value_field="mse",
        ylabel="test MSE",
        title="MNIST, QUANN's protocol (stars: QUANN's table)",
        paper_points=published_points(),
        quick=args.quick,
        paper_label="QUANN",
        log_scale=True,
    )
    return [TABLE, FIGURE]


def markdown_tables(summary):
    """The test MSE beside QUANN's table at 16 digits, then at every
    largest test-set size, as Markdown under a `# title` line.

    Args:
        summary: the rows of `store.summarize`: `method`, `target`,
            `max_size`, `mse_mean`, `mse_std` and `num_seeds`.
    """
    names = list(dict.fromkeys(row["method"] for row in summary))
    targets = list(dict.fromkeys(row["target"] for row in summary))
    sizes = sorted({row["max_size"] for row in summary})
    rows = {(r["method"], r["target"], r["max_size"]): r for r in summary}
    seeds = reports.counted([row["num_seeds"] for row in summary], "seed")

    def cell(method, target, size):
        row = rows.get((method, target, size))
        return "-" if row is None else reports.mean_std(row, "mse", 3)

    labels = [methods.METHODS[name].label for name in names]
    published = reports.markdown_table(
        ["target", *labels, *(f"QUANN: {name}" for name in QUANN_COLUMNS)],
        [
            [
                target,
                *(cell(name, target, TRAIN_MAX_SIZE) for name in names),
                *(f"{value:g}" for value in QUANN_TABLE.get(target, ())),
            ]
            for target in targets
        ],
    )
    extrapolation = reports.markdown_table(
        ["target", "method", *(f"M = {size}" for size in sizes)],
        [
            [target, methods.METHODS[name].label]
            + [cell(name, target, size) for size in sizes]
            for target in targets
            for name in names
        ],
    )
    return (
        "# keras-laf mnist --protocol quann\n\n"
        f"## Test MSE on sets of {MIN_SIZE} to {TRAIN_MAX_SIZE} digits, "
        "beside QUANN's table\n\n"
        f"Ours: mean ± std over {seeds}. QUANN: its table, the mean of 4 "
        "replicates at the learning rate, of three, of the lowest mean "
        "validation loss. QUANN's variance is the sample variance "
        f"(torch.var), ours the population variance.\n\n{published}\n\n"
        f"## Test MSE on sets of {MIN_SIZE} to M digits (training sets "
        f"have at most {TRAIN_MAX_SIZE})\n\n{extrapolation}\n"
    )

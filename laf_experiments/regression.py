"""The set-regression experiments (`scalars`, `mnist`, `unique-sum`).

Every method on every target and seed through `runner.run_all`, then the
MAE on test sets of growing maximum size, and its plots.
"""

import numpy as np

from laf_experiments import plots
from laf_experiments import runner
from laf_experiments.errors import log
from laf_experiments.settings import laf_preset_for
from laf_experiments.store import open_store

REGRESSION_KEY = ("method", "target", "seed")


def regression_records(runs):
    """One record per run and maximum test-set size: the MAE."""
    return [
        {
            "method": run["method"],
            "target": run["target"],
            "seed": run["seed"],
            "max_size": item["max_size"],
            "mae": item["mae"],
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
    from keras_laf.laf_layer.callbacks import laf_layers

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
        build_model: function `(method, laf_preset)` returning an
            uncompiled model whose LAF layers have the preset
            `laf_preset`: `args.laf_preset`, or with `by_target` the
            target's (`settings.laf_preset_for`).
        method_labels: optional dict of the methods' names in the plots.
    """
    keys = [
        {"method": method, "target": target, "seed": seed}
        for target in args.targets
        for seed in range(args.seeds)
        for method in args.methods
    ]
    training_data = runner.cached(
        lambda key: make_training_data(key["target"], key["seed"]),
        lambda key: (key["target"], key["seed"]),
    )
    test_data = runner.cached(
        lambda key: make_test_data(key["target"]), lambda key: key["target"]
    )

    def evaluate(key, model):
        test_dataset, labels, max_sizes = test_data(key)
        predictions = model.predict(test_dataset, verbose=0)[:, 0]
        errors = np.abs(predictions - labels)
        test = [
            {
                "max_size": int(size),
                "mae": float(errors[max_sizes == size].mean()),
            }
            for size in np.unique(max_sizes)
        ]
        path = store.predictions_path(**key)
        path.parent.mkdir(exist_ok=True)
        np.savez_compressed(
            path, labels=labels, predictions=predictions, max_sizes=max_sizes
        )
        maes = ", ".join(
            f"{item['max_size']}: {item['mae']:.4g}" for item in test
        )
        record = {"test": test}
        presets, units = laf_units_found(model)
        if units:
            record["laf_presets"] = presets
            record["laf_units"] = units
        return record, f"MAE by max test-set size {maes}"

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
                key["method"],
                laf_preset=laf_preset_for(args.laf_preset, key["target"]),
            ),
            loss="mean_absolute_error",
        ),
        evaluate=evaluate,
    )
    paths = plot_regression(store, args.experiment, method_labels)
    runner.report_written(args, store, paths)


def plot_regression(store, experiment, method_labels=None):
    """Draws `mae.png` and `scatter.png` from everything recorded.

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
        )
        written.append("scatter.png")
    return written

"""LAF against GenAgg and the other aggregations, head to head.

Each method is one aggregation of keras_laf in the same small model,
trained with Adam and the MAE loss on sets of 2 to 10 elements and tested
on sets of 2 to 10 (`mae_10`) and of 2 to 50 (`mae_50`) elements:

- `integer:<target>`: the LAF paper's twelve targets of sets of digits
  (`laf_experiments.data.TARGETS`: count, sum, mean, max, ...,
  kurtosis); the model is the paper's, Embedding(10, 10), a sigmoid, the
  aggregation and Dense(1); the test sets are diversified
  (`sample_test_sets`).
- `regression:<target>`: GenAgg's aggregator regression, targets of sets
  of real numbers uniform in [0.05, 1] (max, min, mean, sum, std, 2-norm,
  root mean square, geometric and harmonic means, log-sum-exp); the
  model is the aggregation of the raw elements and Dense(1).
- `pointcloud:solids`: the builders' point-cloud task
  (`common.POINT_CLOUD_SETTINGS`: `point_cloud_classifier` pooling with
  the method, 8 generated solids), its test accuracy as `accuracy`; the
  training-set and epoch flags do not apply to it.

Methods: `laf_pooling` and `laf_closed_forms` (LAF(9) with its presets),
`genagg` (`GenAggAggregation`, f learned, a and b learned), `softmax` and
`powermean` (their parameter learned), `pna` (PNA's mean, max, min, std),
`sum` (DeepSets) and `set2set`.

Each (method, task, seed) writes one JSON record under `--output` and is
skipped when its record is there, so a stopped run resumes; the end
prints a Markdown table over the records asked for (mean ± standard
deviation over seeds, runs whose loss or error is not finite counted as
failures and left out of the means) and writes it as `summary.csv`, then
one row per task and one column per method (`table.md`). Each
record holds the seconds per training epoch (the median after the first,
compiling, epoch) beside the errors.

    python -m benchmarks.learnable_aggregations --quick --output DIR
    python -m benchmarks.learnable_aggregations --tasks all --seeds 0-4
    python -m benchmarks.learnable_aggregations --tasks all --seeds 100-104
"""

import argparse
import csv
import json
import math
import pathlib
import statistics
import sys

import numpy as np

from benchmarks.common import POINT_CLOUD_SETTINGS
from benchmarks.common import compile_integer_model
from benchmarks.common import epoch_times
from benchmarks.common import integer_model
from benchmarks.common import point_cloud_accuracy
from benchmarks.common import provenance
from laf_experiments.settings import seed_ranges

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent

METHODS = (
    "laf_pooling",
    "laf_closed_forms",
    "genagg",
    "softmax",
    "powermean",
    "pna",
    "sum",
    "set2set",
)
REGRESSION_TARGETS = (
    "max",
    "min",
    "mean",
    "sum",
    "std",
    "norm",
    "rms",
    "geometric_mean",
    "harmonic_mean",
    "logsumexp",
)
REGRESSION_RANGE = (0.05, 1.0)
TRAIN_SIZES = (2, 10)
TEST_MAX_SIZES = (10, 50)
POINT_CLOUDS = "pointcloud:solids"
METRICS = ("mae_10", "mae_50", "accuracy")
DEFAULTS = {
    "tasks": "integer:sum,integer:max,integer:median,regression:std",
    "seeds": "0-4",
    "epochs": 20,
    "train_size": 10_000,
    "test_size": 1_000,
    "batch_size": 64,
    "learning_rate": 1e-3,
}
QUICK = {
    "tasks": (
        "integer:sum,integer:max,integer:median,regression:std,"
        "regression:harmonic_mean"
    ),
    "seeds": "0",
    "epochs": 10,
    "train_size": 2_000,
    "test_size": 500,
    # Few steps: a larger step than the paper's 1e-3 so that they count.
    "learning_rate": 5e-3,
}


def integer_targets():
    from laf_experiments.data import TARGETS

    return TARGETS


def all_tasks():
    return (
        [f"integer:{name}" for name in integer_targets()]
        + [f"regression:{name}" for name in REGRESSION_TARGETS]
        + [POINT_CLOUDS]
    )


def parse_list(text, allowed, what):
    if text == "all":
        return list(allowed)
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in allowed]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown {what} {unknown or text!r}; expected a comma-separated "
            f"list of {list(allowed)} or 'all'"
        )
    return names


def regression_values(name, sets):
    """The regression targets of sets `(num_sets, size)` whose padding is
    NaN, in float64."""
    with np.errstate(invalid="ignore"):
        table = {
            "max": lambda x: np.nanmax(x, 1),
            "min": lambda x: np.nanmin(x, 1),
            "mean": lambda x: np.nanmean(x, 1),
            "sum": lambda x: np.nansum(x, 1),
            "std": lambda x: np.nanstd(x, 1),
            "norm": lambda x: np.sqrt(np.nansum(x**2, 1)),
            "rms": lambda x: np.sqrt(np.nanmean(x**2, 1)),
            "geometric_mean": lambda x: np.exp(np.nanmean(np.log(x), 1)),
            "harmonic_mean": lambda x: 1 / np.nanmean(1 / x, 1),
            "logsumexp": lambda x: np.log(np.nansum(np.exp(x), 1)),
        }
        return table[name](sets.astype("float64"))


def task_data(task, num_sets, max_size, seed=None):
    """Padded inputs, their mask and the targets of `num_sets` sets of 2 to
    `max_size` elements: training sets drawn with `seed`, or (`seed=None`)
    the test sets, the same for every seed."""
    kind, target = task.split(":")
    if kind == "integer":
        from laf_experiments.data import target_values
        from laf_experiments.data.digit_sets import sample_test_sets
        from laf_experiments.data.digit_sets import sample_training_sets

        if seed is not None:
            sets = sample_training_sets(num_sets, *TRAIN_SIZES, seed=seed)
        else:
            sets = sample_test_sets(num_sets, max_size, seed=1)
        values = np.zeros((num_sets, max_size), "int32")
        mask = np.zeros((num_sets, max_size), bool)
        for index, elements in enumerate(sets):
            values[index, : len(elements)] = elements
            mask[index, : len(elements)] = True
        labels = target_values(target, sets)
        return values, mask, labels.astype("float32")
    rng = np.random.default_rng([max_size, 1] if seed is None else [seed, 0])
    sizes = rng.integers(TRAIN_SIZES[0], max_size, num_sets, endpoint=True)
    mask = np.arange(max_size) < sizes[:, None]
    values = rng.uniform(*REGRESSION_RANGE, (num_sets, max_size))
    labels = regression_values(target, np.where(mask, values, np.nan))
    values = np.where(mask, values, 0.0)[..., None].astype("float32")
    return values, mask, labels.astype("float32")


def aggregation(method):
    import keras_laf

    if method.startswith("laf_"):
        return keras_laf.LAF(9, preset=method[len("laf_") :], name=method)
    layers = {
        "genagg": lambda: keras_laf.GenAggAggregation(name=method),
        "softmax": lambda: keras_laf.SoftmaxAggregation(
            learn=True, name=method
        ),
        "powermean": lambda: keras_laf.PowerMeanAggregation(
            learn=True, name=method
        ),
        "pna": lambda: keras_laf.FixedAggregation(
            list(keras_laf.aggregations.PNA_NEIGHBOURHOOD), name=method
        ),
        "sum": lambda: keras_laf.FixedAggregation(["sum"], name=method),
        "set2set": lambda: keras_laf.Set2Set(processing_steps=3, name=method),
    }
    return layers[method]()


def build_model(method, task):
    """The integer targets' model is the paper's (`common.integer_model`);
    the regression targets' aggregates the raw elements."""
    import keras

    if task.startswith("integer:"):
        return integer_model(aggregation(method))
    inputs = keras.Input((None, 1), name="elements")
    mask = keras.Input((None,), dtype="float32", name="mask")
    pooled = aggregation(method)(inputs, mask=keras.ops.cast(mask, "bool"))
    outputs = keras.layers.Dense(1, name="output")(pooled)
    return keras.Model([inputs, mask], outputs, name=f"{method}_model")


def finite(value):
    return value is not None and math.isfinite(value)


def run_one(method, task, seed, args):
    import keras

    record = {"method": method, "task": task, "seed": seed}
    record.update(backend=keras.config.backend(), **provenance())
    if task.startswith("pointcloud:"):
        result = point_cloud_accuracy(aggregation(method), seed)
        record.update(POINT_CLOUD_SETTINGS)
        record.update(
            accuracy=result["accuracy"],
            epoch_seconds=result["epoch_seconds"],
            seconds_per_epoch=statistics.median(result["epoch_seconds"][1:]),
            failed=not finite(result["accuracy"]),
        )
        return record
    keras.utils.set_random_seed(seed)
    train = task_data(task, args.train_size, TRAIN_SIZES[1], seed=seed)
    tests = {
        size: task_data(task, args.test_size, size) for size in TEST_MAX_SIZES
    }
    model = build_model(method, task)
    compile_integer_model(model, args.learning_rate)
    times = epoch_times()
    history = model.fit(
        [train[0], train[1].astype("float32")],
        train[2],
        batch_size=args.batch_size,
        epochs=args.epochs,
        verbose=0,
        callbacks=[times],
    )
    record.update(
        epochs=args.epochs,
        train_size=args.train_size,
        test_size=args.test_size,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        final_loss=float(history.history["loss"][-1]),
        epoch_seconds=times.seconds,
        seconds_per_epoch=statistics.median(times.seconds[1:] or times.seconds),
        parameters=model.count_params(),
    )
    for size, (values, mask, labels) in tests.items():
        predictions = model.predict(
            [values, mask.astype("float32")], batch_size=256, verbose=0
        ).ravel()
        record[f"mae_{size}"] = float(np.mean(np.abs(predictions - labels)))
    record["failed"] = not all(
        finite(record[key])
        for key in ("final_loss", *(f"mae_{s}" for s in TEST_MAX_SIZES))
    )
    keras.backend.clear_session()
    return record


def record_path(output, method, task, seed):
    return output / f"{method}__{task.replace(':', '-')}__seed{seed}.json"


def mean_std(values):
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.3g}"
    return f"{statistics.mean(values):.3g} ± {statistics.stdev(values):.2g}"


def constant_mae_50(task, test_size):
    """The MAE on the test sets of up to 50 elements of the best constant,
    the median of their labels (chosen on the test labels themselves): the
    scale of a task's errors."""
    labels = task_data(task, test_size, TEST_MAX_SIZES[-1])[2]
    return float(np.mean(np.abs(labels - np.median(labels))))


def failed_seeds(runs):
    """The runs of one method on one task that failed: a loss or an error
    not finite, an MAE at 50 above twice the median over the method's
    seeds (training that went astray, where the others did not), or a
    point-cloud accuracy within 0.075 of chance (one class in 8)."""
    good = [r for r in runs if not r["failed"]]
    if runs[0]["task"] == POINT_CLOUDS:
        return [r for r in runs if r["failed"] or r["accuracy"] < 0.2]
    typical = statistics.median(r["mae_50"] for r in good) if good else None
    return [r for r in runs if r["failed"] or r["mae_50"] > 2 * typical]


def summarize(records, methods, tasks):
    """One row per (task, method): the errors and the epoch time over the
    seeds, runs with a non-finite loss or error left out of the means;
    `failures` counts `failed_seeds`; `constant_mae_50` is the best
    constant's (`constant_mae_50`), for scale."""
    rows = []
    for task in tasks:
        constant = None
        done = [r for r in records if r["task"] == task]
        if done and task != POINT_CLOUDS:
            constant = constant_mae_50(task, done[0]["test_size"])
        for method in methods:
            runs = [
                r for r in records if (r["method"], r["task"]) == (method, task)
            ]
            if not runs:
                continue
            good = [r for r in runs if not r["failed"]]
            row = {
                "task": task,
                "method": method,
                "seeds": len(runs),
                "failures": len(failed_seeds(runs)),
                "constant_mae_50": constant,
            }
            for key in METRICS:
                values = [r[key] for r in good if key in r]
                row[key] = statistics.mean(values) if values else None
                row[f"{key}_text"] = mean_std(values)
            largest = [r["mae_50"] for r in good if "mae_50" in r]
            row["worst_mae_50"] = max(largest) if largest else None
            seconds = [r["seconds_per_epoch"] for r in runs]
            row["seconds_per_epoch"] = statistics.mean(seconds)
            rows.append(row)
    return rows


def markdown(rows):
    """Sets of up to 10 and 50 elements for the set targets, test accuracy
    for the point clouds."""
    header = (
        "| task | method | MAE, sizes ≤ 10 | MAE, sizes ≤ 50 "
        "(worst seed) | accuracy | s / epoch | failed / seeds |\n"
        "|---|---|---|---|---|---|---|"
    )
    lines = [header]
    for row in rows:
        worst = row["worst_mae_50"]
        worst = "" if worst is None else f" ({worst:.3g})"
        lines.append(
            f"| {row['task']} | {row['method']} | {row['mae_10_text']} | "
            f"{row['mae_50_text']}{worst} | {row['accuracy_text']} | "
            f"{row['seconds_per_epoch']:.3g} | "
            f"{row['failures']} / {row['seeds']} |"
        )
    return "\n".join(lines)


def pivot_markdown(rows, methods, tasks):
    """One row per task, one column per method: the mean MAE on sets of up
    to 50 elements (test accuracy for the point clouds), the best of a row
    in bold, `(k✗)` after a cell with k failed seeds (`summarize`), and the
    constant's MAE (chance for the point clouds); the last row is each
    method's median epoch time over the tasks."""
    cells = {(row["task"], row["method"]): row for row in rows}
    methods = [m for m in methods if any((t, m) in cells for t in tasks)]
    lines = [
        "| task | " + " | ".join(methods) + " | constant |",
        "|---|" + "---|" * (len(methods) + 1),
    ]
    for task in tasks:
        key = "accuracy" if task == POINT_CLOUDS else "mae_50"
        better = max if key == "accuracy" else min
        values = {
            m: cells[task, m][key]
            for m in methods
            if (task, m) in cells and cells[task, m][key] is not None
        }
        if not values:
            continue
        best = better(values.values())
        row = []
        for method in methods:
            if method not in values:
                row.append("–")
                continue
            text = f"{values[method]:.3g}"
            if values[method] == best:
                text = f"**{text}**"
            failures = cells[task, method]["failures"]
            row.append(text + (f" ({failures}✗)" if failures else ""))
        name = f"{task} (accuracy)" if key == "accuracy" else task
        constant = next(
            cells[task, m]["constant_mae_50"]
            for m in methods
            if (task, m) in cells
        )
        row.append("0.125" if constant is None else f"{constant:.3g}")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    seconds = [
        statistics.median(
            cells[t, m]["seconds_per_epoch"] for t in tasks if (t, m) in cells
        )
        for m in methods
    ]
    lines.append(
        "| s / epoch (median) | "
        + " | ".join(f"{value:.2g}" for value in seconds)
        + " | |"
    )
    return "\n".join(lines)


def write_csv(rows, path):
    fields = [
        "task",
        "method",
        "seeds",
        "failures",
        "mae_10",
        "mae_50",
        "worst_mae_50",
        "constant_mae_50",
        "accuracy",
        "seconds_per_epoch",
    ]
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    parser.add_argument(
        "--methods",
        default="all",
        help=f"comma-separated, or 'all': {', '.join(METHODS)}",
    )
    parser.add_argument(
        "--tasks",
        help="comma-separated integer:<target>, regression:<target> and "
        f"{POINT_CLOUDS}, or 'all' (default: {DEFAULTS['tasks']}; "
        f"--quick: {QUICK['tasks']})",
    )
    parser.add_argument(
        "--seeds",
        help="seeds and ranges, e.g. 0-4 or 100-104 or 0,1 (default: "
        f"{DEFAULTS['seeds']}; --quick: {QUICK['seeds']})",
    )
    for name in ("epochs", "train_size", "test_size", "batch_size"):
        flag = "--" + name.replace("_", "-")
        default = DEFAULTS[name]
        quick = QUICK.get(name, default)
        parser.add_argument(
            flag,
            type=int,
            help=f"default: {default}; --quick: {quick}",
        )
    parser.add_argument(
        "--learning-rate",
        type=float,
        help=f"Adam's (default: {DEFAULTS['learning_rate']}; --quick: "
        f"{QUICK['learning_rate']})",
    )
    parser.add_argument(
        "--table-only",
        action="store_true",
        help="tabulate the records already under --output, train nothing",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a first run: five tasks, one seed, ten epochs of 2,000 sets",
    )
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=REPOSITORY / "results" / "learnable_aggregations",
        help="the folder of the records and of summary.csv "
        "(default: results/learnable_aggregations)",
    )
    args = parser.parse_args(argv)
    settings = {**DEFAULTS, **(QUICK if args.quick else {})}
    for name in (
        "tasks",
        "seeds",
        "epochs",
        "train_size",
        "test_size",
        "learning_rate",
    ):
        if getattr(args, name) is None:
            setattr(args, name, settings[name])
    if args.batch_size is None:
        args.batch_size = DEFAULTS["batch_size"]
    try:
        args.methods = parse_list(args.methods, METHODS, "method")
        args.tasks = parse_list(args.tasks, all_tasks(), "task")
        args.seeds = seed_ranges(args.seeds)
    except argparse.ArgumentTypeError as error:
        parser.error(str(error))
    for name in ("epochs", "train_size", "test_size", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    records = []
    for task in args.tasks:
        for method in args.methods:
            for seed in args.seeds:
                path = record_path(args.output, method, task, seed)
                if path.exists():
                    records.append(json.loads(path.read_text()))
                    continue
                if args.table_only:
                    continue
                record = run_one(method, task, seed, args)
                path.write_text(json.dumps(record, indent=1) + "\n")
                records.append(record)
                figures = ", ".join(
                    f"{key} {record[key]:.4g}"
                    for key in METRICS
                    if key in record
                )
                print(
                    f"{task} {method} seed {seed}: {figures}, "
                    f"{record['seconds_per_epoch']:.2f} s/epoch",
                    flush=True,
                )
    rows = summarize(records, args.methods, args.tasks)
    print(markdown(rows))
    write_csv(rows, args.output / "summary.csv")
    table = pivot_markdown(rows, args.methods, args.tasks)
    (args.output / "table.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

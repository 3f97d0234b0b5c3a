"""What the `keras-laf` subcommands share.

- Arguments: comma-separated choices (`--targets sum,max` or `all`),
  the training settings with the paper's optimiser defaults, and `--quick`.
- The output directory: checked for writability up front and locked
  against a second command running in it; its `results.json` records
  every finished run, so re-running a command skips them, and
  `backups/<run>/` holds the `keras.callbacks.BackupAndRestore` state of an
  unfinished run, so its training resumes at the last finished epoch.
- The set-regression experiments (`scalars`, `mnist`, `unique-sum`):
  every method on every target and seed through `runner.run_all`, then the
  MAE on test sets of growing maximum size.
- `ExperimentError`: a problem the user can fix (a missing data
  directory, an unwritable output directory, results of other settings),
  reported by `keras-laf` as one line with exit status 2.
"""

import argparse
import csv
import importlib
import json
import os
import pathlib
import shutil

import numpy as np

from laf_experiments import plots

# The optimiser settings of the paper: Adam, learning rate 1e-3, batches of
# 64 sets, the learning rate decayed when the validation loss plateaus.
PAPER_BATCH_SIZE = 64
PAPER_LEARNING_RATE = 1e-3
LR_FACTOR = 0.5
LR_PATIENCE = 5

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
SUMMARY_CSV = "summary.csv"
BACKUPS = "backups"
RUNS = "runs"
HISTORY_CSV = "history.csv"
PREDICTIONS = "predictions"
# Seeds of the data of the set experiments: training sets use the run's
# seed, validation sets `VALIDATION_SEED + seed`, and the test sets are the
# same for every run.
VALIDATION_SEED = 10_000
TEST_SEED = 1
PREDICT_BATCH_SIZE = 256
LOCK_FILE = ".keras-laf.lock"

# The output directories locked by this process.
_held_locks = []

# (attribute, flag, type, help) of the settings every subcommand takes; the
# experiment gives their default and `--quick` values.
_SETTING_FLAGS = (
    ("train_size", "--train-size", "positive_int", "training sets"),
    ("val_size", "--val-size", "positive_int", "validation sets"),
    ("test_size", "--test-size", "positive_int", "test sets (per size)"),
    ("epochs", "--epochs", "positive_int", "training epochs"),
    ("batch_size", "--batch-size", "positive_int", "sets per batch"),
    ("learning_rate", "--learning-rate", "positive_float", "Adam's rate"),
    (
        "lr_factor",
        "--lr-factor",
        "fraction",
        "factor of the learning-rate decay on a validation plateau",
    ),
    (
        "lr_patience",
        "--lr-patience",
        "positive_int",
        "epochs without validation improvement before the decay",
    ),
)
# The sizes of `--quick` runs of the set experiments: a smoke test.
QUICK_SIZES = {
    "train_size": 128,
    "val_size": 32,
    "test_size": 32,
    "epochs": 1,
    "seeds": 1,
}
OPTIMIZER_DEFAULTS = {
    "batch_size": PAPER_BATCH_SIZE,
    "learning_rate": PAPER_LEARNING_RATE,
    "lr_factor": LR_FACTOR,
    "lr_patience": LR_PATIENCE,
}


class ExperimentError(Exception):
    """A problem the user can fix, reported in one line with exit status 2."""


class MissingDependency(ExperimentError, ImportError):
    """An optional package that a command needs is not installed."""


def require(module, package, purpose):
    """Imports an optional dependency, or says in one line how to install it.

    Args:
        module: the module to import, e.g. `"sklearn.datasets"`.
        package: its name on PyPI, e.g. `"scikit-learn"`.
        purpose: what needs it, e.g. `"keras-laf graphs"`.

    Returns:
        The imported module.

    Raises:
        MissingDependency: the module cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"{purpose} needs {package}, which is not installed. Install "
            f"it with: pip install 'keras-laf[experiments]' (or pip install "
            f"{package})."
        ) from None


def log(experiment, message):
    """Prints a progress line of `experiment`, flushed at once."""
    print(f"keras-laf {experiment}: {message}", flush=True)


# Argument types: each raises `argparse.ArgumentTypeError`, which argparse
# reports as `keras-laf <command>: error: argument --flag: <message>` with
# exit status 2.


def positive_int(text):
    """Parses a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, received {text!r}"
        )
    return value


def positive_float(text):
    """Parses a positive float."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or not np.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"expected a positive number, received {text!r}"
        )
    return value


def fraction(text):
    """Parses a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, received {text!r}"
        )
    return value


def positive_int_list(text):
    """Parses comma-separated positive integers, e.g. `5,10,20`."""
    values = [item.strip() for item in text.split(",") if item.strip()]
    if not values:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, received {text!r}"
        )
    return tuple(sorted({positive_int(value) for value in values}))


def set_size_list(text):
    """Parses comma-separated maximum set sizes (integers of at least 2)."""
    values = [item.strip() for item in text.split(",") if item.strip()]
    sizes = []
    for value in values:
        try:
            sizes.append(int(value))
        except ValueError:
            sizes.append(0)
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(
            "expected comma-separated set sizes of at least 2, received "
            f"{text!r}"
        )
    return tuple(sorted(set(sizes)))


def choice_list(choices, what):
    """An argument type for a comma-separated subset of `choices`.

    Args:
        choices: the allowed names, in their canonical order.
        what: the singular noun used in error messages, e.g. `"target"`.

    Returns:
        A function parsing `"a,b"` (or `"all"`) into a tuple of names in
        the order given.
    """

    def parse(text):
        names = [name.strip() for name in text.split(",") if name.strip()]
        if names == ["all"]:
            return tuple(choices)
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            received = unknown[0] if unknown else text
            raise argparse.ArgumentTypeError(
                f"unknown {what} {received!r}; expected 'all' or a "
                f"comma-separated list of: {', '.join(choices)}"
            )
        return tuple(dict.fromkeys(names))

    return parse


_TYPES = {
    "positive_int": positive_int,
    "positive_float": positive_float,
    "fraction": fraction,
}


def add_common_arguments(parser, experiment, defaults, quick):
    """Adds the flags every experiment takes.

    The settings flags default to None and are resolved by
    `resolve_settings`: an explicit flag wins, else the `--quick` value
    with `--quick`, else the default.

    Args:
        parser: the subcommand's `argparse.ArgumentParser`.
        experiment: the subcommand's name, for the default output folder.
        defaults: dict of the default settings: `train_size`, `val_size`,
            `test_size`, `epochs`, `seeds`, and optionally the optimiser
            settings of `OPTIMIZER_DEFAULTS`.
        quick: dict of the same keys, the values of `--quick`.
    """
    defaults = {**OPTIMIZER_DEFAULTS, **defaults}
    quick = {**OPTIMIZER_DEFAULTS, **quick}
    group = parser.add_argument_group("output and progress")
    group.add_argument(
        "--output",
        metavar="DIR",
        help=(
            "output directory; re-running with the same directory skips "
            "the runs recorded there and resumes an interrupted one "
            f"(default: experiments_output/{experiment}, or "
            f"experiments_output/{experiment}-quick with --quick)"
        ),
    )
    group.add_argument(
        "--overwrite",
        action="store_true",
        help="discard the results and backups already in the output "
        "directory instead of resuming",
    )
    group.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and one epoch: a smoke test that takes seconds",
    )
    group.add_argument(
        "--verbose",
        type=int,
        choices=(0, 1, 2, 3),
        default=1,
        help="0 silent, 1 progress bars (one line per epoch when the "
        "output is not a terminal), 2 one line per epoch, 3 the same and "
        "TensorFlow's start-up logging (default: 1)",
    )
    group = parser.add_argument_group("training")
    for name, flag, kind, text in _SETTING_FLAGS:
        group.add_argument(
            flag,
            type=_TYPES[kind],
            metavar="N" if kind == "positive_int" else "X",
            help=f"{text} (default: {defaults[name]}; --quick: {quick[name]})",
        )
    group.add_argument(
        "--seeds",
        type=positive_int,
        metavar="N",
        help="repetitions with seeds 0..N-1 (default: "
        f"{defaults['seeds']}; --quick: {quick['seeds']})",
    )
    parser.set_defaults(
        experiment=experiment, setting_defaults=defaults, quick_settings=quick
    )


def resolve_settings(args, extra_names=()):
    """Fills the unset settings flags of `args` and returns the settings.

    Args:
        args: the parsed arguments of a subcommand set up with
            `add_common_arguments`.
        extra_names: further attributes of `args` to resolve the same way
            (their default and `--quick` values must be in the dicts given
            to `add_common_arguments`).

    Returns:
        Dict of the settings that determine the results (everything but
        the choice of methods, targets and seeds), as recorded in
        `results.json`.
    """
    chosen = args.quick_settings if args.quick else args.setting_defaults
    names = [name for name, *_ in _SETTING_FLAGS] + ["seeds", *extra_names]
    for name in names:
        if getattr(args, name, None) is None:
            setattr(args, name, chosen[name])
    if args.output is None:
        suffix = "-quick" if args.quick else ""
        args.output = os.path.join(
            "experiments_output", f"{args.experiment}{suffix}"
        )
    settings = {name: getattr(args, name) for name in names}
    del settings["seeds"]
    return settings


def prepare_output_directory(path):
    """Creates the output directory, checks it is writable, and locks it.

    The lock, a file `.keras-laf.lock` holding the process id, keeps two
    commands from running in one directory at once; it is released by
    `release_output_directories` (which `keras-laf` calls on exit) or left
    stale by a killed process, and a stale lock is taken over.

    Raises:
        ExperimentError: the directory cannot be created or written to, or
            another running process holds its lock.
    """
    path = pathlib.Path(path)
    lock = path / LOCK_FILE
    if lock in _held_locks:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True)
        owner = _lock_owner(lock)
        if owner is not None:
            raise ExperimentError(
                f"another keras-laf command (process {owner}) is running in "
                f"{str(path)!r}. Wait for it to finish, or choose another "
                "--output."
            )
        lock.write_text(str(os.getpid()))
    except OSError as error:
        reason = error.strerror or str(error)
        raise ExperimentError(
            f"cannot write to the output directory {str(path)!r}: {reason}. "
            "Choose another one with --output."
        ) from None
    _held_locks.append(lock)
    return path


def release_output_directories():
    """Releases the locks of `prepare_output_directory` of this process."""
    while _held_locks:
        _held_locks.pop().unlink(missing_ok=True)


def _lock_owner(lock):
    # The id of another live process holding the lock, else None.
    try:
        pid = int(lock.read_text().strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        pass
    return pid


def summarize(records, group_fields, value_field):
    """Means and standard deviations of `value_field` over the seeds.

    Args:
        records: list of dicts, one per seed and group.
        group_fields: the fields identifying a group, e.g. `("method",
            "target", "max_size")`.
        value_field: the measured field, e.g. `"mae"`.

    Returns:
        List of dicts: the group fields, `<value>_mean`, `<value>_std`
        (population standard deviation, 0 for one seed) and `num_seeds`.
    """
    groups = {}
    for record in records:
        key = tuple(record[field] for field in group_fields)
        groups.setdefault(key, []).append(record[value_field])
    return [
        {
            **dict(zip(group_fields, key, strict=True)),
            f"{value_field}_mean": float(np.mean(values)),
            f"{value_field}_std": float(np.std(values)),
            "num_seeds": len(values),
        }
        for key, values in groups.items()
    ]


class ResultStore:
    """The recorded runs of one experiment in its output directory.

    `results.json` is the record: the experiment, its settings and one
    entry per finished run (a method, a target and a seed). It is rewritten
    (atomically) after every run, with `results.csv` (one row per record)
    and `summary.csv` (means and standard deviations over the seeds).

    Results of other settings are never mixed: opening a directory whose
    settings differ raises `ExperimentError`, unless `overwrite` discards
    them.

    Args:
        directory: the output directory, already checked to be writable.
        experiment: the subcommand's name.
        settings: dict of the settings (see `resolve_settings`).
        key_fields: the fields identifying a run, e.g. `("method",
            "target", "seed")`.
        records: function from the list of runs to the list of records
            (flat dicts, the rows of `results.csv`).
        group_fields: the fields of a record averaged over seeds together.
        value_field: the measured field of a record.
        overwrite: whether to discard what the directory holds.
    """

    def __init__(
        self,
        directory,
        experiment,
        settings,
        key_fields,
        records,
        group_fields,
        value_field,
        overwrite=False,
    ):
        self.directory = pathlib.Path(directory)
        self.experiment = experiment
        self.settings = json.loads(json.dumps(settings))
        self.key_fields = tuple(key_fields)
        self._records = records
        self.group_fields = tuple(group_fields)
        self.value_field = value_field
        self.runs = []
        path = self.directory / RESULTS_JSON
        if overwrite:
            self._discard()
        elif path.exists():
            self.runs = self._load(path)
        self.save()

    def _discard(self):
        for name in (BACKUPS, PREDICTIONS, RUNS):
            shutil.rmtree(self.directory / name, ignore_errors=True)
        for name in (RESULTS_JSON, RESULTS_CSV, SUMMARY_CSV):
            (self.directory / name).unlink(missing_ok=True)

    def _load(self, path):
        try:
            recorded = json.loads(path.read_text())
            experiment = recorded["experiment"]
            settings = recorded["settings"]
            runs = list(recorded["runs"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ExperimentError(
                f"cannot read {str(path)!r} ({error}). Delete it, pass "
                "--overwrite or choose another --output."
            ) from None
        if experiment != self.experiment:
            raise ExperimentError(
                f"{str(self.directory)!r} holds results of the "
                f"{experiment!r} experiment, not {self.experiment!r}. "
                "Choose another --output."
            )
        if settings != self.settings:
            changes = ", ".join(
                f"{name} {settings.get(name)!r} -> {self.settings.get(name)!r}"
                for name in sorted(set(settings) | set(self.settings))
                if settings.get(name) != self.settings.get(name)
            )
            raise ExperimentError(
                f"{str(self.directory)!r} holds results of other settings "
                f"({changes}). Pass --overwrite to discard them, or choose "
                "another --output."
            )
        return runs

    def key(self, run):
        """The tuple of `key_fields` of a run."""
        return tuple(run[field] for field in self.key_fields)

    def find(self, **key):
        """Returns the recorded run with these key fields, or None."""
        wanted = tuple(key[field] for field in self.key_fields)
        for run in self.runs:
            if self.key(run) == wanted:
                return run
        return None

    def add(self, run):
        """Records a finished run (replacing one of the same key), saves."""
        self.runs = [
            item for item in self.runs if self.key(item) != self.key(run)
        ]
        self.runs.append(run)
        self.save()

    @property
    def records(self):
        """The flat records of all runs, the rows of `results.csv`."""
        return self._records(self.runs)

    @property
    def summary(self):
        """Means and standard deviations over seeds, `summary.csv`."""
        return summarize(self.records, self.group_fields, self.value_field)

    def run_name(self, **key):
        """A file-name-safe name of a run, e.g. `laf-sum-seed0`."""
        parts = [str(key[field]) for field in self.key_fields[:-1]]
        parts.append(f"seed{key['seed']}")
        return "-".join(parts)

    def backup_directory(self, **key):
        """The `BackupAndRestore` directory of a run."""
        return self.directory / BACKUPS / self.run_name(**key)

    def history_path(self, **key):
        """The per-epoch `history.csv` of a run."""
        return self.directory / RUNS / self.run_name(**key) / HISTORY_CSV

    def predictions_path(self, **key):
        """The `.npz` file of a run's test predictions."""
        return self.directory / PREDICTIONS / f"{self.run_name(**key)}.npz"

    def remove_empty_backups(self):
        """Removes the `backups` folder when no unfinished run is left."""
        try:
            (self.directory / BACKUPS).rmdir()
        except OSError:
            pass

    def save(self):
        """Writes `results.json`, `results.csv` and `summary.csv`."""
        records = self.records
        summary = self.summary
        document = {
            "experiment": self.experiment,
            "settings": self.settings,
            "runs": self.runs,
            "records": records,
            "summary": summary,
        }
        _write_atomically(
            self.directory / RESULTS_JSON, json.dumps(document, indent=2)
        )
        _write_csv(self.directory / RESULTS_CSV, records)
        _write_csv(self.directory / SUMMARY_CSV, summary)


def _write_atomically(path, text):
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def _write_csv(path, rows):
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", newline="") as file:
        if rows:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    os.replace(temporary, path)


# The set-regression experiments: scalars, mnist and unique-sum.

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


def open_store(args, settings, key_fields, records, group_fields, value_field):
    """Checks `args.output` and opens its `ResultStore` (see there)."""
    return ResultStore(
        prepare_output_directory(args.output),
        args.experiment,
        settings,
        key_fields=key_fields,
        records=records,
        group_fields=group_fields,
        value_field=value_field,
        overwrite=args.overwrite,
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
        build_model: function `(method)` returning an uncompiled model.
        method_labels: optional dict of the methods' names in the plots.
    """
    from laf_experiments import runner

    keys = [
        {"method": method, "target": target, "seed": seed}
        for target in args.targets
        for seed in range(args.seeds)
        for method in args.methods
    ]
    training_data = cached(
        lambda key: make_training_data(key["target"], key["seed"]),
        lambda key: (key["target"], key["seed"]),
    )
    test_data = cached(
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
        return {"test": test}, f"MAE by max test-set size {maes}"

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
            build_model=lambda key: build_model(key["method"]),
            loss="mean_absolute_error",
        ),
        evaluate=evaluate,
    )
    paths = plot_regression(store, args.experiment, method_labels)
    runner.report_written(args, store, paths)


def cached(make, cache_key):
    """`make(key)`, computed once per `cache_key(key)`.

    Only the last value is kept: the runs come grouped by `cache_key`.
    """
    cached = {}

    def get(key):
        wanted = cache_key(key)
        if wanted not in cached:
            cached.clear()
            cached[wanted] = make(key)
        return cached[wanted]

    return get


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


def add_methods_and_sizes_arguments(
    group, methods, defaults, quick, paper_sizes=None, optional_methods=()
):
    """Adds `--methods` and `--max-sizes`, shared by the set experiments.

    `methods` run by default; `optional_methods` only when named.
    """

    def sizes(values):
        return ",".join(map(str, values))

    optional = (
        f"; also: {','.join(optional_methods)}" if optional_methods else ""
    )
    group.add_argument(
        "--methods",
        type=choice_list((*methods, *optional_methods), "method"),
        default=methods,
        help=f"comma-separated methods (default: {','.join(methods)}"
        f"{optional})",
    )
    paper = f"; paper: {sizes(paper_sizes)}" if paper_sizes else ""
    group.add_argument(
        "--max-sizes",
        type=set_size_list,
        metavar="M1,M2,...",
        help=f"maximum sizes of the test sets (default: "
        f"{sizes(defaults['max_sizes'])}; --quick: "
        f"{sizes(quick['max_sizes'])}{paper})",
    )

"""The loop every `keras-laf` subcommand runs, written once.

For each run (a dict of key fields with a `seed`, e.g. a method, a target
and a seed), in order:

1. skip it if `results.json` records it already;
2. point it at its `backups/<run>/` directory, so a training that was
   interrupted resumes at its last finished epoch;
3. seed Keras with the run's seed;
4. build and train its model (`fit`: Adam, the experiment's loss and
   `ReduceLROnPlateau`, a per-epoch `runs/<run>/history.csv`, and the
   training time summed over the resumed parts);
5. evaluate it;
6. record the run in `results.json` (and the CSV files);
7. clear the Keras session.

Each subcommand gives the runner its runs, a training step (`fitting`:
the data and the model of a run; `keras-laf tune` searches instead) and
the evaluation of a trained model.
"""

import json
import pathlib
import shutil
import time

from laf_experiments.errors import log
from laf_experiments.store import RESULTS_CSV
from laf_experiments.store import RESULTS_JSON
from laf_experiments.store import SUMMARY_CSV

# Written in a run's backup directory after every epoch: the training
# time so far, summed over the resumed parts.
_ELAPSED_FILE = "elapsed_seconds.json"


def backed_up_epoch(backup_directory):
    """The number of epochs saved by `BackupAndRestore`, 0 if none."""
    path = pathlib.Path(backup_directory) / "training_metadata.json"
    try:
        return int(json.loads(path.read_text())["epoch"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _previous_seconds(backup_directory):
    path = pathlib.Path(backup_directory) / _ELAPSED_FILE
    try:
        return float(json.loads(path.read_text())["train_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def _keep_history_rows(path, num_epochs):
    # The header and the rows of the epochs the backup holds: a row that
    # `CSVLogger` wrote after the last backup is trained again.
    path = pathlib.Path(path)
    if num_epochs == 0 or not path.exists():
        path.unlink(missing_ok=True)
        return
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: 1 + num_epochs]))


def steps_per_execution(requested, train_data):
    """`requested`, or the batches of one epoch where they are fewer.

    Keras runs `steps_per_execution` batches per call and its progress bar
    counts them, so more than an epoch holds would draw a bar past its end
    (`16/4`) before the epoch's real one. Keras's PyTorch trainer runs one
    batch per call and refuses more.
    """
    import keras

    if keras.config.backend() == "torch":
        return 1
    cardinality = getattr(train_data, "cardinality", None)
    if cardinality is not None:
        num_batches = int(cardinality())
    elif hasattr(train_data, "__len__"):
        num_batches = len(train_data)
    else:
        return requested
    if num_batches > 0:
        return max(1, min(int(requested), num_batches))
    return requested


def fit(
    model,
    train_data,
    validation_data,
    loss,
    settings,
    backup_directory,
    history_path,
    verbose=1,
    metrics=None,
    callbacks=(),
):
    """Compiles and trains a model with the paper's optimiser settings.

    Adam with `settings["learning_rate"]`, the given loss, and
    `ReduceLROnPlateau` on the validation loss. `BackupAndRestore` saves
    the weights, the optimiser state (the learning rate included) and the
    epoch to `backup_directory` after every epoch and restores them when a
    backup exists there, so an interrupted training continues where it
    stopped; the backup is deleted once training ends. The plateau
    counter of `ReduceLROnPlateau` starts afresh on resumption.
    `keras.callbacks.CSVLogger` appends one row per epoch to
    `history_path`.

    Args:
        model: an uncompiled `keras.Model`.
        train_data: the training `tf.data.Dataset`, already shuffled.
        validation_data: the validation `tf.data.Dataset`.
        loss: a Keras loss.
        settings: dict with `epochs`, `learning_rate`, `lr_factor` and
            `lr_patience`, and optionally `steps_per_execution` (default
            1).
        backup_directory: the run's `BackupAndRestore` directory.
        history_path: the run's per-epoch CSV file.
        verbose: Keras verbosity.
        metrics: optional Keras metrics.
        callbacks: further Keras callbacks, called after the backup.

    Returns:
        Dict with `train_seconds` (summed over every resumed part),
        `resumed_from_epoch` and the last `val_loss` (None when nothing
        was left to train).
    """
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(settings["learning_rate"]),
        loss=loss,
        metrics=metrics,
        steps_per_execution=steps_per_execution(
            settings.get("steps_per_execution", 1), train_data
        ),
    )
    backup_directory = pathlib.Path(backup_directory)
    resumed_from = backed_up_epoch(backup_directory)
    previous_seconds = (
        _previous_seconds(backup_directory) if resumed_from else 0
    )
    history_path = pathlib.Path(history_path)
    history_path.parent.mkdir(parents=True, exist_ok=True)
    _keep_history_rows(history_path, resumed_from)
    start = time.perf_counter()

    def record_elapsed(epoch, logs):
        seconds = previous_seconds + time.perf_counter() - start
        path = backup_directory / _ELAPSED_FILE
        if backup_directory.is_dir():
            path.write_text(json.dumps({"train_seconds": seconds}))

    callbacks = [
        keras.callbacks.BackupAndRestore(
            str(backup_directory), double_checkpoint=True
        ),
        keras.callbacks.LambdaCallback(on_epoch_end=record_elapsed),
        keras.callbacks.CSVLogger(str(history_path), append=True),
        keras.callbacks.ReduceLROnPlateau(
            monitor="val_loss",
            factor=settings["lr_factor"],
            patience=settings["lr_patience"],
            verbose=1 if verbose else 0,
        ),
        *callbacks,
    ]
    history = model.fit(
        train_data,
        validation_data=validation_data,
        epochs=settings["epochs"],
        callbacks=callbacks,
        verbose=verbose,
        shuffle=False,
    )
    seconds = previous_seconds + time.perf_counter() - start
    shutil.rmtree(backup_directory, ignore_errors=True)
    val_losses = history.history.get("val_loss") or [None]
    return {
        "train_seconds": round(seconds, 3),
        "resumed_from_epoch": resumed_from,
        "val_loss": None if val_losses[-1] is None else float(val_losses[-1]),
    }


def fitting(
    args,
    settings,
    training_data,
    build_model,
    loss,
    metrics=None,
    callbacks=(),
):
    """The training step of `run_all` for a model trained with `fit`.

    Args:
        args: the parsed arguments, with `verbose`.
        settings: the resolved settings (`settings.resolve_settings`).
        training_data: function `(key)` returning the training and
            validation `tf.data.Dataset`s (called only for runs to train;
            caching is up to it, e.g. with `cached`).
        build_model: function `(key)` returning an uncompiled model.
        loss: the Keras loss.
        metrics: optional Keras metrics.
        callbacks: function `(key, data)` of the run's key and its
            training and validation data, returning further Keras
            callbacks (new ones for every run), or a sequence of them.

    Returns:
        A function `(key, store)` returning the trained model and the
        training record of `fit` with the number of epochs.
    """

    def train(key, store):
        data = training_data(key)
        model = build_model(key)
        training = fit(
            model,
            *data,
            loss=loss,
            settings=settings,
            backup_directory=store.backup_directory(**key),
            history_path=store.history_path(**key),
            verbose=args.verbose,
            metrics=metrics,
            callbacks=(
                callbacks(key, data) if callable(callbacks) else callbacks
            ),
        )
        return model, {"epochs": settings["epochs"], **training}

    return train


def run_all(args, store, keys, describe, train, evaluate):
    """Trains, evaluates and records every run of `keys` not yet recorded.

    Args:
        args: the parsed arguments, with `experiment`.
        store: the experiment's `laf_experiments.store.ResultStore`.
        keys: list of dicts of the store's key fields, each with a `seed`,
            in the order to run them.
        describe: function `(key)` returning the run's name in progress
            lines, e.g. `"laf on sum, seed 0"`.
        train: function `(key, store)` returning the trained model and a
            dict recorded with the run that holds `train_seconds` (see
            `fitting`). Keras is seeded with the run's seed before it.
        evaluate: function `(key, model)` returning a dict of the run's
            test results, recorded with it, and a one-line summary of them.
    """
    import keras

    experiment = args.experiment
    for index, key in enumerate(keys):
        prefix = f"[{index + 1}/{len(keys)}] {describe(key)}"
        if store.find(**key) is not None:
            log(experiment, f"{prefix}: already recorded")
            continue
        epoch = backed_up_epoch(store.backup_directory(**key))
        resuming = f", resuming after epoch {epoch}" if epoch else ""
        log(experiment, f"{prefix}: training{resuming}")
        keras.utils.set_random_seed(key["seed"])
        model, training = train(key, store)
        results, summary = evaluate(key, model)
        store.add({**key, **training, **results})
        log(
            experiment,
            f"{prefix}: {summary} ({training['train_seconds']:.1f} s)",
        )
        keras.backend.clear_session()
    store.remove_empty_backups()


def report_written(args, store, figures):
    """Logs the files of the output directory, then the summary table."""
    names = [RESULTS_JSON, RESULTS_CSV, SUMMARY_CSV]
    log(
        args.experiment,
        f"results in {store.directory}: " + ", ".join([*names, *figures]),
    )
    table = summary_table(store.summary, store.group_fields, store.value_field)
    if table:
        log(args.experiment, f"{store.value_field}, mean ± std over the seeds:")
        print(table, flush=True)


def summary_table(summary, group_fields, value_field):
    """The summary as a text table: mean ± std of `value_field`.

    One column per value of the first group field (the methods), one row
    per combination of the others (a target and a test-set size, a split
    and a task, ...), in the order of the summary.

    Args:
        summary: the rows of `store.summarize`.
        group_fields: its group fields, the first one the columns.
        value_field: its measured field.

    Returns:
        The table's text, or `""` for an empty summary.
    """
    if not summary:
        return ""
    column_field, row_fields = group_fields[0], group_fields[1:]
    columns = list(dict.fromkeys(row[column_field] for row in summary))
    cells = {}
    for row in summary:
        label = ", ".join(str(row[field]) for field in row_fields)
        cells.setdefault(label, {})[row[column_field]] = (
            f"{row[f'{value_field}_mean']:.4g} ± "
            f"{row[f'{value_field}_std']:.2g}"
        )
    header = [", ".join(row_fields), *map(str, columns)]
    lines = [
        [label, *(values.get(column, "-") for column in columns)]
        for label, values in cells.items()
    ]
    widths = [
        max(len(line[index]) for line in [header, *lines])
        for index in range(len(header))
    ]

    def text(line):
        return "  ".join(
            cell.ljust(width) for cell, width in zip(line, widths, strict=True)
        ).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([text(header), rule, *map(text, lines)])


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

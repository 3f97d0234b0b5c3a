"""The output directory of a `keras-laf` command and its recorded runs.

The directory is checked for writability up front and locked against a
second command running in it; its `results.json` records every finished
run, so re-running a command skips them, and `backups/<run>/` holds the
`keras.callbacks.BackupAndRestore` state of an unfinished run, so its
training resumes at the last finished epoch.
"""

import csv
import json
import os
import pathlib
import shutil

import numpy as np

from laf_experiments.errors import ExperimentError

RESULTS_JSON = "results.json"
RESULTS_CSV = "results.csv"
SUMMARY_CSV = "summary.csv"
BACKUPS = "backups"
RUNS = "runs"
HISTORY_CSV = "history.csv"
PREDICTIONS = "predictions"
LOCK_FILE = ".keras-laf.lock"

# The output directories locked by this process.
_held_locks = []


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
        """Writes `results.json`, `results.csv` and `summary.csv`; every
        row of a `--quick` run says so in a `run` column (the settings'
        `"run"`, `settings.QUICK_MARK`)."""
        mark = {"run": self.settings["run"]} if "run" in self.settings else {}
        records = [{**record, **mark} for record in self.records]
        summary = [{**row, **mark} for row in self.summary]
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
        write_csv(self.directory / RESULTS_CSV, records)
        write_csv(self.directory / SUMMARY_CSV, summary)


def _write_atomically(path, text):
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def write_csv(path, rows):
    """Writes `rows` (dicts with the same fields, the first's order) as a
    CSV file, atomically; an empty file for no rows."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", newline="") as file:
        if rows:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    os.replace(temporary, path)


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

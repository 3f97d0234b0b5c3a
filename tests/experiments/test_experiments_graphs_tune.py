"""Tests of `keras-laf graphs` and `keras-laf tune`.

Both run end to end with `--quick` (tiny data, one epoch); the graphs
benchmark trains two of its methods, the others are built only.
"""

import math
import sys

import keras
import numpy as np
import pytest
from experiment_helpers import QUIET
from experiment_helpers import assert_png
from experiment_helpers import read_csv
from experiment_helpers import read_json
from experiment_helpers import run

import keras_laf
from laf_experiments import cli
from laf_experiments import graph_networks
from laf_experiments import graph_reports
from laf_experiments.commands import graphs
from laf_experiments.commands import tune
from laf_experiments.settings import QUICK_MARK

TASKS = {
    "shortest_path",
    "eccentricity",
    "laplacian_features",
    "is_connected",
    "diameter",
    "spectral_radius",
    "average",
}


def assert_one_line_error(status, err, text):
    assert status == 2
    assert text in err
    assert "Traceback" not in err
    # argparse prints the usage first; the error itself is the last line.
    last = err.strip().splitlines()[-1]
    assert last.startswith("keras-laf") and text in last


def run_graphs(tmp_path_factory, name, methods):
    """Runs `keras-laf graphs` quickly with `methods` in a new directory."""
    pytest.importorskip("networkx")
    directory = tmp_path_factory.mktemp(name)
    argv = [
        "graphs",
        *QUIET,
        "--methods",
        methods,
        "--output",
        str(directory),
    ]
    assert cli.main(argv) == 0
    return directory


@pytest.fixture(scope="module")
def graphs_output(tmp_path_factory):
    return run_graphs(tmp_path_factory, "graphs", "laf,pna")


@pytest.mark.slow
def test_graphs_records_every_method_split_and_task(graphs_output):
    results = read_json(graphs_output)
    assert results["experiment"] == "graphs"
    assert results["settings"]["epochs"] == 1
    assert results["settings"]["readout"] == "mean"
    records = results["records"]
    assert {record["method"] for record in records} == {"laf", "pna"}
    assert {record["split"] for record in records} == {
        "15-24",
        "45-49",
        "95-99",
    }
    assert {record["task"] for record in records} == TASKS
    assert len(records) == 2 * 3 * 7
    assert all(math.isfinite(record["log10_mse"]) for record in records)
    for run_record in results["runs"]:
        for split in run_record["test"]:
            average = np.mean(
                [split["log10_mse"][task] for task in graph_networks.TASKS]
            )
            assert split["log10_mse"]["average"] == pytest.approx(average)
            assert split["mse"]["diameter"] == pytest.approx(
                10 ** split["log10_mse"]["diameter"]
            )

    rows = read_csv(graphs_output / "results.csv")
    assert list(rows[0]) == [
        "method",
        "split",
        "task",
        "seed",
        "log10_mse",
        "run",
    ]
    assert len(rows) == len(records)
    summary = read_csv(graphs_output / "summary.csv")
    assert len(summary) == len(records)
    assert {"log10_mse_mean", "log10_mse_std", "num_seeds"} <= set(summary[0])
    # Every row of a --quick run says it is not a result.
    assert {row["run"] for row in rows + summary} == {QUICK_MARK}
    # Training finished, so no backup is left behind.
    assert not (graphs_output / "backups").exists()


@pytest.mark.slow
def test_graphs_writes_table_and_plot(graphs_output):
    table = (graphs_output / "table.md").read_text()
    assert table.splitlines()[0].endswith(f"({QUICK_MARK})")
    assert "1 epoch, " in table and "over 1 seed." in table
    assert "| PNA (paper) | -2.89 | -2.89 | -3.77 | -2.61 | -3.04 |" in table
    assert "| LAF (paper) | -2.13 | -2.20 | -1.67 | -2.35 | -2.77 |" in table
    assert "| LAF (ours) |" in table and "| PNA (ours) |" in table
    assert "| Method | 15-24 | 45-49 | 95-99 |" in table
    assert_png(graphs_output / "log10_mse.png")


@pytest.mark.slow
def test_graphs_rerun_skips_recorded_runs(graphs_output, capsys):
    before = read_json(graphs_output)["runs"]
    argv = ["graphs", *QUIET, "--methods", "laf,pna"]
    status, out, _ = run([*argv, "--output", str(graphs_output)], capsys)
    assert status == 0
    assert out.count("already recorded") == 2
    assert "training" not in out and "generating" not in out
    assert read_json(graphs_output)["runs"] == before

    status, _, err = run(
        [*argv, "--laf-units", "3", "--output", str(graphs_output)], capsys
    )
    assert_one_line_error(status, err, "laf_units 2 -> 3")


MESSAGE_PASSING_METHODS = [
    m
    for m in graphs.METHODS
    if m not in graph_networks.CONVOLUTIONS and m != graph_networks.BASELINE
]


@pytest.mark.parametrize("method", MESSAGE_PASSING_METHODS)
def test_graphs_models_of_every_method(method):
    histogram = np.array([1, 3, 2])
    model = graph_networks.build_model(method, 2, 4, 1, "mean", histogram)
    layer = model.get_layer("message_passing_1")
    aggregation = layer.aggregation
    if method == "pna":
        # PNA's scalers wrap its aggregators, with the histogram's delta.
        scaler = layer.aggregation_layer()
        assert isinstance(scaler, keras_laf.DegreeScalerAggregation)
        assert scaler.scalers == list(graph_networks.SCALERS[method])
        assert scaler.average_log_degree == pytest.approx(
            np.log([1.0, 2.0, 3.0]) @ histogram / histogram.sum()
        )
        aggregation = scaler.aggregation
    else:
        assert method not in graph_networks.SCALERS
    if method in ("pna", "pna_star"):
        # PNA's four neighbourhood aggregators, by their registered name.
        assert aggregation == "pna_neighbourhood"
        pooled = keras_laf.aggregations.get(aggregation)
        assert pooled.aggregators == ["mean", "max", "min", "std"]
    else:
        assert aggregation == method
    assert model.get_layer("graph_readout").aggregation == "mean"
    own = graph_networks.build_model(method, 2, 4, 1, "method", histogram)
    assert own.get_layer("graph_readout").aggregation == aggregation
    keras.backend.clear_session()


def test_graphs_degree_histogram_counts_the_training_graphs():
    from laf_experiments.data.graph_properties import make_property_graphs

    train = make_property_graphs(6, sizes=(5, 8), seed=0)
    histogram = graph_networks.training_degree_histogram(train)
    degrees = np.concatenate(
        [
            np.bincount(edges[:, 1], minlength=len(features))
            for features, edges in zip(train.node_features, train.edges)
        ]
    )
    np.testing.assert_array_equal(histogram, np.bincount(degrees))
    # Its delta is the one PropertyGraphs computes.
    delta = np.log(np.arange(len(histogram)) + 1.0) @ histogram
    assert delta / histogram.sum() == pytest.approx(train.average_log_degree())


@pytest.mark.parametrize(
    "method, layer_cls, readout",
    [
        ("gin", keras_laf.GINConv, "sum"),
        ("gcn", keras_laf.GCNConv, "mean"),
        ("gat", keras_laf.GATConv, "mean"),
    ],
)
def test_graphs_models_of_the_convolutions(method, layer_cls, readout):
    model = graph_networks.build_model(method, 2, 4, 2, "max", 1.5)
    assert isinstance(model.get_layer(f"{method}_2"), layer_cls)
    assert model.get_layer("graph_readout").aggregation == "max"
    own = graph_networks.build_model(method, 2, 4, 1, "method", 1.5)
    assert own.get_layer("graph_readout").aggregation == readout
    keras.backend.clear_session()


def test_graphs_baseline_predicts_the_training_means():
    class Training:
        node_labels = [
            np.array([[1.0, 2.0, 3.0]]),
            np.array([[3.0, 4.0, 5.0], [5.0, 6.0, 7.0]]),
        ]
        graph_labels = np.array([[1.0, 1.0, 1.0], [3.0, 3.0, 5.0]])

    model = graph_networks.baseline_model(Training)
    outputs = model(
        {
            "node_features": np.zeros((4, 2), "float32"),
            "edge_source": np.zeros(0, "int32"),
            "edge_target": np.zeros(0, "int32"),
            "node_graph_ids": np.array([0, 0, 1, 2], "int32"),
            "nodes_per_graph": np.array([2, 1, 1], "int32"),
        }
    )
    np.testing.assert_allclose(outputs["node_outputs"], [[3.0, 4.0, 5.0]] * 4)
    np.testing.assert_allclose(outputs["graph_outputs"], [[2.0, 2.0, 3.0]] * 3)


@pytest.fixture(scope="module")
def convolutions_output(tmp_path_factory):
    return run_graphs(
        tmp_path_factory, "graph_convolutions", "laf,gin,gcn,gat,baseline"
    )


@pytest.mark.slow
def test_graphs_quick_with_the_convolutions(convolutions_output):
    results = read_json(convolutions_output)
    runs = {run["method"]: run for run in results["runs"]}
    assert set(runs) == {"laf", "gin", "gcn", "gat", "baseline"}
    for run_record in runs.values():
        for split in run_record["test"]:
            assert math.isfinite(split["log10_mse"]["average"])
    assert runs["baseline"]["epochs"] == 0
    table = (convolutions_output / "table.md").read_text()
    for label in ("GIN", "GCN", "GAT", "Baseline (training mean)"):
        assert f"| {label} (ours) |" in table
    assert_png(convolutions_output / "log10_mse.png")


def test_graphs_table_with_seeds():
    summary = [
        {
            "method": "sum",
            "split": split,
            "task": task,
            "log10_mse_mean": -1.234,
            "log10_mse_std": 0.05,
            "num_seeds": 2,
        }
        for split in ("95-99", "15-24", "20-24")
        for task in TASKS
    ]
    settings = {
        "train_size": 8,
        "epochs": 1,
        "laf_units": 2,
        "hidden_units": 4,
        "num_layers": 1,
        "readout": "mean",
    }
    table = graph_reports.results_table(summary, settings)
    assert "| Sum (ours) | -1.23 ± 0.05 |" in table
    assert "| Method | 15-24 | 20-24 | 95-99 |" in table
    assert "1 epoch, " in table and "1 layer, " in table
    assert "over 2 seeds." in table


def test_graphs_size_flags():
    args = cli.build_parser().parse_args(
        ["graphs", "--num-train", "40", "--extrapolation-sizes", "30-34,20-24"]
    )
    assert args.train_size == 40
    assert args.extrapolation_sizes == ((20, 25), (30, 35))


def test_graphs_without_networkx(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "networkx", None)
    status, _, err = run(["graphs", *QUIET, "--output", str(tmp_path)], capsys)
    assert_one_line_error(status, err, "pip install 'keras-laf[experiments]'")
    assert len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def tune_output(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tune")
    argv = ["tune", *QUIET, "--laf-preset", "closed_forms"]
    assert cli.main([*argv, "--output", str(directory)]) == 0
    return directory


@pytest.mark.slow
def test_tune_records_the_best_configuration(tune_output):
    results = read_json(tune_output)
    assert results["experiment"] == "tune"
    assert results["settings"]["tuner"] == "random"
    assert results["settings"]["laf_preset"] == "closed_forms"
    [search] = results["runs"]
    assert search["target"] == tune.DEFAULT_TARGET
    assert 1 <= search["best_units"] <= 3
    assert search["best_hyperparameters"]["laf_units"] == search["best_units"]
    assert search["best_hyperparameters"]["laf_preset"] == "closed_forms"
    assert [item["max_size"] for item in search["test"]] == [10, 50]
    assert all(math.isfinite(item["mae"]) for item in search["test"])
    trials = search["trials"]
    assert len(trials) == 2
    assert all(1 <= trial["units"] <= 3 for trial in trials)
    assert all(math.isfinite(trial["val_loss"]) for trial in trials)
    assert search["best_val_loss"] == min(t["val_loss"] for t in trials)

    rows = read_csv(tune_output / "results.csv")
    assert list(rows[0]) == [
        "target",
        "seed",
        "trial",
        "units",
        "val_loss",
        "run",
    ]
    assert len(rows) == 2
    assert (tune_output / "summary.csv").exists()
    assert_png(tune_output / "val_loss.png")
    assert (tune_output / "tuner" / "max-seed0" / "oracle.json").exists()


@pytest.mark.slow
def test_tune_rerun_prints_the_recorded_result(tune_output, capsys):
    argv = ["tune", *QUIET, "--laf-preset", "closed_forms"]
    status, out, _ = run([*argv, "--output", str(tune_output)], capsys)
    assert status == 0
    assert "already recorded" in out
    assert "search of" not in out
    assert "best configuration for max, seed 0 (2 trials): " in out
    assert "test MAE at maximum size 50: " in out


@pytest.mark.slow
def test_tune_with_hyperband(tmp_path, capsys):
    argv = ["tune", *QUIET, "--tuner", "hyperband", "--target", "count"]
    status, out, _ = run(
        [*argv, "--max-units", "2", "--output", str(tmp_path)], capsys
    )
    assert status == 0
    assert "hyperband search of 1 to 2 LAF units" in out
    [search] = read_json(tmp_path)["runs"]
    assert search["target"] == "count" and search["tuner"] == "hyperband"
    assert search["best_units"] in (1, 2)
    assert math.isfinite(search["test"][-1]["mae"])
    assert "max_trials" not in read_json(tmp_path)["settings"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["graphs", "--methods", "laf,gnn"], "unknown method 'gnn'"),
        (["graphs", "--extrapolation-sizes", "30-20"], "node-count ranges"),
        (["graphs", "--laf-units", "0"], "expected a positive integer"),
        (["graphs", "--readout", "set2set"], "invalid choice: 'set2set'"),
        (["tune", "--target", "maximum"], "invalid choice: 'maximum'"),
        (["tune", "--tuner", "grid"], "invalid choice: 'grid'"),
        (["tune", "--max-trials", "-1"], "expected a positive integer"),
        (["tune", "--min-units", "5", "--max-units", "2"], "--min-units 5"),
    ],
)
def test_bad_arguments_exit_with_status_2(argv, message, tmp_path, capsys):
    status, _, err = run([*argv, "--output", str(tmp_path)], capsys)
    assert_one_line_error(status, err, message)


@pytest.mark.slow
def test_tune_resumes_an_interrupted_search(tmp_path, capsys, monkeypatch):
    make_tuner = tune.make_tuner

    def interrupt_after_first_trial(*args, **kwargs):
        tuner = make_tuner(*args, **kwargs)
        end_trial = tuner.on_trial_end

        def on_trial_end(trial):
            end_trial(trial)
            raise KeyboardInterrupt

        tuner.on_trial_end = on_trial_end
        return tuner

    argv = ["tune", *QUIET, "--target", "sum", "--output", str(tmp_path)]
    monkeypatch.setattr(tune, "make_tuner", interrupt_after_first_trial)
    status, _, err = run(argv, capsys)
    assert status == 130
    assert "run the same command again to resume" in err
    assert read_json(tmp_path)["runs"] == []

    monkeypatch.setattr(tune, "make_tuner", make_tuner)
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert "resuming after 1 trial" in out
    [search] = read_json(tmp_path)["runs"]
    assert [trial["trial_id"] for trial in search["trials"]] == ["0", "1"]


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--quick"], graphs.QUICK_METHODS),
        ([], graphs.METHODS),
        (["--quick", "--methods", "gat"], ("gat",)),
    ],
)
def test_graphs_runs_its_methods_or_the_quick_ones(
    options, expected, tmp_path, monkeypatch
):
    pytest.importorskip("networkx")
    ran = []

    def run_methods(args, store, train, evaluate):
        ran.extend(args.methods)

    monkeypatch.setattr(graphs.reports, "run_methods", run_methods)
    monkeypatch.setattr(graphs.reports, "write_results", lambda *a, **k: None)
    argv = ["graphs", *options, "--output", str(tmp_path / "graphs")]
    assert cli.main([*argv, "--verbose", "0"]) == 0
    assert tuple(ran) == tuple(expected)

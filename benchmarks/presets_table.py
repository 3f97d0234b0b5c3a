"""Which LAF preset for which task: one table from the records of each task.

Reads the records that the commands in RESULTS.md ("Which preset for which
task") write, and prints one Markdown table per task: each LAF preset
beside the fixed poolings, mean ± standard deviation over seeds, with the
paper's figure where it has one; with `--output`, the same rows as
JSON.

    python -m benchmarks.presets_table

A missing record file leaves its task out, with a note of the command
that makes it.
"""

import argparse
import collections
import json
import pathlib
import sys

import numpy as np

from benchmarks.common import RESULTS
from benchmarks.common import mean_std
from benchmarks.common import read_jsonl
from benchmarks.common import write_record
from laf_experiments.reports import markdown_table

PRESETS = ("pooling", "closed_forms")
# MAE of LAF at M = 50 in the paper's Fig. D.1 (sets of MNIST digits,
# which the authors report as very similar to the integers), read off the
# figure as in RESULTS.md; None where the figure has no such value.
PAPER_FIG_D1 = {
    "count": 0.03,
    "sum": 2.5,
    "mean": 0.04,
    "max": 0.47,
    "min": None,
    "inverse_count": 0.0,
    "median": 0.82,
    "kurtosis": 0.36,
    "std": 0.15,
    "skewness": 0.12,
    "max_minus_min": None,
    "min_over_max": None,
}
# The closed-forms preset before its count anchor, as the tables name it.
NO_COUNT_ANCHOR = "closed_forms, no count anchor"
# Seed-study candidates under their preset's name: `degree_floor_0.25` is
# the `closed_forms` preset's exact arguments before its count anchor, run
# before presets existed.
CANDIDATE_NAMES = {
    "degree_floor_0.25": NO_COUNT_ANCHOR,
    "closed_forms_no_count_anchor": NO_COUNT_ANCHOR,
    "closed_forms": "closed_forms",
    "pooling": "pooling",
    "deepsets": "DeepSets",
}


def integer_targets(pipeline):
    """The twelve integer targets, authors' protocol, M = 50."""
    groups = collections.defaultdict(dict)
    records = read_jsonl(RESULTS / "presets" / "integer_targets.jsonl")
    records += read_jsonl(RESULTS / "laf-initialization" / "exact_forms.jsonl")
    for record in records:
        name = CANDIDATE_NAMES.get(record["initialization"])
        if (
            name is None
            or record.get("test_protocol") != "authors"
            or record.get("pipeline", "arrays") != pipeline
            or (record["train_size"], record["epochs"]) != (20_000, 15)
        ):
            continue
        groups[(record["target"], name)][record["seed"]] = record
    columns = ["pooling", "closed_forms", NO_COUNT_ANCHOR, "DeepSets"]
    rows, data = [], []
    for target in PAPER_FIG_D1:
        cells, found = [], False
        for column in columns:
            seeds = groups.get((target, column), {})
            maes = [seeds[seed]["test_mae"] for seed in sorted(seeds)][:3]
            found |= bool(maes)
            cells.append(mean_std(maes) if maes else "–")
            if maes:
                data.append({"target": target, "method": column, "mae": maes})
        if found:
            paper = PAPER_FIG_D1[target]
            rows.append([target, *cells, "–" if paper is None else f"{paper}"])
    return markdown_table(
        ["target", *columns, "LAF, paper (Fig. D.1)"], rows
    ), data


def point_clouds():
    """Test accuracy of each pooling of `point_cloud_classifier`."""
    groups = collections.defaultdict(dict)
    path = RESULTS / "presets" / "point_cloud_pooling.jsonl"
    for record in read_jsonl(path):
        groups[record["pooling"]][record["seed"]] = record["test_accuracy"]
    rows, data = [], []
    for pooling, seeds in groups.items():
        accuracies = [seeds[seed] for seed in sorted(seeds)]
        rows.append([pooling, str(len(accuracies)), mean_std(accuracies)])
        data.append({"pooling": pooling, "accuracy": accuracies})
    return markdown_table(["pooling", "seeds", "test accuracy"], rows), data


def command_summary(directory, key, value_key, select):
    """Rows of a `keras-laf` command's `summary` in `results.json` (none
    for `directory` None, a task not run)."""
    path = None if directory is None else RESULTS / directory / "results.json"
    if path is None or not path.exists():
        return {}
    found = {}
    for row in json.loads(path.read_text())["summary"]:
        if all(row.get(name) == wanted for name, wanted in select.items()):
            mean, std = row[f"{value_key}_mean"], row[f"{value_key}_std"]
            found[tuple(row[name] for name in key)] = f"{mean:.3g} ± {std:.2g}"
    return found


def sets_of_digits():
    """MNIST targets and the Set Transformer's unique sum at M = 50."""
    rows = []
    sources = {
        "LAF pooling": ("presets/mnist-pooling", "laf"),
        "LAF closed_forms": ("presets/mnist-closed_forms", "laf"),
        f"LAF {NO_COUNT_ANCHOR}": (
            "presets/mnist-closed_forms_no_count_anchor",
            "laf",
        ),
        "DeepSets": ("mnist-3-seeds", "deepsets"),
        "PNA": ("mnist-3-seeds", "pna"),
        "LSTM": ("mnist-3-seeds", "lstm"),
    }
    for target in ("count", "sum", "max", "mean"):
        cells = []
        for directory, method in sources.values():
            summary = command_summary(
                directory,
                ("target",),
                "mae",
                {"method": method, "max_size": 50, "target": target},
            )
            cells.append(summary.get((target,), "–"))
        rows.append([f"MNIST {target}", *cells])
    mnist = markdown_table(["task (MAE at M = 50)", *sources], rows)
    rows = []
    heads = {
        "ST-LAF pooling": "st-laf",
        "ST-LAF closed_forms": "st-laf",
        f"ST-LAF {NO_COUNT_ANCHOR}": "st-laf",
        "ST-PMA": "st-pma",
    }
    budgets = {
        "2,000 sets × 5 epochs": (
            "presets/unique-sum-pooling",
            "presets/unique-sum-closed_forms",
            "presets/unique-sum-closed_forms_no_count_anchor",
            "unique-sum-3-seeds",
        ),
        "10,000 sets × 20 epochs": (
            "presets/unique-sum-larger-pooling",
            None,
            "unique-mean-larger-3-seeds",
            "unique-sum-larger-3-seeds",
        ),
    }
    for budget, directories in budgets.items():
        cells = []
        for directory, method in zip(directories, heads.values()):
            summary = command_summary(
                directory,
                ("target",),
                "mae",
                {"method": method, "max_size": 50, "target": "unique_sum"},
            )
            cells.append(summary.get(("unique_sum",), "–"))
        rows.append([f"unique sum, {budget}", *cells])
    return mnist, markdown_table(["task (MAE at M = 50)", *heads], rows)


def graphs_and_expansion():
    """Graph properties (mean log10 MSE over the six tasks, one seed) and
    set expansion (recall@10 and median rank) of each method."""
    rows = []
    graph_sources = {
        "LAF pooling": ("presets/graphs-pooling-method-readout", "laf"),
        f"LAF {NO_COUNT_ANCHOR}": ("graphs-exact-forms", "laf"),
        "PNA": ("graphs-laf-readout", "pna"),
        "MPNN (sum)": ("graphs-laf-readout", "sum"),
        "MPNN (max)": ("graphs-laf-readout", "max"),
    }
    for split, label in (("15-24", "15-24 nodes"), ("95-99", "95-99 nodes")):
        cells = []
        for directory, method in graph_sources.values():
            path = RESULTS / directory / "results.json"
            if not path.exists():
                cells.append("–")
                continue
            values = [
                row["log10_mse_mean"]
                for row in json.loads(path.read_text())["summary"]
                if row["method"] == method and row["split"] == split
            ]
            cells.append(f"{np.mean(values):.3g}" if values else "–")
        rows.append([f"graphs, mean log10 MSE, {label}", *cells])
    graphs = markdown_table(["task", *graph_sources], rows)
    rows = []
    expansion_sources = {
        "LAF pooling": ("presets/expansion-pooling", "laf"),
        f"LAF {NO_COUNT_ANCHOR}": ("expansion-exact-forms", "laf"),
        "DeepSets (sum)": ("expansion-default", "deepsets"),
        "PNA": ("expansion-default", "pna"),
    }
    for metric in ("recall@10", "recall@100", "median_rank"):
        cells = []
        for directory, method in expansion_sources.values():
            summary = command_summary(
                directory, ("metric",), "value", {"method": method}
            )
            cells.append(summary.get((metric,), "–"))
        rows.append([f"set expansion, {metric}", *cells])
    return graphs, markdown_table(["task", *expansion_sources], rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--pipeline",
        default="arrays",
        choices=("arrays", "ragged", "padded"),
        help="the integer targets' input pipeline (default: arrays)",
    )
    parser.add_argument(
        "--output", type=pathlib.Path, help="write the rows as JSON here"
    )
    args = parser.parse_args(argv)
    integer_table, integer_data = integer_targets(args.pipeline)
    cloud_table, cloud_data = point_clouds()
    mnist_table, unique_sum_table = sets_of_digits()
    graphs_table, expansion_table = graphs_and_expansion()
    for title, table in (
        (
            "Integer targets, authors' protocol, MAE at M = 50 "
            f"({args.pipeline})",
            integer_table,
        ),
        ("Point clouds, test accuracy", cloud_table),
        ("Sets of digit images", mnist_table),
        ("Set Transformer, unique sum", unique_sum_table),
        ("Graph properties, one seed", graphs_table),
        ("Set expansion", expansion_table),
    ):
        print(f"### {title}\n\n{table}\n")
    write_record(
        args.output, {"integer": integer_data, "point_clouds": cloud_data}
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

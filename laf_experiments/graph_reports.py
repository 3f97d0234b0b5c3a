"""The records, the table and the figure of the graph-properties
benchmark (`keras-laf graphs`), ours beside the LAF paper's."""

import numpy as np

from laf_experiments import plots
from laf_experiments.data.constants import TRAIN_SIZES
from laf_experiments.graph_networks import AVERAGE
from laf_experiments.graph_networks import BASELINE
from laf_experiments.graph_networks import TASKS
from laf_experiments.graph_networks import split_name
from laf_experiments.methods import METHODS
from laf_experiments.reports import counted
from laf_experiments.reports import markdown_table
from laf_experiments.reports import mean_std

TASK_LABELS = dict(zip(TASKS, ("N1", "N2", "N3", "G1", "G2", "G3")))
# log10 MSE of the LAF paper's graph-properties table (test graphs of the
# training sizes), tasks in `TASKS` order.
PAPER = {
    "pna": (-2.89, -2.89, -3.77, -2.61, -3.04, -3.57),
    "laf": (-2.13, -2.20, -1.67, -2.35, -2.77, -3.63),
}
TITLE = "Graph-properties benchmark: log10 MSE (lower is better)"


def graph_records(runs):
    """One record per run, test split and task (and the average)."""
    return [
        {
            "method": run["method"],
            "split": item["split"],
            "task": task,
            "seed": run["seed"],
            "log10_mse": value,
        }
        for run in runs
        for item in run["test"]
        for task, value in item["log10_mse"].items()
    ]


def _by_key(summary):
    # The summary's records by (method, split, task); its methods in their
    # order and its splits by node count.
    found = {(r["method"], r["split"], r["task"]): r for r in summary}
    methods = list(dict.fromkeys(record["method"] for record in summary))
    splits = sorted(
        {record["split"] for record in summary},
        key=lambda name: tuple(int(part) for part in name.split("-")),
    )
    return found, methods, splits


def _cell(record):
    return "" if record is None else mean_std(record, "log10_mse")


def _training_lines(runs, settings):
    # Epochs trained and best epoch of every seed of each method: whether
    # early stopping ended a run before the epoch cap.
    trained = [run for run in runs if run["method"] != BASELINE]
    if not trained or settings.get("patience") is None:
        return []

    def seeds_text(values):
        return ", ".join(str(value) for value in values)

    rows = []
    for method in dict.fromkeys(run["method"] for run in trained):
        own = sorted(
            (run for run in trained if run["method"] == method),
            key=lambda run: run["seed"],
        )
        rows.append(
            [
                METHODS[method].label,
                seeds_text(run["epochs"] for run in own),
                seeds_text(run.get("best_epoch", "") for run in own),
                f"{np.mean([run['train_seconds'] for run in own]):.0f}",
            ]
        )
    return [
        "",
        "## Training: epochs per seed",
        "",
        f"At most {counted([settings['epochs']], 'epoch')}; a run stops "
        f"after {counted([settings['patience']], 'epoch')} without a lower "
        "validation loss and keeps its best epoch's weights (fewer epochs "
        "than the cap: stopped on a plateau).",
        "",
        markdown_table(
            ["Method", "Epochs trained", "Best epoch", "Seconds per seed"],
            rows,
        ),
    ]


def results_table(summary, settings, runs=()):
    """The Markdown tables of `table.md`: ours beside the paper's.

    Args:
        summary: the records of `summary.csv` (`method`, `split`, `task`,
            `log10_mse_mean`, `log10_mse_std`, `num_seeds`).
        settings: the run's settings.
        runs: the recorded runs (`ResultStore.runs`). With early stopping
            (`settings["patience"]`), a last table gives each method's
            epochs trained and best epoch per seed. Defaults to none.

    Returns:
        The Markdown text: log10 MSE per task on the test graphs of the
        training sizes, the paper's rows first, then the average log10
        MSE of every test split.
    """
    found, methods, splits = _by_key(summary)
    test_split = split_name(*TRAIN_SIZES)
    header = ["Method", *(TASK_LABELS[task] for task in TASKS), "Average"]
    rows = [
        [
            f"{METHODS[method].label} (paper)",
            *(f"{score:.2f}" for score in scores),
            f"{np.mean(scores):.2f}",
        ]
        for method, scores in PAPER.items()
    ]
    rows += [
        [f"{METHODS[method].label} (ours)"]
        + [
            _cell(found.get((method, test_split, task)))
            for task in (*TASKS, AVERAGE)
        ]
        for method in methods
    ]
    epochs = counted([settings["epochs"]], "epoch")
    if settings.get("patience") is not None:
        epochs = f"up to {epochs} (early stopping)"
    seeds = counted([record["num_seeds"] for record in summary], "seed")
    lines = [
        f"# {TITLE}",
        "",
        f"Test graphs of {test_split} nodes, the training sizes. N1 "
        "shortest path, N2 eccentricity, N3 Laplacian features, G1 "
        "connectivity, G2 diameter, G3 spectral radius; Average: the mean "
        "of the six (the paper's rows: the mean of its six numbers).",
        "",
        "Paper: Pellegrini et al., 'Learning Aggregation Functions', IJCAI "
        "2021, trained on PNA's full splits. Ours: "
        f"{settings['train_size']} training graphs, {epochs}, "
        f"{settings['laf_units']} LAF units, "
        f"{settings['hidden_units']} hidden units, "
        f"{counted([settings['num_layers']], 'layer')}, a "
        f"{settings['readout']} readout; mean (± std) over {seeds}.",
        "",
        markdown_table(header, rows),
        "",
        "## Average log10 MSE by test-graph size (nodes)",
        "",
        markdown_table(
            ["Method", *splits],
            [
                [METHODS[method].label]
                + [
                    _cell(found.get((method, split, AVERAGE)))
                    for split in splits
                ]
                for method in methods
            ],
        ),
        *_training_lines(runs, settings),
    ]
    return "\n".join(lines) + "\n"


def results_figure(summary):
    """The figure of `log10_mse.png` (`plots.graph_scores_figure`): the
    log10 MSE of every task on the test graphs of the training sizes, and
    the average against the nodes of the test graphs."""
    found, methods, splits = _by_key(summary)
    test_split = split_name(*TRAIN_SIZES)
    scores, sizes = {}, {}
    for method in methods:
        records = [
            found.get((method, test_split, task)) for task in (*TASKS, AVERAGE)
        ]
        scores[method] = (
            [r["log10_mse_mean"] if r else np.nan for r in records],
            [r["log10_mse_std"] if r else 0.0 for r in records],
        )
        points = [
            (np.mean([int(part) for part in split.split("-")]), record)
            for split in splits
            if (record := found.get((method, split, AVERAGE)))
        ]
        several = any(record["num_seeds"] > 1 for _, record in points)
        sizes[method] = (
            [x for x, _ in points],
            [record["log10_mse_mean"] for _, record in points],
            [record["log10_mse_std"] for _, record in points]
            if several
            else None,
        )
    low, high = TRAIN_SIZES
    return plots.graph_scores_figure(
        [*(TASK_LABELS[task] for task in TASKS), "Average"],
        scores,
        {
            method: [*values, float(np.mean(values))]
            for method, values in PAPER.items()
            if method in scores
        },
        sizes,
        (low, high - 1),
        (TITLE, f"Test graphs of {test_split} nodes"),
    )

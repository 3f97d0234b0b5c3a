"""The tables and figures of `keras-laf molecules`.

The comparison of LAF with the best fixed aggregation at
the claim split, `table.md` (MAE per target, method and size),
`mae_by_size.png` and `validation_by_epoch.png`, all from the records of
the command's runs. The targets and test splits are those the records
hold, in their order; a target's label, where given, names its section.
"""

import csv
import math

import numpy as np

from laf_experiments import plots
from laf_experiments.errors import ExperimentError
from laf_experiments.methods import METHODS as METHODS_TABLE
from laf_experiments.molecule_methods import FIXED_METHODS
from laf_experiments.molecule_methods import LAF_METHODS
from laf_experiments.molecule_methods import METHODS
from laf_experiments.reports import counted
from laf_experiments.reports import markdown_table

# How close to the best counts as close.
CLOSE_RATIO = 1.5
# Seeds 0-4 and 5-9: two disjoint sets of five.
SEED_SET_SIZE = 5
# The fields of a record that `summary.csv` averages the seeds within.
SUMMARY_GROUPS = ("method", "target", "split")


def _ordered(records, field):
    # The values of a field, in the order the records first hold them.
    return list(dict.fromkeys(record[field] for record in records))


def molecule_records(runs):
    """One record per run and test split: the MAE and MAE / label std."""
    return [
        {
            "target": run["target"],
            "method": run["method"],
            "split": item["split"],
            "seed": run["seed"],
            "mae": item["mae"],
            "mae_over_std": item["mae_over_std"],
        }
        for run in runs
        for item in run["test"]
    ]


def test_record(name, low, high, predicted, truth):
    """The record of one test split of a run: its sizes, its number of
    molecules, the MAE of `predicted` against `truth`, the spread of the
    truth and the MAE over that spread."""
    mae = float(np.mean(np.abs(predicted - truth)))
    spread = float(np.std(truth))
    return {
        "split": name,
        "min_atoms": low,
        "max_atoms": None if math.isinf(high) else high,
        "num_molecules": len(truth),
        "mae": mae,
        "label_std": spread,
        "mae_over_std": mae / spread if spread > 0 else math.nan,
    }


def _statistics(records):
    # {(target, method, split): (mean, std, seeds)} of the MAE.
    groups = {}
    for record in records:
        key = (record["target"], record["method"], record["split"])
        groups.setdefault(key, []).append(record["mae"])
    return {
        key: (float(np.mean(v)), float(np.std(v)), len(v))
        for key, v in groups.items()
    }


def _seed_set(seed):
    # Seeds 0-4 are the first set of five, 5-9 the second, ...
    return seed // SEED_SET_SIZE


def comparisons(records, split):
    """Per target, the best fixed aggregation and each method against it.

    Args:
        records: the records of `keras-laf molecules`' runs, one per run
            and test split (`target`, `method`, `split`, `seed`, `mae`,
            `mae_over_std`).
        split: the name of the test split compared, e.g. `"26-40"`.

    Returns:
        A dict from target to a dict: `"best"` (the method of lowest mean
        MAE), `"best_fixed"` (the same among `FIXED_METHODS`),
        `"to_best"` (each method's mean MAE over the best's),
        `"to_best_fixed"` (over the best fixed one's) and
        `"to_best_fixed_by_set"` (the same on each set of
        `SEED_SET_SIZE` seeds that both methods ran: a list of `(first
        seed, ratio)`). Targets without a fixed method are left out.
    """
    maes = {}
    for record in records:
        if record["split"] == split:
            key = (record["target"], record["method"])
            maes.setdefault(key, {})[record["seed"]] = record["mae"]
    found = {}
    for target in _ordered(records, "target"):
        means = {
            method: float(np.mean(list(maes[(target, method)].values())))
            for method in METHODS
            if (target, method) in maes
        }
        fixed = {m: v for m, v in means.items() if m in FIXED_METHODS}
        if not fixed:
            continue
        best = min(means, key=means.get)
        best_fixed = min(fixed, key=fixed.get)
        by_set = {}
        for method in means:
            ratios = []
            for index in sorted(
                {_seed_set(seed) for seed in maes[(target, method)]}
            ):
                own, other = (
                    [
                        value
                        for seed, value in maes[(target, m)].items()
                        if _seed_set(seed) == index
                    ]
                    for m in (method, best_fixed)
                )
                if own and other:
                    ratios.append(
                        (
                            index * SEED_SET_SIZE,
                            float(np.mean(own) / np.mean(other)),
                        )
                    )
            by_set[method] = ratios
        found[target] = {
            "best": best,
            "best_fixed": best_fixed,
            "to_best": {m: v / means[best] for m, v in means.items()},
            "to_best_fixed": {
                m: v / means[best_fixed] for m, v in means.items()
            },
            "to_best_fixed_by_set": by_set,
        }
    return found


def _ratio_cell(item, method):
    if method not in item["to_best_fixed"]:
        return ""
    text = f"{item['to_best_fixed'][method]:.2f}"
    by_set = item["to_best_fixed_by_set"][method]
    if len(by_set) > 1:
        text += " (" + ", ".join(f"{ratio:.2f}" for _, ratio in by_set) + ")"
    return text


def _label(method):
    return METHODS_TABLE[method].label


def _comparison_lines(records, split):
    found = comparisons(records, split)
    if not found:
        return []
    statistics = _statistics(records)
    rows = []
    for target, item in found.items():
        fixed = item["best_fixed"]
        mae = statistics[(target, fixed, split)][0]
        rows.append(
            [
                target,
                f"{_label(fixed)} ({mae:.3g})",
                *(_ratio_cell(item, m) for m in LAF_METHODS),
                _label(item["best"]),
            ]
        )
    targets = list(found)
    ratio_rows = []
    for method in METHODS:
        ratios = [found[t]["to_best"].get(method) for t in targets]
        if any(ratio is not None for ratio in ratios):
            largest = max(r for r in ratios if r is not None)
            cells = ["" if r is None else f"{r:.2f}" for r in ratios]
            ratio_rows.append([_label(method), *cells, f"{largest:.2f}"])
    fixed_labels = ", ".join(_label(m) for m in FIXED_METHODS)
    bracketed = any(
        len(by_set) > 1
        for item in found.values()
        for by_set in item["to_best_fixed_by_set"].values()
    )
    by_sets = (
        f"; in brackets, on each set of {SEED_SET_SIZE} seeds (0-4, 5-9, "
        "...) that both ran"
        if bracketed
        else ""
    )
    return [
        "",
        f"## LAF against the best fixed aggregation at {split} atoms",
        "",
        f"Mean MAE over the best fixed aggregation's (of {fixed_labels})"
        f"{by_sets}. Within {CLOSE_RATIO}x counts as close.",
        "",
        markdown_table(
            [
                "target",
                "best fixed (MAE)",
                *(f"{_label(m)} / best fixed" for m in LAF_METHODS),
                "best of all",
            ],
            rows,
        ),
        "",
        f"## Each aggregation against the best at {split} atoms",
        "",
        "Mean MAE over the best method's of each target; the last column, "
        "the largest.",
        "",
        markdown_table(["method", *targets, "largest"], ratio_rows),
    ]


def _cell(statistics, key, best):
    # The mean (± std) of `key`, in bold where its method is `best`.
    if key not in statistics:
        return ""
    mean, std, seeds = statistics[key]
    text = f"{mean:.3g} ± {std:.2g}" if seeds > 1 else f"{mean:.3g}"
    return f"**{text}**" if key[1] == best else text


def results_table(records, settings, target_labels=None):
    """The Markdown of `table.md`: MAE per target, method and test size,
    then the best fixed aggregation against LAF at the claim split.

    Args:
        records: the records of the runs (see `comparisons`).
        settings: the command's settings: `source`, `train_sizes`,
            `claim_split`, `epochs`, `hidden_units`, `laf_units`.
        target_labels: optional dict from target to its section's title.
            Defaults to `None`: the target's name.
    """
    target_labels = target_labels or {}
    statistics = _statistics(records)
    targets = _ordered(records, "target")
    splits = _ordered(records, "split")
    methods = [m for m in METHODS if any(k[1] == m for k in statistics)]
    seeds = counted([k[2] for k in statistics.values()], "seed")
    epochs = counted([settings["epochs"]], "epoch")
    lines = [
        f"# Molecules: trained on small, tested on large "
        f"({settings['source']})",
        "",
        f"MAE (mean ± std over {seeds}) by heavy atoms of the test "
        f"molecules; trained on {settings['train_sizes']} atoms, {epochs}, "
        f"{settings['hidden_units']} hidden units, "
        f"{settings['laf_units']} LAF units. Bold: the best of a column.",
    ]
    for target in targets:
        best = {}
        for split in splits:
            means = {
                m: statistics[(target, m, split)][0]
                for m in methods
                if (target, m, split) in statistics
            }
            best[split] = min(means, key=means.get) if means else None
        rows = [
            [
                _label(method),
                *(
                    _cell(statistics, (target, method, split), best[split])
                    for split in splits
                ),
            ]
            for method in methods
        ]
        header = ["method", *(f"{split} atoms" for split in splits)]
        lines += [
            "",
            f"## {target_labels.get(target, target)}",
            "",
            markdown_table(header, rows),
        ]
    lines += _comparison_lines(records, settings["claim_split"])
    return "\n".join(lines) + "\n"


def plot_results(records, settings, target_labels=None):
    """The figure of `mae_by_size.png`: per target, the MAE / label std
    against the heavy atoms of the test molecules, a line per method (a
    colour and a marker each); `settings` and `target_labels` as
    `results_table`."""
    if not records:
        raise ExperimentError("no records to plot")
    groups = {}
    for record in records:
        key = (record["target"], record["method"], record["split"])
        groups.setdefault(key, []).append(record["mae_over_std"])
    target_labels = target_labels or {}
    targets = _ordered(records, "target")
    splits = _ordered(records, "split")
    methods = [m for m in METHODS if any(k[1] == m for k in groups)]
    figure, axes = plots.panel_figure(len(targets), 3, (4.2, 3.3))
    positions = {name: index for index, name in enumerate(splits)}
    for axis, target in zip(axes, targets):
        for method in methods:
            points = [
                (positions[s], np.mean(groups[k]), np.std(groups[k]))
                for s in splits
                if (k := (target, method, s)) in groups
            ]
            if not points:
                continue
            x, mean, std = (np.array(v) for v in zip(*points))
            style = METHODS_TABLE[method]
            axis.errorbar(
                x,
                mean,
                yerr=std,
                color=style.color,
                marker=style.marker,
                markersize=5,
                capsize=2,
                label=_label(method),
            )
        axis.set_xticks(range(len(splits)), splits)
        axis.set_yscale("log")
        axis.set_title(target_labels.get(target, target), fontsize="medium")
        axis.set_xlabel("heavy atoms of the test molecules")
        axis.set_ylabel("MAE / std of the labels")
        axis.grid(alpha=0.3)
    plots.figure_legend(figure, axes)
    title = (
        f"Trained on molecules of {settings['train_sizes']} heavy atoms "
        f"({settings['source']}), tested on larger ones"
    )
    figure.suptitle(title, fontsize="medium")
    return figure


def validation_curves(store):
    """The validation loss of every epoch of the recorded runs.

    Args:
        store: the command's `ResultStore`; each run's `history.csv`.

    Returns:
        A dict from `(target, method)` to a float array `(seeds, epochs)`
        of the validation MAE of the standardised labels; runs without a
        whole history are left out.
    """
    curves = {}
    for item in store.runs:
        key = {field: item[field] for field in store.key_fields}
        path = store.history_path(**key)
        if not path.exists():
            continue
        with open(path, newline="") as file:
            losses = [float(row["val_loss"]) for row in csv.DictReader(file)]
        if len(losses) == store.settings["epochs"]:
            curves.setdefault((item["target"], item["method"]), []).append(
                losses
            )
    return {key: np.array(value) for key, value in curves.items()}


def plot_validation_curves(curves, target_labels=None):
    """The figure of `validation_by_epoch.png`, or None without curves: per
    target, the mean over seeds of the validation MAE (standardised
    labels) at every epoch, a line per method, to show where training
    levels off."""
    target_labels = target_labels or {}
    targets = list(dict.fromkeys(target for target, _ in curves))
    if not targets:
        return None
    figure, axes = plots.panel_figure(len(targets), 3, (4.2, 3.3))
    for axis, target in zip(axes, targets):
        for method in METHODS:
            if (target, method) not in curves:
                continue
            losses = curves[(target, method)].mean(axis=0)
            style = METHODS_TABLE[method]
            axis.plot(
                np.arange(1, len(losses) + 1),
                losses,
                color=style.color,
                marker=style.marker,
                markersize=3,
                markevery=max(1, len(losses) // 5),
                label=_label(method),
            )
        axis.set_yscale("log")
        axis.set_title(target_labels.get(target, target), fontsize="medium")
        axis.set_xlabel("epoch")
        axis.set_ylabel("validation MAE / std")
        axis.grid(alpha=0.3)
    plots.figure_legend(figure, axes)
    title = "Validation loss by epoch, mean over seeds"
    figure.suptitle(title, fontsize="medium")
    return figure

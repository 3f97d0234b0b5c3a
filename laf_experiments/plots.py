"""The figures of the experiments, in the style of the LAF paper.

Drawn with matplotlib's object interface (`matplotlib.figure.Figure`,
rendered by the Agg backend when saved as PNG), so no display is needed and
the global state of `pyplot` is left alone. Every method is drawn in its
colour and marker of `laf_experiments.methods`. The `plot_*` functions
write a PNG file; the `*_figure` functions return the figure, which
`reports.write_results` saves.
"""

import importlib.util
import io
import math

import numpy as np

from laf_experiments.methods import METHODS
from laf_experiments.settings import QUICK_MARK

_DPI = 100
_PALETTE_COLOURS = 256
# The narrowest figure, in inches, that holds a title of about 60
# characters and a legend of two long method names on one row.
_MIN_FIGURE_WIDTH = 6.4
# Inches of figure width per legend entry on one row.
_LEGEND_ENTRY_WIDTH = 2.4


def available():
    """Whether matplotlib, which draws the figures, is installed."""
    return importlib.util.find_spec("matplotlib") is not None


MISSING = (
    "matplotlib is not installed, so no figures were drawn. Install it "
    "with: pip install 'keras-laf[experiments]' (or pip install "
    "matplotlib), then run the command again to draw them."
)


def panel_figure(num_panels, max_columns, panel_size):
    """A figure of `num_panels` panels in rows of at most `max_columns`,
    each `panel_size` (width, height) inches, with room below for a
    legend; returns the figure and its visible axes, one per panel."""
    from matplotlib.figure import Figure

    columns = min(max_columns, num_panels)
    rows = math.ceil(num_panels / columns)
    width, height = panel_size
    figure = Figure(
        figsize=(max(width * columns, _MIN_FIGURE_WIDTH), height * rows + 0.8),
        layout="constrained",
    )
    axes = figure.subplots(rows, columns, squeeze=False)
    for unused in axes.flat[num_panels:]:
        unused.set_visible(False)
    return figure, list(axes.flat)


def save_figure(figure, path, quick=False):
    """Writes `figure` to the PNG file `path`. The figure of a `--quick`
    run says in its title that it is not a result (`QUICK_MARK`).

    The file holds a palette of at most `_PALETTE_COLOURS` colours, which
    keeps lines, markers and text as drawn (a figure uses a few dozen
    colours plus their anti-aliased blends) at about a third of a
    full-colour PNG's size, so the recorded figures stay small."""
    from PIL import Image

    if quick:
        title = f"{figure.get_suptitle()} ({QUICK_MARK})".strip()
        figure.suptitle(title, fontsize="medium")
    rendered = io.BytesIO()
    figure.savefig(rendered, format="png", dpi=_DPI)
    rendered.seek(0)
    with Image.open(rendered) as image:
        palette = image.convert("RGB").quantize(_PALETTE_COLOURS)
        palette.save(path, format="PNG", optimize=True)


def _legend_columns(figure, num_entries):
    # As many entries on a row as the figure's width holds.
    fitting = int(figure.get_figwidth() // _LEGEND_ENTRY_WIDTH)
    return max(1, min(num_entries, fitting))


def _label(method, method_labels=None):
    return (method_labels or {}).get(method, METHODS[method].label)


def _style(method):
    return METHODS[method].color, METHODS[method].marker


def _ordered(values):
    return list(dict.fromkeys(values))


def _line(axis, method, x, means, stds, label):
    # The method's line, and a band of one standard deviation unless
    # `stds` is None (one seed).
    color, marker = _style(method)
    axis.plot(x, means, color=color, marker=marker, markersize=4, label=label)
    if stds is not None:
        means, stds = np.asarray(means), np.asarray(stds)
        axis.fill_between(
            x, means - stds, means + stds, color=color, alpha=0.15
        )


def plot_error_by_size(
    summary,
    path,
    value_field="mae",
    ylabel="MAE",
    title=None,
    method_labels=None,
    paper_points=None,
    quick=False,
    paper_label="paper",
    log_scale=False,
):
    """Plots an error against the maximum test-set size, as in the paper.

    One panel per target, one line per method: the mean over seeds, with
    a band of one standard deviation when there are several seeds; the
    paper's values, where given, as hollow stars in the method's colour.

    Args:
        summary: records with `method`, `target`, `max_size`,
            `<value_field>_mean`, `<value_field>_std` and `num_seeds`.
        path: the PNG file to write.
        value_field: the plotted measure.
        ylabel: the label of the vertical axes.
        title: optional title of the figure.
        method_labels: optional dict of display names of methods.
        paper_points: optional `(size, {target: {method: value}})`, the
            paper's values at one test size (`laf_experiments.paper`).
        quick: whether the records come from a `--quick` run, which the
            title then says is not a result.
        paper_label: whose values `paper_points` are, in the legend.
        log_scale: whether the vertical axes are logarithmic, for errors
            that grow by orders of magnitude with the set.
    """
    targets = _ordered(record["target"] for record in summary)
    methods = _ordered(record["method"] for record in summary)
    figure, axes = panel_figure(len(targets), 4, (3.6, 2.8))
    paper_size, paper_values = paper_points or (None, {})
    for axis, target in zip(axes, targets, strict=False):
        for method in methods:
            points = sorted(
                (
                    record["max_size"],
                    record[f"{value_field}_mean"],
                    record[f"{value_field}_std"],
                    record["num_seeds"],
                )
                for record in summary
                if record["target"] == target and record["method"] == method
            )
            if not points:
                continue
            sizes, means, stds, seeds = (np.array(x) for x in zip(*points))
            _line(
                axis,
                method,
                sizes,
                means,
                stds if seeds.max() > 1 else None,
                _label(method, method_labels),
            )
            color, _ = _style(method)
            paper_value = paper_values.get(target, {}).get(method)
            if paper_value is not None and paper_size <= sizes.max():
                axis.plot(
                    paper_size,
                    paper_value,
                    linestyle="none",
                    marker="*",
                    markersize=11,
                    markerfacecolor="none",
                    color=color,
                    label=f"{_label(method, method_labels)}, {paper_label}",
                )
        axis.set_title(target)
        if log_scale:
            axis.set_yscale("log")
        axis.set_xlabel("maximum test-set size")
        axis.set_ylabel(ylabel)
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    if title:
        figure.suptitle(title, fontsize="medium")
    save_figure(figure, path, quick)


def plot_budget_curve(
    table,
    path,
    bounds=None,
    title=None,
    references=None,
    reference_label=None,
    measure="mae",
    bound_label="bound",
):
    """Plots the test error at the largest test size against the budget.

    One panel per target (or per `panel` of the records, e.g. a target at
    a test size), one line per method (the mean over its seeds), the
    budget as training sets x epochs on a log axis ticked at each budget,
    each panel's bound, where given, as a dashed line, and a reference,
    where given, as a dotted one.

    Args:
        table: records with `method`, `target`, `train_size`, `epochs`,
            `<measure>_mean` and optionally `panel`.
        path: the PNG file to write.
        bounds: optional dict of panel to the error a run must reach.
        title: optional title of the figure.
        references: optional dict of panel to a reference error, e.g. what
            the data allow.
        reference_label: the legend's name of the references.
        measure: `"mae"` or `"mse"`, the error of the records.
        bound_label: the legend's name of the bounds.
    """
    from matplotlib.ticker import NullLocator

    def panel_of(record):
        return record.get("panel", record["target"])

    panels = _ordered(panel_of(record) for record in table)
    methods = _ordered(record["method"] for record in table)
    ladder = sorted({(r["train_size"], r["epochs"]) for r in table})
    figure, axes = panel_figure(len(panels), 4, (3.6, 2.8))
    for axis, panel in zip(axes, panels, strict=False):
        for method in methods:
            points = sorted(
                (
                    record["train_size"] * record["epochs"],
                    record[f"{measure}_mean"],
                )
                for record in table
                if panel_of(record) == panel and record["method"] == method
            )
            if not points:
                continue
            budgets, errors = zip(*points, strict=True)
            _line(axis, method, budgets, errors, None, _label(method))
        if bounds and panel in bounds:
            axis.axhline(
                bounds[panel],
                color="black",
                linestyle="--",
                linewidth=0.8,
                label=bound_label,
            )
        if references and panel in references:
            axis.axhline(
                references[panel],
                color="grey",
                linestyle=":",
                linewidth=1.2,
                label=reference_label,
            )
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xticks(
            [sets * epochs for sets, epochs in ladder],
            [f"{sets / 1000:g}k × {epochs}" for sets, epochs in ladder],
            fontsize="small",
            rotation=30,
        )
        axis.xaxis.set_minor_locator(NullLocator())
        axis.set_title(panel)
        axis.set_xlabel("training sets x epochs")
        axis.set_ylabel(f"test {measure.upper()}")
        axis.grid(alpha=0.3)
    figure_legend(figure, axes)
    if title:
        figure.suptitle(title, fontsize="medium")
    save_figure(figure, path)


def figure_legend(figure, axes):
    """One legend below every panel of `figure`: the entries of all
    `axes`, each once."""
    entries = {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    figure.legend(
        list(entries.values()),
        list(entries),
        loc="outside lower center",
        ncol=_legend_columns(figure, len(entries)),
        frameon=False,
    )


def plot_scatter(panels, path, title=None, method_labels=None, quick=False):
    """Plots true against predicted values, one panel per target and method.

    Rows are targets and columns methods; the diagonal is the perfect
    prediction.

    Args:
        panels: list of dicts with `target`, `method`, `seed`, `max_size`,
            and the arrays `labels` and `predictions`.
        path: the PNG file to write.
        title: optional title of the figure.
        method_labels: optional dict of display names of methods.
        quick: whether the panels come from a `--quick` run
            (`save_figure`).
    """
    from matplotlib.figure import Figure

    targets = _ordered(panel["target"] for panel in panels)
    methods = _ordered(panel["method"] for panel in panels)
    figure = Figure(
        figsize=(2.8 * len(methods), 2.7 * len(targets) + 0.5),
        layout="constrained",
    )
    axes = figure.subplots(len(targets), len(methods), squeeze=False)
    for row, target in enumerate(targets):
        for column, method in enumerate(methods):
            axis = axes[row, column]
            found = [
                panel
                for panel in panels
                if panel["target"] == target and panel["method"] == method
            ]
            if not found:
                axis.set_visible(False)
                continue
            panel = found[0]
            labels = np.asarray(panel["labels"], dtype="float64")
            predictions = np.asarray(panel["predictions"], dtype="float64")
            color, _ = _style(method)
            axis.scatter(labels, predictions, s=6, alpha=0.4, color=color)
            finite = np.concatenate([labels, predictions])
            finite = finite[np.isfinite(finite)]
            if finite.size:
                low, high = finite.min(), finite.max()
                axis.plot([low, high], [low, high], color="black", lw=0.8)
            axis.set_title(
                f"{_label(method, method_labels)}: {target}\n"
                f"max size {panel['max_size']}, seed {panel['seed']}",
                fontsize="small",
            )
            axis.set_xlabel("true")
            axis.set_ylabel("predicted")
            axis.grid(alpha=0.3)
    if title:
        figure.suptitle(title, fontsize="medium")
    save_figure(figure, path, quick)


def accuracy_figure(records, title, chance=None):
    """The figure of each pooling's test accuracy and its spread over seeds.

    One panel per number of points, one column per method: each seed's
    accuracy as a marker, the mean as a bar, and one standard deviation
    as an error bar; chance, where given, as a dashed line.

    Args:
        records: runs with `method`, `num_points`, `seed` and `accuracy`.
        title: the figure's title.
        chance: optional accuracy of a uniform guess, in [0, 1].
    """
    sizes = sorted({record["num_points"] for record in records})
    methods = _ordered(record["method"] for record in records)
    width = max(1.1 * len(methods) + 1.0, 3.6)
    figure, axes = panel_figure(len(sizes), 3, (width, 3.2))
    for axis, size in zip(axes, sizes, strict=False):
        for index, method in enumerate(methods):
            accuracies = np.array(
                [
                    100 * record["accuracy"]
                    for record in records
                    if record["method"] == method
                    and record["num_points"] == size
                ]
            )
            if not accuracies.size:
                continue
            color, marker = _style(method)
            axis.bar(
                index,
                accuracies.mean(),
                width=0.6,
                color=color,
                alpha=0.35,
                yerr=accuracies.std() if accuracies.size > 1 else None,
                capsize=4,
            )
            # Each seed beside the bar's centre, spread so none hides another.
            offsets = np.linspace(-0.15, 0.15, accuracies.size)
            axis.plot(
                index + (offsets if accuracies.size > 1 else 0.0),
                accuracies,
                linestyle="none",
                marker=marker,
                color=color,
            )
        axis.set_xticks(
            range(len(methods)),
            [_label(method) for method in methods],
            rotation=30,
            ha="right",
        )
        if chance is not None:
            axis.axhline(
                100 * chance,
                color="black",
                linestyle="--",
                linewidth=0.8,
                label="chance",
            )
            axis.legend(loc="best", fontsize="small", frameon=False)
        axis.set_ylim(0, 100)
        axis.set_ylabel("test accuracy (%)")
        axis.set_title(f"{size} points", fontsize="medium")
        axis.grid(axis="y", alpha=0.3)
    figure.suptitle(title, fontsize="medium")
    return figure


def _grouped_bars(axis, groups, scores, paper=None):
    # A group of bars per entry of `groups`, a bar per method of `scores`
    # ({method: (means, stds)}, one of each per group); the values of
    # `paper` ({method: values}) as diamonds over their method's bars.
    positions = np.arange(len(groups))
    width = 0.8 / max(len(scores), 1)
    for index, (method, (means, stds)) in enumerate(scores.items()):
        color, _ = _style(method)
        offsets = positions - 0.4 + width * (index + 0.5)
        axis.bar(
            offsets,
            means,
            width,
            yerr=stds,
            color=color,
            label=_label(method),
        )
        if paper and method in paper:
            axis.scatter(
                offsets,
                paper[method],
                marker="D",
                s=28,
                color=color,
                edgecolor="black",
                zorder=3,
                label=f"{_label(method)} (paper)",
            )
    axis.set_xticks(positions, groups)
    axis.grid(axis="y", alpha=0.3)


def graph_scores_figure(tasks, scores, paper, sizes, training_sizes, title):
    """The figure of the graph-properties benchmark: scores per task, and
    against the size of the test graphs.

    The left panel shows a score of every task, one bar per method, the
    paper's values as diamonds of the method's colour; the right one the
    average score against the number of nodes of the test graphs, the
    training sizes shaded.

    Args:
        tasks: the names of the groups of bars (the tasks and the average).
        scores: `{method: (means, stds)}`, a value of each per task.
        paper: `{method: values}`, the paper's score of each task.
        sizes: `{method: (nodes, means, stds)}` of the average score, or
            `stds` None for one seed.
        training_sizes: `(low, high)`, the nodes of the training graphs.
        title: `(figure title, left panel's title)`.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 4.4), layout="constrained")
    tasks_axis, sizes_axis = figure.subplots(
        1, 2, gridspec_kw={"width_ratios": (3, 2)}
    )
    _grouped_bars(tasks_axis, tasks, scores, paper)
    tasks_axis.axhline(0, color="black", linewidth=0.8)
    tasks_axis.set_ylabel("log10 MSE")
    tasks_axis.set_title(title[1])
    for method, (nodes, means, stds) in sizes.items():
        _line(sizes_axis, method, nodes, means, stds, _label(method))
    sizes_axis.axvspan(*training_sizes, color="grey", alpha=0.15)
    sizes_axis.set_xlabel("nodes of the test graphs (training sizes shaded)")
    sizes_axis.set_ylabel("average log10 MSE")
    sizes_axis.set_title("Extrapolation to larger graphs")
    sizes_axis.grid(alpha=0.3)
    figure_legend(figure, [tasks_axis])
    figure.suptitle(title[0], fontsize="medium")
    return figure


def metrics_figure(metrics, scores, ylabel, title):
    """A figure of bars: a group per metric, a bar per method.

    Args:
        metrics: the names of the metrics.
        scores: `{method: (means, stds)}`, a value of each per metric.
        ylabel: the label of the vertical axis.
        title: the figure's title.
    """
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4.4), layout="constrained")
    axis = figure.subplots()
    _grouped_bars(axis, metrics, scores)
    axis.set_ylim(0, 1)
    axis.set_ylabel(ylabel)
    figure_legend(figure, [axis])
    figure.suptitle(title, fontsize="medium")
    return figure


def units_figure(maes, title):
    """Box plots of the test MAE of the restarts by number of LAF units.

    Args:
        maes: `{target: {units: [MAE of each restart]}}`; a panel per
            target, a box per number of units, on a logarithmic MAE axis
            (the LAF paper's Appendix B).
        title: the figure's title.
    """
    figure, axes = panel_figure(len(maes), 3, (4.2, 3.2))
    for axis, (target, by_units) in zip(axes, maes.items(), strict=False):
        units = sorted(by_units)
        axis.boxplot(
            [by_units[count] for count in units],
            tick_labels=[str(count) for count in units],
        )
        axis.set_yscale("log")
        axis.set_title(target)
        axis.set_xlabel("LAF units")
        axis.set_ylabel("test MAE")
        axis.grid(alpha=0.3, axis="y")
    figure.suptitle(title, fontsize="medium")
    return figure


def trials_figure(searches, title):
    """The validation MAE of every trial of searches against its LAF units.

    One panel per target: a point per trial (a colour per seed), a star
    on the best trial of each search, and a line through the best
    validation MAE of each number of units.

    Args:
        searches: `{target: [(seed, trials, best), ...]}`: each search's
            seed, its trials as `(units, validation MAE)` and its best
            trial's.
        title: the figure's title.
    """
    figure, axes = panel_figure(len(searches), 3, (4.5, 3.6))
    for axis, (target, runs) in zip(axes, searches.items(), strict=False):
        best_by_units = {}
        for index, (seed, trials, best) in enumerate(runs):
            color = f"C{index % 10}"
            axis.scatter(
                [units for units, _ in trials],
                [loss for _, loss in trials],
                s=18,
                alpha=0.6,
                color=color,
                label=f"trials, seed {seed}",
            )
            axis.scatter(
                *best,
                s=160,
                marker="*",
                color=color,
                edgecolor="black",
                zorder=3,
                label=f"best, seed {seed}",
            )
            for units, loss in trials:
                best_by_units[units] = min(
                    best_by_units.get(units, np.inf), loss
                )
        units = sorted(best_by_units)
        axis.plot(
            units,
            [best_by_units[count] for count in units],
            color="black",
            linewidth=0.8,
            label="best by units",
        )
        axis.set_title(f"target: {target}")
        axis.set_xlabel("LAF units")
        axis.set_ylabel("validation MAE")
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.suptitle(title, fontsize="medium")
    return figure

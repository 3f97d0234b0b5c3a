"""The runs over methods and seeds, the tables, and the files written.

What the subcommands that compare methods share on top of
`runner.run_all`: the loop over methods and seeds (`run_methods`), the
Markdown tables (`markdown_table`, `mean_std`, `counted`), and the table
and figure written after the runs (`write_results`), which a `--quick`
run's title says are not a result.
"""

from laf_experiments import plots
from laf_experiments import runner
from laf_experiments.errors import log
from laf_experiments.methods import METHODS
from laf_experiments.settings import QUICK_MARK


def run_methods(args, store, train, evaluate):
    """Runs every method of `args.methods` for every seed of `args.seeds`.

    The seeds are the outer loop, so a first seed of every method is
    recorded before the second starts.

    Args:
        args: the parsed arguments, with `experiment`, `methods` and
            `seeds`.
        store: the experiment's `ResultStore`.
        train, evaluate: as for `runner.run_all`.
    """
    runner.run_all(
        args,
        store,
        keys=[
            {"method": method, "seed": seed}
            for seed in args.seeds
            for method in args.methods
        ],
        describe=lambda key: f"{key['method']}, seed {key['seed']}",
        train=train,
        evaluate=evaluate,
    )


def markdown_table(header, rows):
    """A Markdown table of `rows` (lists of strings) under `header`.

    >>> print(markdown_table(["Method", "MAE"], [["LAF", "0.1"]]))
    | Method | MAE |
    | --- | --- |
    | LAF | 0.1 |
    """
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def counted(counts, noun):
    """`counts` and `noun`, plural unless every count is 1: one count, or
    several joined by `/` (the seeds of the methods of a table).

    >>> counted([1], "seed"), counted([3], "epoch"), counted([1, 3], "seed")
    ('1 seed', '3 epochs', '1/3 seeds')
    """
    counts = sorted(set(counts))
    plural = "" if counts == [1] else "s"
    return f"{'/'.join(map(str, counts))} {noun}{plural}"


def mean_std(record, field, digits=2, scale=1.0):
    """A summary record's `<field>_mean`, with ` ± <field>_std` where it
    has several seeds, times `scale`, with `digits` decimals.

    >>> record = {"mae_mean": 0.25, "mae_std": 0.05, "num_seeds": 2}
    >>> mean_std(record, "mae"), mean_std({**record, "num_seeds": 1}, "mae")
    ('0.25 ± 0.05', '0.25')
    """
    text = f"{scale * record[f'{field}_mean']:.{digits}f}"
    if record["num_seeds"] > 1:
        text += f" ± {scale * record[f'{field}_std']:.{digits}f}"
    return text


def accuracy_table(summary, title):
    """The Markdown table of the point-cloud experiment's test accuracy.

    Args:
        summary: records with `method`, `num_points`, `accuracy_mean`,
            `accuracy_std` and `num_seeds`.
        title: the table's title.

    Returns:
        The Markdown text: a row per method, a column per number of
        points, each cell the mean (± std) in percent.
    """
    sizes = sorted({record["num_points"] for record in summary})
    methods = list(dict.fromkeys(record["method"] for record in summary))
    found = {(r["method"], r["num_points"]): r for r in summary}
    rows = [
        [METHODS[method].label]
        + [
            mean_std(found[method, size], "accuracy", 1, 100.0)
            if (method, size) in found
            else ""
            for size in sizes
        ]
        for method in methods
    ]
    seeds = counted([record["num_seeds"] for record in summary], "seed")
    header = ["Method", *(f"{size} points" for size in sizes)]
    return (
        f"# {title}\n\nTest accuracy (%), mean ± std over {seeds}.\n\n"
        + markdown_table(header, rows)
        + "\n"
    )


def quick_marked(text):
    """`text`, a Markdown document under a `# title` line, its title
    saying that a `--quick` run is not a result (`QUICK_MARK`)."""
    title, _, rest = text.partition("\n")
    return f"{title} ({QUICK_MARK})\n{rest}"


def write_results(args, store, table=None, figure=None):
    """Writes the table and the figure of the recorded runs, then lists them.

    Nothing is written while the store records no run. Without matplotlib
    the figure is left out and the log says how to install it. The table
    and the figure of a `--quick` run say in their titles that it is not
    a result.

    Args:
        args: the parsed arguments, with `experiment` and `quick`.
        store: the experiment's `ResultStore`; the files go to its
            directory.
        table: optional `(name, text)`: the table's file name and a
            function `()` returning its Markdown text, a `# title` line
            first.
        figure: optional `(name, draw)`: the figure's file name and a
            function `()` returning the matplotlib `Figure`, which is
            saved with `plots.save_figure`.
    """
    written = []
    if store.runs:
        if table is not None:
            name, text = table
            text = text()
            (store.directory / name).write_text(
                quick_marked(text) if args.quick else text
            )
            written.append(name)
        if figure is not None:
            name, draw = figure
            if plots.available():
                plots.save_figure(draw(), store.directory / name, args.quick)
                written.append(name)
            else:
                log(args.experiment, plots.MISSING)
    runner.report_written(args, store, written)

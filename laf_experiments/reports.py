"""The runs over methods and seeds, and the files written after them.

What the subcommands that compare methods (`graphs`, `expansion`) and
those that draw one figure of their runs (`tune`, `units`) share, on top
of `runner.run_all`.
"""

from laf_experiments import plots
from laf_experiments import runner
from laf_experiments.errors import log


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
            for seed in range(args.seeds)
            for method in args.methods
        ],
        describe=lambda key: f"{key['method']}, seed {key['seed']}",
        train=train,
        evaluate=evaluate,
    )


def write_results(args, store, table=None, figure=None):
    """Writes the table and the figure of the recorded runs, then lists them.

    Nothing is written while the store records no run. Without matplotlib
    the figure is left out and the log says how to install it.

    Args:
        args: the parsed arguments, with `experiment`.
        store: the experiment's `ResultStore`; the files go to its
            directory.
        table: optional `(name, text)`: the table's file name and a
            function `()` returning its Markdown text.
        figure: optional `(name, draw)`: the figure's file name and a
            function `()` returning the matplotlib `Figure`, which is
            saved with `plots.save_figure` (a `--quick` run's says so).
    """
    written = []
    if store.runs:
        if table is not None:
            name, text = table
            (store.directory / name).write_text(text())
            written.append(name)
        if figure is not None:
            name, draw = figure
            if plots.available():
                plots.save_figure(draw(), store.directory / name, args.quick)
                written.append(name)
            else:
                log(args.experiment, plots.MISSING)
    runner.report_written(args, store, written)

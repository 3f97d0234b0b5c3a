"""Fig. 2 / Fig. D.1 and Fig. D.2 of the LAF paper from `keras-laf` runs.

Reads the `results.json` of one or more output folders of `keras-laf
scalars` or `keras-laf mnist` (runs of the same settings split over
folders, e.g. the budget study's default targets and a run of the other
eight), and writes to `--output`:

- `mae.png`: MAE against the maximum test-set size, a panel per target,
  a line per method, the paper's LAF and DeepSets values at 50 (Fig. D.1)
  as hollow stars;
- `scatter.png`: true against predicted values at the largest size for
  max, inverse count, median and kurtosis (Fig. D.2), one seed;
- `table.md`: the MAE at 50 by target and method (mean ± std over the
  seeds), the paper's values beside them, and which method is best.

    python -m benchmarks.section4_figures \\
        results/section4-budgets/scalars/20000x10 \\
        results/section4-figures/scalars-20000x10-other-targets \\
        --output results/section4-figures/scalars
"""

import argparse
import json
import pathlib

import numpy as np

from laf_experiments import methods
from laf_experiments import plots
from laf_experiments.data import TARGETS
from laf_experiments.paper import FIG_D1
from laf_experiments.paper import FIG_D1_SIZE
from laf_experiments.regression import regression_records
from laf_experiments.reports import markdown_table
from laf_experiments.store import summarize

METHODS = ("laf", "deepsets", "pna", "lstm")
SCATTER_TARGETS = ("max", "inverse_count", "median", "kurtosis")


def read_runs(folders):
    """Every recorded run of the folders, with the folder it is in, each
    method, target and seed once (from the first folder that has it); the
    settings of the first folder."""
    runs, settings = {}, None
    for folder in folders:
        recorded = json.loads((folder / "results.json").read_text())
        settings = settings or recorded["settings"]
        for run in recorded["runs"]:
            key = (run["method"], run["target"], run["seed"])
            runs.setdefault(key, {**run, "folder": folder})
    return list(runs.values()), settings


def ordered(summary):
    order = {name: index for index, name in enumerate(TARGETS)}
    methods = {name: index for index, name in enumerate(METHODS)}
    return sorted(
        summary,
        key=lambda row: (
            order.get(row["target"], len(order)),
            methods.get(row["method"], len(methods)),
            row["max_size"],
        ),
    )


def table(summary):
    """The Markdown table of the MAE at 50 beside the paper's."""
    at_50 = {
        (row["target"], row["method"]): row
        for row in summary
        if row["max_size"] == FIG_D1_SIZE
    }
    targets = [t for t in TARGETS if any(k[0] == t for k in at_50)]
    header = [
        "target",
        *(methods.METHODS[m].label for m in METHODS),
        "LAF, paper",
        "DeepSets, paper",
    ]
    rows = []
    for target in targets:
        cells = {
            method: at_50[target, method]
            for method in METHODS
            if (target, method) in at_50
        }
        best = min(cells, key=lambda method: cells[method]["mae_mean"])
        row = [target.replace("_", " ")]
        for method in METHODS:
            if method not in cells:
                row.append("–")
                continue
            cell = cells[method]
            text = (
                f"{cell['mae_mean']:.3g} ± {cell['mae_std']:.2g}"
                f" ({cell['num_seeds']})"
            )
            row.append(f"**{text}**" if method == best else text)
        paper = FIG_D1.get(target, {})
        row += [f"{paper[m]:g}" if m in paper else "–" for m in METHODS[:2]]
        rows.append(row)
    return markdown_table(header, rows) + "\n"


def scatter_panels(runs):
    panels = []
    for target in SCATTER_TARGETS:
        for method in METHODS:
            chosen = sorted(
                (
                    run
                    for run in runs
                    if run["target"] == target and run["method"] == method
                ),
                key=lambda run: run["seed"],
            )
            if not chosen:
                continue
            run = chosen[0]
            name = f"{method}-{target}-seed{run['seed']}.npz"
            path = run["folder"] / "predictions" / name
            if not path.exists():
                continue
            with np.load(path) as saved:
                largest = saved["max_sizes"] == saved["max_sizes"].max()
                panels.append(
                    {
                        "target": target,
                        "method": method,
                        "seed": run["seed"],
                        "max_size": int(saved["max_sizes"].max()),
                        "labels": saved["labels"][largest],
                        "predictions": saved["predictions"][largest],
                    }
                )
    return panels


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=pathlib.Path)
    parser.add_argument("--output", type=pathlib.Path, required=True)
    args = parser.parse_args(argv)
    runs, settings = read_runs(args.folders)
    summary = ordered(
        summarize(
            regression_records(runs), ("method", "target", "max_size"), "mae"
        )
    )
    args.output.mkdir(parents=True, exist_ok=True)
    source = settings.get("image_source")
    budget = f"{settings['train_size']} sets x {settings['epochs']} epochs" + (
        f", images from {source}" if source else ""
    )
    plots.plot_error_by_size(
        summary,
        args.output / "mae.png",
        title=f"MAE against the maximum test-set size ({budget}); "
        "stars: the paper's Fig. D.1 at 50",
        paper_points=(FIG_D1_SIZE, FIG_D1),
    )
    panels = scatter_panels(runs)
    if panels:
        plots.plot_scatter(
            panels,
            args.output / "scatter.png",
            title=f"True and predicted values at the largest size ({budget})",
        )
    text = table(summary)
    (args.output / "table.md").write_text(text)
    (args.output / "summary.json").write_text(
        json.dumps({"settings": settings, "summary": summary}, indent=1)
    )
    print(text)


if __name__ == "__main__":
    main()

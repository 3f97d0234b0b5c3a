"""`keras-laf molecules`' table and figure over runs split across folders.

A study's seeds often run apart: in separate invocations, on separate
machines, at separate commits. This reads the `results.csv` each run of
`keras-laf molecules` writes (one row per run and test split: target,
method, split, seed, MAE and MAE over the split's label spread), joins
them (a run recorded twice must agree), and writes to `--output` what
the command writes for one folder: `results.csv` (the joined rows),
`summary.csv` (mean and std over the seeds), `table.md` (the MAE per
target, method and size; LAF against the best fixed aggregation at the
last test split, on each set of five seeds, 0-4 and 5-9, that both ran)
and `mae_by_size.png`. The settings the table states (the data, the
training sizes, the epochs and widths) are the command's, read from the
first `results.json` beside the files; options given override them.

    python -m benchmarks.molecule_seed_table \\
        results/molecules-chemml/results.csv DIR/results.csv \\
        --output results/molecules-chemml
"""

import argparse
import csv
import json
import math
import pathlib

from laf_experiments import molecule_reports
from laf_experiments import plots
from laf_experiments.store import RESULTS_CSV
from laf_experiments.store import SUMMARY_CSV
from laf_experiments.store import summarize
from laf_experiments.store import write_csv

KEY = ("target", "method", "split", "seed")
# The command's settings that the table and the figure state.
SETTINGS = ("source", "train_sizes", "epochs", "hidden_units", "laf_units")


def read_records(paths):
    """The rows of the `results.csv` files, once per run and split, in the
    order first read; a run and split recorded with two MAEs is an
    error."""
    records = {}
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                record = {
                    "target": row["target"],
                    "method": row["method"],
                    "split": row["split"],
                    "seed": int(row["seed"]),
                    "mae": float(row["mae"]),
                    "mae_over_std": float(row["mae_over_std"]),
                }
                key = tuple(record[field] for field in KEY)
                known = records.setdefault(key, record)
                if not math.isclose(known["mae"], record["mae"], rel_tol=1e-9):
                    raise SystemExit(
                        f"{path}: {', '.join(map(str, key))} is recorded "
                        f"with MAE {known['mae']:.6g} and {record['mae']:.6g}"
                    )
    return list(records.values())


def recorded_settings(paths):
    """The settings of the first `results.json` beside `paths`, or {}."""
    for path in paths:
        beside = path.with_name("results.json")
        if beside.is_file():
            return json.loads(beside.read_text())["settings"]
    return {}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=pathlib.Path)
    parser.add_argument("--output", type=pathlib.Path, required=True)
    parser.add_argument("--source", help="the data's name")
    parser.add_argument("--train-sizes", help="e.g. 1-22")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--hidden-units", type=int)
    parser.add_argument("--laf-units", type=int)
    args = parser.parse_args(argv)
    for path in args.results:
        if not path.is_file():
            parser.error(f"no such results.csv: {path}")
    records = read_records(args.results)
    if not records:
        parser.error("the results.csv files hold no runs")
    recorded = recorded_settings(args.results)
    settings = {
        name: recorded.get(name)
        if getattr(args, name) is None
        else getattr(args, name)
        for name in SETTINGS
    }
    missing = [name for name, value in settings.items() if value is None]
    if missing:
        parser.error(
            "no results.json beside the files gives "
            + ", ".join("--" + name.replace("_", "-") for name in missing)
            + "; give them"
        )
    splits = list(dict.fromkeys(record["split"] for record in records))
    settings["claim_split"] = splits[-1]
    args.output.mkdir(parents=True, exist_ok=True)
    write_csv(args.output / RESULTS_CSV, records)
    write_csv(
        args.output / SUMMARY_CSV,
        summarize(records, molecule_reports.SUMMARY_GROUPS, "mae"),
    )
    table = molecule_reports.results_table(records, settings)
    (args.output / "table.md").write_text(table)
    print(table)
    if plots.available():
        figure = molecule_reports.plot_results(records, settings)
        plots.save_figure(figure, args.output / "mae_by_size.png")


if __name__ == "__main__":
    main()

"""`keras-laf molecules`' table and figure over runs split across folders.

A study's seeds often run apart: in separate invocations, on separate
machines, at separate commits. This reads the `results.csv` each run of
`keras-laf molecules` writes (one row per run and test split: target,
method, split, seed, MAE and MAE over the split's label spread), joins
them (a run recorded twice must agree), and writes to `--output` what
the command writes for one folder: `results.csv` (the joined rows),
`table.md` (the MAE per target, method and size; LAF against the best
fixed aggregation at the last test split, on each set of five seeds,
0-4 and 5-9, that both ran) and `mae_by_size.png`.

    python -m benchmarks.molecule_seed_table \\
        results/molecules-chemml/results.csv DIR/results.csv \\
        --output results/molecules-chemml
"""

import argparse
import csv
import math
import pathlib

from laf_experiments import molecule_reports
from laf_experiments import plots

KEY = ("target", "method", "split", "seed")
FIELDS = (*KEY, "mae", "mae_over_std")


def read_records(paths):
    """The rows of the `results.csv` files, once per run and split, in the
    order first read; a run and split recorded with two MAEs is an
    error."""
    records = {}
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                record = {
                    **{field: row[field] for field in KEY},
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=pathlib.Path)
    parser.add_argument("--output", type=pathlib.Path, required=True)
    parser.add_argument("--source", default="properties.csv")
    parser.add_argument("--train-sizes", default="1-22")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--hidden-units", type=int, default=16)
    parser.add_argument("--laf-units", type=int, default=8)
    args = parser.parse_args(argv)
    for path in args.results:
        if not path.is_file():
            parser.error(f"no such results.csv: {path}")
    records = read_records(args.results)
    if not records:
        parser.error("the results.csv files hold no runs")
    splits = list(dict.fromkeys(record["split"] for record in records))
    settings = {
        "source": args.source,
        "train_sizes": args.train_sizes,
        "epochs": args.epochs,
        "hidden_units": args.hidden_units,
        "laf_units": args.laf_units,
        "claim_split": splits[-1],
    }
    args.output.mkdir(parents=True, exist_ok=True)
    with open(args.output / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(records)
    table = molecule_reports.results_table(records, settings)
    (args.output / "table.md").write_text(table)
    print(table)
    if plots.available():
        figure = molecule_reports.plot_results(records, settings)
        plots.save_figure(figure, args.output / "mae_by_size.png")


if __name__ == "__main__":
    main()

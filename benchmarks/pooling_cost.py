"""What each pooling costs per training epoch, against max pooling.

Times the training epochs of the point-cloud classifier
(`tutorials/point_clouds.py`'s settings: 1,600 clouds of 100 points,
width 64, batch 32) and of the integer model
(`benchmarks/laf_initialization.py`'s arrays harness: 20,000 sets of 2 to
10 digits, batch 64) with each pooling, in one process, both fed NumPy
arrays (from a `tf.data` pipeline, Keras's JAX `fit` stalls on the first
batch of some epochs, whatever the pooling): the first epoch
(tracing and compiling) is left out, the median of the next `--epochs` is
kept, and the poolings take turns over `--rounds` rounds so that a busy
machine slows them alike. Beside them, in each round, one pass of LAF's
exponentials alone over an epoch's batches (compiled, forward only: the
least work any LAF epoch does; `common.exponential_pass_seconds`), so
that LAF's extra time over max pooling is also given as a multiple of
it. Prints each time as it comes and writes the medians and their ratios
to max pooling's as JSON.

`--chunk-budgets` runs each LAF pooling once per chunk budget of the set
axis (`keras_laf.config.set_chunk_budget`), named e.g. `laf@2^21`, in the
same alternation, so that budgets are compared under the same load.

    python -m benchmarks.pooling_cost --rounds 2 --poolings max,laf,gru
    python -m benchmarks.pooling_cost --poolings max,laf --tasks point_clouds \\
        --chunk-budgets 2^19,2^21,none
"""

import argparse
import pathlib
import sys

import keras
import numpy as np

import keras_laf
from benchmarks.common import budget_label
from benchmarks.common import compile_integer_model
from benchmarks.common import epoch_times
from benchmarks.common import exponential_pass_seconds
from benchmarks.common import integer_model
from benchmarks.common import padded_digits
from benchmarks.common import parse_budget
from benchmarks.common import point_cloud_model
from benchmarks.common import pooling_aggregation
from benchmarks.common import write_record
from laf_experiments.data import make_solid_point_clouds
from laf_experiments.data import make_training_sets

TASKS = ("point_clouds", "integers")
# Each task's batches per epoch and the shape of its LAF pooling's input:
# sets, elements, features and LAF units.
LAF_SHAPES = {
    "point_clouds": {
        "batches": 50,
        "num_sets": 32,
        "set_size": 100,
        "features": 64,
        "units": 10,
    },
    "integers": {
        "batches": 313,
        "num_sets": 64,
        "set_size": 10,
        "features": 10,
        "units": 9,
    },
}


def point_cloud_epochs(pooling, epochs, data):
    model = point_cloud_model(pooling, width=64, learning_rate=3e-3, metrics=())
    times = epoch_times()
    # Every point is real: the mask is all ones.
    mask = np.ones(data.points.shape[:2], "float32")
    model.fit(
        (data.points, mask),
        data.labels,
        batch_size=32,
        epochs=epochs,
        shuffle=True,
        callbacks=[times],
        verbose=0,
    )
    return times.seconds


def integer_epochs(pooling, epochs, data):
    # `laf` is the integer model's LAF(9) with the default preset.
    model = integer_model(pooling_aggregation(pooling, 9))
    compile_integer_model(model, learning_rate=1e-3)
    times = epoch_times()
    model.fit(
        *data,
        batch_size=64,
        epochs=epochs,
        shuffle=True,
        callbacks=[times],
        verbose=0,
    )
    return times.seconds


def runs(poolings, budgets):
    """`(name, pooling, budget)` for each run of a round: every LAF pooling
    once per budget ("auto", the default, when `budgets` is empty)."""
    for pooling in poolings:
        if not pooling.startswith("laf") or not budgets:
            yield pooling, pooling, keras_laf.config.AUTO
            continue
        for budget in budgets:
            yield f"{pooling}@{budget_label(budget)}", pooling, budget


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--poolings",
        default="max,sum,pna,laf,softmax,powermean,attention,gru,lstm,"
        "set2set,gmt,laf+max",
    )
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument(
        "--chunk-budgets",
        default="",
        help="comma-separated chunk budgets for the LAF poolings "
        "(2^19, 524288, none); default: the device's",
    )
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a tenth of the data (a check that the script runs)",
    )
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("benchmarks/results/pooling_cost.json"),
    )
    args = parser.parse_args(argv)
    poolings = args.poolings.split(",")
    if "max" not in poolings:
        poolings.insert(0, "max")
    tasks = args.tasks.split(",")
    for task in tasks:
        if task not in TASKS:
            parser.error(f"unknown task {task!r}; expected some of {TASKS}")
    try:
        budgets = [
            parse_budget(text) for text in args.chunk_budgets.split(",") if text
        ]
    except ValueError:
        parser.error(f"bad --chunk-budgets {args.chunk_budgets!r}")
    schedule = list(runs(poolings, budgets))
    scale = 10 if args.quick else 1
    digit_sets = make_training_sets(20_000 // scale, "sum", seed=0)
    data = {
        "point_clouds": make_solid_point_clouds(1_600 // scale, 100, seed=0),
        "integers": padded_digits(digit_sets.sets, digit_sets.labels),
    }
    run = {"point_clouds": point_cloud_epochs, "integers": integer_epochs}
    seconds = {task: {name: [] for name, _, _ in schedule} for task in tasks}
    exponentials = {task: [] for task in tasks}
    for round_index in range(args.rounds):
        for task in tasks:
            shape = dict(LAF_SHAPES[task])
            shape["batches"] = -(-shape["batches"] // scale)
            exponentials[task].append(
                exponential_pass_seconds(epochs=args.epochs, **shape)
            )
            for name, pooling, budget in schedule:
                keras.utils.set_random_seed(round_index)
                keras_laf.config.set_chunk_budget(padded=budget)
                times = run[task](pooling, 1 + args.epochs, data[task])[1:]
                keras_laf.config.set_chunk_budget()
                keras.backend.clear_session()
                seconds[task][name].extend(times)
                print(
                    f"round {round_index + 1}/{args.rounds} {task:>12} "
                    f"{name:>10}: {np.median(times):.2f} s per epoch",
                    flush=True,
                )
    report = {
        "backend": keras.config.backend(),
        "epochs_timed_per_round": args.epochs,
        "rounds": args.rounds,
        "tasks": {
            task: {
                pooling: {
                    "seconds_per_epoch": float(np.median(times)),
                    "ratio_to_max": float(
                        np.median(times) / np.median(per_pooling["max"])
                    ),
                }
                for pooling, times in per_pooling.items()
            }
            for task, per_pooling in seconds.items()
        },
    }
    for task, per_pooling in report["tasks"].items():
        floor = float(np.median(exponentials[task]))
        report["tasks"][task]["exponentials"] = {"seconds_per_epoch": floor}
        for name, row in per_pooling.items():
            if name == "laf" or name.startswith("laf@"):
                extra = (
                    row["seconds_per_epoch"]
                    - per_pooling["max"]["seconds_per_epoch"]
                )
                row["extra_over_max_in_exponentials"] = extra / floor
    write_record(args.output, report)
    for task, per_pooling in report["tasks"].items():
        for pooling, row in per_pooling.items():
            line = f"{task:>12} {pooling:>12}: {row['seconds_per_epoch']:.3f} s"
            if "ratio_to_max" in row:
                line += f", {row['ratio_to_max']:.2f} x max"
            if "extra_over_max_in_exponentials" in row:
                extra = row["extra_over_max_in_exponentials"]
                line += f", extra over max {extra:.1f} x the exponentials"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

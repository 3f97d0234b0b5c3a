"""How the size of LAF's chunks of the set axis trades time for memory.

LAF sums its exponentials over chunks of the set axis of padded sets, so
that no tensor of one exponential per element of the whole set is stored;
a chunk holds at most `keras_laf.config.chunk_budget("padded")` values,
all sets of the batch together (`keras_laf.config.set_chunk_budget`;
per set before `c646c6a`).
This script times one forward + backward step of LAF (the large-set step
of `benchmarks/laf_layer.py`) for several budgets, each in its own process,
against the direct transcription of the formula in the same run, and
prints time and peak memory per budget. It chose the default budgets
(RESULTS.md, "Chunks of the set axis").

Usage:

    python benchmarks/chunk_budget.py --backend jax
    python benchmarks/chunk_budget.py --backend tensorflow --output out.json
    python benchmarks/chunk_budget.py --quick   # small sizes, seconds
"""

import argparse
import json
import os
import subprocess
import sys

import laf_layer
from records import write_record

# Values per chunk, all sets together; None makes every set one chunk.
BUDGETS = (2**17, 2**19, 2**21, 2**23, 2**25, None)


def budget_label(budget):
    return "whole set" if budget is None else f"2^{budget.bit_length() - 1}"


def step_with_budget(budget, steps, **shape):
    """`laf_layer.large_step` of LAF with the given chunk budget."""
    import keras_laf
    from keras_laf.ops.power_sums import chunk_size as elements_per_chunk

    keras_laf.config.set_chunk_budget(padded=budget)
    chunk_size = elements_per_chunk(
        budget, shape["batch"], shape["features"], 2, 2 * shape["units"]
    )
    result = laf_layer.large_step("laf", steps=steps, **shape)
    chunks = 1 if chunk_size is None else -(-shape["set_size"] // chunk_size)
    return dict(result, chunk_size=chunk_size, num_chunks=chunks)


def run_child(backend, function, **kwargs):
    """Runs `function(**kwargs)` in a fresh process on `backend`."""
    command = [
        sys.executable,
        __file__,
        "--child",
        json.dumps({"function": function, "kwargs": kwargs}),
    ]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": backend},
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{function}{kwargs} failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def sweep(backend, shape, steps, budgets):
    """Time and memory per budget, with the transcription's as baseline."""
    print(f"{shape}: transcription ...", flush=True)
    baseline = run_child(
        backend, "large_step", variant="transcription", steps=steps, **shape
    )
    rows = []
    for budget in budgets:
        print(f"{shape}: budget {budget_label(budget)} ...", flush=True)
        result = run_child(
            backend, "step_with_budget", budget=budget, steps=steps, **shape
        )
        result["budget"] = budget
        result["time_ratio"] = result["seconds"] / baseline["seconds"]
        result["memory_ratio"] = result["peak_bytes"] / baseline["peak_bytes"]
        rows.append(result)
    return {"shape": shape, "transcription": baseline, "budgets": rows}


def report(sweeps):
    """The sweeps as text tables."""
    megabyte = 2.0**20
    lines = []
    for found in sweeps:
        baseline = found["transcription"]
        lines += [
            f"{found['shape']}; transcription "
            f"{baseline['seconds'] * 1e3:.2f} ms, "
            f"{baseline['peak_bytes'] / megabyte:.1f} MiB",
            "  budget     chunk  chunks       ms      MiB  time ratio  "
            "memory ratio",
        ]
        for row in found["budgets"]:
            chunk_size = row["chunk_size"] or "set"
            lines.append(
                f"  {budget_label(row['budget']):<9} {chunk_size:>6}"
                f" {row['num_chunks']:7d} {row['seconds'] * 1e3:8.2f} "
                f"{row['peak_bytes'] / megabyte:8.1f} "
                f"{row['time_ratio']:11.3f} {row['memory_ratio']:13.3f}"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        default=os.environ.get("KERAS_BACKEND", "tensorflow"),
        help="Keras backend: tensorflow or jax (default: KERAS_BACKEND)",
    )
    parser.add_argument(
        "--large",
        action="store_true",
        help="also sets of 10,000 elements (batch 16)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--output", help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        request = json.loads(args.child)
        function = globals().get(request["function"]) or getattr(
            laf_layer, request["function"]
        )
        print(json.dumps(function(**request["kwargs"])))
        return
    if args.quick:
        shapes = [{"batch": 8, "set_size": 100, "features": 8, "units": 10}]
        steps, budgets = 3, BUDGETS[1::2]
    else:
        shapes = [{"batch": 64, "set_size": 1000, "features": 64, "units": 10}]
        if args.large:
            shapes.append(
                {"batch": 16, "set_size": 10_000, "features": 64, "units": 10}
            )
        steps, budgets = 5, BUDGETS
    results = {"versions": run_child(args.backend, "versions")}
    results["sweeps"] = [
        sweep(args.backend, shape, steps, budgets) for shape in shapes
    ]
    print("\n".join(f"{k}: {v}" for k, v in results["versions"].items()))
    print(report(results["sweeps"]))
    write_record(args.output, results)


if __name__ == "__main__":
    main()

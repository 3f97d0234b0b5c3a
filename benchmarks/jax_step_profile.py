"""Where a LAF gradient step spends its time on JAX, against PMA's.

The gradient of one layer alone (no model, no optimizer), jitted, on the
peers' batch of `benchmarks/laf_layer.py` (64 padded sets of 10 elements
with 10 features in [0, 1]): LAF(9), Set Transformer's PMA (dim 16, 4
heads, 1 seed) and a masked sum. Prints the median wall time per step of
each, then the time per step of each XLA operation (thunk) of LAF's step,
read from a `jax.profiler` trace: which fusions to look at first.

    KERAS_BACKEND=jax python benchmarks/jax_step_profile.py
    KERAS_BACKEND=jax python benchmarks/jax_step_profile.py --output r.json

Run it on a quiet machine: the fusions are split over the CPU's threads,
and under load their times include the wait for a free core.
"""

import argparse
import collections
import gzip
import json
import os
import pathlib
import tempfile
import time

from records import write_record

os.environ.setdefault("KERAS_BACKEND", "jax")


def layer_steps(num_sets=64, set_size=10, features=10):
    """The jitted gradient step of each layer and its arguments."""
    import jax
    import numpy as np

    import keras_laf

    rng = np.random.default_rng(0)
    values = rng.uniform(0, 1, (num_sets, set_size, features))
    values = values.astype("float32")
    mask = np.ones((num_sets, set_size), bool)
    exponents = rng.uniform(0, 1, (8, 9)).astype("float32")
    coefficients = rng.normal(0, 0.01, (4, 9)).astype("float32")
    pma = keras_laf.PMA(num_seeds=1, dim=16, num_heads=4)
    pma.build((None, set_size, features))
    pma_variables = [variable.value for variable in pma.trainable_variables]

    def laf_loss(values, exponents, coefficients):
        return keras_laf.laf(values, exponents, coefficients, mask=mask).sum()

    def pma_loss(variables, values):
        outputs, _ = pma.stateless_call(variables, [], values, mask=mask)
        return outputs.sum()

    def sum_loss(values):
        return (values * mask[..., None]).sum()

    return {
        "laf": (
            jax.jit(jax.grad(laf_loss, argnums=(0, 1, 2))),
            (values, exponents, coefficients),
        ),
        "pma": (
            jax.jit(jax.grad(pma_loss, argnums=(0, 1))),
            (pma_variables, values),
        ),
        "sum": (jax.jit(jax.grad(sum_loss)), (values,)),
    }


def median_step_seconds(step, args, repeats):
    import jax
    import numpy as np

    jax.block_until_ready(step(*args))  # compiles
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(step(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def thunk_seconds(step, args, repeats):
    """Seconds per step of each XLA thunk of `step`, from a profiler trace,
    largest first."""
    import jax

    totals = collections.Counter()
    with tempfile.TemporaryDirectory() as trace_dir:
        with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
            for _ in range(repeats):
                jax.block_until_ready(step(*args))
        (trace,) = pathlib.Path(trace_dir).rglob("perfetto_trace.json.gz")
        with gzip.open(trace) as trace_file:
            events = json.load(trace_file)
    if isinstance(events, dict):
        events = events["traceEvents"]
    for event in events:
        # Complete events of the XLA program: its fusions and other thunks
        # (the runtime's and Python's own events are left out).
        name = event.get("name", "")
        if event.get("ph") == "X" and not (
            name.startswith("$") or "::" in name or name[:1].isupper()
        ):
            totals[name] += event.get("dur", 0) * 1e-6 / repeats
    return dict(totals.most_common())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1000)
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args()
    import jax
    import keras

    if keras.config.backend() != "jax":
        parser.exit(1, "jax_step_profile.py needs KERAS_BACKEND=jax\n")
    steps = layer_steps()
    results = {
        "device": str(jax.devices()[0]),
        "step_seconds": {
            name: median_step_seconds(step, step_args, args.repeats)
            for name, (step, step_args) in steps.items()
        },
    }
    laf_step, laf_args = steps["laf"]
    results["laf_thunk_seconds"] = thunk_seconds(
        laf_step, laf_args, max(args.repeats // 5, 1)
    )
    print(f"device: {results['device']}")
    for name, seconds in results["step_seconds"].items():
        print(f"  {name} layer, gradient step: {seconds * 1e3:.3f} ms")
    print("LAF's step by XLA operation (ms per step):")
    for name, seconds in list(results["laf_thunk_seconds"].items())[:15]:
        print(f"  {seconds * 1e3:7.3f}  {name}")
    write_record(args.output, results)


if __name__ == "__main__":
    main()

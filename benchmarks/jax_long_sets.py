"""Which form of the gradient's sum over the units runs faster on JAX, by
set length and number of units.

On JAX, LAF's gradient sums exp(q_k y) over the units k either as a
reduction, the set axis minor (which XLA's CPU compiler hands to
YNNPACK), or written out term by term; sets longer than
`keras_laf.ops.backend.jax.LONGEST_SET_SUMMED_BY_REDUCTION`, and units of
at most `MOST_TERMS_WRITTEN_OUT` terms per source on any set, take the
second form. This script times one jitted forward + gradient step of
`LAF(units)` on padded sets with each form forced (the thresholds set to
force it), each in a process of its own, and prints the median step time
and the process's peak RSS. It chose the thresholds (RESULTS.md, "What
LAF costs").

    python benchmarks/jax_long_sets.py
    python benchmarks/jax_long_sets.py --shapes 32x100x64 --units 10,12,13
    python benchmarks/jax_long_sets.py --shapes 8x16000x16 --units 9,20
    python benchmarks/jax_long_sets.py --output long_sets.json
"""

import argparse
import json
import os
import resource
import subprocess
import sys

from records import write_record

# Each form forced: (LONGEST_SET_SUMMED_BY_REDUCTION, MOST_TERMS_WRITTEN_OUT).
FORMS = {"reduction": (float("inf"), 0), "written_out": (0, 0)}


def step_seconds(shape, units, form, repeats):
    """Median seconds of one forward + gradient step, in this process."""
    os.environ["KERAS_BACKEND"] = "jax"
    import numpy as np
    from laf_step_profile import compiled_functions
    from laf_step_profile import median_seconds

    import keras_laf
    from keras_laf.ops.backend import jax as jax_hooks

    (
        jax_hooks.LONGEST_SET_SUMMED_BY_REDUCTION,
        jax_hooks.MOST_TERMS_WRITTEN_OUT,
    ) = FORMS[form]
    values = np.random.default_rng(0).uniform(size=shape).astype("float32")
    mask = np.ones(shape[:2], bool)
    layer = keras_laf.LAF(units)
    layer.build(shape)
    _, forward_and_gradient, _, wait = compiled_functions(layer)
    return median_seconds(forward_and_gradient, wait, repeats, values, mask)


def child(request):
    seconds = step_seconds(**request)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak_rss_bytes": peak}))


def parse_shape(text):
    shape = tuple(int(size) for size in text.split("x"))
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(text)
    return shape


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--shapes",
        default="32x100x64,8x4000x16,8x16000x16,8x64000x16",
        help="sets x elements x features, comma-separated",
    )
    parser.add_argument("--units", default="9,20")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0
    try:
        shapes = [parse_shape(text) for text in args.shapes.split(",")]
        units = [int(text) for text in args.units.split(",")]
    except ValueError as error:
        parser.error(f"bad --shapes or --units: {error}")
    rows = []
    for shape in shapes:
        for unit_count in units:
            for form in FORMS:
                request = {
                    "shape": shape,
                    "units": unit_count,
                    "form": form,
                    "repeats": args.repeats,
                }
                completed = subprocess.run(
                    [sys.executable, __file__, "--child", json.dumps(request)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                result = json.loads(completed.stdout.strip().splitlines()[-1])
                rows.append({**request, **result})
                print(
                    f"{'x'.join(map(str, shape)):>12} LAF({unit_count}) "
                    f"{form:>11}: {result['seconds'] * 1e3:9.1f} ms, peak "
                    f"RSS {result['peak_rss_bytes'] / 2**20:6.0f} MiB",
                    flush=True,
                )
    write_record(args.output, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

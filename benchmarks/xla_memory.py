"""XLA's memory for one LAF forward + gradient step, per element-feature
of the input, program by program, on the running Keras backend.

One step of `LAF(units)` on padded sets `(sets, set_size, features)` (all
elements real), compiled as `Model.fit` compiles it
(`common.compiled_functions`). On TensorFlow, LAF of padded sets
runs as three XLA programs of its own (`keras_laf.ops.tensorflow_programs`:
the forward pass, the per-set gradient and the gradient of the elements);
XLA dumps each program's buffer assignment into a temporary folder, and
its total (parameters, temporaries and outputs) is read from there. On
JAX the step is one program, and `memory_analysis()` gives its temporary
and output bytes. The largest program's total is the step's peak of
XLA's buffers; `laf_layer.py --part scaling` measures the process's peak
RSS, which adds what lives outside XLA.

    python -m benchmarks.xla_memory
    KERAS_BACKEND=jax python -m benchmarks.xla_memory --shape 8x16384x16
"""

import argparse
import atexit
import os
import pathlib
import re
import shutil
import sys
import tempfile

from benchmarks.common import compiled_functions
from benchmarks.common import jax_step_bytes_per_element_feature
from benchmarks.common import laf_and_full_sets
from benchmarks.common import write_record

# XLA reads its flags once, when the backend first compiles: set here,
# before Keras is imported (inside the functions below).
DUMP_FOLDER = tempfile.mkdtemp(prefix="xla_memory_")
atexit.register(shutil.rmtree, DUMP_FOLDER, ignore_errors=True)
if os.environ.get("KERAS_BACKEND", "tensorflow") == "tensorflow":
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "")
        + f" --xla_dump_to={DUMP_FOLDER} --xla_dump_hlo_as_text"
    )

TOTAL = re.compile(r"Total bytes used: (\d+)")
# LAF's own programs, by the names of their kernels' traced functions.
TENSORFLOW_PROGRAMS = re.compile(r"module_\d+\.a_inference_bound_\d+__")


def tensorflow_program_bytes():
    """The total bytes of each of LAF's XLA programs XLA dumped, in the
    order they were compiled."""
    totals = []
    for path in sorted(
        pathlib.Path(DUMP_FOLDER).glob("*buffer-assignment.txt")
    ):
        if TENSORFLOW_PROGRAMS.match(path.name):
            match = TOTAL.search(path.read_text())
            totals.append(int(match.group(1)))
    return totals


def measure(num_sets, set_size, features, units):
    import keras

    layer, values, mask = laf_and_full_sets(num_sets, set_size, features, units)
    element_features = values.size
    if keras.config.backend() == "jax":
        per_element_feature = jax_step_bytes_per_element_feature(
            layer, values, mask
        )
        return {"step_bytes_per_element_feature": per_element_feature}
    _, forward_and_gradient, _, wait = compiled_functions(layer)
    wait(forward_and_gradient(values, mask))
    programs = [
        total / element_features for total in tensorflow_program_bytes()
    ]
    return {
        "program_bytes_per_element_feature": programs,
        "step_bytes_per_element_feature": max(programs),
    }


def main():
    import keras

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shape",
        default="8x131072x16",
        help="sets x elements per set x features (default: 8x131072x16)",
    )
    parser.add_argument("--units", type=int, default=9)
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    try:
        shape = tuple(int(size) for size in args.shape.split("x"))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1 or args.units < 1:
        parser.error(
            f"--shape must be three positive sizes like 8x131072x16 and "
            f"--units positive; got {args.shape!r} and {args.units}"
        )
    results = {
        "backend": keras.config.backend(),
        "shape": list(shape),
        "units": args.units,
        **measure(*shape, args.units),
    }
    line = (
        f"LAF({args.units}) on {args.shape}, {results['backend']}: XLA's "
        f"peak {results['step_bytes_per_element_feature']:.1f} B per "
        "element-feature"
    )
    if "program_bytes_per_element_feature" in results:
        programs = ", ".join(
            f"{size:.1f}"
            for size in results["program_bytes_per_element_feature"]
        )
        line += f" (programs in order: {programs})"
    print(line)
    write_record(args.output, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

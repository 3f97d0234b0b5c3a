"""Where one LAF training step spends its time, as multiples of its
exponentials alone.

For the point-cloud pooling (32 clouds x 100 points x 64 features, LAF(10))
and the integer model's pooling (64 sets x 10 digits x 10 features,
LAF(9)), on the running Keras backend, each figure the median time of one
step and its ratio to the floor, one pass of LAF's exponentials
(`common.exponential_pass_seconds`, compiled, forward only), measured
in the same run:

- `exponentials`: the floor;
- `forward`: the layer's forward pass, compiled as the backend compiles it
  inside `Model.fit` (on TensorFlow a `tf.function`, whose LAF runs as XLA
  programs; on JAX `jax.jit`);
- `gradient`: the forward pass and the gradient with respect to the input
  and the layer's weights, less `forward`;
- `constraints`: the preset's constraints applied to the layer's weights,
  as the optimizer applies them after each update;
- `fixed`: forward and gradient of the same layer on one set of one
  element with one feature: the per-step cost that does not grow with the
  sets (dispatch, kernel launches, the per-set arithmetic's overhead).

On JAX, the step's XLA operations that move data (transposes, copies,
pads, slices) are added up from a profiler trace (`data_movement`).

    python -m benchmarks.laf_step_profile --output profile.json
    KERAS_BACKEND=jax python -m benchmarks.laf_step_profile
"""

import argparse
import pathlib
import sys

import keras
import numpy as np
from keras import ops

import keras_laf
from benchmarks.common import compiled_functions
from benchmarks.common import exponential_pass_seconds
from benchmarks.common import jax_thunk_seconds
from benchmarks.common import laf_and_full_sets
from benchmarks.common import median_seconds
from benchmarks.common import write_record

WORKLOADS = {
    "point_clouds": {
        "num_sets": 32,
        "set_size": 100,
        "features": 64,
        "units": 10,
    },
    "integers": {"num_sets": 64, "set_size": 10, "features": 10, "units": 9},
}
# XLA operations that only move data, by their names' leading op.
DATA_MOVEMENT = ("transpose", "copy", "pad", "slice", "concatenate", "bitcast")


def jax_data_movement_seconds(layer, values, mask, repeats):
    """Seconds per step of the XLA operations of the forward + gradient
    step that move data, from a profiler trace (JAX only)."""
    _, forward_and_gradient, _, _ = compiled_functions(layer)
    thunks = jax_thunk_seconds(forward_and_gradient, (values, mask), repeats)
    return sum(
        seconds
        for name, seconds in thunks.items()
        if name.split("_")[0].split(".")[0] in DATA_MOVEMENT
    )


def profile(workload, repeats):
    shape = WORKLOADS[workload]
    layer, values, mask = laf_and_full_sets(**shape)
    forward, forward_and_gradient, constrain, wait = compiled_functions(layer)
    values, mask = ops.convert_to_tensor(values), ops.convert_to_tensor(mask)
    floor = exponential_pass_seconds(batches=repeats, epochs=3, **shape)
    floor /= repeats
    forward_seconds = median_seconds(forward, wait, repeats, values, mask)
    step_seconds = median_seconds(
        forward_and_gradient, wait, repeats, values, mask
    )
    constraint_seconds = median_seconds(constrain, wait, repeats)
    one_element = ops.convert_to_tensor(np.full((1, 1, 1), 0.5, "float32"))
    one_mask = ops.convert_to_tensor(np.ones((1, 1), bool))
    tiny = keras_laf.LAF(shape["units"])
    tiny.build((1, 1, 1))
    _, tiny_step, _, tiny_wait = compiled_functions(tiny)
    fixed_seconds = median_seconds(
        tiny_step, tiny_wait, repeats, one_element, one_mask
    )
    seconds = {
        "exponentials": floor,
        "forward": forward_seconds,
        "gradient": step_seconds - forward_seconds,
        "forward_and_gradient": step_seconds,
        "constraints": constraint_seconds,
        "fixed": fixed_seconds,
    }
    if keras.config.backend() == "jax":
        seconds["data_movement"] = jax_data_movement_seconds(
            layer, values, mask, max(repeats // 5, 1)
        )
    return {
        name: {"seconds": value, "in_exponentials": value / floor}
        for name, value in seconds.items()
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("benchmarks/results/laf_step_profile.json"),
    )
    args = parser.parse_args(argv)
    workloads = args.workloads.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            parser.error(
                f"unknown workload {workload!r}; expected some of "
                f"{tuple(WORKLOADS)}"
            )
    report = {
        "backend": keras.config.backend(),
        "repeats": args.repeats,
        "workloads": {},
    }
    for workload in workloads:
        rows = profile(workload, args.repeats)
        report["workloads"][workload] = rows
        for name, row in rows.items():
            print(
                f"{workload:>12} {name:>21}: {row['seconds'] * 1e3:8.3f} ms, "
                f"{row['in_exponentials']:5.2f} x the exponentials",
                flush=True,
            )
    write_record(args.output, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())

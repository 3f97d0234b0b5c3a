"""Whether LAF's loop over chunks of the set axis runs faster with its
first chunk computed before the loop or inside it, on the running backend.

LAF sums its exponentials chunk by chunk (`keras_laf.ops.power_sums`),
in a loop that each backend's hooks run (`keras_laf.ops.backend`): every
chunk inside the loop, which starts from zeros. The other form computes
the first chunk before the loop, its outputs the sums' initial values (the
form before 2026-11-28, written out here). This script times one compiled
forward + gradient step of `LAF(units)` with each form, in one process,
the forms alternating over `--rounds` rounds (medians), on the
point-cloud pooling's shapes and on long sets; on JAX it also gives XLA's
memory account of the step (temporary and output buffers) per
element-feature. RESULTS.md ("What LAF costs") has the figures.

    python benchmarks/chunk_loop.py
    KERAS_BACKEND=jax python benchmarks/chunk_loop.py --output loop.json
"""

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from laf_step_profile import compiled_functions  # noqa: E402
from laf_step_profile import median_seconds  # noqa: E402

import keras_laf  # noqa: E402
from keras_laf.ops import backend  # noqa: E402

# sets, elements per set, features, LAF units
SHAPES = {
    "point_clouds": (32, 100, 64, 10),
    "long_sets": (8, 16384, 16, 9),
}
FORMS = ("first_chunk_before_loop", "every_chunk_in_loop")
# The library's form, from the running backend's hooks.
LIBRARY_FORM = backend._module().sum_over_chunks


def first_chunk_before_loop(chunk_outputs, num_chunks, zeros):
    """`sum_over_chunks` with the first chunk computed before the loop."""
    totals = chunk_outputs(0)
    if isinstance(num_chunks, int) and num_chunks == 1:
        return totals

    def add_chunk(index, totals):
        outputs = chunk_outputs(index)
        return tuple(total + output for total, output in zip(totals, outputs))

    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        _, totals = tf.while_loop(
            lambda index, totals: index < num_chunks,
            lambda index, totals: (index + 1, add_chunk(index, totals)),
            (1, totals),
            maximum_iterations=num_chunks - 1,
        )
        return totals
    return keras.ops.fori_loop(1, num_chunks, add_chunk, totals)


def use_form(form):
    """Makes the running backend's hooks sum chunks in `form`."""
    module = backend._module()
    module.sum_over_chunks = (
        first_chunk_before_loop if form == FORMS[0] else LIBRARY_FORM
    )
    if keras.config.backend() == "tensorflow":
        # The compiled programs keep the hooks they were traced with.
        from keras_laf.ops.tensorflow_programs import padded_laf_kernels

        padded_laf_kernels.cache_clear()


def jax_memory_per_element_feature(layer, values, mask):
    """XLA's temporary and output bytes of the jitted step, per
    element-feature of the input."""
    import jax

    def loss(variables, values, mask):
        outputs, _ = layer.stateless_call(variables, [], values, mask=mask)
        return keras.ops.sum(outputs)

    variables = [variable.value for variable in layer.trainable_variables]
    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    memory = step.lower(variables, values, mask).compile().memory_analysis()
    total = memory.temp_size_in_bytes + memory.output_size_in_bytes
    return total / values.size


def measure(shape_name, rounds, repeats):
    num_sets, set_size, features, units = SHAPES[shape_name]
    rng = np.random.default_rng(0)
    values = rng.uniform(size=(num_sets, set_size, features))
    values = values.astype("float32")
    mask = np.ones((num_sets, set_size), bool)
    layer = keras_laf.LAF(units)
    layer.build(values.shape)
    steps, results = {}, {}
    for form in FORMS:
        use_form(form)
        _, forward_and_gradient, _, wait = compiled_functions(layer)
        # Traced now, with this form's hooks: `jax.jit` and `tf.function`
        # trace at their first call.
        wait(forward_and_gradient(values, mask))
        steps[form] = (forward_and_gradient, wait)
        results[form] = {"round_seconds": []}
        if keras.config.backend() == "jax":
            results[form]["bytes_per_element_feature"] = (
                jax_memory_per_element_feature(layer, values, mask)
            )
    for round_index in range(rounds):
        for form, (step, wait) in steps.items():
            seconds = median_seconds(step, wait, repeats, values, mask)
            results[form]["round_seconds"].append(seconds)
            print(
                f"round {round_index + 1}/{rounds} {shape_name:>12} "
                f"{form:>24}: {seconds * 1e3:8.2f} ms",
                flush=True,
            )
    for form in FORMS:
        results[form]["seconds"] = float(
            np.median(results[form]["round_seconds"])
        )
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    shape_names = args.shapes.split(",")
    unknown = sorted(set(shape_names) - set(SHAPES))
    if unknown:
        parser.error(f"unknown shapes {unknown}; expected some of {SHAPES}")
    if args.rounds < 1 or args.repeats < 1:
        parser.error("--rounds and --repeats must be at least 1")
    results = {"backend": keras.config.backend(), "shapes": {}}
    for shape_name in shape_names:
        results["shapes"][shape_name] = measure(
            shape_name, args.rounds, args.repeats
        )
    for shape_name, forms in results["shapes"].items():
        before, inside = (forms[form]["seconds"] for form in FORMS)
        line = (
            f"{shape_name:>12}: first chunk before the loop "
            f"{before * 1e3:.2f} ms, every chunk in it {inside * 1e3:.2f} ms"
        )
        if "bytes_per_element_feature" in forms[FORMS[0]]:
            before, inside = (
                forms[form]["bytes_per_element_feature"] for form in FORMS
            )
            line += (
                f" (XLA memory {before:.1f} and {inside:.1f} B per "
                "element-feature)"
            )
        print(line)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

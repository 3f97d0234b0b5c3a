"""Forms of LAF's backend hooks timed against each other, on the running
backend.

Where backends' compilers differ in which layout of a loop or a sum they
run fastest, LAF's math calls hooks (`keras_laf.ops.backend`). For each
comparison of their forms below, this script times one compiled forward +
gradient step of `LAF(units)` with the library's form and the others, in
one process, the forms alternating over `--rounds` rounds (medians), on
the point-cloud pooling's shapes, the integer model's and long sets; on
JAX it also gives XLA's memory account of the step (temporary and output
buffers) per element-feature. RESULTS.md ("What LAF costs") has the
figures.

- `sum_over_chunks`: the loop over chunks of the set axis with every
  chunk inside it (the library's form), or with the first chunk computed
  before it, its outputs the sums' initial values (the form before
  2026-11-28, written out here).
- `sums_over_elements`: a chunk's power sums and their derivatives by the
  inner exponents as two sums (the generic form), or as the running
  backend's hooks do them (on JAX, one reduction with two operands, over
  chunks of at most `MOST_ELEMENTS_PER_CHUNK` elements); the two sums are
  timed with chunks as the budget allows (the form before 2026-11-29) and
  with the backend's largest chunk.

    python benchmarks/hook_forms.py
    KERAS_BACKEND=jax python benchmarks/hook_forms.py --output forms.json
    python benchmarks/hook_forms.py --comparisons sums_over_elements --rounds 4
"""

import argparse
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from laf_step_profile import compiled_functions  # noqa: E402
from laf_step_profile import laf_and_full_sets  # noqa: E402
from laf_step_profile import median_seconds  # noqa: E402
from records import write_record  # noqa: E402

from keras_laf.ops import backend  # noqa: E402
from keras_laf.ops.backend import generic  # noqa: E402

# sets, elements per set, features, LAF units
SHAPES = {
    "point_clouds": (32, 100, 64, 10),
    "integers": (64, 10, 10, 9),
    "few_rows": (4, 100, 4, 10),
    "medium_sets": (8, 1000, 16, 9),
    "long_sets": (8, 16384, 16, 9),
}


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


# The library's hooks, as the running backend's hook module has them.
LIBRARY_HOOKS = backend._module()
LIBRARY_FORMS = {
    hook: getattr(LIBRARY_HOOKS, hook)
    for hook in (
        "sum_over_chunks",
        "most_elements_per_chunk",
        "sums_over_elements",
    )
}

# For each comparison: its forms, the others first, then the library's,
# each a mapping of hooks to the functions that replace the library's.
COMPARISONS = {
    "sum_over_chunks": {
        "first_chunk_before_loop": {"sum_over_chunks": first_chunk_before_loop},
        "every_chunk_in_loop": {},
    },
    "sums_over_elements": {
        "two_sums_chunks_by_budget": {
            "most_elements_per_chunk": generic.most_elements_per_chunk,
            "sums_over_elements": generic.sums_over_elements,
        },
        "two_sums": {"sums_over_elements": generic.sums_over_elements},
        "library": {},
    },
}


def use_form(comparison, form):
    """Makes the running backend's hooks those of `form`."""
    for hook, function in LIBRARY_FORMS.items():
        setattr(
            LIBRARY_HOOKS,
            hook,
            COMPARISONS[comparison][form].get(hook, function),
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


def measure(comparison, shape_name, rounds, repeats):
    layer, values, mask = laf_and_full_sets(*SHAPES[shape_name])
    steps, results = {}, {}
    for form in COMPARISONS[comparison]:
        use_form(comparison, form)
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
                f"round {round_index + 1}/{rounds} {comparison} "
                f"{shape_name:>12} {form:>26}: {seconds * 1e3:8.2f} ms",
                flush=True,
            )
    use_form(comparison, list(COMPARISONS[comparison])[-1])
    for form in COMPARISONS[comparison]:
        results[form]["seconds"] = float(
            np.median(results[form]["round_seconds"])
        )
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", default=",".join(COMPARISONS))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    comparisons, shape_names = (
        args.comparisons.split(","),
        args.shapes.split(","),
    )
    for names, known in ((comparisons, COMPARISONS), (shape_names, SHAPES)):
        unknown = sorted(set(names) - set(known))
        if unknown:
            parser.error(f"unknown {unknown}; expected some of {list(known)}")
    if args.rounds < 1 or args.repeats < 1:
        parser.error("--rounds and --repeats must be at least 1")
    results = {"backend": keras.config.backend(), "comparisons": {}}
    for comparison in comparisons:
        results["comparisons"][comparison] = {
            shape_name: measure(
                comparison, shape_name, args.rounds, args.repeats
            )
            for shape_name in shape_names
        }
    write_record(args.output, results)
    for comparison, shapes in results["comparisons"].items():
        for shape_name, forms in shapes.items():
            print(f"{comparison} {shape_name}:")
            for form, result in forms.items():
                # XLA's memory account: on JAX only.
                memory = result.get("bytes_per_element_feature")
                print(
                    f"  {form:>26}: {result['seconds'] * 1e3:8.2f} ms"
                    + (
                        f", XLA memory {memory:.1f} B per element-feature"
                        if memory is not None
                        else ""
                    )
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""LAF as one compiled program per shape in eager JAX calls.

Inside `jax.jit`, `jax.grad` or a compiled training step, JAX traces the
layer with the rest of the step, and XLA compiles it whole. Called
eagerly, JAX runs each `keras.ops` call as its own small program,
compiled for each new shape of its operands, and LAF is a few hundred of
them: every new batch shape would compile them all again. Here an eager
call runs `keras_laf.ops.formula.laf_math` under `jax.jit` instead, one
program compiled once per shape, as TensorFlow runs padded sets as XLA
programs of their own (`keras_laf.ops.tensorflow_programs`).
"""

import functools

from keras_laf.ops.formula import laf_math
from keras_laf.sets import PaddedSets
from keras_laf.sets import SegmentSets

__all__ = ["laf_over_sets"]


@functools.lru_cache(maxsize=None)
def _compiled(layout, num_segments, epsilon, output_limit, output_bound):
    import jax

    def program(values, layout_tensor, exponents, coefficients):
        if layout == "padded":
            sets = PaddedSets(layout_tensor)
        else:
            sets = SegmentSets(layout_tensor, num_segments)
        return laf_math(
            values,
            sets,
            exponents,
            coefficients,
            epsilon,
            output_limit,
            output_bound,
        )

    return jax.jit(program)


def laf_over_sets(
    values, sets, exponents, coefficients, epsilon, output_limit, output_bound
):
    """`keras_laf.ops.laf_over_sets` on JAX: compiled as one program when
    called eagerly, traced with its caller otherwise."""
    import jax

    if isinstance(sets, PaddedSets):
        layout, layout_tensor, num_segments = "padded", sets.mask, None
    else:
        layout, layout_tensor = "segments", sets.segment_ids
        num_segments = sets.num_segments
    tensors = (values, layout_tensor, exponents, coefficients)
    if any(
        isinstance(tensor, jax.core.Tracer) for tensor in tensors
    ) or not isinstance(num_segments, (int, type(None))):
        return laf_math(
            values,
            sets,
            exponents,
            coefficients,
            epsilon,
            output_limit,
            output_bound,
        )
    program = _compiled(
        layout, num_segments, epsilon, output_limit, output_bound
    )
    return program(values, layout_tensor, exponents, coefficients)

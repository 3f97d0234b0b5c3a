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

import jax

from keras_laf.core.sets import PaddedSets
from keras_laf.core.sets import SegmentSets
from keras_laf.ops.formula import laf_math

__all__ = ["laf_over_sets"]

# The arguments that are not tensors: a new value compiles a new program.
SETTINGS = ("layout", "num_segments", "epsilon", "output_limit", "output_bound")


def _laf(
    values,
    layout_tensor,
    exponents,
    coefficients,
    layout,
    num_segments,
    epsilon,
    output_limit,
    output_bound,
):
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


_compiled_laf = jax.jit(_laf, static_argnames=SETTINGS)


def laf_over_sets(
    values, sets, exponents, coefficients, epsilon, output_limit, output_bound
):
    """`keras_laf.ops.laf_over_sets` on JAX: compiled as one program when
    called eagerly, traced with its caller otherwise."""
    if isinstance(sets, PaddedSets):
        layout, layout_tensor, num_segments = "padded", sets.mask, None
    else:
        layout, layout_tensor = "segments", sets.segment_ids
        num_segments = sets.num_segments
    tensors = (values, layout_tensor, exponents, coefficients)
    traced = any(isinstance(tensor, jax.core.Tracer) for tensor in tensors)
    # A segment count held in a tensor is no static argument.
    static = isinstance(num_segments, (int, type(None)))
    run = _compiled_laf if static and not traced else _laf
    return run(
        *tensors,
        layout=layout,
        num_segments=num_segments,
        epsilon=epsilon,
        output_limit=output_limit,
        output_bound=output_bound,
    )

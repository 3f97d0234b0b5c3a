"""The backend hooks on JAX (see `keras_laf.ops.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. The gradient of the elements runs
fastest on JAX's CPU compiler with the set axis minor, unlike on
TensorFlow's, where each pass is compiled apart, and tensors are kept
from being fused into the loops over the exponentials; RESULTS.md
("Layout of the power sums") has the measurements.
"""

from keras import ops

from keras_laf.ops.backend.generic import sum_over_chunks

try:
    import jax
except ImportError:
    jax = None

__all__ = [
    "materialized",
    "sum_over_chunks",
    "weighted_sum_over_units",
]


def materialized(tensor):
    # XLA fuses cheap producers into their consumers and recomputes them
    # for every element of the consumer; the barrier stores the tensor.
    return jax.lax.optimization_barrier(tensor)


def weighted_sum_over_units(exponentials, y, log_mask, q, weights):
    # The sum over the units runs with the set axis minor.
    exponentials = exponentials(
        ops.transpose(y, (0, 1, 3, 2)), ops.transpose(log_mask), q
    )
    weighted_sums = ops.sum(ops.expand_dims(weights, -1) * exponentials, 1)
    return ops.transpose(weighted_sums, (0, 2, 1))

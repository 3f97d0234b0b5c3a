"""The backend hooks on JAX (see `keras_laf.ops.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. The two sums of the gradient run
fastest on JAX's CPU compiler in other forms than on TensorFlow's, where
each pass is compiled apart, and tensors are kept from being fused into
the loops over the exponentials; RESULTS.md ("Layout of the power sums")
has the measurements.
"""

from keras import ops

from keras_laf.ops.backend.generic import laf_over_sets
from keras_laf.ops.backend.generic import sum_over_chunks

try:
    import jax
except ImportError:
    jax = None

__all__ = [
    "laf_over_sets",
    "logs_times_exponentials",
    "materialized",
    "platform",
    "sum_over_chunks",
    "weighted_sum_over_units",
]


def platform():
    return "gpu" if jax.default_backend() == "gpu" else "cpu"


def materialized(tensor):
    # XLA fuses cheap producers into their consumers and recomputes them
    # for every element of the consumer; the barrier stores the tensor.
    return jax.lax.optimization_barrier(tensor)


def logs_times_exponentials(exponentials, y, log_mask, q):
    # With v = -y >= 0 at real elements, y exp(y q) = -exp(log v - q v) (0
    # where v = 0): the power sums' exponentials with one more term in the
    # exponent, which XLA runs as fast as them, unlike the product. Padding,
    # where y may be > 0 (1 - x = 1), is excluded by the log of the mask.
    # The logs are stored, not fused into the exponentials and computed
    # once per unit. Written with v and -q, the exponent shares no term
    # with the power sums' y q: compiling the forward and backward passes
    # together, XLA stores a shared term whole, 2 * units times the size
    # of the elements.
    v = ops.maximum(-y, 0.0)
    log_terms = materialized(ops.log(v) + log_mask)
    return -exponentials(v, log_terms, ops.negative(q))


def weighted_sum_over_units(exponentials, y, log_mask, q, weights):
    # The sum over the units runs with the set axis minor.
    exponentials = exponentials(
        ops.transpose(y, (0, 1, 3, 2)), ops.transpose(log_mask), q
    )
    weighted_sums = ops.sum(ops.expand_dims(weights, -1) * exponentials, 1)
    return ops.transpose(weighted_sums, (0, 2, 1))

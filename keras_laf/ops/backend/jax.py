"""The backend hooks on JAX (see `keras_laf.ops.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. The gradient's sum over the units
runs with the set axis minor, or on long sets written out term by term,
and tensors are kept from being fused into the loops over the
exponentials; RESULTS.md ("What LAF costs", "Layout of the power sums")
has the measurements.
"""

from keras import ops

from keras_laf.ops.backend.generic import sum_over_chunks

try:
    import jax
except ImportError:
    jax = None

# Up to this many elements per set, the gradient's sum over the units is a
# reduction; on longer sets YNNPACK, which XLA gives it to, stores every
# exponential of the set, and the sum is written out term by term, which is
# slower with many units on shorter sets. `benchmarks/jax_long_sets.py`
# measures both forms; RESULTS.md ("What LAF costs") has the figures.
LONGEST_SET_SUMMED_BY_REDUCTION = 4096

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
    if y.shape[2] <= LONGEST_SET_SUMMED_BY_REDUCTION:
        # A reduction over the units, the set axis minor: XLA's CPU
        # compiler hands it to YNNPACK, fastest on sets of usual sizes.
        exponentials = exponentials(
            ops.transpose(y, (0, 1, 3, 2)), ops.transpose(log_mask), q
        )
        weighted_sums = ops.sum(ops.expand_dims(weights, -1) * exponentials, 1)
        return ops.transpose(weighted_sums, (0, 2, 1))
    # One term per unit and term, added up: one loop over the elements,
    # which stores no exponential at any set size.
    total = 0.0
    for term in range(q.shape[1]):
        term_exponentials = exponentials(y, log_mask, q[:, term : term + 1])
        total = total + weights[:, term, None] * term_exponentials[:, 0]
    return total

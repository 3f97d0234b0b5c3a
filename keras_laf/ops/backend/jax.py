"""The backend hooks on JAX (see `keras_laf.ops.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. The gradient's sum over the units
is written out term by term, so that XLA's CPU compiler fuses it into one
loop over the elements, and tensors are kept from being fused into the
loops over the exponentials; RESULTS.md ("What LAF costs") has the
measurements.
"""

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
    # One term per unit and term, added up: XLA fuses them into one loop
    # over the elements, which stores no exponential at any set size. As a
    # reduction over the units, XLA's CPU compiler hands the sum to
    # YNNPACK, which stores every exponential of the set on long sets (8
    # sets of 125,000 elements: 25 s and 5.5 GB against 0.7 s and 1.1 GB).
    total = 0.0
    for term in range(q.shape[1]):
        term_exponentials = exponentials(y, log_mask, q[:, term : term + 1])
        total = total + weights[:, term, None] * term_exponentials[:, 0]
    return total

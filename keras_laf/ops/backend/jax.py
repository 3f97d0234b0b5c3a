"""The backend hooks on JAX (see `keras_laf.ops.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. The only hook of its own keeps a
tensor from being fused into the loop over the exponentials; RESULTS.md
("Layout of the power sums") has the measurements.
"""

from keras_laf.ops.backend.generic import laf_over_sets
from keras_laf.ops.backend.generic import sum_over_chunks
from keras_laf.ops.backend.generic import weighted_sum_over_units

try:
    import jax
except ImportError:
    jax = None

__all__ = [
    "laf_over_sets",
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

"""The backend hooks on TensorFlow (see `keras_laf.core.backend`).

A loop over chunks that XLA can size (`sum_over_chunks`); the rest is the
generic `keras.ops`. LAF of padded sets runs on TensorFlow as XLA
programs of its own: `keras_laf.ops.tensorflow_programs`.
"""

from keras_laf.core.backend.generic import chunk_summer
from keras_laf.core.backend.generic import exponentials
from keras_laf.core.backend.generic import most_elements_per_chunk
from keras_laf.core.backend.generic import needs_static_shapes
from keras_laf.core.backend.generic import prefers_segments_for_padded_sets
from keras_laf.core.backend.generic import segment_max
from keras_laf.core.backend.generic import segment_sum
from keras_laf.core.backend.generic import sums_over_elements
from keras_laf.core.backend.generic import weighted_sum_over_units

try:
    import tensorflow as tf
except ImportError:
    tf = None

__all__ = [
    "checks_values_in_traces",
    "exponentials",
    "is_traced",
    "jit_compile_means_xla",
    "laf_programs",
    "lists_devices",
    "most_elements_per_chunk",
    "needs_static_shapes",
    "prefers_segments_for_padded_sets",
    "segment_max",
    "segment_sum",
    "sum_over_chunks",
    "sums_over_elements",
    "takes_ragged_tensors",
    "weighted_sum_over_units",
]


def _bounded_loop(num_chunks, add_chunk, zeros):
    # A bound on the iterations lets XLA size the lists in which TensorFlow
    # keeps the loop's values whenever it records the loop for a gradient
    # (the hand-written gradients never use them).
    _, totals = tf.while_loop(
        lambda index, totals: index < num_chunks,
        lambda index, totals: (index + 1, add_chunk(index, totals)),
        (0, zeros),
        maximum_iterations=num_chunks,
    )
    return totals


sum_over_chunks = chunk_summer(_bounded_loop)


def is_traced(tensor):
    # Inside `tf.function` (`Model.fit`, `predict`).
    return not tf.executing_eagerly()


def takes_ragged_tensors():
    return True


def checks_values_in_traces():
    return True


def jit_compile_means_xla():
    return True


def lists_devices():
    return True


def laf_programs():
    return "keras_laf.ops.tensorflow_programs"

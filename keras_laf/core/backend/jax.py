"""The backend hooks on JAX (see `keras_laf.core.backend`).

LAF runs as plain `keras.ops` (`keras_laf.ops.formula.laf_math`): a JAX
training step is compiled whole by XLA. Sets that the chunk budget cuts
into chunks are cut into chunks of at most 16 elements, whose power sums
and their derivatives are one reduction with two operands; the
gradient's sum over the units is written out term by term up to 12 units
and on long sets, and is otherwise a reduction with the set axis minor.
"""

import numpy as np
from keras import ops

from keras_laf.core.backend import generic
from keras_laf.core.backend.generic import checks_values_in_traces
from keras_laf.core.backend.generic import exponentials
from keras_laf.core.backend.generic import prefers_segments_for_padded_sets
from keras_laf.core.backend.generic import sum_of_weighted_terms
from keras_laf.core.backend.generic import sum_over_chunks
from keras_laf.core.backend.generic import takes_ragged_tensors

try:
    import jax
except ImportError:
    jax = None

# The gradient's sum over the units is written out term by term on sets of
# more than this many elements, and up to MOST_TERMS_WRITTEN_OUT terms per
# source (12 units) on any set; otherwise it is a reduction. As a reduction
# XLA's CPU compiler hands it to YNNPACK, which on long sets stores every
# exponential of the set; written out, XLA sums in loops that store none.
LONGEST_SET_SUMMED_BY_REDUCTION = 4096
MOST_TERMS_WRITTEN_OUT = 24
# Padded sets that a chunk budget cuts into chunks (on CPUs) are cut into
# chunks of at most this many elements, so that their sums over the
# elements stay one reduction with two operands (`sums_over_elements`),
# which XLA's CPU compiler runs as one loop only over short chunks.
MOST_ELEMENTS_PER_CHUNK = 16

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


def _add_pairs(left, right):
    return left[0] + right[0], left[1] + right[1]


def most_elements_per_chunk():
    return MOST_ELEMENTS_PER_CHUNK


def segment_sum(values, segment_ids, num_segments):
    return jax.ops.segment_sum(values, segment_ids, num_segments)


def segment_max(values, segment_ids, num_segments, sizes):
    # JAX's maximum starts from -inf: empty segments need no count.
    return jax.ops.segment_max(values, segment_ids, num_segments)


def sums_over_elements(terms, y):
    if terms.shape[2] > MOST_ELEMENTS_PER_CHUNK:
        # Whole sets: within a chunk budget, or without one (a GPU's).
        return generic.sums_over_elements(terms, y)
    # One reduction with two operands: XLA's CPU compiler computes each
    # exponential once, inside the loop that adds it to both sums, and
    # stores none. As two sums, it stores the exponentials and hands each
    # sum to YNNPACK, which also stores y broadcast over the units.
    zero = np.float32(0.0)
    return jax.lax.reduce((terms, y * terms), (zero, zero), _add_pairs, (2,))


def weighted_sum_over_units(exponentials, y, q, weights):
    terms = q.shape[1]
    written_out = (
        y.shape[2] > LONGEST_SET_SUMMED_BY_REDUCTION
        or terms <= MOST_TERMS_WRITTEN_OUT
    )
    if not written_out:
        # A reduction over the units, the set axis minor: XLA's CPU
        # compiler hands it to YNNPACK, fastest with many units on sets of
        # usual sizes.
        exponentials = exponentials(ops.transpose(y, (0, 1, 3, 2)), q)
        weighted_sums = ops.sum(ops.expand_dims(weights, -1) * exponentials, 1)
        return ops.transpose(weighted_sums, (0, 2, 1))
    # One term per unit and term, added up: one loop over the elements,
    # which stores no exponential at any set size (with at most
    # MOST_TERMS_WRITTEN_OUT terms; beyond, on long sets only).
    return sum_of_weighted_terms(
        weights,
        lambda term: exponentials(y, q[:, term : term + 1])[:, 0],
        terms,
    )


def is_traced(tensor):
    # Inside `jax.jit` (`Model.fit`, `predict`).
    return isinstance(tensor, jax.core.Tracer)


def jit_compile_means_xla():
    return True


def needs_static_shapes():
    return True


def lists_devices():
    return True


def laf_programs():
    return "keras_laf.ops.jax_programs"

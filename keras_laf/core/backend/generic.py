"""The backend hooks in plain `keras.ops`: the reference path, used on
every backend without a module of its own (see `keras_laf.core.backend`).
"""

from keras import ops


def chunk_summer(loop):
    """A `sum_over_chunks` whose loop over the chunks is `loop(num_chunks,
    add_chunk, zeros)` (each backend runs it its way)."""

    def sum_over_chunks(chunk_outputs, num_chunks, zeros):
        if isinstance(num_chunks, int) and num_chunks == 1:
            return chunk_outputs(0)

        def add_chunk(index, totals):
            outputs = chunk_outputs(index)
            return tuple(
                total + output for total, output in zip(totals, outputs)
            )

        return loop(num_chunks, add_chunk, zeros)

    return sum_over_chunks


sum_over_chunks = chunk_summer(
    lambda num_chunks, add_chunk, zeros: ops.fori_loop(
        0, num_chunks, add_chunk, zeros
    )
)


def sum_of_weighted_terms(weights, term_values, num_terms):
    """sum_k weights_k term_values(k) over the terms k, written out one
    term at a time: one loop of XLA's over the elements, which stores no
    term (`weights` `(2, num_terms, rows)`, each term `(2, n, rows)`)."""
    total = 0.0
    for term in range(num_terms):
        total = total + weights[:, term, None] * term_values(term)
    return total


def exponentials(exponents):
    return ops.exp(exponents)


def most_elements_per_chunk():
    return None


def sums_over_elements(terms, y):
    return ops.sum(terms, axis=-2), ops.sum(y * terms, axis=-2)


def weighted_sum_over_units(exponentials, y, q, weights):
    # The set axis before the (set, feature) pairs, as they are laid out.
    return ops.sum(ops.expand_dims(weights, -2) * exponentials(y, q), 1)


def segment_sum(values, segment_ids, num_segments):
    return ops.segment_sum(values, segment_ids, num_segments)


def segment_max(values, segment_ids, num_segments, sizes):
    maxima = ops.segment_max(values, segment_ids, num_segments)
    # (num_segments, 1, ..., 1): whatever the backend gives empty segments
    # becomes -inf.
    nonempty = sizes() > 0
    for _ in range(len(maxima.shape) - 1):
        nonempty = ops.expand_dims(nonempty, -1)
    return ops.where(nonempty, maxima, float("-inf"))


def is_traced(tensor):
    """Whether `tensor`'s values are unknown until it runs: never on a
    backend without tracing."""
    return False


def takes_ragged_tensors():
    """Whether layers take `tf.RaggedTensor` inputs: TensorFlow's only."""
    return False


def checks_values_in_traces():
    """Whether a traced function can check a tensor's values as it runs
    (TensorFlow's asserts)."""
    return False


def jit_compile_means_xla():
    """Whether a Keras model's `jit_compile=True` compiles its steps with
    XLA (TensorFlow, JAX)."""
    return False


def needs_static_shapes():
    """Whether traced functions need every shape known as they trace, so
    that new shapes recompile (JAX)."""
    return False


def lists_devices():
    """Whether `keras.distribution.list_devices` reports the devices that
    compute."""
    return False


def prefers_segments_for_padded_sets():
    """Whether LAF computes padded sets as their real elements with
    segment ids: no, the padded path is the reference."""
    return False


def laf_programs():
    """The module of the backend's whole path for LAF over sets, above the
    math (`keras_laf.ops`), or None for the math itself."""
    return None

"""The backend hooks of LAF: one module per Keras backend, one dispatch.

The math (`keras_laf.ops.power_sums`, `keras_laf.ops.formula`) is
`keras.ops`. Where backends' compilers differ in which layout of a loop or
a sum they run fastest, the math calls the functions below, which forward
to the module of the running Keras backend: `tensorflow`, `jax`,
`torch`, or `generic` (plain `keras.ops`, the reference, for every other
backend). The segment reductions of `keras_laf.core.sets.SegmentSets` are
hooks too: they are most of the work of aggregations over segments.
Each module defines every function below, taking from `generic` what it
does not change; no hook module checks which backend runs. The hooks sit
below the math and never import it; a backend's whole path for LAF, where
it has one (`keras_laf.ops.tensorflow_programs`), sits above it.
"""

import keras


def _module():
    # Import statements, not `importlib`: a TensorFlow trace with autograph
    # leaves them alone.
    backend = keras.config.backend()
    if backend == "tensorflow":
        from keras_laf.core.backend import tensorflow as module
    elif backend == "jax":
        from keras_laf.core.backend import jax as module
    elif backend == "torch":
        from keras_laf.core.backend import torch as module
    else:
        from keras_laf.core.backend import generic as module
    return module


def sum_over_chunks(chunk_outputs, num_chunks, zeros):
    """Sums `chunk_outputs(index)`, a tuple of tensors, over the chunks
    `index` in `[0, num_chunks)`, one chunk at a time (`num_chunks` a
    Python int, or a scalar tensor for a set size known only at run
    time), starting from `zeros`, zero tensors of the outputs' shapes.

    Every chunk is computed inside the loop, the first too: computed
    before it, XLA fuses into it the producers of the tensors the chunks
    are read from, which then stay in memory beside those tensors.
    """
    return _module().sum_over_chunks(chunk_outputs, num_chunks, zeros)


def most_elements_per_chunk():
    """The most elements per chunk of padded sets that a chunk budget cuts
    into chunks, or None for as many as the budget allows."""
    return _module().most_elements_per_chunk()


def exponentials(exponents):
    """exp of `exponents`, a float tensor of any shape, that the caller
    no longer needs (PyTorch overwrites it). Used for padded sets, whose
    padding's exponentials all underflow. Results below the dtype's
    smallest normal number may be 0: PyTorch flushes them, as its
    exponential takes a slow path on inputs whose results underflow
    (over segments, where few do, the extra pass would cost more than it
    saves)."""
    return _module().exponentials(exponents)


def sums_over_elements(terms, y):
    """sum_i terms_i and sum_i y_i terms_i over the elements i of a chunk
    of padded sets, axis -2: `(2, 2 * units, rows)` each.

    Args:
        terms: `(2, 2 * units, n, rows)`, the exponentials exp(y q).
        y: `(2, 1, n, rows)`, the shifted logs.
    """
    return _module().sums_over_elements(terms, y)


def weighted_sum_over_units(exponentials, y, q, weights):
    """sum_k weights_k exp(y q_k) over the units and terms k of padded
    sets: `(2, set_size, rows)`, in one pass that XLA fuses with the
    exponentials.

    Args:
        exponentials: `PaddedPowerSums.exponentials`.
        y: `(2, 1, set_size, rows)`, the shifted logs.
        q: `(2, 2 * units)`.
        weights: `(2, 2 * units, rows)`.
    """
    return _module().weighted_sum_over_units(exponentials, y, q, weights)


def segment_sum(values, segment_ids, num_segments):
    """Sums `values` `(num_elements, ...)` over the elements of each
    segment: `(num_segments, ...)`, 0 for empty segments.

    Args:
        values: tensor `(num_elements, ...)`, numeric.
        segment_ids: int tensor `(num_elements,)`, checked to lie in
            `[0, num_segments)`.
        num_segments: int, or a scalar int tensor in a TensorFlow trace.
    """
    return _module().segment_sum(values, segment_ids, num_segments)


def segment_max(values, segment_ids, num_segments, sizes):
    """The largest of `values` `(num_elements, ...)`, float, over each
    segment: `(num_segments, ...)`, `-inf` for empty segments.

    Args:
        values, segment_ids, num_segments: as `segment_sum`.
        sizes: a function of no argument returning the float32 number of
            elements of each segment `(num_segments,)`, called only where
            the backend's maximum does not give empty segments `-inf`
            itself (TensorFlow gives them the lowest finite value).
    """
    return _module().segment_max(values, segment_ids, num_segments, sizes)


def is_traced(tensor):
    """Whether `tensor` is symbolic, its values unknown until it runs.

    True inside `tf.function` (`Model.fit`, `predict`), JAX tracing
    (`jax.jit`), `torch.compile`, and while a functional model is built
    (Keras's PyTorch backend then runs the layers on the "meta" device).
    """
    if isinstance(tensor, keras.KerasTensor):
        return True
    return _module().is_traced(tensor)


def takes_ragged_tensors():
    """Whether the layers take `tf.RaggedTensor` inputs: on TensorFlow."""
    return _module().takes_ragged_tensors()


def checks_values_in_traces():
    """Whether a traced function can check a tensor's values as it runs:
    TensorFlow's asserts, which raise with the batch."""
    return _module().checks_values_in_traces()


def jit_compile_means_xla():
    """Whether a Keras model's `jit_compile=True` compiles its steps with
    XLA: TensorFlow's and JAX's (PyTorch's is `torch.compile`)."""
    return _module().jit_compile_means_xla()


def needs_static_shapes():
    """Whether traced functions need every shape known as they trace, a
    new shape compiling anew: JAX's."""
    return _module().needs_static_shapes()


def lists_devices():
    """Whether `keras.distribution.list_devices` lists the devices that
    compute (TensorFlow, JAX); PyTorch's tensors stay on the CPU unless
    moved."""
    return _module().lists_devices()


def prefers_segments_for_padded_sets():
    """Whether LAF computes padded sets with a mask fastest as their real
    elements with segment ids: PyTorch's segment path reads only the real
    elements in eager calls, where its padded path computes every padded
    position. The outputs are the padded path's, up to rounding."""
    return _module().prefers_segments_for_padded_sets()


def laf_programs():
    """The module of the backend's whole path for LAF over sets
    (`keras_laf.ops.tensorflow_programs`, `jax_programs`), which sits
    above the math and is imported by name; None where the math itself
    runs."""
    return _module().laf_programs()

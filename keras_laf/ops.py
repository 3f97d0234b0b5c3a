"""The LAF function, computed in log space.

For a set x of values in [0, 1] and exponents a..h >= 0,

    L_{a,b}(x) = (sum_i x_i^b)^a
    LAF(x) = (alpha L_{a,b}(x) + beta L_{c,d}(1-x))
             / (gamma L_{e,f}(x) + delta L_{g,h}(1-x))

(Pellegrini et al., "Learning Aggregation Functions", IJCAI 2021).

How it is computed, and why:

- Power sums in log space. With z_i = log x_i (or log(1 - x_i)) and
  M = max_i z_i, log sum_i x_i^b = b M + log sum_i exp(b (z_i - M)).
  Because b >= 0, the shift that keeps the log-sum-exp stable is b M for
  every unit, so M is computed once per set and feature. The inner sum is
  at least 1 for a non-empty set (the largest element contributes
  exp(0) = 1), so it never underflows: (sum x^r)^(1/r) approximates the
  maximum at every scale, with no epsilon clamp on the sum.
- The four terms are divided by their largest value before they are
  exponentiated; the common factor cancels in the ratio, so large sets and
  large exponents neither overflow nor turn into inf / inf.
- The exponentials, one per element, feature, unit and term, are the bulk
  of the work. `_power_sums` never stores them for the whole set: it loops
  over chunks of the set axis, summing each chunk's exponentials, and its
  gradient recomputes them. Memory thus stays at the size of the inputs plus
  the per-set sums. On TensorFlow the padded kernels run as XLA clusters,
  which fuse the exponentials into their sums; on JAX the training step
  is compiled whole.
- Layout: for padded sets every (set, feature) pair lies on one axis,
  the minor axis of the per-set tensors `(2, 2 * units, sets * features)`
  and the one before the set axis in the per-element tensors `(2, sets *
  features, set_size)`, so no exponential needs a transpose. XLA
  vectorises its loops along the minor axis only; with the units there,
  as in `(sets, features, 2, 2 * units)`, most loops over these small
  tensors ran one element at a time (on JAX's CPU backend an epoch of the
  paper's integer model took 1.4x as long, see `benchmarks/laf_layer.py`).

Conventions:

- Inputs are float and clipped into [0, 1] (the paper puts a sigmoid
  before LAF); integer inputs are an error, since clipping would turn them
  into 0 and 1: embed them or scale them into [0, 1].
- NaN or inf in a real element makes that set's output NaN (per feature),
  so the loss shows it; padded positions have no effect whatever they hold.
  Inside the logarithm x and 1 - x are floored at `epsilon`, so 0^b is
  computed as epsilon^b, and the gradient with respect to an element below
  epsilon is 0.
- 0^0 = 1, also for an element equal to 0 (x^0 = 1 for every x).
- A sum over an empty set is 0, and (0)^0 = 1, so for an empty set
  L_{a,b} is 1 when a = 0 and 0 otherwise.
- Near a zero denominator: the magnitude of the denominator is floored at
  `epsilon`, keeping its sign (0 counts as positive). The output stays
  finite and its gradient is zero while the floor is active.
- The output is finally clipped into the finite range of the output dtype.
"""

import functools

import keras
import ml_dtypes
import numpy as np
from keras import ops

from keras_laf.sets import PaddedSets
from keras_laf.sets import SegmentSets
from keras_laf.sets import as_set_batch

EXPONENT_NAMES = ("a", "b", "c", "d", "e", "f", "g", "h")
COEFFICIENT_NAMES = ("alpha", "beta", "gamma", "delta")

# Limits of the floor on the denominator's scaled magnitude: exp(+-80) is a
# normal float32, so the floor never becomes 0 or inf.
_LOG_FLOOR_LIMIT = 80.0
# The set axis is cut into chunks so that no tensor of one exponential per
# element of the whole set is ever stored, only one per element of a chunk:
# padded sets `(2, 2 * units, sets * features, chunk)` with 2^17 values per
# set (512 KiB), flat elements `(chunk, features, 2, 2 * units)` with 2^21
# values (8 MiB). Chunks of at least 16 elements still vectorise well.
# Padded sets on a GPU are one chunk (None): XLA's GPU compiler fuses the
# exponentials into their sums, so the whole set at once stores none of
# them and runs fastest; its CPU compiler stores them. Measured with
# `benchmarks/chunk_budget.py` (64 sets of 1000 elements, 64 features, 10
# units, forward + backward): on an H100 (JAX) one chunk took 0.49 ms and
# 63 MiB, chunks of 32 elements 1.49 ms and 98 MiB; on 2 CPU cores (JAX)
# one chunk took 1.3 GiB, chunks of 32 elements 172 MiB in the same time.
_VALUES_PER_PADDED_CHUNK = {"cpu": 2**17, "gpu": None}
_VALUES_PER_SEGMENT_CHUNK = 2**21
_MIN_CHUNK_SIZE = 16


def _default_platform():
    """Where the backend computes by default: "gpu" or "cpu" (any other
    device counts as a CPU: the chunks were measured on these two)."""
    backend = keras.config.backend()
    if backend == "jax":
        import jax

        return "gpu" if jax.default_backend() == "gpu" else "cpu"
    if backend == "tensorflow":
        import tensorflow as tf

        return "gpu" if tf.config.list_logical_devices("GPU") else "cpu"
    return "cpu"


def _chunk_size(values_per_chunk, *dimensions):
    """The largest number of elements per chunk, a power of 2, for
    `values_per_chunk` values of per-element `dimensions`; None (the whole
    set) for None."""
    if values_per_chunk is None:
        return None
    elements = max(values_per_chunk // int(np.prod(dimensions)), 1)
    return max(2 ** int(np.log2(elements)), _MIN_CHUNK_SIZE)


def _shape(tensor):
    """The shape, static sizes where known, scalar tensors elsewhere."""
    dynamic = ops.shape(tensor)
    return [
        dynamic[axis] if size is None else size
        for axis, size in enumerate(tensor.shape)
    ]


def _to_chunks(tensor, max_chunk_size):
    """Splits axis 0 into equal chunks: `(num_chunks, chunk_size, ...)`.

    As few chunks as `max_chunk_size` allows, at least one; axis 0 is
    zero-padded by less than one element per chunk. One chunk when
    `max_chunk_size` is None.
    """
    size, *rest = _shape(tensor)
    if max_chunk_size is None or not isinstance(size, int):
        # A size known only at run time (a TensorFlow trace with a dynamic
        # set axis) gives one chunk: XLA failed to compile the loops over a
        # run-time number of chunks once the suite had retraced them.
        return ops.expand_dims(tensor, 0)
    num_chunks = max(-(-size // max_chunk_size), 1)
    chunk_size = max(-(-size // num_chunks), 1)
    padding = num_chunks * chunk_size - size
    tensor = ops.pad(tensor, [[0, padding]] + [[0, 0]] * len(rest))
    return ops.reshape(tensor, (num_chunks, chunk_size, *rest))


def _from_chunks(chunks, size):
    """Inverse of `_to_chunks`: `(size, ...)`."""
    flat = ops.reshape(chunks, (-1, *_shape(chunks)[2:]))
    return flat[:size]


def _sum_over_chunks(function, chunks):
    """Sums the outputs of `function` over the chunks, one at a time.

    Args:
        function: maps one chunk (a tuple of tensors) to a tuple of tensors.
        chunks: tuple of tensors `(num_chunks, ...)`.
    """
    num_chunks = chunks[0].shape[0]
    totals = function(*(chunk[0] for chunk in chunks))
    if num_chunks == 1:
        return totals

    def add_chunk(index, totals):
        outputs = function(
            *(ops.take(chunk, index, axis=0) for chunk in chunks)
        )
        return tuple(total + output for total, output in zip(totals, outputs))

    # `_to_chunks` gives a static number of chunks.
    if keras.config.backend() != "tensorflow":
        return ops.fori_loop(1, num_chunks, add_chunk, totals)
    import tensorflow as tf

    # A bound on the iterations lets XLA size the lists in which TensorFlow
    # keeps the loop's values whenever it records the loop for a gradient
    # (the custom gradient of `_power_sums` never uses them).
    _, totals = tf.while_loop(
        lambda index, totals: index < num_chunks,
        lambda index, totals: (index + 1, add_chunk(index, totals)),
        (1, totals),
        maximum_iterations=num_chunks - 1,
    )
    return totals


def _map_over_chunks(function, chunks):
    """`function` applied to each chunk, one at a time.

    Args:
        function: maps one chunk (a tuple of tensors) to a tuple of tensors.
        chunks: tuple of tensors `(num_chunks, ...)`.

    Returns:
        The tuple of outputs, each stacked over the chunks:
        `(num_chunks, ...)`.
    """
    if chunks[0].shape[0] == 1:
        outputs = function(*(chunk[0] for chunk in chunks))
        return tuple(ops.expand_dims(output, 0) for output in outputs)
    return ops.map(lambda chunk: function(*chunk), chunks)


def _padded_chunks(y, mask, chunk_size):
    """The set axis of padded sets cut into chunks.

    Args:
        y: `(2, sets * features, set_size)`.
        mask: boolean `(sets * features, set_size)`.
        chunk_size: int, the largest number of elements per chunk, or
            None for the whole set.

    Returns:
        y `(num_chunks, 2, 1, sets * features, chunk)` and the log of the
        mask `(num_chunks, 1, 1, sets * features, chunk)`: 0 at real
        elements, -inf at padding. The set axis is last: XLA computes the
        exponentials of a sum over the minor axis in a vectorised loop,
        and a sum over a major axis element by element (about 5x slower on
        CPU). Padding is excluded by adding the log of the mask to the
        exponent, which is exact (exp(-inf) = 0 whatever y q is) and, unlike
        selecting with a broadcast mask, keeps that loop vectorised.
    """
    # The set axis first for `_to_chunks`, then last again in each chunk.
    y = _to_chunks(ops.transpose(y, (2, 0, 1)), chunk_size)
    y = ops.expand_dims(ops.transpose(y, (0, 2, 3, 1)), 2)
    # Chunked before the log, so that the padding of the chunks is False.
    mask = _to_chunks(ops.transpose(mask, (1, 0)), chunk_size)
    mask = ops.transpose(mask, (0, 2, 1))[:, None, None]
    return y, ops.where(mask, 0.0, float("-inf"))


def _padded_power_sums(y, mask, q, chunk_size):
    """Sums exp(y q) over each padded set.

    Args:
        y: `(2, sets * features, set_size)`, at most 0.
        mask: boolean `(sets * features, set_size)`.
        q: `(2, 2 * units)`.
        chunk_size: int, the largest number of elements per chunk, or
            None for the whole set.

    Returns:
        `(2, 2 * units, sets * features)`.
    """
    chunks = _padded_chunks(y, mask, chunk_size)
    q = q[:, :, None, None]  # (2, 2 * units, 1, 1)

    def chunk_sums(y, log_mask):
        # (2, 2 * units, sets * features, chunk), zero at padding.
        return (ops.sum(ops.exp(y * q + log_mask), axis=-1),)

    (sums,) = _sum_over_chunks(chunk_sums, chunks)
    return sums


def _padded_power_sums_gradient(y, mask, q, upstream, chunk_size):
    """Gradients of `_padded_power_sums`, given the gradient `upstream` of
    its output: with respect to y `(2, sets * features, set_size)` and to
    q `(2, 2 * units)`.

    The gradient of q sums y exp(y q) over each set, chunk by chunk like
    the forward pass. The gradient of y sums exp(y q) over the units: one
    pass over the whole set, set axis last, which XLA fuses with the
    exponentials and so stores none of them, whatever the set size.
    """
    q = q[:, :, None, None]  # (2, 2 * units, 1, 1)

    def chunk_gradient(y, log_mask):
        # (2, 2 * units, sets * features, chunk), zero at padding.
        exponentials = ops.exp(y * q + log_mask)
        weighted_sums = ops.sum(y * exponentials, axis=-1)
        return (ops.sum(upstream * weighted_sums, axis=-1),)

    chunks = _padded_chunks(y, mask, chunk_size)
    (grad_q,) = _sum_over_chunks(chunk_gradient, chunks)
    # (2, 2 * units, sets * features, set_size)
    exponentials = ops.exp(
        ops.expand_dims(y, 1) * q + ops.where(mask, 0.0, float("-inf"))
    )
    # (2, 2 * units, sets * features, 1)
    weights = ops.expand_dims(upstream, -1) * q
    return ops.sum(weights * exponentials, axis=1), grad_q


def _segment_chunks(y, segment_ids, chunk_size):
    """Elements cut into chunks: y, ids and a validity mask, chunk-major."""
    valid = ops.ones_like(segment_ids, dtype="bool")
    return (
        _to_chunks(ops.expand_dims(y, -1), chunk_size),
        _to_chunks(segment_ids, chunk_size),
        _to_chunks(valid, chunk_size)[:, :, None, None, None],
    )


def _sets_minor(per_set):
    """`(sets, features, 2, k)` -> `(2, k, sets * features)`."""
    sets, features, sources, k = _shape(per_set)
    per_set = ops.transpose(per_set, (2, 3, 0, 1))
    return ops.reshape(per_set, (sources, k, sets * features))


def _segment_power_sums(y, sets, q, chunk_size):
    """`_padded_power_sums` for `SegmentSets`: y `(elements, features, 2)`,
    sums `(2, 2 * units, sets * features)`."""

    def chunk_sums(y, segment_ids, valid):
        # (chunk, features, 2, 2 * units), zero at padding.
        exponentials = ops.where(valid, ops.exp(y * q), 0)
        return (SegmentSets(segment_ids, sets.num_segments).sum(exponentials),)

    chunks = _segment_chunks(y, sets.segment_ids, chunk_size)
    (sums,) = _sum_over_chunks(chunk_sums, chunks)
    return _sets_minor(sums)


def _segment_power_sums_gradient(y, sets, q, upstream, chunk_size):
    """`_padded_power_sums_gradient` for `SegmentSets`."""
    # (2, 2 * units, sets * features) -> (sets, features, 2, 2 * units)
    upstream = ops.reshape(
        upstream, (*_shape(upstream)[:2], sets.num_segments, y.shape[1])
    )
    upstream = ops.transpose(upstream, (2, 3, 0, 1))

    def chunk_gradients(y, segment_ids, valid):
        # (chunk, features, 2, 2 * units), zero at padding.
        exponentials = ops.where(valid, ops.exp(y * q), 0)
        element_upstream = ops.take(upstream, segment_ids, axis=0)
        grad_y = ops.sum(element_upstream * q * exponentials, axis=-1)
        grad_q = ops.sum(element_upstream * y * exponentials, axis=(0, 1))
        return grad_y, grad_q

    chunks = _segment_chunks(y, sets.segment_ids, chunk_size)
    grad_y, grad_q = _map_over_chunks(chunk_gradients, chunks)
    return _from_chunks(grad_y, _shape(y)[0]), ops.sum(grad_q, axis=0)


def _logs(values, epsilon, axis):
    """log x and log(1 - x), floored at log(epsilon), stacked on `axis`."""
    return ops.log(
        ops.maximum(ops.stack([values, 1.0 - values], axis), epsilon)
    )


def _power_sums(values, max_logs, inner_exponents, sets, epsilon, features):
    """Sums exp(q * y) over each set, y = log x - M, storing no per-element
    tensor for the gradient.

    Args:
        values: x, float32 in [0, 1], padding 0: `(sets * features,
            set_size)` for padded sets, `(elements, features)` for segments.
        max_logs: M, per source (x, 1 - x) the largest log of each set; a
            constant (no gradient). `(2, sets * features)` for padded sets,
            `(sets, features, 2)` for segments.
        inner_exponents: q, `(2, 2 * units)`, one row per source.
        sets: for padded sets their boolean mask `(sets * features,
            set_size)`, else the `SegmentSets`.
        epsilon: float, floor of x and 1 - x inside the logarithm.
        features: int, the number of features of each set, which sizes
            the chunks.

    The forward pass computes one exponential per element and unit and
    keeps only their sums; the gradient recomputes them (for padded sets
    twice: in chunks for q, in one fused pass for x). The sums over the
    set axis loop over chunks of it, so memory stays at the size of the
    inputs plus the per-set sums whatever the set size.

    Returns:
        `(2, 2 * units, sets * features)`.
    """
    units = inner_exponents.shape[-1] // 2
    if isinstance(sets, SegmentSets):
        source_axis = -1
        chunk_size = _chunk_size(
            _VALUES_PER_SEGMENT_CHUNK, features, 2, 2 * units
        )

        def shifted_logs(x, m):
            # (elements, features, 2), at most 0.
            return _logs(x, epsilon, source_axis) - sets.broadcast(m)

        def forward(y, q):
            return _segment_power_sums(y, sets, q, chunk_size)

        def backward(y, q, upstream):
            return _segment_power_sums_gradient(
                y, sets, q, upstream, chunk_size
            )

    else:
        source_axis = 0
        chunk_size = _chunk_size(
            _VALUES_PER_PADDED_CHUNK[_default_platform()],
            features,
            2,
            2 * units,
        )

        def shifted_logs(x, m):
            # (2, sets * features, set_size), at most 0 at real elements.
            return _logs(x, epsilon, source_axis) - ops.expand_dims(m, -1)

        def forward(y, q):
            return _padded_power_sums(y, sets, q, chunk_size)

        def backward(y, q, upstream):
            return _padded_power_sums_gradient(y, sets, q, upstream, chunk_size)

    @ops.custom_gradient
    def power_sums(x, m, q):
        # The loops over chunks are never differentiated: their gradient is
        # `backward`. Without stop_gradient, TensorFlow would still record
        # them and keep every iteration's values for a gradient.
        x, m, q = (ops.stop_gradient(tensor) for tensor in (x, m, q))
        sums = forward(shifted_logs(x, m), q)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            upstream = ops.stop_gradient(upstream)
            # y's shape, and (2, 2 * units)
            grad_y, grad_q = backward(shifted_logs(x, m), q, upstream)
            # d log max(x, epsilon) / dx and d log max(1 - x, epsilon) / dx
            # (x is in [0, 1]); 0 where the floor is active.
            grad_log_x = ops.where(
                x > epsilon, 1.0 / ops.maximum(x, epsilon), 0
            )
            grad_log_1_minus_x = ops.where(
                1.0 - x > epsilon, -1.0 / ops.maximum(1.0 - x, epsilon), 0
            )
            grad_x = (
                ops.take(grad_y, 0, axis=source_axis) * grad_log_x
                + ops.take(grad_y, 1, axis=source_axis) * grad_log_1_minus_x
            )
            return grad_x, ops.zeros_like(m), grad_q

        return sums, grad

    return power_sums(values, max_logs, inner_exponents)


def _by_source_and_part(weights, num_per_term):
    # Rows ordered as the four terms L_ab(x), L_cd(1-x), L_ef(x), L_gh(1-x),
    # `num_per_term` rows each: (part, source, ...) -> (source, part, ...),
    # part 0 the numerator, 1 the denominator; source 0 x, 1 1 - x.
    weights = ops.reshape(weights, (2, 2, num_per_term, ops.shape(weights)[-1]))
    return ops.transpose(weights, (1, 0, 2, 3))


def largest_finite(dtype):
    """The largest finite value of a float dtype name, as a Python float."""
    return float(ml_dtypes.finfo(dtype).max)


def _check_float_values(values):
    dtype = keras.backend.standardize_dtype(values.dtype)
    if "float" not in dtype:
        raise ValueError(
            "LAF aggregates values in [0, 1] and needs float inputs; integer "
            "inputs would be clipped into [0, 1]. Embed integers first "
            "(`keras.layers.Embedding` followed by a sigmoid, as in the "
            "paper) or scale them into [0, 1] (e.g. `x / x_max`). "
            f"Received: inputs.dtype={dtype}"
        )


def _padded_power_sums_and_max_logs(values, sets, inner, epsilon):
    """Power sums of padded sets, every (set, feature) pair on the minor
    axis (see the module docstring, "Layout").

    Args:
        values: `(batch, set_size, features)`, padding zeroed.
        sets: `PaddedSets`, the mask `(batch, set_size)`.
        inner: q, `(2, 2 * units)`.
        epsilon: float, floor of x and 1 - x inside the logarithm.

    Returns:
        The sums `(2, 2 * units, sets * features)` and the largest logs
        `(2, sets * features)`.
    """
    batch, set_size, features = _shape(values)
    # (batch, set_size, features) -> (batch * features, set_size)
    # (Sizes, not -1: any of them may be 0.)
    values = ops.reshape(
        ops.transpose(values, (0, 2, 1)), (batch * features, set_size)
    )
    mask = ops.broadcast_to(
        ops.expand_dims(sets.mask, 1), (batch, features, set_size)
    )
    mask = ops.reshape(mask, (batch * features, set_size))
    # (2, batch * features): the largest log x and log(1 - x) of each set.
    logs = _logs(values, epsilon, 0)
    max_logs = ops.max(
        ops.where(mask, logs, float("-inf")), -1, initial=float("-inf")
    )
    max_logs = ops.stop_gradient(
        ops.where(ops.isfinite(max_logs), max_logs, 0.0)
    )
    sums = _power_sums(values, max_logs, inner, mask, epsilon, features)
    return sums, max_logs


def _segment_power_sums_and_max_logs(values, sets, inner, epsilon):
    """`_padded_power_sums_and_max_logs` for `SegmentSets`."""
    # (sets, features, 2)
    max_logs = ops.stop_gradient(sets.max(_logs(values, epsilon, -1)))
    max_logs = ops.where(ops.isfinite(max_logs), max_logs, 0.0)
    sums = _power_sums(values, max_logs, inner, sets, epsilon, values.shape[-1])
    return sums, _sets_minor(ops.expand_dims(max_logs, -1))[:, 0]


def _laf_math(values, sets, exponents, coefficients, epsilon, output_limit):
    """LAF units applied to each feature of each set of a set layout.

    The plain `keras.ops` computation; `laf_over_sets` compiles it on
    TensorFlow. Arguments and result as `laf_over_sets`.
    """
    values = ops.cast(values, "float32")
    # NaN or inf in a real element makes its set's output NaN, so that the
    # loss shows it (and `keras.callbacks.TerminateOnNaN` stops training)
    # instead of the element silently acting as 0 or 1. Padding is zero
    # already. (sets, features)
    finite = ops.isfinite(values)
    nonfinite_sets = sets.sum(ops.cast(ops.logical_not(finite), "float32")) > 0
    values = ops.clip(ops.where(finite, values, 0.0), 0.0, 1.0)

    exponents = _by_source_and_part(ops.cast(exponents, "float32"), 2)
    units = ops.shape(exponents)[-1]
    # (2, 2 * units, 1) and (2, 2 * units): per source, the exponents of
    # the numerator's term then of the denominator's term.
    outer = ops.reshape(exponents[:, :, 0], (2, 2 * units, 1))
    inner = ops.reshape(exponents[:, :, 1], (2, 2 * units))

    # From here on, every set and feature is on the minor axis: sums
    # `(2, 2 * units, sets * features)`, at least 1 for non-empty sets, and
    # the largest logs `(2, sets * features)`, the shift of the log-sum-exp
    # (the result does not depend on it; empty sets get 0).
    if isinstance(sets, SegmentSets):
        power_sums = _segment_power_sums_and_max_logs
    else:
        power_sums = _padded_power_sums_and_max_logs
    sums, max_logs = power_sums(values, sets, inner, epsilon)
    nonempty = sums > 0.5
    log_sums = ops.log(ops.where(nonempty, sums, 1.0)) + ops.expand_dims(
        inner, -1
    ) * ops.expand_dims(max_logs, 1)
    # log L = a log(sum); for an empty set, log(0^a) with 0^0 = 1.
    log_terms = ops.where(
        nonempty,
        outer * log_sums,
        ops.where(outer > 0, float("-inf"), 0.0),
    )
    # (source, part, units, sets * features)
    log_terms = ops.reshape(log_terms, (2, 2, units, _shape(log_terms)[-1]))
    # (1, 1, units, sets * features): the largest of the four terms.
    scale = ops.stop_gradient(ops.max(log_terms, axis=(0, 1), keepdims=True))
    scale = ops.where(ops.isfinite(scale), scale, 0.0)
    scaled_terms = ops.exp(log_terms - scale)

    # (source, part, units, 1)
    coefficients = _by_source_and_part(ops.cast(coefficients, "float32"), 1)
    coefficients = ops.transpose(coefficients, (0, 1, 3, 2))
    # (part, units, sets * features)
    parts = ops.sum(scaled_terms * coefficients, axis=0)
    numerator, denominator = parts[0], parts[1]
    # |denominator| >= epsilon in unscaled units, i.e. epsilon / exp(scale).
    log_floor = ops.clip(
        np.log(epsilon) - scale[0, 0],
        -_LOG_FLOOR_LIMIT,
        _LOG_FLOOR_LIMIT,
    )
    magnitude = ops.maximum(ops.abs(denominator), ops.exp(log_floor))
    denominator = ops.where(denominator < 0, -magnitude, magnitude)
    outputs = ops.clip(numerator / denominator, -output_limit, output_limit)
    # (units, sets * features) -> (sets, features, units)
    num_sets, features = _shape(nonfinite_sets)
    outputs = ops.reshape(outputs, (units, num_sets, features))
    outputs = ops.transpose(outputs, (1, 2, 0))
    return ops.where(ops.expand_dims(nonfinite_sets, -1), float("nan"), outputs)


@functools.cache
def _compiled_padded_laf():
    """`_laf_math` for padded sets as one XLA cluster, on TensorFlow.

    XLA fuses the exponentials into their sums and vectorises them along
    the set axis: about 5x faster than TensorFlow's ops on CPU. On JAX the
    whole training step is compiled anyway.
    """
    import tensorflow as tf

    def padded_laf(values, mask, *args):
        return _laf_math(values, PaddedSets(mask), *args)

    return tf.function(padded_laf, jit_compile=True, autograph=False)


def _bucket_size(set_size):
    """The smallest 2^k or 3 * 2^(k-1) >= set_size (at least 1).

    XLA compiles once per input shape (about a second on CPU): padding the
    set axis to these sizes bounds the number of shapes to two per doubling
    of the set size, for at most a third more work.

    Args:
        set_size: a Python int, or a scalar int tensor when the size is
            known only at run time.

    Returns:
        A Python int for an int, else an int32 scalar tensor: a size known
        when tracing stays known, and so do the shapes computed from it.
    """
    if isinstance(set_size, int):
        power = 2 ** max(set_size - 1, 0).bit_length()
        smaller = 3 * power // 4
        return smaller if power >= 4 and smaller >= set_size else power
    set_size = ops.cast(ops.maximum(set_size, 1), "float64")
    power = 2.0 ** ops.ceil(ops.log2(set_size) - 1e-9)
    smaller = 0.75 * power
    bucket = ops.where((power >= 4) & (smaller >= set_size), smaller, power)
    return ops.cast(bucket, "int32")


def laf_over_sets(values, sets, exponents, coefficients, epsilon, output_limit):
    """LAF units applied to each feature of each set of a set layout.

    The computation behind `laf` and the `LAF` layer, for values already in
    a set layout (see `keras_laf.sets.as_set_batch`). On TensorFlow, padded
    sets run XLA-compiled, their set axis padded to a bucket size; segment
    sets, whose number of sets is a run-time value, run as plain ops.

    Args:
        values: float `(elements..., features)`, padding zeroed.
        sets: `PaddedSets` or `SegmentSets`, the layout of `values`.
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        epsilon: float, floor of x and 1 - x inside the logarithm and of
            the magnitude of the denominator.
        output_limit: float, the output is clipped into
            `[-output_limit, output_limit]`.

    Returns:
        float32 `(sets, features, units)`; NaN for every feature of a set
        with a NaN or infinite real element in that feature.
    """
    _check_float_values(values)
    args = (exponents, coefficients, epsilon, output_limit)
    if keras.config.backend() != "tensorflow" or isinstance(sets, SegmentSets):
        return _laf_math(values, sets, *args)
    set_size = _shape(values)[1]
    padding = _bucket_size(set_size) - set_size
    values = ops.pad(values, [[0, 0], [0, padding], [0, 0]])
    mask = ops.pad(sets.mask, [[0, 0], [0, padding]])
    return _compiled_padded_laf()(values, mask, *args)


def laf(
    inputs,
    exponents,
    coefficients,
    mask=None,
    segment_ids=None,
    num_segments=None,
    epsilon=1e-7,
):
    """Applies LAF units to every feature of every set.

    The functional form of the `keras_laf.LAF` layer, for callers that hold
    the parameters themselves. See the module docstring for the numerics
    and the conventions for empty sets and small denominators.

    Args:
        inputs: a dense tensor `(batch, set_size, features)`, a
            `tf.RaggedTensor` `(batch, None, features)`, or flat values
            `(num_elements, features)` with `segment_ids`. A float dtype:
            values are clipped into [0, 1], and integer inputs raise a
            ValueError (embed them or scale them into [0, 1] first). A NaN
            or infinite real element makes its set's output NaN.
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        mask: optional `(batch, set_size)` for dense inputs: boolean, or
            numeric holding only 0 (padding) and 1 (real elements).
            Padding has no effect whatever it holds.
        segment_ids: optional int `(num_elements,)`, the set of each
            element, in `[0, num_segments)`. Ids out of range raise a
            ValueError in eager calls and, on TensorFlow, an
            `InvalidArgumentError` when a traced call runs.
        num_segments: number of sets with `segment_ids`; defaults to
            `max(segment_ids) + 1`. Pass it as an int inside `jax.jit`.
        epsilon: float. Floor of x and 1 - x inside the logarithm and of the
            magnitude of the denominator. Defaults to `1e-7`.

    Returns:
        float32 tensor `(num_sets, features, units)`: unit k applied to
        feature j of set i at `[i, j, k]`.

    Example:

    >>> import numpy as np
    >>> from keras_laf import closed_form
    >>> exponents, coefficients = closed_form("mean")
    >>> x = np.array([[[0.2], [0.4], [0.9]]], "float32")
    >>> outputs = laf(x, exponents[:, None], coefficients[:, None])
    >>> np.round(keras.ops.convert_to_numpy(outputs), 4)  # the mean
    array([[[0.5]]], dtype=float32)
    """
    values, sets = as_set_batch(inputs, mask, segment_ids, num_segments)
    return laf_over_sets(
        values,
        sets,
        exponents,
        coefficients,
        float(epsilon),
        largest_finite("float32"),
    )

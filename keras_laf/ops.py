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
  of the work. `_power_sums` never stores them for the whole set: on CPU it
  loops over chunks of the set axis, summing each chunk's exponentials, and
  its gradient recomputes them (on a GPU, where XLA fuses the exponentials
  into their sums, a set is one chunk). Memory thus stays at the size of
  the inputs plus the per-set sums. On TensorFlow LAF of padded sets runs
  as three XLA programs, the forward pass and the gradient in two
  (`_compiled_padded_laf`); on JAX the training step is compiled whole.
- Layout: for padded sets every (set, feature) pair lies on one axis,
  the minor axis of the per-set tensors `(2, 2 * units, sets * features)`
  and of the per-element ones `(2, set_size, sets * features)`, so no
  exponential needs a transpose. XLA vectorises its loops along the minor
  axis only: with the units there, as in `(sets, features, 2, 2 *
  units)`, most loops over the small per-set tensors ran one element at a
  time (on JAX's CPU backend an epoch of the paper's integer model took
  1.4x as long, `benchmarks/laf_layer.py`); with the set axis there, a
  sum over 12 or 32 elements took twice as long as with the set axis
  before the pairs (one-off timings of the sums alone).

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


def _chunking(size, max_chunk_size):
    """How an axis of `size` elements is cut into equal chunks.

    As few chunks as `max_chunk_size` allows, at least one, the axis
    zero-padded by less than one element per chunk. One chunk when
    `max_chunk_size` is None, or when the size is known only at run time (a
    TensorFlow trace with a dynamic set axis): XLA failed to compile the
    loops over a run-time number of chunks once the suite had retraced them.

    Returns:
        `(num_chunks, chunk_size, padding)`.
    """
    if max_chunk_size is None or not isinstance(size, int):
        return 1, size, 0
    num_chunks = max(-(-size // max_chunk_size), 1)
    chunk_size = max(-(-size // num_chunks), 1)
    return num_chunks, chunk_size, num_chunks * chunk_size - size


def _to_chunks(tensor, max_chunk_size):
    """Axis 0 cut into equal chunks (`_chunking`): `(num_chunks,
    chunk_size, ...)`."""
    size, *rest = _shape(tensor)
    num_chunks, chunk_size, padding = _chunking(size, max_chunk_size)
    if num_chunks == 1:
        return ops.expand_dims(tensor, 0)
    tensor = ops.pad(tensor, [[0, padding]] + [[0, 0]] * len(rest))
    return ops.reshape(tensor, (num_chunks, chunk_size, *rest))


def _from_chunks(chunks, size):
    """Inverse of `_to_chunks`: `(size, ...)`."""
    flat = ops.reshape(chunks, (-1, *_shape(chunks)[2:]))
    return flat[:size]


def _sum_over_chunks(chunk_outputs, num_chunks):
    """Sums `chunk_outputs(index)`, a tuple of tensors, over the chunks
    `index` in `[0, num_chunks)`, one chunk at a time (`num_chunks` a
    Python int)."""
    totals = chunk_outputs(0)
    if num_chunks == 1:
        return totals

    def add_chunk(index, totals):
        outputs = chunk_outputs(index)
        return tuple(total + output for total, output in zip(totals, outputs))

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


def _logs(values, epsilon, axis):
    """log x and log(1 - x), floored at log(epsilon), stacked on `axis`."""
    return ops.log(
        ops.maximum(ops.stack([values, 1.0 - values], axis), epsilon)
    )


def _log_derivatives(values, epsilon, axis):
    """d log max(x, epsilon) / dx and d log max(1 - x, epsilon) / dx for x
    in [0, 1], stacked on `axis`; 0 where the floor is active."""
    return ops.stack(
        [
            ops.where(values > epsilon, 1.0 / ops.maximum(values, epsilon), 0),
            ops.where(
                1.0 - values > epsilon,
                -1.0 / ops.maximum(1.0 - values, epsilon),
                0,
            ),
        ],
        axis,
    )


def _log_mask(mask):
    """log of a boolean mask: 0 where True, -inf where False."""
    return ops.where(mask, 0.0, float("-inf"))


def _materialized(tensor):
    """`tensor`, computed apart from its consumers in a compiled JAX
    function (elsewhere as it is).

    XLA fuses cheap producers into their consumers and recomputes them for
    every element of the consumer.
    """
    if keras.config.backend() == "jax":
        import jax

        return jax.lax.optimization_barrier(tensor)
    return tensor


def _element_log_mask(mask, features):
    """The log of padded sets' mask `(sets, set_size)` in the layout of
    their elements, `(set_size, sets * features)`: 0 at real elements,
    -inf at padding.

    Stored, not recomputed inside the loops over the exponentials: there
    its (sets, feature) indexing kept XLA's CPU loops from vectorising, and
    the sums took twice as long for the paper's integer model (on
    TensorFlow this runs before the compiled kernels, on JAX behind an
    optimisation barrier).
    """
    num_sets, set_size = _shape(mask)
    log_mask = _log_mask(ops.transpose(mask))
    log_mask = ops.broadcast_to(
        ops.expand_dims(log_mask, -1), (set_size, num_sets, features)
    )
    return _materialized(ops.reshape(log_mask, (set_size, num_sets * features)))


def _sets_minor(per_set):
    """`(sets, features, 2, k)` -> `(2, k, sets * features)`."""
    sets, features, sources, k = _shape(per_set)
    per_set = ops.transpose(per_set, (2, 3, 0, 1))
    return ops.reshape(per_set, (sources, k, sets * features))


class _PaddedPowerSums:
    """The power sums of padded sets, every (set, feature) pair on the
    minor axis, the set axis before it (see the module docstring,
    "Layout").

    Elements x `(set_size, sets * features)`, their largest logs M `(2,
    sets * features)`, inner exponents q `(2, 2 * units)`, sums `(2, 2 *
    units, sets * features)`.

    Args:
        values: `(sets, set_size, features)`, the layout of the inputs.
        log_mask: `(set_size, sets * features)`, the log of the mask in
            x's layout (`_element_log_mask`).
        epsilon: float, floor of x and 1 - x inside the logarithm.
        chunk_size: int, the largest number of elements per chunk, or None
            for the whole set.
    """

    def __init__(self, values, log_mask, epsilon, chunk_size):
        self.num_sets, self.set_size, self.features = _shape(values)
        self.rows = self.num_sets * self.features
        self.log_mask = log_mask
        self.epsilon = epsilon
        self.num_chunks, self.chunk_size, self.padding = _chunking(
            self.set_size, chunk_size
        )

    def layout(self, values):
        """`(sets, set_size, features)` -> x."""
        # (Sizes, not -1: any of them may be 0.)
        return ops.reshape(
            ops.transpose(values, (1, 0, 2)), (self.set_size, self.rows)
        )

    def from_layout(self, per_element):
        """x's layout -> `(sets, set_size, features)`."""
        per_element = ops.reshape(
            per_element, (self.set_size, self.num_sets, self.features)
        )
        return ops.transpose(per_element, (1, 0, 2))

    def max_logs(self, x):
        """M: the largest log x and log(1 - x) of each set, 0 if empty."""
        # x is finite: adding the log of the mask excludes the padding.
        largest = ops.max(x + self.log_mask, 0, initial=float("-inf"))
        smallest = ops.min(x - self.log_mask, 0, initial=float("inf"))
        # log is increasing: the largest logs are those of the extremes.
        max_logs = ops.log(
            ops.maximum(ops.stack([largest, 1.0 - smallest]), self.epsilon)
        )
        nonempty = ops.max(self.log_mask, 0, initial=float("-inf")) == 0
        return ops.where(nonempty, max_logs, 0.0)

    def _shifted_logs(self, x, m):
        """y = log x - M, `(2, 1, set_size, sets * features)`."""
        return ops.expand_dims(_logs(x, self.epsilon, 0) - m[:, None], 1)

    def _chunks(self, y):
        """chunk(index): y and the log of the mask in chunk `index` of the
        set axis, `(2, 1, chunk, sets * features)` and `(chunk, sets *
        features)`.

        The caller computes y for all chunks before the loop: computed
        inside it, XLA fuses the logarithms into the exponentials,
        computing them once per unit (twice as slow on CPU).
        """
        log_mask = self.log_mask
        if self.num_chunks == 1:
            return lambda index: (y, log_mask)
        if self.padding:
            y = ops.pad(y, [[0, 0], [0, 0], [0, self.padding], [0, 0]])
            log_mask = ops.pad(
                log_mask,
                [[0, self.padding], [0, 0]],
                constant_values=float("-inf"),
            )
        # (num_chunks, ...): a chunk is then one slice of the major axis,
        # which XLA reads as fast as a whole tensor.
        y = ops.reshape(y, (2, 1, self.num_chunks, self.chunk_size, self.rows))
        y = ops.transpose(y, (2, 0, 1, 3, 4))
        log_mask = ops.reshape(
            log_mask, (self.num_chunks, self.chunk_size, self.rows)
        )

        def chunk(index):
            return ops.take(y, index, axis=0), ops.take(log_mask, index, axis=0)

        return chunk

    def _exponentials(self, y, log_mask, q):
        """exp(y q) `(2, 2 * units, n, sets * features)`, zero at padding,
        for y `(2, 1, n, sets * features)` and the log of the mask `(n,
        sets * features)`.

        The (set, feature) pairs are minor: XLA computes the exponentials
        in loops vectorised along them and sums over the set axis vector
        by vector (with the set axis minor instead, an XLA sum over it
        took twice as long on CPU, for 12 elements as for 32, in one-off
        timings of the sums alone). Padding is excluded by adding the log
        of the mask to the exponent, which is exact (exp(-inf) = 0
        whatever y q is) and, unlike selecting with a broadcast mask,
        keeps that loop vectorised.
        """
        return ops.exp(y * q[:, :, None, None] + log_mask)

    def _weighted_sum_over_units(self, y, q, weights):
        """sum_k weights_k exp(y q_k) over the units and terms k, for
        weights `(2, 2 * units, sets * features)`: `(2, set_size, sets *
        features)`, in one pass that XLA fuses with the exponentials.

        On JAX this sum runs with the set axis minor: with the set axis
        before the pairs, its CPU backend took 50 times as long (1000
        elements per set). On TensorFlow the transposed log of the mask,
        recomputed inside the loop, made the integer model's epoch twice as
        long, and its XLA is as fast either way otherwise.
        """
        if keras.config.backend() != "jax":
            exponentials = self._exponentials(y, self.log_mask, q)
            return ops.sum(ops.expand_dims(weights, -2) * exponentials, 1)
        exponentials = self._exponentials(
            ops.transpose(y, (0, 1, 3, 2)), ops.transpose(self.log_mask), q
        )
        weighted_sums = ops.sum(ops.expand_dims(weights, -1) * exponentials, 1)
        return ops.transpose(weighted_sums, (0, 2, 1))

    def sums(self, x, m, q):
        """Sums exp(y q) over each set, chunk by chunk."""
        chunk = self._chunks(self._shifted_logs(x, m))

        def chunk_sums(index):
            return (ops.sum(self._exponentials(*chunk(index), q), axis=-2),)

        (sums,) = _sum_over_chunks(chunk_sums, self.num_chunks)
        return sums

    def gradients(self, x, m, q, upstream):
        """Gradients of `sums` with respect to x and to q, given the
        gradient `upstream` of the sums.

        The gradient of q sums y exp(y q) over each set, chunk by chunk
        like `sums`. The gradient of x sums exp(y q) over the units and
        sources: one pass over the whole set, which XLA fuses with the
        exponentials and so stores none of them, whatever the set size.
        """
        y = self._shifted_logs(x, m)
        chunk = self._chunks(y)

        def chunk_gradient(index):
            y, log_mask = chunk(index)
            weighted = y * self._exponentials(y, log_mask, q)
            if keras.config.backend() == "jax":
                # One sum over the elements and pairs: summing the set axis
                # first took six times as long on JAX's CPU backend, and
                # this way 1.7 times as long on TensorFlow's (chunks of the
                # large-set step).
                upstream_per_element = ops.expand_dims(upstream, -2)
                return (ops.sum(upstream_per_element * weighted, (-2, -1)),)
            weighted_sums = ops.sum(weighted, axis=-2)
            return (ops.sum(upstream * weighted_sums, axis=-1),)

        (grad_q,) = _sum_over_chunks(chunk_gradient, self.num_chunks)
        # (2, set_size, sets * features), then combined per source.
        grad_y = self._weighted_sum_over_units(y, q, upstream * q[:, :, None])
        derivatives = _log_derivatives(x, self.epsilon, 0)
        grad_x = grad_y[0] * derivatives[0] + grad_y[1] * derivatives[1]
        return grad_x, grad_q


class _SegmentPowerSums:
    """`_PaddedPowerSums` for `SegmentSets`: x is the elements `(elements,
    features)`, as given, M `(sets, features, 2)`; each chunk of elements
    `(chunk, features, 2, 2 * units)`.

    Args:
        sets: `SegmentSets`.
        epsilon: float, floor of x and 1 - x inside the logarithm.
        chunk_size: int, the largest number of elements per chunk.
    """

    def __init__(self, sets, epsilon, chunk_size):
        self.sets = sets
        self.epsilon = epsilon
        self.chunk_size = chunk_size

    def layout(self, values):
        return values

    def from_layout(self, per_element):
        return per_element

    def max_logs(self, x):
        max_logs = self.sets.max(_logs(x, self.epsilon, -1))
        return ops.where(ops.isfinite(max_logs), max_logs, 0.0)

    def _chunks(self, x, m):
        """y = log x - M `(elements, features, 2, 1)`, the segment ids and
        a validity mask, chunk-major."""
        y = _logs(x, self.epsilon, -1) - self.sets.broadcast(m)
        valid = ops.ones_like(self.sets.segment_ids, dtype="bool")
        return (
            _to_chunks(ops.expand_dims(y, -1), self.chunk_size),
            _to_chunks(self.sets.segment_ids, self.chunk_size),
            _to_chunks(valid, self.chunk_size)[:, :, None, None, None],
        )

    def sums(self, x, m, q):
        chunks = self._chunks(x, m)

        def chunk_sums(index):
            y, segment_ids, valid = (
                ops.take(chunk, index, axis=0) for chunk in chunks
            )
            # (chunk, features, 2, 2 * units), zero at padding.
            exponentials = ops.where(valid, ops.exp(y * q), 0)
            segments = SegmentSets(segment_ids, self.sets.num_segments)
            return (segments.sum(exponentials),)

        (sums,) = _sum_over_chunks(chunk_sums, chunks[0].shape[0])
        return _sets_minor(sums)

    def gradients(self, x, m, q, upstream):
        # (2, 2 * units, sets * features) -> (sets, features, 2, 2 * units)
        upstream = ops.reshape(
            upstream,
            (*_shape(upstream)[:2], self.sets.num_segments, x.shape[1]),
        )
        upstream = ops.transpose(upstream, (2, 3, 0, 1))

        def chunk_gradients(y, segment_ids, valid):
            # (chunk, features, 2, 2 * units), zero at padding.
            exponentials = ops.where(valid, ops.exp(y * q), 0)
            element_upstream = ops.take(upstream, segment_ids, axis=0)
            grad_y = ops.sum(element_upstream * q * exponentials, axis=-1)
            grad_q = ops.sum(element_upstream * y * exponentials, axis=(0, 1))
            return grad_y, grad_q

        grad_y, grad_q = _map_over_chunks(chunk_gradients, self._chunks(x, m))
        # (elements, features, 2)
        grad_y = _from_chunks(grad_y, _shape(x)[0])
        derivatives = _log_derivatives(x, self.epsilon, -1)
        return ops.sum(grad_y * derivatives, axis=-1), ops.sum(grad_q, axis=0)


def _unit_interval(values):
    """Values clipped into [0, 1], NaN and inf replaced by 0 (their sets
    are made NaN by `_laf_math`)."""
    return ops.clip(ops.where(ops.isfinite(values), values, 0.0), 0.0, 1.0)


def _padded_form(values, log_mask, epsilon, units):
    chunk_size = _chunk_size(
        _VALUES_PER_PADDED_CHUNK[_default_platform()],
        values.shape[-1],
        2,
        2 * units,
    )
    return _PaddedPowerSums(values, log_mask, epsilon, chunk_size)


def _segment_form(values, sets, epsilon, units):
    chunk_size = _chunk_size(
        _VALUES_PER_SEGMENT_CHUNK, values.shape[-1], 2, 2 * units
    )
    return _SegmentPowerSums(sets, epsilon, chunk_size)


def _max_logs_of(form_of):
    def max_logs(values, layout, epsilon):
        form = form_of(values, layout, epsilon, 1)
        return form.max_logs(form.layout(_unit_interval(values)))

    return max_logs


def _sums_of(form_of):
    def sums(values, layout, max_logs, q, epsilon):
        form = form_of(values, layout, epsilon, q.shape[-1] // 2)
        return form.sums(form.layout(_unit_interval(values)), max_logs, q)

    return sums


def _gradients_of(form_of):
    def gradients(values, layout, max_logs, q, upstream, epsilon):
        form = form_of(values, layout, epsilon, q.shape[-1] // 2)
        x = form.layout(_unit_interval(values))
        grad_x, grad_q = form.gradients(x, max_logs, q, upstream)
        # NaN, inf and values outside [0, 1] are clipped: no gradient.
        inside = (values >= 0.0) & (values <= 1.0)
        return ops.where(inside, form.from_layout(grad_x), 0.0), grad_q

    return gradients


def _power_sum_kernels(form_of):
    """The three kernels of the power sums for one layout: the largest
    logs M, the sums and their gradients, each a function of the values as
    given, the layout (a padded set's log mask or the `SegmentSets`), and
    epsilon."""
    return _max_logs_of(form_of), _sums_of(form_of), _gradients_of(form_of)


def _power_sums(values, inner_exponents, sets, epsilon):
    """Sums exp(q * y) over each set, y = log x - M, storing no per-element
    tensor for the gradient.

    Args:
        values: the elements as given, padding zeroed: `(sets, set_size,
            features)` for padded sets, `(elements, features)` for
            segments. They are clipped into [0, 1] here (NaN and inf
            count as 0), with gradient zero outside [0, 1].
        inner_exponents: q, `(2, 2 * units)`, one row per source.
        sets: `PaddedSets` or `SegmentSets`.
        epsilon: float, floor of x and 1 - x inside the logarithm.

    The forward pass computes one exponential per element and unit and
    keeps only their sums; the gradient recomputes them (for padded sets
    twice: in chunks for q, in one fused pass for x), and recomputes the
    clipping and the layout of the elements from `values`, so that the
    only per-element tensor it holds is `values` itself. The sums over the
    set axis loop over chunks of it, so memory stays at the size of the
    inputs plus the per-set sums whatever the set size. XLA fuses the
    exponentials into their sums and vectorises them (about 5x faster than
    TensorFlow's ops on CPU): on JAX the training step is compiled whole,
    and on TensorFlow padded sets run the same kernels compiled
    (`_compiled_padded_laf`); segment sets run as plain ops there.

    Returns:
        The sums `(2, 2 * units, sets * features)`, and M, the largest log
        x and log(1 - x) of each set and feature, `(2, sets * features)`
        (0 for empty sets; a constant, the shift of the log-sum-exp).
    """
    if isinstance(sets, SegmentSets):
        layout = sets
        kernels = _power_sum_kernels(_segment_form)
    else:
        layout = _element_log_mask(sets.mask, _shape(values)[-1])
        kernels = _power_sum_kernels(_padded_form)
    max_logs_of, sums_of, gradients_of = kernels
    max_logs = ops.stop_gradient(max_logs_of(values, layout, epsilon))

    @ops.custom_gradient
    def power_sums(values, m, q):
        # The loops over chunks are never differentiated: their gradient is
        # `gradients_of`. Without stop_gradient, TensorFlow would still
        # record them and keep every iteration's values for a gradient.
        values, m, q = (ops.stop_gradient(tensor) for tensor in (values, m, q))
        sums = sums_of(values, layout, m, q, epsilon)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            upstream = ops.stop_gradient(upstream)
            grad_values, grad_q = gradients_of(
                values, layout, m, q, upstream, epsilon
            )
            return grad_values, ops.zeros_like(m), grad_q

        return sums, grad

    sums = power_sums(values, max_logs, inner_exponents)
    if isinstance(sets, SegmentSets):
        # (sets, features, 2) -> (2, sets * features)
        max_logs = _sets_minor(ops.expand_dims(max_logs, -1))[:, 0]
    return sums, max_logs


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


def _outer_and_inner(exponents):
    """The exponents per source (x, then 1 - x), those of the numerator's
    term then of the denominator's: outer (a, e or c, g) `(2, 2 * units,
    1)` and inner (b, f or d, h) `(2, 2 * units)`."""
    exponents = _by_source_and_part(ops.cast(exponents, "float32"), 2)
    units = ops.shape(exponents)[-1]
    outer = ops.reshape(exponents[:, :, 0], (2, 2 * units, 1))
    inner = ops.reshape(exponents[:, :, 1], (2, 2 * units))
    return outer, inner


def _nonfinite_sets(values, sets):
    """True `(sets, features)` where a real element is NaN or infinite.

    Their outputs are made NaN, so that the loss shows it (and
    `keras.callbacks.TerminateOnNaN` stops training) instead of the element
    silently acting as 0 or 1. Padding is zero already.
    """
    nonfinite = ops.cast(ops.logical_not(ops.isfinite(values)), "float32")
    return sets.sum(nonfinite) > 0


def _laf_of_power_sums(
    sums, max_logs, exponents, coefficients, nonfinite_sets, epsilon, limit
):
    """LAF units from the power sums of each set and feature.

    Args:
        sums: `(2, 2 * units, sets * features)` from `_power_sums`, at
            least 1 for non-empty sets.
        max_logs: `(2, sets * features)`, the shift of the log-sum-exp
            (the result does not depend on it; empty sets get 0).
        exponents, coefficients: as `laf_over_sets`.
        nonfinite_sets: bool `(sets, features)`, sets whose output is NaN.
        epsilon: float, floor of the denominator's magnitude.
        limit: float, the output is clipped into `[-limit, limit]`.

    Returns:
        float32 `(sets, features, units)`.
    """
    outer, inner = _outer_and_inner(exponents)
    units = ops.shape(inner)[-1] // 2
    # Every set and feature is on the minor axis.
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
    scale = ops.stop_gradient(
        ops.max(log_terms, axis=(0, 1), keepdims=True, initial=float("-inf"))
    )
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
    outputs = ops.clip(numerator / denominator, -limit, limit)
    # (units, sets * features) -> (sets, features, units)
    num_sets, features = _shape(nonfinite_sets)
    outputs = ops.reshape(outputs, (units, num_sets, features))
    outputs = ops.transpose(outputs, (1, 2, 0))
    return ops.where(ops.expand_dims(nonfinite_sets, -1), float("nan"), outputs)


def _laf_math(values, sets, exponents, coefficients, epsilon, output_limit):
    """LAF units applied to each feature of each set of a set layout, as
    plain `keras.ops` (a JAX step is compiled whole; TensorFlow runs
    padded sets through `_compiled_padded_laf`). Arguments and result as
    `laf_over_sets`."""
    values = ops.cast(values, "float32")
    _, inner = _outer_and_inner(exponents)
    sums, max_logs = _power_sums(values, inner, sets, epsilon)
    nonfinite_sets = _nonfinite_sets(values, sets)
    args = (exponents, coefficients, nonfinite_sets, epsilon, output_limit)
    return _laf_of_power_sums(sums, max_logs, *args)


def _padded_laf_forward(
    values, mask, log_mask, exponents, coefficients, epsilon, limit
):
    """LAF of padded sets, and what its gradient needs besides the inputs
    (`_per_set_gradients`, `_power_sum_gradients`): the power sums, the
    largest logs and the sets made NaN."""
    max_logs_of, sums_of, _ = _power_sum_kernels(_padded_form)
    max_logs = max_logs_of(values, log_mask, epsilon)
    _, inner = _outer_and_inner(exponents)
    sums = sums_of(values, log_mask, max_logs, inner, epsilon)
    nonfinite_sets = _nonfinite_sets(values, PaddedSets(mask))
    outputs = _laf_of_power_sums(
        sums, max_logs, exponents, coefficients, nonfinite_sets, epsilon, limit
    )
    return outputs, (sums, max_logs, nonfinite_sets)


def _per_set_gradients(
    sums, max_logs, nonfinite_sets, exponents, coefficients, upstream, *args
):
    """Gradients of `_padded_laf_forward`'s outputs with respect to the
    power sums, and to the exponents and coefficients through the per-set
    arithmetic alone, given their gradient `upstream`; `args` are epsilon
    and the output limit."""
    import tensorflow as tf

    with tf.GradientTape() as tape:
        tape.watch((sums, exponents, coefficients))
        outputs = _laf_of_power_sums(
            sums, max_logs, exponents, coefficients, nonfinite_sets, *args
        )
    return tape.gradient(
        outputs,
        (sums, exponents, coefficients),
        upstream,
        tf.UnconnectedGradients.ZERO,
    )


def _power_sum_gradients(
    values, log_mask, max_logs, exponents, upstream, epsilon
):
    """Gradients of the power sums of padded sets with respect to the values
    and the exponents, given their gradient `upstream`."""
    import tensorflow as tf

    with tf.GradientTape() as tape:
        tape.watch(exponents)
        _, inner = _outer_and_inner(exponents)
    _, _, gradients_of = _power_sum_kernels(_padded_form)
    grad_values, grad_inner = gradients_of(
        values, log_mask, max_logs, inner, upstream, epsilon
    )
    return grad_values, tape.gradient(inner, exponents, grad_inner)


@functools.cache
def _padded_laf_kernels():
    """`_padded_laf_forward`, `_per_set_gradients` and
    `_power_sum_gradients` as TensorFlow functions compiled by XLA.

    The gradient is two programs: compiled as one, XLA fused the per-set
    gradient into the loop over the elements, recomputing it for each
    element and unit (the integer model's backward pass took 1.7 ms
    against 0.7 ms).
    """
    import tensorflow as tf

    return tuple(
        tf.function(kernel, jit_compile=True, autograph=False)
        for kernel in (
            _padded_laf_forward,
            _per_set_gradients,
            _power_sum_gradients,
        )
    )


def _compiled_padded_laf(
    values, mask, exponents, coefficients, epsilon, output_limit
):
    """`_laf_math` of padded sets on TensorFlow, as three XLA programs
    (`_padded_laf_kernels`): the forward pass, and the gradient in two.

    As plain TensorFlow ops, the per-set arithmetic and its gradient ran
    one small op at a time and took as long as the power sums for the
    paper's integer model (sets of 2..10).

    The gradient is wired by hand, so TensorFlow never differentiates a
    compiled function: the gradient of one passes integers (shapes, a
    transpose's permutation) from its forward function to its backward
    one, and when the compiled function runs inside a step compiled whole
    (a Keras model with `jit_compile=True`, the default on a GPU), XLA then
    needed the step's inputs as compile-time constants and compiled the
    step anew for every batch. The forward pass keeps only the per-set
    tensors for the gradient, besides the inputs.
    """
    forward, per_set_gradients, power_sum_gradients = _padded_laf_kernels()
    log_mask = _element_log_mask(mask, _shape(values)[-1])

    @ops.custom_gradient
    def padded_laf(values, exponents, coefficients):
        # The compiled functions are never differentiated (see above).
        values, exponents, coefficients = (
            ops.stop_gradient(tensor)
            for tensor in (values, exponents, coefficients)
        )
        outputs, residuals = forward(
            values,
            mask,
            log_mask,
            exponents,
            coefficients,
            epsilon,
            output_limit,
        )

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            grad_sums, grad_exponents, grad_coefficients = per_set_gradients(
                *residuals,
                exponents,
                coefficients,
                ops.stop_gradient(upstream),
                epsilon,
                output_limit,
            )
            max_logs = residuals[1]
            grad_values, grad_exponents_of_sums = power_sum_gradients(
                values, log_mask, max_logs, exponents, grad_sums, epsilon
            )
            return (
                grad_values,
                grad_exponents + grad_exponents_of_sums,
                grad_coefficients,
            )

        return outputs, grad

    return padded_laf(
        ops.cast(values, "float32"),
        ops.cast(exponents, "float32"),
        ops.cast(coefficients, "float32"),
    )


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
    a set layout (see `keras_laf.sets.as_set_batch`). On TensorFlow padded
    sets run XLA-compiled (`_compiled_padded_laf`), their set axis padded
    to a bucket size; segment sets, whose number of sets is a run-time
    value, run as plain ops.

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
    return _compiled_padded_laf(values, mask, *args)


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

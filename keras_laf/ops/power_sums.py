"""The power sums of LAF, computed chunk by chunk, and their gradient.

For the elements x of each set and feature, their largest logs M and the
inner exponents q of the units, the power sums are sum_i exp(q y_i) with
y_i = log x_i - M (and likewise for 1 - x). They are the bulk of LAF's
work: one exponential per element, feature, unit and term. The set axis
is cut into chunks (`keras_laf.config.set_chunk_budget`), and each
chunk's exponentials are summed twice before the next, into the power
sums and into their derivatives by q, sum_i y_i exp(q y_i), from which
the gradient of q is one product per set. Where padded sets are known,
when traced, to fit one chunk of the budget, the forward pass keeps their
exponentials (at most the budget's values) and the gradient of the
elements reuses them; otherwise it recomputes them once. Memory thus stays
at the size of the inputs plus the per-set sums, and at most one chunk.

Two layouts: `PaddedPowerSums` (padded sets) and `SegmentPowerSums`
(flat elements with segment ids). Each has `max_logs`, `sums` and
`element_gradients`; `max_logs`, `sums` and `value_gradients` below run
them on the inputs as given, and `power_sums` wires them into one
differentiable function. Where backends differ in which layout of a sum
or loop their compiler runs fastest, the math calls
`keras_laf.core.backend`.
"""

import numpy as np
from keras import ops

from keras_laf.core import backend
from keras_laf.core import config
from keras_laf.core.backend.generic import sum_of_weighted_terms
from keras_laf.core.sets import SegmentSets
from keras_laf.core.sets import reduce_or_initial


def chunk_size(values_per_chunk, *dimensions):
    """The largest number of elements per chunk, a power of 2 (at least
    1), for `values_per_chunk` values of per-element `dimensions` (ints,
    or scalar tensors for sizes known only at run time); None (the whole
    set) for None."""
    if values_per_chunk is None:
        return None
    if all(isinstance(size, int) for size in dimensions):
        per_element = max(int(np.prod(dimensions)), 1)
        elements = max(values_per_chunk // per_element, 1)
        return 2 ** int(np.log2(elements))
    per_element = ops.cast(dimensions[0], "float32")
    for size in dimensions[1:]:
        per_element = per_element * ops.cast(size, "float32")
    elements = ops.maximum(
        values_per_chunk / ops.maximum(per_element, 1.0), 1.0
    )
    return ops.cast(2.0 ** ops.floor(ops.log2(elements)), "int32")


def shape(tensor):
    """The shape, static sizes where known, scalar tensors elsewhere."""
    dynamic = ops.shape(tensor)
    return [
        dynamic[axis] if size is None else size
        for axis, size in enumerate(tensor.shape)
    ]


def chunking(size, max_chunk_size):
    """How an axis of `size` elements is cut into equal chunks.

    As few chunks as `max_chunk_size` allows, at least one, the axis
    zero-padded by less than one element per chunk; one chunk when
    `max_chunk_size` is None. For a size or chunk size known only at run
    time (a scalar tensor: ragged sets, a TensorFlow trace with a dynamic
    set or batch axis), the same arithmetic on tensors: the number of
    chunks is a run-time value.

    Returns:
        `(num_chunks, chunk_size, padding)`, Python ints for int sizes.
    """
    if max_chunk_size is None:
        return 1, size, 0
    if isinstance(size, int) and isinstance(max_chunk_size, int):
        num_chunks = max(-(-size // max_chunk_size), 1)
        chunk_size = max(-(-size // num_chunks), 1)
        return num_chunks, chunk_size, num_chunks * chunk_size - size
    num_chunks = ops.maximum((size + max_chunk_size - 1) // max_chunk_size, 1)
    chunk_size = ops.maximum((size + num_chunks - 1) // num_chunks, 1)
    return num_chunks, chunk_size, num_chunks * chunk_size - size


def is_one(count):
    """Whether `count`, an int or a scalar tensor, is known to be 1."""
    return isinstance(count, int) and count == 1


def to_chunks(tensor, max_chunk_size, padding_value=0):
    """Axis 0 cut into equal chunks (`chunking`): `(num_chunks,
    chunk_size, ...)`, the last chunk padded with `padding_value`."""
    size, *rest = shape(tensor)
    num_chunks, chunk_size, padding = chunking(size, max_chunk_size)
    if is_one(num_chunks):
        return ops.expand_dims(tensor, 0)
    tensor = ops.pad(
        tensor,
        [[0, padding]] + [[0, 0]] * len(rest),
        constant_values=padding_value,
    )
    return ops.reshape(tensor, (num_chunks, chunk_size, *rest))


def from_chunks(chunks, size):
    """Inverse of `to_chunks`: `(size, ...)`."""
    flat = ops.reshape(chunks, (-1, *shape(chunks)[2:]))
    return flat[:size]


def map_over_chunks(function, chunks):
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


def both_sources(values, axis):
    """x and 1 - x on a new axis `axis` of size 2, and a boolean, True at
    x, that broadcasts along it.

    Selected from x by position rather than stacked: XLA's CPU compiler
    runs the concatenation of a stack fused into the logarithms one
    element at a time.
    """
    values = ops.expand_dims(values, axis)
    shape = [1] * len(values.shape)
    shape[axis] = 2
    is_x = ops.reshape(ops.arange(2) == 0, shape)
    return ops.where(is_x, values, 1.0 - values), is_x


def logs(values, epsilon, axis):
    """log x and log(1 - x), floored at log(epsilon), on a new axis
    `axis`."""
    sources, _ = both_sources(values, axis)
    return ops.log(ops.maximum(sources, epsilon))


def log_derivatives(values, epsilon, axis):
    """d log max(x, epsilon) / dx and d log max(1 - x, epsilon) / dx for x
    in [0, 1], on a new axis `axis`; 0 where the floor is active."""
    sources, is_x = both_sources(values, axis)
    inverses = ops.where(
        sources > epsilon, 1.0 / ops.maximum(sources, epsilon), 0.0
    )
    return ops.where(is_x, inverses, -inverses)


# The shifted log of padding, and an offset added to the inner exponents q
# in the exponentials (`PaddedPowerSums.exponentials`): a real element's
# shifted log lies in [log(epsilon), 0], padding's times q +
# INNER_EXPONENT_OFFSET is -1,000 or less (or -inf), whose exponential is
# 0 and whose product with y is 0. At real elements the offset changes
# nothing in float32: q + 1e-35 rounds to q for q of 1e-27 or more, and
# below it the exponent rounds to 0 with or without the offset.
PADDING_SHIFTED_LOG = -1e38
INNER_EXPONENT_OFFSET = 1e-35


def sets_minor(per_set):
    """`(sets, 2, k, features)` -> `(2, k, sets * features)`."""
    sets, sources, k, features = shape(per_set)
    per_set = ops.transpose(per_set, (1, 2, 0, 3))
    return ops.reshape(per_set, (sources, k, sets * features))


def unit_interval(values):
    """Values clipped into [0, 1], NaN replaced by 0: finite values for
    NaN and inf, whose sets the formula makes NaN."""
    values = ops.clip(values, 0.0, 1.0)
    return ops.where(ops.isnan(values), 0.0, values)


class PaddedPowerSums:
    """The power sums of padded sets.

    Every (set, feature) pair lies on the minor axis, the set axis before
    it: elements x `(set_size, sets * features)`, their largest logs M `(2,
    sets * features)`, inner exponents q `(2, 2 * units)`, sums `(2, 2 *
    units, sets * features)`. XLA vectorises its loops along the minor axis
    only, and the per-set tensors are small along every other axis; so no
    exponential needs a transpose.

    Padding is marked in the shifted logs y themselves
    (`PADDING_SHIFTED_LOG`), not by a mask in x's layout: the loops over
    the exponentials read no tensor but y, and no values-sized mask is
    stored.

    Args:
        values: `(sets, set_size, features)`, the layout of the inputs.
        mask: `(sets, set_size)`, boolean, True at real elements.
        epsilon: float, floor of x and 1 - x inside the logarithm.
        chunk_size: int (a scalar tensor where the number of sets is known
            only at run time), the largest number of elements per chunk, or
            None for the whole set.
    """

    def __init__(self, values, mask, epsilon, chunk_size):
        self.num_sets, self.set_size, self.features = shape(values)
        self.rows = self.num_sets * self.features
        self.mask = mask
        self.epsilon = epsilon
        self.num_chunks, self.chunk_size, self.padding = chunking(
            self.set_size, chunk_size
        )
        # Whole sets within a chunk budget: their exponentials fit it, and
        # the gradient reuses them. Not without a budget (a GPU), where
        # they would be a whole batch's and the compiler stores none.
        self.keeps_exponentials = chunk_size is not None and is_one(
            self.num_chunks
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

    def element_mask(self):
        """The mask in x's layout, `(set_size, sets * features)`."""
        mask = ops.broadcast_to(
            ops.expand_dims(ops.transpose(self.mask), -1),
            (self.set_size, self.num_sets, self.features),
        )
        return ops.reshape(mask, (self.set_size, self.rows))

    def max_logs(self, x):
        """M: the largest log x and log(1 - x) of each set, 0 if empty."""
        real = self.element_mask()
        largest = reduce_or_initial(
            ops.max, ops.where(real, x, float("-inf")), 0, float("-inf")
        )
        smallest = reduce_or_initial(
            ops.min, ops.where(real, x, float("inf")), 0, float("inf")
        )
        # log is increasing: the largest logs are those of the extremes.
        max_logs = ops.log(
            ops.maximum(ops.stack([largest, 1.0 - smallest]), self.epsilon)
        )
        return ops.where(largest > float("-inf"), max_logs, 0.0)

    def _shifted_logs(self, x, m):
        """y = log x - M at real elements, `PADDING_SHIFTED_LOG` at
        padding, `(2, 1, set_size, sets * features)`."""
        # The unit axis is x's before the logs, not added to y after: added
        # after, TensorFlow's XLA lays y out with that axis major and copies
        # it into the loop over the chunks, two copies of y at once.
        y = logs(ops.expand_dims(x, 0), self.epsilon, 0) - m[:, None, None]
        return ops.where(self.element_mask(), y, PADDING_SHIFTED_LOG)

    def _chunks(self, y):
        """chunk(index): y in chunk `index` of the set axis, `(2, 1, chunk,
        sets * features)`, read in place from the whole set's.

        Where the chunks do not divide the set, the last one ends at the
        set's end and so overlaps the one before; its elements before the
        chunk's own start count as padding.

        The caller computes y for all chunks before the loop: computed
        inside it, XLA fuses the logarithms into the exponentials and
        computes them once per unit.
        """
        if is_one(self.num_chunks):
            return lambda index: y
        overlaps = not isinstance(self.padding, int) or self.padding

        def chunk(index):
            start = index * self.chunk_size
            read_from = ops.minimum(start, self.set_size - self.chunk_size)
            chunk_y = ops.slice(
                y, (0, 0, read_from, 0), (2, 1, self.chunk_size, self.rows)
            )
            if not overlaps:
                return chunk_y
            counted = ops.arange(self.chunk_size) >= start - read_from
            return ops.where(counted[:, None], chunk_y, PADDING_SHIFTED_LOG)

        return chunk

    @staticmethod
    def exponentials(y, q):
        """exp(y q) `(2, 2 * units, n, rows)` for the shifted logs y `(2,
        1, n, rows)`, zero at padding (`PADDING_SHIFTED_LOG`), where y
        exp(y q) is 0 too."""
        q = q + INNER_EXPONENT_OFFSET
        # Through the backend's hook: padding's exponentials underflow,
        # which PyTorch's exp computes on a slow path unless flushed.
        return backend.exponentials(y * q[:, :, None, None])

    def sums(self, x, m, q):
        """The power sums sum exp(y q) over each set, and their derivatives
        by q, sum y exp(y q), chunk by chunk; and the exponentials `(2, 2 *
        units, set_size, sets * features)` where the layout keeps them
        (`keeps_exponentials`), else None.

        Both sums of a chunk are taken over its exponentials together
        (`keras_laf.core.backend.sums_over_elements`): from a chunk that
        fits the cache (`keras_laf.config`), the derivatives cost one
        multiply-add per exponential. y is finite, so padding adds 0 to
        both.
        """
        chunk = self._chunks(self._shifted_logs(x, m))

        def chunk_sums(index):
            y = chunk(index)
            terms = self.exponentials(y, q)
            return (*backend.sums_over_elements(terms, y), terms)

        if self.keeps_exponentials:
            return chunk_sums(0)
        zeros = ops.zeros((2, q.shape[1], self.rows))
        sums, exponent_derivatives = backend.sum_over_chunks(
            lambda index: chunk_sums(index)[:2], self.num_chunks, (zeros,) * 2
        )
        return sums, exponent_derivatives, None

    def element_gradients(self, x, m, q, upstream, exponentials=None):
        """The gradient of `sums` with respect to x, given the gradient
        `upstream` of the sums: sum_k upstream_k q_k exp(y q_k) over the
        units and sources.

        From the exponentials `sums` kept, where given: one term per unit
        and source, added up, which XLA runs as one loop over them (as a
        reduction over the units, XLA's CPU compiler hands it to YNNPACK,
        which takes longer than recomputing them). Otherwise in one pass
        over the whole set that XLA fuses with the exponentials, and so
        stores none of them, whatever the set size.
        """
        # (2, 2 * units, sets * features)
        weights = upstream * q[:, :, None]
        if exponentials is not None:
            grad_y = sum_of_weighted_terms(
                weights, lambda term: exponentials[:, term], q.shape[1]
            )
        else:
            y = self._shifted_logs(x, m)
            grad_y = backend.weighted_sum_over_units(
                self.exponentials, y, q, weights
            )
        # grad_y: (2, set_size, sets * features), combined per source.
        derivatives = log_derivatives(x, self.epsilon, 0)
        return grad_y[0] * derivatives[0] + grad_y[1] * derivatives[1]


class SegmentPowerSums:
    """`PaddedPowerSums` for `SegmentSets`: x is the elements `(elements,
    features)`, as given, M `(sets, 2, features)`; each chunk of elements
    `(chunk, 2, 2 * units, features)`, the features minor: the innermost
    loops of the exponentials and of their segment sums then run over the
    features, not over the few units, the axis long enough for the CPU's
    vector instructions.

    Args:
        sets: `SegmentSets`.
        epsilon: float, floor of x and 1 - x inside the logarithm.
        chunk_size: int, the largest number of elements per chunk, or None
            for all of them.
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
        max_logs = self.sets.max(logs(x, self.epsilon, 1))
        return ops.where(ops.isfinite(max_logs), max_logs, 0.0)

    def _has_spare_segment(self, x):
        """Whether the elements are cut into chunks, the last one padded
        (`to_chunks`), whose padding goes to a spare segment."""
        return not is_one(chunking(shape(x)[0], self.chunk_size)[0])

    def _chunks(self, x, m):
        """y = log x - M `(elements, 2, 1, features)` and the segment ids,
        chunk-major. The padding of the last chunk belongs to a spare
        segment, `num_segments`, that the sums drop: no mask."""
        y = logs(x, self.epsilon, 1) - self.sets.broadcast(m)
        return (
            to_chunks(ops.expand_dims(y, 2), self.chunk_size),
            to_chunks(
                self.sets.segment_ids,
                self.chunk_size,
                padding_value=self.sets.num_segments,
            ),
        )

    def sums(self, x, m, q):
        chunks = self._chunks(x, m)
        num_segments = self.sets.num_segments + int(self._has_spare_segment(x))
        # (2, 2 * units, 1)
        q = ops.expand_dims(q, -1)

        def chunk_sums(index):
            y, segment_ids = (
                ops.take(chunk, index, axis=0) for chunk in chunks
            )
            # (chunk, 2, 2 * units, features)
            exponentials = ops.exp(y * q)
            segments = SegmentSets(segment_ids, num_segments)
            # Two segment sums, (sets, 2, 2 * units, features) each: their
            # concatenation would copy both terms of every chunk once more
            # before summing them.
            return segments.sum(exponentials), segments.sum(y * exponentials)

        zeros = ops.zeros((num_segments, 2, shape(q)[1], shape(x)[1]))
        sums, exponent_derivatives = backend.sum_over_chunks(
            chunk_sums, shape(chunks[0])[0], (zeros,) * 2
        )
        sums, exponent_derivatives = (
            total[: self.sets.num_segments]
            for total in (sums, exponent_derivatives)
        )
        return (
            sets_minor(sums),
            sets_minor(exponent_derivatives),
            None,
        )

    def element_gradients(self, x, m, q, upstream, exponentials=None):
        # `sums` keeps no exponentials of segments: `exponentials` is None.
        # (2, 2 * units, 1)
        q = ops.expand_dims(q, -1)
        # (2, 2 * units, sets * features) -> (sets, 2, 2 * units, features),
        # weighed by q once per set rather than once per element.
        upstream = ops.reshape(
            upstream,
            (*shape(upstream)[:2], self.sets.num_segments, x.shape[1]),
        )
        upstream = ops.transpose(upstream, (2, 0, 1, 3)) * q
        if self._has_spare_segment(x):
            # The spare segment of the padding: no gradient.
            upstream = ops.pad(upstream, [[0, 1], [0, 0], [0, 0], [0, 0]])

        def chunk_gradients(y, segment_ids):
            # (chunk, 2, 2 * units, features)
            exponentials = ops.exp(y * q)
            element_upstream = ops.take(upstream, segment_ids, axis=0)
            return (ops.sum(element_upstream * exponentials, axis=2),)

        (grad_y,) = map_over_chunks(chunk_gradients, self._chunks(x, m))
        # (elements, 2, features)
        grad_y = from_chunks(grad_y, shape(x)[0])

        def through_log(source, grad_source):
            # grad / source, 0 where log max(source, epsilon) is floored:
            # one source at a time, `(elements, features)`, rather than
            # `log_derivatives` on both stacked.
            inverse = grad_source / ops.maximum(source, self.epsilon)
            return ops.where(source > self.epsilon, inverse, 0.0)

        return through_log(x, grad_y[:, 0]) - through_log(1.0 - x, grad_y[:, 1])


def padded_power_sums(values, mask, epsilon, units, budget):
    """`PaddedPowerSums` of `values` `(sets, set_size, features)` whose
    chunks hold at most `budget` values, all sets together (None: one
    chunk), and, where the sets are cut into chunks, at most the backend's
    most elements per chunk."""
    num_sets, set_size, features = shape(values)
    size = chunk_size(budget, num_sets, features, 2, 2 * units)
    most = backend.most_elements_per_chunk()
    if most is not None and not is_one(chunking(set_size, size)[0]):
        # Sets cut into chunks; sets that fit one chunk stay whole and keep
        # their exponentials (`PaddedPowerSums`). (A scalar tensor where
        # the number of sets is a run-time value.)
        minimum = min if isinstance(size, int) else ops.minimum
        size = minimum(size, most)
    return PaddedPowerSums(values, mask, epsilon, size)


def segment_power_sums(values, sets, epsilon, units, budget):
    """`SegmentPowerSums` of `values` `(elements, features)` whose chunks
    hold at most `budget` values (None: one chunk)."""
    size = chunk_size(budget, values.shape[-1], 2, 2 * units)
    return SegmentPowerSums(sets, epsilon, size)


# The kernels of the power sums, each a function of a layout
# (`PaddedPowerSums` or `SegmentPowerSums`) and of the values as given:
# they clip the values and lay them out themselves, so that a gradient
# needs to keep only the values.


def max_logs(power_sums, values):
    """M, the largest log x and log(1 - x) of each set and feature."""
    return power_sums.max_logs(power_sums.layout(unit_interval(values)))


def sums(power_sums, values, max_logs, q):
    """The power sums `(2, 2 * units, sets * features)`, and their
    derivatives by q (`exponent_gradients` turns them into q's gradient),
    in the same layout."""
    return power_sums.sums(
        power_sums.layout(unit_interval(values)), max_logs, q
    )


def exponent_gradients(exponent_derivatives, upstream):
    """The gradient of the power sums with respect to q `(2, 2 * units)`,
    given their derivatives by q from `sums` and the gradient `upstream`
    of the sums."""
    return ops.sum(upstream * exponent_derivatives, axis=-1)


def value_gradients(
    power_sums, values, max_logs, q, upstream, exponentials=None
):
    """The gradient of the power sums with respect to the values, given
    the gradient `upstream` of the sums and the exponentials `sums` kept
    (None where it kept none)."""
    x = power_sums.layout(unit_interval(values))
    grad_x = power_sums.element_gradients(
        x, max_logs, q, upstream, exponentials
    )
    # NaN, inf and values outside [0, 1] are clipped: no gradient.
    inside = (values >= 0.0) & (values <= 1.0)
    return ops.where(inside, power_sums.from_layout(grad_x), 0.0)


def power_sums(values, inner_exponents, sets, epsilon):
    """Sums exp(q * y) over each set, y = log x - M, storing for the
    gradient no per-element tensor beyond one chunk.

    The forward pass computes one exponential per element and unit and
    keeps two sums of them: the power sums, and their derivatives by q,
    which are the gradient of q once weighed by the upstream gradient.
    The gradient of the values (`value_gradients`) recomputes the
    clipping and the layout of the elements from `values`, and the
    exponentials too unless the padded sets fit one chunk of the budget,
    whose exponentials the forward pass keeps (`PaddedPowerSums.sums`);
    so the only per-element tensors it holds are `values` and at most one
    chunk.

    Args:
        values: the elements as given, padding zeroed: `(sets, set_size,
            features)` for padded sets, `(elements, features)` for
            segments. They are clipped into [0, 1] here (NaN counts as
            0), with gradient zero outside [0, 1].
        inner_exponents: q, `(2, 2 * units)`, one row per source.
        sets: `PaddedSets` or `SegmentSets`.
        epsilon: float, floor of x and 1 - x inside the logarithm.

    Returns:
        The sums `(2, 2 * units, sets * features)`, and M, the largest log
        x and log(1 - x) of each set and feature, `(2, sets * features)`
        (0 for empty sets; a constant, the shift of the log-sum-exp).
    """
    units = inner_exponents.shape[-1] // 2
    if isinstance(sets, SegmentSets):
        budget = config.chunk_budget("segments")
        state = (sets.segment_ids,)

        def make_layout(values, segment_ids):
            segments = SegmentSets(segment_ids, sets.num_segments)
            return segment_power_sums(values, segments, epsilon, units, budget)

    else:
        budget = config.chunk_budget("padded")
        state = (sets.mask,)

        def make_layout(values, mask):
            return padded_power_sums(values, mask, epsilon, units, budget)

    # M is a constant: the values enter without gradient, so that no
    # derivative of their maximum is traced.
    constant_values = ops.stop_gradient(values)
    m = max_logs(make_layout(constant_values, *state), constant_values)

    # The mask or the segment ids enter as arguments, not through the
    # closure: JAX cannot lower a custom gradient that closes over a tensor
    # traced by an enclosing `jax.jit` when `jax.grad` differentiates that
    # jit.
    @ops.custom_gradient
    def differentiable_sums(values, m, q, *state):
        # The loops over chunks are never differentiated: their gradient is
        # `value_gradients` and `exponent_gradients`. Without
        # stop_gradient, TensorFlow would still record them and keep every
        # iteration's values for a gradient.
        values, m, q, *state = (
            ops.stop_gradient(tensor) for tensor in (values, m, q, *state)
        )
        layout = make_layout(values, *state)
        power_sums, exponent_derivatives, exponentials = sums(
            layout, values, m, q
        )

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            upstream = ops.stop_gradient(upstream)
            grad_values = value_gradients(
                layout, values, m, q, upstream, exponentials
            )
            grad_q = exponent_gradients(exponent_derivatives, upstream)
            # m and the mask or segment ids get no gradient.
            m_zeros, *state_zeros = (
                ops.zeros_like(tensor) for tensor in (m, *state)
            )
            return grad_values, m_zeros, grad_q, *state_zeros

        return power_sums, grad

    result = differentiable_sums(values, m, inner_exponents, *state)
    if isinstance(sets, SegmentSets):
        # (sets, 2, features) -> (2, sets * features)
        m = sets_minor(ops.expand_dims(m, 2))[:, 0]
    return result, m

"""Batches of sets in their three input forms, and reductions over sets.

Every aggregation layer of keras_laf accepts a batch of sets as

1. a dense tensor `(batch, set_size, features)`, optionally with a boolean
   mask `(batch, set_size)` marking the real elements,
2. a `tf.RaggedTensor` `(batch, None, features)`,
3. flat element values `(num_elements, features)` with `segment_ids`
   `(num_elements,)` naming the set of each element (the graph form).

`as_set_batch` turns any of them into element values plus a set layout,
`PaddedSets` or `SegmentSets`, that reduces per-element tensors to per-set
tensors and copies per-set tensors back to the elements. Code written
against the layout serves all three forms.
"""

import numpy as np
import tensorflow as tf
from keras import ops


class PaddedSets:
    """Sets stored as padded rows: element tensors `(batch, set_size, ...)`.

    Args:
        mask: boolean tensor `(batch, set_size)`, True for real elements.
    """

    def __init__(self, mask):
        self.mask = mask

    def _element_mask(self, values):
        # (batch, set_size, 1, ..., 1), broadcastable against `values`.
        mask = self.mask
        for _ in range(len(values.shape) - 2):
            mask = ops.expand_dims(mask, -1)
        return mask

    def sizes(self):
        """Number of elements of each set, float32 `(batch,)`."""
        return ops.sum(ops.cast(self.mask, "float32"), axis=1)

    def sum(self, values):
        """Sums `(batch, set_size, ...)` over each set: `(batch, ...)`."""
        return ops.sum(ops.where(self._element_mask(values), values, 0), 1)

    def max(self, values):
        """Maximum over each set, `(batch, ...)`; `-inf` for empty sets."""
        masked = ops.where(self._element_mask(values), values, float("-inf"))
        return ops.max(masked, axis=1)

    def broadcast(self, per_set):
        """Copies `(batch, ...)` to every element: `(batch, set_size, ...)`.

        Padded positions get zeros, so no gradient flows through them.
        """
        per_element = ops.expand_dims(per_set, 1)
        return ops.where(self._element_mask(per_element), per_element, 0)

    def _set_axis_last(self, y, q):
        # The set axis goes last: XLA vectorises the exponentials and the
        # reduction along the minor axis, about 6x faster on CPU than along
        # axis 1. (batch, features, 2, 1, set_size) * (2, 2 * units, 1)
        y = ops.expand_dims(ops.transpose(y, (0, 2, 3, 1)), 3)
        q = ops.expand_dims(q, -1)
        mask = self.mask[:, None, None, None, :]
        return y, q, mask

    def power_sums(self, y, q):
        """Sums exp(y q) and y exp(y q) over each set.

        Args:
            y: `(batch, set_size, features, 2)`, at most 0.
            q: `(2, 2 * units)`.

        Returns:
            Two tensors `(batch, features, 2, 2 * units)`. The second is the
            derivative of the first with respect to q, before summing over
            batch and features.
        """
        y, q, mask = self._set_axis_last(y, q)
        # (batch, features, 2, 2 * units, set_size), zero at padding.
        exponentials = ops.where(mask, ops.exp(y * q), 0)
        # y exp(q y) = -exp(q y + log(-y)): with its own exponential, each
        # sum fuses with its exponentials instead of both reading one
        # stored tensor.
        # -y is floored so that the largest element (y = 0) gives a finite
        # log and a negligible term instead of log(0) = -inf.
        log_minus_y = ops.log(ops.maximum(-y, 1e-30))
        weighted = ops.where(mask, ops.exp(y * q + log_minus_y), 0)
        return ops.sum(exponentials, -1), -ops.sum(weighted, -1)

    def power_sums_gradient(self, y, q, upstream):
        """Gradient of the first output of `power_sums` with respect to y."""
        y, q, mask = self._set_axis_last(y, q)
        exponentials = ops.where(mask, ops.exp(y * q), 0)
        # (batch, features, 2, 2 * units, 1)
        weights = ops.expand_dims(upstream, -1) * q
        grad_y = ops.sum(weights * exponentials, axis=3)
        # (batch, features, 2, set_size) -> (batch, set_size, features, 2)
        return ops.transpose(grad_y, (0, 3, 1, 2))


class SegmentSets:
    """Sets given by segment ids: element tensors `(num_elements, ...)`.

    Args:
        segment_ids: int tensor `(num_elements,)`, the set of each element,
            in `[0, num_segments)`; need not be sorted.
        num_segments: int or scalar int tensor, the number of sets.
    """

    def __init__(self, segment_ids, num_segments):
        self.segment_ids = segment_ids
        self.num_segments = num_segments

    def sizes(self):
        """Number of elements of each set, float32 `(num_segments,)`."""
        ones = ops.ones_like(self.segment_ids, dtype="float32")
        return self.sum(ones)

    def sum(self, values):
        """Sums `(num_elements, ...)` over each set: `(num_segments, ...)`."""
        return ops.segment_sum(values, self.segment_ids, self.num_segments)

    def max(self, values):
        """Maximum over each set, `(num_segments, ...)`; `-inf` if empty."""
        maxima = ops.segment_max(values, self.segment_ids, self.num_segments)
        # TensorFlow fills empty segments with the lowest finite value.
        nonempty = self.sizes() > 0
        for _ in range(len(maxima.shape) - 1):
            nonempty = ops.expand_dims(nonempty, -1)
        return ops.where(nonempty, maxima, float("-inf"))

    def broadcast(self, per_set):
        """Copies `(num_segments, ...)` to every element of its set."""
        return ops.take(per_set, self.segment_ids, axis=0)

    def to_padded(self, values):
        """Padded sets, elements in their order of appearance.

        Args:
            values: `(num_elements, ...)`.

        Returns:
            A tuple `(values, sets)`: `(num_segments, max_size, ...)` with
            zeros at padded positions, and their `PaddedSets`.
        """
        # A stable sort keeps the order of appearance within each set.
        order = tf.argsort(self.segment_ids, stable=True)
        sets = tf.RaggedTensor.from_value_rowids(
            ops.take(values, order, axis=0),
            ops.take(self.segment_ids, order),
            nrows=self.num_segments,
        )
        return as_set_batch(sets)

    def power_sums(self, y, q):
        """Sums exp(y q) and y exp(y q) over each set.

        Args:
            y: `(num_elements, features, 2)`.
            q: `(2, 2 * units)`.

        Returns:
            Two tensors `(num_segments, features, 2, 2 * units)`.
        """
        y = ops.expand_dims(y, -1)
        exponentials = ops.exp(y * q)
        return self.sum(exponentials), self.sum(exponentials * y)

    def power_sums_gradient(self, y, q, upstream):
        """Gradient of the first output of `power_sums` with respect to y."""
        # (num_elements, features, 2, 2 * units)
        exponentials = ops.exp(ops.expand_dims(y, -1) * q)
        return ops.sum(self.broadcast(upstream) * exponentials * q, axis=-1)


def _check_features(values, expected_rank, form):
    if len(values.shape) != expected_rank:
        layout = (
            "(num_elements, features)"
            if expected_rank == 2
            else "(batch, set_size, features)"
        )
        raise ValueError(
            f"{form} inputs must have rank {expected_rank}, {layout}. "
            f"Received: inputs.shape={values.shape}"
        )


def _check_segment_ids(values, segment_ids, num_segments):
    segment_ids = tf.convert_to_tensor(segment_ids)
    if not segment_ids.dtype.is_integer:
        raise ValueError(
            "`segment_ids` must be an integer tensor. "
            f"Received: segment_ids.dtype={segment_ids.dtype.name}"
        )
    if len(segment_ids.shape) != 1:
        raise ValueError(
            "`segment_ids` must have rank 1, one id per element. "
            f"Received: segment_ids.shape={segment_ids.shape}"
        )
    num_elements = values.shape[0]
    if (
        num_elements is not None
        and segment_ids.shape[0] is not None
        and segment_ids.shape[0] != num_elements
    ):
        raise ValueError(
            "`segment_ids` must have one id per element of `inputs`. "
            f"Received: segment_ids.shape={segment_ids.shape} for "
            f"inputs.shape={values.shape}"
        )
    segment_ids = ops.cast(segment_ids, "int32")
    if num_segments is None:
        num_segments = ops.max(segment_ids, initial=-1) + 1
    elif isinstance(num_segments, (int, np.integer)) and num_segments < 0:
        raise ValueError(
            "`num_segments` must be a non-negative integer. "
            f"Received: num_segments={num_segments}"
        )
    return segment_ids, num_segments


def _check_mask(values, mask):
    mask = tf.convert_to_tensor(mask)
    if len(mask.shape) != 2 or any(
        expected is not None and received is not None and expected != received
        for expected, received in zip(values.shape[:2], mask.shape)
    ):
        raise ValueError(
            "`mask` must have shape (batch, set_size) matching the inputs. "
            f"Received: mask.shape={mask.shape} for inputs.shape={values.shape}"
        )
    return ops.cast(mask, "bool")


def as_set_batch(inputs, mask=None, segment_ids=None, num_segments=None):
    """Turns a batch of sets in any input form into values and a layout.

    Args:
        inputs: a dense tensor `(batch, set_size, features)`, a
            `tf.RaggedTensor` `(batch, None, features)`, or flat values
            `(num_elements, features)` when `segment_ids` is given.
        mask: optional boolean tensor `(batch, set_size)` for dense inputs.
        segment_ids: optional int tensor `(num_elements,)`.
        num_segments: number of sets for the segment form. Defaults to
            `max(segment_ids) + 1`.

    Returns:
        A tuple `(values, sets)`: `values` holds the elements, with every
        padded position set to zero so that whatever it held (even NaN)
        cannot reach the result; `sets` is a `PaddedSets` or `SegmentSets`.
    """
    if segment_ids is not None:
        if isinstance(inputs, tf.RaggedTensor) or mask is not None:
            raise ValueError(
                "`segment_ids` needs flat dense inputs (num_elements, "
                "features) and no mask. Received: "
                f"inputs of type {type(inputs).__name__}, mask={mask}"
            )
        _check_features(inputs, 2, "Segment-form")
        segment_ids, num_segments = _check_segment_ids(
            inputs, segment_ids, num_segments
        )
        return inputs, SegmentSets(segment_ids, num_segments)
    if num_segments is not None:
        raise ValueError(
            "`num_segments` is only meaningful with `segment_ids`. "
            f"Received: num_segments={num_segments}, segment_ids=None"
        )
    if isinstance(inputs, tf.RaggedTensor):
        if mask is not None:
            raise ValueError(
                "Ragged inputs carry their set sizes; a mask cannot be "
                f"combined with them. Received: mask={mask}"
            )
        if inputs.ragged_rank != 1 or len(inputs.shape) != 3:
            raise ValueError(
                "Ragged inputs must have shape (batch, None, features) with "
                "only the set axis ragged. Received: "
                f"shape={inputs.shape}, ragged_rank={inputs.ragged_rank}"
            )
        # A Keras mask cannot describe a ragged batch; the row lengths do.
        values = inputs.to_tensor()
        mask = tf.sequence_mask(
            inputs.row_lengths(), maxlen=tf.shape(values)[1]
        )
        return values, PaddedSets(mask)
    _check_features(inputs, 3, "Dense")
    if mask is None:
        mask = ops.ones(ops.shape(inputs)[:2], dtype="bool")
        return inputs, PaddedSets(mask)
    mask = _check_mask(inputs, mask)
    values = ops.where(ops.expand_dims(mask, -1), inputs, 0)
    return values, PaddedSets(mask)


def to_padded(inputs, mask=None):
    """Padded values for layers that keep the set axis (attention, ...).

    Args:
        inputs: a dense tensor `(batch, set_size, features)` or a
            `tf.RaggedTensor` `(batch, None, features)`.
        mask: optional boolean `(batch, set_size)` for dense inputs.

    Returns:
        A tuple `(values, mask, row_lengths)`. Dense inputs without a mask
        pass through with `mask=None`; dense inputs with a mask and ragged
        inputs come back padded, padded positions zeroed, with their
        `(batch, set_size)` mask. `row_lengths` is the ragged row lengths,
        or None for dense inputs; `from_padded` restores the input form.
    """
    if isinstance(inputs, tf.RaggedTensor):
        values, sets = as_set_batch(inputs)
        return values, sets.mask, inputs.row_lengths()
    values, sets = as_set_batch(inputs, mask)
    return values, (None if mask is None else sets.mask), None


def from_padded(outputs, mask, row_lengths):
    """Zeroes padded rows; ragged again when the inputs were ragged."""
    if mask is not None:
        outputs = ops.where(ops.expand_dims(mask, -1), outputs, 0)
    if row_lengths is not None:
        return tf.RaggedTensor.from_tensor(outputs, lengths=row_lengths)
    return outputs

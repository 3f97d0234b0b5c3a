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

Everything here is `keras.ops`, so it runs on every Keras backend, except
ragged tensors: they exist only in TensorFlow, so they are accepted on the
TensorFlow backend alone. TensorFlow is never imported here; a ragged
tensor can only exist once TensorFlow has been imported by its creator.
"""

import re

import keras
import numpy as np
from keras import ops

from keras_laf.core import backend
from keras_laf.core.validation import is_traced
from keras_laf.core.validation import tensorflow_module


def is_ragged(inputs):
    """Whether `inputs` is a `tf.RaggedTensor` on the TensorFlow backend.

    False on every other backend, where layers refuse ragged tensors
    before they reach here (`keras_laf.core.validation.check_backend_supports`).
    Never imports TensorFlow.
    """
    tf = tensorflow_module()
    return (
        backend.takes_ragged_tensors()
        and tf is not None
        and isinstance(inputs, tf.RaggedTensor)
    )


def _checked(tensor, find_error, assertions):
    """`tensor`, its values checked where the backend allows.

    Eagerly `find_error(numpy_values)` returns a message (raised as a
    ValueError) or None. In a traced TensorFlow function
    `assertions(tf, tensor)` gives `(condition, message)` pairs, checked
    with the batch: a False condition raises
    `tf.errors.InvalidArgumentError` with its message. TensorFlow puts the
    message after the stack of the op that failed, thousands of characters
    in, but names that op in its first line ("Detected at node
    .../segment_ids_holds_a_negative_index/Assert"): the op is named after
    the message, so the cause comes first. (The message alone,
    a string, makes a plain Assert op; with tensors as data TensorFlow
    guards it by a `tf.cond`, whose predicate XLA takes as a compile-time
    constant, so a model compiled with `jit_compile=True` was compiled
    anew for every batch. XLA skips the plain Assert.) Traced JAX
    functions cannot check values, nor can a functional model under
    construction.
    """
    if not is_traced(tensor):
        message = find_error(ops.convert_to_numpy(tensor))
        if message is not None:
            raise ValueError(message)
        return tensor
    if not backend.checks_values_in_traces() or isinstance(
        tensor, keras.KerasTensor
    ):
        return tensor
    tf = tensorflow_module()
    checks = [
        tf.debugging.Assert(
            condition,
            [message],
            name=re.sub("[^A-Za-z0-9]+", "_", message).strip("_"),
        )
        for condition, message in assertions(tf, tensor)
    ]
    with tf.control_dependencies(checks):
        return tf.identity(tensor)


def checked_indices(indices, limit, name, items):
    """`indices` as int32, checked to lie in `[0, limit)` (see `_checked`).

    Out-of-range indices raise a ValueError eagerly and, on TensorFlow, a
    `tf.errors.InvalidArgumentError` in traced functions (`Model.fit`,
    `predict`, `tf.function`). Inside `jax.jit` JAX's gathers and
    scatters drop or clamp them.

    Args:
        indices: int tensor.
        limit: int or scalar int tensor, one past the largest valid index.
        name: str, the argument's name, for the message.
        items: str, what the indices count (`"nodes"`, `"sets"`).
    """

    def find_error(values):
        upper = int(ops.convert_to_numpy(limit))
        if not values.size or 0 <= values.min() <= values.max() < upper:
            return None
        cause = (
            "a negative index"
            if values.min() < 0
            else f"an index beyond the {items}"
        )
        return (
            f"`{name}` holds {cause}: it must hold indices in [0, {upper}) "
            f"of the {items}. Received indices from {values.min()} to "
            f"{values.max()}"
        )

    def assertions(tf, indices):
        return [
            (
                tf.reduce_all(indices >= 0),
                f"`{name}` holds a negative index",
            ),
            (
                tf.reduce_all(indices < tf.cast(limit, "int32")),
                f"`{name}` holds an index beyond the {items}",
            ),
        ]

    return _checked(ops.cast(indices, "int32"), find_error, assertions)


def reduce_or_initial(reduction, tensor, axis, initial, keepdims=False):
    """`reduction(tensor, axis, initial=initial)`, also for empty tensors.

    `reduction` is `ops.max` or `ops.min`. Where a dimension of `tensor`
    is 0, every reduced value is `initial`: Keras's PyTorch `max` and
    `min` with `initial` return a scalar for any tensor with a 0 in its
    shape, whichever axis is reduced, and JAX refuses an empty reduction
    without `initial`.

    Args:
        reduction: `ops.max` or `ops.min`.
        tensor: the tensor to reduce.
        axis: int or tuple of ints, the axes reduced.
        initial: float, the value of an empty reduction.
        keepdims: bool, whether the reduced axes stay, of size 1.
    """
    if 0 not in tuple(tensor.shape):
        return reduction(tensor, axis, keepdims=keepdims, initial=initial)
    axes = {a % len(tensor.shape) for a in np.atleast_1d(axis)}
    dynamic = ops.shape(tensor)
    reduced = [
        1 if index in axes else dynamic[index] if size is None else size
        for index, size in enumerate(tensor.shape)
        if keepdims or index not in axes
    ]
    return ops.full(reduced, initial, dtype=tensor.dtype)


class PaddedSets:
    """Sets stored as padded rows: element tensors `(batch, set_size, ...)`.

    Args:
        mask: boolean tensor `(batch, set_size)`, True for real elements.
    """

    def __init__(self, mask):
        self.mask = mask
        self._sizes = None

    def _element_mask(self, values):
        # (batch, set_size, 1, ..., 1), broadcastable against `values`.
        mask = self.mask
        for _ in range(len(values.shape) - 2):
            mask = ops.expand_dims(mask, -1)
        return mask

    def sizes(self):
        """Number of elements of each set, float32 `(batch,)`, counted
        once per layout."""
        if self._sizes is None:
            self._sizes = ops.sum(ops.cast(self.mask, "float32"), axis=1)
        return self._sizes

    def num_elements(self):
        """Number of real elements of all sets, float32 scalar."""
        return ops.sum(self.sizes())

    def sum(self, values):
        """Sums `(batch, set_size, ...)` over each set: `(batch, ...)`."""
        return ops.sum(ops.where(self._element_mask(values), values, 0), 1)

    def any(self, values):
        """Whether any element of each set is True, for boolean `(batch,
        set_size, ...)`: `(batch, ...)`; False for empty sets."""
        return ops.any(ops.logical_and(self._element_mask(values), values), 1)

    def max(self, values):
        """Maximum over each set, `(batch, ...)`; `-inf` for empty sets."""
        masked = ops.where(self._element_mask(values), values, float("-inf"))
        return reduce_or_initial(ops.max, masked, 1, float("-inf"))

    def broadcast(self, per_set):
        """Copies `(batch, ...)` to every element: `(batch, set_size, ...)`.

        Padded positions get zeros, so no gradient flows through them.
        """
        per_element = ops.expand_dims(per_set, 1)
        return ops.where(self._element_mask(per_element), per_element, 0)


def segment_padding_compiles(input_shape):
    """Whether an aggregation that pads its sets (`SegmentSets.to_padded`
    with its defaults) compiles with XLA on inputs of `input_shape`.

    Not for flat elements with segment ids `(num_elements, features)` on
    TensorFlow, which pads them through a ragged tensor
    (`RaggedTensorToTensor` has no XLA kernel). Such a layer sets Keras's
    `supports_jit` to this in `build`, so that a model holding it is not
    compiled with XLA: `jit_compile="auto"` resolves to `False` and
    `jit_compile=True` falls back to it with Keras's warning, instead of
    failing in `fit`.

    Args:
        input_shape: the shape of the layer's input values.
    """
    return len(input_shape) != 2 or not backend.takes_ragged_tensors()


class SegmentSets:
    """Sets given by segment ids: element tensors `(num_elements, ...)`.

    The reductions run on the backend's segment reductions
    (`keras_laf.core.backend.segment_sum`, `segment_max`); the sizes of the
    sets are counted once per layout, whichever reductions need them.

    Args:
        segment_ids: int tensor `(num_elements,)`, the set of each element,
            in `[0, num_segments)`; need not be sorted.
        num_segments: int or scalar int tensor, the number of sets.
    """

    def __init__(self, segment_ids, num_segments):
        self.segment_ids = segment_ids
        self.num_segments = num_segments
        self._sizes = None

    def sizes(self):
        """Number of elements of each set, float32 `(num_segments,)`,
        counted once per layout."""
        if self._sizes is None:
            ones = ops.ones_like(self.segment_ids, dtype="float32")
            self._sizes = self.sum(ones)
        return self._sizes

    def num_elements(self):
        """Number of elements of all sets, float32 scalar: every element
        belongs to a set. Not counted from `sizes`, so that what needs
        only the count does not wait for their segment sum."""
        return ops.cast(ops.shape(self.segment_ids)[0], "float32")

    def sum(self, values):
        """Sums `(num_elements, ...)` over each set: `(num_segments, ...)`."""
        return backend.segment_sum(values, self.segment_ids, self.num_segments)

    def any(self, values):
        """Whether any element of each set is True, for boolean
        `(num_elements, ...)`: `(num_segments, ...)`; False if empty."""
        return self.sum(ops.cast(values, "int32")) > 0

    def max(self, values):
        """Maximum over each set, `(num_segments, ...)`; `-inf` if empty."""
        return backend.segment_max(
            values, self.segment_ids, self.num_segments, self.sizes
        )

    def broadcast(self, per_set):
        """Copies `(num_segments, ...)` to every element of its set."""
        return ops.take(per_set, self.segment_ids, axis=0)

    def to_padded(self, values, segments=None, set_size=None):
        """Padded sets, elements in their order of appearance.

        On TensorFlow, by default, the sets go through a ragged tensor and
        are padded to the largest of them, a size known only at run time.
        Elsewhere, or with `segments` or `set_size`, the elements are
        gathered with `keras.ops` into rows of a static width: traced JAX
        functions (`jax.jit`, `Model.fit`) need every shape known as they
        trace, and the size of the largest set is a value, not a shape.

        Args:
            values: `(num_elements, ...)`.
            segments: optional int tensor `(num_rows,)`, the set padded
                into each row: an index in `[0, num_segments)`, or
                `num_segments` for an empty row. Defaults to every set in
                order.
            set_size: optional int, the width of the rows. No set in a row
                may have more elements: the ones beyond it are dropped.
                Defaults to the size of the largest set where the sizes
                can be read (eager calls), else to `num_elements`, the one
                static bound on a set's size, for `(num_rows,
                num_elements, ...)` padded values: where memory matters,
                pad sets of similar sizes together, as
                `keras_laf.GraphMultisetTransformer` does. At least 1, so
                that an empty set is one masked-out element.

        Returns:
            A tuple `(values, sets)`: `(num_rows, set_size, ...)` with
            zeros at padded positions, and their `PaddedSets`.
        """
        if (
            backend.takes_ragged_tensors()
            and segments is None
            and set_size is None
        ):
            return self._to_padded_through_ragged(values)
        values = ops.convert_to_tensor(values)
        # Counts in float32 are exact up to 2**24 elements per set.
        sizes = ops.cast(self.sizes(), "int32")  # (num_segments,)
        if set_size is None:
            set_size = self._largest_size(sizes, values)
        if segments is None:
            segments = ops.arange(ops.shape(sizes)[0], dtype="int32")
        # The elements sorted by set: set s holds the sorted positions
        # [starts[s], starts[s] + sizes[s]). Keras's argsort keeps equal
        # ids in their order on every backend (TensorFlow's through
        # `top_k`), so each set keeps its order of appearance.
        order = ops.argsort(self.segment_ids)  # (num_elements,)
        starts = ops.cumsum(sizes) - sizes
        # An empty set at index num_segments, for the empty rows.
        no_set = ops.zeros((1,), "int32")
        row_sizes = ops.take(ops.concatenate([sizes, no_set]), segments)
        row_starts = ops.take(ops.concatenate([starts, no_set]), segments)
        columns = ops.arange(set_size, dtype="int32")
        # (num_rows, set_size): True at the real elements.
        mask = columns[None, :] < row_sizes[:, None]
        # Row 0 of the elements and of their order is padding: (num_rows,
        # set_size), 1 + each slot's element, or 0 at the padded slots.
        order = ops.concatenate([no_set, ops.cast(order, "int32") + 1])
        elements = ops.take(
            order, ops.where(mask, row_starts[:, None] + columns + 1, 0)
        )
        zeros = ops.zeros((1, *values.shape[1:]), values.dtype)
        padded = ops.take(ops.concatenate([zeros, values]), elements, axis=0)
        return padded, PaddedSets(mask)

    @staticmethod
    def _largest_size(sizes, values):
        """The padded width of every set, at least 1: the largest size
        where the values are known, else the number of elements."""
        if not is_traced(sizes):
            return max(1, int(np.max(ops.convert_to_numpy(sizes), initial=0)))
        if values.shape[0] is None:
            # A TensorFlow trace: a width known only at run time.
            return ops.maximum(ops.shape(values)[0], 1)
        return max(1, values.shape[0])

    def _to_padded_through_ragged(self, values):
        tf = tensorflow_module()
        # A stable sort keeps the order of appearance within each set.
        order = tf.argsort(self.segment_ids, stable=True)
        sets = tf.RaggedTensor.from_value_rowids(
            ops.take(values, order, axis=0),
            ops.take(self.segment_ids, order),
            nrows=self.num_segments,
        )
        return as_set_batch(sets)


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


def _dtype(tensor):
    return keras.backend.standardize_dtype(tensor.dtype)


def _check_values(values):
    dtype = _dtype(values)
    if dtype == "bool" or not (
        "float" in dtype or "int" in dtype or dtype == "bfloat16"
    ):
        raise ValueError(
            "Set elements must be a numeric tensor. Received: "
            f"inputs.dtype={dtype}"
        )


def count_segments(segment_ids, argument):
    """`max(segment_ids) + 1`: an int in eager calls, a scalar tensor in a
    TensorFlow trace. Inside a JAX trace the count, a shape, must be
    static: a ValueError asks for `argument` as an int."""
    if not is_traced(segment_ids):
        return int(ops.convert_to_numpy(segment_ids).max(initial=-1)) + 1
    if backend.needs_static_shapes():
        raise ValueError(
            "Inside a traced JAX function (`jax.jit`, `Model.fit`) the "
            f"number of sets must be known: pass `{argument}` as an int. "
            f"Received: {argument}=None"
        )
    return ops.max(ops.cast(segment_ids, "int32"), initial=-1) + 1


def _check_segment_ids(values, segment_ids, num_segments):
    segment_ids = ops.convert_to_tensor(segment_ids)
    if "int" not in _dtype(segment_ids):
        raise ValueError(
            "`segment_ids` must be an integer tensor. "
            f"Received: segment_ids.dtype={_dtype(segment_ids)}"
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
    if isinstance(num_segments, (bool, float, str)) or (
        isinstance(num_segments, (int, np.integer)) and num_segments < 0
    ):
        raise ValueError(
            "`num_segments` must be a non-negative integer. "
            f"Received: num_segments={num_segments!r}"
        )
    if num_segments is None:
        num_segments = count_segments(segment_ids, "num_segments")
    segment_ids = checked_indices(
        segment_ids, num_segments, "segment_ids", "sets"
    )
    return segment_ids, num_segments


def _check_mask(values, mask):
    mask = ops.convert_to_tensor(mask)
    dtype = _dtype(mask)
    if dtype != "bool" and "int" not in dtype and "float" not in dtype:
        raise ValueError(
            "`mask` must be boolean, or numeric with values 0 and 1. "
            f"Received: mask.dtype={dtype}"
        )
    if len(mask.shape) != 2 or any(
        expected is not None and received is not None and expected != received
        for expected, received in zip(values.shape[:2], mask.shape)
    ):
        raise ValueError(
            "`mask` must have shape (batch, set_size) matching the inputs. "
            f"Received: mask.shape={mask.shape} for inputs.shape={values.shape}"
        )
    if dtype == "bool":
        return mask
    return ops.cast(_checked_zero_one(mask), "bool")


def _checked_zero_one(mask):
    """A numeric `mask`, checked to hold only 0 and 1 (see `_checked`)."""

    def find_error(values):
        wrong = values[(values != 0) & (values != 1)]
        if wrong.size:
            return (
                "A numeric `mask` must hold only 0 (padding) and 1 (real "
                f"elements). Received a mask holding {wrong.flat[0]}"
            )
        return None

    def assertions(tf, mask):
        return [
            (
                tf.reduce_all(mask * (1 - mask) == 0),
                "A numeric `mask` must hold only 0 and 1",
            )
        ]

    return _checked(mask, find_error, assertions)


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
        if is_ragged(inputs) or mask is not None:
            raise ValueError(
                "`segment_ids` needs flat dense inputs (num_elements, "
                "features) and no mask. Received: "
                f"inputs of type {type(inputs).__name__}, mask={mask}"
            )
        inputs = ops.convert_to_tensor(inputs)
        _check_features(inputs, 2, "Segment-form")
        _check_values(inputs)
        segment_ids, num_segments = _check_segment_ids(
            inputs, segment_ids, num_segments
        )
        return inputs, SegmentSets(segment_ids, num_segments)
    if num_segments is not None:
        raise ValueError(
            "`num_segments` is only meaningful with `segment_ids`. "
            f"Received: num_segments={num_segments}, segment_ids=None"
        )
    if is_ragged(inputs):
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
        _check_values(inputs)
        # A Keras mask cannot describe a ragged batch; the row lengths do.
        tf = tensorflow_module()
        values = inputs.to_tensor()
        mask = tf.sequence_mask(
            inputs.row_lengths(), maxlen=tf.shape(values)[1]
        )
        return values, PaddedSets(mask)
    inputs = ops.convert_to_tensor(inputs)
    _check_features(inputs, 3, "Dense")
    _check_values(inputs)
    if mask is None:
        mask = ops.ones(ops.shape(inputs)[:2], dtype="bool")
        return inputs, PaddedSets(mask)
    mask = _check_mask(inputs, mask)
    values = ops.where(ops.expand_dims(mask, -1), inputs, 0)
    return values, PaddedSets(mask)


def real_elements(values, sets):
    """Padded sets as their real elements with segment ids, in the order
    of the rows: `(num_elements, features)` and their `SegmentSets`, one
    segment per row (empty for a row of padding only). Padding gets no
    gradient. Eager only: the number of elements is the mask's count."""
    num_sets, set_size, features = values.shape
    (positions,) = ops.nonzero(ops.reshape(sets.mask, (-1,)))
    elements = ops.take(
        ops.reshape(values, (num_sets * set_size, features)), positions, 0
    )
    segment_ids = ops.cast(positions // max(set_size, 1), "int32")
    return elements, SegmentSets(segment_ids, num_sets)


def in_fastest_layout(values, sets):
    """`values` and their `sets` in the layout the backend aggregates
    faster: padded sets as their real elements with segment ids where the
    backend's segment path skips the padding faster than its padded path
    (`backend.prefers_segments_for_padded_sets`); as they are otherwise,
    and in a trace, where the number of real elements is unknown."""
    if (
        isinstance(sets, PaddedSets)
        and backend.prefers_segments_for_padded_sets()
        and not is_traced(values)
    ):
        return real_elements(values, sets)
    return values, sets


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
    if is_ragged(inputs):
        values, sets = as_set_batch(inputs)
        return values, sets.mask, inputs.row_lengths()
    values, sets = as_set_batch(inputs, mask)
    return values, (None if mask is None else sets.mask), None


def from_padded(outputs, mask, row_lengths):
    """Zeroes padded rows; ragged again when the inputs were ragged."""
    if mask is not None:
        outputs = ops.where(ops.expand_dims(mask, -1), outputs, 0)
    if row_lengths is not None:
        return tensorflow_module().RaggedTensor.from_tensor(
            outputs, lengths=row_lengths
        )
    return outputs

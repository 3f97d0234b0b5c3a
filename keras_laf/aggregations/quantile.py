"""Quantiles of each feature over each set: PyTorch Geometric's median and
quantile aggregations.

Each feature of each set is sorted, then read at the quantile's position
`q (n - 1)` of the sorted elements, interpolated as NumPy's `np.quantile`
and PyG's `QuantileAggregation` do between the two elements around it.
"""

from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.registry import register
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_number
from keras_laf.core.validation import is_number

# How a position between two sorted elements `lower <= upper` is read,
# as in NumPy's `np.quantile(method=...)` and PyG.
INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")


def _check_quantiles(q):
    values = q if isinstance(q, (list, tuple)) else [q]
    # NaN fails the comparisons.
    if not values or not all(
        is_number(value) and 0 <= value <= 1 for value in values
    ):
        raise ValueError(
            "`q` expected a number in [0, 1] or a non-empty list of them. "
            f"Received: q={q!r}"
        )
    return [float(value) for value in values]


def sorted_within_sets(values, sets):
    """Each feature of each set sorted, the sets one after another.

    Args:
        values: `(elements..., features)` in the layout of `sets`, padded
            positions zeroed (`keras_laf.core.sets.as_set_batch`).
        sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.

    Returns:
        A tuple `(ordered, starts)`: `ordered` `(slots, features)` holds
        the elements of set `s`, each feature in increasing order, from
        row `starts[s]` on (`starts` int32 `(num_sets,)`); rows after a
        padded set's elements hold its padding. The rows are gathered
        from `values`, so gradients flow back to the elements.
    """
    features = values.shape[-1]
    if isinstance(sets, SegmentSets):
        # Two sorts, as PyG's: by value, then by set. The second must keep
        # the order of equal set ids, and Keras's argsort does on each
        # backend (JAX's sort is stable, PyTorch's is asked to be, and
        # TensorFlow's top_k puts the lower index first among ties).
        # (num_elements, features)
        by_value = ops.argsort(values, axis=0)
        set_ids = ops.broadcast_to(
            ops.expand_dims(sets.segment_ids, -1), ops.shape(values)
        )
        set_ids = ops.take_along_axis(set_ids, by_value, axis=0)
        order = ops.take_along_axis(
            by_value, ops.argsort(set_ids, axis=0), axis=0
        )
        ordered = ops.take_along_axis(values, order, axis=0)
        sizes = ops.cast(sets.sizes(), "int32")
        return ordered, ops.cumsum(sizes) - sizes
    # Padding sorts after the real elements of its set.
    mask = ops.expand_dims(sets.mask, -1)
    keys = ops.where(mask, values, float("inf"))
    # (batch, set_size, features)
    ordered = ops.take_along_axis(values, ops.argsort(keys, axis=1), axis=1)
    batch, set_size = ops.shape(values)[0], ops.shape(values)[1]
    starts = ops.arange(batch, dtype="int32") * ops.cast(set_size, "int32")
    return ops.reshape(ordered, (-1, features)), starts


@register("quantile")
class QuantileAggregation(SetAggregation):
    """The `q`-quantile of each feature of each set.

    As PyTorch Geometric's `QuantileAggregation`: the elements of a set of
    `n`, sorted, `x_(0) <= ... <= x_(n-1)`, are read at the position
    `i = q (n - 1)`; between `x_(floor i)` and `x_(ceil i)` the
    `interpolation` gives `"linear"`: `x_(floor i) + (i - floor i)
    (x_(ceil i) - x_(floor i))`, `"lower"`: `x_(floor i)`, `"higher"`:
    `x_(ceil i)`, `"midpoint"`: their mean, `"nearest"`: the element at
    `i` rounded half to even. These are NumPy's `np.quantile(x, q,
    method=interpolation)`. (PyG rounds `"nearest"` at the position in
    the whole batch, so an exact half there can go either way depending
    on the sizes of the sets before it; here it depends on the set alone,
    as in NumPy.) An empty set gives `fill_value` (PyG's default, 0).
    Gradients flow to the elements read.

    Args:
        q: float in [0, 1], or a list of them: the quantiles. Defaults to
            `0.5`.
        interpolation: str. One of `"linear"`, `"lower"`, `"higher"`,
            `"nearest"`, `"midpoint"`. Defaults to `"linear"`.
        fill_value: float. The output of an empty set. Defaults to `0.0`.
        flatten: bool. If True the output is `(num_sets, features *
            len(q))`, the quantiles of a feature adjacent, else
            `(num_sets, features, len(q))`. Defaults to `True`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features * len(q))` if `flatten`, else
        `(num_sets, features, len(q))`.

    Example:

    >>> layer = QuantileAggregation([0.25, 0.5], flatten=False)
    >>> values = np.array([[[1.0], [2.0], [4.0], [8.0]]], "float32")
    >>> keras.ops.convert_to_numpy(layer(values))  # positions 0.75, 1.5
    array([[[1.75, 3.  ]]], dtype=float32)
    """

    def __init__(
        self,
        q=0.5,
        interpolation="linear",
        fill_value=0.0,
        flatten=True,
        **kwargs,
    ):
        super().__init__(flatten=flatten, **kwargs)
        self.quantiles = _check_quantiles(q)
        if interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"`interpolation` must be one of {list(INTERPOLATIONS)}. "
                f"Received: interpolation={interpolation!r}"
            )
        self.q = (
            list(self.quantiles) if isinstance(q, (list, tuple)) else float(q)
        )
        self.interpolation = interpolation
        self.fill_value = check_number("fill_value", fill_value)
        self.num_aggregates = len(self.quantiles)

    def aggregate(self, values, sets):
        values = ops.cast(values, self.compute_dtype)
        ordered, starts = sorted_within_sets(values, sets)
        # A zero row after the last: empty sets read it, so every index
        # is valid, even with no elements at all.
        slots = ops.shape(ordered)[0]
        zeros = ops.zeros((1, values.shape[-1]), self.compute_dtype)
        ordered = ops.concatenate([ordered, zeros], axis=0)
        sizes = ops.cast(sets.sizes(), "int32")
        nonempty = sizes > 0
        last = ops.cast(ops.maximum(sizes - 1, 0), "float32")

        def read(offsets):
            # (num_sets, features): the element `offsets` after each start.
            rows = ops.where(nonempty, starts + offsets, slots)
            return ops.take(ordered, rows, axis=0)

        outputs = []
        for q in self.quantiles:
            # (num_sets,): the position i = q (n - 1) in each set.
            position = q * last
            lower = ops.cast(ops.floor(position), "int32")
            upper = ops.cast(ops.ceil(position), "int32")
            if self.interpolation == "lower":
                quantile = read(lower)
            elif self.interpolation == "higher":
                quantile = read(upper)
            elif self.interpolation == "nearest":
                quantile = read(ops.cast(ops.round(position), "int32"))
            elif self.interpolation == "midpoint":
                quantile = (read(lower) + read(upper)) / 2
            else:
                low = read(lower)
                fraction = ops.cast(
                    position - ops.floor(position), self.compute_dtype
                )
                quantile = low + ops.expand_dims(fraction, -1) * (
                    read(upper) - low
                )
            outputs.append(
                ops.where(
                    ops.expand_dims(nonempty, -1), quantile, self.fill_value
                )
            )
        # (num_sets, features, len(q))
        return ops.cast(ops.stack(outputs, -1), self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "q": self.q,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


@register("median")
class MedianAggregation(QuantileAggregation):
    """The median of each feature of each set: the lower median.

    PyTorch Geometric's `MedianAggregation`: `QuantileAggregation(0.5,
    "lower")`, so a set of even size gives the lower of its two middle
    elements (`x_((n - 1) // 2)` of the sorted elements), always an
    element of the set. For the mean of the two middle elements, use
    `QuantileAggregation(0.5, "midpoint")`. An empty set gives
    `fill_value`.

    Args:
        fill_value: float. The output of an empty set. Defaults to `0.0`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = MedianAggregation()
    >>> values = np.array([[[4.0], [1.0], [3.0], [2.0]]], "float32")
    >>> keras.ops.convert_to_numpy(layer(values))
    array([[2.]], dtype=float32)
    """

    def __init__(self, fill_value=0.0, **kwargs):
        super().__init__(
            q=0.5, interpolation="lower", fill_value=fill_value, **kwargs
        )

    def get_config(self):
        config = super().get_config()
        # Always the lower median, one aggregate per feature.
        for key in ("q", "interpolation", "flatten"):
            config.pop(key)
        return config

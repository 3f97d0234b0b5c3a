"""Softmax over sets, and the base of aggregations that mix features.

`set_logsumexp` and `set_softmax` reduce per-element scores over the
elements of each set in any layout of `keras_laf.core.sets` (padded with a mask,
or flat with segment ids): the softmax and attentional aggregations,
Set2Set and the power mean all weigh elements this way.

`SetPooling` is the base of the aggregations whose output is one vector
per set, `(num_sets, width)`, rather than `num_aggregates` values of each
feature: the recurrent, attentional and transformer poolings.
"""

from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.core.sets import as_set_batch
from keras_laf.core.validation import aggregation_input_spec
from keras_laf.core.validation import check_set_shape


def _real_elements(per_set, sets):
    # True at the real elements: (elements..., ...) like `per_set`'s
    # trailing axes; padded positions of padded sets are False.
    return sets.broadcast(ops.ones_like(per_set)) > 0


def set_logsumexp(scores, sets):
    """`log(sum_i exp(scores_i))` over the elements of each set.

    Shifted by the largest score of the set, so it is finite for scores of
    any size; the gradient is the softmax of the scores. NaN among the
    scores of a set gives NaN; an empty set gives `-inf`, with a zero
    gradient.

    Args:
        scores: float tensor `(elements..., ...)` in the layout of `sets`.
        sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.

    Returns:
        `(num_sets, ...)`.
    """
    scores = ops.convert_to_tensor(scores)
    # (num_sets, ...); the shift only keeps the exponentials finite.
    maxima = ops.stop_gradient(sets.max(scores))
    maxima = ops.where(maxima == float("-inf"), 0.0, maxima)
    real = _real_elements(maxima, sets)
    # exp(-inf) = 0 at padded positions, whatever they hold.
    shifted = ops.where(real, scores - sets.broadcast(maxima), float("-inf"))
    # At least 1 for a non-empty set (its largest score gives exp(0)).
    totals = sets.sum(ops.exp(shifted))
    # NaN totals count as non-empty, so that NaN stays visible.
    nonempty = ops.not_equal(totals, 0)
    log_totals = ops.log(ops.where(nonempty, totals, 1.0))
    return ops.where(nonempty, maxima + log_totals, float("-inf"))


def set_softmax(scores, sets):
    """Softmax of `scores` over the elements of each set.

    The weights of a set's elements sum to 1; padded positions get 0.

    Args:
        scores: float tensor `(elements..., ...)` in the layout of `sets`;
            each trailing index is normalised on its own.
        sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.

    Returns:
        The weights, shaped like `scores`.

    Example:

    >>> from keras_laf.core.sets import SegmentSets
    >>> scores = np.log(np.array([[1.0], [3.0], [5.0]], "float32"))
    >>> sets = SegmentSets(np.array([0, 0, 1]), 2)
    >>> keras.ops.convert_to_numpy(set_softmax(scores, sets)).ravel()
    array([0.25, 0.75, 1.  ], dtype=float32)
    """
    scores = ops.convert_to_tensor(scores)
    log_totals = set_logsumexp(scores, sets)
    real = _real_elements(log_totals, sets)
    shifted = ops.where(
        real, scores - sets.broadcast(log_totals), float("-inf")
    )
    return ops.exp(shifted)


class SetPooling(SetAggregation):
    """Aggregates each set into one vector, mixing the features.

    The base of the poolings whose output is `(num_sets, width)`, not
    `num_aggregates` values per feature (`SetAggregation`): subclasses
    implement `pool(values, sets, training)` and `output_width(features)`.
    The input forms, checks and masks are those of `SetAggregation`.

    Args:
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `SetAggregation`.
        training: bool. Whether the layer runs in training mode (dropout).
    """

    def __init__(self, **kwargs):
        super().__init__(flatten=True, **kwargs)

    def build(self, input_shape):
        # The weights of a pooling are sized by the number of features,
        # which a wrong input then fails on, naming the layer.
        features = check_set_shape(self, input_shape)[-1]
        self.input_spec = aggregation_input_spec(features)

    def call(
        self,
        inputs,
        mask=None,
        segment_ids=None,
        num_segments=None,
        training=None,
    ):
        values, sets = as_set_batch(inputs, mask, segment_ids, num_segments)
        return self.aggregate_sets(values, sets, training=training)

    def aggregate_sets(self, values, sets, training=None):
        """The layer's output for values already in a set layout.

        Args:
            values: `(elements..., features)` in the layout of `sets`.
            sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.
            training: bool. Whether the layer runs in training mode.

        Returns:
            `(num_sets, output_width(features))`.
        """
        return self.pool(ops.cast(values, self.compute_dtype), sets, training)

    def pool(self, values, sets, training=None):
        """Pools `values` over `sets`: `(num_sets, width)`."""
        raise NotImplementedError

    def output_width(self, features):
        """The width of the output for sets of `features` features."""
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        num_sets = input_shape[0] if len(input_shape) == 3 else None
        return (num_sets, self.output_width(input_shape[-1]))

    def get_config(self):
        config = super().get_config()
        # Always flat: the output has no per-feature axis.
        config.pop("flatten")
        return config

"""The variance-preserving sum: PyTorch Geometric's
`VariancePreservingAggregation`."""

from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.registry import register


@register("variance_preserving")
class VariancePreservingAggregation(SetAggregation):
    """The sum of each feature of each set divided by `sqrt(n)`.

    Variance-preserving aggregation (Schneckenreiter et al., "GNN-VPA: A
    Variance-Preserving Aggregation Strategy for Graph Neural Networks",
    2024; PyTorch Geometric's `VariancePreservingAggregation`): for `n`
    independent elements of equal variance, the output has that variance
    whatever `n`, between the mean (which shrinks it by `n`) and the sum
    (which grows it by `n`). An empty set gives 0.

    Args:
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = VariancePreservingAggregation()
    >>> values = np.array([[[1.0], [3.0], [5.0], [7.0]]], "float32")
    >>> keras.ops.convert_to_numpy(layer(values))  # 16 / sqrt(4)
    array([[8.]], dtype=float32)
    """

    num_aggregates = 1

    def __init__(self, **kwargs):
        super().__init__(flatten=True, **kwargs)

    def aggregate(self, values, sets):
        values = ops.cast(values, self.compute_dtype)
        # (num_sets, 1); empty sets divide their 0 by 1.
        sizes = ops.expand_dims(ops.maximum(sets.sizes(), 1.0), -1)
        roots = ops.cast(ops.sqrt(sizes), self.compute_dtype)
        # (num_sets, features, 1)
        return ops.expand_dims(sets.sum(values) / roots, -1)

    def get_config(self):
        config = super().get_config()
        # Always one aggregate per feature: nothing to flatten.
        config.pop("flatten")
        return config

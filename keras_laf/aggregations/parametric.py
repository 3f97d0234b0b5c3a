"""Softmax and power-mean aggregation: one parameter between mean and max.

Both aggregate every feature on its own, like `FixedAggregation`, with a
parameter that moves them from the mean towards the maximum (Li, Xiong,
Thabet, Ghanem, "DeeperGCN: All You Need to Train Deeper GCNs", 2020; the
`SoftmaxAggregation` and `PowerMeanAggregation` of PyTorch Geometric). The
parameter is fixed, or learned per feature (`learn=True`).
"""

import math

import keras
from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.pooling import set_logsumexp
from keras_laf.aggregations.registry import register
from keras_laf.core.validation import aggregation_input_spec
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_open_unit_interval
from keras_laf.core.validation import check_positive_int

# PyTorch Geometric clips the inputs of the power mean into this interval.
POWER_MEAN_RANGE = (0.0, 100.0)


class _ParametricAggregation(SetAggregation):
    """One aggregate per feature with a scalar or per-feature parameter."""

    num_aggregates = 1
    # The parameter's name, and whether it must be positive.
    parameter = None
    positive = False

    def __init__(self, value, learn, channels, **kwargs):
        super().__init__(flatten=True, **kwargs)
        name = self.parameter
        check_number(name, value, above=0 if self.positive else None)
        learn = check_bool("learn", learn)
        channels = check_positive_int("channels", channels)
        if channels != 1 and not learn:
            raise ValueError(
                f"`channels` greater than 1 gives a learned `{name}` per "
                "feature; set `learn=True` or `channels=1`. Received: "
                f"channels={channels}, learn={learn}"
            )
        self.learn = learn
        self.channels = channels

    def build(self, input_shape):
        super().build(input_shape)
        features = input_shape[-1]
        if self.channels not in (1, features):
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}) expects "
                "`channels` to be 1 (one parameter for every feature) or "
                f"the number of features, {features}. Received: "
                f"channels={self.channels}"
            )
        if self.channels > 1:
            self.input_spec = aggregation_input_spec(features)
        if self.learn:
            self._add_parameter()

    def get_config(self):
        config = super().get_config()
        # Always one aggregate per feature: nothing to flatten.
        config.pop("flatten")
        return {**config, "learn": self.learn, "channels": self.channels}


@register("softmax")
class SoftmaxAggregation(_ParametricAggregation):
    """Softmax aggregation: each feature weighted by its own softmax.

    For each feature, `sum_i softmax_i(t x_i) x_i` over the elements `x_i`
    of a set: the mean at `t = 0`, the maximum as `t -> inf` and the
    minimum as `t -> -inf` (Li et al., "DeeperGCN: All You Need to Train
    Deeper GCNs", 2020). The softmax is shifted by the largest `t x_i` of
    the set, so it stays finite for any `t x_i`. An empty set gives 0; NaN
    in a set gives NaN.

    Args:
        t: float. The inverse temperature, or its initial value when
            learned. Defaults to `1.0`.
        learn: bool. Whether `t` is a trainable weight. Defaults to `False`.
        channels: int. Number of learned temperatures: 1, or the number of
            features for one per feature. Needs `learn=True` when above 1.
            Defaults to `1`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = SoftmaxAggregation(t=1.0)
    >>> values = np.log(np.array([[[1.0], [3.0]]], "float32"))
    >>> outputs = layer(values)  # 0.25 log 1 + 0.75 log 3
    >>> np.exp(keras.ops.convert_to_numpy(outputs)).round(4)  # 3^0.75
    array([[2.2795]], dtype=float32)
    """

    parameter = "t"

    def __init__(self, t=1.0, learn=False, channels=1, **kwargs):
        super().__init__(t, learn, channels, **kwargs)
        self.t = float(t)

    def _add_parameter(self):
        self.temperature = self.add_weight(
            name="t",
            shape=(self.channels,),
            initializer=keras.initializers.Constant(self.t),
        )

    def aggregate(self, values, sets):
        values = ops.cast(values, self.compute_dtype)
        t = self.temperature if self.learn else self.t
        t = ops.cast(t, self.compute_dtype)
        # (elements..., features)
        scores = t * values
        # (num_sets, features); the shift only keeps the exponentials
        # finite, and cancels in the ratio below.
        maxima = ops.stop_gradient(sets.max(scores))
        maxima = ops.where(maxima == float("-inf"), 0.0, maxima)
        # Padded positions count for nothing in the sums of the layout.
        exponentials = ops.exp(scores - sets.broadcast(maxima))
        # (num_sets, features, 2): sum_i e_i and sum_i e_i x_i in one
        # reduction.
        sums = sets.sum(ops.stack([exponentials, exponentials * values], -1))
        totals, weighted = sums[..., 0], sums[..., 1]
        # At least 1 for a non-empty set (its largest score gives exp(0));
        # NaN totals count as non-empty, so that NaN stays visible.
        nonempty = ops.not_equal(totals, 0)
        outputs = ops.where(
            nonempty, weighted / ops.where(nonempty, totals, 1.0), 0.0
        )
        # (num_sets, features, 1)
        return ops.expand_dims(outputs, -1)

    def get_config(self):
        return {**super().get_config(), "t": self.t}


@register("powermean")
class PowerMeanAggregation(_ParametricAggregation):
    """Power-mean aggregation: `(mean_i x_i^p)^(1/p)` of each feature.

    The generalised mean of Li et al. ("DeeperGCN", 2020): the arithmetic
    mean at `p = 1`, tending to the maximum as `p` grows. As in PyTorch
    Geometric the inputs are first clipped into [0, 100]. The mean is
    computed in log space like LAF's power sums,
    `exp((logsumexp_i(p log x_i) - log n) / p)`, so it is finite with finite
    gradients for large `p`; inside the logarithm `x` is floored at
    `epsilon` (0 counts as `epsilon`, with a zero gradient). An empty set
    gives 0; NaN in a set gives NaN. `p` stays positive: when learned, the
    weight is `log p`.

    Args:
        p: float. The power, positive, or its initial value when learned.
            Defaults to `1.0`.
        learn: bool. Whether `p` is trainable. Defaults to `False`.
        channels: int. Number of learned powers: 1, or the number of
            features for one per feature. Needs `learn=True` when above 1.
            Defaults to `1`.
        epsilon: float. Floor of `x` inside the logarithm. Defaults to
            `1e-7`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = PowerMeanAggregation(p=2.0)
    >>> outputs = layer(np.array([[[1.0], [7.0]]], "float32"))
    >>> keras.ops.convert_to_numpy(outputs).round(4)  # sqrt((1 + 49) / 2)
    array([[5.]], dtype=float32)
    """

    parameter = "p"
    positive = True

    def __init__(self, p=1.0, learn=False, channels=1, epsilon=1e-7, **kwargs):
        super().__init__(p, learn, channels, **kwargs)
        self.p = float(p)
        self.epsilon = check_open_unit_interval("epsilon", epsilon)

    def _add_parameter(self):
        self.log_p = self.add_weight(
            name="log_p",
            shape=(self.channels,),
            initializer=keras.initializers.Constant(math.log(self.p)),
        )

    def aggregate(self, values, sets):
        # In float32 at least: p log x and its exponential lose too much
        # precision in float16.
        dtype = "float64" if self.compute_dtype == "float64" else "float32"
        values = ops.cast(values, dtype)
        p = ops.exp(ops.cast(self.log_p, dtype)) if self.learn else self.p
        clipped = ops.clip(values, *POWER_MEAN_RANGE)
        # (elements..., features): p log x.
        logs = ops.log(ops.maximum(clipped, self.epsilon))
        # NaN stays NaN: TensorFlow's clip and maximum would drop it.
        scores = p * ops.where(ops.isnan(values), values, logs)
        # (num_sets, features): log sum_i x_i^p, and log n.
        log_sums = set_logsumexp(scores, sets)
        sizes = ops.expand_dims(ops.cast(sets.sizes(), dtype), -1)
        nonempty = sizes > 0
        log_means = ops.where(nonempty, log_sums, 0.0) - ops.log(
            ops.maximum(sizes, 1.0)
        )
        means = ops.where(nonempty, ops.exp(log_means / p), 0.0)
        # (num_sets, features, 1)
        return ops.expand_dims(ops.cast(means, self.compute_dtype), -1)

    def get_config(self):
        return {**super().get_config(), "p": self.p, "epsilon": self.epsilon}

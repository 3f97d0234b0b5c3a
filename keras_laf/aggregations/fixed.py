"""Fixed aggregators (sum, mean, max, moments): the paper's baselines."""

from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.registry import register
from keras_laf.core.validation import check_positive_number

# The DeepSets baseline of the paper: 9 aggregates per feature, like LAF(9).
DEEPSETS_AGGREGATORS = ("sum",) * 3 + ("max",) * 3 + ("mean",) * 3
# The aggregators of PNA (Corso et al., "Principal Neighbourhood Aggregation
# for Graph Nets", NeurIPS 2020) that the paper compares with.
PNA_AGGREGATORS = ("mean", "max", "sum", "std", "var", "skewness", "kurtosis")
# The four neighbourhood aggregators of PNA, as its graph and point-cloud
# models use them.
PNA_NEIGHBOURHOOD = ("mean", "max", "min", "std")
# Every aggregator name, and the presets naming lists of them.
AGGREGATOR_NAMES = (
    "sum",
    "mean",
    "max",
    "min",
    "count",
    "std",
    "var",
    "skewness",
    "kurtosis",
)
AGGREGATOR_PRESETS = {
    "deepsets": DEEPSETS_AGGREGATORS,
    "pna": PNA_AGGREGATORS,
    "pna_neighbourhood": PNA_NEIGHBOURHOOD,
}


def _standardized(moment, variance, power, epsilon):
    # Zero for constant and empty sets, where the variance vanishes.
    safe_variance = ops.where(variance > epsilon, variance, 1.0)
    return ops.where(
        variance > epsilon, moment / safe_variance ** (power / 2), 0.0
    )


def _shift(values, sets):
    """A per-feature constant near the elements, `(features,)`: their mean
    over the whole batch, 0 where that is not finite (a NaN or infinite
    element, which makes its own set's moments NaN anyway). A plain
    reduction, no scatter, and no gradient: the moments do not depend on
    it."""
    total = ops.sum(values, axis=tuple(range(len(values.shape) - 1)))
    count = ops.cast(ops.maximum(sets.num_elements(), 1.0), values.dtype)
    shift = total / count
    return ops.stop_gradient(ops.where(ops.isfinite(shift), shift, 0.0))


def fixed_aggregates(values, sets, aggregators, epsilon):
    """The aggregates `aggregators` of every feature of every set, in one
    pass that shares what they have in common.

    The sum, the sizes and the mean are computed once for all the
    aggregators that need them, as PyTorch Geometric's `FusedAggregation`
    does: `MultiAggregation` computes its fixed members' aggregates in one
    call. The variance takes one reduction over the sets, of the elements
    shifted by a per-feature constant `c` and of their squares together:
    `E[(x - c)^2] - E[x - c]^2`. Unshifted, that difference cancels
    catastrophically for sets far from 0 (float32 elements `1e4 + noise`
    lose the noise's variance); with `c` the batch's mean of the feature it
    stays exact while the sets' means are within a few standard deviations
    of `c`. Skewness and kurtosis center the elements at their set's mean.

    Args:
        values: `(elements..., features)` in the layout of `sets`, padding
            zeroed, in the dtype of the aggregates.
        sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.
        aggregators: names from `AGGREGATOR_NAMES`, repeats allowed.
        epsilon: float, as `FixedAggregation`'s.

    Returns:
        A dict from each name of `aggregators` to `(num_sets, features)`.
    """
    names = set(aggregators)
    results = {}
    moments = names & {"std", "var", "skewness", "kurtosis"}
    if "count" in names:
        results["count"] = sets.sum(ops.ones_like(values))
    for name, sign in (("max", 1.0), ("min", -1.0)):
        if name in names:
            extreme = sign * sets.max(sign * values)
            results[name] = ops.where(ops.isfinite(extreme), extreme, 0.0)
    if names & {"sum", "mean"} or moments:
        # (sets, 1); empty sets divide 0 by 1.
        counts = ops.expand_dims(sets.sizes(), -1)
        nonempty = counts > 0
        counts = ops.cast(counts, values.dtype)
        sizes = ops.maximum(counts, 1.0)
    if moments:
        shift = _shift(values, sets)
        shifted = values - shift
        # (sets, features) each: the sums of x - c and of (x - c)^2, two
        # segment sums with no stacked copy of both.
        shifted_sums = sets.sum(shifted)
        squared_sums = sets.sum(ops.square(shifted))
        shifted_mean = shifted_sums / sizes
        results["sum"] = shifted_sums + counts * shift
        # 0 for empty sets, as unshifted.
        results["mean"] = ops.where(nonempty, shifted_mean + shift, 0.0)
        # Exactly 0 for sets of one element, whichever way the backend
        # rounds the difference (a fused multiply-add leaves a rounding
        # error of the square).
        variance = ops.where(
            counts > 1,
            ops.relu(squared_sums / sizes - ops.square(shifted_mean)),
            0.0,
        )
        results["var"] = variance
        # sqrt(epsilon) at zero variance, but 0 for empty sets.
        results["std"] = ops.where(nonempty, ops.sqrt(variance + epsilon), 0.0)
        if names & {"skewness", "kurtosis"}:
            centered = values - sets.broadcast(results["mean"])
        for name, power in (("skewness", 3), ("kurtosis", 4)):
            if name in names:
                moment = sets.sum(centered**power) / sizes
                results[name] = _standardized(moment, variance, power, epsilon)
    elif names & {"sum", "mean"}:
        results["sum"] = sets.sum(values)
        results["mean"] = results["sum"] / sizes
    return {name: results[name] for name in names}


@register("fixed")
class FixedAggregation(SetAggregation):
    """Aggregates each feature of each set with fixed functions.

    The baselines of the paper: DeepSets' sum, mean and max (Zaheer et al.,
    "Deep Sets", NeurIPS 2017), and PNA's moments (Corso et al., 2020).
    Moments are population moments; skewness and kurtosis are the third
    and fourth standardized moments (kurtosis is not the excess kurtosis).

    Every aggregate of an empty set is 0, the standard deviation too;
    that of a non-empty set is `sqrt(var + epsilon)` (finite gradient at
    zero variance, as in PNA); skewness and kurtosis are 0 when the
    variance is at most `epsilon`.

    Args:
        aggregators: list of str, any of `"sum"`, `"mean"`, `"max"`,
            `"min"`, `"count"`, `"std"`, `"var"`, `"skewness"`,
            `"kurtosis"`, repeats allowed; or `"deepsets"` (3 sum, 3 max,
            3 mean, as in the paper), `"pna"` (mean, max, sum, std, var,
            skewness, kurtosis: the paper's PNA baseline) or
            `"pna_neighbourhood"` (mean, max, min, std: PNA's graph
            models). Defaults to `("sum",)`.
        flatten: bool. If True the output is `(batch, features *
            len(aggregators))`, else `(batch, features, len(aggregators))`.
            Defaults to `True`.
        epsilon: float. Added to the variance under the square root.
            Defaults to `1e-5`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features * len(aggregators))` if `flatten`, else
        `(num_sets, features, len(aggregators))`.

    Example:

    >>> layer = FixedAggregation(["sum", "max"], flatten=False)
    >>> keras.ops.convert_to_numpy(layer(np.array([[[1.0], [3.0]]])))
    array([[[4., 3.]]], dtype=float32)
    """

    # A list of the names registered below is one `FixedAggregation`.
    list_argument = "aggregators"

    def __init__(
        self, aggregators=("sum",), flatten=True, epsilon=1e-5, **kwargs
    ):
        super().__init__(flatten=flatten, **kwargs)
        if isinstance(aggregators, str):
            aggregators = AGGREGATOR_PRESETS.get(aggregators, [aggregators])
        aggregators = list(aggregators)
        unknown = [name for name in aggregators if name not in AGGREGATOR_NAMES]
        if not aggregators or unknown:
            raise ValueError(
                "`aggregators` must be a non-empty list of names from "
                f"{list(AGGREGATOR_NAMES)}, or one of "
                f"{list(AGGREGATOR_PRESETS)}. "
                f"Received: aggregators={aggregators}"
            )
        self.aggregators = aggregators
        self.num_aggregates = len(aggregators)
        self.epsilon = check_positive_number("epsilon", epsilon)

    def aggregate(self, values, sets):
        values = ops.cast(values, self.compute_dtype)
        aggregates = fixed_aggregates(
            values, sets, self.aggregators, self.epsilon
        )
        return self.stack(aggregates)

    def stack(self, aggregates):
        """`(num_sets, features, num_aggregates)` from the dict of
        `fixed_aggregates` (which may hold more names)."""
        return ops.stack([aggregates[name] for name in self.aggregators], -1)

    def get_config(self):
        return {
            **super().get_config(),
            "aggregators": self.aggregators,
            "epsilon": self.epsilon,
        }


# Each fixed aggregator by its name, which a list of them combines into
# one `FixedAggregation`, and the two presets by theirs.
for _name in AGGREGATOR_NAMES:
    register(_name, aggregators=_name)(FixedAggregation)
for _name, _aggregators in AGGREGATOR_PRESETS.items():
    register(_name, aggregators=list(_aggregators))(FixedAggregation)

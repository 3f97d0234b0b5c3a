"""The aggregations of keras-laf by name: one registry for every builder.

`get` turns an identifier into a fresh aggregation layer:

- `"laf"`: `keras_laf.LAF` with `units` units;
- `"lstm"`, `"gru"`: `keras_laf.LSTMAggregation`, `keras_laf.GRUAggregation`
  with `units` units (order-dependent; `"lstm"` is the paper's baseline);
- `"softmax"`, `"powermean"`: `keras_laf.SoftmaxAggregation` (t = 1) and
  `keras_laf.PowerMeanAggregation` (p = 1), one aggregate per feature;
- `"attention"`: `keras_laf.AttentionalAggregation` with a `Dense(1)` gate;
- `"set2set"`: `keras_laf.Set2Set` with 3 processing steps;
- `"gmt"`: `keras_laf.GraphMultisetTransformer` of width `units`;
- a fixed aggregator name (`"sum"`, `"mean"`, `"max"`, `"min"`,
  `"count"`, `"std"`, `"var"`, `"skewness"`, `"kurtosis"`), a preset
  (`"deepsets"`: 3 sum, 3 max, 3 mean; `"pna"`: the paper's PNA baseline,
  mean, max, sum, std, var, skewness, kurtosis) or a list of fixed
  aggregator names: `keras_laf.FixedAggregation`;
- a list of names that are not all fixed aggregators, e.g.
  `["laf", "max"]`: `keras_laf.MultiAggregation`, the outputs
  concatenated;
- an aggregation layer: returned as it is.

The model builders (`keras_laf.models`), the graph layers and the
`keras-laf` command all go through this module, so a name means the same
layer everywhere.
"""

from keras_laf.aggregations.attention import AttentionalAggregation
from keras_laf.aggregations.attention import Set2Set
from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import AGGREGATOR_PRESETS
from keras_laf.aggregations.fixed import FixedAggregation
from keras_laf.aggregations.gmt import GraphMultisetTransformer
from keras_laf.aggregations.multi import MultiAggregation
from keras_laf.aggregations.parametric import PowerMeanAggregation
from keras_laf.aggregations.parametric import SoftmaxAggregation
from keras_laf.aggregations.recurrent import GRUAggregation
from keras_laf.aggregations.recurrent import LSTMAggregation
from keras_laf.laf_layer.layer import LAF

# The learnable aggregations with one aggregate per feature.
PARAMETRIC_NAMES = ("softmax", "powermean")
# The poolings whose output mixes the features.
POOLING_NAMES = ("attention", "set2set", "gmt")
# The aggregations that aggregate every feature on its own, and all of
# the string identifiers.
PER_FEATURE_NAMES = (
    "laf",
    *PARAMETRIC_NAMES,
    *AGGREGATOR_NAMES,
    *AGGREGATOR_PRESETS,
)
NAMES = (*PER_FEATURE_NAMES, "lstm", "gru", *POOLING_NAMES)
# The four neighbourhood aggregators of PNA (Corso et al., "Principal
# Neighbourhood Aggregation for Graph Nets", NeurIPS 2020), as its graph
# and point-cloud models use them.
PNA_NEIGHBOURHOOD = ("mean", "max", "min", "std")
# Units of `get(name)` when none are given: the LAF paper's 9 LAF units,
# the state size of the recurrent aggregations and the GMT's width.
DEFAULT_UNITS = {"laf": 9, "lstm": 32, "gru": 32, "gmt": 32}

_WITH_UNITS = {
    "laf": LAF,
    "lstm": LSTMAggregation,
    "gru": GRUAggregation,
}
_WITHOUT_UNITS = {
    "softmax": SoftmaxAggregation,
    "powermean": PowerMeanAggregation,
    "attention": AttentionalAggregation,
    "set2set": Set2Set,
}


def _is_name_list(identifier, allowed):
    return (
        isinstance(identifier, (list, tuple))
        and len(identifier) > 0
        and all(
            isinstance(name, str)
            and (name in allowed or name in AGGREGATOR_PRESETS)
            for name in identifier
        )
    )


def check(identifier, allowed=None):
    """Validates an aggregation identifier and returns it normalised.

    Args:
        identifier: a name of `NAMES`, or a non-empty list or tuple of
            names: of fixed aggregators (one `FixedAggregation`), or mixing
            any names (a `MultiAggregation`), e.g. `["laf", "max"]`.
        allowed: optional sequence of the string names accepted, alone or
            in lists (a list of fixed aggregator names is accepted whenever
            `allowed` holds a fixed aggregator name). Defaults to all of
            `NAMES`.

    Returns:
        The name, or the list of names.

    Raises:
        ValueError: the identifier names no aggregation of `allowed`.

    Example:

    >>> check(("laf", "max"))
    ['laf', 'max']
    """
    allowed = NAMES if allowed is None else tuple(allowed)
    if isinstance(identifier, str) and identifier in allowed:
        return identifier
    if _is_name_list(identifier, AGGREGATOR_NAMES) and any(
        name in AGGREGATOR_NAMES for name in allowed
    ):
        return list(identifier)
    if _is_name_list(identifier, allowed):
        return list(identifier)
    raise ValueError(
        f"Unknown aggregation {identifier!r}. Expected one of "
        f"{list(allowed)}, or a list of them (e.g. ['laf', 'max']) or of "
        f"the fixed aggregator names {list(AGGREGATOR_NAMES)}."
    )


def get(identifier, units=None, preset=None, **kwargs):
    """Returns a new aggregation layer for `identifier`.

    Args:
        identifier: a name of `NAMES`, a list of names, or an aggregation
            layer (returned unchanged).
        units: int. Units of a `"laf"`, `"lstm"` or `"gru"` aggregation and
            width of a `"gmt"`, also inside a list; the others have none and
            ignore it. Defaults to `None`: `DEFAULT_UNITS`.
        preset: str. The `keras_laf.LAF` preset of a `"laf"` aggregation
            (see `keras_laf.presets`), also inside a list; the others
            ignore it. Defaults to `None`: the layer's default.
        **kwargs: further arguments of the layer, such as `name` and
            `dtype`.

    Returns:
        A `keras_laf.SetAggregation` layer: `LAF`, `FixedAggregation`,
        `MultiAggregation`, ...

    Example:

    >>> get(["mean", "max"], name="pooling").aggregators
    ['mean', 'max']
    >>> get("laf", units=4).units
    4
    >>> get("laf", preset="closed_forms").preset
    'closed_forms'
    >>> type(get(["laf", "max"])).__name__
    'MultiAggregation'
    >>> get("softmax").t
    1.0
    """
    if isinstance(identifier, SetAggregation):
        return identifier
    identifier = check(identifier)
    if isinstance(identifier, list):
        if all(name in AGGREGATOR_NAMES for name in identifier):
            return FixedAggregation(identifier, **kwargs)
        dtype = kwargs.get("dtype")
        members = [
            get(
                name,
                units=units,
                preset=preset,
                name=f"{name}_{index}",
                dtype=dtype,
            )
            for index, name in enumerate(identifier)
        ]
        return MultiAggregation(members, **kwargs)
    if identifier in _WITH_UNITS:
        if units is None:
            units = DEFAULT_UNITS[identifier]
        if identifier == "laf" and preset is not None:
            kwargs["preset"] = preset
        return _WITH_UNITS[identifier](units=units, **kwargs)
    if identifier == "gmt":
        dim = DEFAULT_UNITS["gmt"] if units is None else units
        return GraphMultisetTransformer(dim=dim, **kwargs)
    if identifier in _WITHOUT_UNITS:
        return _WITHOUT_UNITS[identifier](**kwargs)
    return FixedAggregation(identifier, **kwargs)


def num_aggregates(identifier, units=None):
    """How many values `get(identifier, units)` gives for each feature.

    Args:
        identifier: a per-feature identifier (`PER_FEATURE_NAMES`, or a
            list of them); the recurrent and attentional poolings mix the
            features, so they have no per-feature count.
        units: int. The LAF units. Defaults to `DEFAULT_UNITS["laf"]`.

    Returns:
        int: the LAF units, 1 for the softmax and power mean, the number
        of fixed aggregators, or the sum over a list.

    Example:

    >>> num_aggregates(["laf", "max"], units=4)
    5
    """
    identifier = check(identifier, allowed=PER_FEATURE_NAMES)
    if isinstance(identifier, list):
        return sum(num_aggregates(name, units) for name in identifier)
    if identifier == "laf":
        return DEFAULT_UNITS["laf"] if units is None else units
    if identifier in PARAMETRIC_NAMES:
        return 1
    return len(AGGREGATOR_PRESETS.get(identifier, [identifier]))


def output_width(identifier, features, units=None):
    """The output width of `get(identifier, units)` on `features` features.

    Args:
        identifier: an identifier of `get`.
        features: int, the features of each element.
        units: int. As for `get`. Defaults to `None`: `DEFAULT_UNITS`.

    Returns:
        int: `features * num_aggregates(identifier, units)` for the
        per-feature aggregations, the pooling's width otherwise.

    Example:

    >>> output_width(["laf", "max"], 3, units=4)
    15
    >>> output_width("set2set", 3)
    6
    """
    identifier = check(identifier)
    try:
        return features * num_aggregates(identifier, units)
    except ValueError:
        layer = get(identifier, units=units)
        return layer.compute_output_shape((None, None, features))[-1]


def needs_unit_interval(identifier):
    """Whether the aggregation expects elements in [0, 1] (LAF does).

    Builders put a sigmoid before such an aggregation. A list holding
    `"laf"` does not: its `MultiAggregation` squashes LAF's elements
    itself and gives the others the elements unchanged.
    """
    return identifier == "laf" or isinstance(identifier, LAF)

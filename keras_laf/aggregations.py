"""The aggregations of keras-laf by name: one registry for every builder.

`get` turns an identifier into a fresh aggregation layer:

- `"laf"`: `keras_laf.LAF` with `units` units;
- `"lstm"`: `keras_laf.LSTMAggregation` with `units` units (order-dependent,
  the paper's LSTM baseline);
- a fixed aggregator name (`"sum"`, `"mean"`, `"max"`, `"min"`,
  `"count"`, `"std"`, `"var"`, `"skewness"`, `"kurtosis"`), a preset
  (`"deepsets"`: 3 sum, 3 max, 3 mean; `"pna"`: the paper's PNA baseline,
  mean, max, sum, std, var, skewness, kurtosis) or a list of names:
  `keras_laf.FixedAggregation`;
- an aggregation layer: returned as it is.

The model builders (`keras_laf.models`), the graph layers and the
`keras-laf` command all go through this module, so a name means the same
layer everywhere.
"""

from keras_laf.fixed_aggregation import AGGREGATOR_NAMES
from keras_laf.fixed_aggregation import AGGREGATOR_PRESETS
from keras_laf.fixed_aggregation import FixedAggregation
from keras_laf.laf_layer import LAF
from keras_laf.lstm_aggregation import LSTMAggregation

# The aggregations that aggregate every feature on its own, and all of
# the string identifiers.
PER_FEATURE_NAMES = ("laf", *AGGREGATOR_NAMES, *AGGREGATOR_PRESETS)
NAMES = (*PER_FEATURE_NAMES, "lstm")
# The four neighbourhood aggregators of PNA (Corso et al., "Principal
# Neighbourhood Aggregation for Graph Nets", NeurIPS 2020), as its graph
# and point-cloud models use them.
PNA_NEIGHBOURHOOD = ("mean", "max", "min", "std")
# Units of `get("laf")` and `get("lstm")` when none are given: the LAF
# paper's 9 LAF units, and the LSTM state size of `LSTMAggregation`.
DEFAULT_UNITS = {"laf": 9, "lstm": 32}

_LEARNED = {"laf": LAF, "lstm": LSTMAggregation}


def check(identifier, allowed=None):
    """Validates an aggregation identifier and returns it normalised.

    Args:
        identifier: a name of `NAMES` or a non-empty list or tuple of fixed
            aggregator names.
        allowed: optional sequence of the string names accepted (lists of
            fixed aggregator names are accepted whenever `allowed` holds a
            fixed aggregator name). Defaults to all of `NAMES`.

    Returns:
        The name, or the list of fixed aggregator names.

    Raises:
        ValueError: the identifier names no aggregation of `allowed`.
    """
    allowed = NAMES if allowed is None else tuple(allowed)
    if isinstance(identifier, str) and identifier in allowed:
        return identifier
    if (
        isinstance(identifier, (list, tuple))
        and identifier
        and any(name in AGGREGATOR_NAMES for name in allowed)
        and all(
            isinstance(name, str) and name in AGGREGATOR_NAMES
            for name in identifier
        )
    ):
        return list(identifier)
    raise ValueError(
        f"Unknown aggregation {identifier!r}. Expected one of "
        f"{list(allowed)}, or a list of the fixed aggregator names "
        f"{list(AGGREGATOR_NAMES)}."
    )


def get(identifier, units=None, preset=None, **kwargs):
    """Returns a new aggregation layer for `identifier`.

    Args:
        identifier: a name of `NAMES`, a list of fixed aggregator names, or
            an aggregation layer (returned unchanged).
        units: int. Units of a `"laf"` or `"lstm"` aggregation; fixed
            aggregations have none and ignore it. Defaults to `None`:
            `DEFAULT_UNITS`.
        preset: str. The `keras_laf.LAF` preset of a `"laf"` aggregation
            (see `keras_laf.presets`); the others ignore it. Defaults to
            `None`: the layer's default.
        **kwargs: further arguments of the layer, such as `name` and
            `dtype`.

    Returns:
        A `keras_laf.LAF`, `keras_laf.LSTMAggregation` or
        `keras_laf.FixedAggregation` layer.

    Example:

    >>> get(["mean", "max"], name="pooling").aggregators
    ['mean', 'max']
    >>> get("laf", units=4).units
    4
    >>> get("laf", preset="closed_forms").preset
    'closed_forms'
    """
    if isinstance(identifier, (FixedAggregation, LAF, LSTMAggregation)):
        return identifier
    identifier = check(identifier)
    if isinstance(identifier, str) and identifier in _LEARNED:
        if units is None:
            units = DEFAULT_UNITS[identifier]
        if identifier == "laf" and preset is not None:
            kwargs["preset"] = preset
        return _LEARNED[identifier](units=units, **kwargs)
    return FixedAggregation(identifier, **kwargs)


def num_aggregates(identifier, units=None):
    """How many values `get(identifier, units)` gives for each feature.

    Args:
        identifier: a LAF or fixed aggregation identifier (an LSTM mixes
            the features, so it has no per-feature count).
        units: int. The LAF units. Defaults to `DEFAULT_UNITS["laf"]`.

    Returns:
        int: the LAF units, or the number of fixed aggregators.
    """
    identifier = check(identifier, allowed=PER_FEATURE_NAMES)
    if identifier == "laf":
        return DEFAULT_UNITS["laf"] if units is None else units
    if isinstance(identifier, str):
        return len(AGGREGATOR_PRESETS.get(identifier, [identifier]))
    return len(identifier)


def needs_unit_interval(identifier):
    """Whether the aggregation expects elements in [0, 1] (LAF does).

    Builders put a sigmoid before such an aggregation.
    """
    return identifier == "laf" or isinstance(identifier, LAF)

"""The names of the aggregations, and what each gives per feature.

`check` validates an identifier of `keras_laf.aggregations.get` (a name or
a list of names) without building anything; `num_aggregates` is how many
values an identifier gives for each feature.
"""

from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import AGGREGATOR_PRESETS

# The learnable aggregations with one aggregate per feature.
PARAMETRIC_NAMES = ("softmax", "powermean", "genagg")
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


def num_aggregates(identifier, units=None):
    """How many values `get(identifier, units)` gives for each feature.

    Args:
        identifier: a per-feature identifier (`PER_FEATURE_NAMES`, or a
            list of them); the recurrent and attentional poolings mix the
            features, so they have no per-feature count.
        units: int. The LAF units. Defaults to `DEFAULT_UNITS["laf"]`.

    Returns:
        int: the LAF units, 1 for the softmax, power mean and GenAgg, the
        number
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

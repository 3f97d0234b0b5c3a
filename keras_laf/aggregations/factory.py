"""One aggregation layer from one name: the registry below
`MultiAggregation`.

`from_name` builds the layer a name gives (`"laf"`, `"softmax"`, `"max"`,
a list of fixed aggregator names, ...); `keras_laf.aggregations.get` adds
the lists that mix names, which `MultiAggregation` combines, and
`MultiAggregation` builds its members here.
"""

from keras_laf.aggregations.attention import AttentionalAggregation
from keras_laf.aggregations.attention import Set2Set
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import FixedAggregation
from keras_laf.aggregations.genagg import GenAggAggregation
from keras_laf.aggregations.gmt import GraphMultisetTransformer
from keras_laf.aggregations.laf.layer import LAF
from keras_laf.aggregations.names import DEFAULT_UNITS
from keras_laf.aggregations.names import check
from keras_laf.aggregations.parametric import PowerMeanAggregation
from keras_laf.aggregations.parametric import SoftmaxAggregation
from keras_laf.aggregations.recurrent import GRUAggregation
from keras_laf.aggregations.recurrent import LSTMAggregation

_WITH_UNITS = {
    "laf": LAF,
    "lstm": LSTMAggregation,
    "gru": GRUAggregation,
}
_WITHOUT_UNITS = {
    "softmax": SoftmaxAggregation,
    "powermean": PowerMeanAggregation,
    "genagg": GenAggAggregation,
    "attention": AttentionalAggregation,
    "set2set": Set2Set,
}


def from_name(identifier, units=None, preset=None, **kwargs):
    """Returns a new aggregation layer for one name.

    The registry's `get` without lists that mix names (whose
    `MultiAggregation` is built from layers this function returns).

    Args:
        identifier: a name of `NAMES`, or a list of fixed aggregator
            names (one `FixedAggregation`).
        units: int. Units of a `"laf"`, `"lstm"` or `"gru"` aggregation and
            width of a `"gmt"`; the others ignore it. Defaults to `None`:
            `DEFAULT_UNITS`.
        preset: str. The `keras_laf.LAF` preset of a `"laf"` aggregation;
            the others ignore it. Defaults to `None`: the layer's default.
        **kwargs: further arguments of the layer, such as `name` and
            `dtype`.

    Returns:
        A `keras_laf.SetAggregation` layer.

    Example:

    >>> from_name("laf", units=4).units
    4
    >>> from_name(["mean", "max"]).aggregators
    ['mean', 'max']
    """
    identifier = check(identifier)
    if isinstance(identifier, list):
        if not all(name in AGGREGATOR_NAMES for name in identifier):
            raise ValueError(
                "`from_name` builds one aggregation; a list mixing "
                f"aggregations is a MultiAggregation. Received: {identifier!r}"
            )
        return FixedAggregation(identifier, **kwargs)
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


def needs_unit_interval(identifier):
    """Whether the aggregation expects elements in [0, 1] (LAF does).

    Builders put a sigmoid before such an aggregation. A list holding
    `"laf"` does not: its `MultiAggregation` squashes LAF's elements
    itself and gives the others the elements unchanged.
    """
    return identifier == "laf" or isinstance(identifier, LAF)

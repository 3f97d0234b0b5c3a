"""The aggregations of keras-laf by name: one registry for every builder.

`get` turns an identifier into a fresh aggregation layer:

- `"laf"`: `keras_laf.LAF` with `units` units;
- `"lstm"`, `"gru"`: `keras_laf.LSTMAggregation`, `keras_laf.GRUAggregation`
  with `units` units (order-dependent; `"lstm"` is the paper's baseline);
- `"softmax"`, `"powermean"`: `keras_laf.SoftmaxAggregation` (t = 1) and
  `keras_laf.PowerMeanAggregation` (p = 1), one aggregate per feature;
- `"genagg"`: `keras_laf.GenAggAggregation`, its map f, a and b learned,
  one aggregate per feature;
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

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.factory import from_name
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.multi import MultiAggregation
from keras_laf.aggregations.names import check
from keras_laf.aggregations.names import num_aggregates


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
    if isinstance(identifier, list) and not all(
        name in AGGREGATOR_NAMES for name in identifier
    ):
        dtype = kwargs.get("dtype")
        members = [
            from_name(
                name,
                units=units,
                preset=preset,
                name=f"{name}_{index}",
                dtype=dtype,
            )
            for index, name in enumerate(identifier)
        ]
        return MultiAggregation(members, **kwargs)
    return from_name(identifier, units=units, preset=preset, **kwargs)


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

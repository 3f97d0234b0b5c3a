"""The aggregations of keras-laf: the contract, the registry, one module
per family.

- `base`: `SetAggregation`, the contract every aggregation follows (any
  set layout in, one row per set out; `aggregate_sets`, `output_width`,
  `input_domain` and `squash_inputs`);
- `registry`: `register(name)` names an aggregation class, the package's
  own and a user's alike, and `resolve` (also `get`) turns an aggregation
  spec, a name (`"laf"`, `"max"`, `["laf", "max"]`, ...) or a layer with
  its `aggregation_kwargs`, into a layer: the builders, the graph layers,
  `MultiAggregation`, `DegreeScalerAggregation` and the `keras-laf`
  command all go through it, so a name means the same layer everywhere;
- `pooling`: `SetPooling`, the base of the aggregations that mix the
  features, and the softmax over sets;
- `laf`: `keras_laf.LAF`, its presets, constraints, initializers, closed
  forms and callbacks;
- `fixed`: `FixedAggregation` (sum, mean, max, moments);
- `parametric`: `SoftmaxAggregation`, `PowerMeanAggregation`;
- `genagg`: `GenAggAggregation`, the generalised f-mean;
- `kolmogorov_mean`: `KolmogorovMeanAggregation`, the neuralized
  Kolmogorov mean of vectors;
- `quantile`: `QuantileAggregation`, `MedianAggregation`;
- `variance_preserving`: `VariancePreservingAggregation`;
- `attention`: `AttentionalAggregation`, `Set2Set`;
- `recurrent`: `LSTMAggregation`, `GRUAggregation`;
- `gmt`: `GraphMultisetTransformer`;
- `multi`: `MultiAggregation`, several aggregations combined;
- `scaler`: `DegreeScalerAggregation`, PNA's degree scalers around any
  aggregation, and `degree_histogram`, their statistics.
"""

from keras_laf.aggregations.attention import AttentionalAggregation
from keras_laf.aggregations.attention import Set2Set
from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import AGGREGATOR_PRESETS
from keras_laf.aggregations.fixed import PNA_NEIGHBOURHOOD
from keras_laf.aggregations.fixed import FixedAggregation
from keras_laf.aggregations.genagg import GenAggAggregation
from keras_laf.aggregations.gmt import GraphMultisetTransformer
from keras_laf.aggregations.kolmogorov_mean import KolmogorovMeanAggregation
from keras_laf.aggregations.laf import LAF
from keras_laf.aggregations.multi import MultiAggregation
from keras_laf.aggregations.parametric import PowerMeanAggregation
from keras_laf.aggregations.parametric import SoftmaxAggregation
from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.quantile import MedianAggregation
from keras_laf.aggregations.quantile import QuantileAggregation
from keras_laf.aggregations.recurrent import GRUAggregation
from keras_laf.aggregations.recurrent import LSTMAggregation
from keras_laf.aggregations.registry import get
from keras_laf.aggregations.registry import held_kwargs
from keras_laf.aggregations.registry import names
from keras_laf.aggregations.registry import register
from keras_laf.aggregations.registry import registered
from keras_laf.aggregations.registry import resolve
from keras_laf.aggregations.scaler import SCALER_NAMES
from keras_laf.aggregations.scaler import DegreeScalerAggregation
from keras_laf.aggregations.scaler import degree_histogram
from keras_laf.aggregations.variance_preserving import (
    VariancePreservingAggregation,
)

# The names of the package's own aggregations; `names()` adds a user's.
NAMES = names()
# The names whose aggregation gives values of each feature on its own
# (`num_aggregates` per feature), and those that mix the features.
PER_FEATURE_NAMES = tuple(
    name for name in NAMES if not issubclass(registered(name)[0], SetPooling)
)
POOLING_NAMES = tuple(name for name in NAMES if name not in PER_FEATURE_NAMES)


def output_width(identifier, features, **aggregation_kwargs):
    """The output width of `resolve(identifier, **aggregation_kwargs)` on
    elements of `features` features.

    Example:

    >>> output_width(["laf", "max"], 3, aggregations_kwargs=[{"units": 4}, {}])
    15
    >>> output_width("set2set", 3)
    6
    """
    return resolve(identifier, **aggregation_kwargs).output_width(features)


def num_aggregates(identifier, **aggregation_kwargs):
    """How many values `resolve(identifier, **aggregation_kwargs)` gives for
    each feature, for the aggregations that aggregate each feature on its
    own (None for the poolings, which mix the features).

    Example:

    >>> num_aggregates(["mean", "max"])
    2
    >>> num_aggregates("laf", units=4)
    4
    >>> num_aggregates(["laf", "max"], aggregations_kwargs=[{"units": 4}, {}])
    5
    """
    layer = resolve(identifier, **aggregation_kwargs)
    if isinstance(layer, MultiAggregation) and layer.mode == "cat":
        # Concatenated, the members' per-feature aggregates add up.
        counts = [member.num_aggregates for member in layer.members]
        return None if None in counts else sum(counts)
    return layer.num_aggregates


__all__ = [
    "AGGREGATOR_NAMES",
    "AGGREGATOR_PRESETS",
    "AttentionalAggregation",
    "DegreeScalerAggregation",
    "FixedAggregation",
    "GRUAggregation",
    "GenAggAggregation",
    "GraphMultisetTransformer",
    "KolmogorovMeanAggregation",
    "LAF",
    "LSTMAggregation",
    "MedianAggregation",
    "MultiAggregation",
    "NAMES",
    "PER_FEATURE_NAMES",
    "PNA_NEIGHBOURHOOD",
    "POOLING_NAMES",
    "PowerMeanAggregation",
    "QuantileAggregation",
    "SCALER_NAMES",
    "Set2Set",
    "SetAggregation",
    "SetPooling",
    "SoftmaxAggregation",
    "VariancePreservingAggregation",
    "degree_histogram",
    "get",
    "names",
    "num_aggregates",
    "output_width",
    "register",
    "registered",
    "resolve",
    "held_kwargs",
]

"""The aggregations of keras-laf: one module per family, and the registry.

- `base`: `SetAggregation`, the contract every aggregation follows (any
  set layout in, one row per set out);
- `pooling`: `SetPooling`, the base of the aggregations that mix the
  features, and the softmax over sets;
- `fixed`: `FixedAggregation` (sum, mean, max, moments);
- `parametric`: `SoftmaxAggregation`, `PowerMeanAggregation`;
- `genagg`: `GenAggAggregation`, the generalised f-mean;
- `quantile`: `QuantileAggregation`, `MedianAggregation`;
- `variance_preserving`: `VariancePreservingAggregation`;
- `attention`: `AttentionalAggregation`, `Set2Set`;
- `recurrent`: `LSTMAggregation`, `GRUAggregation`;
- `gmt`: `GraphMultisetTransformer`;
- `names`: the names of the registry (`NAMES`, ...), `check` and
  `num_aggregates`;
- `factory`: one layer from one name, for `MultiAggregation`'s members;
- `multi`: `MultiAggregation`, several aggregations combined;
- `scaler`: `DegreeScalerAggregation`, PNA's degree scalers around any
  aggregation, and `degree_histogram`, their statistics;
- `registry`: `get` turns a name (`"laf"`, `"max"`, `["laf", "max"]`,
  ...) into a layer; the builders, the graph layers and the `keras-laf`
  command all go through it, so a name means the same layer everywhere.

LAF itself is in `keras_laf.aggregations.laf`.
"""

from keras_laf.aggregations.attention import AttentionalAggregation
from keras_laf.aggregations.attention import Set2Set
from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.factory import needs_unit_interval
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import AGGREGATOR_PRESETS
from keras_laf.aggregations.fixed import FixedAggregation
from keras_laf.aggregations.genagg import GenAggAggregation
from keras_laf.aggregations.gmt import GraphMultisetTransformer
from keras_laf.aggregations.multi import MultiAggregation
from keras_laf.aggregations.names import DEFAULT_UNITS
from keras_laf.aggregations.names import NAMES
from keras_laf.aggregations.names import PARAMETRIC_NAMES
from keras_laf.aggregations.names import PER_FEATURE_NAMES
from keras_laf.aggregations.names import PNA_NEIGHBOURHOOD
from keras_laf.aggregations.names import POOLING_NAMES
from keras_laf.aggregations.names import check
from keras_laf.aggregations.names import num_aggregates
from keras_laf.aggregations.parametric import PowerMeanAggregation
from keras_laf.aggregations.parametric import SoftmaxAggregation
from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.quantile import MedianAggregation
from keras_laf.aggregations.quantile import QuantileAggregation
from keras_laf.aggregations.recurrent import GRUAggregation
from keras_laf.aggregations.recurrent import LSTMAggregation
from keras_laf.aggregations.registry import get
from keras_laf.aggregations.registry import output_width
from keras_laf.aggregations.scaler import SCALER_NAMES
from keras_laf.aggregations.scaler import DegreeScalerAggregation
from keras_laf.aggregations.scaler import degree_histogram
from keras_laf.aggregations.variance_preserving import (
    VariancePreservingAggregation,
)

__all__ = [
    "AGGREGATOR_NAMES",
    "AGGREGATOR_PRESETS",
    "AttentionalAggregation",
    "DEFAULT_UNITS",
    "DegreeScalerAggregation",
    "FixedAggregation",
    "GRUAggregation",
    "GenAggAggregation",
    "GraphMultisetTransformer",
    "LSTMAggregation",
    "MedianAggregation",
    "MultiAggregation",
    "NAMES",
    "PARAMETRIC_NAMES",
    "PER_FEATURE_NAMES",
    "PNA_NEIGHBOURHOOD",
    "POOLING_NAMES",
    "PowerMeanAggregation",
    "QuantileAggregation",
    "Set2Set",
    "SetAggregation",
    "SCALER_NAMES",
    "SetPooling",
    "SoftmaxAggregation",
    "VariancePreservingAggregation",
    "check",
    "degree_histogram",
    "get",
    "needs_unit_interval",
    "num_aggregates",
    "output_width",
]

"""keras-laf: Learnable Aggregation Functions (LAF) for Keras 3."""

import importlib

from keras_laf import aggregations
from keras_laf import callbacks
from keras_laf import config
from keras_laf import constraints
from keras_laf import initializers
from keras_laf import presets
from keras_laf.aggregation import SetAggregation
from keras_laf.attention import ISAB
from keras_laf.attention import MAB
from keras_laf.attention import PMA
from keras_laf.attention import SAB
from keras_laf.attentional_aggregation import AttentionalAggregation
from keras_laf.attentional_aggregation import Set2Set
from keras_laf.closed_forms import CLOSED_FORM_NAMES
from keras_laf.closed_forms import ClosedForm
from keras_laf.closed_forms import closed_form
from keras_laf.equivariant import PermutationEquivariant
from keras_laf.fixed_aggregation import DEEPSETS_AGGREGATORS
from keras_laf.fixed_aggregation import PNA_AGGREGATORS
from keras_laf.fixed_aggregation import FixedAggregation
from keras_laf.graph_convolutions import GATConv
from keras_laf.graph_convolutions import GCNConv
from keras_laf.graph_convolutions import GINConv
from keras_laf.graph_multiset_transformer import GraphMultisetTransformer
from keras_laf.graphs import GraphReadout
from keras_laf.graphs import MessagePassing
from keras_laf.laf_layer import LAF
from keras_laf.lstm_aggregation import GRUAggregation
from keras_laf.lstm_aggregation import LSTMAggregation
from keras_laf.multi_aggregation import MultiAggregation
from keras_laf.ops import laf
from keras_laf.parametric_aggregations import PowerMeanAggregation
from keras_laf.parametric_aggregations import SoftmaxAggregation
from keras_laf.per_element import PerElement
from keras_laf.set_pooling import SetPooling
from keras_laf.sets import as_set_batch
from keras_laf.sets import from_padded
from keras_laf.sets import to_padded

__version__ = "0.1.0"

# Subpackages imported on first use, so that `import keras_laf` gives them
# without an import cycle (`keras_laf.models` imports the layers above).
_LAZY_SUBPACKAGES = ("datasets", "models")

__all__ = [
    "AttentionalAggregation",
    "CLOSED_FORM_NAMES",
    "ClosedForm",
    "DEEPSETS_AGGREGATORS",
    "FixedAggregation",
    "GATConv",
    "GCNConv",
    "GINConv",
    "GRUAggregation",
    "GraphMultisetTransformer",
    "GraphReadout",
    "ISAB",
    "LAF",
    "LSTMAggregation",
    "MAB",
    "MessagePassing",
    "MultiAggregation",
    "PMA",
    "PNA_AGGREGATORS",
    "PerElement",
    "PermutationEquivariant",
    "PowerMeanAggregation",
    "SAB",
    "Set2Set",
    "SetAggregation",
    "SetPooling",
    "SoftmaxAggregation",
    "aggregations",
    "callbacks",
    "as_set_batch",
    "closed_form",
    "config",
    "constraints",
    "initializers",
    "presets",
    "from_padded",
    "laf",
    "to_padded",
]


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"keras_laf.{name}")
    raise AttributeError(f"module 'keras_laf' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY_SUBPACKAGES])

"""keras-laf: Learnable Aggregation Functions (LAF) for Keras 3.

The public names, flat: the layers and functions of the subpackages,

- `aggregations`: its classes (`LAF`, each aggregation its modules
  register, the bases `SetAggregation` and `SetPooling`,
  `DegreeScalerAggregation`) and `degree_histogram`; the registry of
  names (`get`, `register`, ...) stays in `keras_laf.aggregations`;
- `aggregations.laf`: the presets, constraints, initializers, closed forms
  and callbacks of `LAF`;
- `layers`: the set layers `MAB`, `SAB`, `ISAB`, `PMA`, `PerElement`,
  `PermutationEquivariant`;
- `graphs`: `AggregationConv`, `GraphReadout`, GIN (and GINE, with edge
  features), GCN and GAT; the message-passing template
  `keras_laf.graphs.GraphConvolution` stays in `keras_laf.graphs`;
- `ops`: LAF as a function of tensors (`keras_laf.laf`);
- `datasets`: padded and ragged sets, graph batches.
"""

import importlib
import sys

from keras_laf import aggregations
from keras_laf import compat
from keras_laf.aggregations import degree_histogram
from keras_laf.aggregations.fixed import DEEPSETS_AGGREGATORS
from keras_laf.aggregations.fixed import PNA_AGGREGATORS
from keras_laf.aggregations.laf import callbacks
from keras_laf.aggregations.laf import constraints
from keras_laf.aggregations.laf import initializers
from keras_laf.aggregations.laf import presets
from keras_laf.aggregations.laf.closed_forms import CLOSED_FORM_NAMES
from keras_laf.aggregations.laf.closed_forms import ClosedForm
from keras_laf.aggregations.laf.closed_forms import closed_form
from keras_laf.compat import MessagePassing
from keras_laf.core import config
from keras_laf.core.sets import as_set_batch
from keras_laf.core.sets import from_padded
from keras_laf.core.sets import to_padded
from keras_laf.graphs import AggregationConv
from keras_laf.graphs import GATConv
from keras_laf.graphs import GCNConv
from keras_laf.graphs import GINConv
from keras_laf.graphs import GINEConv
from keras_laf.graphs import GraphReadout
from keras_laf.layers import ISAB
from keras_laf.layers import MAB
from keras_laf.layers import PMA
from keras_laf.layers import SAB
from keras_laf.layers import PerElement
from keras_laf.layers import PermutationEquivariant
from keras_laf.ops import laf

__version__ = "0.2.0"

# `keras_laf.config` imports as a module of its own; keras-laf 0.1.0's
# module paths that moved are in `keras_laf.compat`.
sys.modules.setdefault("keras_laf.config", config)
for _former, _current in compat.MOVED_MODULES.items():
    sys.modules.setdefault(_former, importlib.import_module(_current))

# Subpackages imported on first use, so that `import keras_laf` gives them
# without an import cycle (`keras_laf.models` imports the layers above).
_LAZY_SUBPACKAGES = ("datasets", "models")

# The aggregation classes of `keras_laf.aggregations`, flat.
_AGGREGATION_CLASSES = {
    name: getattr(aggregations, name)
    for name in aggregations.__all__
    if isinstance(getattr(aggregations, name), type)
}
globals().update(_AGGREGATION_CLASSES)

# The aggregation classes, and the names imported above.
__all__ = [
    *_AGGREGATION_CLASSES,
    "AggregationConv",
    "CLOSED_FORM_NAMES",
    "ClosedForm",
    "DEEPSETS_AGGREGATORS",
    "GATConv",
    "GCNConv",
    "GINConv",
    "GINEConv",
    "GraphReadout",
    "ISAB",
    "MAB",
    "MessagePassing",
    "PMA",
    "PNA_AGGREGATORS",
    "PerElement",
    "PermutationEquivariant",
    "SAB",
    "aggregations",
    "as_set_batch",
    "callbacks",
    "closed_form",
    "config",
    "constraints",
    "degree_histogram",
    "from_padded",
    "initializers",
    "laf",
    "presets",
    "to_padded",
]
__all__.sort()


def __getattr__(name):
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"keras_laf.{name}")
    raise AttributeError(f"module 'keras_laf' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY_SUBPACKAGES])

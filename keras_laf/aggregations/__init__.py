"""The aggregations of keras-laf: the contract, the registry, one module
per family.

- `base`: `SetAggregation`, the contract every aggregation follows (any
  set layout in, one row per set out; `aggregate_sets`, `output_width`,
  `input_domain` and `squash_inputs`);
- `registry`: `register(name, **defaults)` names an aggregation class,
  the package's own and a user's alike, and `resolve` (also `get`) turns
  an aggregation spec, a name (`"laf"`, `"max"`, `["laf", "max"]`, ...)
  or a layer with its `aggregation_kwargs`, into a layer: the builders,
  the graph layers, `MultiAggregation`, `DegreeScalerAggregation` and the
  `keras-laf` command all go through it, so a name means the same layer
  everywhere;
- `pooling`: `SetPooling`, the base of the aggregations that mix the
  features, and the softmax over sets;
- `scaler`: `DegreeScalerAggregation`, PNA's degree scalers around any
  aggregation, and `degree_histogram`, their statistics;
- every other module (`laf`, `fixed`, `parametric`, `multi`, ...) is a
  family whose classes register themselves with `@register`.

The names come from two places: those imported below, and every class
that a module of this folder registers, handed on by its class name
(`keras_laf.aggregations.LAF`, also `keras_laf.LAF`). This package
imports all its modules, so a new module with a registered class needs
no edit here.
"""

import importlib
import pkgutil

from keras_laf.aggregations import registry
from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.aggregations.fixed import AGGREGATOR_PRESETS
from keras_laf.aggregations.fixed import PNA_NEIGHBOURHOOD
from keras_laf.aggregations.multi import MultiAggregation
from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import get
from keras_laf.aggregations.registry import held_kwargs
from keras_laf.aggregations.registry import names
from keras_laf.aggregations.registry import register
from keras_laf.aggregations.registry import registered
from keras_laf.aggregations.registry import resolve
from keras_laf.aggregations.scaler import SCALER_NAMES
from keras_laf.aggregations.scaler import DegreeScalerAggregation
from keras_laf.aggregations.scaler import degree_histogram

# Every module of this folder, in name order, so that its classes
# register; then the registered classes defined in them, by class name.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_module.name}")
_REGISTERED_CLASSES = {
    cls.__name__: cls
    for cls in registry.classes()
    if cls.__module__.startswith(f"{__name__}.")
}
globals().update(_REGISTERED_CLASSES)

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


# The registered classes, and the names defined or imported above.
__all__ = [
    *_REGISTERED_CLASSES,
    "AGGREGATOR_NAMES",
    "AGGREGATOR_PRESETS",
    "DegreeScalerAggregation",
    "NAMES",
    "PER_FEATURE_NAMES",
    "PNA_NEIGHBOURHOOD",
    "POOLING_NAMES",
    "SCALER_NAMES",
    "SetAggregation",
    "SetPooling",
    "degree_histogram",
    "get",
    "held_kwargs",
    "names",
    "num_aggregates",
    "output_width",
    "register",
    "registered",
    "resolve",
]
__all__.sort()

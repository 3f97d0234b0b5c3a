"""Model builders of keras-laf, imported as `keras_laf.models`.

The KerasTuner hypermodels (`DeepSetsHyperModel`,
`SetTransformerHyperModel`) need the `tuner` extra
(`pip install "keras-laf[tuner]"`) and are imported on first use.
"""

from keras_laf.models.deep_sets import deep_sets
from keras_laf.models.graph_model import GraphModel
from keras_laf.models.graph_network import graph_network
from keras_laf.models.molecule_network import molecule_network
from keras_laf.models.point_cloud import point_cloud_classifier
from keras_laf.models.set_expansion import set_expansion
from keras_laf.models.set_transformer import set_transformer

_HYPERMODELS = (
    "DeepSetsHyperModel",
    "SetHyperModel",
    "SetTransformerHyperModel",
)

__all__ = [
    "DeepSetsHyperModel",
    "GraphModel",
    "SetHyperModel",
    "SetTransformerHyperModel",
    "deep_sets",
    "graph_network",
    "molecule_network",
    "point_cloud_classifier",
    "set_expansion",
    "set_transformer",
]


def __getattr__(name):
    # The hypermodels import keras_tuner, an optional dependency.
    if name in _HYPERMODELS:
        from keras_laf.models import hypermodels

        return getattr(hypermodels, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

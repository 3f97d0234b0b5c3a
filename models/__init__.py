"""Model builders of keras-laf, imported as `keras_laf.models`."""

from keras_laf.models.deep_sets import deep_sets
from keras_laf.models.graph_network import graph_network
from keras_laf.models.graph_network import task_errors
from keras_laf.models.graph_network import train_and_evaluate
from keras_laf.models.hypermodels import DeepSetsHyperModel
from keras_laf.models.hypermodels import SetTransformerHyperModel
from keras_laf.models.point_cloud import point_cloud_classifier
from keras_laf.models.set_model import AGGREGATIONS
from keras_laf.models.set_transformer import set_transformer

__all__ = [
    "AGGREGATIONS",
    "DeepSetsHyperModel",
    "SetTransformerHyperModel",
    "deep_sets",
    "graph_network",
    "point_cloud_classifier",
    "set_transformer",
    "task_errors",
    "train_and_evaluate",
]

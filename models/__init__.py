"""Model builders of keras-laf, imported as `keras_laf.models`."""

from keras_laf.models.deep_sets import deep_sets
from keras_laf.models.point_cloud import point_cloud_classifier
from keras_laf.models.set_model import AGGREGATIONS
from keras_laf.models.set_transformer import set_transformer

__all__ = [
    "AGGREGATIONS",
    "deep_sets",
    "point_cloud_classifier",
    "set_transformer",
]

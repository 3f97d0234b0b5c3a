"""Data sets of the LAF experiments: sets of digits, of digit images, and
point clouds, as NumPy arrays and as `tf.data` pipelines."""

from keras_laf.datasets.aggregation_targets import TARGETS
from keras_laf.datasets.aggregation_targets import check_target
from keras_laf.datasets.aggregation_targets import target_value
from keras_laf.datasets.aggregation_targets import target_values
from keras_laf.datasets.digit_images import SOURCES
from keras_laf.datasets.digit_images import DigitImages
from keras_laf.datasets.digit_images import load_digit_images
from keras_laf.datasets.graph_properties import EXTRAPOLATION_SIZES
from keras_laf.datasets.graph_properties import GRAPH_TASKS
from keras_laf.datasets.graph_properties import GRAPH_TYPE_PROBABILITIES
from keras_laf.datasets.graph_properties import GRAPH_TYPES
from keras_laf.datasets.graph_properties import NODE_TASKS
from keras_laf.datasets.graph_properties import TRAIN_SIZES
from keras_laf.datasets.graph_properties import PropertyGraphs
from keras_laf.datasets.graph_properties import adjacency_to_edges
from keras_laf.datasets.graph_properties import disjoint_union
from keras_laf.datasets.graph_properties import graph_property_labels
from keras_laf.datasets.graph_properties import make_graph_property_splits
from keras_laf.datasets.graph_properties import make_property_graphs
from keras_laf.datasets.graph_properties import node_property_labels
from keras_laf.datasets.graph_properties import random_graph
from keras_laf.datasets.integer_sets import TEST_MAX_SIZES
from keras_laf.datasets.integer_sets import IntegerSets
from keras_laf.datasets.integer_sets import make_test_datasets
from keras_laf.datasets.integer_sets import make_test_sets
from keras_laf.datasets.integer_sets import make_test_sets_by_max_size
from keras_laf.datasets.integer_sets import make_training_sets
from keras_laf.datasets.integer_sets import sample_test_sets
from keras_laf.datasets.integer_sets import sample_training_sets
from keras_laf.datasets.mnist_sets import UNIQUE_REDUCTIONS
from keras_laf.datasets.mnist_sets import MnistSets
from keras_laf.datasets.mnist_sets import make_mnist_test_datasets
from keras_laf.datasets.mnist_sets import make_mnist_test_sets
from keras_laf.datasets.mnist_sets import make_mnist_test_sets_by_max_size
from keras_laf.datasets.mnist_sets import make_mnist_training_sets
from keras_laf.datasets.mnist_sets import make_unique_digit_sets
from keras_laf.datasets.point_clouds import SOLID_NAMES
from keras_laf.datasets.point_clouds import PointClouds
from keras_laf.datasets.point_clouds import load_modelnet40
from keras_laf.datasets.point_clouds import make_solid_point_clouds
from keras_laf.datasets.point_clouds import standardize_point_clouds
from keras_laf.datasets.ragged_dataset import ragged_set_dataset
from keras_laf.datasets.ragged_dataset import to_padded_batches

__all__ = [
    "DigitImages",
    "EXTRAPOLATION_SIZES",
    "GRAPH_TASKS",
    "GRAPH_TYPES",
    "GRAPH_TYPE_PROBABILITIES",
    "IntegerSets",
    "MnistSets",
    "NODE_TASKS",
    "PointClouds",
    "PropertyGraphs",
    "SOLID_NAMES",
    "SOURCES",
    "TARGETS",
    "TEST_MAX_SIZES",
    "TRAIN_SIZES",
    "UNIQUE_REDUCTIONS",
    "adjacency_to_edges",
    "check_target",
    "disjoint_union",
    "graph_property_labels",
    "load_digit_images",
    "load_modelnet40",
    "make_graph_property_splits",
    "make_mnist_test_datasets",
    "make_mnist_test_sets",
    "make_mnist_test_sets_by_max_size",
    "make_mnist_training_sets",
    "make_property_graphs",
    "make_solid_point_clouds",
    "make_test_datasets",
    "make_test_sets",
    "make_test_sets_by_max_size",
    "make_training_sets",
    "make_unique_digit_sets",
    "node_property_labels",
    "ragged_set_dataset",
    "random_graph",
    "sample_test_sets",
    "sample_training_sets",
    "standardize_point_clouds",
    "target_value",
    "target_values",
    "to_padded_batches",
]

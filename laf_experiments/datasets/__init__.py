"""The data sets of the LAF paper's experiments: sets of digits and of digit
images labelled by the twelve aggregation targets, unique-digit sets, point
clouds (ModelNet40 or generated solids) and the graph-properties benchmark
of PNA, as NumPy arrays and `tf.data` pipelines.

The general pipelines they build on (`ragged_set_dataset`,
`to_padded_batches`, `disjoint_union`) are in `keras_laf.datasets`.
"""

from laf_experiments.datasets.aggregation_targets import TARGETS
from laf_experiments.datasets.aggregation_targets import check_target
from laf_experiments.datasets.aggregation_targets import target_value
from laf_experiments.datasets.aggregation_targets import target_values
from laf_experiments.datasets.digit_images import SOURCES
from laf_experiments.datasets.digit_images import DigitImages
from laf_experiments.datasets.digit_images import load_digit_images
from laf_experiments.datasets.digit_sets import TEST_MAX_SIZES
from laf_experiments.datasets.digit_sets import UNIQUE_REDUCTIONS
from laf_experiments.datasets.digit_sets import IntegerSets
from laf_experiments.datasets.digit_sets import MnistSets
from laf_experiments.datasets.digit_sets import make_test_datasets
from laf_experiments.datasets.digit_sets import make_test_sets
from laf_experiments.datasets.digit_sets import make_test_sets_by_max_size
from laf_experiments.datasets.digit_sets import make_training_sets
from laf_experiments.datasets.digit_sets import make_unique_digit_sets
from laf_experiments.datasets.digit_sets import sample_test_sets
from laf_experiments.datasets.digit_sets import sample_training_sets
from laf_experiments.datasets.graph_properties import EXTRAPOLATION_SIZES
from laf_experiments.datasets.graph_properties import GRAPH_TASKS
from laf_experiments.datasets.graph_properties import GRAPH_TYPE_PROBABILITIES
from laf_experiments.datasets.graph_properties import GRAPH_TYPES
from laf_experiments.datasets.graph_properties import NODE_TASKS
from laf_experiments.datasets.graph_properties import TRAIN_SIZES
from laf_experiments.datasets.graph_properties import PropertyGraphs
from laf_experiments.datasets.graph_properties import graph_property_labels
from laf_experiments.datasets.graph_properties import make_graph_property_splits
from laf_experiments.datasets.graph_properties import make_property_graphs
from laf_experiments.datasets.graph_properties import node_property_labels
from laf_experiments.datasets.graph_properties import random_graph
from laf_experiments.datasets.point_clouds import SOLID_NAMES
from laf_experiments.datasets.point_clouds import PointClouds
from laf_experiments.datasets.point_clouds import load_modelnet40
from laf_experiments.datasets.point_clouds import make_solid_point_clouds
from laf_experiments.datasets.point_clouds import standardize_point_clouds

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
    "check_target",
    "graph_property_labels",
    "load_digit_images",
    "load_modelnet40",
    "make_graph_property_splits",
    "make_property_graphs",
    "make_solid_point_clouds",
    "make_test_datasets",
    "make_test_sets",
    "make_test_sets_by_max_size",
    "make_training_sets",
    "make_unique_digit_sets",
    "node_property_labels",
    "random_graph",
    "sample_test_sets",
    "sample_training_sets",
    "standardize_point_clouds",
    "target_value",
    "target_values",
]

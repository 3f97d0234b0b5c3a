"""Data sets of the LAF experiments: sets of digits, of digit images, and
point clouds, as NumPy arrays and as `tf.data` pipelines."""

from keras_laf.datasets.aggregation_targets import TARGETS
from keras_laf.datasets.aggregation_targets import check_target
from keras_laf.datasets.aggregation_targets import target_value
from keras_laf.datasets.aggregation_targets import target_values
from keras_laf.datasets.digit_images import SOURCES
from keras_laf.datasets.digit_images import DigitImages
from keras_laf.datasets.digit_images import load_digit_images
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
    "IntegerSets",
    "MnistSets",
    "PointClouds",
    "SOLID_NAMES",
    "SOURCES",
    "TARGETS",
    "TEST_MAX_SIZES",
    "UNIQUE_REDUCTIONS",
    "check_target",
    "load_digit_images",
    "load_modelnet40",
    "make_mnist_test_datasets",
    "make_mnist_test_sets",
    "make_mnist_test_sets_by_max_size",
    "make_mnist_training_sets",
    "make_solid_point_clouds",
    "make_test_datasets",
    "make_test_sets",
    "make_test_sets_by_max_size",
    "make_training_sets",
    "make_unique_digit_sets",
    "ragged_set_dataset",
    "sample_test_sets",
    "sample_training_sets",
    "standardize_point_clouds",
    "target_value",
    "target_values",
    "to_padded_batches",
]

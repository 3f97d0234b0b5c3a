"""Input pipelines for sets and graphs: sets padded with their mask (the
inputs of the models of `keras_laf.models` on every backend), ragged
`tf.data` batches of sets and their padded form, and batches of graphs as
one disjoint union.

The data sets of the LAF paper's experiments (sets of digits with twelve
targets, digit images, point clouds, the graph-properties benchmark) are
in `laf_experiments.datasets`.
"""

from keras_laf.datasets.graph_batches import adjacency_to_edges
from keras_laf.datasets.graph_batches import disjoint_union
from keras_laf.datasets.padded_sets import pad_sets
from keras_laf.datasets.ragged_dataset import ragged_set_dataset
from keras_laf.datasets.ragged_dataset import to_padded_batches

__all__ = [
    "adjacency_to_edges",
    "disjoint_union",
    "pad_sets",
    "ragged_set_dataset",
    "to_padded_batches",
]

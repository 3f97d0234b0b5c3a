"""Input pipelines for sets and graphs: sets padded with their mask (the
inputs of the models of `keras_laf.models` on every backend), ragged
`tf.data` batches of sets and their padded form, and batches of graphs as
one disjoint union, padded to a few sizes for compiled models; molecules
from SMILES as graphs of their atoms and bonds (RDKit, the `molecules`
extra, imported when SMILES are parsed); MNIST's digit images from a
user's own copy (Keras's `mnist.npz`, the IDX files, `mnist.pkl.gz`) or
from a wheel, without a download; point clouds from ModelNet40's HDF5
files or sampled offline from the surfaces of simple solids.

The data sets of the LAF paper's experiments (sets of digits with twelve
targets, sets of digit images, the graph-properties benchmark) are in
`laf_experiments.data`.
"""

from keras_laf.datasets.digit_images import DigitImages
from keras_laf.datasets.digit_images import load_digit_images
from keras_laf.datasets.graph_batches import GraphBatches
from keras_laf.datasets.graph_batches import adjacency_to_edges
from keras_laf.datasets.graph_batches import bucket_size
from keras_laf.datasets.graph_batches import check_graph_model
from keras_laf.datasets.graph_batches import disjoint_union
from keras_laf.datasets.graph_batches import pad_graph_batch
from keras_laf.datasets.molecules import ATOM_FEATURES
from keras_laf.datasets.molecules import BOND_FEATURES
from keras_laf.datasets.molecules import NUM_ATOM_FEATURES
from keras_laf.datasets.molecules import NUM_BOND_FEATURES
from keras_laf.datasets.molecules import MoleculeBatches
from keras_laf.datasets.molecules import MoleculeGraphs
from keras_laf.datasets.molecules import SkippedMolecule
from keras_laf.datasets.molecules import SkippedMoleculeWarning
from keras_laf.datasets.molecules import atom_features
from keras_laf.datasets.molecules import bond_features
from keras_laf.datasets.molecules import feature_widths
from keras_laf.datasets.molecules import read_molecule_table
from keras_laf.datasets.molecules import read_smiles_file
from keras_laf.datasets.molecules import smiles_to_graphs
from keras_laf.datasets.padded_sets import SetBatches
from keras_laf.datasets.padded_sets import pad_sets
from keras_laf.datasets.point_clouds import SOLID_NAMES
from keras_laf.datasets.point_clouds import PointClouds
from keras_laf.datasets.point_clouds import load_modelnet40
from keras_laf.datasets.point_clouds import make_solid_point_clouds
from keras_laf.datasets.point_clouds import standardize_point_clouds
from keras_laf.datasets.ragged_dataset import ragged_set_dataset
from keras_laf.datasets.ragged_dataset import to_padded_batches

__all__ = [
    "ATOM_FEATURES",
    "BOND_FEATURES",
    "DigitImages",
    "GraphBatches",
    "MoleculeBatches",
    "MoleculeGraphs",
    "NUM_ATOM_FEATURES",
    "NUM_BOND_FEATURES",
    "PointClouds",
    "SetBatches",
    "SkippedMolecule",
    "SkippedMoleculeWarning",
    "SOLID_NAMES",
    "adjacency_to_edges",
    "atom_features",
    "bond_features",
    "bucket_size",
    "check_graph_model",
    "disjoint_union",
    "feature_widths",
    "load_digit_images",
    "load_modelnet40",
    "make_solid_point_clouds",
    "pad_graph_batch",
    "pad_sets",
    "ragged_set_dataset",
    "read_molecule_table",
    "read_smiles_file",
    "smiles_to_graphs",
    "standardize_point_clouds",
    "to_padded_batches",
]

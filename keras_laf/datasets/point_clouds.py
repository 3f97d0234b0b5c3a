"""Point clouds: ModelNet40 from its HDF5 files, or sampled simple solids.

Both sources give clouds of a fixed number of points, each standardised by
`standardize_point_clouds`: translated to zero mean and divided by the
standard deviation of all its coordinates (one scalar per cloud, so the
shape's proportions are kept).

- `load_modelnet40` reads the common HDF5 form of ModelNet40 (the
  `modelnet40_ply_hdf5_2048` directory of PointNet) and keeps a random
  subset of `num_points` of the 2,048 points of each cloud. It needs
  h5py (`pip install h5py`, or the `experiments` extra).
- `make_solid_point_clouds` samples points uniformly from the surfaces of
  the solids of `SOLID_NAMES`, for use without the data set (offline,
  tests). Each cloud gets random per-axis scale factors, uniform in
  `[0.8, 1.25]`, and a uniformly random 3D rotation; a common scale would
  be removed by the standardisation anyway.

TensorFlow is imported only by `PointClouds.to_dataset`, so that the
clouds themselves are NumPy arrays on every backend.
"""

import dataclasses
import pathlib

import numpy as np

from keras_laf.core.validation import check_positive_int

# The classes of `make_solid_point_clouds`, in the order of their labels.
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
# Where ModelNet40's HDF5 files come from, for the errors of
# `load_modelnet40`.
MODELNET40_HELP = (
    "Expected the `modelnet40_ply_hdf5_2048` directory of PointNet: HDF5 "
    "files `ply_data_train*.h5` and `ply_data_test*.h5` holding `data` "
    "(N, 2048, 3) and `label` (N, 1), and `shape_names.txt`. It is "
    "distributed as `modelnet40_ply_hdf5_2048.zip`, see "
    "https://github.com/charlesq34/pointnet (originally "
    "https://shapenet.cs.stanford.edu/media/modelnet40_ply_hdf5_2048.zip)."
)
MIN_AXIS_SCALE = 0.8
MAX_AXIS_SCALE = 1.25

_TORUS_MAJOR_RADIUS = 1.0
_TORUS_MINOR_RADIUS = 0.4
_ELLIPSOID_AXES = np.array([1.0, 0.6, 0.3])
# Square pyramid: base [-1, 1]^2 at z = -1, apex at (0, 0, 1).
_PYRAMID_TRIANGLES = np.array(
    [
        [[-1, -1, -1], [1, -1, -1], [1, 1, -1]],
        [[-1, -1, -1], [1, 1, -1], [-1, 1, -1]],
        [[-1, -1, -1], [1, -1, -1], [0, 0, 1]],
        [[1, -1, -1], [1, 1, -1], [0, 0, 1]],
        [[1, 1, -1], [-1, 1, -1], [0, 0, 1]],
        [[-1, 1, -1], [-1, -1, -1], [0, 0, 1]],
    ],
    dtype="float64",
)


@dataclasses.dataclass(frozen=True)
class PointClouds:
    """Point clouds of a fixed size with their class labels.

    Attributes:
        points: float32 NumPy array `(num_clouds, num_points, 3)`.
        labels: int32 NumPy array `(num_clouds,)`, indices into
            `class_names`.
        class_names: tuple of the class names.
    """

    points: np.ndarray
    labels: np.ndarray
    class_names: tuple

    def subset(self, indices):
        """The clouds at `indices` (an index array or a slice), with the
        same class names.

        Example:

        >>> clouds = make_solid_point_clouds(10, num_points=50)
        >>> clouds.subset([0, 3]).points.shape
        (2, 50, 3)
        """
        return PointClouds(
            points=self.points[indices],
            labels=self.labels[indices],
            class_names=self.class_names,
        )

    def to_dataset(self, batch_size, shuffle=False, seed=None):
        """Builds a `tf.data.Dataset` of batches of clouds and labels.

        Args:
            batch_size: positive int, the number of clouds per batch.
            shuffle: whether to shuffle the clouds, afresh at every epoch.
            seed: optional int seed of the shuffling.

        Returns:
            A `tf.data.Dataset` of `(points, labels)`: float32
            `(batch, num_points, 3)` and int32 `(batch,)`.

        Example:

        >>> clouds = make_solid_point_clouds(64, num_points=100)
        >>> dataset = clouds.to_dataset(batch_size=16, shuffle=True, seed=0)
        """
        import tensorflow as tf

        check_positive_int("batch_size", batch_size)
        dataset = tf.data.Dataset.from_tensor_slices((self.points, self.labels))
        if shuffle:
            dataset = dataset.shuffle(len(self.labels), seed=seed)
        return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def standardize_point_clouds(points):
    """Translates each cloud to zero mean and scales it to unit variance.

    Each cloud is divided by the standard deviation of all its centred
    coordinates together, so afterwards the mean of each axis is 0 and
    the mean of the squared coordinates is 1. A cloud of identical points
    is only centred.

    Args:
        points: array `(num_clouds, num_points, 3)`.

    Returns:
        float32 NumPy array of the same shape.

    Example:

    >>> clouds = standardize_point_clouds(np.random.rand(2, 100, 3))
    >>> bool(np.allclose(clouds.std(axis=(1, 2)), 1.0, atol=1e-5))
    True
    """
    points = np.asarray(points, dtype="float64")
    if points.ndim != 3 or points.shape[-1] != 3:
        raise ValueError(
            "`points` must have shape (num_clouds, num_points, 3). "
            f"Received shape: {points.shape}"
        )
    centred = points - points.mean(axis=1, keepdims=True)
    scale = centred.std(axis=(1, 2), keepdims=True)
    return (centred / np.where(scale > 0, scale, 1.0)).astype("float32")


def load_modelnet40(directory, split="train", num_points=1000, seed=0):
    """Loads ModelNet40 point clouds from its HDF5 files.

    Args:
        directory: path of the `modelnet40_ply_hdf5_2048` directory.
        split: `"train"` or `"test"`: reads the `ply_data_{split}*.h5`
            files, in sorted order.
        num_points: positive int, the number of points kept per cloud, a
            random subset without replacement (the paper uses 100 and
            1000); at most the number of points stored per cloud.
        seed: non-negative int seed of the point subsets.

    Returns:
        A `PointClouds` of standardised clouds; `class_names` are the lines
        of `shape_names.txt`.

    Example:

    >>> clouds = load_modelnet40(  # doctest: +SKIP
    ...     "data/modelnet40_ply_hdf5_2048", "test"
    ... )
    >>> dataset = clouds.to_dataset(batch_size=32)  # doctest: +SKIP
    """
    import h5py

    if split not in ("train", "test"):
        raise ValueError(
            f"`split` must be 'train' or 'test'. Received: {split!r}"
        )
    check_positive_int("num_points", num_points)
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(
            f"ModelNet40 directory not found: {directory}. {MODELNET40_HELP}"
        )
    paths = sorted(directory.glob(f"ply_data_{split}*.h5"))
    names_path = directory / "shape_names.txt"
    if not paths or not names_path.is_file():
        raise FileNotFoundError(
            f"No `ply_data_{split}*.h5` files or no `shape_names.txt` in "
            f"{directory}. {MODELNET40_HELP}"
        )
    clouds, labels = [], []
    for path in paths:
        with h5py.File(path, "r") as file:
            if "data" not in file or "label" not in file:
                raise ValueError(
                    f"{path} lacks the `data` or `label` dataset. Found: "
                    f"{sorted(file.keys())}. {MODELNET40_HELP}"
                )
            clouds.append(file["data"][:])
            labels.append(file["label"][:].reshape(-1))
    clouds = np.concatenate(clouds)
    if num_points > clouds.shape[1]:
        raise ValueError(
            f"`num_points` must be at most {clouds.shape[1]}, the number of "
            f"points per cloud in {directory}. Received: {num_points}"
        )
    rng = np.random.default_rng(seed)
    order = np.tile(np.arange(clouds.shape[1]), (len(clouds), 1))
    chosen = rng.permuted(order, axis=1)[:, :num_points]
    clouds = np.take_along_axis(clouds, chosen[:, :, None], axis=1)
    class_names = tuple(names_path.read_text().split())
    return PointClouds(
        points=standardize_point_clouds(clouds),
        labels=np.concatenate(labels).astype("int32"),
        class_names=class_names,
    )


def make_solid_point_clouds(num_clouds, num_points=1000, seed=0):
    """Samples point clouds from the surfaces of simple solids.

    The class of each cloud is uniform over `SOLID_NAMES`. Before the
    random scaling and rotation, the solids are: the unit sphere; the cube
    `[-1, 1]^3`; the cylinder and the cone of radius 1 and height 2 with
    their bases (the cone's apex on top); a torus of radii 1 and 0.4; a
    pyramid with base `[-1, 1]^2` and height 2; an ellipsoid of semi-axes
    1, 0.6, 0.3; and the octahedron `|x| + |y| + |z| = 1`. Points are
    uniform on each surface (area-weighted).

    Args:
        num_clouds: positive int, the number of clouds.
        num_points: positive int, the number of points per cloud.
        seed: non-negative int seed.

    Returns:
        A `PointClouds` of standardised clouds with `class_names` equal to
        `SOLID_NAMES`.

    Example:

    >>> clouds = make_solid_point_clouds(1000, num_points=100)
    >>> clouds.points.shape
    (1000, 100, 3)
    """
    check_positive_int("num_clouds", num_clouds)
    check_positive_int("num_points", num_points)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(SOLID_NAMES), size=num_clouds)
    points = np.zeros((num_clouds, num_points, 3))
    for label, name in enumerate(SOLID_NAMES):
        in_class = labels == label
        count = int(in_class.sum()) * num_points
        points[in_class] = _SURFACE_SAMPLERS[name](count, rng).reshape(
            -1, num_points, 3
        )
    scales = rng.uniform(MIN_AXIS_SCALE, MAX_AXIS_SCALE, (num_clouds, 1, 3))
    rotations = _random_rotations(num_clouds, rng)
    points = np.einsum("cpj,cij->cpi", points * scales, rotations)
    return PointClouds(
        points=standardize_point_clouds(points),
        labels=labels.astype("int32"),
        class_names=SOLID_NAMES,
    )


def _random_rotations(count, rng):
    # Rotation matrices of uniformly random unit quaternions (w, x, y, z).
    w, x, y, z = _unit_vectors(count, 4, rng).T
    return np.stack(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    ).transpose(2, 0, 1)


def _unit_vectors(count, dimension, rng):
    vectors = rng.normal(size=(count, dimension))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _disk(count, rng, height):
    # Uniform points on the unit disk in the plane z = height.
    radius = np.sqrt(rng.random(count))
    angle = rng.uniform(0, 2 * np.pi, count)
    return np.stack(
        [
            radius * np.cos(angle),
            radius * np.sin(angle),
            np.full(count, height),
        ],
        axis=1,
    )


def _choose(count, rng, probability, first, second):
    # Each point from `first` with `probability`, else from `second`.
    pick_first = rng.random(count) < probability
    return np.where(pick_first[:, None], first, second)


def _accept(count, rng, propose):
    # Rejection sampling: `propose(n, rng)` returns n candidate points and
    # their acceptance probabilities.
    accepted = [np.zeros((0, 3))]
    remaining = count
    while remaining > 0:
        candidates, probabilities = propose(2 * remaining, rng)
        kept = candidates[rng.random(len(candidates)) < probabilities]
        accepted.append(kept[:remaining])
        remaining -= len(accepted[-1])
    return np.concatenate(accepted)


def _sphere(count, rng):
    return _unit_vectors(count, 3, rng)


def _cube(count, rng):
    points = rng.uniform(-1, 1, (count, 3))
    axis = rng.integers(0, 3, count)
    points[np.arange(count), axis] = rng.choice([-1.0, 1.0], count)
    return points


def _cylinder(count, rng):
    angle = rng.uniform(0, 2 * np.pi, count)
    side = np.stack(
        [np.cos(angle), np.sin(angle), rng.uniform(-1, 1, count)], axis=1
    )
    caps = _disk(count, rng, 1.0)
    caps[:, 2] *= rng.choice([-1.0, 1.0], count)
    # Side area 4 pi, caps 2 pi.
    return _choose(count, rng, 2 / 3, side, caps)


def _cone(count, rng):
    # The distance from the apex, as a fraction of the slant, has density
    # proportional to itself: the square root of a uniform variable.
    fraction = np.sqrt(rng.random(count))
    angle = rng.uniform(0, 2 * np.pi, count)
    side = np.stack(
        [
            fraction * np.cos(angle),
            fraction * np.sin(angle),
            1 - 2 * fraction,
        ],
        axis=1,
    )
    # Side area pi * sqrt(5), base pi.
    side_share = np.sqrt(5) / (np.sqrt(5) + 1)
    return _choose(count, rng, side_share, side, _disk(count, rng, -1.0))


def _torus(count, rng):
    def propose(candidates, rng):
        major = rng.uniform(0, 2 * np.pi, candidates)
        minor = rng.uniform(0, 2 * np.pi, candidates)
        # The area element is proportional to the distance from the axis.
        distance = _TORUS_MAJOR_RADIUS + _TORUS_MINOR_RADIUS * np.cos(minor)
        points = np.stack(
            [
                distance * np.cos(major),
                distance * np.sin(major),
                _TORUS_MINOR_RADIUS * np.sin(minor),
            ],
            axis=1,
        )
        largest = _TORUS_MAJOR_RADIUS + _TORUS_MINOR_RADIUS
        return points, distance / largest

    return _accept(count, rng, propose)


def _ellipsoid(count, rng):
    a, b, c = _ELLIPSOID_AXES
    area_factors = np.array([b * c, a * c, a * b])

    def propose(candidates, rng):
        directions = _unit_vectors(candidates, 3, rng)
        # Area scaling of the map from the unit sphere at each direction.
        scaling = np.linalg.norm(directions * area_factors, axis=1)
        return directions * _ELLIPSOID_AXES, scaling / area_factors.max()

    return _accept(count, rng, propose)


def _triangles(count, rng, triangles):
    # Uniform points on a union of triangles `(num_triangles, 3, 3)`.
    edges_1 = triangles[:, 1] - triangles[:, 0]
    edges_2 = triangles[:, 2] - triangles[:, 0]
    areas = np.linalg.norm(np.cross(edges_1, edges_2), axis=1)
    chosen = rng.choice(len(triangles), count, p=areas / areas.sum())
    u, v = rng.random((2, count, 1))
    outside = u + v > 1
    u, v = np.where(outside, 1 - u, u), np.where(outside, 1 - v, v)
    return triangles[chosen, 0] + u * edges_1[chosen] + v * edges_2[chosen]


def _pyramid(count, rng):
    return _triangles(count, rng, _PYRAMID_TRIANGLES)


def _octahedron(count, rng):
    # The 8 faces have equal areas: pick an octant, then a uniform point of
    # its face (flat Dirichlet barycentric weights).
    weights = rng.dirichlet(np.ones(3), count)
    return weights * rng.choice([-1.0, 1.0], (count, 3))


_SURFACE_SAMPLERS = {
    "sphere": _sphere,
    "cube": _cube,
    "cylinder": _cylinder,
    "cone": _cone,
    "torus": _torus,
    "pyramid": _pyramid,
    "ellipsoid": _ellipsoid,
    "octahedron": _octahedron,
}

"""Point clouds: solids sampled on their surfaces, checked against each
solid's equation; ModelNet40's HDF5 files, written by the test; and the
experiments' data and parser using these, not copies."""

import h5py
import numpy as np
import pytest
import tensorflow as tf

from keras_laf.datasets import SOLID_NAMES
from keras_laf.datasets import PointClouds
from keras_laf.datasets import load_modelnet40
from keras_laf.datasets import make_solid_point_clouds
from keras_laf.datasets import point_clouds
from keras_laf.datasets import standardize_point_clouds


def test_solid_point_clouds_are_standardised():
    clouds = make_solid_point_clouds(64, num_points=100, seed=5)
    assert clouds.points.shape == (64, 100, 3)
    assert clouds.points.dtype == np.float32
    assert clouds.class_names == SOLID_NAMES and len(SOLID_NAMES) >= 5
    assert set(np.unique(clouds.labels)) == set(range(len(SOLID_NAMES)))
    np.testing.assert_allclose(clouds.points.mean(axis=1), 0, atol=1e-5)
    np.testing.assert_allclose(clouds.points.std(axis=(1, 2)), 1, atol=1e-5)
    again = make_solid_point_clouds(64, num_points=100, seed=5)
    np.testing.assert_array_equal(clouds.points, again.points)
    other = make_solid_point_clouds(64, num_points=100, seed=6)
    assert not np.array_equal(clouds.points, other.points)
    points, labels = next(iter(clouds.to_dataset(batch_size=16)))
    assert points.shape == (16, 100, 3) and points.dtype == tf.float32
    assert labels.shape == (16,) and labels.dtype == tf.int32


def _surface_residual(name, points):
    # How far each point is from the surface of the solid `name`.
    x, y, z = points.T
    radial = np.hypot(x, y)
    if name == "sphere":
        return np.linalg.norm(points, axis=1) - 1
    if name == "cube":
        return np.abs(points).max(axis=1) - 1
    if name == "cylinder":
        on_side = np.abs(radial - 1) < 1e-9
        on_cap = (np.abs(np.abs(z) - 1) < 1e-9) & (radial <= 1)
        return np.where(on_side | on_cap, 0.0, 1.0)
    if name == "cone":
        on_side = np.abs(radial - (1 - z) / 2) < 1e-9
        on_base = (np.abs(z + 1) < 1e-9) & (radial <= 1)
        return np.where(on_side | on_base, 0.0, 1.0)
    if name == "torus":
        return np.hypot(radial - 1, z) - 0.4
    if name == "pyramid":
        on_side = np.abs(np.maximum(np.abs(x), np.abs(y)) - (1 - z) / 2)
        on_base = (np.abs(z + 1) < 1e-9) & (np.abs(points[:, :2]) <= 1).all(1)
        return np.where(on_base, 0.0, on_side)
    if name == "ellipsoid":
        return (x / 1.0) ** 2 + (y / 0.6) ** 2 + (z / 0.3) ** 2 - 1
    assert name == "octahedron"
    return np.abs(points).sum(axis=1) - 1


@pytest.mark.parametrize("name", SOLID_NAMES)
def test_solid_samplers_stay_on_the_surface(name):
    rng = np.random.default_rng(0)
    points = point_clouds._SURFACE_SAMPLERS[name](500, rng)
    assert points.shape == (500, 3)
    np.testing.assert_allclose(_surface_residual(name, points), 0, atol=1e-9)


def test_random_rotations_are_proper():
    rotations = point_clouds._random_rotations(20, np.random.default_rng(0))
    identity = np.broadcast_to(np.eye(3), (20, 3, 3))
    np.testing.assert_allclose(
        rotations @ rotations.transpose(0, 2, 1), identity, atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(rotations), 1, atol=1e-12)


def test_standardize_point_clouds():
    points = np.random.default_rng(0).normal(3, 5, (4, 50, 3))
    points[1] = 2.0  # A single repeated point is only centred.
    standardised = standardize_point_clouds(points)
    np.testing.assert_array_equal(standardised[1], 0)
    for cloud in (0, 2, 3):
        np.testing.assert_allclose(standardised[cloud].std(), 1, atol=1e-5)
    with pytest.raises(ValueError, match="shape"):
        standardize_point_clouds(np.zeros((50, 3)))


def _write_modelnet40(directory, total_points=64):
    rng = np.random.default_rng(0)
    directory.mkdir()
    clouds = {}
    for name, num_clouds in [("train0", 3), ("train1", 2), ("test0", 2)]:
        data = rng.normal(size=(num_clouds, total_points, 3)) * 4 + 7
        label = rng.integers(0, 3, (num_clouds, 1)).astype("uint8")
        with h5py.File(directory / f"ply_data_{name}.h5", "w") as file:
            file["data"] = data.astype("float32")
            file["label"] = label
        clouds[name] = (data.astype("float32"), label[:, 0])
    (directory / "shape_names.txt").write_text("airplane\nbathtub\nbed\n")
    return clouds


def test_load_modelnet40_from_hdf5(tmp_path):
    directory = tmp_path / "modelnet40_ply_hdf5_2048"
    written = _write_modelnet40(directory)
    full = load_modelnet40(directory, "train", num_points=64)
    assert full.class_names == ("airplane", "bathtub", "bed")
    expected_labels = np.concatenate(
        [written["train0"][1], written["train1"][1]]
    )
    np.testing.assert_array_equal(full.labels, expected_labels)
    assert full.labels.dtype == np.int32
    # With all points kept, each cloud is its file's cloud, standardised
    # and permuted.
    original = np.concatenate([written["train0"][0], written["train1"][0]])
    centred = original - original.mean(axis=1, keepdims=True)
    expected = centred / centred.std(axis=(1, 2), keepdims=True)
    for cloud, reference in zip(full.points, expected, strict=True):
        np.testing.assert_allclose(
            np.sort(cloud, axis=0), np.sort(reference, axis=0), atol=1e-5
        )
    subset = load_modelnet40(str(directory), "test", num_points=10, seed=1)
    assert subset.points.shape == (2, 10, 3)
    np.testing.assert_allclose(subset.points.mean(axis=1), 0, atol=1e-5)
    np.testing.assert_allclose(subset.points.std(axis=(1, 2)), 1, atol=1e-5)
    # Points are drawn without replacement.
    assert all(len(np.unique(cloud, axis=0)) == 10 for cloud in subset.points)
    again = load_modelnet40(directory, "test", num_points=10, seed=1)
    np.testing.assert_array_equal(subset.points, again.points)
    points, labels = next(iter(subset.to_dataset(batch_size=2)))
    assert points.shape == (2, 10, 3) and labels.dtype == tf.int32


def test_load_modelnet40_errors(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match="nowhere.*ply_data_train"):
        load_modelnet40(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="shape_names.txt"):
        load_modelnet40(empty)
    directory = tmp_path / "modelnet40_ply_hdf5_2048"
    _write_modelnet40(directory)
    with pytest.raises(ValueError, match="at most 64"):
        load_modelnet40(directory, num_points=100)
    with pytest.raises(ValueError, match="split"):
        load_modelnet40(directory, split="validation")
    with h5py.File(directory / "ply_data_train2.h5", "w") as file:
        file["data"] = np.zeros((1, 64, 3), "float32")
    with pytest.raises(ValueError, match="label"):
        load_modelnet40(directory, num_points=8)
    (directory / "shape_names.txt").unlink()
    with pytest.raises(FileNotFoundError, match="shape_names.txt"):
        load_modelnet40(directory, "test")


def test_subset_keeps_the_class_names():
    clouds = make_solid_point_clouds(10, num_points=20, seed=0)
    chosen = clouds.subset(np.array([7, 2]))
    assert isinstance(chosen, PointClouds)
    np.testing.assert_array_equal(chosen.points, clouds.points[[7, 2]])
    np.testing.assert_array_equal(chosen.labels, clouds.labels[[7, 2]])
    assert chosen.class_names == SOLID_NAMES
    assert len(clouds.subset(slice(3)).labels) == 3


def test_every_solid_has_a_sampler():
    assert tuple(point_clouds._SURFACE_SAMPLERS) == SOLID_NAMES


def test_the_experiments_use_the_library_clouds():
    # `laf_experiments.data` hands the library's functions on; its parser's
    # constants, written again to build it without Keras, are the same.
    import laf_experiments.data
    from laf_experiments.data import constants

    assert laf_experiments.data.make_solid_point_clouds is (
        make_solid_point_clouds
    )
    assert laf_experiments.data.load_modelnet40 is load_modelnet40
    assert constants.SOLID_NAMES == SOLID_NAMES
    assert constants.MODELNET40_HELP == point_clouds.MODELNET40_HELP

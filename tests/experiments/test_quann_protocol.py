"""Tests of `keras-laf mnist --protocol quann`, QUANN's MNIST benchmark
(`laf_experiments.quann_protocol`, `laf_experiments.quann_model`).

The models are checked against QUANN's own parameter counts, the sets
against their definition, the two targets QUANN adds against the standard
library, and the command end to end on a tiny MNIST file the test writes.
"""

import argparse
import statistics

import numpy as np
import pytest
from experiment_helpers import QUIET
from experiment_helpers import assert_png
from experiment_helpers import read_json
from experiment_helpers import run

from keras_laf.datasets.digit_images import DigitImages
from laf_experiments import quann_model
from laf_experiments import quann_protocol
from laf_experiments.commands import mnist
from laf_experiments.data import target_values

# QUANN's parameter counts (the `Parameters` of its
# `results/MNIST_experiment/replicate_0.csv`): DeepSet, QUANN (QUANN-1)
# and SetTransformer. Its Kolmogorov mean's four coupling MLPs have output
# biases of 64 each, which the mean cancels and keras_laf leaves out; its
# PMA has no row-wise feed-forward layer, keras_laf's of 128 x 128 has.
QUANN_PARAMETERS = {
    "deepsets_sum": 196_225,
    "kolmogorov_mean": 196_737 - 4 * 64,
    "st-pma": 263_553 + 128 * 128 + 128,
}


def digit_pool(split, per_digit, seed=0):
    """A pool of random 'images', `per_digit` of each digit."""
    labels = np.repeat(np.arange(10), per_digit).astype("int32")
    rng = np.random.default_rng(seed)
    images = rng.random((labels.size, 784), dtype=np.float32)
    return DigitImages(images, labels, "random", split)


@pytest.mark.multi_backend
@pytest.mark.parametrize("method", list(quann_model.HEADS))
def test_model_shapes_padding_and_weights(method):
    model = quann_model.build_model(method)
    encoder = model.get_layer("per_image").layer
    # 28 -> 14 -> 7 -> 3 pixels of 64 channels, then QUANN's 128 features.
    assert encoder.get_layer("flatten").output.shape == (None, 3 * 3 * 64)
    assert encoder.get_layer("features").units == 128
    squashed = encoder.get_layer("features").activation.__name__
    assert squashed == ("sigmoid" if method == "laf" else "linear")
    if method in QUANN_PARAMETERS:
        assert model.count_params() == QUANN_PARAMETERS[method]
    # Two sets of 3 and 5 images padded to 5 with noise: the same outputs
    # as each set alone.
    rng = np.random.default_rng(0)
    images = rng.random((2, 5, 784), dtype=np.float32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "float32")
    outputs = np.asarray(model.predict([images, mask], verbose=0))
    assert outputs.shape == (2, 1) and np.isfinite(outputs).all()
    alone = model.predict([images[:1, :3], np.ones((1, 3), "f4")], verbose=0)
    np.testing.assert_allclose(outputs[:1], alone, rtol=1e-4, atol=1e-4)
    # QUANN's weight decay on the encoder's and the head's weights.
    assert len(model.losses) > 0


def test_unknown_method_is_a_value_error():
    with pytest.raises(ValueError, match="Unknown method 'pna'"):
        quann_model.build_model("pna")


def test_training_and_validation_sets():
    pool = digit_pool("train", per_digit=3)
    args = argparse.Namespace(train_size=3_000, val_size=300)
    train, validation = quann_protocol.training_sets(args, "mode", 0, pool)
    assert (len(train.labels), len(validation.labels)) == (3_000, 300)
    sizes = train.sizes
    counts = np.bincount(sizes, minlength=17)
    # Sizes uniform in 2..16: 200 sets each, binomial std about 14.
    assert counts[:2].sum() == 0 and sizes.max() == 16
    assert np.abs(counts[2:] - 200).max() < 60
    digits = np.concatenate(train.digits)
    assert (
        np.abs(np.bincount(digits, minlength=10) / digits.size - 0.1).max()
        < 0.01
    )
    # Every element is an image of its digit, from the train pool.
    assert train.images is pool.images
    for row, image_rows in zip(train.digits, train.image_indices, strict=True):
        np.testing.assert_array_equal(pool.labels[image_rows], row)
    expected = [min(statistics.multimode(row.tolist())) for row in train.digits]
    np.testing.assert_array_equal(train.labels, expected)
    # The validation sets are other sets than the training sets.
    assert not np.array_equal(train.sizes[:300], validation.sizes)


def test_evaluation_sets_per_largest_size():
    pool = digit_pool("test", per_digit=2, seed=1)
    args = argparse.Namespace(test_size=200, max_sizes=(16, 30, 50))
    suite = quann_protocol.evaluation_sets(args, "sum", pool)
    assert list(suite) == [16, 30, 50]
    for size, data in suite.items():
        assert len(data.labels) == 200 and data.images is pool.images
        assert data.sizes.min() >= 2 and data.sizes.max() <= size
        expected = [row.sum() for row in data.digits]
        np.testing.assert_array_equal(data.labels, expected)
    assert suite[50].sizes.max() > 30
    # Uniform digits, as in training: no set diversified towards extremes.
    digits = np.concatenate(suite[50].digits)
    assert np.abs(np.bincount(digits) / digits.size - 0.1).max() < 0.02
    again = quann_protocol.evaluation_sets(args, "sum", pool)
    np.testing.assert_array_equal(again[30].labels, suite[30].labels)


def test_variance_and_mode_against_the_standard_library():
    rng = np.random.default_rng(0)
    sets = [rng.integers(0, 10, rng.integers(1, 20)) for _ in range(200)]
    sets += [[3, 3, 1, 1], [7], [5, 5, 5], [9, 0, 9, 0, 4]]
    np.testing.assert_allclose(
        target_values("variance", sets),
        [statistics.pvariance(list(map(float, s))) for s in sets],
        atol=1e-12,
    )
    np.testing.assert_array_equal(
        target_values("mode", sets),
        [min(statistics.multimode(list(s))) for s in sets],
    )
    # Ties go to the smallest digit; an empty set is 0, as every target.
    assert target_values("mode", [[3, 3, 1, 1], []]).tolist() == [1.0, 0.0]
    assert target_values("variance", [[5, 5, 5], []]).tolist() == [0.0, 0.0]


def test_tables_set_ours_beside_quann():
    summary = [
        {
            "method": method,
            "target": "mode",
            "max_size": size,
            "mse_mean": mse,
            "mse_std": 0.5,
            "num_seeds": 2,
        }
        for method, mse in (("laf", 1.25), ("kolmogorov_mean", 2.5))
        for size in (16, 50)
    ]
    text = quann_protocol.markdown_tables(summary)
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("| target | LAF"))
    assert "| Kolmogorov mean | QUANN: DeepSet |" in header
    assert "| mode | 1.250 ± 0.500 | 2.500 ± 0.500 | 3.903 | 5.498 |" in text
    assert "| mode | LAF | 1.250 ± 0.500 | 1.250 ± 0.500 |" in text
    size, points = quann_protocol.published_points()
    assert size == 16
    assert points["mode"] == {
        "deepsets_sum": 3.903,
        "st-pma": 3.085,
        "kolmogorov_mean": 2.219,
    }


def test_help_states_the_default_budget():
    defaults = quann_protocol.DEFAULTS
    for value in ("train_size", "val_size", "test_size"):
        assert f"{defaults[value]:,}" in mnist.DESCRIPTION
    assert f"{defaults['epochs']} epochs" in mnist.DESCRIPTION
    assert "one seed of its\nfour" in mnist.DESCRIPTION
    assert defaults["lr_patience"] >= defaults["epochs"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--methods", "pna"], "--protocol quann has no method 'pna'"),
        (["--targets", "median,foo"], "unknown target 'foo'"),
        (["--test-protocol", "authors"], "--test-protocol belongs to"),
        (["--epochs", "0"], "expected a positive integer"),
        (["--protocol", "paper", "--methods", "kolmogorov_mean"], "no method"),
    ],
)
def test_bad_input_is_one_line(arguments, message, tmp_path, capsys):
    argv = ["mnist", "--protocol", "quann", *QUIET, *arguments]
    status, _, err = run([*argv, "--output", str(tmp_path)], capsys)
    assert status == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("keras-laf") and message in last


def write_tiny_mnist(path):
    """Keras's mnist.npz layout with 60 train and 20 test random images."""
    rng = np.random.default_rng(0)
    arrays = {}
    for split, per_digit in (("train", 6), ("test", 2)):
        labels = np.repeat(np.arange(10, dtype="uint8"), per_digit)
        arrays[f"x_{split}"] = rng.integers(0, 256, (labels.size, 28, 28))
        arrays[f"x_{split}"] = arrays[f"x_{split}"].astype("uint8")
        arrays[f"y_{split}"] = labels
    np.savez(path, **arrays)
    return path


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path, capsys):
    source = write_tiny_mnist(tmp_path / "mnist.npz")
    output = tmp_path / "out"
    argv = ["mnist", "--protocol", "quann", *QUIET, "--source", str(source)]
    argv += ["--targets", "mode", "--test-size", "6", "--output", str(output)]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    results = read_json(output)
    assert results["experiment"] == "mnist-quann"
    settings = results["settings"]
    assert settings["protocol"] == "quann" and settings["image_source"] == "npz"
    assert settings["batch_size"] == 32 and settings["max_sizes"] == [16, 30]
    records = {
        (r["method"], r["max_size"]): r["mse"] for r in results["records"]
    }
    assert set(records) == {
        (method, size) for method in quann_protocol.METHODS for size in (16, 30)
    }
    assert all(np.isfinite(mse) for mse in records.values())
    with np.load(output / "predictions" / "laf-mode-seed0.npz") as saved:
        assert saved["labels"].shape == (12,)
        squared = (saved["predictions"] - saved["labels"]) ** 2
        at_16 = squared[saved["max_sizes"] == 16].mean()
        np.testing.assert_allclose(at_16, records["laf", 16], rtol=1e-5)
    table = (output / "table.md").read_text()
    assert table.startswith("# keras-laf mnist --protocol quann (--quick")
    assert "| mode |" in table and "2.219" in table
    assert_png(output / "mse.png")
    assert "table.md, mse.png" in out

"""Tests of `VariancePreservingAggregation`: PyG's sum / sqrt(n), 0 for an
empty set, on padded sets (padding holds NaN), segments and ragged sets."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_laf import VariancePreservingAggregation

pytestmark = pytest.mark.multi_backend

SETS = [
    np.array([[1.0, -2.0], [3.0, 0.5], [5.0, 4.0], [7.0, 1.0]], "float32"),
    np.array([[2.0, 0.7]], "float32"),
    np.zeros((0, 2), "float32"),
    np.array([[0.3, 1.2], [2.2, -0.9], [1.1, 3.3]], "float32"),
]


def test_matches_numpy_in_every_form():
    values = np.full((len(SETS), 5, 2), np.nan, "float32")
    mask = np.zeros((len(SETS), 5), bool)
    for index, elements in enumerate(SETS):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    flat = np.concatenate(SETS)
    ids = np.repeat(np.arange(len(SETS)), [len(s) for s in SETS])
    order = np.random.default_rng(0).permutation(len(ids))
    layer = VariancePreservingAggregation()
    outputs = [
        layer(values, mask=mask),
        layer(flat[order], segment_ids=ids[order], num_segments=len(SETS)),
    ]
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        outputs.append(layer(tf.ragged.constant(SETS, ragged_rank=1)))
    expected = np.stack([x.sum(0) / np.sqrt(max(len(x), 1)) for x in SETS])
    for output in outputs:
        np.testing.assert_allclose(
            ops.convert_to_numpy(output), expected, rtol=1e-6
        )


def test_variance_does_not_grow_with_the_set_size():
    # Unit-variance elements: the output's variance stays about 1 for
    # sets of 2 and of 200 (the sum's would be 2 and 200).
    rng = np.random.default_rng(0)
    layer = VariancePreservingAggregation()
    for size in (2, 200):
        values = rng.normal(size=(2000, size, 1)).astype("float32")
        variance = ops.convert_to_numpy(layer(values)).var()
        assert 0.9 < variance < 1.1, (size, variance)


def test_empty_set_axis_gives_zero():
    outputs = VariancePreservingAggregation()(np.zeros((2, 0, 3), "float32"))
    np.testing.assert_array_equal(ops.convert_to_numpy(outputs), 0.0)


def test_run_layer_test_on_every_backend(tmp_path):
    # The shared checks of tests/test_every_layer.py on every backend.
    from layer_test_case import run_layer_test

    values = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3, 2))
    mask = np.array([[True, True, True], [True, True, False]])
    run_layer_test(
        VariancePreservingAggregation,
        {},
        {"inputs": values.astype("float32"), "mask": mask},
        (2, 2),
        tmp_path,
        masks={"inputs": "mask"},
        run_training=False,
    )

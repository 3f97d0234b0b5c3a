"""Tests of `QuantileAggregation` and `MedianAggregation` against NumPy's
`np.quantile(method=...)` and PyG's definitions (the lower median of an
even set, 0 for an empty set), on sets of odd and even sizes and empty
sets, padded with a mask (padding holds NaN), as unsorted segments and,
on TensorFlow, ragged."""

import keras
import numpy as np
import pytest
from keras import ops

import keras_laf
from keras_laf import MedianAggregation
from keras_laf import MultiAggregation
from keras_laf import QuantileAggregation

pytestmark = pytest.mark.multi_backend

FEATURES = 2
RNG = np.random.default_rng(0)
# Sets of 5, 4, 1, 0, 2 and 6 elements, with repeated values (ties) in
# the integer-valued ones.
SETS = [
    RNG.integers(0, 4, (5, FEATURES)).astype("float32"),
    RNG.normal(size=(4, FEATURES)).astype("float32"),
    RNG.normal(size=(1, FEATURES)).astype("float32"),
    np.zeros((0, FEATURES), "float32"),
    RNG.integers(0, 3, (2, FEATURES)).astype("float32"),
    RNG.normal(size=(6, FEATURES)).astype("float32"),
]
INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")
# Positions q (n - 1) that fall on elements, between them and on halves.
QUANTILES = (0.0, 0.2, 0.5, 0.6, 0.75, 1.0)


def padded(sets, set_size=7):
    values = np.full((len(sets), set_size, FEATURES), np.nan, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for index, elements in enumerate(sets):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    return values, mask


def segments(sets, seed=0):
    values = np.concatenate(sets).astype("float32")
    ids = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    order = np.random.default_rng(seed).permutation(len(ids))
    return values[order], ids[order].astype("int32")


def outputs_of_every_form(layer, sets=SETS):
    values, mask = padded(sets)
    flat, ids = segments(sets)
    outputs = [
        layer(values, mask=mask),
        layer(flat, segment_ids=ids, num_segments=len(sets)),
    ]
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        outputs.append(layer(tf.ragged.constant(sets, ragged_rank=1)))
    return [ops.convert_to_numpy(output) for output in outputs]


def numpy_quantiles(q, method, sets=SETS, fill_value=0.0):
    # (sets, features): np.quantile of each set, fill_value when empty.
    return np.stack(
        [
            np.quantile(x.astype("float64"), q, axis=0, method=method)
            if len(x)
            else np.full(FEATURES, fill_value)
            for x in sets
        ]
    )


@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
@pytest.mark.parametrize("q", QUANTILES)
def test_quantiles_match_numpy(q, interpolation):
    layer = QuantileAggregation(q, interpolation=interpolation)
    expected = numpy_quantiles(q, interpolation)
    for outputs in outputs_of_every_form(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-6, atol=1e-6)


def test_median_is_the_lower_median_of_pyg():
    # Hand-computed: the lower middle element of even sets, the middle of
    # odd ones, 0 for an empty set.
    sets = [
        np.array([[4.0, 1.0], [1.0, 1.0], [3.0, 7.0], [2.0, 5.0]], "f4"),
        np.array([[5.0, 0.0], [9.0, -1.0], [7.0, 2.0]], "f4"),
        np.zeros((0, FEATURES), "f4"),
    ]
    expected = np.array([[2.0, 1.0], [7.0, 0.0], [0.0, 0.0]])
    for outputs in outputs_of_every_form(MedianAggregation(), sets):
        np.testing.assert_array_equal(outputs, expected)
    for outputs in outputs_of_every_form(MedianAggregation()):
        np.testing.assert_allclose(
            outputs, numpy_quantiles(0.5, "lower"), rtol=1e-6
        )


def test_several_quantiles_and_fill_value():
    layer = QuantileAggregation(
        [0.25, 0.5, 0.9], fill_value=-1.0, flatten=False
    )
    expected = np.stack(
        [
            numpy_quantiles(q, "linear", fill_value=-1.0)
            for q in (0.25, 0.5, 0.9)
        ],
        axis=-1,
    )
    for outputs in outputs_of_every_form(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-6, atol=1e-6)
    flat = QuantileAggregation([0.25, 0.5, 0.9], fill_value=-1.0)
    values, mask = padded(SETS)
    np.testing.assert_allclose(
        ops.convert_to_numpy(flat(values, mask=mask)),
        expected.reshape(len(SETS), -1),
        rtol=1e-6,
        atol=1e-6,
    )


def test_empty_set_axis_and_no_elements():
    layer = QuantileAggregation([0.25, 0.5])
    outputs = ops.convert_to_numpy(layer(np.zeros((2, 0, 3), "float32")))
    np.testing.assert_array_equal(outputs, np.zeros((2, 6)))
    outputs = MedianAggregation(fill_value=3.0)(
        np.zeros((0, 3), "float32"),
        segment_ids=np.zeros((0,), "int32"),
        num_segments=2,
    )
    np.testing.assert_array_equal(ops.convert_to_numpy(outputs), 3.0)


@pytest.mark.tensorflow_only("tf.GradientTape")
def test_gradients_reach_the_elements_read():
    import tensorflow as tf

    # Linear at q = 0.75 of 4 elements: position 2.25 reads the third and
    # fourth smallest with weights 0.75 and 0.25.
    values = tf.constant([[[4.0], [1.0], [3.0], [2.0]]])
    with tf.GradientTape() as tape:
        tape.watch(values)
        outputs = QuantileAggregation(0.75)(values)
    gradient = tape.gradient(outputs, values).numpy().ravel()
    np.testing.assert_allclose(gradient, [0.25, 0.0, 0.75, 0.0])


def test_in_a_multi_aggregation_and_saved(tmp_path):
    values, mask = padded(SETS)
    layer = MultiAggregation([MedianAggregation(), "max"])
    outputs = ops.convert_to_numpy(layer(values, mask=mask))
    np.testing.assert_allclose(
        outputs[:, :FEATURES], numpy_quantiles(0.5, "lower"), rtol=1e-6
    )
    inputs = keras.Input((None, FEATURES))
    mask_input = keras.Input((None,), dtype="bool")
    model = keras.Model(
        [inputs, mask_input],
        QuantileAggregation([0.1, 0.6], "midpoint")(inputs, mask=mask_input),
    )
    model.save(tmp_path / "quantile.keras")
    reloaded = keras.models.load_model(tmp_path / "quantile.keras")
    np.testing.assert_array_equal(
        ops.convert_to_numpy(reloaded([values, mask])),
        ops.convert_to_numpy(model([values, mask])),
    )
    assert keras_laf.aggregations.QuantileAggregation is QuantileAggregation


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"q": 1.5}, "Received: q=1.5"),
        ({"q": []}, r"Received: q=\[\]"),
        ({"q": [0.5, -0.1]}, r"Received: q=\[0.5, -0.1\]"),
        ({"q": True}, "Received: q=True"),
        ({"interpolation": "cubic"}, "interpolation='cubic'"),
        ({"fill_value": float("nan")}, "Received: fill_value=nan"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        QuantileAggregation(**kwargs)


@pytest.mark.parametrize(
    "layer_cls, init_kwargs, width",
    [
        (QuantileAggregation, {"q": [0.25, 0.5], "interpolation": "linear"}, 4),
        (MedianAggregation, {}, 2),
    ],
)
def test_run_layer_test_on_every_backend(
    layer_cls, init_kwargs, width, tmp_path
):
    # The shared checks of tests/test_every_layer.py (config, symbolic
    # call, .keras round trip, mixed precision, masks) on every backend;
    # no weights to train.
    from layer_test_case import run_layer_test

    values = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3, FEATURES))
    mask = np.array([[True, True, True], [True, True, False]])
    run_layer_test(
        layer_cls,
        init_kwargs,
        {"inputs": values.astype("float32"), "mask": mask},
        (2, width),
        tmp_path,
        masks={"inputs": "mask"},
        run_training=False,
    )

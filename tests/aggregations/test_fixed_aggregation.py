"""Tests of the fixed aggregators, the LSTM aggregator and set layers."""

import keras
import numpy as np
import pytest
import scipy.stats
import tensorflow as tf

from keras_laf import FixedAggregation
from keras_laf import LSTMAggregation
from keras_laf import PerElement
from keras_laf import PermutationEquivariant

SETS = [
    np.array([[0.1, 2.0], [0.5, 2.0], [0.9, 2.0], [0.3, 2.0]]),
    np.array([[1.0, -1.0]]),
    np.array([[0.2, 0.0], [0.7, 3.0]]),
]


def ragged(sets):
    return tf.RaggedTensor.from_row_lengths(
        np.concatenate(sets).astype("float32"), [len(s) for s in sets]
    )


def padded(sets, set_size=5, fill=np.nan):
    values = np.full((len(sets), set_size, sets[0].shape[1]), fill, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for index, elements in enumerate(sets):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    return values, mask


def zero_without_spread(statistic):
    """`statistic` of each feature, 0 for a feature with (almost) no spread.

    The layer defines skewness and kurtosis as 0 there; scipy would warn of
    catastrophic cancellation and return noise or nan.
    """

    def reference(x):
        spread = x.var(0) > 1e-5
        values = np.zeros(x.shape[1])
        if spread.any():
            values[spread] = statistic(x[:, spread])
        return values

    return reference


REFERENCES = {
    "sum": lambda x: x.sum(0),
    "mean": lambda x: x.mean(0),
    "max": lambda x: x.max(0),
    "min": lambda x: x.min(0),
    "count": lambda x: np.full(x.shape[1], len(x)),
    "var": lambda x: x.var(0),
    "std": lambda x: np.sqrt(x.var(0) + 1e-5),
    "skewness": zero_without_spread(lambda x: scipy.stats.skew(x, axis=0)),
    "kurtosis": zero_without_spread(
        lambda x: scipy.stats.kurtosis(x, axis=0, fisher=False)
    ),
}


def test_fixed_aggregators_match_numpy_in_every_input_form():
    names = list(REFERENCES)
    layer = FixedAggregation(names, flatten=False)
    expected = np.stack(
        [np.stack([REFERENCES[n](s) for n in names], -1) for s in SETS]
    )
    np.testing.assert_allclose(layer(ragged(SETS)), expected, atol=1e-5)
    values, mask = padded(SETS)
    np.testing.assert_allclose(layer(values, mask=mask), expected, atol=1e-5)
    flat = np.concatenate(SETS).astype("float32")
    ids = np.repeat(np.arange(3), [len(s) for s in SETS])
    order = np.random.default_rng(0).permutation(len(ids))
    np.testing.assert_allclose(
        layer(flat[order], segment_ids=ids[order], num_segments=3),
        expected,
        atol=1e-5,
    )


def test_presets_and_empty_sets():
    assert FixedAggregation("pna").num_aggregates == 7
    assert FixedAggregation("deepsets").num_aggregates == 9
    layer = FixedAggregation(list(REFERENCES), flatten=False)
    values, _ = padded(SETS)
    outputs = layer(values, mask=np.zeros(values.shape[:2], bool)).numpy()
    # Empty sets: every aggregate is 0, the std too.
    np.testing.assert_array_equal(outputs, np.zeros_like(outputs))


def test_fixed_aggregation_bad_arguments():
    with pytest.raises(ValueError, match="median"):
        FixedAggregation(["sum", "median"])
    with pytest.raises(ValueError, match="epsilon=0"):
        FixedAggregation(["std"], epsilon=0)


def test_lstm_aggregation_forms_and_order():
    layer = LSTMAggregation(units=3)
    from_ragged = layer(ragged(SETS)).numpy()
    values, mask = padded(SETS, fill=0.0)
    np.testing.assert_allclose(
        layer(values, mask=mask), from_ragged, rtol=1e-5, atol=1e-6
    )
    flat = np.concatenate(SETS).astype("float32")
    ids = np.repeat(np.arange(3), [len(s) for s in SETS])
    np.testing.assert_allclose(
        layer(flat, segment_ids=ids), from_ragged, rtol=1e-5, atol=1e-6
    )
    # Order-dependent by design.
    reversed_sets = [s[::-1] for s in SETS]
    assert not np.allclose(
        layer(ragged(reversed_sets)).numpy()[0], from_ragged[0]
    )
    empty = layer(values, mask=np.zeros_like(mask)).numpy()
    np.testing.assert_array_equal(empty, 0.0)
    with pytest.raises(ValueError, match="units=0"):
        LSTMAggregation(units=0)


def test_per_element_on_ragged_and_dense():
    dense = keras.layers.Dense(4)
    layer = PerElement(dense)
    outputs = layer(ragged(SETS))
    assert isinstance(outputs, tf.RaggedTensor)
    np.testing.assert_allclose(
        outputs.flat_values, dense(np.concatenate(SETS).astype("float32"))
    )
    values, _ = padded(SETS, fill=0.0)
    np.testing.assert_allclose(layer(values), dense(values), rtol=1e-6)
    embedded = PerElement(keras.layers.Embedding(10, 3))(
        tf.ragged.constant([[1, 2], [3]])
    )
    assert embedded.shape.as_list() == [2, None, 3]


def test_permutation_equivariant():
    layer = PermutationEquivariant(4, activation="tanh")
    values, mask = padded(SETS, fill=np.nan)
    outputs = layer(values, mask=mask).numpy()
    from_ragged = layer(ragged(SETS))
    for index, elements in enumerate(SETS):
        alone = layer(elements[None].astype("float32")).numpy()[0]
        np.testing.assert_allclose(outputs[index, : len(elements)], alone, 1e-5)
        np.testing.assert_allclose(from_ragged[index].numpy(), alone, 1e-5)
        # x - max(x), then the dense layer.
        shifted = elements - elements.max(0)
        kernel, bias = layer.dense.get_weights()
        np.testing.assert_allclose(
            alone, np.tanh(shifted @ kernel + bias), rtol=1e-5
        )
    assert np.all(outputs[~mask] == 0)
    order = [2, 0, 3, 1]
    first = SETS[0][None].astype("float32")
    np.testing.assert_allclose(
        layer(first[:, order]).numpy(), layer(first).numpy()[:, order], 1e-5
    )
    with pytest.raises(ValueError, match="units=0"):
        PermutationEquivariant(0)

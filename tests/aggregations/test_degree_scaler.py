"""Tests of DegreeScalerAggregation and degree_histogram against hand
computations, and of the builder's scalers."""

import os

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import DegreeScalerAggregation
from keras_laf import degree_histogram
from keras_laf.models import graph_network

pytestmark = pytest.mark.multi_backend


def numpy(tensor):
    return keras.ops.convert_to_numpy(tensor)


def test_degree_histogram_is_a_hand_count():
    # Two graphs: a star 0 <- 1, 2, 3 (edges into the centre only) and a
    # path 4 - 5 - 6 both ways; node 7 has no edges.
    source = np.array([1, 2, 3, 4, 5, 5, 6])
    target = np.array([0, 0, 0, 5, 4, 6, 5])
    # In-degrees: 0 -> 3; 1, 2, 3 -> 0; 4 -> 1; 5 -> 2; 6 -> 1; 7 -> 0.
    histogram = degree_histogram(target, num_nodes=8)
    np.testing.assert_array_equal(histogram, [4, 2, 1, 1])
    assert histogram.sum() == 8
    np.testing.assert_array_equal(
        degree_histogram(source[:0], num_nodes=2), [2]
    )
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        degree_histogram(target, num_nodes=4)
    with pytest.raises(ValueError, match="num_nodes=0"):
        degree_histogram(target, num_nodes=0)
    with pytest.raises(ValueError, match="dtype=float"):
        degree_histogram(target.astype("float32"), num_nodes=8)


def test_the_statistics_of_a_histogram():
    # 4 nodes of degree 0, 2 of degree 1, 1 of 2, 1 of 3.
    layer = DegreeScalerAggregation(
        "sum", "amplification", degree_histogram=[4, 2, 1, 1]
    )
    assert layer.average_degree == pytest.approx((2 + 2 + 3) / 8)
    assert layer.average_log_degree == pytest.approx(
        (2 * np.log(2) + np.log(3) + np.log(4)) / 8
    )


@pytest.mark.parametrize(
    "form", ["padded", "segments"], ids=["padded", "segments"]
)
def test_every_scaler_matches_a_hand_computation(form):
    # Sets of 3, 1 and 0 elements, one feature.
    values = np.array([[1.0], [2.0], [4.0], [5.0]], "float32")
    ids = np.array([0, 0, 0, 1], "int32")
    scalers = [
        "identity",
        "amplification",
        "attenuation",
        "linear",
        "inverse_linear",
    ]
    layer = DegreeScalerAggregation(
        ["sum", "max"], scalers, average_log_degree=0.8, average_degree=2.0
    )
    if form == "segments":
        outputs = layer(values, segment_ids=ids, num_segments=3)
    else:
        padded = np.zeros((3, 3, 1), "float32")
        padded[0] = values[:3]
        padded[1, 0] = values[3]
        mask = np.array([[1, 1, 1], [1, 0, 0], [0, 0, 0]], bool)
        outputs = layer(padded, mask=mask)
    outputs = numpy(outputs).reshape(3, 5, 2)
    aggregates = np.array([[7.0, 4.0], [5.0, 5.0], [0.0, 0.0]])
    # Sizes 3, 1, 0; taken as at least 1.
    degrees = np.array([3.0, 1.0, 1.0])[:, None]
    log_degrees = np.log(degrees + 1)
    factors = [
        np.ones_like(degrees),
        log_degrees / 0.8,
        0.8 / log_degrees,
        degrees / 2.0,
        2.0 / degrees,
    ]
    for index, factor in enumerate(factors):
        np.testing.assert_allclose(
            outputs[:, index], aggregates * factor, rtol=1e-6
        )


def test_wraps_any_aggregation_and_saves(tmp_path):
    histogram = np.array([1, 3, 2])
    for aggregation in (
        keras_laf.LAF(2, preset="closed_forms"),
        keras_laf.SoftmaxAggregation(learn=True),
        keras_laf.Set2Set(processing_steps=1),
        "laf",
    ):
        layer = DegreeScalerAggregation(
            aggregation,
            ["identity", "attenuation"],
            degree_histogram=histogram,
            train_average_log_degree=True,
        )
        inputs = keras.Input((4, 3))
        model = keras.Model(inputs, layer(inputs))
        layer.log_average_log_degree.assign(np.log(0.7))
        sets = np.random.default_rng(0).uniform(size=(2, 4, 3))
        expected = numpy(model(sets))
        # The identity block is the aggregation alone.
        width = expected.shape[-1] // 2
        np.testing.assert_allclose(
            expected[:, :width],
            numpy(layer.aggregation_layer()(sets)),
            rtol=1e-5,
            atol=1e-6,
        )
        np.testing.assert_allclose(
            expected[:, width:],
            expected[:, :width] * 0.7 / np.log(5.0),
            rtol=1e-5,
            atol=1e-6,
        )
        path = os.path.join(tmp_path, "scaled.keras")
        model.save(path)
        reloaded = keras.models.load_model(path)
        np.testing.assert_allclose(
            numpy(reloaded(sets)), expected, rtol=1e-6, atol=1e-7
        )
        config = layer.get_config()
        assert DegreeScalerAggregation.from_config(config).get_config() == (
            config
        )


def test_bad_arguments():
    with pytest.raises(ValueError, match="scalers=\\['double'\\]"):
        DegreeScalerAggregation("sum", ["double"], average_log_degree=1.0)
    with pytest.raises(ValueError, match="keras_laf.degree_histogram"):
        DegreeScalerAggregation("sum", ["amplification"])
    with pytest.raises(ValueError, match="average_log_degree=0"):
        DegreeScalerAggregation("sum", "linear", average_log_degree=0)
    with pytest.raises(ValueError, match="not both"):
        DegreeScalerAggregation(
            "sum", "linear", degree_histogram=[1, 1], average_log_degree=1.0
        )
    with pytest.raises(ValueError, match="only nodes without incoming"):
        DegreeScalerAggregation("sum", "linear", degree_histogram=[5])
    with pytest.raises(ValueError, match="non-negative node counts"):
        DegreeScalerAggregation("sum", "linear", degree_histogram=[1, -1])
    with pytest.raises(ValueError, match="of type Dense"):
        DegreeScalerAggregation(keras.layers.Dense(2), "identity")
    # Only the identity needs no statistics.
    assert DegreeScalerAggregation("sum", "identity").average_degree is None


def test_builder_wraps_each_layer_and_takes_the_histogram():
    histogram = np.array([2, 5, 3])
    model = graph_network(
        aggregation=keras_laf.LAF(3, preset="closed_forms"),
        hidden_units=4,
        num_layers=2,
        scalers=["identity", "amplification", "attenuation"],
        degree_histogram=histogram,
    )
    layers = [model.get_layer(f"message_passing_{i}") for i in (1, 2)]
    scalers = [layer.aggregation_layer() for layer in layers]
    assert all(isinstance(s, DegreeScalerAggregation) for s in scalers)
    # Copies: no weights shared between the layers.
    assert scalers[0].aggregation_layer() is not scalers[1].aggregation_layer()
    assert scalers[0].aggregation_layer().units == 3
    expected = np.log([1.0, 2.0, 3.0]) @ histogram / histogram.sum()
    assert scalers[0].average_log_degree == pytest.approx(expected)
    # The readout takes the aggregation without the scalers, after a
    # sigmoid since it is LAF.
    readout = model.get_layer("graph_readout")
    assert isinstance(readout.aggregation_layer(), keras_laf.LAF)
    assert readout.aggregation_layer() is not scalers[0].aggregation_layer()
    model.get_layer("readout_projection")

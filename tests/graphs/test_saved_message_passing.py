"""A model of `MessagePassing` layers saved before the layer was renamed
`AggregationConv` and its scalers became `DegreeScalerAggregation`:
it loads and predicts as it did, and the old name keeps working."""

import pathlib
import warnings

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import AggregationConv
from keras_laf import MessagePassing

pytestmark = pytest.mark.multi_backend

DATA = pathlib.Path(__file__).parents[1] / "data"
INPUTS = [
    "nodes",
    "source",
    "target",
    "edge_features",
    "graph_ids",
    "nodes_per_graph",
]
# The node without edges, alone in its graph: the standard deviation of its
# empty neighbourhood was sqrt(epsilon) when the model was saved and is 0
# now, as `FixedAggregation` promises, so its outputs moved.
LONE_NODE, LONE_GRAPH = 7, 2


def load():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return keras.models.load_model(
            DATA / "message_passing_saved_before_rename.keras"
        )


def test_model_saved_before_the_rename_loads_and_predicts_as_it_did():
    # Saved on TensorFlow by keras-laf at 28fc50a: MessagePassing with LAF
    # (closed_forms preset), PNA's three log scalers and edge features;
    # with mean, max and std, a trained delta and the linear scalers; with
    # a sum and no scalers; then a LAF and max GraphReadout.
    saved = np.load(DATA / "message_passing_saved_before_rename.npz")
    with pytest.warns(DeprecationWarning, match="AggregationConv"):
        model = keras.models.load_model(
            DATA / "message_passing_saved_before_rename.keras"
        )
    node_predictions, graph_predictions = (
        keras.ops.convert_to_numpy(output)
        for output in model([saved[name] for name in INPUTS])
    )
    others = np.arange(len(node_predictions)) != LONE_NODE
    np.testing.assert_allclose(
        node_predictions[others],
        saved["node_predictions"][others],
        rtol=1e-5,
        atol=1e-6,
    )
    graphs = np.arange(len(graph_predictions)) != LONE_GRAPH
    np.testing.assert_allclose(
        graph_predictions[graphs],
        saved["graph_predictions"][graphs],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        node_predictions[LONE_NODE],
        saved["node_predictions"][LONE_NODE],
        atol=1e-2,
    )
    # The old arguments became a DegreeScalerAggregation of the aggregation.
    second = model.get_layer("message_passing_2")
    scaler = second.aggregation_layer()
    assert isinstance(scaler, keras_laf.DegreeScalerAggregation)
    assert scaler.scalers == ["amplification", "linear", "inverse_linear"]
    assert (scaler.average_log_degree, scaler.average_degree) == (1.1, 2.5)
    # Its trained delta, stored among the old layer's own variables.
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(scaler.log_average_log_degree), np.log(0.9)
    )
    first = model.get_layer("message_passing_1")
    assert first.aggregation_layer().aggregation_layer().preset == (
        "closed_forms"
    )


def test_reloaded_and_saved_again_it_predicts_the_same(tmp_path):
    saved = np.load(DATA / "message_passing_saved_before_rename.npz")
    model = load()
    inputs = [saved[name] for name in INPUTS]
    expected = [keras.ops.convert_to_numpy(output) for output in model(inputs)]
    path = tmp_path / "again.keras"
    model.save(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        again = keras.models.load_model(path)
    for output, reference in zip(again(inputs), expected, strict=True):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(output), reference, rtol=1e-6
        )


def test_the_old_name_is_the_new_layer_with_scalers_as_an_aggregation():
    rng = np.random.default_rng(0)
    features = rng.uniform(size=(4, 2)).astype("float32")
    source = np.array([0, 1, 2, 3, 3], "int32")
    target = np.array([1, 0, 3, 2, 1], "int32")
    with pytest.warns(DeprecationWarning, match="DegreeScalerAggregation"):
        old = MessagePassing(
            3,
            aggregation=["mean", "max"],
            scalers=["identity", "attenuation"],
            average_log_degree=1.2,
        )
    new = AggregationConv(
        3,
        aggregation=keras_laf.DegreeScalerAggregation(
            ["mean", "max"], ["identity", "attenuation"], average_log_degree=1.2
        ),
    )
    old(features, source, target)
    new(features, source, target)
    new.set_weights(old.get_weights())
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(old(features, source, target)),
        keras.ops.convert_to_numpy(new(features, source, target)),
        rtol=1e-6,
    )
    assert isinstance(old, AggregationConv)
    config = old.get_config()
    assert config["scalers"] == ["identity", "attenuation"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert MessagePassing.from_config(config).get_config() == config

"""The message-passing template, `GraphConvolution`: a convolution is the
hooks it overrides, edge features pass through its call, build and output
shapes, and `aggregate` takes values and sets everywhere."""

import inspect

import keras
import numpy as np
import pytest
from backend_helpers import numpy
from keras import ops

import keras_laf
from keras_laf.core.sets import SegmentSets
from keras_laf.graphs import GraphConvolution
from keras_laf.graphs import GraphLayer

pytestmark = pytest.mark.multi_backend

SOURCE = np.array([0, 1, 1, 2, 3], "int32")
TARGET = np.array([1, 0, 2, 1, 1], "int32")


def graph():
    rng = np.random.default_rng(5)
    features = rng.normal(size=(4, 3)).astype("float32")
    edges = rng.normal(size=(5, 2)).astype("float32")
    return features, SOURCE, TARGET, edges


class EdgeGatedSum(GraphConvolution):
    """A user's convolution in three hooks: each neighbour's features
    times its edge's first feature, summed, then a dense layer."""

    edge_features_input = "required"

    def build_for_features(self, features, edge_features):
        self.edge_features_seen = edge_features
        self._dense = keras.layers.Dense(self.units, name="dense")
        self._dense.build((None, features))

    def message(self, node_features, source, target, edge_features, training):
        return edge_features[:, :1] * ops.take(node_features, source, axis=0)

    def update(self, aggregates, node_features, training):
        return self._dense(aggregates)


def test_a_convolution_is_its_hooks_with_edge_features_in_a_model():
    features, source, target, edges = graph()
    inputs = [
        keras.Input((3,)),
        keras.Input((), dtype="int32"),
        keras.Input((), dtype="int32"),
        keras.Input((2,)),
    ]
    layer = EdgeGatedSum(4)
    outputs = layer(*inputs)
    # Built from the edge features' shape, shaped without a call.
    assert layer.edge_features_seen == 2
    assert tuple(outputs.shape) == (None, 4)
    model = keras.Model(inputs, outputs)
    gated = edges[:, :1] * features[source]
    aggregates = np.zeros_like(features)
    np.add.at(aggregates, target, gated)
    expected = aggregates @ numpy(layer._dense.kernel) + numpy(
        layer._dense.bias
    )
    np.testing.assert_allclose(
        numpy(model([features, source, target, edges])),
        expected,
        rtol=1e-5,
        atol=1e-6,
    )
    assert layer.compute_output_shape((4, 3), (5,), (5,), (5, 2)) == (4, 4)


def test_aggregation_conv_takes_edge_features_or_not_as_built():
    features, source, target, edges = graph()
    with_edges = keras_laf.AggregationConv(2, aggregation="sum")
    with_edges(features, source, target, edges)
    # [h_v, h_u, e_uv]: 3 + 3 + 2 message inputs.
    assert tuple(with_edges._message_dense.kernel.shape) == (8, 2)
    with pytest.raises(ValueError, match="Received: edge_features=None"):
        with_edges(features, source, target)
    without = keras_laf.AggregationConv(2, aggregation="sum")
    without(features, source, target)
    assert tuple(without._message_dense.kernel.shape) == (6, 2)
    with pytest.raises(ValueError, match="built for no edge features"):
        without(features, source, target, edges)


@pytest.mark.parametrize(
    "layer", [keras_laf.GINConv, keras_laf.GCNConv, keras_laf.GATConv]
)
def test_convolutions_without_edge_features_refuse_them(layer):
    features, source, target, edges = graph()
    with pytest.raises(ValueError, match="takes no edge features"):
        layer(2)(features, source, target, edges)


def test_aggregate_takes_values_and_sets_on_every_graph_layer():
    # One contract for "aggregate", as `SetAggregation.aggregate(values,
    # sets)`: the template's hook and the readout's aggregation alike.
    for layer_class in (GraphLayer, GraphConvolution, keras_laf.GATConv):
        parameters = list(inspect.signature(layer_class.aggregate).parameters)
        assert parameters == ["self", "values", "sets", "training"]
    features, source, target, _ = graph()
    expected = np.zeros_like(features)
    np.add.at(expected, target, features[source])
    sets = SegmentSets(target, 4)
    convolution = keras_laf.GINConv(2)
    readout = keras_laf.GraphReadout("sum")
    for layer in (convolution, readout):
        np.testing.assert_allclose(
            numpy(layer.aggregate(features[source], sets)), expected, rtol=1e-6
        )

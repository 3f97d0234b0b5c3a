"""The graph layers and the graph readout on every Keras backend,
against NumPy.
"""

import keras
import numpy as np
import pytest
from backend_helpers import numpy

import keras_laf

pytestmark = pytest.mark.multi_backend


def test_graph_layers():
    # A path 0 - 1 - 2 and a lone node 3.
    source = np.array([0, 1, 1, 2], "int32")
    target = np.array([1, 0, 2, 1], "int32")
    features = np.random.default_rng(1).uniform(size=(4, 2)).astype("float32")
    layer = keras_laf.MessagePassing(3, aggregation="laf", laf_units=2)
    outputs = numpy(layer(features, source, target))
    assert outputs.shape == (4, 3) and np.isfinite(outputs).all()
    aggregates = numpy(layer.aggregate_neighbours(features, source, target))
    order = [3, 1, 0, 2]  # the same edges in another order
    np.testing.assert_allclose(
        numpy(
            layer.aggregate_neighbours(features, source[order], target[order])
        ),
        aggregates,
        rtol=1e-5,
    )
    readout = keras_laf.GraphReadout(["mean", "max"])
    graph_ids = np.array([0, 0, 0, 1], "int32")
    expected = [
        np.stack([features[:3].mean(0), features[:3].max(0)], -1).ravel(),
        np.stack([features[3], features[3]], -1).ravel(),
    ]
    np.testing.assert_allclose(
        numpy(readout(features, graph_ids, num_graphs=2)), expected, rtol=1e-6
    )


def test_graph_readout_with_nodes_per_graph_matches_numpy():
    rng = np.random.default_rng(4)
    features = rng.uniform(size=(7, 2)).astype("float32")
    graph_ids = np.array([2, 0, 0, 2, 1, 0, 2], "int32")  # unsorted
    # A fourth graph without nodes, which max(graph_ids) + 1 cannot count.
    nodes_per_graph = np.array([3, 1, 3, 0], "int32")
    expected = np.zeros((4, 2, 3), "float32")
    for graph in range(3):
        members = features[graph_ids == graph]
        expected[graph] = np.stack(
            [members.sum(0), members.mean(0), members.max(0)], -1
        )
    expected = expected.reshape(4, 6)
    readout = keras_laf.GraphReadout(["sum", "mean", "max"])
    outputs = numpy(
        readout(features, graph_ids, nodes_per_graph=nodes_per_graph)
    )
    np.testing.assert_allclose(outputs, expected, rtol=1e-6)
    # The number of graphs from the ids, as without `nodes_per_graph`.
    np.testing.assert_allclose(
        outputs[:3], numpy(readout(features, graph_ids)), rtol=1e-6
    )
    # In a model, where the number of graphs is the input's leading shape.
    inputs = [
        keras.Input((2,)),
        keras.Input((), dtype="int32"),
        keras.Input((), dtype="int32"),
    ]
    model = keras.Model(
        inputs, readout(inputs[0], inputs[1], nodes_per_graph=inputs[2])
    )
    np.testing.assert_allclose(
        numpy(model([features, graph_ids, nodes_per_graph])),
        expected,
        rtol=1e-6,
    )

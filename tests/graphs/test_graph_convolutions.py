"""Tests of GINConv, GCNConv and GATConv against NumPy references.

The shared checks (config and `.keras` round trips, a training step,
float16) run in `test_every_layer.py`.
"""

import keras
import numpy as np
import pytest

from keras_laf import GATConv
from keras_laf import GCNConv
from keras_laf import GINConv

# keras.ops only: every test runs on each Keras backend.
pytestmark = pytest.mark.multi_backend


def hand_made_graph():
    """Two graphs: a triangle 0-1-2 with a tail 2-3, and a lone node 4.

    Edges in both directions; node 4 has none, node 3 one neighbour.
    """
    rng = np.random.default_rng(0)
    node_features = rng.normal(size=(5, 3)).astype("float32")
    pairs = np.array([[0, 1], [1, 2], [0, 2], [2, 3]], "int32")
    edges = np.concatenate([pairs, pairs[:, ::-1]])
    return node_features, edges[:, 0], edges[:, 1]


def adjacency(source, target, num_nodes):
    # a[v, u]: the edges from u to v.
    matrix = np.zeros((num_nodes, num_nodes), "float64")
    np.add.at(matrix, (target, source), 1.0)
    return matrix


def weights_of(layer):
    return [keras.ops.convert_to_numpy(w) for w in layer.weights]


def test_gin_matches_numpy():
    features, source, target = hand_made_graph()
    layer = GINConv(4, hidden_units=5, epsilon=0.3)
    outputs = keras.ops.convert_to_numpy(layer(features, source, target))
    assert float(layer.epsilon_weight.numpy()) == pytest.approx(0.3)
    a = adjacency(source, target, 5)
    hidden = 1.3 * features + a @ features
    kernel_1 = layer._mlp[0].kernel.numpy()
    bias_1 = layer._mlp[0].bias.numpy()
    kernel_2 = layer._mlp[1].kernel.numpy()
    bias_2 = layer._mlp[1].bias.numpy()
    expected = np.maximum(hidden @ kernel_1 + bias_1, 0) @ kernel_2 + bias_2
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_gin_epsilon_is_learned_or_fixed():
    features, source, target = hand_made_graph()
    learned = GINConv(2)
    learned(features, source, target)
    assert len(learned.trainable_weights) == 5
    fixed = GINConv(2, train_epsilon=False)
    fixed(features, source, target)
    assert len(fixed.trainable_weights) == 4
    assert len(fixed.non_trainable_weights) == 1


@pytest.mark.parametrize("add_self_loops", [True, False])
def test_gcn_matches_numpy(add_self_loops):
    features, source, target = hand_made_graph()
    layer = GCNConv(4, add_self_loops=add_self_loops, bias_initializer="ones")
    outputs = keras.ops.convert_to_numpy(layer(features, source, target))
    a = adjacency(source, target, 5)
    if add_self_loops:
        a = a + np.eye(5)
    degrees = a.sum(axis=1)
    roots = np.where(degrees > 0, 1 / np.sqrt(np.maximum(degrees, 1)), 0)
    normalised = roots[:, None] * a * roots[None, :]
    kernel, bias = weights_of(layer)
    expected = normalised @ features @ kernel + bias
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)
    if not add_self_loops:
        # The lone node gets the bias alone.
        np.testing.assert_allclose(outputs[4], bias, rtol=1e-6)


def gat_reference(layer, features, source, target, num_nodes):
    kernel = layer._projection.kernel.numpy()
    heads, units = layer.num_heads, layer.units
    attention_target = layer.attention_target.numpy()
    attention_source = layer.attention_source.numpy()
    projected = (features @ kernel).reshape(num_nodes, heads, units)
    if layer.add_self_loops:
        source = np.concatenate([source, np.arange(num_nodes)])
        target = np.concatenate([target, np.arange(num_nodes)])
    outputs = np.zeros((num_nodes, heads, units))
    for node in range(num_nodes):
        senders = source[target == node]
        if senders.size == 0:
            continue
        for head in range(heads):
            scores = np.array(
                [
                    attention_target[head] @ projected[node, head]
                    + attention_source[head] @ projected[sender, head]
                    for sender in senders
                ]
            )
            scores = np.where(scores > 0, scores, layer.negative_slope * scores)
            alpha = np.exp(scores - scores.max())
            alpha /= alpha.sum()
            outputs[node, head] = alpha @ projected[senders, head]
    if layer.concat_heads:
        outputs = outputs.reshape(num_nodes, heads * units)
    else:
        outputs = outputs.mean(axis=1)
    return outputs + layer.bias.numpy()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_heads": 2},
        {"num_heads": 3, "concat_heads": False},
        {"num_heads": 2, "add_self_loops": False, "negative_slope": 0.1},
    ],
)
def test_gat_matches_numpy(kwargs):
    features, source, target = hand_made_graph()
    layer = GATConv(4, bias_initializer="ones", **kwargs)
    outputs = keras.ops.convert_to_numpy(layer(features, source, target))
    expected = gat_reference(layer, features, source, target, 5)
    assert outputs.shape == expected.shape
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_gat_attention_dropout_only_while_training():
    features, source, target = hand_made_graph()
    layer = GATConv(4, num_heads=2, dropout=0.5)
    inference = keras.ops.convert_to_numpy(layer(features, source, target))
    np.testing.assert_allclose(
        inference,
        gat_reference(layer, features, source, target, 5),
        rtol=1e-5,
        atol=1e-5,
    )
    training = layer(features, source, target, training=True)
    assert not np.allclose(keras.ops.convert_to_numpy(training), inference)


@pytest.mark.parametrize("layer_cls", [GINConv, GCNConv, GATConv])
def test_node_permutation_equivariance(layer_cls):
    features, source, target = hand_made_graph()
    layer = layer_cls(3)
    outputs = keras.ops.convert_to_numpy(layer(features, source, target))
    order = np.array([3, 0, 4, 2, 1])
    position = np.argsort(order)
    permuted = keras.ops.convert_to_numpy(
        layer(
            features[order],
            position[source].astype("int32"),
            position[target].astype("int32"),
        )
    )
    np.testing.assert_allclose(permuted, outputs[order], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer_cls", [GINConv, GCNConv, GATConv])
def test_no_edges_gives_finite_outputs(layer_cls):
    features = np.ones((2, 3), "float32")
    empty = np.zeros((0,), "int32")
    outputs = keras.ops.convert_to_numpy(layer_cls(2)(features, empty, empty))
    assert outputs.shape[0] == 2 and np.all(np.isfinite(outputs))


@pytest.mark.parametrize("layer_cls", [GINConv, GCNConv, GATConv])
def test_trains_in_a_graph_network(layer_cls):
    features, source, target = hand_made_graph()
    inputs = {
        "node_features": keras.Input((3,), name="node_features"),
        "edge_source": keras.Input((), dtype="int32", name="edge_source"),
        "edge_target": keras.Input((), dtype="int32", name="edge_target"),
    }
    outputs = layer_cls(2, name="convolution")(
        inputs["node_features"], inputs["edge_source"], inputs["edge_target"]
    )
    model = keras.Model(inputs, keras.layers.Dense(1, name="output")(outputs))
    model.compile("adam", "mse")
    data = {
        "node_features": features,
        "edge_source": source,
        "edge_target": target,
    }
    # One batch: the edge and node arrays have their own lengths.
    losses = [model.train_on_batch(data, np.ones((5, 1))) for _ in range(3)]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


@pytest.mark.parametrize(
    "layer_cls, kwargs, message",
    [
        (GINConv, {"units": 0}, "Received: units=0"),
        (GINConv, {"units": 2, "hidden_units": -1}, "hidden_units=-1"),
        (GINConv, {"units": 2, "num_mlp_layers": 0}, "num_mlp_layers=0"),
        (GINConv, {"units": 2, "epsilon": "a"}, "epsilon='a'"),
        (GCNConv, {"units": 2.5}, "units=2.5"),
        (GATConv, {"units": 2, "num_heads": 0}, "num_heads=0"),
        (GATConv, {"units": 2, "negative_slope": -1}, "negative_slope=-1"),
        (GATConv, {"units": 2, "dropout": 1.0}, "dropout=1.0"),
    ],
)
def test_bad_arguments(layer_cls, kwargs, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        layer_cls(**kwargs)


@pytest.mark.parametrize("layer_cls", [GINConv, GCNConv, GATConv])
def test_bad_inputs(layer_cls):
    features, source, target = hand_made_graph()
    layer = layer_cls(2)
    with pytest.raises(ValueError, match="edge_source.dtype=float32"):
        layer(features, source.astype("float32"), target)
    with pytest.raises(ValueError, match="must have the same length"):
        layer(features, source[:3], target)
    with pytest.raises(ValueError, match=r"indices in \[0, 5\)"):
        layer(features, source + 5, target)

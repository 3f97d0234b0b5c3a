"""Tests of GINEConv, GIN with edge features, against a NumPy reference.

The shared checks (config and `.keras` round trips, a training step,
float16) run in `test_every_layer.py`.
"""

import keras
import numpy as np
import pytest
from backend_helpers import numpy

import keras_laf
from keras_laf import GINConv
from keras_laf import GINEConv

pytestmark = pytest.mark.multi_backend


def graph_with_bonds(edge_width=2):
    """A triangle 0-1-2 with a tail 2-3 and a lone node 4, 3 features per
    node; each undirected edge is two directed ones with features of
    their own."""
    rng = np.random.default_rng(0)
    node_features = rng.normal(size=(5, 3)).astype("float32")
    pairs = np.array([[0, 1], [1, 2], [0, 2], [2, 3]], "int32")
    edges = np.concatenate([pairs, pairs[:, ::-1]])
    edge_features = rng.normal(size=(len(edges), edge_width))
    return (
        node_features,
        edges[:, 0],
        edges[:, 1],
        edge_features.astype("float32"),
    )


def fix_weights(layer, seed=1):
    # Known values in every weight but epsilon, which the test sets.
    rng = np.random.default_rng(seed)
    for weight in layer.weights:
        if weight.path.endswith("epsilon"):
            continue
        weight.assign(rng.normal(size=weight.shape).astype("float32"))


def gine_reference(layer, features, source, target, edges, aggregation):
    """`MLP((1 + eps) h_v + aggregate_u ReLU(h_u + W e_uv + b))` in NumPy,
    an empty neighbourhood aggregating to 0."""
    projection = layer._edge_projection
    messages = np.maximum(
        features[source]
        + edges @ numpy(projection.kernel)
        + numpy(projection.bias),
        0.0,
    )
    aggregates = np.zeros_like(features, dtype="float64")
    np.add.at(aggregates, target, messages)
    if aggregation == "mean":
        counts = np.bincount(target, minlength=len(features))[:, None]
        aggregates = aggregates / np.maximum(counts, 1)
    epsilon = float(numpy(layer.epsilon_weight))
    hidden = (1.0 + epsilon) * features + aggregates
    first, second = layer._mlp
    hidden = np.maximum(hidden @ numpy(first.kernel) + numpy(first.bias), 0.0)
    return hidden @ numpy(second.kernel) + numpy(second.bias)


@pytest.mark.parametrize("aggregation", ["sum", "mean"])
@pytest.mark.parametrize("edge_width", [2, 3])
def test_gine_matches_numpy(aggregation, edge_width):
    features, source, target, edges = graph_with_bonds(edge_width)
    layer = GINEConv(4, aggregation=aggregation, hidden_units=5, epsilon=0.3)
    layer(features, source, target, edges)
    fix_weights(layer)
    outputs = numpy(layer(features, source, target, edges))
    expected = gine_reference(
        layer, features, source, target, edges, aggregation
    )
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)
    assert float(numpy(layer.epsilon_weight)) == pytest.approx(0.3)


def test_edge_features_change_the_outputs_and_are_projected_always():
    # Edge features as wide as the nodes are projected too: GIN's weights
    # plus the projection's kernel and bias.
    features, source, target, edges = graph_with_bonds(edge_width=3)
    layer = GINEConv(2)
    outputs = numpy(layer(features, source, target, edges))
    gin = GINConv(2)
    gin(features, source, target)
    assert len(layer.trainable_weights) == len(gin.trainable_weights) + 2
    assert tuple(layer._edge_projection.kernel.shape) == (3, 3)
    other = numpy(layer(features, source, target, edges + 1.0))
    # The lone node has no edges; every other node's output moves.
    np.testing.assert_allclose(other[4], outputs[4], rtol=1e-6)
    assert not np.allclose(other[:4], outputs[:4])


def test_epsilon_is_learned_or_fixed():
    features, source, target, edges = graph_with_bonds()
    learned = GINEConv(2)
    learned(features, source, target, edges)
    assert len(learned.trainable_weights) == 7
    fixed = GINEConv(2, train_epsilon=False)
    fixed(features, source, target, edges)
    assert len(fixed.trainable_weights) == 6
    assert [w.path.rpartition("/")[2] for w in fixed.non_trainable_weights] == [
        "epsilon"
    ]


def test_laf_by_name_aggregates_the_squashed_messages():
    features, source, target, edges = graph_with_bonds()
    layer = GINEConv(4, aggregation="laf", aggregation_kwargs={"units": 3})
    outputs = numpy(layer(features, source, target, edges))
    assert outputs.shape == (5, 4) and np.isfinite(outputs).all()
    laf = layer.aggregation_layer()
    assert isinstance(laf, keras_laf.LAF) and laf.units == 3
    # Its aggregates of each node's sigmoid messages, 3 per feature, are
    # projected back to the node's 3 features before the node's own term.
    projection = layer._edge_projection
    messages = np.maximum(
        features[source]
        + edges @ numpy(projection.kernel)
        + numpy(projection.bias),
        0.0,
    )
    expected = numpy(
        laf(
            (1 / (1 + np.exp(-messages))).astype("float32"),
            segment_ids=target,
            num_segments=5,
        )
    )
    np.testing.assert_allclose(
        numpy(layer.aggregate_neighbours(features, source, target, edges)),
        expected,
        rtol=1e-5,
        atol=1e-6,
    )
    assert tuple(layer._neighbour_projection.kernel.shape) == (9, 3)


def test_missing_edge_features_raise():
    features, source, target, _ = graph_with_bonds()
    with pytest.raises(ValueError, match="needs edge features"):
        GINEConv(2)(features, source, target)
    inputs = [
        keras.Input((3,)),
        keras.Input((), dtype="int32"),
        keras.Input((), dtype="int32"),
    ]
    with pytest.raises(ValueError, match="edge_features=None"):
        GINEConv(2)(*inputs)


def test_edge_features_of_another_rank_or_length_raise():
    features, source, target, edges = graph_with_bonds()
    with pytest.raises(ValueError, match=r"edge_features.shape=\(8, 2, 1\)"):
        GINEConv(2)(features, source, target, edges[..., None])
    with pytest.raises(ValueError, match=r"edge_features.shape=\(8,\)"):
        GINEConv(2)(features, source, target, edges[:, 0])
    with pytest.raises(ValueError, match="must have the same length"):
        GINEConv(2)(features, source, target, edges[:5])
    symbolic = [
        keras.Input((3,)),
        keras.Input((), dtype="int32"),
        keras.Input((), dtype="int32"),
        keras.Input((2, 1)),
    ]
    with pytest.raises(ValueError, match="num_edges, edge_features"):
        GINEConv(2)(*symbolic)
    # Built for 2 edge features, given 3.
    layer = GINEConv(2)
    layer(features, source, target, edges)
    wider = np.concatenate([edges, edges[:, :1]], axis=-1)
    with pytest.raises(ValueError, match="built for 2 edge features"):
        layer(features, source, target, wider)


def test_config_round_trip():
    layer = GINEConv(
        4,
        aggregation=keras_laf.LAF(3, preset="closed_forms"),
        hidden_units=6,
        num_mlp_layers=3,
        epsilon=0.5,
        train_epsilon=False,
        name="gine",
    )
    config = layer.get_config()
    revived = GINEConv.from_config(config)
    assert revived.get_config() == config
    assert isinstance(revived.aggregation_layer(), keras_laf.LAF)
    assert revived.aggregation_layer().preset == "closed_forms"
    assert (revived.epsilon, revived.train_epsilon) == (0.5, False)


def test_saved_model_predicts_the_same(tmp_path):
    features, source, target, edges = graph_with_bonds()
    inputs = {
        "node_features": keras.Input((3,), name="node_features"),
        "edge_source": keras.Input((), dtype="int32", name="edge_source"),
        "edge_target": keras.Input((), dtype="int32", name="edge_target"),
        "edge_features": keras.Input((2,), name="edge_features"),
    }
    outputs = GINEConv(
        4,
        aggregation="laf",
        aggregation_kwargs={"units": 2},
        name="gine",
    )(*inputs.values())
    model = keras.Model(inputs, keras.layers.Dense(1, name="output")(outputs))
    data = {
        "node_features": features,
        "edge_source": source,
        "edge_target": target,
        "edge_features": edges,
    }
    model.compile("adam", "mse")
    losses = [model.train_on_batch(data, np.ones((5, 1))) for _ in range(3)]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]
    expected = numpy(model(data))
    model.save(tmp_path / "gine.keras")
    reloaded = keras.models.load_model(tmp_path / "gine.keras")
    assert type(reloaded.get_layer("gine")) is GINEConv
    np.testing.assert_allclose(numpy(reloaded(data)), expected, rtol=1e-6)


def test_node_permutation_equivariance():
    features, source, target, edges = graph_with_bonds()
    layer = GINEConv(3)
    outputs = numpy(layer(features, source, target, edges))
    order = np.array([3, 0, 4, 2, 1])
    position = np.argsort(order).astype("int32")
    permuted = numpy(
        layer(features[order], position[source], position[target], edges)
    )
    np.testing.assert_allclose(permuted, outputs[order], rtol=1e-5, atol=1e-5)

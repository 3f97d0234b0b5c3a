"""Every graph layer with every aggregation of the family passed as a
layer, against the same aggregation applied by hand to each node's
neighbours (or each graph's nodes), as padded sets.

keras.ops only: every test runs on each Keras backend. The GMT and the
GRU pad segment-form sets themselves (`SegmentSets.to_padded`), through a
ragged tensor on TensorFlow and with `keras.ops` elsewhere.
"""

import os
import pathlib

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import AggregationConv
from keras_laf import GATConv
from keras_laf import GCNConv
from keras_laf import GINConv
from keras_laf import GraphReadout
from keras_laf.datasets import GraphBatches
from keras_laf.models import graph_network

pytestmark = pytest.mark.multi_backend


def aggregation_cases():
    """(id, factory of a fresh aggregation layer, marks)."""
    return [
        ("laf_closed_forms", lambda: keras_laf.LAF(2, preset="closed_forms")),
        ("laf_paper", lambda: keras_laf.LAF(3, preset="paper")),
        ("fixed", lambda: keras_laf.FixedAggregation(["max", "std"])),
        (
            "softmax",
            lambda: keras_laf.SoftmaxAggregation(t=0.5, learn=True),
        ),
        (
            "powermean",
            lambda: keras_laf.PowerMeanAggregation(p=2.0, learn=True),
        ),
        (
            "attentional",
            lambda: keras_laf.AttentionalAggregation(
                gate=keras.layers.Dense(1), transform=keras.layers.Dense(3)
            ),
        ),
        ("set2set", lambda: keras_laf.Set2Set(processing_steps=2)),
        (
            "gmt",
            lambda: keras_laf.GraphMultisetTransformer(dim=4, num_seeds=2),
        ),
        (
            "gru",
            lambda: keras_laf.GRUAggregation(units=3),
        ),
        (
            "multi",
            lambda: keras_laf.MultiAggregation(["mean", keras_laf.LAF(2)]),
        ),
        (
            "degree_scaler",
            lambda: keras_laf.DegreeScalerAggregation(
                keras_laf.LAF(2),
                ["identity", "amplification", "inverse_linear"],
                degree_histogram=np.array([1, 4, 2, 1]),
            ),
        ),
    ]


def params():
    return [
        pytest.param(factory, id=name, marks=marks)
        for name, factory, *marks in aggregation_cases()
    ]


def graph():
    """A triangle 0-1-2 with a tail 2-3, a lone node 4, and a pair 5-6
    with one directed edge 5 -> 6; features in [0, 1]."""
    rng = np.random.default_rng(0)
    features = rng.uniform(size=(7, 3)).astype("float32")
    pairs = np.array([[0, 1], [1, 2], [0, 2], [2, 3]], "int32")
    edges = np.concatenate([pairs, pairs[:, ::-1], [[5, 6]]])
    return features, edges[:, 0], edges[:, 1]


def numpy(tensor):
    return keras.ops.convert_to_numpy(tensor)


def per_set(aggregation, values, ids, num_sets):
    """The aggregation of each set of `values` alone, padded, `(num_sets,
    width)`: the reference of the segment form."""
    rows = []
    for index in range(num_sets):
        members = values[ids == index]
        if len(members):
            output = aggregation(members[None])
        else:
            # The empty set: one masked-out element.
            output = aggregation(
                np.zeros((1, 1, values.shape[-1]), "float32"),
                mask=np.zeros((1, 1), bool),
            )
        rows.append(numpy(output)[0])
    return np.stack(rows)


def sigmoid(values):
    return 1 / (1 + np.exp(-values))


def dense(layer, values):
    return numpy(layer(values.astype("float32")))


@pytest.mark.parametrize("factory", params())
def test_readout(factory):
    features, _, _ = graph()
    graph_ids = np.array([2, 0, 0, 2, 1, 0, 2], "int32")
    aggregation = factory()
    readout = GraphReadout(aggregation)
    outputs = numpy(readout(features, graph_ids, num_graphs=4))
    assert readout.aggregation_layer() is aggregation
    expected = per_set(aggregation, features, graph_ids, 4)
    assert (
        outputs.shape
        == expected.shape
        == readout.compute_output_shape((7, 3), (7,), (4,))
    )
    np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("factory", params())
def test_aggregation_conv(factory):
    features, source, target = graph()
    aggregation = factory()
    layer = AggregationConv(4, aggregation=aggregation, message_units=3)
    outputs = numpy(layer(features, source, target))
    assert outputs.shape == (7, 4)
    messages = dense(
        layer._message_dense,
        np.concatenate([features[target], features[source]], -1),
    )
    expected = per_set(aggregation, messages, target, 7)
    aggregates = numpy(layer.aggregate_neighbours(features, source, target))
    np.testing.assert_allclose(aggregates, expected, rtol=1e-4, atol=1e-5)
    update = dense(
        layer._update_dense, np.concatenate([features, expected], -1)
    )
    np.testing.assert_allclose(outputs, update, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("factory", params())
def test_gin(factory):
    features, source, target = graph()
    aggregation = factory()
    layer = GINConv(4, aggregation=aggregation, epsilon=0.5)
    outputs = numpy(layer(features, source, target))
    messages = features[source]
    if layer.squash_messages:
        messages = sigmoid(messages)
    neighbours = per_set(aggregation, messages, target, 7)
    if layer._neighbour_projection is not None:
        neighbours = dense(layer._neighbour_projection, neighbours)
    hidden = 1.5 * features + neighbours
    for sublayer in layer._mlp:
        hidden = dense(sublayer, hidden)
    np.testing.assert_allclose(outputs, hidden, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("factory", params())
def test_gcn(factory):
    features, source, target = graph()
    aggregation = factory()
    layer = GCNConv(4, aggregation=aggregation, activation="relu")
    outputs = numpy(layer(features, source, target))
    loops = np.arange(7)
    source, target = (
        np.concatenate([source, loops]),
        np.concatenate([target, loops]),
    )
    degrees = np.bincount(target, minlength=7).astype("float64")
    roots = 1 / np.sqrt(degrees)
    messages = (roots[source] * roots[target])[:, None] * features[source]
    if layer.squash_messages:
        messages = sigmoid(messages)
    propagated = per_set(aggregation, messages.astype("float32"), target, 7)
    expected = dense(layer._dense_layer, propagated)
    np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("concat_heads", [True, False])
@pytest.mark.parametrize("factory", params())
def test_gat(factory, concat_heads):
    features, source, target = graph()
    aggregation = factory()
    layer = GATConv(
        2,
        aggregation=aggregation,
        num_heads=2,
        concat_heads=concat_heads,
        bias_initializer="ones",
    )
    outputs = numpy(layer(features, source, target))
    loops = np.arange(7)
    source, target = (
        np.concatenate([source, loops]),
        np.concatenate([target, loops]),
    )
    # (nodes, heads, units)
    projected = dense(layer._projection, features).reshape(7, 2, 2)
    scores = (projected * numpy(layer.attention_target)).sum(-1)[target] + (
        projected * numpy(layer.attention_source)
    ).sum(-1)[source]
    scores = np.where(scores > 0, scores, 0.2 * scores)
    weights = np.exp(scores)
    totals = np.zeros((7, 2))
    np.add.at(totals, target, weights)
    weights = weights / totals[target]
    messages = weights[:, :, None] * projected[source]
    if layer.squash_messages:
        messages = sigmoid(messages)
    heads = np.stack(
        [
            per_set(aggregation, messages[:, head].astype("float32"), target, 7)
            for head in range(2)
        ],
        axis=1,
    )
    if concat_heads:
        expected = heads.reshape(7, -1)
    else:
        expected = heads.mean(axis=1)
    expected = expected + numpy(layer.bias)
    assert outputs.shape == expected.shape
    np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda aggregation: AggregationConv(3, aggregation=aggregation),
        lambda aggregation: GINConv(3, aggregation=aggregation),
        lambda aggregation: GCNConv(3, aggregation=aggregation),
        lambda aggregation: GATConv(2, aggregation=aggregation, num_heads=2),
    ],
    ids=["aggregation_conv", "gin", "gcn", "gat"],
)
def test_instances_save_and_load_in_a_model(make_layer, tmp_path):
    features, source, target = graph()
    inputs = [
        keras.Input((3,), name="node_features"),
        keras.Input((), dtype="int32", name="edge_source"),
        keras.Input((), dtype="int32", name="edge_target"),
    ]
    aggregation = keras_laf.MultiAggregation(
        [
            keras_laf.LAF(2, preset="closed_forms"),
            keras_laf.SoftmaxAggregation(learn=True),
        ]
    )
    convolution = make_layer(aggregation)
    model = keras.Model(inputs, convolution(*inputs))
    # Weights away from their initial values, so loading must restore them.
    for weight in model.weights:
        weight.assign(weight + 0.1)
    data = [features, source, target]
    expected = numpy(model(data))
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(numpy(reloaded(data)), expected, rtol=1e-6)
    config = convolution.get_config()
    assert config["aggregation"]["class_name"] == "MultiAggregation"
    assert config["aggregation_kwargs"] == {}


def test_names_resolve_to_the_same_layers_as_instances():
    features, source, target = graph()
    by_name = GraphReadout(["mean", "max"])
    by_layer = GraphReadout(keras_laf.FixedAggregation(["mean", "max"]))
    graph_ids = np.array([0, 0, 0, 1, 1, 2, 2], "int32")
    np.testing.assert_allclose(
        numpy(by_name(features, graph_ids)),
        numpy(by_layer(features, graph_ids)),
        rtol=1e-6,
    )
    arguments = {"units": 4, "preset": "closed_forms"}
    laf = AggregationConv(3, aggregation_kwargs=arguments)
    assert isinstance(laf.aggregation_layer(), keras_laf.LAF)
    layer = laf.aggregation_layer()
    assert (layer.units, layer.preset) == (4, "closed_forms")
    assert laf.get_config()["aggregation"] == "laf"
    assert laf.get_config()["aggregation_kwargs"] == arguments
    # New in 0.2.0, it takes no former shortcuts.
    with pytest.raises((TypeError, ValueError)):
        AggregationConv(3, laf_units=4, laf_preset="closed_forms")


@pytest.mark.parametrize(
    "make_layer, name",
    [
        (lambda: GraphReadout("laf", laf_units=4), "GraphReadout"),
        (
            lambda: graph_network(
                num_node_features=2, laf_units=4, num_layers=1
            ),
            "graph_network",
        ),
    ],
    ids=["readout", "graph_network"],
)
def test_0_1_0_laf_units_warning_names_the_callers_line(make_layer, name):
    # keras-laf 0.1.0's `laf_units`: the warning points at the line that
    # passed it, the lambda above, in this file.
    with pytest.warns(DeprecationWarning, match=f"`{name}\\(laf_units") as seen:
        make_layer()
    assert {pathlib.Path(w.filename).name for w in seen} == {
        pathlib.Path(__file__).name
    }


@pytest.mark.parametrize(
    "make_layer",
    [
        lambda **kwargs: AggregationConv(3, **kwargs),
        lambda **kwargs: GINConv(3, **kwargs),
        lambda **kwargs: GraphReadout(**kwargs),
    ],
    ids=["aggregation_conv", "gin", "readout"],
)
def test_bad_aggregations(make_layer):
    with pytest.raises(ValueError, match="own arguments"):
        make_layer(
            aggregation=keras_laf.LAF(2), aggregation_kwargs={"units": 4}
        )
    with pytest.raises(ValueError, match="of type Dense"):
        make_layer(aggregation=keras.layers.Dense(2))
    with pytest.raises(ValueError, match="flatten=True"):
        make_layer(aggregation=keras_laf.LAF(2, flatten=False))
    with pytest.raises(ValueError, match="medians"):
        make_layer(aggregation="medians")


def test_gmt_readout_in_a_compiled_fit_and_predict():
    """A graph network with a GMT readout fits an epoch of padded
    `GraphBatches` (a jitted step on JAX) and its jitted readout gives the
    GMT of each graph's padded nodes. Node 0 of each graph has no
    incoming edge; the batches' padding graphs are empty or hold the
    padding nodes."""
    rng = np.random.default_rng(0)
    features, edges = [], []
    for num_nodes in (3, 5, 2, 6, 4, 1):
        features.append(rng.normal(size=(num_nodes, 2)).astype("float32"))
        targets = rng.integers(1, max(num_nodes, 2), size=num_nodes)
        sources = rng.integers(0, num_nodes, size=num_nodes)
        edges.append(np.stack([sources, targets], 1)[targets < num_nodes])
    node_labels = [rng.normal(size=(len(x), 1)) for x in features]
    labels = rng.normal(size=(6, 1)).astype("float32")
    model = keras_laf.models.graph_network(
        num_node_outputs=1,
        num_graph_outputs=1,
        aggregation="sum",
        readout_aggregation="gmt",
        readout_aggregation_kwargs={"dim": 4, "num_seeds": 2},
        hidden_units=4,
        num_layers=1,
        num_readout_layers=1,
    )
    model.compile("adam", loss="mse")
    batches = GraphBatches(
        features, edges, node_labels, labels, batch_size=4, smallest=8
    )
    losses = model.fit(batches, epochs=1, verbose=0).history["loss"]
    assert np.all(np.isfinite(losses))
    readout = model.get_layer("graph_readout")
    assert isinstance(
        readout.aggregation_layer(), keras_laf.GraphMultisetTransformer
    )
    states = readout.input[0]
    probe = keras.Model(model.inputs, [states, readout.output])
    inputs = batches[1][0]
    # (num_nodes, hidden_units), (num_graphs, dim): jitted on JAX.
    node_states, outputs = probe.predict_on_batch(inputs)
    num_graphs = len(inputs["nodes_per_graph"])
    assert outputs.shape == (num_graphs, 4)
    expected = per_set(
        readout.aggregation_layer(),
        np.asarray(node_states),
        inputs["node_graph_ids"],
        num_graphs,
    )
    np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)

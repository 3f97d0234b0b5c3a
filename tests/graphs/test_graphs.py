"""Tests of AggregationConv, GraphReadout, PNA's scalers in them and the
graph-network builder."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_laf
from keras_laf import LAF
from keras_laf import DegreeScalerAggregation
from keras_laf import aggregations
from keras_laf import degree_histogram
from keras_laf.datasets import disjoint_union
from keras_laf.graphs.aggregation_conv import AggregationConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.readout import GraphReadout
from keras_laf.models.graph_network import graph_network

ALL_SCALERS = ("identity", "amplification", "attenuation")
AGGREGATIONS = [
    "laf",
    "sum",
    "mean",
    "max",
    "min",
    "count",
    "std",
    "var",
    "skewness",
    "kurtosis",
    "pna",
    "deepsets",
    ["mean", "max", "min", "std"],
]


def undirected(pairs):
    """Both directions of each undirected edge, `(num_edges, 2)`."""
    pairs = np.array(pairs, "int32").reshape(-1, 2)
    return np.concatenate([pairs, pairs[:, ::-1]])


def hand_made_batch(seed=0, num_features=2):
    """A path of 3, a star of 4, a single node and 2 nodes without edges."""
    rng = np.random.default_rng(seed)
    edges = [
        undirected([[0, 1], [1, 2]]),
        undirected([[0, 1], [0, 2], [0, 3]]),
        np.zeros((0, 2), "int32"),
        np.zeros((0, 2), "int32"),
    ]
    sizes = [3, 4, 1, 2]
    features = [
        rng.uniform(size=(size, num_features)).astype("float32")
        for size in sizes
    ]
    return disjoint_union(features, edges)


def scaled(aggregation, laf_units=3, delta=1.5):
    """`aggregation` by name inside PNA's three log scalers."""
    return DegreeScalerAggregation(
        aggregations.get(
            aggregation,
            **({"units": laf_units} if aggregation == "laf" else {}),
        ),
        ALL_SCALERS,
        average_log_degree=delta,
    )


def reference_aggregates(layer, inputs):
    """Applies the scaled aggregation's aggregator to each node's message
    set alone, and the scalers by hand."""
    scaler = layer.aggregation_layer()
    features = inputs["node_features"]
    source, target = inputs["edge_source"], inputs["edge_target"]
    messages = keras.ops.convert_to_numpy(
        layer._message_dense(
            np.concatenate([features[target], features[source]], -1)
        )
    )
    delta = scaler.average_log_degree
    rows = []
    for node in range(len(features)):
        neighbours = messages[target == node]
        if len(neighbours):
            aggregates = scaler.aggregation_layer()(neighbours[None])
        else:
            # The empty set: one masked-out element.
            aggregates = scaler.aggregation_layer()(
                np.zeros((1, 1, messages.shape[1]), "float32"),
                mask=np.zeros((1, 1), bool),
            )
        aggregates = keras.ops.convert_to_numpy(aggregates)[0]
        log_degree = np.log(max(len(neighbours), 1) + 1.0)
        factors = {
            "identity": 1.0,
            "amplification": log_degree / delta,
            "attenuation": delta / log_degree,
        }
        rows.append(
            np.concatenate([aggregates * factors[s] for s in scaler.scalers])
        )
    return np.stack(rows)


@pytest.mark.parametrize("aggregation", AGGREGATIONS, ids=str)
def test_neighbour_aggregation_equals_aggregator_on_each_set(aggregation):
    inputs = hand_made_batch()
    layer = AggregationConv(4, aggregation=scaled(aggregation))
    args = (inputs["node_features"], inputs["edge_source"])
    outputs = layer(*args, inputs["edge_target"])
    assert outputs.shape == (10, 4)
    aggregates = keras.ops.convert_to_numpy(
        layer.aggregate_neighbours(*args, inputs["edge_target"])
    )
    expected = reference_aggregates(layer, inputs)
    assert aggregates.shape == expected.shape
    np.testing.assert_allclose(aggregates, expected, rtol=1e-5, atol=1e-5)
    assert np.all(np.isfinite(keras.ops.convert_to_numpy(outputs)))


def test_sum_mean_max_match_numpy():
    inputs = hand_made_batch()
    features = inputs["node_features"]
    source, target = inputs["edge_source"], inputs["edge_target"]
    layer = AggregationConv(2, aggregation=["sum", "mean", "max"])
    layer(features, source, target)
    # Messages = the sender's features.
    layer._message_dense.set_weights(
        [np.concatenate([np.zeros((2, 2)), np.eye(2)]), np.zeros(2)]
    )
    aggregates = keras.ops.convert_to_numpy(
        layer.aggregate_neighbours(features, source, target)
    ).reshape(-1, 2, 3)
    for node in range(len(features)):
        neighbours = features[source[target == node]]
        if len(neighbours) == 0:
            np.testing.assert_array_equal(aggregates[node], 0.0)
            continue
        expected = np.stack(
            [neighbours.sum(0), neighbours.mean(0), neighbours.max(0)], -1
        )
        np.testing.assert_allclose(aggregates[node], expected, rtol=1e-6)


def test_update_and_edge_features():
    inputs = hand_made_batch()
    num_edges = len(inputs["edge_source"])
    edge_features = np.random.default_rng(1).uniform(size=(num_edges, 3))
    layer = AggregationConv(5, aggregation="sum", message_units=2)
    outputs = layer(
        inputs["node_features"],
        inputs["edge_source"],
        inputs["edge_target"],
        edge_features.astype("float32"),
    )
    assert outputs.shape == (10, 5)
    # Message inputs: 2 + 2 node features and 3 edge features.
    assert layer._message_dense.kernel.shape == (7, 2)
    assert layer._update_dense.kernel.shape == (2 + 2, 5)


def model_inputs(inputs):
    return {key: inputs[key] for key in sorted(inputs)}


def permuted(inputs, permutation):
    """The same graphs with node i renamed to permutation[i]."""
    inverse = np.argsort(permutation)
    return {
        "node_features": inputs["node_features"][inverse],
        "edge_source": permutation[inputs["edge_source"]].astype("int32"),
        "edge_target": permutation[inputs["edge_target"]].astype("int32"),
        "node_graph_ids": inputs["node_graph_ids"][inverse],
        "nodes_per_graph": inputs["nodes_per_graph"],
    }


@pytest.mark.parametrize("aggregation", ["laf", "pna"])
def test_relabelling_permutes_node_outputs_only(aggregation):
    inputs = hand_made_batch()
    model = graph_network(
        aggregation=aggregation,
        aggregation_kwargs={"units": 3} if aggregation == "laf" else {},
        hidden_units=4,
        num_layers=2,
        scalers=ALL_SCALERS,
        degree_histogram=degree_histogram(inputs["edge_target"], 10),
    )
    permutation = np.random.default_rng(3).permutation(10)
    outputs = model(inputs)
    relabelled = model(permuted(inputs, permutation))
    node_outputs = keras.ops.convert_to_numpy(outputs["node_outputs"])
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(relabelled["node_outputs"])[permutation],
        node_outputs,
        rtol=1e-4,
        atol=1e-5,
    )
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(relabelled["graph_outputs"]),
        keras.ops.convert_to_numpy(outputs["graph_outputs"]),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize("aggregation", ["laf", "sum", "pna"])
def test_empty_edges_isolated_nodes_and_single_node_graphs(aggregation):
    layer = AggregationConv(3, aggregation=scaled(aggregation, laf_units=16))
    readout = GraphReadout(aggregation)
    no_edges = np.zeros((0,), "int32")
    for num_nodes in (1, 4):
        features = np.random.default_rng(0).uniform(size=(num_nodes, 2))
        features = features.astype("float32")
        outputs = layer(features, no_edges, no_edges)
        assert outputs.shape == (num_nodes, 3)
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(outputs)))
        # Squashed into [0, 1], which a LAF readout needs.
        squashed = keras.ops.sigmoid(outputs)
        graphs = readout(squashed, np.zeros(num_nodes, "int32"))
        assert graphs.shape[0] == 1
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(graphs)))
    model = graph_network(
        aggregation=aggregation,
        aggregation_kwargs={"units": 2} if aggregation == "laf" else {},
        num_layers=2,
    )
    outputs = model(
        {
            "node_features": np.full((1, 2), 0.5, "float32"),
            "edge_source": no_edges,
            "edge_target": no_edges,
            "node_graph_ids": np.zeros(1, "int32"),
            "nodes_per_graph": np.ones(1, "int32"),
        }
    )
    assert outputs["node_outputs"].shape == (1, 3)
    assert outputs["graph_outputs"].shape == (1, 3)
    for value in outputs.values():
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(value)))


def test_malformed_edge_indices_raise_value_error():
    inputs = hand_made_batch()
    features = inputs["node_features"]
    source, target = inputs["edge_source"], inputs["edge_target"]
    layer = AggregationConv(2, aggregation="sum")
    layer(features, source, target)
    bad_values = [
        (source.astype("float32"), target, "dtype"),
        (source, target.astype("float64"), "dtype"),
        (source[:, None], target[:, None], "rank"),
        (source, target[:-1], "same length"),
        (np.where(source == 0, 10, source), target, r"\[0, 10\)"),
        (source, np.where(target == 0, -1, target), r"\[0, 10\)"),
    ]
    for bad_source, bad_target, match in bad_values:
        with pytest.raises(ValueError, match=match):
            layer(features, bad_source, bad_target)
    # Statically, while a functional model is built.
    with pytest.raises(ValueError, match="dtype"):
        layer(
            keras.Input(shape=(2,)),
            keras.Input(shape=(), dtype="float32"),
            keras.Input(shape=(), dtype="int32"),
        )
    with pytest.raises(ValueError, match="node_graph_ids"):
        GraphReadout()(keras.Input(shape=(2,)), keras.Input(shape=()))


def test_out_of_range_indices_in_traced_calls():
    inputs = hand_made_batch()
    layer = AggregationConv(2, aggregation="sum")
    call = tf.function(layer)
    bad_source = np.where(inputs["edge_source"] == 0, 99, inputs["edge_source"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="edge_source"):
        call(inputs["node_features"], bad_source, inputs["edge_target"])


def test_graph_readout_matches_numpy():
    rng = np.random.default_rng(0)
    features = rng.uniform(size=(7, 2)).astype("float32")
    graph_ids = np.array([2, 0, 0, 2, 1, 0, 2], "int32")  # unsorted
    readout = GraphReadout(["sum", "mean", "max"])
    outputs = keras.ops.convert_to_numpy(readout(features, graph_ids))
    outputs = outputs.reshape(3, 2, 3)
    for graph in range(3):
        members = features[graph_ids == graph]
        expected = np.stack(
            [members.sum(0), members.mean(0), members.max(0)], -1
        )
        np.testing.assert_allclose(outputs[graph], expected, rtol=1e-6)
    # A trailing graph without nodes, by num_graphs.
    padded = keras.ops.convert_to_numpy(
        readout(features, graph_ids, num_graphs=4)
    )
    np.testing.assert_array_equal(padded[3], 0.0)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        readout(features, graph_ids, num_graphs=2)
    with pytest.raises(ValueError, match="dtype"):
        readout(features, graph_ids.astype("float32"))


def test_graph_readout_nodes_per_graph_in_traced_calls_and_shapes():
    rng = np.random.default_rng(0)
    features = rng.uniform(size=(5, 2)).astype("float32")
    graph_ids = np.array([1, 0, 1, 1, 0], "int32")
    nodes_per_graph = np.array([2, 3, 0], "int32")
    readout = GraphReadout(["sum", "max"])
    expected = keras.ops.convert_to_numpy(
        readout(features, graph_ids, num_graphs=3)
    )
    # Traced with unknown numbers of nodes and graphs, as in `fit`.
    traced = tf.function(
        lambda f, i, n: readout(f, i, nodes_per_graph=n),
        input_signature=[
            tf.TensorSpec((None, 2), "float32"),
            tf.TensorSpec((None,), "int32"),
            tf.TensorSpec((None,), "int32"),
        ],
    )
    np.testing.assert_allclose(
        traced(features, graph_ids, nodes_per_graph), expected, rtol=1e-6
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="node_graph_ids"):
        traced(features, graph_ids, nodes_per_graph[:1])
    # The number of graphs is known where the length of nodes_per_graph is.
    symbolic = readout(
        keras.Input(batch_shape=(5, 2)),
        keras.Input(batch_shape=(5,), dtype="int32"),
        nodes_per_graph=keras.Input(batch_shape=(3,), dtype="int32"),
    )
    assert tuple(symbolic.shape) == (3, 4)
    assert readout.compute_output_shape((5, 2), (5,), (3,)) == (3, 4)


def test_graph_readout_bad_nodes_per_graph():
    features = np.ones((3, 2), "float32")
    graph_ids = np.array([0, 0, 1], "int32")
    readout = GraphReadout()
    with pytest.raises(ValueError, match=r"not both.*num_graphs=2"):
        readout(
            features,
            graph_ids,
            num_graphs=2,
            nodes_per_graph=np.array([2, 1], "int32"),
        )
    with pytest.raises(ValueError, match="nodes_per_graph.dtype=float32"):
        readout(
            features,
            graph_ids,
            nodes_per_graph=np.array([2.0, 1.0], "float32"),
        )
    with pytest.raises(ValueError, match=r"nodes_per_graph.shape=\(2, 1\)"):
        readout(
            features, graph_ids, nodes_per_graph=np.array([[2], [1]], "int32")
        )
    # Too short for the ids.
    with pytest.raises(ValueError, match=r"node_graph_ids.*\[0, 1\)"):
        readout(features, graph_ids, nodes_per_graph=np.array([3], "int32"))


def test_laf_readout_matches_laf_on_each_graph():
    rng = np.random.default_rng(0)
    features = rng.uniform(size=(5, 2)).astype("float32")
    graph_ids = np.array([0, 1, 0, 1, 1], "int32")
    readout = GraphReadout("laf", aggregation_kwargs={"units": 3})
    outputs = keras.ops.convert_to_numpy(readout(features, graph_ids))
    for graph in range(2):
        expected = readout.aggregation_layer()(
            features[graph_ids == graph][None]
        )
        np.testing.assert_allclose(
            outputs[graph], keras.ops.convert_to_numpy(expected)[0], rtol=1e-5
        )


def test_bad_arguments():
    with pytest.raises(ValueError, match="units=0"):
        AggregationConv(0)
    with pytest.raises(ValueError, match="medians"):
        AggregationConv(2, aggregation="medians")
    with pytest.raises(ValueError, match="units=0"):
        GraphReadout("laf", aggregation_kwargs={"units": 0})
    with pytest.raises(ValueError, match="aggregation_kwargs=3"):
        GraphReadout("laf", aggregation_kwargs=3)
    with pytest.raises(ValueError, match="update"):
        graph_network(update="lstm")
    with pytest.raises(ValueError, match="num_layers"):
        graph_network(num_layers=0)
    with pytest.raises(ValueError, match="convolution='gnn'"):
        graph_network(convolution="gnn")
    with pytest.raises(ValueError, match="num_heads=0"):
        graph_network(convolution="gat", num_heads=0)
    # The scalers need the statistics of the training graphs.
    with pytest.raises(ValueError, match="keras_laf.degree_histogram"):
        graph_network(scalers=ALL_SCALERS)


def test_config_round_trip():
    layer = AggregationConv(
        4,
        aggregation=DegreeScalerAggregation(
            ["mean", "max"], ALL_SCALERS, average_log_degree=2.0
        ),
        message_units=3,
        name="layer",
    )
    config = layer.get_config()
    assert AggregationConv.from_config(config).get_config() == config
    readout = GraphReadout(
        "laf", aggregation_kwargs={"units": 5}, name="readout"
    )
    config = readout.get_config()
    assert GraphReadout.from_config(config).get_config() == config


def test_laf_preset_reaches_the_layers():
    layer = AggregationConv(
        4, aggregation_kwargs={"units": 2, "preset": "closed_forms"}
    )
    readout = GraphReadout(
        "laf", aggregation_kwargs={"units": 2, "preset": "paper"}
    )
    reloaded = AggregationConv.from_config(layer.get_config())
    assert reloaded.aggregation_layer().preset == "closed_forms"
    reloaded = GraphReadout.from_config(readout.get_config())
    assert reloaded.aggregation_layer().preset == "paper"
    # The readout is the layers' aggregation, with their arguments.
    model = graph_network(
        aggregation_kwargs={"units": 2, "preset": "closed_forms"},
        hidden_units=4,
        num_layers=1,
    )
    laf_layers = [
        sublayer
        for layer in model.layers
        for sublayer in layer._flatten_layers()
        if isinstance(sublayer, LAF)
    ]
    assert len(laf_layers) == 2
    assert {laf.preset for laf in laf_layers} == {"closed_forms"}
    assert {laf.units for laf in laf_layers} == {2}
    # "laf" is the same layer in a graph layer as in `get`: 9 units.
    assert AggregationConv(4).aggregation_layer().units == 9
    with pytest.raises(ValueError, match="preset='median'"):
        AggregationConv(4, aggregation_kwargs={"preset": "median"})
    # `laf_preset` was new in 0.2.0 and went before its release.
    with pytest.raises((TypeError, ValueError)):
        GraphReadout("laf", laf_preset="closed_forms")


def test_configs_saved_by_0_1_0_load():
    # A graph layer's config of keras-laf 0.1.0: LAF's units were 16 by
    # default and stored as `laf_units`.
    config = AggregationConv(4, name="layer").get_config()
    del config["aggregation_kwargs"]
    config.update(laf_units=16, laf_preset="closed_forms")
    layer = AggregationConv.from_config(config)
    assert layer.aggregation_layer().units == 16
    assert layer.aggregation_layer().preset == "closed_forms"


def test_mixed_precision():
    inputs = hand_made_batch()
    for aggregation in ("laf", "pna"):
        layer = AggregationConv(
            3,
            aggregation=DegreeScalerAggregation(
                aggregations.get(
                    aggregation,
                    dtype="mixed_float16",
                    **({"units": 16} if aggregation == "laf" else {}),
                ),
                ALL_SCALERS,
                average_log_degree=1.5,
                dtype="mixed_float16",
            ),
            dtype="mixed_float16",
        )
        outputs = layer(
            inputs["node_features"],
            inputs["edge_source"],
            inputs["edge_target"],
        )
        assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
        if aggregation != "laf":
            # LAF's output is finite in float16, but its freshly initialised
            # units can reach the float16 range, which the update may
            # overflow.
            assert np.all(np.isfinite(keras.ops.convert_to_numpy(outputs)))


def tiny_dataset():
    """Two disjoint-union batches of different numbers of nodes and graphs."""
    triangle_and_single = disjoint_union(
        [np.full((3, 2), 0.3, "float32"), np.full((1, 2), 0.7, "float32")],
        [undirected([[0, 1], [1, 2], [2, 0]]), np.zeros((0, 2), "int32")],
    )
    rng = np.random.default_rng(0)
    elements = []
    for inputs in (hand_made_batch(), triangle_and_single):
        num_nodes = len(inputs["node_features"])
        num_graphs = len(inputs["nodes_per_graph"])
        targets = {
            "node_outputs": rng.uniform(size=(num_nodes, 3)).astype("float32"),
            "graph_outputs": rng.uniform(size=(num_graphs, 3)).astype(
                "float32"
            ),
        }
        elements.append((inputs, targets))

    def generator():
        yield from elements

    signature = (
        {
            "node_features": tf.TensorSpec((None, 2), "float32"),
            "edge_source": tf.TensorSpec((None,), "int32"),
            "edge_target": tf.TensorSpec((None,), "int32"),
            "node_graph_ids": tf.TensorSpec((None,), "int32"),
            "nodes_per_graph": tf.TensorSpec((None,), "int32"),
        },
        {
            "node_outputs": tf.TensorSpec((None, 3), "float32"),
            "graph_outputs": tf.TensorSpec((None, 3), "float32"),
        },
    )
    dataset = tf.data.Dataset.from_generator(
        generator, output_signature=signature
    )
    return dataset.apply(tf.data.experimental.assert_cardinality(2))


@pytest.mark.slow
def test_builder_names_and_fit():
    model = graph_network(
        aggregation="laf",
        aggregation_kwargs={"units": 2},
        hidden_units=4,
        num_layers=2,
        scalers=ALL_SCALERS,
        average_log_degree=1.2,
        dropout=0.1,
    )
    assert model.name == "graph_network"
    assert all(
        not layer.name.startswith(("dense", "add", "gru_cell"))
        for layer in model.layers
    )
    model.compile("adam", loss="mse")
    # Batches of 10 nodes, 10 edges, 4 graphs and 4 nodes, 6 edges, 2
    # graphs: Keras takes leading dimensions that differ and change.
    history = model.fit(tiny_dataset(), epochs=1, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("update", ["residual", "none"])
def test_builder_updates(update):
    model = graph_network(
        aggregation="sum", hidden_units=4, num_layers=2, update=update
    )
    outputs = model(hand_made_batch())
    assert outputs["node_outputs"].shape == (10, 3)
    assert outputs["graph_outputs"].shape == (4, 3)
    assert not any(layer.name == "gru" for layer in model.layers)


def test_save_and_reload_without_custom_objects(tmp_path):
    inputs = hand_made_batch()
    model = graph_network(
        aggregation="laf",
        aggregation_kwargs={"units": 2},
        hidden_units=4,
        num_layers=2,
        scalers=ALL_SCALERS,
        degree_histogram=degree_histogram(inputs["edge_target"], 10),
        readout_aggregation=["mean", "max"],
    )
    expected = model(inputs)
    path = os.path.join(tmp_path, "graph_network.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    outputs = reloaded(inputs)
    for key in ("node_outputs", "graph_outputs"):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(outputs[key]),
            keras.ops.convert_to_numpy(expected[key]),
            rtol=1e-6,
        )


@pytest.mark.parametrize("convolution", ["gin", "gcn", "gat"])
def test_builder_convolutions_save_and_reload(convolution, tmp_path):
    model = graph_network(
        aggregation="sum",
        hidden_units=4,
        num_layers=2,
        convolution=convolution,
        num_heads=2,
    )
    names = [layer.name for layer in model.layers]
    assert f"{convolution}_2" in names
    assert not any(name.startswith("message_passing") for name in names)
    inputs = hand_made_batch()
    expected = model(inputs)
    assert expected["node_outputs"].shape == (10, 3)
    assert expected["graph_outputs"].shape == (4, 3)
    path = os.path.join(tmp_path, f"{convolution}.keras")
    model.save(path)
    outputs = keras.models.load_model(path)(inputs)
    for key in ("node_outputs", "graph_outputs"):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(outputs[key]),
            keras.ops.convert_to_numpy(expected[key]),
            rtol=1e-6,
        )


def test_graph_network_builds_from_convolution_classes_and_layers():
    by_class = graph_network(
        aggregation="sum", convolution=GINConv, hidden_units=4, num_layers=2
    )
    assert isinstance(by_class.get_layer("ginconv_1"), GINConv)
    template = GCNConv(4, activation="tanh", name="template")
    by_layer = graph_network(
        aggregation="sum", convolution=template, hidden_units=4, num_layers=2
    )
    copies = [by_layer.get_layer(f"template_{index}") for index in (1, 2)]
    assert all(isinstance(layer, GCNConv) for layer in copies)
    assert copies[0] is not copies[1] and copies[0] is not template
    with pytest.raises(ValueError, match="GraphConvolution"):
        graph_network(convolution=keras.layers.Dense)


def test_graph_network_reads_out_with_the_aggregation_inside_the_scalers():
    scaled = keras_laf.DegreeScalerAggregation(
        "mean", ["identity", "amplification"], average_log_degree=1.0
    )
    model = graph_network(aggregation=scaled, hidden_units=4, num_layers=1)
    readout = model.get_layer("graph_readout").aggregation_layer()
    assert type(readout) is keras_laf.FixedAggregation
    assert readout.aggregators == ["mean"]
    layer = model.get_layer("message_passing_1").aggregation_layer()
    assert type(layer) is keras_laf.DegreeScalerAggregation


def test_the_readout_takes_its_own_arguments():
    model = graph_network(
        aggregation="sum",
        aggregation_kwargs={},
        readout_aggregation="laf",
        readout_aggregation_kwargs={"units": 3},
        hidden_units=4,
        num_layers=1,
    )
    assert model.get_layer("graph_readout").aggregation_layer().units == 3
    # The paper's 100 units by default, the layers' arguments not applied.
    model = graph_network(
        aggregation="laf",
        aggregation_kwargs={"units": 2},
        readout_aggregation=["laf", "max"],
        hidden_units=4,
        num_layers=1,
    )
    readout = model.get_layer("graph_readout").aggregation_layer()
    assert readout.members[0].units == 100
    layer = model.get_layer("message_passing_1").aggregation_layer()
    assert layer.units == 2

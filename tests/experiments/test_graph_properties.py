"""Tests of the graph-properties benchmark generator and its training."""

import sys

import keras
import numpy as np
import pytest

from keras_laf.datasets import adjacency_to_edges
from keras_laf.datasets import disjoint_union
from laf_experiments.data import graph_properties
from laf_experiments.data.graph_properties import GRAPH_TYPES
from laf_experiments.data.graph_properties import graph_property_labels
from laf_experiments.data.graph_properties import make_graph_property_splits
from laf_experiments.data.graph_properties import make_property_graphs
from laf_experiments.data.graph_properties import node_property_labels
from laf_experiments.data.graph_properties import random_graph

nx = pytest.importorskip("networkx")


def adjacency_of(num_nodes, pairs):
    adjacency = np.zeros((num_nodes, num_nodes), "int32")
    for u, v in pairs:
        adjacency[u, v] = adjacency[v, u] = 1
    return adjacency


def test_labels_of_a_path():
    # 0 - 1 - 2 - 3, source 0.
    adjacency = adjacency_of(4, [(0, 1), (1, 2), (2, 3)])
    values = np.array([0.1, 0.4, 0.2, 0.8])
    labels = node_property_labels(adjacency, values, source=0)
    np.testing.assert_array_equal(labels[:, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(labels[:, 1], [3, 2, 2, 3])
    laplacian_features = [0.1 - 0.4, 0.8 - 0.1 - 0.2, 0.4 - 0.4 - 0.8, 0.6]
    np.testing.assert_allclose(labels[:, 2], laplacian_features, atol=1e-6)
    np.testing.assert_allclose(
        graph_property_labels(adjacency),
        [1.0, 3.0, 2 * np.cos(np.pi / 5)],
        rtol=1e-6,
    )


def test_labels_of_a_disconnected_graph():
    # A triangle 0-1-2 and an edge 3-4; source 4.
    adjacency = adjacency_of(5, [(0, 1), (1, 2), (2, 0), (3, 4)])
    labels = node_property_labels(adjacency, np.zeros(5), source=4)
    # Unreachable nodes get 0, as in Corso et al.
    np.testing.assert_array_equal(labels[:, 0], [0, 0, 0, 1, 0])
    np.testing.assert_array_equal(labels[:, 1], [1, 1, 1, 1, 1])
    np.testing.assert_allclose(
        graph_property_labels(adjacency), [0.0, 1.0, 2.0], rtol=1e-6
    )


def test_connected_bipartite_graph_is_connected():
    # Corso et al.'s A^(2^k) test calls this star disconnected.
    adjacency = adjacency_of(4, [(0, 1), (0, 2), (0, 3)])
    assert graph_property_labels(adjacency)[0] == 1.0


def test_labels_match_networkx_and_numpy():
    graphs = make_property_graphs(20, sizes=(5, 9), seed=3)
    for features, edges, node_labels, graph_labels in zip(
        graphs.node_features,
        graphs.edges,
        graphs.node_labels,
        graphs.graph_labels,
    ):
        num_nodes = len(features)
        graph = nx.Graph()
        graph.add_nodes_from(range(num_nodes))
        graph.add_edges_from(edges.tolist())
        source = int(np.argmax(features[:, 0]))
        lengths = nx.single_source_shortest_path_length(graph, source)
        shortest = [lengths.get(node, 0) for node in range(num_nodes)]
        eccentricity = {}
        diameter = 0
        for component in nx.connected_components(graph):
            subgraph = graph.subgraph(component)
            eccentricity.update(nx.eccentricity(subgraph))
            diameter = max(diameter, nx.diameter(subgraph))
        laplacian = nx.laplacian_matrix(graph, range(num_nodes)).toarray()
        np.testing.assert_array_equal(node_labels[:, 0], shortest)
        np.testing.assert_array_equal(
            node_labels[:, 1], [eccentricity[n] for n in range(num_nodes)]
        )
        np.testing.assert_allclose(
            node_labels[:, 2], laplacian @ features[:, 1], atol=1e-5
        )
        adjacency = nx.to_numpy_array(graph, range(num_nodes))
        spectral_radius = np.max(np.abs(np.linalg.eigvals(adjacency)))
        np.testing.assert_allclose(
            graph_labels,
            [float(nx.is_connected(graph)), diameter, spectral_radius],
            rtol=1e-5,
        )


@pytest.mark.parametrize("graph_type", GRAPH_TYPES)
def test_random_graph_of_each_type(graph_type):
    for num_nodes in (2, 7, 12):
        adjacency, drawn = random_graph(num_nodes, graph_type, seed=num_nodes)
        assert drawn == graph_type
        assert adjacency.shape == (num_nodes, num_nodes)
        np.testing.assert_array_equal(adjacency, adjacency.T)
        np.testing.assert_array_equal(np.diag(adjacency), 0)
        assert set(np.unique(adjacency)) <= {0, 1}


def test_structured_types_before_randomisation():
    def edge_count(graph_type, num_nodes):
        adjacency, _ = random_graph(num_nodes, graph_type, randomize=False)
        return adjacency.sum() // 2

    assert edge_count("line", 6) == 5
    assert edge_count("star", 6) == 5
    assert edge_count("grid", 6) == 7  # 2 x 3
    assert edge_count("caveman", 6) == 6  # 2 triangles
    # 3 rungs, 2 rails of 2 edges, 1 edge to the odd node.
    assert edge_count("ladder", 7) == 3 + 2 * 2 + 1
    for graph_type in ("tree", "caterpillar", "lobster"):
        adjacency, _ = random_graph(9, graph_type, randomize=False, seed=0)
        assert adjacency.sum() // 2 == 8
        assert nx.is_connected(nx.from_numpy_array(adjacency))


def test_make_property_graphs():
    graphs = make_property_graphs(12, sizes=(4, 7), seed=0)
    assert len(graphs) == 12
    assert (
        sorted(len(f) for f in graphs.node_features)
        == [4] * 4 + [5] * 4 + [6] * 4
    )
    for features, edges, labels in zip(
        graphs.node_features, graphs.edges, graphs.node_labels
    ):
        assert features.dtype == np.float32 and features.shape[1] == 2
        assert features[:, 0].sum() == 1.0
        assert set(np.unique(features[:, 0])) == {0.0, 1.0}
        assert np.all((features[:, 1] >= 0) & (features[:, 1] < 1))
        # No isolated node; both directions of every edge.
        assert len(np.unique(edges[:, 1])) == len(features)
        assert {tuple(e) for e in edges} == {tuple(e) for e in edges[:, ::-1]}
        assert labels.shape == (len(features), 3)
    assert graphs.graph_labels.shape == (12, 3)
    assert set(graphs.graph_types) <= set(GRAPH_TYPES)
    again = make_property_graphs(12, sizes=(4, 7), seed=0)
    for first, second in zip(graphs.edges, again.edges):
        np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(graphs.graph_labels, again.graph_labels)


def test_splits_are_normalised_by_training_maxima():
    splits = make_graph_property_splits(
        num_train=10,
        num_validation=4,
        num_test=4,
        train_sizes=(5, 8),
        test_sizes=((5, 8), (10, 12)),
        seed=1,
    )
    assert list(splits) == ["train", "validation", "test-(5,8)", "test-(10,12)"]
    node_maxima, graph_maxima = splits["train"].label_maxima()
    np.testing.assert_allclose(node_maxima, 1.0)
    np.testing.assert_allclose(graph_maxima, 1.0)
    train = splits["train"]
    for graphs in splits.values():
        np.testing.assert_array_equal(graphs.node_scale, train.node_scale)
        np.testing.assert_array_equal(graphs.graph_scale, train.graph_scale)
    assert {len(f) for f in splits["test-(10,12)"].node_features} == {10, 11}
    # Unnormalised labels come back with the scales.
    raw = splits["test-(10,12)"].graph_labels * train.graph_scale
    diameters = raw[:, 1]
    np.testing.assert_allclose(diameters, np.round(diameters), atol=1e-5)


def test_disjoint_union():
    inputs, targets = disjoint_union(
        [np.zeros((2, 1)), np.ones((3, 1))],
        [np.array([[0, 1], [1, 0]]), np.array([[2, 0]])],
        [np.zeros((2, 3)), np.ones((3, 3))],
        [[1, 2, 3], [4, 5, 6]],
    )
    np.testing.assert_array_equal(inputs["edge_source"], [0, 1, 4])
    np.testing.assert_array_equal(inputs["edge_target"], [1, 0, 2])
    np.testing.assert_array_equal(inputs["node_graph_ids"], [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(inputs["nodes_per_graph"], [2, 3])
    assert inputs["edge_source"].dtype == np.int32
    assert inputs["nodes_per_graph"].dtype == np.int32
    assert targets["node_outputs"].shape == (5, 3)
    assert targets["graph_outputs"].shape == (2, 3)
    with pytest.raises(ValueError, match="graph 1"):
        disjoint_union([np.zeros((2, 1))] * 2, [np.zeros((0, 2))] + [[[0, 2]]])
    with pytest.raises(ValueError, match="one entry per graph"):
        disjoint_union([np.zeros((2, 1))], [])


@pytest.mark.parametrize(
    "features, edges, labels, match",
    [
        # A PyTorch Geometric edge index (2, num_edges), not transposed.
        (
            [np.zeros((3, 1))],
            [np.array([[0, 1, 2], [1, 2, 0]])],
            {},
            r"graph 0.*\(num_edges, 2\).*edges\[0\]\.shape=\(2, 3\)",
        ),
        (
            [np.zeros((2, 1))] * 2,
            [np.zeros((0, 2)), np.array([[0.0, 1.5]])],
            {},
            r"graph 1 must be integer.*edges\[1\]\.dtype=float64",
        ),
        (
            [np.zeros((2, 1))] * 2,
            [np.array([[0, 1]]), np.array([[-1, 0]])],
            {},
            r"graph 1 must index its 2 nodes.*from -1 to 0",
        ),
        (
            [np.zeros((2, 1)), np.zeros((2, 3))],
            [np.zeros((0, 2))] * 2,
            {},
            r"graph 0: \(2, 1\).*node_features\[1\]\.shape=\(2, 3\)",
        ),
        (
            [np.zeros((2, 1)), np.zeros(3)],
            [np.zeros((0, 2))] * 2,
            {},
            r"node_features\[1\]\.shape=\(3,\)",
        ),
        (
            [np.zeros((2, 1)), np.zeros((3, 1))],
            [np.zeros((0, 2))] * 2,
            {"node_labels": [np.zeros((3, 1)), np.zeros((2, 1))]},
            r"graph 0.*one row per node, 2.*node_labels\[0\]\.shape=\(3, 1\)",
        ),
        (
            [np.zeros((2, 1))] * 2,
            [np.zeros((0, 2))] * 2,
            {"graph_labels": np.zeros((3, 1))},
            r"one row per graph.*3 rows for 2 graphs",
        ),
        ([], [], {}, r"at least one graph.*Received: 0 graphs"),
    ],
    ids=[
        "edge-index-2xE",
        "float-edges",
        "negative-edge",
        "features-differ",
        "features-rank",
        "node-labels",
        "graph-labels",
        "no-graphs",
    ],
)
def test_disjoint_union_names_bad_graphs(features, edges, labels, match):
    # Checked before a model sees the batch: inside `jax.jit` no index
    # can be checked.
    with pytest.raises(ValueError, match=match):
        disjoint_union(features, edges, **labels)


def test_dataset_batches_are_disjoint_unions():
    graphs = make_property_graphs(5, sizes=(4, 7), seed=2)
    batches = list(graphs.to_dataset(batch_size=2))
    assert len(batches) == 3
    inputs = {
        key: np.concatenate([b[0][key] for b in batches])
        for key in ("node_features", "node_graph_ids")
    }
    expected_inputs, expected_targets = graphs.batch()
    np.testing.assert_array_equal(
        inputs["node_features"], expected_inputs["node_features"]
    )
    first_inputs, first_targets = batches[0]
    union, union_targets = graphs.batch([0, 1])
    for key, value in union.items():
        np.testing.assert_array_equal(first_inputs[key].numpy(), value)
    for key, value in union_targets.items():
        np.testing.assert_array_equal(first_targets[key].numpy(), value)
    shuffled = list(graphs.to_dataset(batch_size=5, shuffle=True, seed=0))
    np.testing.assert_allclose(
        np.sort(shuffled[0][1]["graph_outputs"].numpy(), axis=0),
        np.sort(expected_targets["graph_outputs"], axis=0),
    )
    with pytest.raises(ValueError, match="batch_size"):
        graphs.to_dataset(batch_size=0)


def test_property_graphs_with_a_bad_edge_fail_when_made():
    # `to_dataset` skips `disjoint_union`, whose checks would catch this.
    graphs = make_property_graphs(2, sizes=(4, 5), seed=0)
    bad_edges = (graphs.edges[0], np.array([[0, 9]], "int32"))
    with pytest.raises(ValueError, match="graph 1 .*Received indices"):
        graph_properties.PropertyGraphs(
            graphs.node_features,
            bad_edges,
            graphs.node_labels,
            graphs.graph_labels,
            graphs.graph_types,
        )


def test_average_log_degree():
    graphs = make_property_graphs(3, sizes=(4, 6), seed=0)
    degrees = np.concatenate(
        [
            np.bincount(e[:, 0], minlength=len(f))
            for f, e in zip(graphs.node_features, graphs.edges)
        ]
    )
    assert graphs.average_log_degree() == pytest.approx(
        np.mean(np.log1p(degrees))
    )


def test_edges_of_adjacency():
    adjacency = adjacency_of(3, [(0, 2)])
    np.testing.assert_array_equal(
        adjacency_to_edges(adjacency), [[0, 2], [2, 0]]
    )


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_nodes"):
        random_graph(1)
    with pytest.raises(ValueError, match="graph_type"):
        random_graph(5, "wheel")
    with pytest.raises(ValueError, match="sizes"):
        make_property_graphs(2, sizes=(1, 3))
    with pytest.raises(ValueError, match="num_train"):
        make_graph_property_splits(num_train=0)


def test_missing_networkx_gives_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "networkx", None)
    with pytest.raises(ImportError, match="pip install networkx"):
        graph_properties.random_graph(5)


def test_task_errors_match_numpy():
    from keras_laf.models import graph_network
    from laf_experiments.graph_networks import TASKS
    from laf_experiments.graph_networks import task_errors

    graphs = make_graph_property_splits(
        num_train=5,
        num_validation=1,
        num_test=1,
        train_sizes=(4, 7),
        test_sizes=(),
        seed=0,
    )["train"]
    keras.utils.set_random_seed(0)
    model = graph_network(aggregation="mean", hidden_units=4, num_layers=1)
    errors = task_errors(model, graphs, batch_size=2)
    predictions = model.predict(graphs.to_dataset(5), verbose=0)
    squared = [
        *np.mean(
            (predictions["node_outputs"] - np.concatenate(graphs.node_labels))
            ** 2,
            axis=0,
        ),
        *np.mean(
            (predictions["graph_outputs"] - graphs.graph_labels) ** 2, axis=0
        ),
    ]
    for task, expected in zip(TASKS, squared, strict=True):
        assert errors[task] == pytest.approx(expected, rel=1e-5)
    assert set(errors) == set(TASKS)

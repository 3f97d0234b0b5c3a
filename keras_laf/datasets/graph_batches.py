"""Batches of graphs in the disjoint-union form of `keras_laf.graphs`."""

import numpy as np


def adjacency_to_edges(adjacency):
    """Directed edge list `(num_edges, 2)` of rows (source, target).

    Each undirected edge of a symmetric adjacency appears in both
    directions; rows are sorted.
    """
    sources, targets = np.nonzero(np.asarray(adjacency))
    return np.stack([sources, targets], axis=1).astype("int32")


def disjoint_union(node_features, edges, node_labels=None, graph_labels=None):
    """Batches graphs as one graph: the disjoint union of them.

    The form that `keras_laf.MessagePassing` and the model of
    `keras_laf.models.graph_network` take: nodes of all graphs stacked,
    edge indices shifted by the number of nodes of the graphs before, and
    the graph of each node in `node_graph_ids`.

    Args:
        node_features: sequence of arrays `(num_nodes_i, features)`.
        edges: sequence of int arrays `(num_edges_i, 2)`, rows (source,
            target) indexing the nodes of graph i.
        node_labels: optional sequence of arrays `(num_nodes_i, tasks)`.
        graph_labels: optional array-like `(num_graphs, tasks)`.

    Returns:
        `inputs`, a dict of NumPy arrays: `"node_features"` float32
        `(num_nodes, features)`, `"edge_source"` and `"edge_target"` int32
        `(num_edges,)`, `"node_graph_ids"` int32 `(num_nodes,)`. With labels,
        a tuple `(inputs, targets)` with `targets` a dict holding
        `"node_outputs"` float32 `(num_nodes, tasks)` and/or
        `"graph_outputs"` float32 `(num_graphs, tasks)`.

    Example:

    >>> inputs = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     [np.array([[0, 1]]), np.array([[2, 0]])],
    ... )
    >>> inputs["edge_source"], inputs["node_graph_ids"]
    (array([0, 4], dtype=int32), array([0, 0, 1, 1, 1], dtype=int32))
    """
    if len(node_features) != len(edges):
        raise ValueError(
            "`node_features` and `edges` must hold one entry per graph. "
            f"Received: {len(node_features)} and {len(edges)} entries"
        )
    node_counts = np.array([len(f) for f in node_features], dtype="int64")
    offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]])
    shifted = []
    for index, (graph_edges, count, offset) in enumerate(
        zip(edges, node_counts, offsets)
    ):
        graph_edges = np.asarray(graph_edges).reshape(-1, 2)
        if graph_edges.size and (
            graph_edges.min() < 0 or graph_edges.max() >= count
        ):
            raise ValueError(
                f"The edges of graph {index} must index its {count} nodes. "
                f"Received indices from {graph_edges.min()} to "
                f"{graph_edges.max()}"
            )
        shifted.append(graph_edges + offset)
    all_edges = (
        np.concatenate(shifted) if shifted else np.zeros((0, 2))
    ).astype("int32")
    inputs = {
        "node_features": np.concatenate(node_features).astype("float32"),
        "edge_source": all_edges[:, 0],
        "edge_target": all_edges[:, 1],
        "node_graph_ids": np.repeat(
            np.arange(len(node_counts), dtype="int32"), node_counts
        ),
    }
    if node_labels is None and graph_labels is None:
        return inputs
    targets = {}
    if node_labels is not None:
        targets["node_outputs"] = np.concatenate(node_labels).astype("float32")
    if graph_labels is not None:
        targets["graph_outputs"] = np.asarray(graph_labels, "float32")
    return inputs, targets

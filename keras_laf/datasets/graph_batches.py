"""Batches of graphs in the disjoint-union form of `keras_laf.graphs`."""

import numpy as np


def adjacency_to_edges(adjacency):
    """Directed edge list `(num_edges, 2)` of rows (source, target).

    Each undirected edge of a symmetric adjacency appears in both
    directions; rows are sorted.
    """
    sources, targets = np.nonzero(np.asarray(adjacency))
    return np.stack([sources, targets], axis=1).astype("int32")


def _check_node_features(node_features):
    """Each graph's features `(num_nodes_i, features)`, all alike."""
    shapes = [np.shape(features) for features in node_features]
    for index, shape in enumerate(shapes):
        if len(shape) != 2 or shape[1:] != shapes[0][1:]:
            raise ValueError(
                "The node features of each graph must have shape "
                "(num_nodes, features), the same features for every graph "
                f"(graph 0: {shapes[0]}). Received: "
                f"node_features[{index}].shape={shape}"
            )


def _checked_edges(graph_edges, index, num_nodes):
    """The edges of graph `index` as an int array `(num_edges, 2)` of
    indices into its `num_nodes` nodes, or a ValueError naming them."""
    graph_edges = np.asarray(graph_edges)
    if graph_edges.size == 0:
        return np.zeros((0, 2), "int64")
    if graph_edges.ndim != 2 or graph_edges.shape[1] != 2:
        raise ValueError(
            f"The edges of graph {index} must have shape (num_edges, 2), "
            "rows (source, target); transpose an edge index (2, num_edges). "
            f"Received: edges[{index}].shape={graph_edges.shape}"
        )
    if not np.issubdtype(graph_edges.dtype, np.integer):
        raise ValueError(
            f"The edges of graph {index} must be integer node indices. "
            f"Received: edges[{index}].dtype={graph_edges.dtype}"
        )
    if graph_edges.min() < 0 or graph_edges.max() >= num_nodes:
        raise ValueError(
            f"The edges of graph {index} must index its {num_nodes} nodes. "
            f"Received indices from {graph_edges.min()} to "
            f"{graph_edges.max()}"
        )
    return graph_edges


def _check_labels(node_labels, graph_labels, node_counts):
    num_graphs = len(node_counts)
    if node_labels is not None:
        if len(node_labels) != num_graphs:
            raise ValueError(
                "`node_labels` must hold one entry per graph. Received: "
                f"{len(node_labels)} entries for {num_graphs} graphs"
            )
        for index, (labels, count) in enumerate(zip(node_labels, node_counts)):
            if len(labels) != count:
                raise ValueError(
                    f"The node labels of graph {index} must have one row per "
                    f"node, {count}. Received: node_labels[{index}].shape="
                    f"{np.shape(labels)}"
                )
    if graph_labels is not None and len(graph_labels) != num_graphs:
        raise ValueError(
            "`graph_labels` must have one row per graph. Received: "
            f"{len(graph_labels)} rows for {num_graphs} graphs"
        )


def disjoint_union(node_features, edges, node_labels=None, graph_labels=None):
    """Batches graphs as one graph: the disjoint union of them.

    The form that `keras_laf.MessagePassing`, `keras_laf.GraphReadout` and
    the model of `keras_laf.models.graph_network` take: nodes of all
    graphs stacked, edge indices shifted by the number of nodes of the
    graphs before, the graph of each node in `node_graph_ids` and the
    number of nodes of each graph in `nodes_per_graph`, whose length, the
    number of graphs, is a shape (which JAX needs known when it traces).

    Every index is checked here, before the batch reaches a model: inside
    `jax.jit` no value can be checked (JAX's gathers and scatters drop or
    clamp an out-of-range index).

    Args:
        node_features: sequence of arrays `(num_nodes_i, features)`.
        edges: sequence of int arrays `(num_edges_i, 2)`, rows (source,
            target) indexing the nodes of graph i.
        node_labels: optional sequence of arrays `(num_nodes_i, tasks)`.
        graph_labels: optional array-like `(num_graphs, tasks)`.

    Returns:
        `inputs`, a dict of NumPy arrays: `"node_features"` float32
        `(num_nodes, features)`, `"edge_source"` and `"edge_target"` int32
        `(num_edges,)`, `"node_graph_ids"` int32 `(num_nodes,)` and
        `"nodes_per_graph"` int32 `(num_graphs,)`. With labels, a tuple
        `(inputs, targets)` with `targets` a dict holding `"node_outputs"`
        float32 `(num_nodes, tasks)` and/or `"graph_outputs"` float32
        `(num_graphs, tasks)`.

    Raises:
        ValueError: where the graphs' features, edges or labels do not
            match, naming the graph and the received value: features not
            `(num_nodes_i, features)` alike, edges not int `(num_edges_i,
            2)` or outside `[0, num_nodes_i)`, labels not one per node or
            graph.

    Example:

    >>> inputs = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     [np.array([[0, 1]]), np.array([[2, 0]])],
    ... )
    >>> inputs["edge_source"], inputs["node_graph_ids"]
    (array([0, 4], dtype=int32), array([0, 0, 1, 1, 1], dtype=int32))
    >>> inputs["nodes_per_graph"]
    array([2, 3], dtype=int32)
    """
    if len(node_features) != len(edges):
        raise ValueError(
            "`node_features` and `edges` must hold one entry per graph. "
            f"Received: {len(node_features)} and {len(edges)} entries"
        )
    if not len(node_features):
        raise ValueError(
            "`disjoint_union` needs at least one graph (the features' size "
            "comes from them). Received: 0 graphs"
        )
    _check_node_features(node_features)
    node_counts = np.array([len(f) for f in node_features], dtype="int64")
    _check_labels(node_labels, graph_labels, node_counts)
    offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]])
    shifted = [
        _checked_edges(graph_edges, index, count) + offset
        for index, (graph_edges, count, offset) in enumerate(
            zip(edges, node_counts, offsets)
        )
    ]
    # At least one graph: `shifted` is never empty.
    all_edges = np.concatenate(shifted).astype("int32")
    inputs = {
        "node_features": np.concatenate(node_features).astype("float32"),
        "edge_source": all_edges[:, 0],
        "edge_target": all_edges[:, 1],
        "node_graph_ids": np.repeat(
            np.arange(len(node_counts), dtype="int32"), node_counts
        ),
        "nodes_per_graph": node_counts.astype("int32"),
    }
    if node_labels is None and graph_labels is None:
        return inputs
    targets = {}
    if node_labels is not None:
        targets["node_outputs"] = np.concatenate(node_labels).astype("float32")
    if graph_labels is not None:
        targets["graph_outputs"] = np.asarray(graph_labels, "float32")
    return inputs, targets

"""Batches of graphs in the disjoint-union form of `keras_laf.graphs`,
padded to a few sizes where a compiled model would compile for each."""

import warnings

import keras
import numpy as np

from keras_laf.core import backend
from keras_laf.core.validation import check_int
from keras_laf.core.validation import check_non_negative_int
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import describe_received
from keras_laf.core.validation import require_tensorflow


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


def _checked_edges(graph_edges, index, num_nodes, name="edges"):
    """The edges of graph `index` as an int array `(num_edges, 2)` of
    indices into its `num_nodes` nodes, or a ValueError naming them (as
    `name`, the argument they came from)."""
    graph_edges = np.asarray(graph_edges)
    if graph_edges.size == 0:
        return np.zeros((0, 2), "int64")
    if graph_edges.ndim != 2 or graph_edges.shape[1] != 2:
        raise ValueError(
            f"The edges of graph {index} must have shape (num_edges, 2), "
            "rows (source, target); pass an edge index (2, num_edges) as "
            f"`edge_index`. Received: edges[{index}].shape="
            f"{graph_edges.shape}"
        )
    if not np.issubdtype(graph_edges.dtype, np.integer):
        raise ValueError(
            f"The edges of graph {index} must be integer node indices. "
            f"Received: {name}[{index}].dtype={graph_edges.dtype}"
        )
    if graph_edges.min() < 0 or graph_edges.max() >= num_nodes:
        raise ValueError(
            f"The edges of graph {index} must index its {num_nodes} nodes. "
            f"Received indices from {graph_edges.min()} to "
            f"{graph_edges.max()} in {name}[{index}]"
        )
    return graph_edges


def _edge_rows(edges, edge_index):
    """The edges of each graph as rows (source, target): `edges` as
    given, or each graph's `edge_index` `(2, num_edges_i)` transposed (a
    view, not a copy); a ValueError unless exactly one is given or where
    an edge index is not `(2, num_edges_i)`."""
    if (edges is None) == (edge_index is None):
        raise ValueError(
            "Pass the graphs' edges as `edges`, int arrays (num_edges_i, "
            "2) of rows (source, target), or as `edge_index`, int arrays "
            "(2, num_edges_i) as PyTorch Geometric holds them: one of the "
            "two. Received: "
            + ("neither" if edges is None else "both edges and edge_index")
        )
    if edge_index is None:
        return edges
    rows = []
    for index, graph_index in enumerate(edge_index):
        graph_index = np.asarray(graph_index)
        if graph_index.size and (
            graph_index.ndim != 2 or graph_index.shape[0] != 2
        ):
            raise ValueError(
                f"The edge index of graph {index} must have shape (2, "
                "num_edges), a row of sources and a row of targets; pass "
                "rows (source, target) as `edges`. Received: "
                f"edge_index[{index}].shape={graph_index.shape}"
            )
        rows.append(graph_index.T)
    return rows


def _check_edge_features(edge_features, edges):
    """Each graph's edge features `(num_edges_i, features)`, one row per
    edge of `edges` (the checked edges of each graph), all alike."""
    if len(edge_features) != len(edges):
        raise ValueError(
            "`edge_features` must hold one entry per graph. Received: "
            f"{len(edge_features)} entries for {len(edges)} graphs"
        )
    shapes = [np.shape(features) for features in edge_features]
    for index, (shape, graph_edges) in enumerate(zip(shapes, edges)):
        if (
            len(shape) != 2
            or shape[1:] != shapes[0][1:]
            or shape[0] != len(graph_edges)
        ):
            raise ValueError(
                f"The edge features of graph {index} must have shape "
                f"(num_edges, features): one row per edge, {len(graph_edges)}"
                f", and the same features for every graph (graph 0: "
                f"{shapes[0]}). Received: edge_features[{index}].shape={shape}"
            )


def _checked_graphs(
    node_features,
    edges,
    node_labels,
    graph_labels,
    edge_features,
    edges_name="edges",
):
    """The number of nodes of each graph and its checked edges, or a
    ValueError naming the first graph that does not match (its edges as
    `edges_name`, the argument they came from)."""
    if len(node_features) != len(edges):
        raise ValueError(
            f"`node_features` and `{edges_name}` must hold one entry per "
            f"graph. Received: {len(node_features)} and {len(edges)} entries"
        )
    if not len(node_features):
        raise ValueError(
            "`disjoint_union` needs at least one graph (the features' size "
            "comes from them). Received: 0 graphs"
        )
    _check_node_features(node_features)
    node_counts = np.array([len(f) for f in node_features], dtype="int64")
    _check_labels(node_labels, graph_labels, node_counts)
    checked = [
        _checked_edges(graph_edges, index, count, edges_name)
        for index, (graph_edges, count) in enumerate(zip(edges, node_counts))
    ]
    if edge_features is not None:
        _check_edge_features(edge_features, checked)
    return node_counts, checked


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


# The helpers that have warned, on JAX, that their unpadded batches
# compile once per shape: each warns once per process, not at every batch.
_WARNED_UNPADDED = set()


def _warn_unpadded(helper, fix):
    """Warns once per process per helper, on JAX, that graph batches
    without padding cost one compilation per batch."""
    if not backend.needs_static_shapes() or helper in _WARNED_UNPADDED:
        return
    _WARNED_UNPADDED.add(helper)
    warnings.warn(
        f"`{helper}` makes graph batches without padding on JAX, where a "
        "compiled step (`fit`, `evaluate`, `predict`, `train_on_batch`, "
        "...) compiles once per distinct batch shape: the numbers of "
        "nodes, edges and graphs change from batch to batch, so nearly "
        f"every batch pays a compilation. {fix}",
        stacklevel=3,
    )


def disjoint_union(
    node_features,
    edges=None,
    node_labels=None,
    graph_labels=None,
    edge_features=None,
    pad=None,
    edge_index=None,
):
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

    A compiled step (JAX, TensorFlow with XLA) compiles once per shape of
    its inputs, and unions of different graphs rarely share one: to train
    on unions drawn afresh at every step, pass `pad=True`, which pads the
    union to a few bucket sizes (`pad_graph_batch`), or batch with
    `GraphBatches`, which does so by default. The union itself is not
    padded by default, since that would add rows to the model's outputs
    and sample weights to the return value; on JAX, where every new
    shape is a compilation, the default warns once per process.

    The models of `keras_laf.models` (a `keras_laf.models.GraphModel`)
    predict on a union with `model.predict(inputs)`, one row per graph. A
    plain `keras.Model` cannot: its `predict` splits the arrays into
    batches along their first axis, which the arrays of a union do not
    share (nodes, edges, graphs), and Keras fails while reporting it
    (`AttributeError: 'str' object has no attribute 'shape'`); call
    `model.predict_on_batch(inputs)` or `model(inputs)` on it, or
    `GraphBatches(...).predict(model)` over many graphs.

    Args:
        node_features: sequence of arrays `(num_nodes_i, features)`.
        edges: sequence of int arrays `(num_edges_i, 2)`, rows (source,
            target) indexing the nodes of graph i; or give `edge_index`.
        node_labels: optional sequence of arrays `(num_nodes_i, tasks)`.
        graph_labels: optional array-like `(num_graphs, tasks)`.
        edge_features: optional sequence of arrays `(num_edges_i,
            features)`, one row per edge of graph i, in the order of its
            edges (bond features, PyTorch Geometric's `edge_attr`).
        pad: bool or None. `True` pads the union to buckets with
            `pad_graph_batch` (its default buckets, powers of 2 from 16)
            and returns it as a batch of `GraphBatches`: the padded
            inputs, or with labels `(inputs, targets, sample_weights)`,
            which `model.train_on_batch(*batch)` takes. `False` returns
            the union as it is. Defaults to `None`: as `False`, with a
            warning on JAX, once per process, that unpadded batches
            compile once per shape.
        edge_index: instead of `edges`, a sequence of int arrays `(2,
            num_edges_i)`, a row of sources and a row of targets, as
            PyTorch Geometric's `Data.edge_index` holds them. The union
            holds them as `"edge_source"` and `"edge_target"`, the inputs
            of the graph layers.

    Returns:
        `inputs`, a dict of NumPy arrays: `"node_features"` float32
        `(num_nodes, features)`, `"edge_source"` and `"edge_target"` int32
        `(num_edges,)`, `"node_graph_ids"` int32 `(num_nodes,)` and
        `"nodes_per_graph"` int32 `(num_graphs,)`; with edge features,
        `"edge_features"` float32 `(num_edges, features)`, the rows of
        each edge in the order of `"edge_source"`. With labels, a tuple
        `(inputs, targets)` with `targets` a dict holding `"node_outputs"`
        float32 `(num_nodes, tasks)` and/or `"graph_outputs"` float32
        `(num_graphs, tasks)`. With `pad=True`, the same padded, and
        with labels a third item, the sample weights of `pad_graph_batch`.

    Raises:
        ValueError: where the graphs' features, edges or labels do not
            match, naming the graph and the received value: features not
            `(num_nodes_i, features)` alike, edges not int `(num_edges_i,
            2)` (an edge index not `(2, num_edges_i)`) or outside `[0,
            num_nodes_i)`, edge features not `(num_edges_i, features)`
            alike, labels not one per node or graph; or both or neither
            of `edges` and `edge_index` given.

    Example:

    >>> inputs = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     [np.array([[0, 1]]), np.array([[2, 0]])],
    ... )
    >>> inputs["edge_source"], inputs["node_graph_ids"]
    (array([0, 4], dtype=int32), array([0, 0, 1, 1, 1], dtype=int32))
    >>> inputs["nodes_per_graph"]
    array([2, 3], dtype=int32)

    With edge features, one row per edge:

    >>> inputs = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     [np.array([[0, 1]]), np.array([[2, 0], [0, 1]])],
    ...     edge_features=[np.array([[1.0]]), np.array([[2.0], [3.0]])],
    ...     pad=False,
    ... )
    >>> inputs["edge_target"], inputs["edge_features"][:, 0]
    (array([1, 2, 3], dtype=int32), array([1., 2., 3.], dtype=float32))

    The same edges as PyTorch Geometric's edge index, `(2, num_edges)`:

    >>> inputs = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     edge_index=[np.array([[0], [1]]), np.array([[2, 0], [0, 1]])],
    ...     pad=False,
    ... )
    >>> inputs["edge_source"], inputs["edge_target"]
    (array([0, 4, 2], dtype=int32), array([1, 2, 3], dtype=int32))
    >>> inputs, targets, weights = disjoint_union(
    ...     [np.zeros((2, 1)), np.zeros((3, 1))],
    ...     [np.array([[0, 1]]), np.array([[2, 0]])],
    ...     graph_labels=np.ones((2, 1)),
    ...     pad=True,
    ... )
    >>> inputs["node_features"].shape, weights["graph_outputs"][:3]
    ((16, 1), array([8., 8., 0.], dtype=float32))
    """
    if pad not in (None, True, False):
        raise ValueError(
            "`pad` must be True, False or None (the default: not padded, "
            f"with a warning on JAX). Received: pad={pad!r}"
        )
    node_counts, checked = _checked_graphs(
        node_features,
        _edge_rows(edges, edge_index),
        node_labels,
        graph_labels,
        edge_features,
        "edges" if edge_index is None else "edge_index",
    )
    offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]])
    shifted = [
        graph_edges + offset for graph_edges, offset in zip(checked, offsets)
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
    if edge_features is not None:
        inputs["edge_features"] = np.concatenate(edge_features).astype(
            "float32"
        )
    targets = None
    if node_labels is not None or graph_labels is not None:
        targets = {}
        if node_labels is not None:
            targets["node_outputs"] = np.concatenate(node_labels).astype(
                "float32"
            )
        if graph_labels is not None:
            targets["graph_outputs"] = np.asarray(graph_labels, "float32")
    if pad:
        inputs, targets, weights = pad_graph_batch(inputs, targets)
        return inputs if targets is None else (inputs, targets, weights)
    if pad is None:
        _warn_unpadded(
            "disjoint_union",
            "Pass `pad=True` to pad the union to a few bucket sizes, or "
            "batch with `keras_laf.datasets.GraphBatches`, which pads by "
            "default; `pad=False` keeps the union as it is without this "
            "warning.",
        )
    return inputs if targets is None else (inputs, targets)


# The keys of a disjoint-union batch that `pad_graph_batch` pads (and
# the optional one, edge features), and the outputs of the graph models
# of `keras_laf.models` that it gives sample weights.
GRAPH_INPUTS = (
    "node_features",
    "edge_source",
    "edge_target",
    "node_graph_ids",
    "nodes_per_graph",
)
EDGE_FEATURES = "edge_features"
GRAPH_TARGETS = ("node_outputs", "graph_outputs")
# PyTorch Geometric's layout of `"edge_source"` and `"edge_target"`.
EDGE_INDEX = "edge_index"


def _checked_indices(name, values, num_nodes):
    """`values` as int32 node indices, or a ValueError naming
    `inputs[name]` where they are not integers in `[0, num_nodes)`."""
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError(
            f"`inputs[{name!r}]` must hold integer node indices. "
            f"Received: inputs[{name!r}].dtype={values.dtype}"
        )
    if values.size and (values.min() < 0 or values.max() >= num_nodes):
        raise ValueError(
            f"`inputs[{name!r}]` must index the batch's {num_nodes} nodes. "
            f"Received indices from {values.min()} to {values.max()}"
        )
    return values.astype("int32")


def _with_edge_rows(inputs):
    """A copy of `inputs` with its edges as int32 `"edge_source"` and
    `"edge_target"` (from an `"edge_index"` `(2, num_edges)` where it has
    one), checked against the nodes of `"node_features"`; or a ValueError
    naming the received shape or values."""
    if not isinstance(inputs, dict) or "node_features" not in inputs:
        return inputs
    num_nodes = len(inputs["node_features"])
    inputs = dict(inputs)
    if EDGE_INDEX in inputs:
        given = sorted({"edge_source", "edge_target"} & set(inputs))
        if given:
            raise ValueError(
                "`inputs` must hold the edges as 'edge_index' (2, "
                "num_edges) or as 'edge_source' and 'edge_target', not "
                f"both. Received: 'edge_index' and {given}"
            )
        edge_index = np.asarray(inputs.pop(EDGE_INDEX))
        if edge_index.ndim != 2 or edge_index.shape[0] != 2:
            raise ValueError(
                "`inputs['edge_index']` must have shape (2, num_edges), a "
                "row of sources and a row of targets. Received: "
                f"inputs['edge_index'].shape={edge_index.shape}"
            )
        edge_index = _checked_indices(EDGE_INDEX, edge_index, num_nodes)
        inputs["edge_source"], inputs["edge_target"] = edge_index
        return inputs
    for name in ("edge_source", "edge_target"):
        if name in inputs:
            inputs[name] = _checked_indices(name, inputs[name], num_nodes)
    return inputs


def bucket_size(count, smallest=16, growth=2.0):
    """The smallest bucket holding `count` items: `smallest`, then each
    bucket `growth` times the one before, rounded up.

    Args:
        count: non-negative int.
        smallest: positive int, the first bucket. Defaults to `16`.
        growth: float above 1. Defaults to `2.0`: powers of 2 from 16.

    Example:

    >>> bucket_size(17), bucket_size(16), bucket_size(3, smallest=4)
    (32, 16, 4)
    """
    count = check_non_negative_int("count", count)
    size = check_positive_int("smallest", smallest)
    growth = check_number("growth", growth, above=1)
    while size < count:
        size = int(np.ceil(size * growth))
    return size


def _padded_size(name, requested, needed, smallest, growth):
    if requested is None:
        return bucket_size(needed, smallest, growth)
    requested = check_int(name, requested)
    if requested < needed:
        raise ValueError(
            f"`{name}` must be at least {needed} for this batch (its real "
            "items and, for nodes and graphs, one padding item). "
            f"Received: {describe_received(name, requested)}"
        )
    return requested


def _zero_rows(array, rows):
    array = np.asarray(array)
    return np.concatenate(
        [array, np.zeros((rows, *array.shape[1:]), array.dtype)]
    )


def pad_graph_batch(
    inputs,
    targets=None,
    num_nodes=None,
    num_edges=None,
    num_graphs=None,
    smallest=16,
    growth=2.0,
):
    """Pads a disjoint-union batch to a few sizes, so that it compiles once.

    A compiled model (`jax.jit`, XLA) compiles once per shape of its
    inputs, and the numbers of nodes, edges and graphs of a batch of
    graphs change from batch to batch. Padded to buckets (`bucket_size`:
    powers of 2 from 16 by default) they take a few values, each compiled
    once. The padding does not change the real graphs' outputs: the
    padding nodes, with zero features, form a padding graph after the
    real ones (any further padding graphs are empty), and the padding
    edges join padding nodes (the first padding node to itself), with zero
    edge features, so no message reaches a real node.

    The sample weights make a loss with Keras's default reduction (the
    mean over the rows of the batch) the mean over the real rows: 0 at
    padding, and the padded over the real number of rows elsewhere
    (`padded / real`, so that the sum over the padded rows, divided by
    their number, is the mean over the real ones). Pass them to `fit` or
    `train_on_batch` with the targets.

    Args:
        inputs: dict of NumPy arrays, as `disjoint_union` returns them,
            with or without `"edge_features"`. The edges may be one int
            array `"edge_index"` `(2, num_edges)` (PyTorch Geometric's
            layout) instead of `"edge_source"` and `"edge_target"`; the
            padded batch holds them as those two, the graph layers'
            inputs.
        targets: optional dict with `"node_outputs"` `(num_nodes, tasks)`
            and/or `"graph_outputs"` `(num_graphs, tasks)`.
        num_nodes: optional int, the padded number of nodes. Defaults to
            the bucket of the batch's nodes and one padding node.
        num_edges: optional int, the padded number of edges. Defaults to
            the bucket of the batch's edges.
        num_graphs: optional int, the padded number of graphs. Defaults
            to the bucket of the batch's graphs and one padding graph.
        smallest: int, the smallest bucket, as `bucket_size`. Defaults to
            `16`.
        growth: float, the ratio of one bucket to the next, as
            `bucket_size`: a batch computes up to `growth` times its real
            rows, and a smaller ratio wastes fewer rows for more buckets,
            each compiled once. Defaults to `2.0`.

    Returns:
        A tuple `(inputs, targets, sample_weights)`: the padded inputs,
        the padded targets (zero rows at padding; None without targets)
        and float32 sample weights `{"node_outputs": (num_nodes,),
        "graph_outputs": (num_graphs,)}`, with the keys of `targets`
        where given.

    Raises:
        ValueError: keys missing or unknown; `"edge_index"` beside
            `"edge_source"` or `"edge_target"`, or not `(2, num_edges)`;
            an edge index outside the batch's nodes; edge features not
            one row per edge; a requested size below the batch's.

    Example:

    >>> inputs = disjoint_union(
    ...     [np.ones((3, 1)), np.ones((2, 1))],
    ...     [np.array([[0, 1], [1, 2]]), np.array([[1, 0]])],
    ... )
    >>> padded, _, weights = pad_graph_batch(inputs)
    >>> padded["node_features"].shape, padded["nodes_per_graph"][:4]
    ((16, 1), array([ 3,  2, 11,  0], dtype=int32))
    >>> padded["edge_source"][2:5], weights["graph_outputs"][:3]
    (array([4, 5, 5], dtype=int32), array([8., 8., 0.], dtype=float32))

    With the edges as one edge index `(2, num_edges)`:

    >>> edge_index = np.stack(
    ...     [inputs.pop("edge_source"), inputs.pop("edge_target")]
    ... )
    >>> padded, _, _ = pad_graph_batch({**inputs, "edge_index": edge_index})
    >>> padded["edge_source"][:4]
    array([0, 1, 4, 5], dtype=int32)
    """
    inputs = _with_edge_rows(inputs)
    unknown = sorted(set(inputs) - {*GRAPH_INPUTS, EDGE_FEATURES})
    missing = sorted(set(GRAPH_INPUTS) - set(inputs))
    if unknown or missing:
        raise ValueError(
            f"`inputs` must be a dict with the keys {list(GRAPH_INPUTS)} "
            f"and optionally {EDGE_FEATURES!r}, as `disjoint_union` returns "
            f"it. Received: missing keys {missing}, unknown keys {unknown}"
        )
    if EDGE_FEATURES in inputs and np.shape(inputs[EDGE_FEATURES])[
        :1
    ] != np.shape(inputs["edge_source"]):
        raise ValueError(
            "`inputs['edge_features']` must have one row per edge, "
            f"{len(inputs['edge_source'])}. Received: "
            f"inputs['edge_features'].shape={np.shape(inputs[EDGE_FEATURES])}"
        )
    if targets is not None and (
        not targets or set(targets) - set(GRAPH_TARGETS)
    ):
        raise ValueError(
            f"`targets` must be a dict with keys among {list(GRAPH_TARGETS)}. "
            f"Received keys: {sorted(targets)}"
        )
    real_nodes = len(inputs["node_features"])
    real_edges = len(inputs["edge_source"])
    real_graphs = len(inputs["nodes_per_graph"])
    num_nodes = _padded_size(
        "num_nodes", num_nodes, real_nodes + 1, smallest, growth
    )
    num_edges = _padded_size(
        "num_edges", num_edges, real_edges, smallest, growth
    )
    num_graphs = _padded_size(
        "num_graphs", num_graphs, real_graphs + 1, smallest, growth
    )
    padding_nodes = num_nodes - real_nodes
    # Every padding edge from the first padding node to itself.
    edge_padding = np.full(num_edges - real_edges, real_nodes, "int32")
    nodes_per_graph = np.zeros(num_graphs, "int32")
    nodes_per_graph[:real_graphs] = inputs["nodes_per_graph"]
    nodes_per_graph[real_graphs] = padding_nodes
    padded = {
        "node_features": _zero_rows(inputs["node_features"], padding_nodes),
        "edge_source": np.concatenate([inputs["edge_source"], edge_padding]),
        "edge_target": np.concatenate([inputs["edge_target"], edge_padding]),
        "node_graph_ids": np.concatenate(
            [
                inputs["node_graph_ids"],
                np.full(padding_nodes, real_graphs, "int32"),
            ]
        ).astype("int32"),
        "nodes_per_graph": nodes_per_graph,
    }
    if EDGE_FEATURES in inputs:
        padded[EDGE_FEATURES] = _zero_rows(
            inputs[EDGE_FEATURES], num_edges - real_edges
        )
    rows = {
        "node_outputs": (real_nodes, num_nodes),
        "graph_outputs": (real_graphs, num_graphs),
    }
    weights = {}
    for name in GRAPH_TARGETS if targets is None else targets:
        real, total = rows[name]
        weights[name] = np.zeros(total, "float32")
        weights[name][:real] = total / max(real, 1)
    if targets is not None:
        targets = {
            name: _zero_rows(value, rows[name][1] - rows[name][0])
            for name, value in targets.items()
        }
    return padded, targets, weights


def check_graph_model(model, batch):
    """Checks a model against a graph batch, naming what does not match.

    Keras gives a dict of inputs to a model that declares a dict of inputs
    by position, its keys sorted: an input that a batch holds and the
    model does not declare (bond features, `"edge_features"`) moves every
    input after it, and Keras fails on another input's shape. A target
    without a named output of the model fails as `TypeError: Expected
    float32, but got graph_outputs of type 'str'`. This names the input
    or output instead. `keras_laf.models.GraphModel` checks its batches
    with it in `fit`, `evaluate` and `predict`, and
    `GraphBatches.predict` the model it is given; check a plain
    `keras.Model` with it before `fit`.

    Args:
        model: a functional `keras.Model` (one that has not declared its
            inputs, a subclassed model not yet called, is not checked).
        batch: a graph batch: the inputs of `disjoint_union` (a dict), or
            a tuple `(inputs, targets)` or `(inputs, targets,
            sample_weights)`, as `GraphBatches` yields them.

    Raises:
        ValueError: the model declares an input that the batch does not
            hold, or (declaring a dict) does not declare one the batch
            holds; an input's shape differs from the batch's beyond the
            first axis; the model's outputs are not a dict named among
            `"node_outputs"` and `"graph_outputs"`; or the batch has a
            target that the model has no output of.

    Example:

    >>> inputs = disjoint_union(
    ...     [np.ones((2, 3))],
    ...     [np.array([[0, 1]])],
    ...     edge_features=[np.ones((1, 4))],
    ...     pad=False,
    ... )
    >>> model = keras_laf.models.graph_network(
    ...     num_node_features=3, num_layers=1, aggregation="sum"
    ... )
    >>> try:
    ...     check_graph_model(model, inputs)
    ... except ValueError as error:
    ...     print(str(error)[:64])
    The graph batch holds the input 'edge_features' of shape (1, 4),
    """
    inputs, targets = (batch, None) if isinstance(batch, dict) else batch[:2]
    try:
        declared = model.input
    except (AttributeError, ValueError):
        return
    declared_names = (
        dict(declared)
        if isinstance(declared, dict)
        else {tensor.name: tensor for tensor in keras.tree.flatten(declared)}
    )
    received = f"Received: the model's inputs {sorted(declared_names)}"
    for name, tensor in declared_names.items():
        if name not in inputs:
            raise ValueError(
                f"The model declares the input {name!r}, which the graph "
                f"batch does not hold (its inputs: {sorted(inputs)}). "
                f"{received}"
            )
        shape = np.shape(inputs[name])
        expected = tuple(tensor.shape)
        if len(shape) != len(expected) or any(
            size not in (None, actual)
            for size, actual in zip(expected[1:], shape[1:])
        ):
            raise ValueError(
                f"The model's input {name!r} takes the shape {expected}, "
                f"the first axis any size, and the graph batch's {name!r} "
                f"has the shape {shape}. Build the model for these "
                f"features, e.g. `keras.Input(shape={shape[1:]}, "
                f"name={name!r})`"
            )
    undeclared = sorted(set(inputs) - set(declared_names))
    if isinstance(declared, dict) and undeclared:
        name = undeclared[0]
        raise ValueError(
            f"The graph batch holds the input {name!r} of shape "
            f"{np.shape(inputs[name])}, which the model does not "
            "declare: Keras would give each input after it to the "
            "wrong one. Declare it, e.g. `keras.Input(shape="
            f"{np.shape(inputs[name])[1:]}, name={name!r})`, or batch "
            f"without it. {received}"
        )
    outputs = model.output
    if not isinstance(outputs, dict) or set(outputs) - set(GRAPH_TARGETS):
        described = (
            sorted(outputs)
            if isinstance(outputs, dict)
            else f"{type(outputs).__name__} (not named)"
        )
        raise ValueError(
            "The model's outputs must be a dict named among "
            f"{list(GRAPH_TARGETS)}, the names of a graph batch's targets "
            "and sample weights, e.g. `keras.Model(inputs, "
            "{'graph_outputs': outputs})`. Received: the model's outputs "
            f"{described}"
        )
    without_output = sorted(set(targets or ()) - set(outputs))
    if without_output:
        name = without_output[0]
        raise ValueError(
            f"The graph batch has the target {name!r}, which the model has "
            f"no output of. Received: the model's outputs {sorted(outputs)}"
        )


def _data_shards():
    """The current `keras.distribution` distribution and the number of
    parts it cuts each input into along the first axis (the devices of
    its batch axis): `(None, 1)` without one."""
    distribution = keras.distribution.distribution()
    if distribution is None:
        return None, 1
    mesh = distribution.device_mesh
    axes = list(mesh.axis_names)
    if distribution.batch_dim_name not in axes:
        return distribution, 1
    return distribution, int(
        mesh.shape[axes.index(distribution.batch_dim_name)]
    )


# What each padded size counts, for messages.
_SIZE_NOUNS = {
    "num_nodes": "nodes",
    "num_edges": "edges",
    "num_graphs": "graphs",
}


class GraphBatches(keras.utils.PyDataset):
    """Batches of graphs for `Model.fit`, drawn afresh each epoch and
    padded to buckets.

    Each batch is the disjoint union (`disjoint_union`) of `batch_size`
    graphs, padded by `pad_graph_batch` to the buckets of its numbers of
    nodes, edges and graphs, with the sample weights that keep padding out
    of the loss: on JAX, and on TensorFlow with XLA, a model then compiles
    once per bucket instead of once per batch. With `pad="fixed"` every
    batch has the same numbers of nodes, edges and graphs, so a model
    compiles once (what a TPU needs). With `pad=False` the batches are the
    unions as they are, which a model that is not compiled (PyTorch,
    TensorFlow without XLA) runs without the padding's extra work; on JAX,
    where each of them would compile the step anew, `pad=False` warns once
    per process.

    The batches are made as they are drawn, from the graphs' own arrays
    (kept as given, not copied): no union or padded copy of the whole set
    is held, so a set of 10^6 graphs takes the memory of its arrays.

    `fit`, `evaluate` and `predict` all take these batches. The
    predictions of a plain `keras.Model`'s `predict(batches)` hold the
    padding's rows too, each batch's real rows first: `batches.predict(
    model)` gives one row per graph (and per node), in the graphs' order,
    as `batches.unpad(model.predict(batches))` does. A
    `keras_laf.models.GraphModel` (the models of `keras_laf.models`'
    graph builders) drops them in its own `predict`.

    Across devices: JAX's `keras.distribution.DataParallel` cuts every
    array of a batch along its first axis, so each padded size must
    divide by its number of devices, which the default buckets (powers of
    2 from 16) do up to 16 devices; the sizes the batches can take are
    checked against the current distribution when Keras takes the
    batches, and a size that does not divide is a ValueError before the
    first step. TensorFlow's `tf.distribute` strategies take
    `batches.distribute(strategy)`: one union per replica.

    Args:
        node_features: sequence of arrays `(num_nodes_i, features)`.
        edges: sequence of int arrays `(num_edges_i, 2)`, rows (source,
            target); or give `edge_index`.
        node_labels: optional sequence of arrays `(num_nodes_i, tasks)`.
        graph_labels: optional array-like `(num_graphs, tasks)`.
        edge_features: optional sequence of arrays `(num_edges_i,
            features)`, one row per edge of graph i: each batch holds
            them as `"edge_features"`, zeros at padding edges.
        batch_size: int, graphs per batch (the last batch may hold fewer).
            Defaults to `32`.
        shuffle: bool, whether the graphs are shuffled, afresh at every
            epoch. Defaults to `False`.
        seed: optional int, the seed of the shuffling.
        pad: `True`, `False` or `"fixed"`: whether the batches are padded
            to buckets, not padded, or all padded to the same sizes,
            `padded_sizes`. Defaults to `True`. `False` on JAX warns, once
            per process, that each batch shape compiles the step anew.
        smallest: int, the smallest bucket, as `bucket_size`. Defaults to
            `16`.
        growth: float, the ratio of one bucket to the next, as
            `bucket_size`: a batch computes up to `growth` times its real
            rows, and a smaller ratio wastes fewer rows for more buckets,
            each compiled once. Defaults to `2.0`.
        num_nodes: optional int, with `pad="fixed"`: the nodes of every
            batch, a padding node included, as `pad_graph_batch`'s.
            Defaults to the bucket of the most nodes a batch can hold
            (with `shuffle`, the `batch_size` graphs with the most nodes,
            whichever batch they fall in).
        num_edges: optional int, with `pad="fixed"`: the edges of every
            batch. Defaults to the bucket of the most edges a batch can
            hold.
        num_graphs: optional int, with `pad="fixed"`: the graphs of every
            batch, a padding graph included. Defaults to the bucket of
            `batch_size + 1`.
        edge_index: instead of `edges`, a sequence of int arrays `(2,
            num_edges_i)`, a row of sources and a row of targets, as
            PyTorch Geometric's `Data.edge_index` holds them: the batches
            are the same.
        **kwargs: `keras.utils.PyDataset` arguments (`workers`, ...).

    Attributes:
        padded_sizes: with `pad="fixed"`, the dict `{"num_nodes": ...,
            "num_edges": ..., "num_graphs": ...}` of every batch's sizes;
            otherwise `None`.

    Raises:
        ValueError: as `disjoint_union`, naming the first graph whose
            features, edges, edge features or labels do not match; with
            `pad="fixed"`, a graph that alone exceeds a size given
            (naming it) or a batch that can (naming the size it needs);
            sizes given without `pad="fixed"`; under a `keras.distribution`
            distribution (JAX's `DataParallel`), a size the batches can
            take that does not divide by its devices.

    Example:

    >>> batches = GraphBatches(
    ...     [np.ones((3, 1)), np.ones((2, 1))],
    ...     [np.array([[0, 1]]), np.array([[1, 0]])],
    ...     graph_labels=np.ones((2, 1)),
    ...     edge_features=[np.ones((1, 4)), np.ones((1, 4))],
    ...     batch_size=2,
    ... )
    >>> inputs, targets, weights = batches[0]
    >>> len(batches), inputs["node_features"].shape
    (1, (16, 1))
    >>> inputs["edge_features"].shape, inputs["edge_features"][:3, 0]
    ((16, 4), array([1., 1., 0.], dtype=float32))

    Every batch of the same sizes, with the edges as edge indices:

    >>> fixed = GraphBatches(
    ...     [np.ones((n, 1)) for n in (3, 2, 9, 4, 2)],
    ...     edge_index=[np.array([[0], [1]])] * 5,
    ...     batch_size=2,
    ...     pad="fixed",
    ...     smallest=4,
    ... )
    >>> fixed.padded_sizes
    {'num_nodes': 16, 'num_edges': 4, 'num_graphs': 4}
    >>> [fixed[i]["node_features"].shape for i in range(len(fixed))]
    [(16, 1), (16, 1), (16, 1)]

    Predictions without the padding, graph 0's nodes first:

    >>> model = keras_laf.models.graph_network(
    ...     num_node_features=1, num_layers=1, aggregation="sum"
    ... )
    >>> unlabelled = GraphBatches(
    ...     [np.ones((3, 1)), np.ones((2, 1))],
    ...     [np.array([[0, 1]]), np.array([[1, 0]])],
    ... )
    >>> predictions = unlabelled.predict(model, verbose=0)
    >>> predictions["node_outputs"].shape, predictions["graph_outputs"].shape
    ((5, 3), (2, 3))
    """

    def __init__(
        self,
        node_features,
        edges=None,
        node_labels=None,
        graph_labels=None,
        edge_features=None,
        batch_size=32,
        shuffle=False,
        seed=None,
        pad=True,
        smallest=16,
        growth=2.0,
        num_nodes=None,
        num_edges=None,
        num_graphs=None,
        edge_index=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        batch_size = check_positive_int("batch_size", batch_size)
        if isinstance(pad, str) and pad != "fixed":
            raise ValueError(
                "`pad` must be True (buckets), False or 'fixed' (every "
                f"batch the same sizes). Received: pad={pad!r}"
            )
        requested = {
            "num_nodes": num_nodes,
            "num_edges": num_edges,
            "num_graphs": num_graphs,
        }
        given = {
            name: size for name, size in requested.items() if size is not None
        }
        if given and pad != "fixed":
            raise ValueError(
                "`num_nodes`, `num_edges` and `num_graphs` fix the sizes of "
                f"every batch, with pad='fixed'. Received: pad={pad!r}, "
                + ", ".join(f"{name}={size!r}" for name, size in given.items())
            )
        edges = _edge_rows(edges, edge_index)
        # Checks every graph once, here, without building their union,
        # and the buckets' arguments.
        node_counts, checked = _checked_graphs(
            node_features,
            edges,
            node_labels,
            graph_labels,
            edge_features,
            "edges" if edge_index is None else "edge_index",
        )
        bucket_size(0, smallest, growth)
        if not pad:
            _warn_unpadded(
                "GraphBatches(pad=False)",
                "Leave `pad` at its default, `True`, to pad the batches to "
                "a few bucket sizes (`pad_graph_batch`).",
            )
        self.node_features = list(node_features)
        self.edges = list(edges)
        self.node_labels = None if node_labels is None else list(node_labels)
        self.graph_labels = (
            None if graph_labels is None else np.asarray(graph_labels)
        )
        self.edge_features = (
            None if edge_features is None else list(edge_features)
        )
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.pad = pad if isinstance(pad, str) else bool(pad)
        self.smallest = smallest
        self.growth = growth
        self._node_counts = node_counts
        self._edge_counts = np.array([len(e) for e in checked], "int64")
        self._requested = requested
        self.padded_sizes = (
            self._fixed_sizes(self.batch_size, len(self.node_features))
            if self.pad == "fixed"
            else None
        )
        self._rng = np.random.default_rng(seed)
        self._order = np.arange(len(self.node_features))
        if self.shuffle:
            self._rng.shuffle(self._order)
        self._check_shards()

    def __len__(self):
        return -(-len(self.node_features) // self.batch_size)

    @property
    def num_batches(self):
        # Keras reads it before the first batch, where it trains (within
        # a distribution's scope, which worker threads do not see).
        self._check_shards()
        return len(self)

    def _graphs(self, index):
        # The graphs of batch `index`, in the order of this epoch.
        return self._order[
            index * self.batch_size : (index + 1) * self.batch_size
        ]

    def _size_range(self, batch_size, num_graphs):
        # The fewest and the most of each padded size over the batches of
        # `batch_size` graphs from the first `num_graphs` of an epoch, a
        # padding node and graph included, and where the most are.
        full, last = divmod(num_graphs, batch_size)
        fewest_graphs = last or batch_size
        most_graphs = batch_size if full else last
        ranges = {}
        for name, counts, padding in (
            ("num_nodes", self._node_counts, 1),
            ("num_edges", self._edge_counts, 0),
        ):
            if self.shuffle:
                ordered = np.sort(counts)
                low = ordered[:fewest_graphs].sum()
                high = ordered[len(ordered) - most_graphs :].sum()
                where = (
                    f"the {most_graphs} graphs with the most "
                    f"{_SIZE_NOUNS[name]} (a shuffled batch may hold any "
                    f"{most_graphs})"
                )
            else:
                per_batch = np.add.reduceat(
                    counts[:num_graphs], np.arange(0, num_graphs, batch_size)
                )
                low, high = per_batch.min(), per_batch.max()
                where = f"batch {int(per_batch.argmax())}"
            ranges[name] = (int(low) + padding, int(high) + padding, where)
        ranges["num_graphs"] = (
            fewest_graphs + 1,
            most_graphs + 1,
            f"a batch of {most_graphs} graphs",
        )
        return ranges

    def _fixed_sizes(self, batch_size, num_graphs):
        # The sizes that the batches of `batch_size` graphs from the first
        # `num_graphs` of an epoch are all padded to: those requested,
        # checked, or the bucket of the largest batch.
        sizes = {}
        for name, (_, most, where) in self._size_range(
            batch_size, num_graphs
        ).items():
            size = self._requested[name]
            if size is None:
                sizes[name] = bucket_size(most, self.smallest, self.growth)
                continue
            size = check_non_negative_int(name, size)
            noun = _SIZE_NOUNS[name]
            if name != "num_graphs":
                counts = (
                    self._node_counts
                    if name == "num_nodes"
                    else self._edge_counts
                )
                graph = int(np.argmax(counts))
                padding = " and a padding node" if name == "num_nodes" else ""
                if counts[graph] + (name == "num_nodes") > size:
                    raise ValueError(
                        f"Graph {graph} does not fit the fixed sizes: its "
                        f"{counts[graph]} {noun}{padding} need {name} >= "
                        f"{counts[graph] + (name == 'num_nodes')}. Received: "
                        f"{name}={size}"
                    )
            if most > size:
                raise ValueError(
                    f"The batches of {batch_size} graphs do not fit the fixed "
                    f"sizes: {where} needs {name} >= {most} ({noun}, a "
                    "padding one included for nodes and graphs); pass a "
                    f"larger {name} or a smaller batch_size. Received: "
                    f"{name}={size}"
                )
            sizes[name] = size
        return sizes

    def _check_divides(self, sizes, where):
        # A ValueError where a padded size of a batch does not divide by
        # the devices of the current distribution's batch axis.
        distribution, shards = _data_shards()
        for name, size in sizes.items():
            if size % shards:
                received = (
                    f"smallest={self.smallest}, growth={self.growth}"
                    if self.pad is True
                    else f"pad={self.pad!r}, {name}={size}"
                )
                raise ValueError(
                    f"{where} has {size} {_SIZE_NOUNS[name]}, which the "
                    f"{shards} devices of {type(distribution).__name__} "
                    "cannot share: it cuts every array of a graph batch "
                    "along its first axis into equal parts. Pad to sizes "
                    f"that divide by {shards}: a `smallest` that does and "
                    "an integer `growth`, or pad='fixed' with such sizes. "
                    f"Received: {received}"
                )

    def _check_shards(self):
        # Every size the padded batches can take, against the current
        # distribution's devices (the sizes of unpadded ones are checked
        # as they are drawn).
        if not self.pad or _data_shards()[1] == 1:
            return
        if self.pad == "fixed":
            self._check_divides(self.padded_sizes, "Every batch")
            return
        ranges = self._size_range(self.batch_size, len(self.node_features))
        for name, (fewest, most, _) in ranges.items():
            size = bucket_size(fewest, self.smallest, self.growth)
            while True:
                self._check_divides({name: size}, "A batch padded to buckets")
                if size >= most:
                    break
                size = int(np.ceil(size * self.growth))

    def _batch(self, graphs, sizes):
        # The batch of `graphs`, padded to `sizes` (None: the buckets).
        def pick(values):
            return None if values is None else [values[g] for g in graphs]

        union = disjoint_union(
            pick(self.node_features),
            pick(self.edges),
            pick(self.node_labels),
            None if self.graph_labels is None else self.graph_labels[graphs],
            edge_features=pick(self.edge_features),
            pad=False,
        )
        inputs, targets = union if isinstance(union, tuple) else (union, None)
        if not self.pad:
            return inputs if targets is None else (inputs, targets)
        inputs, targets, weights = pad_graph_batch(
            inputs,
            targets,
            smallest=self.smallest,
            growth=self.growth,
            **(sizes or {}),
        )
        return inputs if targets is None else (inputs, targets, weights)

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(
                f"Batch {index} of a GraphBatches of {len(self)} batches"
            )
        batch = self._batch(self._graphs(index), self.padded_sizes)
        inputs = batch if isinstance(batch, dict) else batch[0]
        self._check_divides(
            {
                "num_nodes": len(inputs["node_features"]),
                "num_edges": len(inputs["edge_source"]),
                "num_graphs": len(inputs["nodes_per_graph"]),
            },
            f"Batch {index}",
        )
        return batch

    def distribute(self, strategy):
        """These batches for a `tf.distribute` strategy, one union per
        replica, and the steps of an epoch.

        A strategy such as `tf.distribute.MirroredStrategy` runs the model
        on each replica's slice of a batch, and a disjoint union cannot be
        sliced: cut along its first axis, its edges would point at nodes
        on another replica. Here each step's `batch_size` graphs, in the
        order of these batches, are `batch_size / num_replicas` graphs on
        each replica, each replica's its own union, all padded to the
        same sizes (TensorFlow adds up the replicas' gradients only of one
        shape): as `pad="fixed"` pads a batch of a replica's graphs, with
        the `num_nodes`, `num_edges` and `num_graphs` given. The replicas'
        mean losses then average to the step's, as on one device.

        The dataset repeats, each pass an epoch (shuffled afresh with
        `shuffle=True`): pass the steps to `fit` as `steps_per_epoch`.
        (At the end of a finite distributed dataset, Keras 3.15 counts one
        optimizer iteration more each epoch, which shifts Adam's bias
        correction.) An epoch is whole steps: the last `len(graphs) %
        batch_size` graphs of its order are left out (with `shuffle`,
        different ones each epoch).

        Args:
            strategy: a `tf.distribute.Strategy` of one input pipeline
                (one worker), e.g. `tf.distribute.MirroredStrategy`;
                `batch_size` must divide by its `num_replicas_in_sync`.

        Returns:
            A tuple `(dataset, steps_per_epoch)`: a
            `tf.distribute.DistributedDataset` for `fit`, and the number
            of steps of an epoch.

        Raises:
            ValueError: off the TensorFlow backend; with `pad=False`;
                `batch_size` not a multiple of the replicas; fewer graphs
                than `batch_size`; a size given that a replica's union
                exceeds (as `pad="fixed"`); a strategy of several input
                pipelines.

        Example:

        >>> strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
        >>> batches = GraphBatches(
        ...     [np.ones((n, 1)) for n in (3, 2, 4, 2, 2)],
        ...     [np.array([[0, 1]])] * 5,
        ...     graph_labels=np.ones((5, 1)),
        ...     batch_size=2,
        ... )
        >>> dataset, steps = batches.distribute(strategy)
        >>> steps
        2
        >>> inputs, targets, weights = next(iter(dataset))
        >>> tuple(inputs["node_features"].shape)
        (16, 1)
        >>> with strategy.scope():
        ...     model = keras_laf.models.graph_network(
        ...         num_node_features=1, num_layers=1, aggregation="sum"
        ...     )
        ...     model.compile(optimizer="adam", loss={"graph_outputs": "mae"})
        >>> history = model.fit(
        ...     dataset, epochs=2, steps_per_epoch=steps, verbose=0
        ... )
        >>> len(history.history["loss"])
        2
        """
        require_tensorflow(
            "Batches of `tf.distribute` strategies",
            f"strategy={type(strategy).__name__}",
            instead=(
                "train on GraphBatches as they are under "
                "`keras.distribution.DataParallel`"
            ),
        )
        import tensorflow as tf

        if not self.pad:
            raise ValueError(
                "`distribute` pads each replica's union to the same sizes, "
                "which the replicas of a step need: make the batches with "
                "pad=True or pad='fixed'. Received: pad=False"
            )
        replicas = strategy.num_replicas_in_sync
        if self.batch_size % replicas:
            raise ValueError(
                "`batch_size` is the graphs of a step, across the replicas, "
                f"and must divide by the strategy's {replicas} replicas. "
                f"Received: batch_size={self.batch_size}"
            )
        per_replica = self.batch_size // replicas
        steps = len(self.node_features) // self.batch_size
        if not steps:
            raise ValueError(
                "`distribute` needs the graphs of at least one step, "
                f"batch_size={self.batch_size}. Received: "
                f"{len(self.node_features)} graphs"
            )
        sizes = self._fixed_sizes(per_replica, steps * self.batch_size)

        def generate():
            # The strategy hands the elements to the replicas in turn:
            # step s's graphs are batch s's of one device.
            for start in range(0, steps * self.batch_size, per_replica):
                yield self._batch(
                    self._order[start : start + per_replica], sizes
                )
            self.on_epoch_end()

        signature = tf.nest.map_structure(
            lambda array: tf.TensorSpec(array.shape, array.dtype),
            self._batch(self._order[:per_replica], sizes),
        )

        def replica_batches(context):
            if context.num_input_pipelines != 1:
                raise ValueError(
                    "`distribute` makes the batches of one input pipeline "
                    "(one worker, as MirroredStrategy has). Received: "
                    f"{context.num_input_pipelines} input pipelines"
                )
            return tf.data.Dataset.from_generator(
                generate, output_signature=signature
            ).repeat()

        return strategy.distribute_datasets_from_function(
            replica_batches
        ), steps

    def predict(self, model, **kwargs):
        """`model.predict` over these batches, without the padding's rows.

        `self.unpad(model.predict(self, **kwargs))`, after
        `check_graph_model` has named any input or output of the model
        that does not match the batches: Keras concatenates the outputs of
        the batches as they come, the padding's rows included, and has no
        step that could drop them.

        Args:
            model: a model of these batches' inputs whose outputs are
                among `"node_outputs"` and `"graph_outputs"`, e.g. of
                `keras_laf.models.graph_network`.
            **kwargs: arguments of `model.predict` (`verbose`, ...).

        Returns:
            A dict with the model's outputs: `"node_outputs"` `(num_nodes,
            ...)`, the nodes of graph 0, then of graph 1, ..., and
            `"graph_outputs"` `(num_graphs, ...)`, one row per graph.

        Raises:
            ValueError: as `check_graph_model` and `unpad`, e.g. for
                shuffled batches.
        """
        self._check_in_order()
        batch = self[0]
        check_graph_model(model, batch if isinstance(batch, dict) else batch[0])
        return self.unpad(model.predict(self, **kwargs))

    def _check_in_order(self):
        # Before predicting: the order of shuffled batches is gone once
        # `model.predict` ends.
        if self.shuffle:
            raise ValueError(
                "`unpad` and `predict` give the graphs' order only for "
                "batches in that order: use a `GraphBatches` of the same "
                "graphs made with `shuffle=False`. Received: shuffle=True"
            )

    def unpad(self, predictions):
        """The rows of `model.predict(batches)` that belong to the graphs,
        in the graphs' order.

        `model.predict` concatenates the outputs of the batches as they
        come, with the rows of the padding nodes and graphs, which
        `pad_graph_batch` puts after each batch's real ones; this drops
        them. Predictions that have one row per node or graph already
        (unpadded batches, `pad=False`, or those of a
        `keras_laf.models.GraphModel`) come back as they are.

        Args:
            predictions: dict with `"node_outputs"` `(rows, ...)` and/or
                `"graph_outputs"` `(rows, ...)`, the outputs of
                `model.predict` over these batches (the outputs of
                `keras_laf.models.graph_network`, and the names the
                targets of `GraphBatches` take).

        Returns:
            A dict with the same keys: `"node_outputs"` `(num_nodes,
            ...)`, the nodes of graph 0, then of graph 1, ..., and
            `"graph_outputs"` `(num_graphs, ...)`, one row per graph.

        Raises:
            ValueError: where the batches are shuffled (`model.predict`
                then draws them in an order that is gone once it ends;
                predict on a `GraphBatches` made with `shuffle=False`),
                the keys are not among the outputs above, or the rows do
                not match these batches.
        """
        self._check_in_order()
        if (
            not isinstance(predictions, dict)
            or not predictions
            or set(predictions) - set(GRAPH_TARGETS)
        ):
            received = (
                sorted(predictions)
                if isinstance(predictions, dict)
                else type(predictions).__name__
            )
            raise ValueError(
                f"`predictions` must be a dict with keys among "
                f"{list(GRAPH_TARGETS)}, as `model.predict` returns them for "
                f"a model with these outputs. Received: {received}"
            )
        nodes_per_graph = np.array([len(f) for f in self.node_features])
        real_rows = {name: [] for name in GRAPH_TARGETS}
        for index in range(len(self)):
            graphs = self._graphs(index)
            rows = {
                "node_outputs": int(nodes_per_graph[graphs].sum()),
                "graph_outputs": len(graphs),
            }
            for name, real in rows.items():
                # As `pad_graph_batch` pads: the fixed sizes, or the
                # bucket of the real rows and one padding row.
                if self.pad == "fixed":
                    size = (
                        "num_nodes" if name == "node_outputs" else "num_graphs"
                    )
                    padded = self.padded_sizes[size]
                elif self.pad:
                    padded = bucket_size(real + 1, self.smallest, self.growth)
                else:
                    padded = real
                real_rows[name].append(np.arange(padded) < real)
        unpadded = {}
        for name, value in predictions.items():
            value = np.asarray(value)
            real = np.concatenate(real_rows[name])
            if len(value) == real.sum():
                # One row per node or graph already: padded batches have
                # at least one padding row each, so `real` is longer.
                unpadded[name] = value
                continue
            if len(value) != len(real):
                raise ValueError(
                    f"`predictions[{name!r}]` must have the {len(real)} rows "
                    f"of `model.predict` over these {len(self)} batches, or "
                    f"one row per item, {real.sum()}. Received: "
                    f"{len(value)} rows"
                )
            unpadded[name] = value[real]
        return unpadded

    def on_epoch_end(self):
        if self.shuffle:
            self._rng.shuffle(self._order)

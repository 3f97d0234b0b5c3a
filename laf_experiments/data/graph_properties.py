"""The multi-task graph-properties benchmark of Corso et al. (2020).

Random undirected graphs of a mixture of types, each node with two input
features, and six labels to predict jointly: three per node and three per
graph. Section 4.5 of the LAF paper (Pellegrini et al., IJCAI 2021)
evaluates LAF on this benchmark, from Corso, Cavalleri, Beaini, Liò,
Veličković, "Principal Neighbourhood Aggregation for Graph Nets", NeurIPS
2020 (their `multitask_benchmark/datasets_generation`).

The recipe, reproduced here with a NumPy random generator instead of
global seeds:

- A graph type is drawn from `GRAPH_TYPE_PROBABILITIES`: Erdős–Rényi
  (edge probability uniform in [0, 1)), Barabási–Albert (attachment
  degree uniform in `[1, n - 1]`), a 2D grid and a caveman graph (factors
  of n as close as possible), a random power-law tree, a ladder (an odd
  node attached to the first one), a line, a star, a caterpillar and a
  lobster (backbone and pendant sizes drawn as in the original).
- The nodes are shuffled, then the adjacency is randomised: each edge is
  kept with probability about 0.9 and absent edges appear with a
  probability that keeps the expected number of edges (`_randomize`).
- Graphs with an isolated node are drawn again (same type, new draw).
- Node features: column 0 is the indicator of a source node drawn
  uniformly, column 1 a value uniform in [0, 1).
- Node labels, in `NODE_TASKS` order: the shortest-path length from the
  source node (0 for nodes the source cannot reach, as in the original),
  the eccentricity (the largest distance to a node of the same connected
  component), and the Laplacian features `(D - A) x` with `x` the node
  values (column 1 of the features).
- Graph labels, in `GRAPH_TASKS` order: connectivity (1.0 or 0.0), the
  diameter (the largest finite distance, that is the largest diameter of
  a connected component), and the spectral radius of the adjacency
  matrix (its largest absolute eigenvalue).
- Labels are normalised as in the original training code: each task is
  divided by its maximum over the training set (`PropertyGraphs.
  label_maxima`, `make_graph_property_splits`).

One deliberate difference: the original code tests connectivity by the
positivity of `A^(2^k)`, which reports every connected bipartite graph
(trees, grids, lines, stars, ... when the randomisation leaves them
bipartite) as disconnected; this module computes the exact connectivity.

networkx builds the graphs and computes the distances; it is an optional
dependency (`pip install networkx`), imported only when graphs are
generated.
"""

import dataclasses
import math

import numpy as np

from keras_laf.core.validation import check_positive_int
from keras_laf.datasets import adjacency_to_edges
from keras_laf.datasets import disjoint_union
from laf_experiments.data.constants import EXTRAPOLATION_SIZES
from laf_experiments.data.constants import TRAIN_SIZES
from laf_experiments.errors import require

GRAPH_TYPE_PROBABILITIES = {
    "erdos_renyi": 0.2,
    "barabasi_albert": 0.2,
    "grid": 0.05,
    "caveman": 0.05,
    "tree": 0.15,
    "ladder": 0.05,
    "line": 0.05,
    "star": 0.05,
    "caterpillar": 0.1,
    "lobster": 0.1,
}
GRAPH_TYPES = tuple(GRAPH_TYPE_PROBABILITIES)
NUM_NODE_FEATURES = 2
# Corso et al.'s split sizes: 512 training graphs per size 15..24, 128
# validation graphs per size 15..19 and 256 test graphs per size of 5.
NUM_TRAIN_GRAPHS = 5120
NUM_VALIDATION_GRAPHS = 640
NUM_TEST_GRAPHS = 1280

_KEEP_PROBABILITY = 0.9
_MAX_DRAWS = 1000


def _networkx():
    return require("networkx", "networkx", "The graph-properties benchmark")


def _check_rng(seed):
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _nx_seed(rng):
    return int(rng.integers(2**31 - 1))


def _closest_factors(num_nodes):
    # The largest divisor m <= sqrt(n), and n // m.
    rows = max(
        i for i in range(1, math.isqrt(num_nodes) + 1) if num_nodes % i == 0
    )
    return rows, num_nodes // rows


def _pendant_graph(nx, num_nodes, backbone, attach):
    # A path 0..backbone-1, then each node i >= backbone attached to
    # attach(i).
    graph = nx.empty_graph(num_nodes)
    nx.add_path(graph, range(backbone))
    for node in range(backbone, num_nodes):
        graph.add_edge(node, attach(node))
    return graph


def _base_graph(nx, graph_type, num_nodes, rng):
    if graph_type == "erdos_renyi":
        return nx.fast_gnp_random_graph(
            num_nodes, rng.uniform(), seed=_nx_seed(rng)
        )
    if graph_type == "barabasi_albert":
        degree = int(rng.uniform() * (num_nodes - 1)) + 1
        return nx.barabasi_albert_graph(num_nodes, degree, seed=_nx_seed(rng))
    if graph_type == "grid":
        return nx.grid_2d_graph(*_closest_factors(num_nodes))
    if graph_type == "caveman":
        return nx.caveman_graph(*_closest_factors(num_nodes))
    if graph_type == "tree":
        for _ in range(10):
            try:
                return nx.random_powerlaw_tree(
                    num_nodes, seed=_nx_seed(rng), tries=10000
                )
            except nx.NetworkXError:
                continue
        raise RuntimeError(
            f"No power-law tree of {num_nodes} nodes found in 10 tries."
        )
    if graph_type == "ladder":
        graph = nx.ladder_graph(num_nodes // 2)
        if num_nodes % 2:
            graph.add_edge(0, num_nodes - 1)
        return graph
    if graph_type == "line":
        return nx.path_graph(num_nodes)
    if graph_type == "star":
        return nx.star_graph(num_nodes - 1)
    if graph_type == "caterpillar":
        backbone = int(rng.integers(1, num_nodes))
        return _pendant_graph(
            nx,
            num_nodes,
            backbone,
            lambda node: int(rng.integers(backbone)),
        )
    # Lobster: pendants of the backbone up to `first_leaf`, then pendants
    # of those pendants.
    backbone = int(rng.integers(1, num_nodes))
    first_leaf = int(rng.integers(backbone + 1, num_nodes + 1))
    return _pendant_graph(
        nx,
        num_nodes,
        backbone,
        lambda node: int(
            rng.integers(backbone)
            if node < first_leaf
            else rng.integers(backbone, first_leaf)
        ),
    )


def _randomize(adjacency, rng):
    # Keeps each edge with probability about 0.9 and adds absent edges so
    # that the expected number of edges is unchanged (Corso et al.).
    num_nodes = len(adjacency)
    num_edges = adjacency.sum() / 2
    num_missing = num_nodes * (num_nodes - 1) / 2 - num_edges
    if num_edges <= num_missing:
        keep = _KEEP_PROBABILITY
        appear = (1 - _KEEP_PROBABILITY) * num_edges / num_missing
    else:
        keep = _KEEP_PROBABILITY + (1 - _KEEP_PROBABILITY) * (
            (num_edges - num_missing) / num_edges
        )
        appear = 1 - _KEEP_PROBABILITY
    # A symmetric draw: the sum of two uniforms on [0, 0.5), as in the
    # original.
    draws = rng.uniform(0.0, 0.5, size=(num_nodes, num_nodes))
    draws = draws + draws.T
    kept = (draws < keep) & (adjacency > 0)
    added = (draws < appear) & (adjacency == 0) & ~np.eye(num_nodes, dtype=bool)
    return (kept | added).astype("int32")


def random_graph(num_nodes, graph_type=None, randomize=True, seed=None):
    """Draws one random graph of the benchmark's mixture.

    Args:
        num_nodes: int, at least 2. The number of nodes.
        graph_type: optional str, one of `GRAPH_TYPES`. Defaults to a type
            drawn from `GRAPH_TYPE_PROBABILITIES`.
        randomize: bool. Whether to toggle edges at random after shuffling
            the nodes, as the benchmark does. Defaults to `True`.
        seed: optional int or `np.random.Generator`.

    Returns:
        A tuple `(adjacency, graph_type)`: a symmetric int32 0/1 matrix
        `(num_nodes, num_nodes)` with a zero diagonal, and the type drawn.
        The graph may have isolated nodes; `make_property_graphs` draws
        again in that case.
    """
    if not isinstance(num_nodes, (int, np.integer)) or num_nodes < 2:
        raise ValueError(
            f"`num_nodes` must be an int of at least 2. Received: {num_nodes}"
        )
    if graph_type is not None and graph_type not in GRAPH_TYPES:
        raise ValueError(
            f"`graph_type` must be one of {GRAPH_TYPES} or None. "
            f"Received: graph_type={graph_type!r}"
        )
    nx = _networkx()
    rng = _check_rng(seed)
    if graph_type is None:
        graph_type = GRAPH_TYPES[
            rng.choice(
                len(GRAPH_TYPES), p=list(GRAPH_TYPE_PROBABILITIES.values())
            )
        ]
    graph = _base_graph(nx, graph_type, int(num_nodes), rng)
    nodes = list(graph)
    order = rng.permutation(len(nodes))
    adjacency = nx.to_numpy_array(graph, [nodes[i] for i in order])
    adjacency = (adjacency > 0).astype("int32")
    if randomize:
        adjacency = _randomize(adjacency, rng)
    return adjacency, graph_type


def _distances(adjacency):
    # All shortest-path lengths, -1 for unreachable pairs.
    nx = _networkx()
    graph = nx.Graph()
    graph.add_nodes_from(range(len(adjacency)))
    graph.add_edges_from(zip(*np.nonzero(np.triu(adjacency)), strict=True))
    distances = np.full(adjacency.shape, -1, dtype="int64")
    for source, lengths in nx.all_pairs_shortest_path_length(graph):
        for target, length in lengths.items():
            distances[source, target] = length
    return distances


def node_property_labels(adjacency, node_values, source):
    """The three node labels of the benchmark, unnormalised.

    Args:
        adjacency: symmetric 0/1 array `(num_nodes, num_nodes)`.
        node_values: array `(num_nodes,)`, the node values.
        source: int, the source node of the shortest paths.

    Returns:
        float32 array `(num_nodes, 3)`, columns in `NODE_TASKS` order: the
        shortest-path length from `source` (0 where unreachable), the
        eccentricity within the node's connected component, and
        `(D - A) @ node_values`.
    """
    adjacency = np.asarray(adjacency)
    return _node_labels(adjacency, node_values, source, _distances(adjacency))


def _node_labels(adjacency, node_values, source, distances):
    shortest_paths = np.maximum(distances[source], 0)
    eccentricity = distances.max(axis=1)
    laplacian = np.diag(adjacency.sum(axis=1)) - adjacency
    laplacian_features = laplacian @ np.asarray(node_values, dtype="float64")
    return np.stack(
        [shortest_paths, eccentricity, laplacian_features], axis=1
    ).astype("float32")


def graph_property_labels(adjacency):
    """The three graph labels of the benchmark, unnormalised.

    Args:
        adjacency: symmetric 0/1 array `(num_nodes, num_nodes)`.

    Returns:
        float32 array `(3,)` in `GRAPH_TASKS` order: 1.0 if the graph is
        connected else 0.0, the largest finite shortest-path length, and
        the largest absolute eigenvalue of `adjacency`.
    """
    adjacency = np.asarray(adjacency)
    return _graph_labels(adjacency, _distances(adjacency))


def _graph_labels(adjacency, distances):
    is_connected = float((distances >= 0).all())
    diameter = float(distances.max())
    eigenvalues = np.linalg.eigvalsh(adjacency.astype("float64"))
    spectral_radius = float(np.abs(eigenvalues).max())
    return np.array([is_connected, diameter, spectral_radius], "float32")


def _union_of_ragged(node_features, edges, node_labels, graph_labels):
    # One disjoint union from ragged batches (graphs, None, ...).
    import tensorflow as tf

    node_counts = node_features.row_lengths()
    offsets = tf.cumsum(node_counts, exclusive=True)
    edge_offsets = tf.gather(offsets, edges.value_rowids())
    flat_edges = edges.values + tf.cast(edge_offsets[:, None], edges.dtype)
    inputs = {
        "node_features": node_features.values,
        "edge_source": flat_edges[:, 0],
        "edge_target": flat_edges[:, 1],
        "node_graph_ids": tf.cast(node_features.value_rowids(), "int32"),
        "nodes_per_graph": tf.cast(node_counts, "int32"),
    }
    targets = {
        "node_outputs": node_labels.values,
        "graph_outputs": graph_labels,
    }
    return inputs, targets


@dataclasses.dataclass(frozen=True)
class PropertyGraphs:
    """Graphs of the graph-properties benchmark with their labels.

    Attributes:
        node_features: tuple of float32 arrays `(num_nodes_i, 2)`: the
            source-node indicator and the node value.
        edges: tuple of int32 arrays `(num_edges_i, 2)`, rows (source,
            target), each undirected edge in both directions.
        node_labels: tuple of float32 arrays `(num_nodes_i, 3)`, columns
            in `NODE_TASKS` order.
        graph_labels: float32 array `(num_graphs, 3)`, columns in
            `GRAPH_TASKS` order.
        graph_types: tuple of str, the type of each graph.
        node_scale: float32 array `(3,)`. The labels are the raw labels
            divided by this (ones for raw labels).
        graph_scale: float32 array `(3,)`, likewise for graph labels.
    """

    node_features: tuple
    edges: tuple
    node_labels: tuple
    graph_labels: np.ndarray
    graph_types: tuple
    node_scale: np.ndarray = dataclasses.field(
        default_factory=lambda: np.ones(3, "float32")
    )
    graph_scale: np.ndarray = dataclasses.field(
        default_factory=lambda: np.ones(3, "float32")
    )

    def __post_init__(self):
        # `to_dataset` batches without `disjoint_union`: check every graph
        # once here, as it does, since inside `jax.jit` a bad edge index
        # would be dropped or clamped without an error.
        if len(self):
            disjoint_union(self.node_features, self.edges, pad=False)

    def __len__(self):
        return len(self.node_features)

    def label_maxima(self):
        """Per-task maxima of the labels: `(node (3,), graph (3,))`."""
        node = np.max([labels.max(axis=0) for labels in self.node_labels], 0)
        return node.astype("float32"), self.graph_labels.max(axis=0)

    def normalized(self, node_scale, graph_scale):
        """These graphs with labels divided by per-task scales.

        Args:
            node_scale: array-like `(3,)`, positive.
            graph_scale: array-like `(3,)`, positive.

        Returns:
            A new `PropertyGraphs` whose `node_scale` and `graph_scale`
            record the total division of the raw labels.
        """
        node_scale = np.asarray(node_scale, "float32")
        graph_scale = np.asarray(graph_scale, "float32")
        if not (np.all(node_scale > 0) and np.all(graph_scale > 0)):
            raise ValueError(
                "Label scales must be positive. Received: "
                f"node_scale={node_scale}, graph_scale={graph_scale}"
            )
        return dataclasses.replace(
            self,
            node_labels=tuple(
                labels / node_scale for labels in self.node_labels
            ),
            graph_labels=self.graph_labels / graph_scale,
            node_scale=self.node_scale * node_scale,
            graph_scale=self.graph_scale * graph_scale,
        )

    def average_log_degree(self):
        """Mean of log(degree + 1) over all nodes: PNA's scaler delta."""
        degrees = np.concatenate(
            [
                np.bincount(edges[:, 1], minlength=len(features))
                for features, edges in zip(self.node_features, self.edges)
            ]
        )
        return float(np.mean(np.log(degrees + 1.0)))

    def batch(self, indices=None):
        """The disjoint union of some graphs, as `disjoint_union` returns.

        Args:
            indices: optional sequence of graph indices. Defaults to all.

        Returns:
            `(inputs, targets)` dicts of NumPy arrays.
        """
        if indices is None:
            indices = range(len(self))
        indices = list(indices)
        # One union as it is: the callers pad it where they compile.
        return disjoint_union(
            [self.node_features[i] for i in indices],
            [self.edges[i] for i in indices],
            [self.node_labels[i] for i in indices],
            self.graph_labels[indices],
            pad=False,
        )

    def to_dataset(self, batch_size, shuffle=False, seed=None):
        """A `tf.data.Dataset` of disjoint-union batches for `Model.fit`.

        Each element is one batch of `batch_size` graphs (the last may be
        smaller) in the form of `disjoint_union`: `(inputs, targets)`
        dicts of tensors whose leading dimensions differ (nodes, edges,
        graphs). Keras's `fit`, `evaluate` and `predict` take such a
        dataset as it is; `predict` concatenates node outputs and graph
        outputs of the batches separately.

        Args:
            batch_size: positive int, the number of graphs per batch.
            shuffle: bool. Whether to shuffle the graphs, afresh at every
                epoch. Defaults to `False`.
            seed: optional int seed of the shuffling.

        Returns:
            A `tf.data.Dataset`.
        """
        # Imported here: the graphs and their padded batches need no
        # TensorFlow, so the benchmark runs on JAX where it is absent.
        import tensorflow as tf

        check_positive_int("batch_size", batch_size)
        if len(self) == 0:
            raise ValueError("Cannot make a dataset of no graphs.")

        def ragged(arrays):
            return tf.RaggedTensor.from_row_lengths(
                np.concatenate(arrays), [len(array) for array in arrays]
            )

        dataset = tf.data.Dataset.from_tensor_slices(
            (
                ragged(self.node_features),
                ragged(self.edges),
                ragged(self.node_labels),
                self.graph_labels,
            )
        )
        if shuffle:
            dataset = dataset.shuffle(len(self), seed=seed)
        dataset = dataset.ragged_batch(batch_size).map(
            _union_of_ragged, num_parallel_calls=tf.data.AUTOTUNE
        )
        return dataset.prefetch(tf.data.AUTOTUNE)


def make_property_graphs(num_graphs, sizes=TRAIN_SIZES, seed=None):
    """Draws graphs of the benchmark with their raw labels.

    Args:
        num_graphs: int. The number of graphs.
        sizes: `(low, high)`, node counts in `range(low, high)`, each
            count used for an equal share of the graphs (in turn, as
            Corso et al. generate equal numbers per size). Defaults to
            `(15, 25)`, the training sizes.
        seed: optional int or `np.random.Generator`.

    Returns:
        A `PropertyGraphs` with unnormalised labels.

    Example:

    >>> graphs = make_property_graphs(4, sizes=(5, 7), seed=0)
    >>> [len(f) for f in graphs.node_features]
    [5, 5, 6, 6]
    """
    if not isinstance(num_graphs, (int, np.integer)) or num_graphs < 0:
        raise ValueError(
            "`num_graphs` must be a non-negative int. "
            f"Received: num_graphs={num_graphs}"
        )
    low, high = sizes
    if not 2 <= low < high:
        raise ValueError(
            "`sizes` must be a range (low, high) of node counts with "
            f"2 <= low < high. Received: sizes={sizes}"
        )
    rng = _check_rng(seed)
    node_counts = [low + i % (high - low) for i in range(num_graphs)]
    # Graphs sorted by size, as Corso et al. store them.
    node_counts.sort()
    features, edges, node_labels, graph_labels, types = [], [], [], [], []
    for num_nodes in node_counts:
        adjacency, graph_type = random_graph(num_nodes, seed=rng)
        for _ in range(_MAX_DRAWS):
            if adjacency.max(axis=0).min() > 0:
                break
            # An isolated node: draw again, keeping the type.
            adjacency, _ = random_graph(num_nodes, graph_type, seed=rng)
        else:
            raise RuntimeError(
                f"No {graph_type} graph of {num_nodes} nodes without an "
                f"isolated node in {_MAX_DRAWS} draws."
            )
        values = rng.uniform(size=num_nodes)
        source = int(rng.integers(num_nodes))
        indicator = np.zeros(num_nodes)
        indicator[source] = 1.0
        features.append(np.stack([indicator, values], 1).astype("float32"))
        edges.append(adjacency_to_edges(adjacency))
        distances = _distances(adjacency)
        node_labels.append(_node_labels(adjacency, values, source, distances))
        graph_labels.append(_graph_labels(adjacency, distances))
        types.append(graph_type)
    return PropertyGraphs(
        node_features=tuple(features),
        edges=tuple(edges),
        node_labels=tuple(node_labels),
        graph_labels=np.array(graph_labels, "float32").reshape(-1, 3),
        graph_types=tuple(types),
    )


def make_graph_property_splits(
    num_train=NUM_TRAIN_GRAPHS,
    num_validation=NUM_VALIDATION_GRAPHS,
    num_test=NUM_TEST_GRAPHS,
    train_sizes=TRAIN_SIZES,
    test_sizes=(TRAIN_SIZES, *EXTRAPOLATION_SIZES),
    seed=0,
):
    """The benchmark's splits, labels normalised by the training maxima.

    Training and validation graphs have `train_sizes` nodes; each test set
    has its own range of sizes, the training range and larger ones to
    measure extrapolation. Every label is divided by the maximum of its
    task over the training graphs (a maximum that is not positive is
    replaced by 1), as Corso et al. do.

    Args:
        num_train: int. Number of training graphs. Defaults to 5120.
        num_validation: int. Number of validation graphs. Defaults to 640.
        num_test: int. Number of graphs of each test set. Defaults to 1280.
        train_sizes: `(low, high)`, node counts `range(low, high)` of the
            training and validation graphs. Defaults to `(15, 25)`.
        test_sizes: sequence of `(low, high)`, one test set each. Defaults
            to `(15, 25)` then `EXTRAPOLATION_SIZES`, from `(20, 25)` to
            `(95, 100)`.
        seed: int or `np.random.Generator`. Defaults to `0`.

    Returns:
        A dict of `PropertyGraphs`: `"train"`, `"validation"`, and
        `"test-(low,high)"` for each test range, e.g. `"test-(20,25)"`.
    """
    rng = _check_rng(seed)
    train = make_property_graphs(num_train, train_sizes, rng)
    if len(train) == 0:
        raise ValueError(
            "The labels are normalised by the training set, so `num_train` "
            f"must be positive. Received: num_train={num_train}"
        )
    node_maxima, graph_maxima = train.label_maxima()
    node_scale = np.where(node_maxima > 0, node_maxima, 1.0)
    graph_scale = np.where(graph_maxima > 0, graph_maxima, 1.0)
    splits = {
        "train": train,
        "validation": make_property_graphs(num_validation, train_sizes, rng),
    }
    for low, high in test_sizes:
        splits[f"test-({low},{high})"] = make_property_graphs(
            num_test, (low, high), rng
        )
    return {
        name: graphs.normalized(node_scale, graph_scale)
        for name, graphs in splits.items()
    }

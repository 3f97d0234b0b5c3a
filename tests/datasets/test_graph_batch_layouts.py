"""Graph batches from PyTorch Geometric's edge index `(2, num_edges)`
against the two-array form, batches of one fixed shape against the
buckets, the padded sizes against the devices of a `keras.distribution`
distribution, and `GraphBatches.distribute` for `tf.distribute`."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_laf.datasets import GraphBatches
from keras_laf.datasets import bucket_size
from keras_laf.datasets import disjoint_union
from keras_laf.datasets import pad_graph_batch
from keras_laf.models import graph_network

pytestmark = pytest.mark.multi_backend

ON_JAX = keras.config.backend() == "jax"
ON_TENSORFLOW = keras.config.backend() == "tensorflow"


def random_graphs(num_graphs, seed=0, smallest=1, largest=9):
    """Features, edges `(num_edges_i, 2)`, node and graph labels and edge
    features of graphs of `smallest` to `largest` nodes."""
    rng = np.random.default_rng(seed)
    features, edges, node_labels, edge_features = [], [], [], []
    for _ in range(num_graphs):
        n = int(rng.integers(smallest, largest + 1))
        features.append(rng.uniform(size=(n, 2)).astype("float32"))
        pairs = rng.integers(0, n, size=(int(rng.integers(0, 2 * n + 1)), 2))
        edges.append(pairs.astype("int64"))
        node_labels.append(rng.uniform(size=(n, 3)).astype("float32"))
        edge_features.append(rng.uniform(size=(len(pairs), 4)))
    graph_labels = rng.uniform(size=(num_graphs, 3)).astype("float32")
    return features, edges, node_labels, graph_labels, edge_features


def as_edge_index(edges):
    # PyTorch Geometric's layout, each graph its own contiguous array.
    return [np.ascontiguousarray(np.asarray(e).T) for e in edges]


def assert_same_batch(first, second):
    first, second = keras.tree.flatten(first), keras.tree.flatten(second)
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def small_network():
    keras.utils.set_random_seed(1)
    return graph_network(
        num_node_features=2,
        aggregation="laf",
        aggregation_kwargs={"units": 2},
        hidden_units=4,
        num_layers=2,
        num_readout_layers=1,
    )


def test_edge_index_gives_the_union_of_edge_rows():
    features, edges, node_labels, graph_labels, edge_features = random_graphs(6)
    expected = disjoint_union(
        features,
        edges,
        node_labels,
        graph_labels,
        edge_features=edge_features,
        pad=False,
    )
    union = disjoint_union(
        features,
        None,
        node_labels,
        graph_labels,
        edge_features=edge_features,
        pad=False,
        edge_index=as_edge_index(edges),
    )
    assert_same_batch(union, expected)
    # By hand: the second graph's edges shifted by the first's nodes.
    inputs = disjoint_union(
        [np.zeros((3, 1)), np.zeros((2, 1))],
        edge_index=[np.array([[0, 2], [1, 0]]), np.array([[1], [0]])],
        pad=False,
    )
    np.testing.assert_array_equal(inputs["edge_source"], [0, 2, 4])
    np.testing.assert_array_equal(inputs["edge_target"], [1, 0, 3])
    # A graph without edges: PyG's empty edge index (2, 0).
    inputs = disjoint_union(
        [np.zeros((1, 1)), np.zeros((2, 1))],
        edge_index=[np.zeros((2, 0), "int64"), np.array([[0], [1]])],
        pad=False,
    )
    np.testing.assert_array_equal(inputs["edge_source"], [1])


@pytest.mark.parametrize("pad", [True, "fixed"])
def test_edge_index_gives_the_same_batches(pad):
    features, edges, node_labels, graph_labels, edge_features = random_graphs(
        11, seed=1
    )
    arguments = dict(
        node_labels=node_labels,
        graph_labels=graph_labels,
        edge_features=edge_features,
        batch_size=3,
        shuffle=True,
        seed=4,
        pad=pad,
    )
    rows = GraphBatches(features, edges, **arguments)
    index = GraphBatches(features, edge_index=as_edge_index(edges), **arguments)
    assert rows.padded_sizes == index.padded_sizes
    for _ in range(2):
        assert len(rows) == len(index) == 4
        for batch in range(len(rows)):
            assert_same_batch(index[batch], rows[batch])
        rows.on_epoch_end()
        index.on_epoch_end()


def test_pad_graph_batch_takes_an_edge_index():
    features, edges, node_labels, graph_labels, edge_features = random_graphs(
        4, seed=2
    )
    inputs, targets = disjoint_union(
        features,
        edges,
        node_labels,
        graph_labels,
        edge_features=edge_features,
        pad=False,
    )
    edge_index = np.stack([inputs["edge_source"], inputs["edge_target"]])
    with_index = {
        name: value
        for name, value in inputs.items()
        if name not in ("edge_source", "edge_target")
    }
    with_index["edge_index"] = edge_index.astype("int64")
    assert_same_batch(
        pad_graph_batch(with_index, targets, smallest=4),
        pad_graph_batch(inputs, targets, smallest=4),
    )
    # The caller's dict is left as it was.
    assert "edge_index" in with_index and "edge_source" not in with_index


def test_bad_edge_index_names_the_received_value():
    features = [np.zeros((3, 1)), np.zeros((2, 1))]
    good = [np.array([[0, 1], [1, 2]]), np.array([[0], [1]])]
    cases = [
        # Rows (source, target), PyG's layout transposed.
        (
            [good[0], np.array([[0, 1], [1, 0], [0, 0]])],
            r"graph 1 must have shape \(2, num_edges\).*"
            r"edge_index\[1\]\.shape=\(3, 2\)",
        ),
        (
            [np.array([[0, 1, 2, 0]] * 3), good[1]],
            r"graph 0 .*edge_index\[0\]\.shape=\(3, 4\)",
        ),
        (
            [np.array([0, 1]), good[1]],
            r"edge_index\[0\]\.shape=\(2,\)",
        ),
        (
            [good[0], np.array([[0], [2]])],
            r"graph 1 must index its 2 nodes\. Received indices from 0 to "
            r"2 in edge_index\[1\]",
        ),
        (
            [good[0], np.array([[0.0], [1.0]])],
            r"edge_index\[1\]\.dtype=float64",
        ),
    ]
    for edge_index, match in cases:
        with pytest.raises(ValueError, match=match):
            disjoint_union(features, edge_index=edge_index, pad=False)
        with pytest.raises(ValueError, match=match):
            GraphBatches(features, edge_index=edge_index)
    for make in (
        lambda **edges: disjoint_union(features, pad=False, **edges),
        lambda **edges: GraphBatches(features, **edges),
    ):
        with pytest.raises(ValueError, match="Received: both"):
            make(edges=[e.T for e in good], edge_index=good)
        with pytest.raises(ValueError, match="Received: neither"):
            make()
    with pytest.raises(ValueError, match=r"`edge_index` must hold one entry"):
        disjoint_union(features, edge_index=good[:1], pad=False)
    # Edge rows given where an edge index was meant: named as edges.
    with pytest.raises(ValueError, match=r"edges\[0\]\.shape=\(2, 3\)"):
        disjoint_union(
            [np.zeros((3, 1))], [np.array([[0, 1, 2], [1, 2, 0]])], pad=False
        )


def test_pad_graph_batch_bad_edge_index():
    inputs = disjoint_union([np.ones((3, 1))], [np.array([[0, 1]])], pad=False)
    nodes_only = {
        name: value
        for name, value in inputs.items()
        if name not in ("edge_source", "edge_target")
    }
    with pytest.raises(ValueError, match=r"not both.*\['edge_source'"):
        pad_graph_batch({**inputs, "edge_index": np.array([[0], [1]])})
    with pytest.raises(
        ValueError, match=r"inputs\['edge_index'\]\.shape=\(4, 2\)"
    ):
        pad_graph_batch({**nodes_only, "edge_index": np.zeros((4, 2), int)})
    with pytest.raises(
        ValueError, match=r"index the batch's 3 nodes.*from 0 to 9"
    ):
        pad_graph_batch({**nodes_only, "edge_index": np.array([[0], [9]])})
    with pytest.raises(
        ValueError, match=r"inputs\['edge_index'\]\.dtype=float64"
    ):
        pad_graph_batch({**nodes_only, "edge_index": np.array([[0.0], [1.0]])})
    # The two-array form is checked the same way.
    with pytest.raises(ValueError, match=r"'edge_source'.*from -1 to -1"):
        pad_graph_batch({**inputs, "edge_source": np.array([-1])})


def shapes(batch):
    return [np.shape(array) for array in keras.tree.flatten(batch)]


def test_fixed_sizes_give_every_batch_one_shape():
    features, edges, node_labels, graph_labels, edge_features = random_graphs(
        23, seed=3
    )
    batches = GraphBatches(
        features,
        edges,
        node_labels,
        graph_labels,
        edge_features=edge_features,
        batch_size=4,
        shuffle=True,
        seed=0,
        pad="fixed",
        smallest=8,
    )
    # The 4 largest graphs, whichever batch they fall in, and a padding
    # node or graph.
    node_counts = np.sort([len(f) for f in features])
    edge_counts = np.sort([len(e) for e in edges])
    assert batches.padded_sizes == {
        "num_nodes": bucket_size(node_counts[-4:].sum() + 1, 8),
        "num_edges": bucket_size(edge_counts[-4:].sum(), 8),
        "num_graphs": 8,
    }
    sizes = batches.padded_sizes
    expected = None
    for _ in range(3):
        for index in range(len(batches)):
            inputs, targets, weights = batches[index]
            assert len(inputs["node_features"]) == sizes["num_nodes"]
            assert len(inputs["edge_source"]) == sizes["num_edges"]
            assert len(inputs["nodes_per_graph"]) == sizes["num_graphs"]
            expected = expected or shapes(batches[index])
            assert shapes(batches[index]) == expected
        batches.on_epoch_end()
    # Without shuffling, the largest of the batches themselves.
    batches = GraphBatches(features, edges, batch_size=4, pad="fixed")
    per_batch = [
        sum(len(f) for f in features[start : start + 4])
        for start in range(0, 23, 4)
    ]
    assert batches.padded_sizes["num_nodes"] == bucket_size(max(per_batch) + 1)


def test_fixed_batches_give_the_buckets_results():
    features, edges, node_labels, graph_labels, _ = random_graphs(13, seed=5)
    arguments = dict(
        node_labels=node_labels, graph_labels=graph_labels, batch_size=4
    )
    buckets = GraphBatches(features, edges, **arguments)
    fixed = GraphBatches(
        features, edges, pad="fixed", num_nodes=48, **arguments
    )
    assert fixed.padded_sizes["num_nodes"] == 48
    model = small_network()
    model.compile(optimizer="adam", loss="mse")
    # Per batch, the weighted loss of the real rows only.
    for index in range(len(buckets)):
        assert len(fixed[index][0]["node_features"]) == 48
        np.testing.assert_allclose(
            model.test_on_batch(*fixed[index]),
            model.test_on_batch(*buckets[index]),
            rtol=1e-5,
        )
    expected = GraphBatches(features, edges, batch_size=4).predict(
        model, verbose=0
    )
    fixed = GraphBatches(features, edges, batch_size=4, pad="fixed")
    for predictions in (
        fixed.predict(model, verbose=0),
        fixed.unpad(model.predict(fixed, verbose=0)),
    ):
        for name in ("node_outputs", "graph_outputs"):
            assert len(predictions[name]) == len(expected[name])
            np.testing.assert_allclose(
                predictions[name], expected[name], rtol=1e-5, atol=1e-6
            )
    # By hand: the graph outputs of the union of all the graphs.
    union = disjoint_union(features, edges, pad=False)
    np.testing.assert_allclose(
        expected["graph_outputs"],
        ops.convert_to_numpy(model.predict_on_batch(union)["graph_outputs"]),
        rtol=1e-5,
        atol=1e-6,
    )


def test_fixed_sizes_that_do_not_fit_name_the_graph_or_batch():
    features = [np.ones((n, 1)) for n in (3, 9, 2, 4, 5)]
    edges = [np.array([[0, 1]] * k) for k in (1, 2, 7, 1, 1)]
    with pytest.raises(
        ValueError,
        match=r"Graph 1 does not fit.*9 nodes and a padding node need "
        r"num_nodes >= 10\. Received: num_nodes=8",
    ):
        GraphBatches(features, edges, pad="fixed", num_nodes=8)
    with pytest.raises(
        ValueError,
        match=r"Graph 2 does not fit.*7 edges need num_edges >= 7\. "
        "Received: num_edges=6",
    ):
        GraphBatches(features, edges, pad="fixed", num_edges=6)
    # Each graph fits, a batch does not: batches (3, 9) (2, 4) (5).
    with pytest.raises(
        ValueError, match=r"batch 0 needs num_nodes >= 13.*num_nodes=12"
    ):
        GraphBatches(features, edges, batch_size=2, pad="fixed", num_nodes=12)
    # Shuffled, a batch may hold the two largest graphs, 9 and 5 nodes.
    with pytest.raises(
        ValueError, match=r"the 2 graphs with the most nodes.*>= 15"
    ):
        GraphBatches(
            features,
            edges,
            batch_size=2,
            shuffle=True,
            pad="fixed",
            num_nodes=14,
        )
    with pytest.raises(ValueError, match=r"num_graphs >= 3.*num_graphs=2"):
        GraphBatches(features, edges, batch_size=2, pad="fixed", num_graphs=2)
    fitted = GraphBatches(
        features, edges, batch_size=2, pad="fixed", num_nodes=13
    )
    assert fitted.padded_sizes["num_nodes"] == 13
    with pytest.raises(ValueError, match=r"pad='fixed'.*num_nodes=13"):
        GraphBatches(features, edges, num_nodes=13)
    with pytest.raises(ValueError, match="pad='buckets'"):
        GraphBatches(features, edges, pad="buckets")


@pytest.mark.skipif(
    not ON_JAX, reason="counts JAX's compilations of the training step"
)
def test_fixed_batches_compile_once_on_jax():
    features, edges, _, graph_labels, _ = random_graphs(40, seed=6, largest=30)
    batches = GraphBatches(
        features,
        edges,
        graph_labels=graph_labels,
        batch_size=4,
        shuffle=True,
        seed=0,
        pad="fixed",
    )
    model = small_network()
    model.compile(optimizer="adam", loss={"graph_outputs": "mse"})
    traces = []
    train_step = model.train_step

    def counted_train_step(*args):
        traces.append(None)
        return train_step(*args)

    model.train_step = counted_train_step
    model.fit(batches, epochs=2, verbose=0)
    assert len(traces) == 1


def two_device_data_parallel(devices=2):
    # A mesh of device names: the check reads its batch axis only.
    mesh = keras.distribution.DeviceMesh(
        (devices,), ["batch"], [f"cpu:{i}" for i in range(devices)]
    )
    return keras.distribution.DataParallel(device_mesh=mesh)


def test_padded_sizes_must_divide_by_the_data_parallel_devices():
    features, edges, _, graph_labels, _ = random_graphs(9, seed=7)
    distribution = two_device_data_parallel()
    batches = GraphBatches(features, edges, graph_labels=graph_labels)
    odd = GraphBatches(
        features, edges, graph_labels=graph_labels, batch_size=4, smallest=15
    )
    with distribution.scope():
        # The default buckets, powers of 2 from 16, divide.
        assert batches.num_batches == 1
        batches[0]
        # 5 graphs per batch, padded to 15: what fit reads first, what a
        # batch is, and batches made in the scope.
        match = (
            r"has 15 \w+, which the 2 devices of DataParallel cannot "
            r"share.*Received: smallest=15, growth=2\.0"
        )
        with pytest.raises(ValueError, match=match):
            odd.num_batches
        with pytest.raises(ValueError, match=match):
            odd[0]
        with pytest.raises(ValueError, match=match):
            GraphBatches(features, edges, batch_size=4, smallest=15)
        with pytest.raises(
            ValueError,
            match=r"Every batch has 11 graphs.*pad='fixed', num_graphs=11",
        ):
            GraphBatches(features, edges, pad="fixed", num_graphs=11)
        # Unpadded, as each batch is drawn: 2 nodes, 2 edges and 2 graphs
        # in batch 0, then 3 nodes.
        unpadded = GraphBatches(
            [np.ones((n, 1)) for n in (1, 1, 2, 1)],
            [np.array([[0, 0]])] * 2 + [np.array([[0, 1]]), np.array([[0, 0]])],
            batch_size=2,
            pad=False,
        )
        unpadded[0]
        with pytest.raises(
            ValueError, match=r"Batch 1 has 3 nodes.*pad=False, num_nodes=3"
        ):
            unpadded[1]
    # Outside the scope, and on one device, nothing to divide.
    assert odd.num_batches == 3
    odd[0]
    with two_device_data_parallel(devices=1).scope():
        odd[0]


@pytest.mark.skipif(ON_TENSORFLOW, reason="off TensorFlow only")
def test_distribute_needs_tensorflow():
    batches = GraphBatches(*random_graphs(4)[:2], batch_size=2)
    with pytest.raises(ValueError, match="need the TensorFlow backend"):
        batches.distribute(None)


@pytest.mark.tensorflow_only("builds a tf.distribute dataset")
def test_distribute_on_one_replica_gives_the_batches_in_order():
    import tensorflow as tf

    features, edges, node_labels, graph_labels, edge_features = random_graphs(
        11, seed=8
    )
    batches = GraphBatches(
        features,
        edges,
        node_labels,
        graph_labels,
        edge_features=edge_features,
        batch_size=4,
    )
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    dataset, steps = batches.distribute(strategy)
    # 11 graphs: two whole steps, the last 3 graphs left out.
    assert steps == 2
    # Every union padded to the buckets of the largest of the steps'.
    most_nodes = max(sum(map(len, features[s : s + 4])) for s in (0, 4))
    most_edges = max(sum(map(len, edges[s : s + 4])) for s in (0, 4))
    sizes = {
        "num_nodes": bucket_size(most_nodes + 1),
        "num_edges": bucket_size(most_edges),
        "num_graphs": bucket_size(5),
    }
    elements = iter(dataset)
    for _ in range(2):  # two epochs of the repeated dataset
        for step in range(steps):
            element = keras.tree.map_structure(
                ops.convert_to_numpy, next(elements)
            )
            graphs = slice(4 * step, 4 * step + 4)
            union = disjoint_union(
                features[graphs],
                edges[graphs],
                node_labels[graphs],
                graph_labels[graphs],
                edge_features=edge_features[graphs],
                pad=False,
            )
            assert_same_batch(element, pad_graph_batch(*union, **sizes))
    with pytest.raises(ValueError, match="Received: pad=False"):
        GraphBatches(features, edges, pad=False).distribute(strategy)
    with pytest.raises(ValueError, match="Received: 11 graphs"):
        GraphBatches(features, edges, batch_size=12).distribute(strategy)

"""Graph batches padded to buckets: their layout, that padding leaves
the real graphs' outputs and the loss as they are, that unpadded batches
warn on JAX, where they compile at every step, and that a graph model
fits, evaluates and predicts through `GraphBatches`, on every backend."""

import contextlib
import warnings

import keras
import numpy as np
import pytest
from keras import ops

from keras_laf import GraphReadout
from keras_laf.datasets import GraphBatches
from keras_laf.datasets import bucket_size
from keras_laf.datasets import check_graph_model
from keras_laf.datasets import disjoint_union
from keras_laf.datasets import graph_batches
from keras_laf.datasets import pad_graph_batch
from keras_laf.models import GraphModel
from keras_laf.models import graph_network

pytestmark = pytest.mark.multi_backend

ON_JAX = keras.config.backend() == "jax"


def random_graphs(num_graphs, seed=0, smallest=1, largest=6):
    rng = np.random.default_rng(seed)
    features, edges, node_labels = [], [], []
    for _ in range(num_graphs):
        n = int(rng.integers(smallest, largest + 1))
        features.append(rng.uniform(size=(n, 2)).astype("float32"))
        pairs = rng.integers(0, n, size=(int(rng.integers(0, 2 * n + 1)), 2))
        edges.append(pairs.astype("int32"))
        node_labels.append(rng.uniform(size=(n, 3)).astype("float32"))
    graph_labels = rng.uniform(size=(num_graphs, 3)).astype("float32")
    return features, edges, node_labels, graph_labels


def test_bucket_sizes():
    assert [bucket_size(n) for n in (0, 1, 16, 17, 33)] == [16, 16, 16, 32, 64]
    # 3, 5 (4.5 rounded up), 8 (7.5), 12
    assert bucket_size(10, smallest=3, growth=1.5) == 12
    with pytest.raises(ValueError, match="growth=1"):
        bucket_size(3, growth=1)
    with pytest.raises(ValueError, match="count=-1"):
        bucket_size(-1)


def test_padding_layout_by_hand():
    inputs, targets = disjoint_union(
        [np.ones((3, 1)), np.full((2, 1), 2.0)],
        [np.array([[0, 1], [1, 2]]), np.array([[1, 0]])],
        [np.ones((3, 1)), np.ones((2, 1))],
        np.ones((2, 1)),
        pad=False,
    )
    padded, padded_targets, weights = pad_graph_batch(
        inputs, targets, smallest=4
    )
    # 5 nodes + 1 padding -> 8; 3 edges -> 4; 2 graphs + 1 padding -> 4.
    np.testing.assert_array_equal(
        padded["node_features"][:, 0], [1, 1, 1, 2, 2, 0, 0, 0]
    )
    np.testing.assert_array_equal(padded["edge_source"], [0, 1, 4, 5])
    np.testing.assert_array_equal(padded["edge_target"], [1, 2, 3, 5])
    np.testing.assert_array_equal(
        padded["node_graph_ids"], [0, 0, 0, 1, 1, 2, 2, 2]
    )
    np.testing.assert_array_equal(padded["nodes_per_graph"], [3, 2, 3, 0])
    np.testing.assert_array_equal(
        weights["node_outputs"], np.float32([8 / 5] * 5 + [0] * 3)
    )
    np.testing.assert_array_equal(weights["graph_outputs"], [2, 2, 0, 0])
    np.testing.assert_array_equal(padded_targets["graph_outputs"][2:], 0)
    assert padded_targets["node_outputs"].shape == (8, 1)


def test_padding_bad_arguments():
    inputs = disjoint_union([np.ones((3, 1))], [np.array([[0, 1]])], pad=False)
    with pytest.raises(ValueError, match="num_nodes=3"):
        pad_graph_batch(inputs, num_nodes=3)
    with pytest.raises(ValueError, match="unknown keys"):
        pad_graph_batch({**inputs, "extra": np.zeros(3)})
    with pytest.raises(ValueError, match="targets"):
        pad_graph_batch(inputs, {"outputs": np.zeros((3, 1))})


def small_network(aggregation, convolution="message_passing"):
    keras.utils.set_random_seed(1)
    return graph_network(
        aggregation=aggregation,
        aggregation_kwargs={"units": 2} if aggregation == "laf" else {},
        hidden_units=4,
        num_layers=2,
        num_readout_layers=2,
        convolution=convolution,
    )


@pytest.mark.parametrize(
    "aggregation, convolution",
    [
        ("laf", "message_passing"),
        (["mean", "max", "std"], "message_passing"),
        ("softmax", "message_passing"),
        ("sum", "gin"),
        ("mean", "gcn"),
        ("max", "gat"),
    ],
)
def test_padded_batches_leave_outputs_and_loss_as_they_are(
    aggregation, convolution
):
    inputs, targets = disjoint_union(*random_graphs(4), pad=False)
    padded, padded_targets, weights = pad_graph_batch(inputs, targets)
    model = small_network(aggregation, convolution)
    model.compile(loss="mse")
    outputs = model.predict_on_batch(inputs)
    padded_outputs = model.predict_on_batch(padded)
    num_nodes = len(inputs["node_features"])
    num_graphs = len(inputs["nodes_per_graph"])
    np.testing.assert_allclose(
        padded_outputs["node_outputs"][:num_nodes],
        outputs["node_outputs"],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        padded_outputs["graph_outputs"][:num_graphs],
        outputs["graph_outputs"],
        rtol=1e-5,
        atol=1e-6,
    )
    assert np.isfinite(padded_outputs["node_outputs"]).all()
    assert np.isfinite(padded_outputs["graph_outputs"]).all()
    loss = model.test_on_batch(inputs, targets)
    padded_loss = model.test_on_batch(
        padded, padded_targets, sample_weight=weights
    )
    np.testing.assert_allclose(padded_loss, loss, rtol=1e-5)


def test_padding_gets_no_gradient():
    # Targets far off at padding: with zero weight they change nothing.
    inputs, targets = disjoint_union(*random_graphs(3, seed=4), pad=False)
    padded, padded_targets, weights = pad_graph_batch(inputs, targets)
    for name, rows in (
        ("node_outputs", len(inputs["node_features"])),
        ("graph_outputs", len(inputs["nodes_per_graph"])),
    ):
        padded_targets[name][rows:] = 1e3
    model = small_network("laf")
    model.compile(loss="mse")
    off = model.test_on_batch(padded, padded_targets, sample_weight=weights)
    np.testing.assert_allclose(
        off, model.test_on_batch(inputs, targets), rtol=1e-5
    )


def test_graph_batches_draw_every_graph_once_per_epoch():
    graphs = random_graphs(10, seed=2)
    batches = GraphBatches(*graphs, batch_size=4, shuffle=True, seed=0)
    assert len(batches) == 3

    def epoch_labels():
        labels = []
        for index in range(len(batches)):
            inputs, targets, weights = batches[index]
            real = weights["graph_outputs"] > 0
            labels.append(targets["graph_outputs"][real])
            assert inputs["node_features"].shape[0] % 16 == 0
        return np.concatenate(labels)

    first = epoch_labels()
    batches.on_epoch_end()
    second = epoch_labels()
    key = np.lexsort(graphs[3].T)
    for drawn in (first, second):
        np.testing.assert_array_equal(
            drawn[np.lexsort(drawn.T)], graphs[3][key]
        )
    assert not np.array_equal(first, second)
    with pytest.raises(IndexError):
        batches[3]


@pytest.fixture
def unwarned():
    """The warnings about unpadded batches not yet given in this process
    (the helpers that warned are forgotten, then restored)."""
    warned = graph_batches._WARNED_UNPADDED
    before = set(warned)
    warned.clear()
    yield
    warned.clear()
    warned.update(before)


@contextlib.contextmanager
def unpadded_warning(fix="padding"):
    """Expects the warning about unpadded batches on JAX, naming their
    cost and `fix`, and no warning at all on the other backends."""
    if not ON_JAX:
        with no_warning():
            yield
        return
    with pytest.warns(UserWarning) as record:
        yield
    message = str(record[0].message)
    assert "compiles once per distinct batch shape" in message
    assert fix in message


@contextlib.contextmanager
def no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_graph_batches_fit_and_unpadded_form(unwarned):
    graphs = random_graphs(6, seed=3)
    model = small_network("laf")
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(
        GraphBatches(*graphs, batch_size=4, shuffle=True, seed=0),
        epochs=2,
        verbose=0,
    )
    assert np.isfinite(history.history["loss"]).all()
    with unpadded_warning():
        batches = GraphBatches(*graphs, batch_size=4, pad=False)
    inputs, targets = batches[1]
    assert len(inputs["nodes_per_graph"]) == 2
    outputs = model.predict_on_batch(inputs)
    assert ops.shape(outputs["graph_outputs"]) == (2, 3)


@pytest.mark.parametrize(
    "make_unpadded, fix",
    [
        (lambda graphs: disjoint_union(*graphs), "Pass `pad=True`"),
        (lambda graphs: GraphBatches(*graphs, pad=False), "Leave `pad`"),
    ],
    ids=["disjoint_union", "GraphBatches"],
)
def test_unpadded_batches_warn_once_on_jax(unwarned, make_unpadded, fix):
    graphs = random_graphs(3)
    with unpadded_warning(fix):
        make_unpadded(graphs)
    # Once per process: not at the next batch.
    with no_warning():
        make_unpadded(graphs)


def test_padded_or_explicitly_unpadded_unions_never_warn(unwarned):
    graphs = random_graphs(3)
    with no_warning():
        disjoint_union(*graphs, pad=False)
        disjoint_union(*graphs, pad=True)
        GraphBatches(*graphs)


def test_padded_union_is_a_graph_batches_batch():
    graphs = random_graphs(5, seed=5)
    batch = disjoint_union(*graphs, pad=True)
    expected = GraphBatches(*graphs, batch_size=5)[0]
    assert len(batch) == 3
    for padded, reference in zip(batch, expected):
        assert sorted(padded) == sorted(reference)
        for name in padded:
            np.testing.assert_array_equal(padded[name], reference[name])
    inputs = disjoint_union(*graphs[:2], pad=True)
    np.testing.assert_array_equal(
        inputs["node_features"], expected[0]["node_features"]
    )
    with pytest.raises(ValueError, match="pad='yes'"):
        disjoint_union(*graphs, pad="yes")


@pytest.mark.skipif(
    not ON_JAX, reason="counts JAX's compilations of the training step"
)
def test_padded_batches_compile_once_per_bucket_on_jax():
    # Rings of 5 to 30 nodes, as many edges as nodes, 4 to a batch: the
    # unpadded batches take a shape each, the padded ones at most 4.
    rng = np.random.default_rng(0)
    sizes = rng.integers(5, 31, size=32)
    features = [rng.uniform(size=(n, 2)).astype("float32") for n in sizes]
    edges = [
        np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1) for n in sizes
    ]
    labels = rng.uniform(size=(len(sizes), 3)).astype("float32")
    batches = GraphBatches(
        features,
        edges,
        graph_labels=labels,
        batch_size=4,
        shuffle=True,
        seed=0,
    )
    real_nodes = {
        int(batches[index][0]["nodes_per_graph"][:4].sum())
        for index in range(len(batches))
    }
    assert len(real_nodes) > 4
    model = graph_network(
        num_node_outputs=1,
        aggregation_kwargs={"units": 2},
        hidden_units=4,
        num_layers=1,
        num_readout_layers=1,
    )
    model.compile(optimizer="adam", loss={"graph_outputs": "mse"})
    # `jax.jit` runs the Python of the step once per shape it compiles.
    traces = []
    train_step = model.train_step

    def counted_train_step(*args):
        traces.append(None)
        return train_step(*args)

    model.train_step = counted_train_step
    history = model.fit(batches, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    assert 1 <= len(traces) <= 4


def test_graph_model_fits_evaluates_and_predicts():
    features, edges, node_labels, graph_labels = random_graphs(7, seed=6)
    model = small_network("laf")
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(
        GraphBatches(
            features,
            edges,
            node_labels,
            graph_labels,
            batch_size=3,
            shuffle=True,
            seed=0,
        ),
        epochs=2,
        verbose=0,
    )
    assert np.isfinite(history.history["loss"]).all()
    # One padded batch of every graph: the loss of the union as it is.
    loss = model.evaluate(
        GraphBatches(features, edges, node_labels, graph_labels, batch_size=7),
        verbose=0,
    )
    union = disjoint_union(
        features, edges, node_labels, graph_labels, pad=False
    )
    np.testing.assert_allclose(loss, model.test_on_batch(*union), rtol=1e-5)
    # Predictions of 3 batches, padding dropped, in the graphs' order.
    batches = GraphBatches(features, edges, batch_size=3)
    predictions = batches.unpad(model.predict(batches, verbose=0))
    expected = model.predict_on_batch(union[0])
    for name in ("node_outputs", "graph_outputs"):
        np.testing.assert_allclose(
            predictions[name], expected[name], rtol=1e-5, atol=1e-6
        )


def test_unpad_bad_arguments():
    graphs = random_graphs(3)
    batches = GraphBatches(*graphs)
    inputs, _, _ = batches[0]
    predictions = {
        "node_outputs": np.zeros((len(inputs["node_features"]), 3)),
        "graph_outputs": np.zeros((16, 3)),
    }
    unpadded = batches.unpad(predictions)
    assert unpadded["node_outputs"].shape == (sum(map(len, graphs[0])), 3)
    assert unpadded["graph_outputs"].shape == (3, 3)
    with pytest.raises(ValueError, match="shuffle=False"):
        GraphBatches(*graphs, shuffle=True).unpad(predictions)
    with pytest.raises(ValueError, match=r"Received: \['outputs'\]"):
        batches.unpad({"outputs": np.zeros((16, 3))})
    with pytest.raises(ValueError, match="Received: ndarray"):
        batches.unpad(np.zeros((16, 3)))
    # One row per graph already (a `GraphModel`'s predictions): as they are.
    as_they_are = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(
        batches.unpad({"graph_outputs": as_they_are})["graph_outputs"],
        as_they_are,
    )
    with pytest.raises(ValueError, match="16 rows.*Received: 4 rows"):
        batches.unpad({"graph_outputs": np.zeros((4, 3))})


def edge_features_of(edges, seed=0, width=2):
    rng = np.random.default_rng(seed)
    return [rng.uniform(size=(len(e), width)).astype("float32") for e in edges]


def test_edge_features_follow_their_edges_through_union_and_padding():
    features = [np.ones((2, 1)), np.ones((3, 1))]
    edges = [np.array([[0, 1], [1, 0]]), np.array([[2, 0]])]
    edge_features = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0]])]
    inputs = disjoint_union(
        features, edges, edge_features=edge_features, pad=False
    )
    # By hand: graph 1's edge (2, 0) becomes (4, 2), its row after graph 0's.
    np.testing.assert_array_equal(inputs["edge_source"], [0, 1, 4])
    np.testing.assert_array_equal(
        inputs["edge_features"], [[1, 2], [3, 4], [5, 6]]
    )
    assert inputs["edge_features"].dtype == "float32"
    padded, _, _ = pad_graph_batch(inputs, num_edges=5)
    np.testing.assert_array_equal(
        padded["edge_features"], [[1, 2], [3, 4], [5, 6], [0, 0], [0, 0]]
    )
    no_features = disjoint_union(features, edges, pad=False)
    assert "edge_features" not in no_features


def test_graph_batches_carry_each_edge_its_features():
    features, edges, _, graph_labels = random_graphs(7, seed=3)
    edge_features = edge_features_of(edges)
    batches = GraphBatches(
        features,
        edges,
        graph_labels=graph_labels,
        edge_features=edge_features,
        batch_size=3,
        shuffle=True,
        seed=1,
    )
    for index in range(len(batches)):
        inputs, _, _ = batches[index]
        graphs = batches._order[index * 3 : (index + 1) * 3]
        expected = np.concatenate([edge_features[g] for g in graphs])
        real = len(expected)
        np.testing.assert_array_equal(inputs["edge_features"][:real], expected)
        np.testing.assert_array_equal(inputs["edge_features"][real:], 0.0)
        assert len(inputs["edge_features"]) == len(inputs["edge_source"])


@pytest.mark.parametrize(
    "edge_features, match",
    [
        ([np.zeros((2, 2))], "one entry per graph. Received: 1 entries"),
        (
            [np.zeros((2, 2)), np.zeros((2, 2))],
            r"graph 1 .*per edge, 1.*edge_features\[1\].shape=\(2, 2\)",
        ),
        (
            [np.zeros((2, 2)), np.zeros((1, 3))],
            r"graph 1 .*edge_features\[1\].shape=\(1, 3\)",
        ),
        (
            [np.zeros(2), np.zeros((1, 2))],
            r"graph 0 .*edge_features\[0\].shape=\(2,\)",
        ),
    ],
)
def test_bad_edge_features_name_their_graph(edge_features, match):
    features = [np.ones((2, 1)), np.ones((3, 1))]
    edges = [np.array([[0, 1], [1, 0]]), np.array([[2, 0]])]
    with pytest.raises(ValueError, match=match):
        disjoint_union(features, edges, edge_features=edge_features, pad=False)
    with pytest.raises(ValueError, match=match):
        GraphBatches(features, edges, edge_features=edge_features)
    inputs = disjoint_union(features, edges, pad=False)
    with pytest.raises(ValueError, match=r"one row per edge, 3.*\(2, 2\)"):
        pad_graph_batch({**inputs, "edge_features": np.zeros((2, 2))})


def graph_inputs(num_node_features=2, num_edge_features=None):
    inputs = {
        "node_features": keras.Input((num_node_features,), name="node_features")
    }
    for name in GRAPH_INDEX_INPUTS:
        inputs[name] = keras.Input((), dtype="int32", name=name)
    if num_edge_features is not None:
        inputs["edge_features"] = keras.Input(
            (num_edge_features,), name="edge_features"
        )
    return inputs


GRAPH_INDEX_INPUTS = (
    "edge_source",
    "edge_target",
    "node_graph_ids",
    "nodes_per_graph",
)


def pooled(inputs):
    # (num_graphs, 1): a dense layer of each graph's summed node features.
    return keras.layers.Dense(1)(
        GraphReadout("sum")(
            inputs["node_features"],
            inputs["node_graph_ids"],
            nodes_per_graph=inputs["nodes_per_graph"],
        )
    )


def mismatched_model(kind, model_class=keras.Model):
    # A model of graph batches with bond features (2 per edge) but for one
    # mismatch, `kind`.
    inputs = graph_inputs(
        num_edge_features={"undeclared input": None, "input width": 3}.get(
            kind, 2
        )
    )
    outputs = {
        "single output": pooled(inputs),
        "other name": {"y": pooled(inputs)},
    }.get(kind, {"graph_outputs": pooled(inputs)})
    return model_class(inputs, outputs)


@pytest.mark.parametrize(
    "kind, match",
    [
        ("undeclared input", r"holds the input 'edge_features' .* not declare"),
        (
            "input width",
            r"input 'edge_features' takes the shape \(None, 3\).*\(16, 2\)",
        ),
        ("single output", r"outputs must be a dict.*Received: .*KerasTensor"),
        ("other name", r"outputs must be a dict.*model's outputs \['y'\]"),
    ],
)
def test_a_mismatched_model_is_named(kind, match):
    features, edges, _, graph_labels = random_graphs(3)
    batches = GraphBatches(
        features,
        edges,
        graph_labels=graph_labels,
        edge_features=edge_features_of(edges),
    )
    model = mismatched_model(kind)
    with pytest.raises(ValueError, match=match):
        check_graph_model(model, batches[0])
    with pytest.raises(ValueError, match=match):
        batches.predict(model, verbose=0)
    graph_model = mismatched_model(kind, GraphModel)
    graph_model.compile("adam", "mse")
    with pytest.raises(ValueError, match=match):
        graph_model.fit(batches, verbose=0)
    with pytest.raises(ValueError, match=match):
        graph_model.predict(batches[0][0], verbose=0)


def test_a_target_without_an_output_and_a_missing_input_are_named():
    features, edges, node_labels, graph_labels = random_graphs(3)
    batch = GraphBatches(features, edges, node_labels, graph_labels)[0]
    inputs = graph_inputs()
    model = keras.Model(inputs, {"graph_outputs": pooled(inputs)})
    with pytest.raises(ValueError, match="target 'node_outputs'"):
        check_graph_model(model, batch)
    check_graph_model(model, batch[0])
    with_edges = graph_inputs(num_edge_features=2)
    model = keras.Model(with_edges, {"graph_outputs": pooled(with_edges)})
    with pytest.raises(ValueError, match="declares the input 'edge_features'"):
        check_graph_model(model, batch)


def test_graph_model_predicts_one_row_per_graph():
    features, edges, _, _ = random_graphs(21, seed=5)
    edge_features = edge_features_of(edges)
    inputs = graph_inputs(num_edge_features=2)
    model = GraphModel(inputs, {"graph_outputs": pooled(inputs)})
    union = disjoint_union(
        features, edges, edge_features=edge_features, pad=False
    )
    expected = ops.convert_to_numpy(
        model.predict_on_batch(union)["graph_outputs"]
    )
    batches = GraphBatches(
        features, edges, edge_features=edge_features, batch_size=8
    )
    # PyTorch Geometric's layout of the same edges, (2, E).
    with_edge_index = {
        name: value
        for name, value in union.items()
        if name not in ("edge_source", "edge_target")
    }
    with_edge_index["edge_index"] = np.stack(
        [union["edge_source"], union["edge_target"]]
    )
    for predictions in (
        model.predict(union, verbose=0),
        model.predict(with_edge_index, verbose=0),
        model.predict(batches, verbose=0),
        batches.predict(model, verbose=0),
    ):
        assert predictions["graph_outputs"].shape == (21, 1)
        np.testing.assert_allclose(
            predictions["graph_outputs"], expected, rtol=1e-5, atol=1e-5
        )
    # By hand: the readout sums each graph's node features, then Dense.
    kernel, bias = (ops.convert_to_numpy(w) for w in model.layers[-1].weights)
    sums = np.stack([f.sum(axis=0) for f in features])
    np.testing.assert_allclose(expected, sums @ kernel + bias, rtol=1e-5)

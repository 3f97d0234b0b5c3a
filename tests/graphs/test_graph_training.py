"""A graph network with LAF beside max in one `MultiAggregation` trains
on random graphs whose nodes often have no incoming edges, on every
backend.

Such a node aggregates the empty set, where LAF gives 0. Had it taken
the formula with 0^0 = 1 there, it would give the numerator's
coefficients over epsilon (1e7) once training moved the denominator's
outer exponents off 0, and the epoch losses would reach 1e9 and more.
"""

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf.datasets import GraphBatches

pytestmark = pytest.mark.multi_backend


def random_graphs(seed, num_graphs=64):
    """Graphs of 5..40 nodes with as many random directed edges, so that
    about a third of the nodes have no incoming edge; three graph labels:
    the number of nodes, of nodes without incoming edges, and the largest
    first feature."""
    rng = np.random.default_rng(seed)
    features, edges, labels = [], [], []
    for _ in range(num_graphs):
        n = int(rng.integers(5, 41))
        features.append(rng.normal(size=(n, 2)).astype("float32"))
        edges.append(rng.integers(0, n, size=(n, 2)).astype("int32"))
        lone = np.sum(np.bincount(edges[-1][:, 1], minlength=n) == 0)
        labels.append([n / 10, lone / 10, features[-1][:, 0].max()])
    return features, edges, np.float32(labels)


def network(make_aggregation):
    """Two `AggregationConv` layers, each with its own aggregation from
    `make_aggregation()`, a mean readout and three graph outputs."""
    inputs = {
        "node_features": keras.Input((2,), name="node_features"),
        "edge_source": keras.Input((), dtype="int32", name="edge_source"),
        "edge_target": keras.Input((), dtype="int32", name="edge_target"),
        "node_graph_ids": keras.Input((), dtype="int32", name="node_graph_ids"),
        "nodes_per_graph": keras.Input(
            (), dtype="int32", name="nodes_per_graph"
        ),
    }
    states = keras.layers.Dense(16, activation="leaky_relu", name="embedding")(
        inputs["node_features"]
    )
    for index in range(2):
        states = keras_laf.AggregationConv(
            16, aggregation=make_aggregation(), name=f"convolution_{index + 1}"
        )(states, inputs["edge_source"], inputs["edge_target"])
    graph_states = keras_laf.GraphReadout("mean", name="readout")(
        states,
        inputs["node_graph_ids"],
        nodes_per_graph=inputs["nodes_per_graph"],
    )
    outputs = keras.layers.Dense(3, name="graph_outputs")(graph_states)
    return keras.Model(inputs, {"graph_outputs": outputs}, name="network")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "mode, units", [("proj", 16), ("cat", None)], ids=["proj", "cat"]
)
def test_laf_beside_max_trains(mode, units, seed):
    keras.utils.set_random_seed(seed)
    features, edges, labels = random_graphs(seed)
    model = network(
        lambda: keras_laf.MultiAggregation(
            [keras_laf.LAF(4), "max"], mode=mode, units=units
        )
    )
    model.compile(keras.optimizers.Adam(3e-3), loss="mse")
    batches = GraphBatches(
        features,
        edges,
        graph_labels=labels,
        batch_size=16,
        shuffle=True,
        seed=seed,
    )
    losses = model.fit(batches, epochs=4, verbose=0).history["loss"]
    # Predicting the labels' means scores about 0.5.
    assert max(losses) < 100, losses

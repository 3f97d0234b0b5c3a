"""The networks of the graph-properties benchmark, their batches and their
scores (`keras-laf graphs`).

Every method is `keras_laf.models.graph_network` with the method's
aggregation of `laf_experiments.methods` (PNA: its four neighbourhood
aggregators), its message-passing layer and PNA's degree scalers where
the method has them; `baseline` is no network but the training labels'
means. A run's score on a test split is the log10 of each task's mean
squared error on normalised labels.
"""

import math

import numpy as np

from laf_experiments import methods
from laf_experiments.data.constants import GRAPH_TASKS
from laf_experiments.data.constants import NODE_TASKS

TASKS = NODE_TASKS + GRAPH_TASKS
# The record of the benchmark's score, the mean log10 MSE of the tasks.
AVERAGE = "average"
BASELINE = "baseline"
# The graph readout: a fixed aggregation shared by every method, or each
# method's own aggregation ("method").
READOUTS = ("mean", "sum", "max", "method")
# The message-passing layer of the methods that are graph convolutions
# (`graph_network`'s `convolution`); the others pass messages with their
# aggregation, with PNA's degree scalers where `SCALERS` gives them.
CONVOLUTIONS = {"gin": "gin", "gcn": "gcn", "gat": "gat"}
SCALERS = {"pna": ("identity", "amplification", "attenuation")}
PREDICT_BATCH_SIZE = 128


def graph_method(name):
    """The method `name` of `laf_experiments.methods` in the graph
    models, where PNA is its four neighbourhood aggregators."""
    return methods.NEIGHBOURHOOD_PNA if name == "pna" else methods.METHODS[name]


def build_model(
    method,
    laf_units,
    hidden_units,
    num_layers,
    readout,
    degree_histogram,
    laf_preset=None,
):
    """The benchmark's network with the method's neighbour aggregation.

    Args:
        method: a method of `keras-laf graphs` but `"baseline"` (see
            `baseline_model`).
        laf_units: LAF units of each layer (LAF only).
        hidden_units: the node state size.
        num_layers: the number of message-passing layers.
        readout: one of `READOUTS`.
        degree_histogram: the number of training nodes of each in-degree
            (`keras_laf.degree_histogram`), the scalers' statistics.
        laf_preset: the preset of the LAF layers. Defaults to `None`: the
            layer's default.
    """
    from keras_laf.models import graph_network
    from keras_laf.models.building_blocks import with_laf_arguments

    aggregation, aggregation_kwargs = graph_method(method).spec()
    return graph_network(
        aggregation=aggregation,
        # LAF's units and preset (for a list, those of its LAF member).
        aggregation_kwargs={
            **with_laf_arguments(
                aggregation, units=laf_units, preset=laf_preset
            ),
            **aggregation_kwargs,
        },
        hidden_units=hidden_units,
        num_layers=num_layers,
        scalers=SCALERS.get(method, ("identity",)),
        degree_histogram=degree_histogram,
        readout_aggregation=None if readout == "method" else readout,
        convolution=CONVOLUTIONS.get(method, "message_passing"),
        name=f"graph_network_{method}",
    )


def training_degree_histogram(graphs):
    """The in-degree histogram of the training `PropertyGraphs`, the
    statistics of PNA's scalers (`keras_laf.degree_histogram`)."""
    from keras_laf import degree_histogram

    inputs, _ = graphs.batch()
    return degree_histogram(
        inputs["edge_target"], num_nodes=len(inputs["node_features"])
    )


def baseline_model(graphs):
    """PNA's baseline: predicts the mean training label of every task.

    Args:
        graphs: the training `PropertyGraphs`, with normalised labels.

    Returns:
        A `keras.Model` with the inputs and outputs of `graph_network`
        whose outputs are constants: the mean over the training nodes of
        each node label and over the training graphs of each graph label.
    """
    import keras

    node_means = np.mean(np.concatenate(graphs.node_labels), axis=0)
    graph_means = np.mean(graphs.graph_labels, axis=0)
    inputs = {
        "node_features": keras.Input((None,), name="node_features"),
        "edge_source": keras.Input((), dtype="int32", name="edge_source"),
        "edge_target": keras.Input((), dtype="int32", name="edge_target"),
        "node_graph_ids": keras.Input((), dtype="int32", name="node_graph_ids"),
        "nodes_per_graph": keras.Input(
            (), dtype="int32", name="nodes_per_graph"
        ),
    }

    def constant_rows(per_row, means):
        # (rows, tasks): `means` repeated once per entry of `per_row`.
        rows = keras.ops.ones_like(keras.ops.cast(per_row, "float32"))[:, None]
        return rows * keras.ops.convert_to_tensor(means, "float32")[None]

    node_outputs = keras.layers.Lambda(
        lambda ids: constant_rows(ids, node_means), name="node_outputs"
    )(inputs["node_graph_ids"])
    graph_outputs = keras.layers.Lambda(
        lambda counts: constant_rows(counts, graph_means),
        name="graph_outputs",
    )(inputs["nodes_per_graph"])
    return keras.Model(
        inputs,
        {"node_outputs": node_outputs, "graph_outputs": graph_outputs},
        name="graph_baseline",
    )


def graph_batches(graphs, batch_size, shuffle=False, seed=None):
    """The batches of `PropertyGraphs` that `fit` trains on.

    Where a compiled step needs static shapes
    (`keras_laf.core.backend.needs_static_shapes`: JAX, where every batch
    shape is a compilation), the disjoint unions padded to a few sizes
    with sample weights that keep padding out of the loss
    (`keras_laf.datasets.GraphBatches`); elsewhere the `tf.data` pipeline
    of `PropertyGraphs.to_dataset`, whose unions run as they are, without
    the padding's extra work.
    """
    from keras_laf.core import backend
    from keras_laf.datasets import GraphBatches

    if not backend.needs_static_shapes():
        return graphs.to_dataset(batch_size, shuffle=shuffle, seed=seed)
    return GraphBatches(
        graphs.node_features,
        graphs.edges,
        graphs.node_labels,
        graphs.graph_labels,
        batch_size=batch_size,
        shuffle=shuffle,
        seed=seed,
    )


def predictions(model, graphs, batch_size):
    """The model's node and graph outputs on `PropertyGraphs`, in order:
    a dict of `"node_outputs"` and `"graph_outputs"` arrays."""
    from keras_laf.core import backend

    batches = graph_batches(graphs, batch_size)
    predicted = model.predict(batches, verbose=0)
    if backend.needs_static_shapes():
        # The padding's rows dropped.
        return batches.unpad(predicted)
    return predicted


def task_errors(model, graphs, batch_size=PREDICT_BATCH_SIZE):
    """The mean squared error of each task of the benchmark.

    Args:
        model: a model of `graph_network` with 3 node and 3 graph outputs.
        graphs: a `PropertyGraphs`, with normalised labels.
        batch_size: int. Graphs per prediction batch. Defaults to
            `PREDICT_BATCH_SIZE`.

    Returns:
        A dict: the MSE of each task of `NODE_TASKS` (over all nodes) and
        `GRAPH_TASKS` (over all graphs).
    """
    predicted = predictions(model, graphs, batch_size)
    node_labels = np.concatenate(graphs.node_labels)
    node_errors = np.mean((predicted["node_outputs"] - node_labels) ** 2, 0)
    graph_errors = np.mean(
        (predicted["graph_outputs"] - graphs.graph_labels) ** 2, 0
    )
    return {
        task: float(error)
        for task, error in zip(TASKS, [*node_errors, *graph_errors])
    }


def split_name(low, high):
    """The name of the test split of node counts `[low, high)`."""
    return f"{low}-{high - 1}"


def test_scores(model, splits, test_sizes):
    """The MSE and log10 MSE of every task on every test split.

    Args:
        model: a trained model of `build_model` or `baseline_model`.
        splits: the benchmark's splits (`make_graph_property_splits`).
        test_sizes: the `(low, high)` node counts of the test splits.

    Returns:
        A list, one dict per test split: its `split` name, `min_nodes`,
        `max_nodes`, `mse` of each task and `log10_mse` of each task and
        `AVERAGE`, the mean of the tasks' log10 MSE (NaN for an MSE of 0
        or NaN).
    """
    test = []
    for low, high in test_sizes:
        errors = task_errors(model, splits[f"test-({low},{high})"])
        log10_mse = {
            task: math.log10(error) if error > 0 else float("nan")
            for task, error in errors.items()
        }
        log10_mse[AVERAGE] = float(
            np.mean(np.log10([errors[task] for task in TASKS]))
        )
        test.append(
            {
                "split": split_name(low, high),
                "min_nodes": low,
                "max_nodes": high - 1,
                "mse": errors,
                "log10_mse": log10_mse,
            }
        )
    return test

"""A message-passing network for the graph-properties benchmark.

The model of Section 4.5 of the LAF paper (Pellegrini et al., IJCAI 2021):
the multi-task network of Corso et al. (PNA, NeurIPS 2020) with its
neighbour aggregation replaced by LAF units (or by fixed aggregators with
PNA's scalers, for the baselines). It predicts three node properties and
three graph properties of a batch of graphs jointly (the benchmark is in
`laf_experiments.datasets.graph_properties`).

`laf_experiments.graphs` trains it on the benchmark and scores every task.
"""

import keras

from keras_laf.aggregations import DegreeScalerAggregation
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.base import expects_unit_interval
from keras_laf.graphs.base import resolve_aggregation
from keras_laf.graphs.convolutions import GATConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.message_passing import AggregationConv
from keras_laf.graphs.readout import GraphReadout

UPDATES = ("gru", "residual", "none")
# The message-passing layer of the network: `AggregationConv` with the
# `aggregation`, or one of the graph convolutions of the paper's baselines.
CONVOLUTIONS = ("message_passing", "gin", "gcn", "gat")


def _copy(aggregation):
    # Each layer gets its own weights: a layer passed in is a template,
    # copied from its config; names and lists make new layers anyway.
    if isinstance(aggregation, keras.layers.Layer):
        return aggregation.__class__.from_config(aggregation.get_config())
    return aggregation


def _unscaled(aggregation):
    # The aggregation inside PNA's scalers: the readout's default.
    if isinstance(aggregation, DegreeScalerAggregation):
        return aggregation.aggregation
    return aggregation


def _mlp(inputs, hidden_units, num_outputs, num_layers, name):
    # (num_layers - 1) hidden LeakyReLU layers, then a linear output.
    hidden = inputs
    for index in range(num_layers - 1):
        hidden = keras.layers.Dense(
            hidden_units,
            activation="leaky_relu",
            name=f"{name}_dense_{index + 1}",
        )(hidden)
    return keras.layers.Dense(num_outputs, name=name)(hidden)


def graph_network(
    num_node_features=2,
    num_node_outputs=3,
    num_graph_outputs=3,
    aggregation="laf",
    laf_units=100,
    laf_preset=None,
    hidden_units=16,
    message_units=None,
    num_layers=4,
    scalers=("identity",),
    degree_histogram=None,
    average_log_degree=None,
    update="gru",
    readout_aggregation=None,
    num_readout_layers=3,
    dropout=0.0,
    convolution="message_passing",
    num_heads=4,
    name="graph_network",
):
    """Builds the multi-task message-passing network of the benchmark.

    Node features are embedded into `hidden_units`, then `num_layers`
    `keras_laf.AggregationConv` layers update the nodes, each followed by a
    GRU update (PNA's benchmark model: the layer's output is the GRU's
    input and the node's previous state its state), a residual sum, or
    nothing. Node outputs come from an MLP on the final node states;
    graph outputs from an MLP on a `keras_laf.GraphReadout` of them.

    With `convolution="gin"`, `"gcn"` or `"gat"` the message-passing
    layers are `keras_laf.GINConv`, `GCNConv` or `GATConv` instead (the
    GIN, GCN and GAT baselines of PNA's and LAF's benchmark tables), with
    `hidden_units` outputs and LeakyReLU activations (GIN: in its MLP;
    GAT: `num_heads` heads averaged); `aggregation` then sets only the
    readout (when `readout_aggregation` is None).

    Differences from PNA's benchmark model: a fixed number of layers with
    separate weights (PNA's best runs share the weights of one layer
    applied n/2 times), no towers, and a segment-aggregation readout
    instead of Set2Set.

    The inputs and outputs are dicts in the disjoint-union form of
    `keras_laf.datasets.disjoint_union`, whose leading
    dimensions are the numbers of nodes, edges and graphs of the batch;
    `keras_laf.datasets.GraphBatches` yields batches for `fit`, `evaluate`
    and `predict`, padded to a few sizes (`GraphBatches.unpad` drops the
    padding's rows from the predictions). For one union, call
    `model.predict_on_batch(inputs)`: `model.predict(inputs)` fails inside
    Keras on arrays of different lengths (see `disjoint_union`). The
    readout takes the number of graphs from the length of
    the input `nodes_per_graph`, a shape, so the model fits on JAX too,
    whose traces need shapes known (TF-GNN's `GraphTensor` carries the
    same sizes). Compile with `jit_compile` left at `"auto"` (or `False`):
    the layers run on a batch-dependent number of nodes, which XLA would
    recompile for.

    Args:
        num_node_features: int. Input features per node. Defaults to `2`.
        num_node_outputs: int. Node tasks. Defaults to `3`.
        num_graph_outputs: int. Graph tasks. Defaults to `3`.
        aggregation: the neighbour aggregation of `AggregationConv`: a
            name or list of names of `keras_laf.aggregations.get` (`"laf"`,
            `"sum"`, `"mean"`, `"max"`, PNA's
            `["mean", "max", "min", "std"]`, ...) or an aggregation layer
            (`keras_laf.LAF(8, preset="closed_forms")`,
            `keras_laf.SoftmaxAggregation(learn=True)`, a
            `keras_laf.DegreeScalerAggregation`, ...), which each layer
            gets a copy of (from its config, so they share no weights).
            Defaults to `"laf"`.
        laf_units: int. LAF units of each layer (and of a LAF readout),
            where the aggregation is given by name. Defaults to `100`, as
            in the paper.
        laf_preset: str. The `keras_laf.LAF` preset (`"pooling"`,
            `"closed_forms"` or `"paper"`, see `keras_laf.presets`) of the
            LAF aggregations given by name. Defaults to `None`: the
            layer's default.
        hidden_units: int. Node state size. Defaults to `16`, as PNA.
        message_units: int. Message size. Defaults to `hidden_units`.
        num_layers: int. Message-passing layers. Defaults to `4`.
        scalers: list of str, PNA's degree scalers (`"identity"`,
            `"amplification"`, `"attenuation"`, `"linear"`,
            `"inverse_linear"`): each layer's aggregation is wrapped in a
            `keras_laf.DegreeScalerAggregation` with them. Defaults to
            `("identity",)`, no wrapper; PNA uses the first three.
        degree_histogram: array `(max_degree + 1,)`, the number of
            training nodes of each in-degree, from
            `keras_laf.degree_histogram`: the scalers' statistics. Needed
            by scalers other than `"identity"`, unless
            `average_log_degree` is given. Defaults to `None`.
        average_log_degree: float. The scalers' delta, the mean of
            `log(degree + 1)` over the training nodes, instead of
            `degree_histogram`. Defaults to `None`.
        update: str. `"gru"`, `"residual"` or `"none"`. Defaults to
            `"gru"`.
        readout_aggregation: the aggregation of the graph readout, a name,
            a list or a layer (copied, as `aggregation`). Defaults to
            `aggregation`, without PNA's scalers. A LAF readout gets a
            sigmoid dense layer before it.
        num_readout_layers: int. Dense layers of each output MLP.
            Defaults to `3`, as PNA.
        dropout: float. Dropout rate between message-passing layers.
            Defaults to `0.0`.
        convolution: str. The message-passing layers:
            `"message_passing"` (`AggregationConv` with `aggregation`),
            `"gin"`, `"gcn"` or `"gat"`. Defaults to `"message_passing"`.
        num_heads: int. Attention heads of `"gat"`, averaged. Defaults
            to `4`.
        name: str. The model's name. Defaults to `"graph_network"`.

    Returns:
        An uncompiled `keras.Model` with inputs `{"node_features":
        (num_nodes, num_node_features), "edge_source": (num_edges,),
        "edge_target": (num_edges,), "node_graph_ids": (num_nodes,),
        "nodes_per_graph": (num_graphs,)}` (indices and counts int32) and
        outputs `{"node_outputs": (num_nodes, num_node_outputs),
        "graph_outputs": (num_graphs, num_graph_outputs)}`.

    Example:

    >>> model = graph_network(aggregation="sum", num_layers=2)
    >>> model.compile("adam", loss="mse")
    >>> inputs = keras_laf.datasets.disjoint_union(
    ...     [np.ones((3, 2)), np.ones((2, 2))],
    ...     [np.array([[0, 1], [1, 2]]), np.zeros((0, 2), "int32")],
    ... )
    >>> tuple(model(inputs)["graph_outputs"].shape)
    (2, 3)
    """
    num_node_features = check_positive_int(
        "num_node_features", num_node_features
    )
    num_node_outputs = check_positive_int("num_node_outputs", num_node_outputs)
    num_graph_outputs = check_positive_int(
        "num_graph_outputs", num_graph_outputs
    )
    hidden_units = check_positive_int("hidden_units", hidden_units)
    num_layers = check_positive_int("num_layers", num_layers)
    num_readout_layers = check_positive_int(
        "num_readout_layers", num_readout_layers
    )
    num_heads = check_positive_int("num_heads", num_heads)
    if convolution not in CONVOLUTIONS:
        raise ValueError(
            f"`convolution` must be one of {CONVOLUTIONS}. "
            f"Received: convolution={convolution!r}"
        )
    if update not in UPDATES:
        raise ValueError(
            f"`update` must be one of {UPDATES}. Received: update={update!r}"
        )
    check_number("dropout", dropout, minimum=0, below=1)
    if readout_aggregation is None:
        readout_aggregation = _unscaled(aggregation)
    laf_shortcuts = {"laf_units": laf_units, "laf_preset": laf_preset}
    if isinstance(aggregation, keras.layers.Layer):
        # A layer has its own units and preset.
        laf_shortcuts = {"laf_units": None, "laf_preset": None}
    if list(scalers) != ["identity"] and convolution == "message_passing":
        # PNA's scalers around each layer's aggregation.
        *_, scaled = resolve_aggregation(
            aggregation,
            laf_shortcuts["laf_units"],
            laf_shortcuts["laf_preset"],
            dtype=None,
        )
        aggregation = DegreeScalerAggregation(
            scaled,
            scalers,
            degree_histogram=degree_histogram,
            average_log_degree=average_log_degree,
            name="degree_scaler",
        )
        laf_shortcuts = {"laf_units": None, "laf_preset": None}

    inputs = {
        "node_features": keras.Input(
            shape=(num_node_features,), name="node_features"
        ),
        "edge_source": keras.Input(shape=(), dtype="int32", name="edge_source"),
        "edge_target": keras.Input(shape=(), dtype="int32", name="edge_target"),
        "node_graph_ids": keras.Input(
            shape=(), dtype="int32", name="node_graph_ids"
        ),
        # Its length is the number of graphs of the batch.
        "nodes_per_graph": keras.Input(
            shape=(), dtype="int32", name="nodes_per_graph"
        ),
    }
    # (num_nodes, hidden_units)
    states = keras.layers.Dense(hidden_units, name="node_embedding")(
        inputs["node_features"]
    )
    gru = None
    if update == "gru":
        # One GRU shared by all layers, as in PNA.
        gru = keras.layers.GRUCell(hidden_units, name="gru")
    for index in range(num_layers):
        layer_name = f"{convolution}_{index + 1}"
        if convolution == "gin":
            layer = GINConv(
                hidden_units, activation="leaky_relu", name=layer_name
            )
        elif convolution == "gcn":
            layer = GCNConv(
                hidden_units, activation="leaky_relu", name=layer_name
            )
        elif convolution == "gat":
            layer = GATConv(
                hidden_units,
                num_heads=num_heads,
                concat_heads=False,
                activation="leaky_relu",
                name=layer_name,
            )
        else:
            layer = AggregationConv(
                hidden_units,
                aggregation=_copy(aggregation),
                message_units=message_units,
                name=layer_name,
                **laf_shortcuts,
            )
        outputs = layer(states, inputs["edge_source"], inputs["edge_target"])
        if update == "gru":
            states, _ = gru(outputs, [states])
        elif update == "residual":
            states = keras.layers.Add(name=f"residual_{index + 1}")(
                [states, outputs]
            )
        else:
            states = outputs
        if dropout and index < num_layers - 1:
            states = keras.layers.Dropout(dropout, name=f"dropout_{index + 1}")(
                states
            )

    node_outputs = _mlp(
        states,
        hidden_units,
        num_node_outputs,
        num_readout_layers,
        "node_outputs",
    )
    readout_laf_shortcuts = {"laf_units": laf_units, "laf_preset": laf_preset}
    if isinstance(readout_aggregation, keras.layers.Layer):
        readout_laf_shortcuts = {"laf_units": None, "laf_preset": None}
    readout = GraphReadout(
        _copy(readout_aggregation),
        name="graph_readout",
        **readout_laf_shortcuts,
    )
    readout_inputs = states
    if expects_unit_interval(readout._aggregation):
        readout_inputs = keras.layers.Dense(
            hidden_units, activation="sigmoid", name="readout_projection"
        )(states)
    graph_states = readout(
        readout_inputs,
        inputs["node_graph_ids"],
        nodes_per_graph=inputs["nodes_per_graph"],
    )
    graph_outputs = _mlp(
        graph_states,
        hidden_units,
        num_graph_outputs,
        num_readout_layers,
        "graph_outputs",
    )
    return keras.Model(
        inputs,
        {"node_outputs": node_outputs, "graph_outputs": graph_outputs},
        name=name,
    )

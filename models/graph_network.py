"""A message-passing network for the graph-properties benchmark.

The model of Section 4.5 of the LAF paper (Pellegrini et al., IJCAI 2021):
the multi-task network of Corso et al. (PNA, NeurIPS 2020) with its
neighbour aggregation replaced by LAF units (or by fixed aggregators with
PNA's scalers, for the baselines). It predicts three node properties and
three graph properties of a batch of graphs jointly (the benchmark is in
`laf_experiments.data.graph_properties`).

`laf_experiments.commands.graphs` trains it on the benchmark and scores
every task.
"""

import keras

from keras_laf import compat
from keras_laf.aggregations import DegreeScalerAggregation
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.aggregation_conv import AggregationConv
from keras_laf.graphs.convolutions import GATConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.message_passing import GraphConvolution
from keras_laf.graphs.readout import GraphReadout
from keras_laf.models.building_blocks import with_laf_arguments
from keras_laf.models.graph_model import GraphModel

UPDATES = ("gru", "residual", "none")
# The message-passing layers by name: the paper's `AggregationConv`, which
# takes the network's aggregation, and the baselines' convolutions, which
# keep their own (GIN sums, GCN normalises, GAT attends).
CONVOLUTIONS = {
    "message_passing": AggregationConv,
    "gin": GINConv,
    "gcn": GCNConv,
    "gat": GATConv,
}
# The LAF of the paper's network: `aggregation_kwargs` of `"laf"`.
PAPER_LAF_KWARGS = {"units": 100}


def _copy(layer, name=None):
    # Each layer gets its own weights: a layer passed in is a template,
    # copied from its config; names and lists make new layers anyway.
    if not isinstance(layer, keras.layers.Layer):
        return layer
    config = layer.get_config()
    if name is not None:
        config["name"] = name
    return layer.__class__.from_config(config)


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


def _convolution_factory(convolution, hidden_units, message_units, num_heads):
    """A function of (aggregation, its arguments, name) giving one of the
    network's message-passing layers."""
    if isinstance(convolution, keras.layers.Layer):
        return lambda aggregation, arguments, name: _copy(convolution, name)
    if isinstance(convolution, str) and convolution in CONVOLUTIONS:
        convolution = CONVOLUTIONS[convolution]
    if not (
        isinstance(convolution, type)
        and issubclass(convolution, GraphConvolution)
    ):
        raise ValueError(
            f"`convolution` must be one of {list(CONVOLUTIONS)}, a "
            "`keras_laf.GraphConvolution` subclass or a layer. Received: "
            f"convolution={convolution!r}"
        )
    if convolution is AggregationConv:
        return lambda aggregation, arguments, name: AggregationConv(
            hidden_units,
            aggregation=_copy(aggregation),
            aggregation_kwargs=arguments,
            message_units=message_units,
            name=name,
        )
    options = {"num_heads": num_heads, "concat_heads": False}
    return lambda aggregation, arguments, name: convolution(
        hidden_units,
        activation="leaky_relu",
        name=name,
        **(options if convolution is GATConv else {}),
    )


def _graph_inputs(num_node_features):
    indices = ("edge_source", "edge_target", "node_graph_ids")
    return {
        "node_features": keras.Input(
            (num_node_features,), name="node_features"
        ),
        **{key: keras.Input((), dtype="int32", name=key) for key in indices},
        # Its length is the number of graphs of the batch.
        "nodes_per_graph": keras.Input(
            (), dtype="int32", name="nodes_per_graph"
        ),
    }


@compat.deprecated_arguments(laf_units=compat.aggregation_argument("units"))
def graph_network(
    num_node_features=2,
    num_node_outputs=3,
    num_graph_outputs=3,
    aggregation="laf",
    aggregation_kwargs=None,
    hidden_units=16,
    message_units=None,
    num_layers=4,
    scalers=("identity",),
    degree_histogram=None,
    average_log_degree=None,
    update="gru",
    readout_aggregation=None,
    readout_aggregation_kwargs=None,
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
    and `predict`, padded to a few sizes. The model is a
    `keras_laf.models.GraphModel`: `model.predict` on a union or on
    `GraphBatches` gives one row per node and per graph, without the
    padding's rows, and a batch that does not match its inputs or outputs
    is an error naming them. The
    readout takes the number of graphs from the length of
    the input `nodes_per_graph`, a shape, so the model fits on JAX too,
    whose traces need shapes known (TF-GNN's `GraphTensor` carries the
    same sizes). Compile with `jit_compile` left at `"auto"` (or `False`):
    the layers run on a batch-dependent number of nodes, which XLA would
    recompile for, so `GraphModel` compiles with XLA only for padded
    batches (on TensorFlow's CPU too).

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
        aggregation_kwargs: dict. The arguments of an aggregation given by
            name, for every layer (and the readout, when it is the same;
            PyTorch Geometric's
            `aggr_kwargs`), e.g. `{"units": 8, "preset": "closed_forms"}`
            for `"laf"`. Defaults to `None`: the name's defaults, but
            the paper's network's `PAPER_LAF_KWARGS` (100 units) for a
            LAF by name.
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
        readout_aggregation_kwargs: dict. The arguments of a
            `readout_aggregation` given by name, as `aggregation_kwargs`.
            Defaults to `None`: the name's defaults (a LAF by name: 100
            units).
        num_readout_layers: int. Dense layers of each output MLP.
            Defaults to `3`, as PNA.
        dropout: float. Dropout rate between message-passing layers.
            Defaults to `0.0`.
        convolution: the message-passing layers: a name of
            `CONVOLUTIONS` (`"message_passing"`: `AggregationConv` with
            `aggregation`; `"gin"`, `"gcn"`, `"gat"`), a
            `keras_laf.GraphConvolution` subclass (built with
            `hidden_units` and the aggregation), or a layer, which each
            layer copies from its config. Defaults to `"message_passing"`.
        num_heads: int. Attention heads of `"gat"`, averaged. Defaults
            to `4`.
        name: str. The model's name. Defaults to `"graph_network"`.

    Returns:
        An uncompiled `keras_laf.models.GraphModel` with inputs
        `{"node_features": (num_nodes, num_node_features), "edge_source":
        (num_edges,), "edge_target": (num_edges,), "node_graph_ids":
        (num_nodes,), "nodes_per_graph": (num_graphs,)}` (indices and
        counts int32) and
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
    _check_sizes(
        num_node_features=num_node_features,
        num_node_outputs=num_node_outputs,
        num_graph_outputs=num_graph_outputs,
        hidden_units=hidden_units,
        num_layers=num_layers,
        num_readout_layers=num_readout_layers,
        num_heads=num_heads,
    )
    if update not in UPDATES:
        raise ValueError(
            f"`update` must be one of {UPDATES}. Received: update={update!r}"
        )
    check_number("dropout", dropout, minimum=0, below=1)
    make_layer = _convolution_factory(
        convolution, hidden_units, message_units, num_heads
    )
    arguments = with_laf_arguments(
        aggregation, aggregation_kwargs, **PAPER_LAF_KWARGS
    )
    if readout_aggregation is None:
        # The aggregation inside PNA's scalers, where a layer of them is
        # given.
        readout_aggregation, readout_arguments = aggregation, arguments
        if isinstance(aggregation, DegreeScalerAggregation):
            readout_aggregation = aggregation.aggregation_layer()
    else:
        readout_arguments = with_laf_arguments(
            readout_aggregation, readout_aggregation_kwargs, **PAPER_LAF_KWARGS
        )
    if list(scalers) != ["identity"]:
        # PNA's scalers around each layer's aggregation.
        aggregation = DegreeScalerAggregation(
            aggregation,
            scalers,
            aggregation_kwargs=arguments,
            degree_histogram=degree_histogram,
            average_log_degree=average_log_degree,
            name="degree_scaler",
        )
        arguments = {}

    inputs = _graph_inputs(num_node_features)
    layers = [
        make_layer(aggregation, arguments, f"{_name(convolution)}_{index + 1}")
        for index in range(num_layers)
    ]
    states = _node_states(inputs, layers, hidden_units, update, dropout)
    readout = GraphReadout(
        _copy(readout_aggregation),
        aggregation_kwargs=readout_arguments,
        name="graph_readout",
    )
    readout_inputs = states
    if readout.aggregation_layer().input_domain == "unit_interval":
        readout_inputs = keras.layers.Dense(
            hidden_units, activation="sigmoid", name="readout_projection"
        )(states)
    graph_states = readout(
        readout_inputs,
        inputs["node_graph_ids"],
        nodes_per_graph=inputs["nodes_per_graph"],
    )
    outputs = {
        key: _mlp(features, hidden_units, width, num_readout_layers, key)
        for key, features, width in (
            ("node_outputs", states, num_node_outputs),
            ("graph_outputs", graph_states, num_graph_outputs),
        )
    }
    return GraphModel(inputs, outputs, name=name)


def _check_sizes(**sizes):
    for argument, value in sizes.items():
        check_positive_int(argument, value)


def _node_states(inputs, layers, hidden_units, update, dropout):
    """The node states after the message-passing `layers`, each followed
    by the `update`: `(num_nodes, hidden_units)`."""
    states = keras.layers.Dense(hidden_units, name="node_embedding")(
        inputs["node_features"]
    )
    # One GRU shared by all layers, as in PNA.
    gru = (
        keras.layers.GRUCell(hidden_units, name="gru")
        if update == "gru"
        else None
    )
    for index, layer in enumerate(layers):
        outputs = layer(states, inputs["edge_source"], inputs["edge_target"])
        if update == "gru":
            states, _ = gru(outputs, [states])
        elif update == "residual":
            states = keras.layers.Add(name=f"residual_{index + 1}")(
                [states, outputs]
            )
        else:
            states = outputs
        if dropout and index < len(layers) - 1:
            states = keras.layers.Dropout(dropout, name=f"dropout_{index + 1}")(
                states
            )
    return states


def _name(convolution):
    # The layers' names: `message_passing_1`, `gin_1`, ... as before.
    if isinstance(convolution, str):
        return convolution
    if isinstance(convolution, keras.layers.Layer):
        return convolution.name
    return convolution.__name__.lower()

"""Message passing and graph readout with the package's aggregators.

Graphs are given in the disjoint-union form: a batch of graphs is one
graph whose nodes are the nodes of all of them, stacked,

- `node_features` `(num_nodes, features)`,
- `edge_source`, `edge_target` int `(num_edges,)`: each directed edge
  sends a message from node `edge_source[i]` to node `edge_target[i]`
  (an undirected edge is two directed ones),
- `node_graph_ids` int `(num_nodes,)`: the graph of each node, for the
  graph-level readout,
- `nodes_per_graph` int `(num_graphs,)`: the number of nodes of each
  graph, whose length gives the readout its number of graphs as a shape.

`keras_laf.datasets.disjoint_union` builds this form from
lists of graphs. Every tensor's leading dimension is its own count (nodes,
edges, graphs), so each may change from batch to batch.

`MessagePassing` aggregates the messages arriving at each node with LAF
(Pellegrini et al., "Learning Aggregation Functions", IJCAI 2021) or with
fixed aggregators, optionally with the degree scalers of PNA (Corso et al.,
"Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020).
`GraphReadout` aggregates the nodes of each graph.

Both layers compute with segment operations whose number of segments is a
run-time value, so they opt out of XLA (`supports_jit = False`): with the
default `jit_compile="auto"`, `Model.compile` leaves models that hold them
to plain TensorFlow, which does not recompile for every batch shape.
"""

import keras
import numpy as np
from keras import ops

from keras_laf import aggregations
from keras_laf import presets
from keras_laf.sets import SegmentSets
from keras_laf.sets import checked_indices
from keras_laf.sets import count_segments
from keras_laf.sets import is_traced
from keras_laf.validation import check_index_tensor
from keras_laf.validation import check_positive_int
from keras_laf.validation import check_same_length
from keras_laf.validation import check_shape

SCALER_NAMES = (
    "identity",
    "amplification",
    "attenuation",
    "linear",
    "inverse_linear",
)
# Mean of log(degree + 1) over the nodes of the training graphs of the
# graph-properties benchmark (15 to 24 nodes), about 1.5.
DEFAULT_AVERAGE_LOG_DEGREE = 1.5


def _check_node_shape(shape, layer, argument="node_features"):
    return check_shape(layer, argument, shape, (2,), "(num_nodes, features)")


def _check_edges(node_features, edge_source, edge_target, layer):
    """Checks the node features and edge indices of a graph layer's call."""
    _check_node_shape(node_features.shape, layer)
    check_index_tensor(layer, "edge_source", edge_source, "node")
    check_index_tensor(layer, "edge_target", edge_target, "node")
    check_same_length("edge_source", edge_source, "edge_target", edge_target)


def _prepare_graph(node_features, edge_source, edge_target, dtype):
    """Casts the node features and checks the edge indices against them."""
    node_features = ops.cast(node_features, dtype)
    num_nodes = ops.shape(node_features)[0]
    source = checked_indices(edge_source, num_nodes, "edge_source", "nodes")
    target = checked_indices(edge_target, num_nodes, "edge_target", "nodes")
    return node_features, source, target, num_nodes


def _check_preset(preset):
    """None (the LAF layer's default) or the preset's standard name."""
    return None if preset is None else presets.standardize_preset(preset)


def _clone_initializer(initializer):
    # A new initializer object for each weight or sub-layer: a seeded one
    # shared between them would give them the same values.
    return initializer.__class__.from_config(initializer.get_config())


def _dense(layer, units, name, activation=None, use_bias=None):
    """A dense sub-layer with the bias and initializers of `layer`."""
    return keras.layers.Dense(
        units,
        activation=activation,
        use_bias=layer.use_bias if use_bias is None else use_bias,
        kernel_initializer=_clone_initializer(layer.kernel_initializer),
        bias_initializer=_clone_initializer(layer.bias_initializer),
        name=name,
        dtype=layer.dtype_policy,
    )


@keras.saving.register_keras_serializable(package="keras_laf")
class MessagePassing(keras.layers.Layer):
    """A message-passing layer whose neighbour aggregation is LAF or fixed.

    For each directed edge (u, v) a message
    `m_uv = message_activation(W_m [h_v, h_u, e_uv] + b_m)` is computed from
    the features of the receiving node v, the sending node u and, when
    given, the edge features. The messages arriving at each node are
    aggregated with `aggregation` (every message feature by every
    aggregate), optionally multiplied by PNA's degree scalers, and the node
    is updated as `activation(W [h_v, aggregates] + b)`.

    The aggregation is LAF with `laf_units` units (Pellegrini et al.,
    IJCAI 2021, Section 4.5 replaces PNA's aggregators and scalers with LAF
    units), whose messages pass through a sigmoid since LAF takes values in
    [0, 1]; or any aggregators of `keras_laf.FixedAggregation` (sum, mean,
    max, min, std, ..., or the presets "pna" and "deepsets"), with linear
    messages by default. The scalers of PNA (Corso et al., NeurIPS 2020)
    multiply the aggregates of a node of in-degree d by 1 ("identity"),
    `log(d + 1) / delta` ("amplification") or `delta / log(d + 1)`
    ("attenuation"), with `delta = average_log_degree`, the mean of
    `log(d + 1)` over the training graphs, or by `d / average_degree`
    ("linear") or `average_degree / d` ("inverse_linear"); as in PyTorch
    Geometric's `PNAConv`, d is taken as at least 1 in the scalers. With
    `train_average_log_degree=True` delta is a trainable weight (stored as
    `log(delta)`, so it stays positive), initialised at
    `average_log_degree`.

    A node without incoming edges aggregates the empty set: fixed
    aggregates are 0 and LAF's are finite (see `keras_laf.LAF`), so every
    output is finite, also for empty edge lists and single-node graphs.

    Args:
        units: int. Output features per node.
        aggregation: str or list of str. `"laf"`, or names of
            `FixedAggregation` aggregators (`"sum"`, `"mean"`, `"max"`,
            `"min"`, `"count"`, `"std"`, `"var"`, `"skewness"`,
            `"kurtosis"`), or a preset (`"pna"`, `"deepsets"`), or
            `"softmax"`, `"powermean"`, or a list mixing these names (e.g.
            `["laf", "max"]`, a `keras_laf.MultiAggregation`). Defaults
            to `"laf"`.
        laf_units: int. Number of LAF units, when `aggregation="laf"`.
            Defaults to `16`.
        laf_preset: str. The `keras_laf.LAF` preset (`"pooling"`,
            `"closed_forms"` or `"paper"`, see `keras_laf.presets`), when
            `aggregation="laf"`. Defaults to `None`: the layer's default.
        message_units: int. Features of each message. Defaults to `units`.
        scalers: list of str from `"identity"`, `"amplification"`,
            `"attenuation"`, `"linear"`, `"inverse_linear"`. The aggregates
            are repeated once per scaler. Defaults to `("identity",)`.
        average_log_degree: float. PNA's delta, the mean of
            `log(degree + 1)` over the training nodes
            (`PropertyGraphs.average_log_degree()` computes it). Defaults
            to `1.5`, its value on the training graphs of the
            graph-properties benchmark.
        average_degree: float. The mean degree of the linear scalers.
            Defaults to `None`: `exp(average_log_degree) - 1`, the degree
            whose `log(d + 1)` is delta.
        train_average_log_degree: bool. Whether delta is trainable.
            Defaults to `False`.
        message_activation: activation of the messages. Defaults to
            `"sigmoid"` for LAF and to no activation otherwise.
        activation: activation of the node update. Defaults to
            `"leaky_relu"`, as PNA's mixing layer.
        use_bias: bool. Whether the dense layers use biases. Defaults to
            `True`.
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the dense biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        edge_source: int tensor `(num_edges,)`, the sending node of each
            edge, in `[0, num_nodes)`.
        edge_target: int tensor `(num_edges,)`, the receiving node.
        edge_features: optional float tensor `(num_edges, edge_features)`.

        Float or rank-2 indices raise a ValueError, also while a functional
        model is built. Indices out of range raise a ValueError in eager
        calls; in traced TensorFlow calls (`fit`, `predict`,
        `tf.function`) they raise `tf.errors.InvalidArgumentError` when the
        batch runs (JAX cannot check inside `jax.jit`).

    Input shape:
        `(num_nodes, features)`, with edge indices `(num_edges,)`.

    Output shape:
        `(num_nodes, units)`.

    Example:

    >>> layer = MessagePassing(8, aggregation=["mean", "max"])
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> # A path 0 - 1 - 2, each edge in both directions.
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> tuple(layer(node_features, source, target).shape)
    (3, 8)
    """

    def __init__(
        self,
        units,
        aggregation="laf",
        laf_units=16,
        laf_preset=None,
        message_units=None,
        scalers=("identity",),
        average_log_degree=DEFAULT_AVERAGE_LOG_DEGREE,
        average_degree=None,
        train_average_log_degree=False,
        message_activation=None,
        activation="leaky_relu",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.aggregation = aggregations.check(
            aggregation, allowed=aggregations.PER_FEATURE_NAMES
        )
        self.laf_units = check_positive_int("laf_units", laf_units)
        self.laf_preset = _check_preset(laf_preset)
        self.message_units = check_positive_int(
            "message_units", units if message_units is None else message_units
        )
        if isinstance(scalers, str):
            scalers = [scalers]
        scalers = list(scalers)
        if not scalers or any(name not in SCALER_NAMES for name in scalers):
            raise ValueError(
                "`scalers` must be a non-empty list of names from "
                f"{list(SCALER_NAMES)}. Received: scalers={scalers}"
            )
        self.scalers = scalers
        if (
            isinstance(average_log_degree, bool)
            or not isinstance(average_log_degree, (int, float, np.floating))
            or not average_log_degree > 0
        ):
            raise ValueError(
                "`average_log_degree` must be a positive number. "
                f"Received: average_log_degree={average_log_degree}"
            )
        self.average_log_degree = float(average_log_degree)
        if average_degree is not None and (
            isinstance(average_degree, bool)
            or not isinstance(average_degree, (int, float, np.floating))
            or not average_degree > 0
        ):
            raise ValueError(
                "`average_degree` must be a positive number or None. "
                f"Received: average_degree={average_degree}"
            )
        self.average_degree = (
            None if average_degree is None else float(average_degree)
        )
        if not isinstance(train_average_log_degree, bool):
            raise ValueError(
                "`train_average_log_degree` must be a bool. Received: "
                f"train_average_log_degree={train_average_log_degree}"
            )
        self.train_average_log_degree = train_average_log_degree
        if message_activation is None:
            message_activation = (
                "sigmoid" if self.aggregation == "laf" else "linear"
            )
        self.message_activation = keras.activations.get(message_activation)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        # The node features; the indices are checked in call.
        self.input_spec = keras.layers.InputSpec(ndim=2)
        # Segment reductions over a run-time number of nodes.
        self.supports_jit = False

    @property
    def num_aggregates(self):
        """Aggregates per message feature and scaler."""
        return aggregations.num_aggregates(self.aggregation, self.laf_units)

    def build(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
        edge_features_shape=None,
    ):
        node_shape = _check_node_shape(node_features_shape, self)
        features = node_shape[-1]
        self.input_spec = keras.layers.InputSpec(ndim=2, axes={-1: features})
        message_inputs = 2 * features
        if edge_features_shape is not None:
            edge_shape = _check_node_shape(
                edge_features_shape, self, "edge_features"
            )
            message_inputs += edge_shape[-1]
        self._message_dense = _dense(
            self, self.message_units, "message", self.message_activation
        )
        self._message_dense.build((None, message_inputs))
        self._aggregation = aggregations.get(
            self.aggregation,
            units=self.laf_units,
            preset=self.laf_preset,
            name="aggregation",
            dtype=self.dtype_policy,
        )
        self._aggregation.build((None, self.message_units))
        aggregate_features = (
            self.message_units * self.num_aggregates * len(self.scalers)
        )
        self._update_dense = _dense(self, self.units, "update", self.activation)
        self._update_dense.build((None, features + aggregate_features))
        if self.train_average_log_degree:
            self.log_average_log_degree = self.add_weight(
                name="log_average_log_degree",
                shape=(),
                initializer=keras.initializers.Constant(
                    np.log(self.average_log_degree)
                ),
            )

    def _check_inputs(self, node_features, edge_source, edge_target, edges):
        _check_edges(node_features, edge_source, edge_target, self)
        if edges is not None:
            _check_node_shape(edges.shape, self, "edge_features")
            check_same_length(
                "edge_source", edge_source, "edge_features", edges
            )

    def aggregate_neighbours(
        self, node_features, edge_source, edge_target, edge_features=None
    ):
        """The scaled aggregates of the messages arriving at each node.

        The layer's output before the update: for each node, the
        aggregates of every message feature, once per scaler.

        The layer must be built; the arguments are those of calling it.

        Args:
            node_features: float tensor `(num_nodes, features)`.
            edge_source: int tensor `(num_edges,)`, the sending node of
                each edge.
            edge_target: int tensor `(num_edges,)`, the receiving node.
            edge_features: optional float tensor `(num_edges,
                edge_features)`.

        Returns:
            `(num_nodes, message_units * num_aggregates * len(scalers))`,
            ordered by scaler, then message feature, then aggregate.
        """
        self._check_inputs(
            node_features, edge_source, edge_target, edge_features
        )
        node_features, source, target, num_nodes = _prepare_graph(
            node_features, edge_source, edge_target, self.compute_dtype
        )
        # (num_edges, 2 * features [+ edge_features])
        message_inputs = [
            ops.take(node_features, target, axis=0),
            ops.take(node_features, source, axis=0),
        ]
        if edge_features is not None:
            message_inputs.append(ops.cast(edge_features, self.compute_dtype))
        messages = self._message_dense(ops.concatenate(message_inputs, -1))
        # (num_nodes, message_units * num_aggregates)
        # The targets are checked: the aggregation takes them as they are.
        aggregates = self._aggregation.aggregate_sets(
            messages, SegmentSets(target, num_nodes)
        )
        aggregates = ops.cast(aggregates, self.compute_dtype)
        if self.scalers == ["identity"]:
            return aggregates
        in_degrees = ops.segment_sum(
            ops.ones_like(target, dtype="float32"), target, num_nodes
        )
        # (num_nodes, 1); degrees below 1 count as 1, keeping attenuation
        # finite for nodes without incoming edges.
        degrees = ops.maximum(in_degrees, 1.0)[:, None]
        log_degrees = ops.log(degrees + 1.0)
        delta = self.average_log_degree
        if self.train_average_log_degree:
            delta = ops.exp(ops.cast(self.log_average_log_degree, "float32"))
        average_degree = self.average_degree
        if average_degree is None:
            average_degree = float(np.expm1(self.average_log_degree))
        factors = {
            "identity": ops.ones_like(log_degrees),
            "amplification": log_degrees / delta,
            "attenuation": delta / log_degrees,
            "linear": degrees / average_degree,
            "inverse_linear": average_degree / degrees,
        }
        return ops.concatenate(
            [
                aggregates * ops.cast(factors[name], self.compute_dtype)
                for name in self.scalers
            ],
            axis=-1,
        )

    def call(self, node_features, edge_source, edge_target, edge_features=None):
        aggregates = self.aggregate_neighbours(
            node_features, edge_source, edge_target, edge_features
        )
        node_features = ops.cast(node_features, self.compute_dtype)
        # (num_nodes, units)
        return self._update_dense(
            ops.concatenate([node_features, aggregates], axis=-1)
        )

    def compute_output_spec(
        self, node_features, edge_source, edge_target, edge_features=None
    ):
        # Checks dtypes and ranks while a functional model is built.
        self._check_inputs(
            node_features, edge_source, edge_target, edge_features
        )
        return keras.KerasTensor(
            (node_features.shape[0], self.units), dtype=self.compute_dtype
        )

    def compute_output_shape(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
        edge_features_shape=None,
    ):
        node_shape = _check_node_shape(node_features_shape, self)
        return (node_shape[0], self.units)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "aggregation": self.aggregation,
            "laf_units": self.laf_units,
            "laf_preset": self.laf_preset,
            "message_units": self.message_units,
            "scalers": self.scalers,
            "average_log_degree": self.average_log_degree,
            "average_degree": self.average_degree,
            "train_average_log_degree": self.train_average_log_degree,
            "message_activation": keras.activations.serialize(
                self.message_activation
            ),
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class GraphReadout(keras.layers.Layer):
    """Aggregates the nodes of each graph of a disjoint-union batch.

    Every node feature of every graph is aggregated by LAF units or by
    fixed aggregators, over the nodes that `node_graph_ids` assigns to the
    graph: a segment aggregation with the graphs as segments. LAF takes
    values in [0, 1] (see `keras_laf.LAF`): put a sigmoid before it.

    The number of graphs is the length of `nodes_per_graph` where it is
    given (as `keras_laf.datasets.disjoint_union` gives it, and as the
    sizes of TF-GNN's `GraphTensor` or jraph's `n_node`): a shape, known
    when JAX traces the layer (`jax.jit`, `Model.fit`), so the layer runs
    on JAX in a model whose number of graphs changes from batch to batch.
    Without it the number of graphs is `max(node_graph_ids) + 1`, a value,
    which a JAX trace cannot take.

    Args:
        aggregation: str or list of str. Any identifier of
            `keras_laf.aggregations.get`: `"laf"`, names or a preset of
            `FixedAggregation` aggregators, `"softmax"`, `"powermean"`,
            the poolings `"attention"`, `"set2set"`, `"gmt"`, `"gru"` and
            `"lstm"` (the last two and `"gmt"` need TensorFlow, which pads
            the graphs' nodes for them), or a list mixing them (e.g.
            `["laf", "max"]`). Defaults to `"sum"`.
        laf_units: int. Number of LAF units, when `aggregation="laf"`.
            Defaults to `16`.
        laf_preset: str. The `keras_laf.LAF` preset (`"pooling"`,
            `"closed_forms"` or `"paper"`, see `keras_laf.presets`), when
            `aggregation="laf"`. Defaults to `None`: the layer's default.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        node_graph_ids: int tensor `(num_nodes,)`, the graph of each node,
            in `[0, num_graphs)`; need not be sorted.
        num_graphs: optional int or scalar int tensor, the number of
            graphs. Graphs without nodes get the aggregate of the empty
            set (0 for fixed aggregators).
        nodes_per_graph: optional int tensor `(num_graphs,)`, the number
            of nodes of each graph; only its length is read. Pass it or
            `num_graphs`, not both; with neither, `num_graphs` is
            `max(node_graph_ids) + 1`.

        Float ids raise a ValueError; out-of-range ids raise a ValueError
        in eager calls and `tf.errors.InvalidArgumentError` in traced
        TensorFlow calls (JAX cannot check inside `jax.jit`, so check them
        before: `disjoint_union` does).

    Input shape:
        `(num_nodes, features)`, with `node_graph_ids` `(num_nodes,)` and
        `nodes_per_graph` `(num_graphs,)`.

    Output shape:
        `(num_graphs, features * num_aggregates)`, the aggregates of a
        feature adjacent.

    Example:

    >>> readout = GraphReadout(["sum", "max"])
    >>> outputs = readout(np.array([[1.0], [2.0], [5.0]]), np.array([0, 0, 1]))
    >>> keras.ops.convert_to_numpy(outputs)
    array([[3., 2.],
           [5., 5.]], dtype=float32)

    In a model, `nodes_per_graph` gives the number of graphs as a shape:

    >>> features = keras.Input((1,))
    >>> graph_ids = keras.Input((), dtype="int32")
    >>> nodes_per_graph = keras.Input((), dtype="int32")
    >>> means = GraphReadout("mean")(
    ...     features, graph_ids, nodes_per_graph=nodes_per_graph
    ... )
    >>> model = keras.Model([features, graph_ids, nodes_per_graph], means)
    >>> keras.ops.convert_to_numpy(
    ...     model([np.array([[1.0], [2.0], [5.0]]), np.array([0, 0, 1]),
    ...            np.array([2, 1])])
    ... )
    array([[1.5],
           [5. ]], dtype=float32)
    """

    def __init__(
        self, aggregation="sum", laf_units=16, laf_preset=None, **kwargs
    ):
        super().__init__(**kwargs)
        self.aggregation = aggregations.check(aggregation)
        self.laf_units = check_positive_int("laf_units", laf_units)
        self.laf_preset = _check_preset(laf_preset)
        # The node features; the indices are checked in call.
        self.input_spec = keras.layers.InputSpec(ndim=2)
        # Segment reductions over a run-time number of graphs.
        self.supports_jit = False

    @property
    def num_aggregates(self):
        """Aggregates per node feature."""
        return aggregations.num_aggregates(self.aggregation, self.laf_units)

    def build(
        self,
        node_features_shape,
        node_graph_ids_shape=None,
        nodes_per_graph_shape=None,
    ):
        node_shape = _check_node_shape(node_features_shape, self)
        self._aggregation = aggregations.get(
            self.aggregation,
            units=self.laf_units,
            preset=self.laf_preset,
            name="aggregation",
            dtype=self.dtype_policy,
        )
        self._aggregation.build(node_shape)

    def _check_inputs(
        self, node_features, node_graph_ids, num_graphs, nodes_per_graph
    ):
        _check_node_shape(node_features.shape, self)
        check_index_tensor(self, "node_graph_ids", node_graph_ids, "graph")
        check_same_length(
            "node_graph_ids", node_graph_ids, "node_features", node_features
        )
        if nodes_per_graph is None:
            return
        if num_graphs is not None:
            raise ValueError(
                f"Layer '{self.name}' (GraphReadout) takes the number of "
                "graphs from `num_graphs` or from the length of "
                f"`nodes_per_graph`, not both. Received: num_graphs="
                f"{num_graphs} and nodes_per_graph.shape="
                f"{tuple(nodes_per_graph.shape)}"
            )
        dtype = keras.backend.standardize_dtype(nodes_per_graph.dtype)
        if "int" not in dtype or len(nodes_per_graph.shape) != 1:
            raise ValueError(
                f"Layer '{self.name}' (GraphReadout) expects "
                "`nodes_per_graph` as an int tensor (num_graphs,), the "
                "number of nodes of each graph. Received: "
                f"nodes_per_graph.dtype={dtype}, "
                f"nodes_per_graph.shape={tuple(nodes_per_graph.shape)}"
            )

    def call(
        self,
        node_features,
        node_graph_ids,
        num_graphs=None,
        nodes_per_graph=None,
    ):
        self._check_inputs(
            node_features, node_graph_ids, num_graphs, nodes_per_graph
        )
        if nodes_per_graph is not None:
            # A static shape where JAX traces, a scalar tensor where
            # TensorFlow does with an unknown number of graphs.
            num_graphs = ops.shape(nodes_per_graph)[0]
        elif num_graphs is None:
            if keras.config.backend() == "jax" and is_traced(node_graph_ids):
                raise ValueError(
                    f"Layer '{self.name}' (GraphReadout) needs the number of "
                    "graphs as a shape inside a JAX trace (`jax.jit`, "
                    "`Model.fit`): pass `nodes_per_graph` (num_graphs,), as "
                    "`keras_laf.datasets.disjoint_union` gives it, or "
                    "`num_graphs` as an int. Received: num_graphs=None and "
                    "nodes_per_graph=None"
                )
            num_graphs = count_segments(node_graph_ids, "num_graphs")
        graph_ids = checked_indices(
            node_graph_ids, num_graphs, "node_graph_ids", "graphs"
        )
        # (num_graphs, features * num_aggregates)
        return self._aggregation.aggregate_sets(
            ops.cast(node_features, self.compute_dtype),
            SegmentSets(graph_ids, num_graphs),
        )

    def compute_output_spec(
        self,
        node_features,
        node_graph_ids,
        num_graphs=None,
        nodes_per_graph=None,
    ):
        self._check_inputs(
            node_features, node_graph_ids, num_graphs, nodes_per_graph
        )
        shape = self.compute_output_shape(
            node_features.shape,
            node_graph_ids.shape,
            None if nodes_per_graph is None else nodes_per_graph.shape,
        )
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def compute_output_shape(
        self,
        node_features_shape,
        node_graph_ids_shape=None,
        nodes_per_graph_shape=None,
    ):
        node_shape = _check_node_shape(node_features_shape, self)
        num_graphs = (
            None if nodes_per_graph_shape is None else nodes_per_graph_shape[0]
        )
        return (
            num_graphs,
            aggregations.output_width(
                self.aggregation, node_shape[-1], self.laf_units
            ),
        )

    def get_config(self):
        return {
            **super().get_config(),
            "aggregation": self.aggregation,
            "laf_units": self.laf_units,
            "laf_preset": self.laf_preset,
        }

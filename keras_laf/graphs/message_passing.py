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
from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import check_preset
from keras_laf.graphs.common import dense_sublayer
from keras_laf.graphs.common import prepare_graph
from keras_laf.sets import SegmentSets
from keras_laf.validation import check_positive_int
from keras_laf.validation import check_same_length

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
        self.laf_preset = check_preset(laf_preset)
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
        node_shape = check_node_shape(node_features_shape, self)
        features = node_shape[-1]
        self.input_spec = keras.layers.InputSpec(ndim=2, axes={-1: features})
        message_inputs = 2 * features
        if edge_features_shape is not None:
            edge_shape = check_node_shape(
                edge_features_shape, self, "edge_features"
            )
            message_inputs += edge_shape[-1]
        self._message_dense = dense_sublayer(
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
        self._update_dense = dense_sublayer(
            self, self.units, "update", self.activation
        )
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
        check_edges(node_features, edge_source, edge_target, self)
        if edges is not None:
            check_node_shape(edges.shape, self, "edge_features")
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
        node_features, source, target, num_nodes = prepare_graph(
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
        node_shape = check_node_shape(node_features_shape, self)
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

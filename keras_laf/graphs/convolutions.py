"""Graph convolutions of the LAF paper's graph baselines: GIN, GCN, GAT.

The baselines of the graph-properties benchmark (Pellegrini et al.,
"Learning Aggregation Functions", IJCAI 2021, Section 4.5, after Corso et
al., "Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020),
on the disjoint-union graph batches of `keras_laf.MessagePassing`:

- `node_features` `(num_nodes, features)`,
- `edge_source`, `edge_target` int `(num_edges,)`: each directed edge
  sends a message from node `edge_source[i]` to node `edge_target[i]`
  (an undirected edge is two directed ones).

Like `MessagePassing`, the layers reduce with segment operations over a
run-time number of nodes and opt out of XLA (`supports_jit = False`).
"""

import keras
import numpy as np
from keras import ops

from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import clone_initializer
from keras_laf.graphs.common import dense_sublayer
from keras_laf.graphs.common import prepare_graph
from keras_laf.validation import check_positive_int
from keras_laf.validation import describe_received


def _check_number(name, value, minimum=None, below=None):
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not np.isfinite(value)
        or (minimum is not None and value < minimum)
        or (below is not None and value >= below)
    ):
        bounds = ""
        if minimum is not None:
            bounds += f" of at least {minimum}"
        if below is not None:
            bounds += f" below {below}"
        raise ValueError(
            f"`{name}` expected a finite number{bounds}. "
            f"Received: {describe_received(name, value)}"
        )
    return float(value)


class _GraphConvolution(keras.layers.Layer):
    """The shared input checks, call signature and config of the layers."""

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        # The node features; the edge indices are checked in call.
        self.input_spec = keras.layers.InputSpec(ndim=2)
        # Segment reductions over a run-time number of nodes.
        self.supports_jit = False

    def _prepare(self, node_features, edge_source, edge_target):
        """Casts the features and checks the indices against the nodes."""
        check_edges(node_features, edge_source, edge_target, self)
        return prepare_graph(
            node_features, edge_source, edge_target, self.compute_dtype
        )

    @property
    def output_features(self):
        return self.units

    def build(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
    ):
        shape = check_node_shape(node_features_shape, self)
        self.input_spec = keras.layers.InputSpec(ndim=2, axes={-1: shape[-1]})
        self._build_for_features(shape[-1])

    def _build_for_features(self, features):
        """Creates the weights and sub-layers for `features` inputs."""
        raise NotImplementedError

    def compute_output_spec(
        self, node_features, edge_source, edge_target, training=None
    ):
        # Checks dtypes and ranks while a functional model is built.
        check_edges(node_features, edge_source, edge_target, self)
        return keras.KerasTensor(
            (node_features.shape[0], self.output_features),
            dtype=self.compute_dtype,
        )

    def compute_output_shape(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
    ):
        shape = check_node_shape(node_features_shape, self)
        return (shape[0], self.output_features)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
        }


def _with_self_loops(source, target, num_nodes):
    # (num_edges + num_nodes,): an edge from every node to itself last.
    nodes = ops.arange(num_nodes, dtype="int32")
    return (
        ops.concatenate([source, nodes], axis=0),
        ops.concatenate([target, nodes], axis=0),
    )


@keras.saving.register_keras_serializable(package="keras_laf")
class GINConv(_GraphConvolution):
    """The graph isomorphism network layer (GIN) of Xu et al.

    Each node is updated as `MLP((1 + epsilon) * h_v + sum_u h_u)`, the sum
    running over the nodes u with an edge to v, where `epsilon` is a
    learned scalar (GIN-epsilon of Xu et al., "How Powerful are Graph
    Neural Networks?", ICLR 2019) or a fixed one (`train_epsilon=False`;
    GIN-0 with `epsilon=0`). The MLP has `num_mlp_layers - 1` hidden dense
    layers of `hidden_units` with `activation`, then a linear dense layer
    of `units`. One of the baselines of the LAF paper's graph benchmark.

    Args:
        units: int. Output features per node.
        hidden_units: int. Units of the MLP's hidden layers. Defaults to
            `units`.
        num_mlp_layers: int. Dense layers of the MLP. Defaults to `2`.
        epsilon: float. The initial (or fixed) weight of the node itself
            beside the sum of its neighbours, in `1 + epsilon`. Defaults
            to `0.0`.
        train_epsilon: bool. Whether `epsilon` is learned. Defaults to
            `True`.
        activation: activation of the MLP's hidden layers. Defaults to
            `"relu"`.
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

    Input shape:
        `(num_nodes, features)`, with edge indices `(num_edges,)`.

    Output shape:
        `(num_nodes, units)`.

    Example:

    >>> layer = GINConv(8)
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> # A path 0 - 1 - 2, each edge in both directions.
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> tuple(layer(node_features, source, target).shape)
    (3, 8)
    """

    def __init__(
        self,
        units,
        hidden_units=None,
        num_mlp_layers=2,
        epsilon=0.0,
        train_epsilon=True,
        activation="relu",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.hidden_units = check_positive_int(
            "hidden_units", units if hidden_units is None else hidden_units
        )
        self.num_mlp_layers = check_positive_int(
            "num_mlp_layers", num_mlp_layers
        )
        self.epsilon = _check_number("epsilon", epsilon)
        self.train_epsilon = bool(train_epsilon)

    def _build_for_features(self, features):
        self.epsilon_weight = self.add_weight(
            name="epsilon",
            shape=(),
            initializer=keras.initializers.Constant(self.epsilon),
            trainable=self.train_epsilon,
        )
        self._mlp = []
        inputs = features
        for index in range(self.num_mlp_layers - 1):
            dense = dense_sublayer(
                self, self.hidden_units, f"mlp_{index + 1}", self.activation
            )
            dense.build((None, inputs))
            self._mlp.append(dense)
            inputs = self.hidden_units
        dense = dense_sublayer(self, self.units, f"mlp_{self.num_mlp_layers}")
        dense.build((None, inputs))
        self._mlp.append(dense)

    def call(self, node_features, edge_source, edge_target):
        node_features, source, target, num_nodes = self._prepare(
            node_features, edge_source, edge_target
        )
        # (num_nodes, features): the sum of the neighbours' features.
        neighbours = ops.segment_sum(
            ops.take(node_features, source, axis=0), target, num_nodes
        )
        epsilon = ops.cast(self.epsilon_weight, self.compute_dtype)
        hidden = (1.0 + epsilon) * node_features + neighbours
        for dense in self._mlp:
            hidden = dense(hidden)
        # (num_nodes, units)
        return hidden

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_units": self.hidden_units,
            "num_mlp_layers": self.num_mlp_layers,
            "epsilon": self.epsilon,
            "train_epsilon": self.train_epsilon,
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class GCNConv(_GraphConvolution):
    """The graph convolution of Kipf and Welling (GCN).

    Each node is updated as `activation(W sum_u h_u / sqrt(d_u d_v) + b)`,
    the sum running over the nodes u with an edge to v and, with
    `add_self_loops`, over v itself: the symmetric normalisation
    `D^-1/2 (A + I) D^-1/2` of the adjacency matrix with self-loops, where
    `d_v` counts the edges arriving at v, its self-loop included (Kipf and
    Welling, "Semi-Supervised Classification with Graph Convolutional
    Networks", ICLR 2017). Without self-loops, a node that no edge
    reaches has `d = 0`: it gets `activation(b)` and its own messages
    weigh 0 (as in PyTorch Geometric's normalisation). One of the
    baselines of the LAF paper's graph benchmark.

    Args:
        units: int. Output features per node.
        add_self_loops: bool. Whether every node is its own neighbour.
            Defaults to `True`.
        activation: activation of the output. Defaults to no activation.
        use_bias: bool. Whether the dense layer uses a bias. Defaults to
            `True`.
        kernel_initializer: initializer of the dense kernel.
        bias_initializer: initializer of the dense bias.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        edge_source: int tensor `(num_edges,)`, the sending node of each
            edge, in `[0, num_nodes)`.
        edge_target: int tensor `(num_edges,)`, the receiving node.

    Input shape:
        `(num_nodes, features)`, with edge indices `(num_edges,)`.

    Output shape:
        `(num_nodes, units)`.

    Example:

    >>> layer = GCNConv(8, activation="relu")
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> tuple(layer(node_features, source, target).shape)
    (3, 8)
    """

    def __init__(
        self,
        units,
        add_self_loops=True,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.add_self_loops = bool(add_self_loops)

    def _build_for_features(self, features):
        self._dense_layer = dense_sublayer(
            self, self.units, "dense", self.activation
        )
        self._dense_layer.build((None, features))

    def call(self, node_features, edge_source, edge_target):
        node_features, source, target, num_nodes = self._prepare(
            node_features, edge_source, edge_target
        )
        if self.add_self_loops:
            source, target = _with_self_loops(source, target, num_nodes)
        # (num_nodes,): the in-degree, self-loop included.
        degrees = ops.segment_sum(
            ops.ones_like(target, dtype="float32"), target, num_nodes
        )
        inverse_roots = ops.where(
            degrees > 0, ops.rsqrt(ops.maximum(degrees, 1.0)), 0.0
        )
        # (num_edges,): 1 / sqrt(d_source d_target).
        weights = ops.take(inverse_roots, source) * ops.take(
            inverse_roots, target
        )
        weights = ops.cast(weights, self.compute_dtype)[:, None]
        # (num_nodes, features); the dense layer is linear before its
        # activation, so it may follow the propagation.
        propagated = ops.segment_sum(
            weights * ops.take(node_features, source, axis=0),
            target,
            num_nodes,
        )
        # (num_nodes, units)
        return self._dense_layer(propagated)

    def get_config(self):
        return {
            **super().get_config(),
            "add_self_loops": self.add_self_loops,
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class GATConv(_GraphConvolution):
    """The graph attention layer of Velickovic et al. (GAT).

    Every head k projects the nodes, `z_v = W_k h_v`, and scores each edge
    (u, v) as `e_uv = LeakyReLU(a_k . [z_v, z_u])` with a negative slope of
    `negative_slope`; the scores of the edges arriving at a node (its
    self-loop included, with `add_self_loops`) are normalised with a
    softmax, `alpha_uv = softmax_u(e_uv)`, computed with segment
    operations, and the node's output is `sum_u alpha_uv z_u`. The heads
    are concatenated (`concat_heads=True`, `num_heads * units` features)
    or averaged (`units` features), then a bias and `activation` follow
    (Velickovic et al., "Graph Attention Networks", ICLR 2018). A node
    without incoming edges (and no self-loop) gets `activation(b)`. One of
    the baselines of the LAF paper's graph benchmark.

    Args:
        units: int. Output features per node and head.
        num_heads: int. Attention heads. Defaults to `1`.
        concat_heads: bool. Whether the heads are concatenated (else
            averaged). Defaults to `True`.
        negative_slope: float. The LeakyReLU slope of the scores, at
            least 0. Defaults to `0.2`, as GAT.
        dropout: float in [0, 1). Dropout rate of the attention
            coefficients while training. Defaults to `0.0`.
        add_self_loops: bool. Whether every node attends to itself.
            Defaults to `True`.
        activation: activation of the output. Defaults to no activation.
        use_bias: bool. Whether the output has a bias. Defaults to `True`.
        kernel_initializer: initializer of the projection and of the
            attention vectors.
        bias_initializer: initializer of the bias.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        edge_source: int tensor `(num_edges,)`, the sending node of each
            edge, in `[0, num_nodes)`.
        edge_target: int tensor `(num_edges,)`, the receiving node.
        training: bool, whether the attention dropout applies.

    Input shape:
        `(num_nodes, features)`, with edge indices `(num_edges,)`.

    Output shape:
        `(num_nodes, num_heads * units)` with `concat_heads`, else
        `(num_nodes, units)`.

    Example:

    >>> layer = GATConv(8, num_heads=2)
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> tuple(layer(node_features, source, target).shape)
    (3, 16)
    """

    def __init__(
        self,
        units,
        num_heads=1,
        concat_heads=True,
        negative_slope=0.2,
        dropout=0.0,
        add_self_loops=True,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.concat_heads = bool(concat_heads)
        self.negative_slope = _check_number(
            "negative_slope", negative_slope, minimum=0
        )
        self.dropout = _check_number("dropout", dropout, minimum=0, below=1)
        self.add_self_loops = bool(add_self_loops)

    @property
    def output_features(self):
        if self.concat_heads:
            return self.num_heads * self.units
        return self.units

    def _build_for_features(self, features):
        self._projection = dense_sublayer(
            self, self.num_heads * self.units, "projection", use_bias=False
        )
        self._projection.build((None, features))
        self.attention_target = self.add_weight(
            name="attention_target",
            shape=(self.num_heads, self.units),
            initializer=clone_initializer(self.kernel_initializer),
        )
        self.attention_source = self.add_weight(
            name="attention_source",
            shape=(self.num_heads, self.units),
            initializer=clone_initializer(self.kernel_initializer),
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias",
                shape=(self.output_features,),
                initializer=clone_initializer(self.bias_initializer),
            )
        self._dropout_layer = keras.layers.Dropout(
            self.dropout, name="attention_dropout", dtype=self.dtype_policy
        )

    def call(self, node_features, edge_source, edge_target, training=None):
        node_features, source, target, num_nodes = self._prepare(
            node_features, edge_source, edge_target
        )
        if self.add_self_loops:
            source, target = _with_self_loops(source, target, num_nodes)
        # (num_nodes, heads, units)
        projected = ops.reshape(
            self._projection(node_features), (-1, self.num_heads, self.units)
        )
        # (num_nodes, heads): each node's share of the scores.
        target_scores = ops.sum(projected * self.attention_target, axis=-1)
        source_scores = ops.sum(projected * self.attention_source, axis=-1)
        # (num_edges, heads)
        scores = ops.take(target_scores, target, axis=0) + ops.take(
            source_scores, source, axis=0
        )
        scores = ops.leaky_relu(scores, negative_slope=self.negative_slope)
        # The softmax over the edges arriving at each node, stable: the
        # node's largest score is subtracted first.
        scores = ops.cast(scores, "float32")
        largest = ops.segment_max(scores, target, num_nodes)
        exponentials = ops.exp(scores - ops.take(largest, target, axis=0))
        totals = ops.segment_sum(exponentials, target, num_nodes)
        coefficients = exponentials / ops.take(totals, target, axis=0)
        coefficients = ops.cast(coefficients, self.compute_dtype)
        coefficients = self._dropout_layer(coefficients, training=training)
        # (num_nodes, heads, units)
        outputs = ops.segment_sum(
            coefficients[:, :, None] * ops.take(projected, source, axis=0),
            target,
            num_nodes,
        )
        if self.concat_heads:
            outputs = ops.reshape(outputs, (-1, self.output_features))
        else:
            outputs = ops.mean(outputs, axis=1)
        if self.bias is not None:
            outputs = outputs + self.bias
        # (num_nodes, output_features)
        return self.activation(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "concat_heads": self.concat_heads,
            "negative_slope": self.negative_slope,
            "dropout": self.dropout,
            "add_self_loops": self.add_self_loops,
        }

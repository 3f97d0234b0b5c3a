"""Graph convolutions of the LAF paper's graph baselines: GIN, GCN, GAT;
and GINE, GIN with edge features.

The baselines of the graph-properties benchmark (Pellegrini et al.,
"Learning Aggregation Functions", IJCAI 2021, Section 4.5, after Corso et
al., "Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020),
and PyTorch Geometric's `GINEConv` for molecules' bonds, on the
disjoint-union graph batches of `keras_laf.graphs.message_passing`:

- `node_features` `(num_nodes, features)`,
- `edge_source`, `edge_target` int `(num_edges,)`: each directed edge
  sends a message from node `edge_source[i]` to node `edge_target[i]`
  (an undirected edge is two directed ones),
- `edge_features` `(num_edges, edge_features)` for `GINEConv`.

Each sums its messages by default, as in the papers; `aggregation` takes
any other aggregation by name or as a layer, as the `aggr` of PyTorch
Geometric's convolutions does. Each is the hooks of the template
`GraphConvolution` it overrides.
"""

import keras
from keras import ops

from keras_laf.aggregations.pooling import set_softmax
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import clone_initializer
from keras_laf.graphs.common import dense_sublayer
from keras_laf.graphs.message_passing import GraphConvolution


def _with_self_loops(source, target, num_nodes):
    # (num_edges + num_nodes,): an edge from every node to itself last.
    nodes = ops.arange(num_nodes, dtype="int32")
    return (
        ops.concatenate([source, nodes], axis=0),
        ops.concatenate([target, nodes], axis=0),
    )


@keras.saving.register_keras_serializable(package="keras_laf")
class GINConv(GraphConvolution):
    """The graph isomorphism network layer (GIN) of Xu et al.

    Each node is updated as `MLP((1 + epsilon) * h_v + sum_u h_u)`, the sum
    running over the nodes u with an edge to v, where `epsilon` is a
    learned scalar (GIN-epsilon of Xu et al., "How Powerful are Graph
    Neural Networks?", ICLR 2019) or a fixed one (`train_epsilon=False`;
    GIN-0 with `epsilon=0`). The MLP has `num_mlp_layers - 1` hidden dense
    layers of `hidden_units` with `activation`, then a linear dense layer
    of `units`. One of the baselines of the LAF paper's graph benchmark.

    With another `aggregation` the sum becomes that aggregate of the
    neighbours' features; an aggregation whose width is not the number of
    features (LAF's units, `Set2Set`, several aggregations) is mapped back
    to it by a learned linear map before the node's own term is added. An
    aggregation that expects elements in [0, 1] (LAF) gets the neighbours'
    features through a sigmoid.

    Args:
        units: int. Output features per node.
        aggregation: str, list of str or an aggregation layer: the
            aggregation of the neighbours' features, a name or list of
            `keras_laf.aggregations.resolve` or a layer such as
            `keras_laf.SoftmaxAggregation(learn=True)`. Defaults to
            `"sum"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
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
        aggregation="sum",
        aggregation_kwargs=None,
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
            aggregation=aggregation,
            aggregation_kwargs=aggregation_kwargs,
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
        self.epsilon = check_number("epsilon", epsilon)
        self.train_epsilon = bool(train_epsilon)

    def build_for_features(self, features, edge_features):
        width = self.build_aggregation(features)
        self._neighbour_projection = None
        if width != features:
            # (width,) aggregates -> (features,), beside the node's own.
            self._neighbour_projection = dense_sublayer(
                self, features, "neighbour_projection", use_bias=False
            )
            self._neighbour_projection.build((None, width))
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

    def update(self, aggregates, node_features, training):
        neighbours = aggregates
        if self._neighbour_projection is not None:
            # (num_nodes, features)
            neighbours = self._neighbour_projection(neighbours)
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
class GINEConv(GINConv):
    """GIN with edge features (GINE), as PyTorch Geometric's `GINEConv`.

    Each node is updated as `MLP((1 + epsilon) * h_v + sum_u ReLU(h_u +
    W e_uv + b))`, the sum running over the edges (u, v) arriving at v,
    `e_uv` their features: GIN's message from each neighbour with the
    edge's features added (Hu et al., "Strategies for Pre-training Graph
    Neural Networks", ICLR 2020), for molecules whose bonds carry
    features. The dense map `W e_uv + b` projects the edge features onto
    the node features' width always, also where the two widths are the
    same (PyTorch Geometric's `GINEConv` with `edge_dim`), so the layer's
    weights do not depend on whether they happen to match. `epsilon`,
    `train_epsilon`, the MLP and `aggregation` are those of
    `keras_laf.GINConv`: the sum by default, any aggregation by name (with
    `aggregation_kwargs`) or as a layer, LAF included, whose messages go
    through a sigmoid into [0, 1].

    Args:
        units: int. Output features per node.
        aggregation: str, list of str or an aggregation layer: the
            aggregation of the messages, a name or list of
            `keras_laf.aggregations.resolve` or a layer such as
            `keras_laf.LAF(4)`. Defaults to `"sum"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
        hidden_units: int. Units of the MLP's hidden layers. Defaults to
            `units`.
        num_mlp_layers: int. Dense layers of the MLP. Defaults to `2`.
        epsilon: float. The initial (or fixed) weight of the node itself
            beside the aggregate of its messages, in `1 + epsilon`.
            Defaults to `0.0`.
        train_epsilon: bool. Whether `epsilon` is learned. Defaults to
            `True`.
        activation: activation of the MLP's hidden layers. Defaults to
            `"relu"`.
        use_bias: bool. Whether the dense layers (the edge projection
            included) use biases. Defaults to `True`.
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the dense biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        edge_source: int tensor `(num_edges,)`, the sending node of each
            edge, in `[0, num_nodes)`.
        edge_target: int tensor `(num_edges,)`, the receiving node.
        edge_features: float tensor `(num_edges, edge_features)`, needed:
            without it, or of another rank, the call raises a ValueError.
        training: bool, passed to an aggregation that takes it.

    Input shape:
        `(num_nodes, features)`, with edge indices `(num_edges,)` and edge
        features `(num_edges, edge_features)`.

    Output shape:
        `(num_nodes, units)`.

    Example:

    >>> layer = GINEConv(8)
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> # A path 0 - 1 - 2, each edge in both directions, 2 bond features.
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> bonds = np.random.rand(4, 2).astype("float32")
    >>> tuple(layer(node_features, source, target, bonds).shape)
    (3, 8)
    """

    edge_features_input = "required"

    def build_for_features(self, features, edge_features):
        super().build_for_features(features, edge_features)
        # (edge_features,) -> (features,), added to the neighbour's.
        self._edge_projection = dense_sublayer(
            self, features, "edge_projection"
        )
        self._edge_projection.build((None, edge_features))

    def message(self, node_features, source, target, edge_features, training):
        # (num_edges, features)
        return ops.relu(
            ops.take(node_features, source, axis=0)
            + self._edge_projection(edge_features)
        )


@keras.saving.register_keras_serializable(package="keras_laf")
class GCNConv(GraphConvolution):
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

    With another `aggregation` the sum becomes that aggregate of the
    normalised messages `h_u / sqrt(d_u d_v)`, and the dense layer maps its
    width to `units`. An aggregation that expects elements in [0, 1] (LAF)
    gets the messages through a sigmoid.

    Args:
        units: int. Output features per node.
        aggregation: str, list of str or an aggregation layer: the
            aggregation of the normalised messages, a name or list of
            `keras_laf.aggregations.resolve` or a layer such as
            `keras_laf.PowerMeanAggregation(learn=True)`. Defaults to
            `"sum"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
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
        aggregation="sum",
        aggregation_kwargs=None,
        add_self_loops=True,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(
            units,
            aggregation=aggregation,
            aggregation_kwargs=aggregation_kwargs,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.add_self_loops = bool(add_self_loops)

    def build_for_features(self, features, edge_features):
        width = self.build_aggregation(features)
        self._dense_layer = dense_sublayer(
            self, self.units, "dense", self.activation
        )
        self._dense_layer.build((None, width))

    def edges(self, source, target, num_nodes):
        if self.add_self_loops:
            return _with_self_loops(source, target, num_nodes)
        return source, target

    def message(self, node_features, source, target, edge_features, training):
        num_nodes = ops.shape(node_features)[0]
        # (num_nodes,): the in-degree, self-loop included, through the
        # shared segment path.
        degrees = SegmentSets(target, num_nodes).sum(
            ops.ones_like(target, dtype="float32")
        )
        inverse_roots = ops.where(
            degrees > 0, ops.rsqrt(ops.maximum(degrees, 1.0)), 0.0
        )
        # (num_edges, 1): 1 / sqrt(d_source d_target).
        weights = ops.take(inverse_roots, source) * ops.take(
            inverse_roots, target
        )
        weights = ops.cast(weights, self.compute_dtype)[:, None]
        return weights * ops.take(node_features, source, axis=0)

    def update(self, aggregates, node_features, training):
        # The dense layer is linear before its activation, so it may
        # follow the propagation. (num_nodes, units)
        return self._dense_layer(aggregates)

    def get_config(self):
        return {
            **super().get_config(),
            "add_self_loops": self.add_self_loops,
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class GATConv(GraphConvolution):
    """The graph attention layer of Velickovic et al. (GAT).

    Every head k projects the nodes, `z_v = W_k h_v`, and scores each edge
    (u, v) as `e_uv = LeakyReLU(a_k . [z_v, z_u])` with a negative slope of
    `negative_slope`; the scores of the edges arriving at a node (its
    self-loop included, with `add_self_loops`) are normalised with a
    softmax, `alpha_uv = softmax_u(e_uv)` (`keras_laf.aggregations.
    set_softmax` over the edges of each target), and the node's output is
    `sum_u alpha_uv z_u`. The heads
    are concatenated (`concat_heads=True`, `num_heads * units` features)
    or averaged (`units` features), then a bias and `activation` follow
    (Velickovic et al., "Graph Attention Networks", ICLR 2018). A node
    without incoming edges (and no self-loop) gets `activation(b)`. One of
    the baselines of the LAF paper's graph benchmark.

    With another `aggregation` the sum becomes that aggregate of the
    weighted messages `alpha_uv z_u`, each head aggregated alone (the
    aggregation's weights shared by the heads), so a head has the
    aggregation's width on `units` features. An aggregation that expects
    elements in [0, 1] (LAF) gets the messages through a sigmoid.

    Args:
        units: int. Output features per node and head.
        aggregation: str, list of str or an aggregation layer: the
            aggregation of the weighted messages, a name or list of
            `keras_laf.aggregations.resolve` or a layer such as
            `keras_laf.LAF(4)`. Defaults to `"sum"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
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
        `(num_nodes, num_heads * width)` with `concat_heads`, else
        `(num_nodes, width)`; `width` is `units` for the sum.

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
        aggregation="sum",
        aggregation_kwargs=None,
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
            aggregation=aggregation,
            aggregation_kwargs=aggregation_kwargs,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.concat_heads = bool(concat_heads)
        self.negative_slope = check_number(
            "negative_slope", negative_slope, minimum=0
        )
        self.dropout = check_number("dropout", dropout, minimum=0, below=1)
        self.add_self_loops = bool(add_self_loops)

    def output_features(self, features):
        width = self.aggregation_width(self.units)
        if self.concat_heads:
            return self.num_heads * width
        return width

    def build_for_features(self, features, edge_features):
        self.build_aggregation(self.units)
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
                shape=(self.output_features(features),),
                initializer=clone_initializer(self.bias_initializer),
            )
        self._dropout_layer = keras.layers.Dropout(
            self.dropout, name="attention_dropout", dtype=self.dtype_policy
        )

    def edges(self, source, target, num_nodes):
        if self.add_self_loops:
            return _with_self_loops(source, target, num_nodes)
        return source, target

    def message(self, node_features, source, target, edge_features, training):
        num_nodes = ops.shape(node_features)[0]
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
        # The softmax over the edges arriving at each node.
        coefficients = set_softmax(
            ops.cast(scores, "float32"), SegmentSets(target, num_nodes)
        )
        coefficients = ops.cast(coefficients, self.compute_dtype)
        coefficients = self._dropout_layer(coefficients, training=training)
        # (num_edges, heads, units)
        return coefficients[:, :, None] * ops.take(projected, source, axis=0)

    def aggregate(self, values, sets, training=None):
        # Each head aggregated alone: the edge of head k into node v is an
        # element of set v * heads + k. (num_edges * heads, units)
        head_sets = SegmentSets(
            ops.reshape(
                sets.segment_ids[:, None] * self.num_heads
                + ops.arange(self.num_heads, dtype=sets.segment_ids.dtype),
                (-1,),
            ),
            sets.num_segments * self.num_heads,
        )
        aggregates = super().aggregate(
            ops.reshape(values, (-1, self.units)), head_sets, training
        )
        # (num_nodes, heads, width)
        return ops.reshape(
            aggregates, (-1, self.num_heads, aggregates.shape[-1])
        )

    def update(self, aggregates, node_features, training):
        if self.concat_heads:
            outputs = ops.reshape(
                aggregates, (-1, self.num_heads * aggregates.shape[-1])
            )
        else:
            outputs = ops.mean(aggregates, axis=1)
        if self.bias is not None:
            outputs = outputs + self.bias
        # (num_nodes, output_features(features))
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

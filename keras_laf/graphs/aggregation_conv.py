"""`AggregationConv`: messages of both nodes and the edge, aggregated by
any aggregation of the package.

LAF (Pellegrini et al., "Learning Aggregation Functions", IJCAI 2021),
fixed aggregators, or PNA's aggregators with its degree scalers (Corso et
al., "Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020)
as a `keras_laf.DegreeScalerAggregation`, on the disjoint-union graphs of
`keras_laf.graphs.message_passing`. `MessagePassing`, its name in
keras-laf 0.1.0, is in `keras_laf.compat`.
"""

import keras
from keras import ops

from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.common import dense_sublayer
from keras_laf.graphs.message_passing import GraphConvolution


@keras.saving.register_keras_serializable(package="keras_laf")
class AggregationConv(GraphConvolution):
    """A message-passing layer whose neighbour aggregation is an argument.

    For each directed edge (u, v) a message
    `m_uv = message_activation(W_m [h_v, h_u, e_uv] + b_m)` is computed from
    the features of the receiving node v, the sending node u and, when
    given, the edge features. The messages arriving at each node are
    aggregated with `aggregation`, and the node is updated as
    `activation(W [h_v, aggregates] + b)`: the message-passing network of
    Gilmer et al. (2017) that PNA (Corso et al., NeurIPS 2020) and the LAF
    paper's graph benchmark (Pellegrini et al., IJCAI 2021, Section 4.5,
    with LAF units as the aggregation) build on.

    The aggregation is resolved once, as the `aggr` of PyTorch Geometric's
    convolutions: a name or a list of names of
    `keras_laf.aggregations.resolve` (`"laf"`, `"sum"`, `"mean"`, `"max"`,
    `"softmax"`, `"set2set"`, `["mean", "max", "min", "std"]`, ...) makes
    a new layer, and an aggregation layer is used as it is
    (`keras_laf.LAF(8, preset="closed_forms")`,
    `keras_laf.SoftmaxAggregation(learn=True)`, `keras_laf.Set2Set()`,
    `keras_laf.MultiAggregation([...])`, or PNA's aggregators with its
    scalers, `keras_laf.DegreeScalerAggregation(["mean", "max"],
    ["identity", "amplification"], degree_histogram=...)`). An
    aggregation that expects elements in [0, 1] (LAF, also inside a
    `DegreeScalerAggregation`) gets sigmoid messages by default; the others
    get linear ones.

    The name says what sets the layer apart, in the `*Conv` naming of the
    package's and PyTorch Geometric's convolutions; PyTorch Geometric's
    `MessagePassing` is the abstract base of its convolutions, which
    `keras_laf.graphs.message_passing.GraphConvolution` is here.

    A node without incoming edges aggregates the empty set: fixed
    aggregates and LAF's are 0 (see `keras_laf.LAF`), so every output is
    finite, also for empty edge lists and single-node graphs.

    Args:
        units: int. Output features per node.
        aggregation: str, list of str, or an aggregation layer (a
            `keras_laf.SetAggregation` with a flat output). Defaults to
            `"laf"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
        message_units: int. Features of each message. Defaults to `units`.
        message_activation: activation of the messages. Defaults to
            `"sigmoid"` for an aggregation that expects elements in
            [0, 1] (LAF) and to no activation otherwise.
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
        training: bool, passed to an aggregation that takes it.

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

    >>> layer = AggregationConv(8, aggregation=["mean", "max"])
    >>> node_features = np.random.rand(3, 4).astype("float32")
    >>> # A path 0 - 1 - 2, each edge in both directions.
    >>> source, target = np.array([0, 1, 1, 2]), np.array([1, 0, 2, 1])
    >>> tuple(layer(node_features, source, target).shape)
    (3, 8)

    PNA's aggregators and scalers, with the degrees of the training graphs:

    >>> pna = keras_laf.DegreeScalerAggregation(
    ...     ["mean", "max", "min", "std"],
    ...     ["identity", "amplification", "attenuation"],
    ...     degree_histogram=keras_laf.degree_histogram(target, num_nodes=3),
    ... )
    >>> layer = AggregationConv(8, aggregation=pna)
    >>> tuple(layer(node_features, source, target).shape)
    (3, 8)
    """

    edge_features_input = "optional"

    def __init__(
        self,
        units,
        aggregation="laf",
        aggregation_kwargs=None,
        message_units=None,
        message_activation=None,
        activation="leaky_relu",
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
        self.message_units = check_positive_int(
            "message_units", units if message_units is None else message_units
        )
        if message_activation is None:
            message_activation = (
                "sigmoid"
                if self._aggregating_layer().input_domain == "unit_interval"
                else "linear"
            )
        self.message_activation = keras.activations.get(message_activation)
        # The message activation squashes the messages where LAF needs it.
        self.squash_messages = False

    def build_for_features(self, features, edge_features):
        # [h_v, h_u (, e_uv)] -> message_units
        message_inputs = 2 * features + (edge_features or 0)
        self._message_dense = dense_sublayer(
            self, self.message_units, "message", self.message_activation
        )
        self._message_dense.build((None, message_inputs))
        width = self.build_aggregation(self.message_units)
        self._update_dense = dense_sublayer(
            self, self.units, "update", self.activation
        )
        self._update_dense.build((None, features + width))

    def message(self, node_features, source, target, edge_features, training):
        # (num_edges, 2 * features [+ edge_features]) -> (num_edges,
        # message_units)
        message_inputs = [
            ops.take(node_features, target, axis=0),
            ops.take(node_features, source, axis=0),
        ]
        if edge_features is not None:
            message_inputs.append(edge_features)
        return self._message_dense(ops.concatenate(message_inputs, -1))

    def update(self, aggregates, node_features, training):
        # (num_nodes, units)
        return self._update_dense(
            ops.concatenate([node_features, aggregates], axis=-1)
        )

    def get_config(self):
        return {
            **super().get_config(),
            "message_units": self.message_units,
            "message_activation": keras.activations.serialize(
                self.message_activation
            ),
        }

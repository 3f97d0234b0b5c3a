"""The bases of the graph layers: the aggregation they hold, their inputs.

`GraphLayer` holds the aggregation of a graph layer, resolved once from
what the user passed, as PyTorch Geometric's `aggregation_resolver` does:
a name or a list of names of `keras_laf.aggregations.resolve` becomes a new
layer, an aggregation layer (`keras_laf.LAF(4, preset="closed_forms")`,
`SoftmaxAggregation(learn=True)`, `Set2Set`, a `DegreeScalerAggregation`,
...) is used as it is. It builds it as a sub-layer, saves it in its config
and declares the node features as its first input.

`GraphConvolution` adds what the convolutions share (`units`, the
activation and initializers, the edge indices of their call); the
convolutions subclass it, as every convolution of PyTorch Geometric
subclasses its `MessagePassing` base.
"""

import keras
from keras import ops

from keras_laf import aggregations
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import prepare_graph


def _check_flat(layer):
    shape = layer.compute_output_shape((None, 1))
    if len(shape) != 2:
        raise ValueError(
            "A graph layer takes aggregations with flat outputs "
            f"(num_sets, width). Received: '{layer.name}' with an "
            f"output of shape {shape}; create it with `flatten=True`"
        )


class GraphLayer(keras.layers.Layer):
    """The base of the graph layers: one aggregation, node features first.

    Subclasses call `build_aggregation(features)` in `build` and
    `aggregate(values, segment_ids, num_segments)` in `call`.

    Args:
        aggregation: str, list of str or an aggregation layer: an
            identifier of `keras_laf.aggregations.resolve`, a user's
            registered name included.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.
    """

    def __init__(self, aggregation, aggregation_kwargs=None, **kwargs):
        super().__init__(**kwargs)
        # `aggregation` is what was passed (a name, a list or the layer),
        # `_aggregation` the layer in every case.
        self._aggregation = aggregations.resolve(
            aggregation,
            **aggregations.held_kwargs(
                aggregation,
                aggregation_kwargs,
                "aggregation",
                self.dtype_policy,
            ),
        )
        _check_flat(self._aggregation)
        self.aggregation = aggregation
        self.aggregation_kwargs = dict(aggregation_kwargs or {})
        # The node features; the indices are checked in call.
        self.input_spec = keras.layers.InputSpec(ndim=2)

    @property
    def num_aggregates(self):
        """Aggregates per feature of an aggregation that aggregates each
        feature alone (LAF, the fixed aggregators, ...); None for those
        that mix the features (the poolings, `MultiAggregation`)."""
        return self._aggregating_layer().num_aggregates

    def _aggregating_layer(self):
        # The layer whose aggregates the graph layer takes.
        return self._aggregation

    def aggregation_layer(self):
        """The aggregation layer the graph layer aggregates with.

        A method, not a property: Keras saves a layer's weights under the
        first attribute that reaches them, public ones first, and files
        saved before hold them under the private attribute."""
        return self._aggregating_layer()

    def aggregation_width(self, features):
        """The width of the aggregates of `features` features."""
        shape = self._aggregating_layer().compute_output_shape((None, features))
        return shape[-1]

    def build_aggregation(self, features):
        """Builds the aggregation for `features` features; its width."""
        layer = self._aggregating_layer()
        if not layer.built:
            layer.build((None, features))
        return self.aggregation_width(features)

    def build_node_features(self, node_features_shape):
        """Checks the node features' shape and fixes their features in the
        input spec; the number of features."""
        features = check_node_shape(node_features_shape, self)[-1]
        self.input_spec = keras.layers.InputSpec(ndim=2, axes={-1: features})
        return features

    def aggregate(self, values, segment_ids, num_segments, training=None):
        """Aggregates `values` `(num_elements, features)` over checked
        `segment_ids`: `(num_segments, width)`."""
        sets = SegmentSets(segment_ids, num_segments)
        outputs = self._aggregating_layer().aggregate_sets(
            values, sets, training=training
        )
        return ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        aggregation = self.aggregation
        if isinstance(aggregation, keras.layers.Layer):
            aggregation = keras.saving.serialize_keras_object(aggregation)
        return {
            **super().get_config(),
            "aggregation": aggregation,
            "aggregation_kwargs": dict(self.aggregation_kwargs),
        }

    @classmethod
    def from_config(cls, config):
        if isinstance(config.get("aggregation"), dict):
            config["aggregation"] = keras.saving.deserialize_keras_object(
                config["aggregation"]
            )
        return cls(**config)


class GraphConvolution(GraphLayer):
    """The base of the convolutions: node features and edge indices in,
    `output_features(features)` features per node out.

    A convolution is its few lines of difference, as PyTorch Geometric's
    `MessagePassing` subclasses are: `propagate` checks the graph, then
    runs the hooks `edges` (the edges messages travel along: the graph's,
    or with self-loops), `message` (what each edge carries, `(num_edges,
    features)`), `aggregate_messages` (the aggregation held, over the
    messages arriving at each node) and `update` (the node's new
    features from its aggregate and its features). Subclasses implement
    `build_for_features(features)`, `message` where an edge carries more
    than its source's features, and `update`.

    Args:
        units: int. Output features per node.
        aggregation, aggregation_kwargs: as for `GraphLayer`.
        activation: activation of the output.
        use_bias: bool. Whether the dense layers use biases.
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.
    """

    def __init__(
        self,
        units,
        aggregation="sum",
        aggregation_kwargs=None,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(aggregation, aggregation_kwargs, **kwargs)
        self.units = check_positive_int("units", units)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        # LAF takes its elements in [0, 1]: the convolutions squash the
        # messages they give it, as MultiAggregation squashes its elements.
        self.squash_messages = self._aggregation.input_domain == "unit_interval"

    def prepare(self, node_features, edge_source, edge_target):
        """Casts the features and checks the indices against the nodes."""
        check_edges(node_features, edge_source, edge_target, self)
        return prepare_graph(
            node_features, edge_source, edge_target, self.compute_dtype
        )

    def call(self, node_features, edge_source, edge_target, training=None):
        return self.propagate(
            node_features, edge_source, edge_target, training=training
        )

    def propagate(
        self,
        node_features,
        edge_source,
        edge_target,
        edge_features=None,
        training=None,
    ):
        """The convolution: `update(aggregate_neighbours(...))`.

        Returns:
            `(num_nodes, output_features(features))`.
        """
        aggregates = self.aggregate_neighbours(
            node_features, edge_source, edge_target, edge_features, training
        )
        node_features = ops.cast(node_features, self.compute_dtype)
        return self.update(aggregates, node_features, training)

    def aggregate_neighbours(
        self,
        node_features,
        edge_source,
        edge_target,
        edge_features=None,
        training=None,
    ):
        """The aggregates of the messages arriving at each node: the
        layer's output before the update.

        Args:
            node_features: float tensor `(num_nodes, features)`.
            edge_source: int tensor `(num_edges,)`, the sending node of
                each edge.
            edge_target: int tensor `(num_edges,)`, the receiving node.
            edge_features: optional float tensor `(num_edges,
                edge_features)`, for the convolutions whose messages
                take them.
            training: bool, passed to the aggregation.

        Returns:
            `(num_nodes, ...)`, what `aggregate_messages` gives.
        """
        node_features, source, target, num_nodes = self.prepare(
            node_features, edge_source, edge_target
        )
        source, target = self.edges(source, target, num_nodes)
        messages = self.message(
            node_features, source, target, edge_features, training
        )
        return self.aggregate_messages(messages, target, num_nodes, training)

    def edges(self, source, target, num_nodes):
        """The edges the messages travel along: the graph's own."""
        return source, target

    def message(self, node_features, source, target, edge_features, training):
        """What each edge carries: its source's features, `(num_edges,
        features)`."""
        return ops.take(node_features, source, axis=0)

    def aggregate_messages(self, messages, edge_target, num_nodes, training):
        """The aggregates of the messages `(num_edges, features)` arriving
        at each node: `(num_nodes, width)`, through `squash_inputs` into
        the aggregation's input domain."""
        if self.squash_messages:
            messages = self._aggregating_layer().squash_inputs(messages)
        return self.aggregate(messages, edge_target, num_nodes, training)

    def update(self, aggregates, node_features, training):
        """The node's new features from its aggregate and its features
        `(num_nodes, features)`: `(num_nodes, output_features(features))`.
        """
        raise NotImplementedError

    def output_features(self, features):
        """Output features per node for `features` input features."""
        return self.units

    def build(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
    ):
        self.build_for_features(self.build_node_features(node_features_shape))

    def build_for_features(self, features):
        """Creates the weights and sub-layers for `features` inputs."""
        raise NotImplementedError

    def compute_output_spec(
        self, node_features, edge_source, edge_target, training=None
    ):
        # Checks dtypes and ranks while a functional model is built.
        check_edges(node_features, edge_source, edge_target, self)
        features = check_node_shape(node_features.shape, self)[-1]
        return keras.KerasTensor(
            (node_features.shape[0], self.output_features(features)),
            dtype=self.compute_dtype,
        )

    def compute_output_shape(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
    ):
        shape = check_node_shape(node_features_shape, self)
        return (shape[0], self.output_features(shape[-1]))

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

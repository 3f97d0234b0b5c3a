"""The bases of the graph layers: the aggregation they hold, their inputs.

`GraphLayer` holds the aggregation of a graph layer, resolved once from
what the user passed, as PyTorch Geometric's `aggregation_resolver` does:
a name or a list of names of `keras_laf.aggregations.get` becomes a new
layer, an aggregation layer (`keras_laf.LAF(4, preset="closed_forms")`,
`SoftmaxAggregation(learn=True)`, `Set2Set`, a `DegreeScalerAggregation`,
...) is used as it is. It builds it as a sub-layer, saves it in its config
and declares the node features as its first input.

`GraphConvolution` adds what the convolutions share (`units`, the
activation and initializers, the edge indices of their call); the
convolutions subclass it, as every convolution of PyTorch Geometric
subclasses its `MessagePassing` base.
"""

import inspect

import keras
from keras import ops

from keras_laf import aggregations
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import prepare_graph


def resolve_aggregation(
    aggregation,
    aggregation_kwargs,
    laf_units,
    laf_preset,
    dtype,
    caller,
    stacklevel=2,
):
    """The aggregation layer of a graph layer, and its arguments as kept.

    Args:
        aggregation: an identifier of `keras_laf.aggregations.get`: a
            name, a list of names, or an aggregation layer.
        aggregation_kwargs: optional dict, the arguments of an aggregation
            made from a name (PyTorch Geometric's `aggr_kwargs`).
        laf_units, laf_preset: the former shortcuts for LAF's units and
            preset, deprecated: `aggregation_kwargs` takes them.
        dtype: the dtype policy of a layer made from a name.
        caller: the graph layer's class name, for the deprecation warning.
        stacklevel: the frame the warning names, counted from this
            function's caller (1).

    Returns:
        A tuple `(aggregation_kwargs, layer)`: the arguments kept for the
        config, and the aggregation layer.
    """
    if aggregation_kwargs is not None and not isinstance(
        aggregation_kwargs, dict
    ):
        raise ValueError(
            "`aggregation_kwargs` must be a dict of the aggregation's "
            "arguments, e.g. {'units': 8} for 'laf'. Received: "
            f"aggregation_kwargs={aggregation_kwargs!r}"
        )
    aggregation_kwargs = aggregations.with_former_shortcuts(
        aggregation,
        aggregation_kwargs,
        laf_units,
        laf_preset,
        caller=caller,
        stacklevel=stacklevel + 1,
    )
    if isinstance(aggregation, keras.layers.Layer):
        layer = aggregations.get(aggregation, **aggregation_kwargs)
    else:
        layer = aggregations.get(
            aggregation, name="aggregation", dtype=dtype, **aggregation_kwargs
        )
    shape = layer.compute_output_shape((None, 1))
    if len(shape) != 2:
        raise ValueError(
            "A graph layer takes aggregations with flat outputs "
            f"(num_sets, width). Received: '{layer.name}' with an "
            f"output of shape {shape}; create it with `flatten=True`"
        )
    return aggregation_kwargs, layer


def _constructor_depth(layer):
    # How many frames of `layer`'s `__init__` chain (a subclass's
    # `super().__init__`) lie above the caller, itself included.
    frame = inspect.currentframe().f_back
    depth = 0
    while (
        frame is not None
        and frame.f_code.co_name == "__init__"
        and frame.f_locals.get("self") is layer
    ):
        depth += 1
        frame = frame.f_back
    return depth


def config_without_former_shortcuts(config):
    """A graph layer's config saved before `aggregation_kwargs`, with its
    `laf_units` and `laf_preset` (LAF's units were 16 by default then)
    turned into `aggregation_kwargs`, without a warning."""
    config = dict(config)
    if "laf_units" not in config and "laf_preset" not in config:
        return config
    laf_units = config.pop("laf_units", None)
    laf_preset = config.pop("laf_preset", None)
    aggregation = config.get("aggregation")
    if isinstance(aggregation, (str, list, tuple)):
        config["aggregation_kwargs"] = {
            **aggregations.former_shortcut_kwargs(
                aggregation, laf_units, laf_preset
            ),
            **(config.get("aggregation_kwargs") or {}),
        }
    return config


class GraphLayer(keras.layers.Layer):
    """The base of the graph layers: one aggregation, node features first.

    Subclasses call `build_aggregation(features)` in `build` and
    `aggregate(values, segment_ids, num_segments)` in `call`.

    Args:
        aggregation: str, list of str or an aggregation layer: an
            identifier of `keras_laf.aggregations.get`, a user's
            registered name included.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults.
        laf_units: int. Deprecated: `aggregation_kwargs={"units": ...}`.
        laf_preset: str. Deprecated: `aggregation_kwargs={"preset": ...}`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.
    """

    def __init__(
        self,
        aggregation,
        aggregation_kwargs=None,
        laf_units=None,
        laf_preset=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # `aggregation` is what was passed (a name, a list or the layer),
        # `_aggregation` the layer in every case.
        self.aggregation = aggregation
        self.aggregation_kwargs, self._aggregation = resolve_aggregation(
            aggregation,
            aggregation_kwargs,
            laf_units,
            laf_preset,
            self.dtype_policy,
            caller=type(self).__name__,
            stacklevel=_constructor_depth(self) + 1,
        )
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
        config = config_without_former_shortcuts(config)
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
        aggregation, aggregation_kwargs, laf_units, laf_preset: as for
            `GraphLayer`.
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
        laf_units=None,
        laf_preset=None,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(
            aggregation, aggregation_kwargs, laf_units, laf_preset, **kwargs
        )
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

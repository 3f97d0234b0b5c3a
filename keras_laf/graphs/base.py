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

import keras
from keras import ops

from keras_laf import aggregations
from keras_laf.aggregations import DegreeScalerAggregation
from keras_laf.aggregations import SetAggregation
from keras_laf.aggregations import SetPooling
from keras_laf.aggregations import needs_unit_interval
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import check_preset
from keras_laf.graphs.common import prepare_graph

# The LAF units of an aggregation named "laf" in a graph layer.
DEFAULT_LAF_UNITS = 16


def expects_unit_interval(aggregation):
    """Whether the aggregation layer takes elements in [0, 1] (LAF does,
    also inside a `DegreeScalerAggregation`)."""
    while isinstance(aggregation, DegreeScalerAggregation):
        aggregation = aggregation._aggregation
    return needs_unit_interval(aggregation)


def resolve_aggregation(aggregation, laf_units, laf_preset, dtype):
    """The identifier kept and the layer used for `aggregation`.

    Args:
        aggregation: a name or list of names of `keras_laf.aggregations.
            get`, or an aggregation layer.
        laf_units: optional int, the units of a `"laf"` (also the units of
            `"gru"` and `"lstm"` and the width of `"gmt"`) made from a name.
            Defaults to `DEFAULT_LAF_UNITS`.
        laf_preset: optional str, the `keras_laf.LAF` preset of a `"laf"`
            made from a name.
        dtype: the dtype policy of a layer made from a name.

    Returns:
        A tuple `(identifier, laf_units, laf_preset, layer)`: the name or
        list (normalised) or the layer itself, the shortcuts as kept (None
        for a layer), and the aggregation layer.
    """
    if isinstance(aggregation, keras.layers.Layer):
        if not isinstance(aggregation, SetAggregation):
            raise ValueError(
                "`aggregation` must be a name, a list of names or a "
                "`keras_laf.SetAggregation` layer (LAF, FixedAggregation, "
                "SoftmaxAggregation, Set2Set, ...). Received: aggregation of "
                f"type {type(aggregation).__name__}"
            )
        if laf_units is not None or laf_preset is not None:
            raise ValueError(
                "`laf_units` and `laf_preset` configure a LAF made from a "
                "name; an aggregation layer has its own, e.g. "
                "`keras_laf.LAF(units=8, preset='closed_forms')`. Received: "
                f"laf_units={laf_units!r}, laf_preset={laf_preset!r} with "
                f"aggregation={type(aggregation).__name__}"
            )
        shape = aggregation.compute_output_shape((None, 1))
        if len(shape) != 2:
            raise ValueError(
                "A graph layer takes aggregations with flat outputs "
                f"(num_sets, width). Received: '{aggregation.name}' with an "
                f"output of shape {shape}; create it with `flatten=True`"
            )
        return aggregation, None, None, aggregation
    identifier = aggregations.check(aggregation)
    laf_units = check_positive_int(
        "laf_units", DEFAULT_LAF_UNITS if laf_units is None else laf_units
    )
    laf_preset = check_preset(laf_preset)
    layer = aggregations.get(
        identifier,
        units=laf_units,
        preset=laf_preset,
        name="aggregation",
        dtype=dtype,
    )
    return identifier, laf_units, laf_preset, layer


class GraphLayer(keras.layers.Layer):
    """The base of the graph layers: one aggregation, node features first.

    Subclasses call `build_aggregation(features)` in `build` and
    `aggregate(values, segment_ids, num_segments)` in `call`.

    Args:
        aggregation: str, list of str or an aggregation layer (see
            `resolve_aggregation`).
        laf_units: int. Units of a `"laf"` given by name. Defaults to
            `None`: 16.
        laf_preset: str. The `keras_laf.LAF` preset of a `"laf"` given by
            name. Defaults to `None`: the layer's default.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.
    """

    def __init__(self, aggregation, laf_units=None, laf_preset=None, **kwargs):
        super().__init__(**kwargs)
        # `aggregation` is what was passed (a name, a list or the layer),
        # `_aggregation` the layer in every case.
        (
            self.aggregation,
            self.laf_units,
            self.laf_preset,
            self._aggregation,
        ) = resolve_aggregation(
            aggregation, laf_units, laf_preset, self.dtype_policy
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
        layer = self._aggregating_layer()
        sets = SegmentSets(segment_ids, num_segments)
        if isinstance(layer, SetPooling):
            outputs = layer.aggregate_sets(values, sets, training=training)
        else:
            outputs = layer.aggregate_sets(values, sets)
        return ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        aggregation = self.aggregation
        if isinstance(aggregation, keras.layers.Layer):
            aggregation = keras.saving.serialize_keras_object(aggregation)
        return {
            **super().get_config(),
            "aggregation": aggregation,
            "laf_units": self.laf_units,
            "laf_preset": self.laf_preset,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("aggregation"), dict):
            config["aggregation"] = keras.saving.deserialize_keras_object(
                config["aggregation"]
            )
        return cls(**config)


class GraphConvolution(GraphLayer):
    """The base of the convolutions: node features and edge indices in,
    `output_features(features)` features per node out.

    Subclasses implement `build_for_features(features)` and `call`.

    Args:
        units: int. Output features per node.
        aggregation, laf_units, laf_preset: as for `GraphLayer`.
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
        laf_units=None,
        laf_preset=None,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(aggregation, laf_units, laf_preset, **kwargs)
        self.units = check_positive_int("units", units)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        # LAF takes its elements in [0, 1]: the convolutions squash the
        # messages they give it, as MultiAggregation squashes its elements.
        self.squash_messages = expects_unit_interval(self._aggregation)

    def prepare(self, node_features, edge_source, edge_target):
        """Casts the features and checks the indices against the nodes."""
        check_edges(node_features, edge_source, edge_target, self)
        return prepare_graph(
            node_features, edge_source, edge_target, self.compute_dtype
        )

    def aggregate_messages(self, messages, edge_target, num_nodes, training):
        """The aggregates of the messages `(num_edges, features)` arriving
        at each node: `(num_nodes, width)`."""
        if self.squash_messages:
            messages = ops.sigmoid(messages)
        return self.aggregate(messages, edge_target, num_nodes, training)

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

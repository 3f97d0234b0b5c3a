"""The base of the graph layers: the aggregation they hold.

`GraphLayer` holds the aggregation of a graph layer, resolved once from
what the user passed, as PyTorch Geometric's `aggregation_resolver` does:
a name or a list of names of `keras_laf.aggregations.resolve` becomes a new
layer, an aggregation layer (`keras_laf.LAF(4, preset="closed_forms")`,
`SoftmaxAggregation(learn=True)`, `Set2Set`, a `DegreeScalerAggregation`,
...) is used as it is. It builds it as a sub-layer, saves it in its config
and declares the node features as its first input. `GraphReadout` and the
message-passing template `GraphConvolution` (in `message_passing`)
subclass it.
"""

import keras
from keras import ops

from keras_laf import aggregations
from keras_laf.graphs.common import check_node_shape


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
    `aggregate(values, sets)` in `call`.

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

    def aggregate(self, values, sets, training=None):
        """Aggregates `values` over `sets` with the aggregation held.

        The contract of `keras_laf.SetAggregation.aggregate`, values
        grouped by sets, with the aggregation's flat output.

        Args:
            values: `(num_elements, features)`.
            sets: a `keras_laf.core.sets.SegmentSets` of checked indices.
            training: bool, passed to an aggregation that takes it.

        Returns:
            `(num_sets, aggregation_width(features))`.
        """
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

"""The contract of every aggregation: `SetAggregation`.

What a caller needs from an aggregation is here, so that no caller tests
an aggregation's type: `aggregate_sets(values, sets, training)` on values
already in a set layout, `output_width(features)`, and the domain its
elements must lie in (`input_domain`), with `squash_inputs`, the one hook
that maps elements into it where a caller asks for that.
"""

import keras
from keras import ops

from keras_laf.core.sets import as_set_batch
from keras_laf.core.validation import aggregation_input_spec
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_set_inputs
from keras_laf.core.validation import check_set_shape


class SetAggregation(keras.layers.Layer):
    """Aggregates each feature of each set with `num_aggregates` functions.

    The base of every aggregation of keras-laf, and of a user's own:
    subclasses implement `aggregate(values, sets)`, returning
    `(num_sets, features, num_aggregates)`, and set `num_aggregates`; this
    class handles the three input forms (dense with an optional mask,
    ragged, flat values with segment ids), masks and output shapes.
    `keras_laf.aggregations.register(name)` makes a subclass usable by
    name everywhere. Aggregations whose output mixes the features subclass
    `keras_laf.SetPooling` instead.

    `input_domain` is where the elements must lie: `"real"`, or
    `"unit_interval"` for LAF, whose power sums take values in [0, 1].
    Layers that compute the elements they aggregate (the graph
    convolutions' messages, `MultiAggregation`'s members) pass them
    through `squash_inputs`, which maps them into that domain.

    Args:
        flatten: bool. If True, the output `(num_sets, features,
            num_aggregates)` is reshaped to `(num_sets, features *
            num_aggregates)`, aggregates of a feature adjacent. Defaults to
            `True`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: a dense tensor `(batch, set_size, features)`, a
            `tf.RaggedTensor` `(batch, None, features)`, or flat element
            values `(num_elements, features)` together with `segment_ids`.
        mask: optional boolean tensor `(batch, set_size)`, True for real
            elements of dense inputs; a Keras mask from an upstream layer
            (`Masking`, `Embedding(mask_zero=True)`) arrives here too.
            Padded elements have no effect on the output.
        segment_ids: optional int tensor `(num_elements,)`, the set of each
            element for flat inputs; need not be sorted.
        num_segments: optional int or scalar tensor, the number of sets for
            flat inputs. Defaults to `max(segment_ids) + 1`.
    """

    num_aggregates = None
    input_domain = "real"

    def __init__(self, flatten=True, **kwargs):
        super().__init__(**kwargs)
        self.flatten = check_bool("flatten", flatten)
        self.supports_masking = True
        # Sets (batch, set_size, features) or flat values with segment_ids
        # (num_elements, features), of any number of features.
        self.input_spec = aggregation_input_spec()

    def __call__(self, inputs, *args, **kwargs):
        check_set_inputs(self, inputs, kwargs.get("segment_ids"))
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape):
        # LAF and the fixed aggregators have weights for any number of
        # features, which the flattened output needs known.
        check_set_shape(self, input_shape)

    def call(self, inputs, mask=None, segment_ids=None, num_segments=None):
        return self.aggregate_sets(
            *as_set_batch(inputs, mask, segment_ids, num_segments)
        )

    def aggregate_sets(self, values, sets, training=None):
        """The layer's output for values already in a set layout.

        For layers that hold an aggregation and have checked its inputs
        themselves (the graph layers, `MultiAggregation`).

        Args:
            values: `(elements..., features)` in the layout of `sets`.
            sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.
            training: bool. Whether the layer runs in training mode; the
                aggregations without dropout or other training-only
                behaviour ignore it.

        Returns:
            `(num_sets, output_width(features))`, or `(num_sets, features,
            num_aggregates)` without `flatten`.
        """
        outputs = self.aggregate(values, sets)
        if self.flatten:
            features = values.shape[-1]
            outputs = ops.reshape(outputs, (-1, features * self.num_aggregates))
        return outputs

    def output_width(self, features):
        """The width of the flat output for elements of `features`
        features: `features * num_aggregates`."""
        return features * self.num_aggregates

    def squash_inputs(self, values, activation=None):
        """`values` mapped into the layer's `input_domain`.

        Args:
            values: a float tensor.
            activation: the map into [0, 1] of an aggregation that takes
                its elements there. Defaults to `None`: the sigmoid.

        Returns:
            `activation(values)` for an aggregation of `"unit_interval"`
            inputs, `values` unchanged otherwise.
        """
        if self.input_domain != "unit_interval":
            return values
        if activation is None:
            return ops.sigmoid(values)
        return activation(values)

    def aggregate(self, values, sets):
        """Aggregates `values` over `sets`: `(num_sets, features, k)`."""
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        # Dense and ragged inputs are (batch, set_size, features); flat
        # segment inputs have one set per segment, unknown here.
        num_sets = input_shape[0] if len(input_shape) == 3 else None
        features = input_shape[-1]
        if self.flatten:
            return (num_sets, features * self.num_aggregates)
        return (num_sets, features, self.num_aggregates)

    def compute_mask(self, inputs, mask=None):
        # The set axis is reduced away.
        return None

    def get_config(self):
        return {**super().get_config(), "flatten": self.flatten}

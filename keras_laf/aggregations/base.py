"""Base class of the layers that aggregate every feature over every set."""

import keras
from keras import ops

from keras_laf.core.sets import as_set_batch
from keras_laf.core.validation import aggregation_input_spec
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_set_inputs
from keras_laf.core.validation import check_set_shape


class SetAggregation(keras.layers.Layer):
    """Aggregates each feature of each set with `num_aggregates` functions.

    Subclasses implement `aggregate(values, sets)`, returning
    `(num_sets, features, num_aggregates)`, and set `num_aggregates`; this
    class handles the three input forms (dense with an optional mask,
    ragged, flat values with segment ids), masks and output shapes.

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

    def aggregate_sets(self, values, sets):
        """The layer's output for values already in a set layout.

        For layers that hold an aggregation and have checked its inputs
        themselves (the graph layers): `values` `(elements..., features)`
        and their `PaddedSets` or `SegmentSets`.
        """
        outputs = self.aggregate(values, sets)
        if self.flatten:
            features = values.shape[-1]
            outputs = ops.reshape(outputs, (-1, features * self.num_aggregates))
        return outputs

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

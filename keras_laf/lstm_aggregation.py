"""An LSTM run over the elements of each set: the paper's LSTM baseline."""

import keras

from keras_laf.sets import SegmentSets
from keras_laf.sets import as_set_batch
from keras_laf.validation import aggregation_input_spec
from keras_laf.validation import check_positive_int
from keras_laf.validation import check_set_inputs
from keras_laf.validation import check_set_shape


@keras.saving.register_keras_serializable(package="keras_laf")
class LSTMAggregation(keras.layers.Layer):
    """Aggregates each set by running an LSTM over its elements.

    The LSTM baseline of the LAF paper: the set is read as a sequence and
    the last hidden state is its aggregate. Unlike every other aggregator
    of keras_laf, this one depends on the order of the elements, by
    design; it is the baseline that shows what order-dependence costs.
    Padded elements are skipped; an empty set gives the initial state
    (zeros).

    Args:
        units: int. Size of the LSTM state, the output width. Defaults to
            `32`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`. With
            segment ids, the elements of a set are read in their order of
            appearance.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, units)`.

    Example:

    >>> layer = LSTMAggregation(units=4)
    >>> sets = tf.ragged.constant([[[1.0], [2.0]], [[3.0]]], ragged_rank=1)
    >>> tuple(layer(sets).shape)
    (2, 4)
    """

    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.supports_masking = True
        self.input_spec = aggregation_input_spec()

    def __call__(self, inputs, *args, **kwargs):
        check_set_inputs(self, inputs, kwargs.get("segment_ids"))
        return super().__call__(inputs, *args, **kwargs)

    def build(self, input_shape):
        features = check_set_shape(self, input_shape)[-1]
        self.input_spec = aggregation_input_spec(features)
        self.lstm = keras.layers.LSTM(
            self.units, name="lstm", dtype=self.dtype_policy
        )
        self.lstm.build((None, None, features))

    def call(self, inputs, mask=None, segment_ids=None, num_segments=None):
        values, sets = as_set_batch(inputs, mask, segment_ids, num_segments)
        if isinstance(sets, SegmentSets):
            values, sets = sets.to_padded(values)
        return self.lstm(values, mask=sets.mask)

    def compute_output_shape(self, input_shape):
        num_sets = input_shape[0] if len(input_shape) == 3 else None
        return (num_sets, self.units)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        return {**super().get_config(), "units": self.units}

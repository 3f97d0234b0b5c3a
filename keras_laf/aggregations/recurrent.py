"""Recurrent networks run over the elements of each set: the paper's LSTM
baseline, `LSTMAggregation`, and `GRUAggregation`."""

import keras

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import register
from keras_laf.core.sets import SegmentSets
from keras_laf.core.sets import segment_padding_compiles
from keras_laf.core.validation import check_positive_int


class _RecurrentAggregation(SetPooling):
    """A recurrent layer read over each set; its last state is the output.

    Padded sets go to the recurrent layer with their mask, so padded
    elements are skipped. Sets given by segment ids are padded first
    (`SegmentSets.to_padded`), on every backend; inside a JAX trace the
    padded width is the number of elements, a shape known as it traces.
    """

    # The Keras recurrent layer and the name of the sub-layer.
    recurrent_layer = None
    recurrent_name = None

    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)

    def build(self, input_shape):
        super().build(input_shape)
        self.supports_jit = segment_padding_compiles(input_shape)
        features = input_shape[-1]
        recurrent = self.recurrent_layer(
            self.units, name=self.recurrent_name, dtype=self.dtype_policy
        )
        setattr(self, self.recurrent_name, recurrent)
        recurrent.build((None, None, features))

    def output_width(self, features):
        return self.units

    def pool(self, values, sets, training=None):
        if isinstance(sets, SegmentSets):
            values, sets = sets.to_padded(values)
        recurrent = getattr(self, self.recurrent_name)
        # (num_sets, units)
        return recurrent(values, mask=sets.mask, training=training)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


@register("lstm", units=32)
class LSTMAggregation(_RecurrentAggregation):
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
            appearance; this pads the sets first.
        training: bool, passed to the LSTM.

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

    recurrent_layer = keras.layers.LSTM
    recurrent_name = "lstm"


@register("gru", units=32)
class GRUAggregation(_RecurrentAggregation):
    """Aggregates each set by running a GRU over its elements.

    As `LSTMAggregation`, with a gated recurrent unit (Cho et al., 2014;
    the `GRUAggregation` of PyTorch Geometric): the last hidden state is
    the aggregate. It depends on the order of the elements. Padded
    elements are skipped; an empty set gives the initial state (zeros).

    Args:
        units: int. Size of the GRU state, the output width. Defaults to
            `32`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`. With
            segment ids, the elements of a set are read in their order of
            appearance; this pads the sets first.
        training: bool, passed to the GRU.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, units)`.

    Example:

    >>> layer = GRUAggregation(units=4)
    >>> tuple(layer(np.random.rand(2, 3, 1)).shape)
    (2, 4)
    """

    recurrent_layer = keras.layers.GRU
    recurrent_name = "gru"

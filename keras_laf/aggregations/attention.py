"""Attention-weighted sums over sets: `AttentionalAggregation`, `Set2Set`."""

import keras
from keras import ops

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.pooling import set_softmax
from keras_laf.aggregations.registry import register
from keras_laf.core.validation import check_positive_int


def _check_layer(name, layer):
    if not isinstance(layer, keras.layers.Layer):
        raise ValueError(
            f"`{name}` must be a Keras layer applied to each element, such "
            f"as `keras.layers.Dense(1)`. Received: {name}={layer!r}"
        )
    return layer


def _apply(layer, values, training):
    if layer._call_has_training_arg:
        return layer(values, training=training)
    return layer(values)


@register("attention")
class AttentionalAggregation(SetPooling):
    """Attentional aggregation: a sum weighted by a softmax of learned gates.

    `sum_i softmax_i(gate(x_i)) * transform(x_i)` over the elements of each
    set (Li, Tarlow, Brockschmidt, Zemel, "Gated Graph Sequence Neural
    Networks", ICLR 2016; the global attention pooling of PyTorch
    Geometric). `gate` maps each element to one score, shared by every
    output feature, or to one score per output feature; `transform` maps
    it to the vector summed (the element itself when None). The softmax is
    over the real elements of each set; an empty set gives 0.

    Args:
        gate: a Keras layer mapping elements `(..., features)` to scores
            `(..., 1)` or `(..., width)`, `width` the output width. Defaults
            to `None`: `keras.layers.Dense(1)`.
        transform: optional Keras layer mapping elements `(..., features)`
            to `(..., width)`. Defaults to `None`: the elements themselves.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.
        training: bool, passed to `gate` and `transform`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, width)`: the width of `transform`'s output, or
        `features`.

    Example:

    >>> layer = AttentionalAggregation(
    ...     gate=keras.layers.Dense(1), transform=keras.layers.Dense(8)
    ... )
    >>> tuple(layer(np.random.rand(4, 5, 3)).shape)
    (4, 8)
    """

    def __init__(self, gate=None, transform=None, **kwargs):
        super().__init__(**kwargs)
        if gate is None:
            gate = keras.layers.Dense(1, name="gate", dtype=self.dtype_policy)
        self.gate = _check_layer("gate", gate)
        self.transform = (
            None if transform is None else _check_layer("transform", transform)
        )

    def build(self, input_shape):
        super().build(input_shape)
        element_shape = (None, input_shape[-1])
        for layer in (self.gate, self.transform):
            if layer is not None and not layer.built:
                layer.build(element_shape)
        width = self.output_width(input_shape[-1])
        scores = self.gate.compute_output_shape(element_shape)[-1]
        if scores not in (1, width):
            raise ValueError(
                f"Layer '{self.name}' (AttentionalAggregation) expects "
                "`gate` to give 1 score per element, or one per output "
                f"feature ({width}). Received: a gate giving {scores}"
            )

    def output_width(self, features):
        if self.transform is None:
            return features
        return self.transform.compute_output_shape((None, features))[-1]

    def pool(self, values, sets, training=None):
        # (elements..., 1 or width): the gates, normalised over each set.
        scores = ops.cast(_apply(self.gate, values, training), values.dtype)
        weights = set_softmax(scores, sets)
        if self.transform is not None:
            values = _apply(self.transform, values, training)
            values = ops.cast(values, weights.dtype)
        # (num_sets, width)
        return sets.sum(weights * values)

    def get_config(self):
        return {
            **super().get_config(),
            "gate": keras.saving.serialize_keras_object(self.gate),
            "transform": keras.saving.serialize_keras_object(self.transform),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for name in ("gate", "transform"):
            if config.get(name) is not None:
                config[name] = keras.saving.deserialize_keras_object(
                    config[name]
                )
        return cls(**config)


@register("set2set")
class Set2Set(SetPooling):
    """Set2Set: an LSTM query attending to the set, `processing_steps` times.

    The readout of Vinyals, Bengio, Kudlur, "Order Matters: Sequence to
    sequence for sets", ICLR 2016. At each step an LSTM cell, fed the
    previous `q*`, gives a query `q` of width `features`; each element
    gets the score `x_i . q`, the softmax of the scores over the set
    weighs the elements into a readout `r`, and `q* = [q, r]`. The output
    is the last `q*`, of width `2 * features`. The attention is over the
    real elements of each set; the element order has no effect. An empty
    set has `r = 0`.

    Args:
        processing_steps: int. Number of attention steps. Defaults to `3`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.
        training: bool, passed to the LSTM cell.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, 2 * features)`.

    Example:

    >>> layer = Set2Set(processing_steps=2)
    >>> tuple(layer(np.random.rand(4, 5, 3)).shape)
    (4, 6)
    """

    def __init__(self, processing_steps=3, **kwargs):
        super().__init__(**kwargs)
        self.processing_steps = check_positive_int(
            "processing_steps", processing_steps
        )

    def build(self, input_shape):
        super().build(input_shape)
        features = input_shape[-1]
        self.lstm = keras.layers.LSTMCell(
            features, name="lstm", dtype=self.dtype_policy
        )
        self.lstm.build((None, 2 * features))

    def output_width(self, features):
        return 2 * features

    def pool(self, values, sets, training=None):
        # (num_sets, features): zeros, one row per set.
        zeros = ops.zeros_like(sets.sum(values))
        states = [zeros, zeros]
        query_star = ops.concatenate([zeros, zeros], axis=-1)
        for _ in range(self.processing_steps):
            # (num_sets, features)
            query, states = self.lstm(query_star, states, training=training)
            query = ops.cast(query, values.dtype)
            # (elements..., 1): each element's score against its set's query.
            scores = ops.sum(
                values * sets.broadcast(query), axis=-1, keepdims=True
            )
            readout = sets.sum(set_softmax(scores, sets) * values)
            query_star = ops.concatenate([query, readout], axis=-1)
        return query_star  # (num_sets, 2 * features)

    def get_config(self):
        return {
            **super().get_config(),
            "processing_steps": self.processing_steps,
        }

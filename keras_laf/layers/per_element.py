"""Applies a layer to every element of every set."""

import keras
from keras import ops

from keras_laf.core.sets import is_ragged
from keras_laf.core.validation import check_backend_supports


@keras.saving.register_keras_serializable(package="keras_laf")
class PerElement(keras.layers.Wrapper):
    """Applies a layer to every element of every set, in any input form.

    Keras layers such as `Dense` and `Embedding` do not accept a
    `tf.RaggedTensor`. This wrapper applies them to the flat values of a
    ragged batch and returns a ragged batch with the same row lengths, so
    that a model on ragged sets runs end to end. Dense batches
    `(batch, set_size, ...)` are flattened to `(batch * set_size, ...)` and
    back; their Keras mask passes through unchanged.

    Args:
        layer: a `keras.layers.Layer` mapping one element `(...)` to
            `(...)`, applied to a batch of elements.
        **kwargs: base layer keyword arguments, such as `name`.

    Call arguments:
        inputs: a `tf.RaggedTensor` `(batch, None, ...)` or a dense tensor
            `(batch, set_size, ...)`.
        mask: optional Keras mask `(batch, set_size)`, passed through.
        training: passed to the wrapped layer.

    Input shape:
        `(batch, set_size, ...)`, ragged or dense.

    Output shape:
        `(batch, set_size) + layer output shape[1:]`, ragged if the input is.

    Example:

    >>> sets = tf.ragged.constant([[1, 2, 3], [4]])
    >>> PerElement(keras.layers.Embedding(10, 4))(sets).shape
    TensorShape([2, None, 4])
    """

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True
        # (batch, set_size, ...)
        self.input_spec = keras.layers.InputSpec(min_ndim=2)

    def __call__(self, inputs, *args, **kwargs):
        check_backend_supports(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def _element_shape(self, input_shape):
        return (None, *input_shape[2:])

    def build(self, input_shape):
        # A reloaded wrapper receives its layer already built.
        if not self.layer.built:
            self.layer.build(self._element_shape(input_shape))
        self.built = True

    def _apply(self, elements, training):
        if self.layer._call_has_training_arg:
            return self.layer(elements, training=training)
        return self.layer(elements)

    def call(self, inputs, mask=None, training=None):
        if is_ragged(inputs):
            return inputs.with_flat_values(
                self._apply(inputs.flat_values, training)
            )
        batch_size, set_size = ops.shape(inputs)[0], ops.shape(inputs)[1]
        elements = ops.reshape(inputs, (-1, *inputs.shape[2:]))
        outputs = self._apply(elements, training)
        return ops.reshape(outputs, (batch_size, set_size, *outputs.shape[1:]))

    def compute_output_shape(self, input_shape):
        element_output = self.layer.compute_output_shape(
            self._element_shape(input_shape)
        )
        return (*input_shape[:2], *element_output[1:])

    def compute_mask(self, inputs, mask=None):
        return mask

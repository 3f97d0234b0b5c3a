"""The permutation-equivariant layer of DeepSets."""

import keras
from keras import ops

from keras_laf.core.sets import PaddedSets
from keras_laf.core.sets import from_padded
from keras_laf.core.sets import to_padded
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import check_shape


@keras.saving.register_keras_serializable(package="keras_laf")
class PermutationEquivariant(keras.layers.Layer):
    """Maps each element x of a set to `activation(W (x - max(x)) + b)`.

    The max-normalised equivariant layer of Zaheer et al., "Deep Sets"
    (NeurIPS 2017), used in their point-cloud classifier: the maximum over
    the set, feature by feature, is subtracted from every element before a
    shared dense map. Permuting the elements of a set permutes the outputs
    the same way. Padded elements are left out of the maximum.

    Args:
        units: int. Output features per element.
        activation: activation of the output. Defaults to `None`.
        kernel_initializer: initializer of the dense kernel. Defaults to
            `"glorot_uniform"`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: `(batch, set_size, features)` dense, or a `tf.RaggedTensor`.
        mask: optional boolean `(batch, set_size)` for dense inputs.

    Input shape:
        `(batch, set_size, features)`, dense or ragged.

    Output shape:
        `(batch, set_size, units)`, ragged if the input is; the Keras mask
        passes through and padded positions are zero.

    Example:

    >>> layer = PermutationEquivariant(8, activation="tanh")
    >>> tuple(layer(np.random.rand(2, 5, 3)).shape)
    (2, 5, 8)
    """

    def __init__(
        self,
        units,
        activation=None,
        kernel_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units)
        self.activation = keras.activations.get(activation)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = True
        self.input_spec = keras.layers.InputSpec(ndim=3)

    def build(self, input_shape):
        shape = check_shape(
            self, "inputs", input_shape, (3,), "(batch, set_size, features)"
        )
        self.input_spec = keras.layers.InputSpec(ndim=3, axes={-1: shape[-1]})
        self.dense = keras.layers.Dense(
            self.units,
            activation=self.activation,
            kernel_initializer=self.kernel_initializer,
            name="dense",
            dtype=self.dtype_policy,
        )
        self.dense.build(input_shape)

    def call(self, inputs, mask=None):
        values, mask, row_lengths = to_padded(inputs, mask)
        if mask is None:
            maxima = ops.max(values, axis=1)
        else:
            maxima = PaddedSets(mask).max(values)
            maxima = ops.where(ops.isfinite(maxima), maxima, 0)
        outputs = self.dense(values - ops.expand_dims(maxima, 1))
        return from_padded(outputs, mask, row_lengths)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:2], self.units)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": keras.activations.serialize(self.activation),
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
        }

"""LAF over padded sets, where the backend takes them as segments.

On PyTorch the LAF layer computes padded sets with a mask, in eager
calls, as their real elements with segment ids
(`keras_laf.core.backend.prefers_segments_for_padded_sets`). Its outputs
and gradients must be those of the same sets as segments and of the
padded path itself (`keras_laf.ops.formula.laf_math`, what every other
backend runs), with empty sets, rows of padding only, NaN in a real
element and padding holding anything. On the other backends the same
tests compare their padded path with their segment path.
"""

import keras
import numpy as np
import pytest
from backend_helpers import BACKEND
from backend_helpers import numpy
from keras import ops

import keras_laf
from keras_laf.core import backend
from keras_laf.core.sets import PaddedSets
from keras_laf.core.sets import SegmentSets
from keras_laf.core.sets import as_set_batch
from keras_laf.core.sets import in_fastest_layout
from keras_laf.core.sets import real_elements
from keras_laf.ops import largest_finite
from keras_laf.ops.formula import laf_math

pytestmark = pytest.mark.multi_backend

UNITS = 3
FEATURES = 2
SET_SIZE = 6


def make_sets(garbage):
    """Padded sets `(5, 6, 2)`, their mask, and the same sets as flat
    values with segment ids: sets of 4, 0 (a row of padding only), 6, 1
    and 3 elements; NaN in feature 1 of the third set's second element,
    inf and -inf in the first set's feature 0 and the last set's feature
    1; padding holding `garbage`."""
    rng = np.random.default_rng(4)
    sizes = np.array([4, 0, 6, 1, 3])
    mask = np.arange(SET_SIZE)[None] < sizes[:, None]
    values = rng.uniform(0.02, 0.98, (len(sizes), SET_SIZE, FEATURES))
    values = values.astype("float32")
    values[2, 1, 1] = np.nan
    values[0, 2, 0] = np.inf
    values[4, 0, 1] = -np.inf
    values[~mask] = garbage
    segment_ids = np.repeat(np.arange(len(sizes)), sizes).astype("int32")
    return values, mask, values[mask], segment_ids


def make_layer():
    rng = np.random.default_rng(5)
    exponents = rng.uniform(0.2, 1.5, (8, UNITS)).astype("float32")
    coefficients = rng.uniform(0.5, 1.5, (4, UNITS)).astype("float32")
    layer = keras_laf.LAF(UNITS, flatten=False)
    layer.build((None, None, FEATURES))
    layer.set_weights([exponents, coefficients])
    return layer


def outputs_and_gradients(function, values, layer):
    """`function(values, exponents, coefficients)`, NaN where it is NaN,
    and the gradients of the sum of its finite outputs times fixed
    weights with respect to `values` and the layer's two weights, by the
    backend's autodiff."""
    weights = np.random.default_rng(6).normal(size=(5, FEATURES, UNITS))
    weights = ops.convert_to_tensor(weights.astype("float32"))
    parameters = [numpy(weight) for weight in layer.weights]

    def loss(values, exponents, coefficients):
        outputs = function(values, exponents, coefficients)
        finite = ops.where(ops.isnan(outputs), 0.0, outputs)
        return ops.sum(finite * weights), outputs

    if BACKEND == "jax":
        import jax

        (_, outputs), gradients = jax.value_and_grad(
            loss, argnums=(0, 1, 2), has_aux=True
        )(values, *parameters)
    elif BACKEND == "torch":
        import torch

        arguments = [
            torch.tensor(argument, requires_grad=True)
            for argument in (values, *parameters)
        ]
        total, outputs = loss(*arguments)
        gradients = torch.autograd.grad(total, arguments)
    else:
        import tensorflow as tf

        arguments = [
            tf.constant(argument) for argument in (values, *parameters)
        ]
        with tf.GradientTape() as tape:
            tape.watch(arguments)
            total, outputs = loss(*arguments)
        gradients = tape.gradient(total, arguments)
    return [numpy(outputs), *(numpy(gradient) for gradient in gradients)]


def layer_function(layer, **call_kwargs):
    def function(values, exponents, coefficients):
        return layer.stateless_call(
            [exponents, coefficients], [], values, **call_kwargs
        )[0]

    return function


def padded_math(layer, mask):
    """The padded path itself: `laf_math` on `PaddedSets`."""

    def function(values, exponents, coefficients):
        values, sets = as_set_batch(values, mask)
        assert isinstance(sets, PaddedSets)
        return laf_math(
            values,
            sets,
            exponents,
            coefficients,
            layer.epsilon,
            largest_finite("float32"),
            layer.output_bound,
        )

    return function


@pytest.mark.parametrize("garbage", [0.0, 1e30, -7.0, np.nan, np.inf], ids=str)
def test_padded_sets_equal_their_segments_and_the_padded_math(garbage):
    values, mask, flat_values, segment_ids = make_sets(garbage)
    layer = make_layer()
    padded = outputs_and_gradients(
        layer_function(layer, mask=mask), values, layer
    )
    segments = outputs_and_gradients(
        layer_function(layer, segment_ids=segment_ids, num_segments=5),
        flat_values,
        layer,
    )
    reference = outputs_and_gradients(padded_math(layer, mask), values, layer)
    outputs = padded[0]
    # NaN in the sets holding NaN or inf, in that feature only; the empty
    # set 0.
    expected_nan = np.zeros((5, FEATURES, UNITS), bool)
    expected_nan[[2, 0, 4], [1, 0, 1]] = True
    np.testing.assert_array_equal(np.isnan(outputs), expected_nan)
    np.testing.assert_array_equal(outputs[1], 0.0)
    # Padding gets no gradient, whatever it holds.
    np.testing.assert_array_equal(padded[1][~mask], 0.0)
    np.testing.assert_array_equal(reference[1][~mask], 0.0)
    for name, other in (("segments", segments), ("padded math", reference)):
        if name == "segments":
            other = [other[0], np.zeros_like(padded[1]), *other[2:]]
            other[1][mask] = segments[1]
        for got, want in zip(padded, other):
            np.testing.assert_allclose(
                got, want, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=name
            )


@pytest.mark.parametrize("shape", [(3, 4, 2), (0, 4, 2), (3, 0, 2)])
def test_only_padding_or_no_set_gives_zeros(shape):
    # No real element at all: the flat elements are empty.
    layer = make_layer()
    values = np.full(shape, 0.5, "float32")
    outputs = layer(values, mask=np.zeros(shape[:2], bool))
    assert tuple(outputs.shape) == (shape[0], FEATURES, UNITS)
    np.testing.assert_array_equal(numpy(outputs), 0.0)


def test_real_elements_in_row_order_with_their_set():
    values, mask, flat_values, segment_ids = make_sets(0.0)
    values = ops.where(ops.expand_dims(mask, -1), values, 0.0)
    elements, sets = real_elements(values, PaddedSets(ops.array(mask)))
    np.testing.assert_array_equal(numpy(elements), flat_values)
    np.testing.assert_array_equal(numpy(sets.segment_ids), segment_ids)
    assert sets.num_segments == 5
    np.testing.assert_array_equal(numpy(sets.sizes()), [4, 0, 6, 1, 3])


def test_padded_sets_in_a_functional_model_equal_eager_calls():
    # Built symbolically (on PyTorch on the "meta" device, where the
    # number of real elements is unknown) and called eagerly.
    values, mask, _, _ = make_sets(0.0)
    values[~np.isfinite(values)] = 0.5
    layer = make_layer()
    inputs = keras.Input((SET_SIZE, FEATURES))
    masks = keras.Input((SET_SIZE,), dtype="bool")
    model = keras.Model([inputs, masks], layer(inputs, mask=masks))
    np.testing.assert_allclose(
        numpy(model([values, mask])),
        numpy(layer(values, mask=mask)),
        rtol=1e-6,
    )


def test_only_pytorch_prefers_segments_for_padded_sets():
    assert backend.prefers_segments_for_padded_sets() == (BACKEND == "torch")


def test_the_functional_laf_takes_the_layers_layout():
    # `keras_laf.ops.laf` and the layer both go through
    # `in_fastest_layout`: padded sets become segments where the backend
    # prefers them, and the two give the same outputs.
    values, mask, flat_values, segment_ids = make_sets(0.0)
    values = ops.where(ops.expand_dims(mask, -1), values, 0.0)
    laid_out, sets = in_fastest_layout(values, PaddedSets(ops.array(mask)))
    if BACKEND == "torch":
        assert isinstance(sets, SegmentSets)
        np.testing.assert_array_equal(numpy(laid_out), flat_values)
        np.testing.assert_array_equal(numpy(sets.segment_ids), segment_ids)
    else:
        assert isinstance(sets, PaddedSets) and laid_out is values
    layer = make_layer()
    exponents, coefficients = layer.get_weights()
    functional = keras_laf.ops.laf(values, exponents, coefficients, mask=mask)
    np.testing.assert_allclose(
        numpy(functional),
        numpy(layer(values, mask=mask)),
        rtol=1e-6,
        equal_nan=True,
    )

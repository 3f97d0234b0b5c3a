"""A default `LAF(units)` represents every form of Table 1 at any set size.

Each form is written into the weights of a layer built with the default
preset, as a user would (`layer.exponents.assign`), and compared with a
float64 transcription of the paper's formula on sets of up to 500
elements, padded with a mask and, on TensorFlow, ragged.
"""

import keras
import numpy as np
import pytest

from keras_laf import LAF
from keras_laf.aggregations.laf.closed_forms import closed_form

# Every form of Table 1 (`keras_laf.closed_form`), with the parameters the
# paper lists.
FORMS = [
    ("constant", {"value": 2.0}),
    ("count", {}),
    ("sum", {}),
    ("mean", {}),
    ("moment", {"k": 3.0}),
    ("moment_power", {"k": 2.0, "l": 2.0}),
    ("max", {}),
    ("min", {}),
    ("min/max", {}),
    ("max/min", {}),
]
SIZES = (5, 50, 500)


def formula_float64(values, exponents, coefficients):
    """LAF of one set `(n,)`, every unit, in float64: `(units,)`."""
    x = np.asarray(values, "float64")[:, None]
    a, b, c, d, e, f, g, h = np.asarray(exponents, "float64")
    alpha, beta, gamma, delta = np.asarray(coefficients, "float64")

    def power_sum(base, outer, inner):
        return np.sum(base**inner, axis=0) ** outer

    numerator = alpha * power_sum(x, a, b) + beta * power_sum(1 - x, c, d)
    denominator = gamma * power_sum(x, e, f) + delta * power_sum(1 - x, g, h)
    return numerator / denominator


def table1_layer():
    parameters = [closed_form(name, **kwargs) for name, kwargs in FORMS]
    exponents = np.stack([p[0] for p in parameters], axis=1)
    coefficients = np.stack([p[1] for p in parameters], axis=1)
    layer = LAF(units=len(FORMS), flatten=False)
    layer.build((None, None, 1))
    layer.exponents.assign(exponents.astype("float32"))
    layer.coefficients.assign(coefficients.astype("float32"))
    return layer, exponents, coefficients


def table1_sets(size, seed):
    """Three sets of `size` elements: uniform, with a small minimum (for
    max/min), and with every value below 0.2 (for min/max)."""
    rng = np.random.default_rng([seed, size])
    uniform = rng.uniform(0.02, 0.98, size)
    small_minimum = rng.uniform(0.3, 0.98, size)
    small_minimum[rng.integers(size)] = 0.03
    small_values = rng.uniform(0.02, 0.18, size)
    return [uniform, small_minimum, small_values]


@pytest.mark.multi_backend
@pytest.mark.parametrize("size", SIZES)
def test_default_layer_computes_every_form_padded(size):
    layer, exponents, coefficients = table1_layer()
    sets = table1_sets(size, seed=0)
    # One set of `size` elements and a shorter one beside it, so padding
    # is present in the batch.
    sets.append(sets[0][: size // 2 + 1])
    values = np.zeros((len(sets), size, 1), "float32")
    mask = np.zeros((len(sets), size), bool)
    for row, elements in enumerate(sets):
        values[row, : len(elements), 0] = elements
        mask[row, : len(elements)] = True
    outputs = keras.ops.convert_to_numpy(layer(values, mask=mask))[:, 0]
    expected = np.stack(
        [
            formula_float64(elements.astype("float32"), exponents, coefficients)
            for elements in sets
        ]
    )
    np.testing.assert_allclose(outputs, expected, rtol=2e-4)
    # Independent of the formula: the forms' plain definitions.
    uniform = sets[0].astype("float64")
    names = [name for name, _ in FORMS]
    np.testing.assert_allclose(
        outputs[0, names.index("sum")], uniform.sum(), rtol=1e-5
    )
    np.testing.assert_allclose(outputs[0, names.index("count")], size)
    np.testing.assert_allclose(
        outputs[0, names.index("mean")], uniform.mean(), rtol=1e-5
    )


@pytest.mark.parametrize("size", SIZES)
def test_default_layer_computes_every_form_ragged(size):
    import tensorflow as tf

    layer, exponents, coefficients = table1_layer()
    sets = table1_sets(size, seed=1) + [np.array([0.5, 0.25])]
    ragged = tf.RaggedTensor.from_row_lengths(
        np.concatenate(sets).astype("float32")[:, None],
        [len(s) for s in sets],
    )
    outputs = keras.ops.convert_to_numpy(layer(ragged))[:, 0]
    expected = np.stack(
        [
            formula_float64(elements.astype("float32"), exponents, coefficients)
            for elements in sets
        ]
    )
    np.testing.assert_allclose(outputs, expected, rtol=2e-4)


@pytest.mark.multi_backend
@pytest.mark.parametrize("preset", ["pooling", "closed_forms"])
def test_training_keeps_numerators_at_most_linear(preset):
    # A unit that fits small sets as (sum x)^1.5 is clipped back to a
    # numerator that grows no faster than the set.
    layer = LAF(units=2, flatten=False, preset=preset)
    layer.build((None, None, 1))
    exponents = np.zeros((8, 2), "float32")
    exponents[:, 0] = [1.5, 1.0, 1.3, 1.0, 2.0, 1.0, 0.0, 0.0]
    clipped = keras.ops.convert_to_numpy(
        layer.exponent_constraint(keras.ops.convert_to_tensor(exponents))
    )
    assert clipped[0, 0] == 1.0 and clipped[2, 0] == 1.0
    # The denominator's outer exponents are free: a larger one only makes
    # the unit grow slower.
    assert clipped[4, 0] == 2.0

"""Naming the aggregator of Table 1 that each LAF unit computes."""

import numpy as np
import pytest

from keras_laf import LAF
from keras_laf import closed_form
from keras_laf.aggregations.laf.closed_forms import identify_closed_forms
from keras_laf.aggregations.laf.closed_forms import laf_units_numpy

FORMS = [
    "constant",
    "count",
    "sum",
    "mean",
    {"name": "moment", "k": 2},
    {"name": "moment", "k": 3},
    "max",
    "min",
    "min/max",
    "max/min",
]
NAMES = [
    "constant",
    "count",
    "sum",
    "mean",
    "moment(k=2)",
    "moment(k=3)",
    "max",
    "min",
    "min/max",
    "max/min",
]


def built(layer):
    layer.build((None, None, 1))
    return layer


def test_layers_from_closed_forms_are_named_by_their_forms():
    layer = built(LAF.from_closed_forms(FORMS))
    assert layer.closed_forms() == NAMES
    assert layer.describe_units()[1] == "unit 1: count"


def test_scale_and_offset_of_a_unit_do_not_change_its_form():
    # 3 * sum + 2: the coefficients of count's term give the offset.
    exponents, _ = closed_form("sum")
    exponents = exponents.copy()
    coefficients = np.array([3.0, 2.0, 1.0, 0.0], "float32")
    # (1 - x)^0 summed to the power 0 is the constant 1.
    assert identify_closed_forms(exponents[:, None], coefficients[:, None]) == [
        "sum"
    ]


def test_a_constant_over_the_count_is_the_inverse_count():
    # (a..h) = (0, 0, 0, 0, 1, 0, 0, 0): 2 / (sum x^0)^1 = 2 / N.
    exponents = np.zeros((8, 1), "float32")
    exponents[4] = 1.0
    coefficients = np.array([[2.0], [0.0], [1.0], [0.0]], "float32")
    assert identify_closed_forms(exponents, coefficients) == ["1/count"]
    # The same unit with the count in the numerator is the count.
    assert identify_closed_forms(
        exponents[[4, 5, 2, 3, 0, 1, 6, 7]], coefficients
    ) == ["count"]


def test_residual_exponents_match_no_form():
    # Count with an outer exponent of 0.9: N^0.9 is not the count.
    exponents, coefficients = closed_form("count")
    exponents = exponents.copy()
    exponents[0] = 0.9
    layer = built(LAF(1, exponent_initializer="zeros"))
    layer.exponents.assign(exponents[:, None])
    layer.coefficients.assign(coefficients[:, None])
    assert layer.closed_forms() == [None]
    description = layer.describe_units()[0]
    assert description.startswith(
        "unit 0: none of Table 1: (1.00(Σx^0.00)^0.90"
    )
    # Within a loose tolerance it is the count again.
    assert layer.closed_forms(tolerance=0.2) == ["count"]


def test_reference_units_match_the_layer():
    # The NumPy formula the identification evaluates is LAF's.
    rng = np.random.default_rng(0)
    layer = built(LAF(4))
    values = rng.uniform(0.05, 0.95, size=(6, 7)).astype("float32")
    mask = np.arange(7) < rng.integers(1, 8, size=6)[:, None]
    expected = np.asarray(layer(values[..., None], mask=mask))
    computed = laf_units_numpy(
        np.asarray(layer.exponents),
        np.asarray(layer.coefficients),
        values,
        mask,
    )
    np.testing.assert_allclose(computed, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("tolerance", [0, 1, -0.1, "0.1", True])
def test_bad_tolerance(tolerance):
    layer = built(LAF(2))
    with pytest.raises(ValueError, match="Received: tolerance="):
        layer.closed_forms(tolerance=tolerance)


def test_unbuilt_layer():
    with pytest.raises(ValueError, match="build or call the layer first"):
        LAF(2).closed_forms()

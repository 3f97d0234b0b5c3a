"""Snapping LAF units onto the closed forms of Table 1 they nearly compute:
`keras_laf.aggregations.laf.closed_forms.snap_closed_forms`,
`LAF.snap_to_closed_forms` and the `keras_laf.callbacks.SnapToClosedForms`
callback."""

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import LAF
from keras_laf import closed_form
from keras_laf.aggregations.laf.callbacks import SnapToClosedForms
from keras_laf.aggregations.laf.callbacks import laf_layers
from keras_laf.aggregations.laf.closed_forms import snap_closed_forms

pytestmark = pytest.mark.multi_backend

# A set of 4 values and its aggregates, by hand.
VALUES = np.array([0.2, 0.4, 0.5, 0.9])
BY_HAND = {
    "count": 4.0,
    "sum": 2.0,
    "mean": 0.5,
    "1/count": 0.25,
    "moment(k=3)": (0.008 + 0.064 + 0.125 + 0.729) / 4,
}


def unit_on_values(exponents, coefficients, values=VALUES):
    """One LAF unit on one set, in float64, written out term by term."""
    a, b, c, d, e, f, g, h = np.asarray(exponents, "float64")
    alpha, beta, gamma, delta = np.asarray(coefficients, "float64")
    x = np.asarray(values, "float64")
    numerator = alpha * np.sum(x**b) ** a + beta * np.sum((1 - x) ** d) ** c
    denominator = gamma * np.sum(x**f) ** e + delta * np.sum((1 - x) ** h) ** g
    return numerator / denominator


def perturbed(form, amount=0.02, scale=3.0):
    """A form's parameters with each exponent moved by `amount` (towards
    the inside of [0, inf)) and the numerator times `scale`."""
    spec = {"name": "moment", "k": 3.0} if form == "moment(k=3)" else form
    if form == "1/count":
        exponents = np.array([0, 0, 0, 0, 1, 0, 0, 0], "float32")
        coefficients = np.array([1, 0, 1, 0], "float32")
    else:
        exponents, coefficients = closed_form(
            **({"name": spec} if isinstance(spec, str) else spec)
        )
    exponents = exponents + amount * (exponents == 0)
    coefficients = coefficients.copy()
    coefficients[:2] *= scale
    return exponents, coefficients


@pytest.mark.parametrize("form", sorted(BY_HAND))
def test_a_near_form_becomes_the_form_times_its_scale(form):
    exponents, coefficients = perturbed(form)
    new_exponents, new_coefficients, snapped = snap_closed_forms(
        exponents[:, None], coefficients[:, None]
    )
    assert [(unit, name) for unit, name, _ in snapped] == [(0, form)]
    scale = snapped[0][2]
    # The perturbed unit is about 3 times the form; after the snap it is
    # exactly `scale` times the form, checked against the hand values.
    assert scale == pytest.approx(3.0, rel=0.15)
    assert unit_on_values(
        new_exponents[:, 0], new_coefficients[:, 0]
    ) == pytest.approx(scale * BY_HAND[form], rel=1e-6)
    assert unit_on_values(exponents, coefficients) != pytest.approx(
        scale * BY_HAND[form], rel=1e-6
    )


def test_units_that_match_no_form_or_a_constant_are_left_alone():
    # Unit 0: (sum x)^0.5, no form; unit 1: a constant; unit 2: near sum.
    exponents = np.zeros((8, 3), "float32")
    exponents[:2, 0] = [0.5, 1.0]
    exponents[:2, 2] = [1.0, 1.02]
    coefficients = np.array(
        [[1.0, 2.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]],
        "float32",
    )
    new_exponents, new_coefficients, snapped = snap_closed_forms(
        exponents, coefficients
    )
    assert [(unit, name) for unit, name, _ in snapped] == [(2, "sum")]
    np.testing.assert_array_equal(new_exponents[:, :2], exponents[:, :2])
    np.testing.assert_array_equal(new_coefficients[:, :2], coefficients[:, :2])
    np.testing.assert_array_equal(new_exponents[:, 2], closed_form("sum")[0])


def test_the_tolerance_decides_what_is_near():
    exponents, coefficients = perturbed("count", amount=0.1)
    _, _, strict = snap_closed_forms(
        exponents[:, None], coefficients[:, None], tolerance=0.01
    )
    _, _, loose = snap_closed_forms(
        exponents[:, None], coefficients[:, None], tolerance=0.2
    )
    assert strict == []
    assert [name for _, name, _ in loose] == ["count"]


@pytest.mark.parametrize("tolerance", [0, 1, -0.1, "0.1", True])
def test_bad_tolerance(tolerance):
    exponents, coefficients = perturbed("sum")
    with pytest.raises(ValueError, match="tolerance"):
        snap_closed_forms(
            exponents[:, None], coefficients[:, None], tolerance=tolerance
        )


def test_the_layer_snaps_its_weights_and_reports_them():
    layer = LAF.from_closed_forms(["count", "mean", "max"])
    layer.build((None, None, 2))
    exponents = keras.ops.convert_to_numpy(layer.exponents).copy()
    exponents[1, 0] = 0.03  # count -> sum_i x_i^0.03
    exponents[:2, 2] = [0.3, 2.0]  # max -> (sum_i x_i^2)^0.3, no form
    layer.exponents.assign(exponents)
    snapped = layer.snap_to_closed_forms()
    assert [(unit, name) for unit, name, _ in snapped] == [
        (0, "count"),
        (1, "mean"),
    ]
    assert layer.closed_forms(tolerance=1e-3)[:2] == ["count", "mean"]
    after = keras.ops.convert_to_numpy(layer.exponents)
    np.testing.assert_array_equal(after[:, 2], exponents[:, 2])
    # The layer on a set computes `scale` times the count exactly.
    outputs = keras.ops.convert_to_numpy(
        layer(np.tile(VALUES[None, :, None], (1, 1, 2)))
    )
    assert outputs[0, 0] == pytest.approx(snapped[0][2] * 4.0, rel=1e-5)


def test_an_unbuilt_layer_cannot_snap():
    with pytest.raises(ValueError, match="build or call the layer first"):
        LAF(3).snap_to_closed_forms()


def near_count_model():
    """Sets of 4 values -> LAF(2): a near-count and a (sum x)^0.5 -> Dense."""
    inputs = keras.Input((4, 1))
    layer = LAF(2, preset="closed_forms", name="laf")
    outputs = keras.layers.Dense(1)(layer(inputs))
    model = keras.Model(inputs, outputs)
    exponents = np.zeros((8, 2), "float32")
    exponents[:2, 0] = [1.0, 0.03]
    exponents[:2, 1] = [0.5, 1.0]
    coefficients = np.array(
        [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0]], "float32"
    )
    layer.set_weights([exponents, coefficients])
    return model, layer


class ExponentsAtEpochEnd(keras.callbacks.Callback):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append(keras.ops.convert_to_numpy(self.layer.exponents))


@pytest.mark.parametrize("fine_tune_epochs", [0, 1, 2])
def test_the_callback_snaps_fine_tune_epochs_before_the_end(
    fine_tune_epochs, capsys
):
    model, layer = near_count_model()
    # A learning rate of 0 moves nothing but the snap.
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    snap = SnapToClosedForms(fine_tune_epochs=fine_tune_epochs)
    seen = ExponentsAtEpochEnd(layer)
    sets = np.random.default_rng(0).uniform(size=(8, 4, 1))
    model.fit(
        sets, np.zeros((8, 1)), epochs=3, callbacks=[snap, seen], verbose=0
    )
    snap_epoch = 2 - fine_tune_epochs
    for epoch, exponents in enumerate(seen.seen):
        assert (exponents[1, 0] == 0.0) == (epoch >= snap_epoch), epoch
        np.testing.assert_array_equal(exponents[:2, 1], [0.5, 1.0])
    assert [(unit, name) for unit, name, _ in snap.snapped["laf"]] == [
        (0, "count")
    ]
    assert f"Epoch {snap_epoch + 1}: snapped 1 unit(s) of 'laf'" in (
        capsys.readouterr().out
    )


def test_the_callback_needs_epochs_after_the_snap():
    model, _ = near_count_model()
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="needs more than 2 epochs"):
        model.fit(
            np.ones((2, 4, 1)),
            np.zeros((2, 1)),
            epochs=2,
            callbacks=[SnapToClosedForms(fine_tune_epochs=2)],
            verbose=0,
        )


def test_the_callback_needs_a_laf_layer():
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs), name="dense")
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="no keras_laf.LAF layer in model"):
        model.fit(
            np.ones((2, 3)),
            np.zeros((2, 1)),
            epochs=3,
            callbacks=[SnapToClosedForms()],
            verbose=0,
        )


@pytest.mark.parametrize(
    "arguments",
    [
        {"fine_tune_epochs": -1},
        {"fine_tune_epochs": 1.5},
        {"fine_tune_epochs": True},
        {"tolerance": 0},
        {"tolerance": 1.0},
        {"tolerance": "0.1"},
    ],
)
def test_bad_callback_arguments(arguments):
    (name,) = arguments
    with pytest.raises(ValueError, match=f"`{name}`"):
        SnapToClosedForms(**arguments)


def test_laf_layers_are_found_inside_other_layers_once():
    shared = LAF(3, name="shared")
    multi = keras_laf.MultiAggregation([shared, "max"], name="multi")
    inputs = keras.Input((5, 2))
    outputs = keras.layers.Concatenate()(
        [multi(inputs), shared(inputs), LAF(2, name="alone")(inputs)]
    )
    model = keras.Model(inputs, outputs)
    assert sorted(layer.name for layer in laf_layers(model)) == [
        "alone",
        "shared",
    ]
    assert laf_layers(keras.layers.Dense(2)) == []

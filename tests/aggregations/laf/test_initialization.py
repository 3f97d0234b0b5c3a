"""LAF's presets: how the units start and are constrained."""

import pathlib

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import LAF
from keras_laf import closed_form
from keras_laf.aggregations.laf.constraints import BoundedNonNeg
from keras_laf.aggregations.laf.constraints import ClosedFormExponents
from keras_laf.aggregations.laf.constraints import PositiveDenominator
from keras_laf.aggregations.laf.initializers import AnchoredLAF


def built(layer, features=1):
    layer.build((None, None, features))
    return (
        keras.ops.convert_to_numpy(layer.exponents),
        keras.ops.convert_to_numpy(layer.coefficients),
    )


@pytest.mark.parametrize(
    "preset, anchors",
    [
        (
            "pooling",
            {1: "max", 3: "min", 5: "mean", 7: ("moment", {"k": 2}), 9: "max"},
        ),
        (
            "closed_forms",
            {
                0: ("count", {"scale": 0.01}),
                1: ("sum", {"scale": 0.01}),
                2: "max",
                5: "min",
                8: "mean",
                11: "max",
            },
        ),
    ],
)
def test_anchor_units_are_the_presets_forms_in_turn(preset, anchors):
    exponents, coefficients = built(LAF(units=12, preset=preset))
    for unit, form in anchors.items():
        name, parameters = form if isinstance(form, tuple) else (form, {})
        expected_exponents, expected_coefficients = closed_form(
            name, **parameters
        )
        np.testing.assert_array_equal(exponents[:, unit], expected_exponents)
        np.testing.assert_array_equal(
            coefficients[:, unit], expected_coefficients
        )


@pytest.mark.parametrize(
    "preset, anchor_every", [("pooling", 2), ("closed_forms", 3)]
)
def test_random_units_have_paper_exponents_and_positive_denominators(
    preset, anchor_every
):
    exponents, coefficients = built(LAF(units=3000, preset=preset))
    random_units = np.arange(3000) % anchor_every != anchor_every - 1
    if preset == "closed_forms":
        # Its first units are its count and its sum.
        random_units[:2] = False
    exponents, coefficients = (
        exponents[:, random_units],
        coefficients[:, random_units],
    )
    assert exponents.min() >= 0 and exponents.max() <= 1
    assert abs(exponents.mean() - 0.5) < 0.01
    assert abs(coefficients[:2].std() - 0.01) < 0.001
    assert abs(coefficients[:2].mean()) < 0.001
    assert coefficients[2:].min() >= 0.5 and coefficients[2:].max() <= 1
    assert abs(coefficients[2:].mean() - 0.75) < 0.01


def test_anchor_units_compute_max_min_mean_and_second_moment():
    layer = LAF(units=8)
    values = np.array([[[0.1], [0.8], [0.3]], [[0.5], [0.45], [0.2]]])
    outputs = keras.ops.convert_to_numpy(layer(values.astype("float32")))
    # max and min within the n^(1/50) factor of Table 1's approximation.
    np.testing.assert_allclose(outputs[:, 1], [0.8, 0.5], rtol=0.03)
    np.testing.assert_allclose(outputs[:, 3], [0.1, 0.2], atol=0.03)
    np.testing.assert_allclose(outputs[:, 5], values.mean(axis=(1, 2)))
    np.testing.assert_allclose(
        outputs[:, 7], (values**2).mean(axis=(1, 2)), rtol=1e-5
    )


def test_fresh_default_layer_has_no_pole_on_large_sets():
    # Positive denominators: a fresh layer stays bounded on sets far
    # larger than any it was trained on; the paper's start does not.
    rng = np.random.default_rng(0)
    values = rng.random((64, 1000, 1)).astype("float32")
    mask = np.arange(1000)[None, :] < rng.integers(1, 1000, (64, 1))
    worst = {}
    for preset in ("pooling", "closed_forms", "paper"):
        outputs = []
        for seed in range(20):
            keras.utils.set_random_seed(seed)
            layer = LAF(units=9, preset=preset)
            outputs.append(keras.ops.convert_to_numpy(layer(values, mask=mask)))
        outputs = np.array(outputs)
        if preset == "closed_forms":
            # Its first unit is 0.01 times the count, growing as it must.
            np.testing.assert_allclose(
                outputs[:, :, 0], 0.01 * np.tile(mask.sum(1), (20, 1)), 1e-5
            )
            outputs = outputs[:, :, 1:]
        worst[preset] = np.abs(outputs).max()
    assert worst["pooling"] < 10 and worst["closed_forms"] < 10
    assert worst["paper"] > 10 * worst["pooling"]


def test_paper_initialization_is_exactly_the_papers():
    layer = LAF(units=3000, preset="paper")
    exponents, coefficients = built(layer)
    assert isinstance(
        layer.exponent_initializer, keras.initializers.RandomUniform
    )
    assert isinstance(
        layer.coefficient_initializer, keras.initializers.RandomNormal
    )
    assert type(layer.exponent_constraint) is BoundedNonNeg
    assert layer.coefficient_constraint is None
    assert exponents.min() >= 0 and exponents.max() <= 1
    assert abs(exponents.mean() - 0.5) < 0.01
    assert abs(coefficients.mean()) < 0.001
    assert abs(coefficients.std() - 0.01) < 0.001


def test_default_preset_is_pooling_without_pulls():
    layer = LAF(units=2)
    assert layer.preset == "pooling"
    assert isinstance(layer.exponent_initializer, AnchoredLAF)
    assert isinstance(layer.coefficient_constraint, PositiveDenominator)
    assert layer.coefficient_constraint.pull == 0.0
    assert isinstance(layer.exponent_constraint, ClosedFormExponents)
    assert layer.exponent_constraint.pull == 0.0
    assert layer.exponent_constraint.anchor_inner == 5.0
    assert layer.exponent_constraint.max_numerator_outer == 1.0
    assert layer.output_bound == float("inf")


def test_closed_forms_preset_pulls_onto_the_closed_forms():
    layer = LAF(units=2, preset="closed_forms")
    assert layer.exponent_constraint.get_config() == {
        **ClosedFormExponents().get_config(),
        "anchor_inner": 5.0,
        "max_numerator_outer": 1.0,
    }
    assert layer.coefficient_constraint.pull == 2e-4


def test_pooling_exponents_are_only_projected_and_floored():
    # No pull: an exponent near 0 or 1 stays where it is; values are
    # clipped into [0, 100]; max-like terms (inner exponent 50, and 100
    # after the clip) keep a degree of 0.25; the numerator's outer
    # exponents (rows 0 and 2) are at most 1, the denominator's free.
    constraint = LAF(units=2).exponent_constraint
    exponents = np.array(
        [[0.98, 0.001], [0.03, 50.0], [-1.0, 1.7], [200.0, 0.0]]
        + [[3.0, 0.0], [1.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
        "float32",
    )
    projected = keras.ops.convert_to_numpy(constraint(exponents))
    expected = exponents.copy()
    expected[0, 1] = 0.25 / 50.0
    expected[2, 0], expected[3, 0] = 0.25 / 100.0, 100.0
    expected[2, 1] = 1.0
    np.testing.assert_allclose(projected, expected, rtol=1e-6)


def test_names_that_were_never_released_are_rejected():
    # `initialization` and "anchored" came and went before a release.
    with pytest.raises(ValueError, match="initialization"):
        LAF(units=2, initialization="paper")
    with pytest.raises(ValueError, match="Received: preset='anchored'"):
        LAF(units=2, preset="anchored")


def test_positive_denominator_is_projected_after_each_step():
    # A regularizer whose gradient is 1000 for every coefficient: one SGD
    # step takes them all far below 0; the projection restarts the
    # denominator at gamma = 1 while the numerator's stay negative.
    layer = LAF(
        units=3,
        coefficient_regularizer=lambda weights: 1000.0 * keras.ops.sum(weights),
    )
    model = keras.Sequential([keras.Input((4, 1)), layer])
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mae")
    values = np.full((8, 4, 1), 0.5, "float32")
    model.fit(values, np.zeros((8, 3), "float32"), verbose=0)
    coefficients = keras.ops.convert_to_numpy(layer.coefficients)
    np.testing.assert_array_equal(coefficients[2:], [[1.0] * 3, [0.0] * 3])
    assert coefficients[:2].max() < -900.0


def test_positive_denominator_keeps_each_units_function():
    # Columns: clipped and rescaled, rescaled only, left alone, restarted.
    weights = np.array(
        [
            [0.3, 0.2, 1.0, 0.7],
            [-0.1, 0.4, -2.0, 0.1],
            [-1.0, 0.2, 3.0, -0.5],
            [0.25, 0.3, 0.0, -0.1],
        ],
        "float32",
    )
    projected = keras.ops.convert_to_numpy(
        PositiveDenominator()(keras.ops.convert_to_tensor(weights))
    )
    expected = np.array(
        [
            [1.2, 0.4, 1.0, 0.7],
            [-0.4, 0.8, -2.0, 0.1],
            [0.0, 0.4, 3.0, 1.0],
            [1.0, 0.6, 0.0, 0.0],
        ],
        "float32",
    )
    np.testing.assert_allclose(projected, expected, rtol=1e-6)
    # Columns 1 and 2 had gamma, delta >= 0: the same functions.
    exponents = np.random.default_rng(0).random((8, 4)).astype("float32")
    values = np.random.default_rng(1).random((5, 7, 2)).astype("float32")

    def outputs(coefficients):
        return keras.ops.convert_to_numpy(
            keras_laf.laf(values, exponents, coefficients)
        )

    np.testing.assert_allclose(
        outputs(projected)[..., 1:3], outputs(weights)[..., 1:3], rtol=1e-5
    )


def test_config_round_trip_keeps_the_preset():
    for preset in ("pooling", "closed_forms", "paper"):
        layer = LAF(units=4, preset=preset)
        restored = LAF.from_config(layer.get_config())
        assert restored.preset == preset
        assert restored.exponent_constraint.get_config() == (
            layer.exponent_constraint.get_config()
        )
        assert type(restored.coefficient_constraint) is type(
            layer.coefficient_constraint
        )
        assert type(restored.coefficient_initializer) is type(
            layer.coefficient_initializer
        )


def test_config_saved_by_0_1_0_keeps_the_papers_behaviour():
    # keras-laf 0.1.0's LAF had no presets and no output bound.
    config = LAF(units=2, preset="paper").get_config()
    del config["preset"], config["output_bound"]
    restored = LAF.from_config(config)
    assert restored.preset == "paper"
    assert restored.output_bound == float("inf")
    assert restored.coefficient_constraint is None
    bounded = LAF.from_config({**config, "output_bound": 10.0})
    assert bounded.output_bound == 10.0


@pytest.mark.multi_backend
def test_model_saved_by_0_1_0_loads_and_predicts_as_it_did():
    # Saved by keras-laf 0.1.0 after three epochs of training: a LAF over
    # padded sets with a mask, and a dense head.
    data = pathlib.Path(__file__).parents[2] / "data"
    saved = np.load(data / "laf_model_saved_by_0_1_0.npz")
    model = keras.models.load_model(data / "laf_model_saved_by_0_1_0.keras")
    predictions = model.predict([saved["sets"], saved["mask"]], verbose=0)
    np.testing.assert_allclose(predictions, saved["predictions"], rtol=1e-5)
    layer = model.get_layer("laf")
    assert layer.preset == "paper"
    assert layer.output_bound == float("inf")
    # The padding changes the prediction unless the mask excludes it.
    padded = np.where(saved["mask"][..., None], saved["sets"], 1.0)
    assert np.allclose(
        model.predict([padded, saved["mask"]], verbose=0),
        predictions,
        rtol=1e-5,
    )
    unmasked = model.predict([padded, np.ones_like(saved["mask"])], verbose=0)
    assert not np.allclose(unmasked, predictions, rtol=1e-3)


def test_saved_model_keeps_the_constraint(tmp_path):
    # Uncompiled: the constraint is part of the layer's config, and an unbuilt
    # optimizer would reload with a warning about its variables.
    model = keras.Sequential([keras.Input((3, 2)), LAF(units=3, name="laf")])
    path = tmp_path / "model.keras"
    model.save(path)
    restored = keras.models.load_model(path)
    assert isinstance(
        restored.get_layer("laf").coefficient_constraint, PositiveDenominator
    )


def test_from_closed_forms_leaves_max_over_min_reachable():
    ratio = LAF.from_closed_forms(["max/min"])
    assert not isinstance(ratio.coefficient_constraint, PositiveDenominator)
    _, coefficients = built(ratio)
    assert coefficients[3, 0] == -1.0
    assert isinstance(
        LAF.from_closed_forms(["max", "min"]).coefficient_constraint,
        PositiveDenominator,
    )


def test_anchored_initializer_is_seeded_and_serializable():
    first = AnchoredLAF("coefficients", anchors=["mean"], seed=3)
    second = AnchoredLAF.from_config(first.get_config())
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(first((4, 5))),
        keras.ops.convert_to_numpy(second((4, 5))),
    )
    no_anchors = keras.ops.convert_to_numpy(
        AnchoredLAF("coefficients", anchors=[], seed=3)((4, 6))
    )
    assert no_anchors[2:].min() >= 0.5


def test_leading_anchors_start_the_first_units():
    forms = [{"name": "count", "scale": 0.01}, "sum"]
    initializer = AnchoredLAF(
        "coefficients", anchors=["min"], anchor_every=1, leading_anchors=forms
    )
    coefficients = keras.ops.convert_to_numpy(initializer((4, 4)))
    np.testing.assert_allclose(coefficients[:, 0], [0.01, 0, 1, 0])
    np.testing.assert_array_equal(coefficients[:, 1], [1, 0, 1, 0])
    np.testing.assert_array_equal(coefficients[:, 2], [1, -1, 1, 0])
    assert initializer.anchor_units(4) == [2, 3]
    restored = AnchoredLAF.from_config(initializer.get_config())
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(restored((4, 4))), coefficients
    )
    # A layer without room for its leading anchors stays as it would be.
    for units in (1, 2):
        for part, rows in (("exponents", 8), ("coefficients", 4)):
            random_layer = AnchoredLAF(part, anchors=[], seed=1)
            leading_layer = AnchoredLAF(
                part, anchors=[], leading_anchors=forms, seed=1
            )
            np.testing.assert_array_equal(
                keras.ops.convert_to_numpy(leading_layer((rows, units))),
                keras.ops.convert_to_numpy(random_layer((rows, units))),
            )


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"part": "weights"}, "Received: part='weights'"),
        ({"part": "exponents", "anchors": "max"}, "Received: anchors='max'"),
        ({"part": "exponents", "anchors": ["median"]}, "Unknown closed form"),
        ({"part": "exponents", "anchor_every": 0}, "anchor_every=0"),
        (
            {"part": "exponents", "leading_anchors": "sum"},
            "Received: leading_anchors='sum'",
        ),
        (
            {"part": "exponents", "leading_anchors": ["mode"]},
            "Unknown closed form",
        ),
        ({"part": "exponents", "seed": "1"}, "Received: seed='1'"),
    ],
)
def test_anchored_initializer_rejects_bad_arguments(arguments, message):
    with pytest.raises(ValueError, match=message):
        AnchoredLAF(**arguments)


def test_anchored_initializer_rejects_wrong_shape():
    with pytest.raises(ValueError, match=r"Received: shape=\(4, 3\)"):
        AnchoredLAF("exponents")((4, 3))


@pytest.mark.parametrize("preset", ["Paper", "default", 1])
def test_bad_preset_is_rejected(preset):
    with pytest.raises(ValueError, match="Received: preset="):
        LAF(units=2, preset=preset)


def test_no_preset_is_the_default_preset():
    assert LAF(units=2, preset=None).preset == keras_laf.presets.DEFAULT_PRESET


def test_every_preset_has_a_purpose_and_its_arguments():
    assert keras_laf.presets.DEFAULT_PRESET in keras_laf.presets.PRESETS
    for preset in keras_laf.presets.PRESETS:
        arguments = keras_laf.presets.preset_arguments(preset)
        layer = LAF(units=3, preset=preset)
        assert layer.output_bound == arguments.pop("output_bound")
        for name, value in arguments.items():
            assert type(getattr(layer, name)) is type(
                keras.constraints.get(value)
                if name.endswith("constraint")
                else keras.initializers.get(value)
            )


def test_initializer_is_exported():
    assert keras_laf.initializers.AnchoredLAF is AnchoredLAF

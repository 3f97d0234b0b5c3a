"""Tests of the LAF layer against NumPy references and its other forms."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_laf
from keras_laf import LAF
from keras_laf.aggregations.laf.constraints import BoundedNonNeg


def reference_laf(elements, exponents, coefficients):
    """Direct float64 transcription of the paper's formula for one set.

    Args:
        elements: `(n,)` values in [0, 1].
        exponents: `(8, units)`; coefficients: `(4, units)`.

    Returns:
        `(units,)`.
    """
    x = np.asarray(elements, "float64")[:, None]
    a, b, c, d, e, f, g, h = np.asarray(exponents, "float64")
    alpha, beta, gamma, delta = np.asarray(coefficients, "float64")

    def power_sum(values, outer, inner):
        return np.sum(values**inner, axis=0) ** outer

    numerator = alpha * power_sum(x, a, b) + beta * power_sum(1 - x, c, d)
    denominator = gamma * power_sum(x, e, f) + delta * power_sum(1 - x, g, h)
    return numerator / denominator


def random_parameters(units, seed):
    rng = np.random.default_rng(seed)
    exponents = rng.uniform(0.1, 3.0, size=(8, units)).astype("float32")
    coefficients = rng.normal(size=(4, units)).astype("float32")
    # Keep the denominator away from 0: gamma, delta > 0.
    coefficients[2:] = np.abs(coefficients[2:]) + 0.5
    return exponents, coefficients


def layer_with(exponents, coefficients, **kwargs):
    # The formula itself: no output bound unless asked for.
    kwargs.setdefault("output_bound", float("inf"))
    layer = LAF(units=exponents.shape[1], flatten=False, **kwargs)
    layer.build((None, None, 1))
    layer.set_weights([exponents, coefficients])
    return layer


def ragged_sets(sets):
    """A (batch, None, features) ragged tensor from a list of (n, f) arrays."""
    return tf.RaggedTensor.from_row_lengths(
        np.concatenate(sets).astype("float32"), [len(s) for s in sets]
    )


def padded_sets(sets, set_size, fill=0.0):
    features = sets[0].shape[1]
    values = np.full((len(sets), set_size, features), fill, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for i, elements in enumerate(sets):
        values[i, : len(elements)] = elements
        mask[i, : len(elements)] = True
    return values, mask


@pytest.fixture
def random_sets():
    rng = np.random.default_rng(0)
    return [rng.uniform(0.01, 0.99, (n, 3)) for n in (1, 4, 7, 2)]


def test_general_formula_matches_numpy(random_sets):
    exponents, coefficients = random_parameters(units=5, seed=1)
    layer = layer_with(exponents, coefficients)
    outputs = layer(ragged_sets(random_sets)).numpy()
    assert outputs.shape == (4, 3, 5)
    for i, elements in enumerate(random_sets):
        for j in range(3):
            expected = reference_laf(elements[:, j], exponents, coefficients)
            np.testing.assert_allclose(outputs[i, j], expected, rtol=2e-4)


def test_functional_op_matches_layer(random_sets):
    exponents, coefficients = random_parameters(units=3, seed=2)
    layer = layer_with(exponents, coefficients)
    inputs = ragged_sets(random_sets)
    np.testing.assert_allclose(
        keras_laf.laf(inputs, exponents, coefficients).numpy(),
        layer(inputs).numpy(),
        rtol=1e-6,
    )


@pytest.mark.parametrize(
    "form, reference",
    [
        ({"name": "constant", "value": -2.5}, lambda x: -2.5),
        ("count", lambda x: len(x)),
        ("sum", np.sum),
        ("mean", np.mean),
        ({"name": "moment", "k": 3}, lambda x: np.mean(x**3)),
        (
            {"name": "moment_power", "k": 2, "l": 3},
            lambda x: np.mean(x**2) ** 3,
        ),
    ],
)
def test_exact_closed_forms(form, reference):
    rng = np.random.default_rng(3)
    sets = [rng.uniform(0, 1, (n, 2)) for n in (1, 3, 8, 20)]
    layer = LAF.from_closed_forms([form], flatten=False)
    outputs = layer(ragged_sets(sets)).numpy()[..., 0]
    for i, elements in enumerate(sets):
        expected = [reference(elements[:, j]) for j in range(2)]
        np.testing.assert_allclose(outputs[i], expected, rtol=1e-5)


def test_max_and_min_within_ten_percent_at_every_scale():
    # Sets of up to 20 values in [1e-3, 1], at scales where a sum clamped at
    # 1e-7 would break the max approximation (max 0.5 would give ~0.72).
    rng = np.random.default_rng(4)
    sets = []
    for n in (1, 2, 5, 10, 20):
        for top in (1e-3, 1e-2, 0.1, 0.5, 1.0):
            sets.append(rng.uniform(1e-3, top, (n, 1)))
            sets.append(np.full((n, 1), top))
    layer = LAF.from_closed_forms(["max", "min"], flatten=False)
    outputs = layer(ragged_sets(sets)).numpy()[:, 0]
    maxima = np.array([s.max() for s in sets])
    minima = np.array([s.min() for s in sets])
    # max ~ max(x) n^(1/50): relative error at most 20^(1/50) - 1 = 6.2%.
    np.testing.assert_array_less(np.abs(outputs[:, 0] / maxima - 1), 0.1)
    # min = 1 - max(1 - x): the same bound, on the scale of [0, 1].
    np.testing.assert_array_less(np.abs(outputs[:, 1] - minima), 0.1)
    assert abs(layer(np.array([[[0.5], [0.1]]])).numpy()[0, 0, 0] - 0.5) < 1e-3


def test_ratio_closed_forms():
    rng = np.random.default_rng(5)
    sets = [rng.uniform(0.4, 1.0, (n, 1)) for n in (1, 3, 10)]
    layer = LAF.from_closed_forms(
        [{"name": "min/max", "r": 100}, {"name": "max/min", "r": 100}],
        flatten=False,
        exponent_constraint=BoundedNonNeg(max_value=200),
    )
    outputs = layer(ragged_sets(sets)).numpy()[:, 0]
    for i, elements in enumerate(sets):
        np.testing.assert_allclose(
            outputs[i],
            [elements.min() / elements.max(), elements.max() / elements.min()],
            rtol=0.05,
        )


def test_input_forms_agree(random_sets):
    exponents, coefficients = random_parameters(units=4, seed=6)
    layer = layer_with(exponents, coefficients)
    from_ragged = layer(ragged_sets(random_sets)).numpy()

    values, mask = padded_sets(random_sets, set_size=9)
    np.testing.assert_allclose(
        layer(values, mask=mask).numpy(), from_ragged, rtol=1e-5
    )

    # Flat values, elements of the sets shuffled together.
    flat = np.concatenate(random_sets).astype("float32")
    ids = np.repeat(np.arange(4), [len(s) for s in random_sets])
    order = np.random.default_rng(7).permutation(len(ids))
    from_segments = layer(flat[order], segment_ids=ids[order], num_segments=4)
    np.testing.assert_allclose(from_segments.numpy(), from_ragged, rtol=1e-5)

    for i, elements in enumerate(random_sets):
        alone = layer(elements[None].astype("float32")).numpy()
        np.testing.assert_allclose(alone[0], from_ragged[i], rtol=1e-5)


def test_padding_has_no_effect_whatever_it_holds(random_sets):
    exponents, coefficients = random_parameters(units=3, seed=8)
    exponents[:, 0] = 0.0  # counts see every element, padded ones too
    layer = layer_with(exponents, coefficients)
    expected = layer(ragged_sets(random_sets)).numpy()
    for fill in (0.0, 1.0, 0.5, -3.0, np.nan, np.inf):
        values, mask = padded_sets(random_sets, set_size=8, fill=fill)
        with tf.GradientTape() as tape:
            inputs = tf.constant(values)
            tape.watch(inputs)
            outputs = layer(inputs, mask=mask)
        np.testing.assert_allclose(outputs.numpy(), expected, rtol=1e-5)
        gradient = tape.gradient(outputs, inputs).numpy()
        assert np.all(gradient[~mask] == 0)
        assert np.all(np.isfinite(gradient))


def test_keras_mask_from_masking_layer(random_sets):
    # Masking marks padded rows by their value; features of real elements
    # are in (0, 1), so -1 never occurs in them.
    values, _ = padded_sets(random_sets, set_size=7, fill=-1.0)
    layer = layer_with(*random_parameters(units=2, seed=18))
    inputs = keras.Input(shape=(None, 3))
    outputs = layer(keras.layers.Masking(mask_value=-1.0)(inputs))
    model = keras.Model(inputs, outputs)
    np.testing.assert_allclose(
        model(values).numpy(), layer(ragged_sets(random_sets)).numpy(), 1e-5
    )


def test_permutation_invariance(random_sets):
    # Denominators away from 0, where reordering the sums only moves the
    # last bits.
    layer = layer_with(*random_parameters(units=5, seed=17))
    values, mask = padded_sets(random_sets, set_size=7)
    order = np.random.default_rng(9).permutation(7)
    np.testing.assert_allclose(
        layer(values[:, order], mask=mask[:, order]).numpy(),
        layer(values, mask=mask).numpy(),
        rtol=1e-4,
    )


def test_flatten_orders_units_within_features(random_sets):
    layer = LAF(units=3)
    flat = layer(ragged_sets(random_sets)).numpy()
    layer.flatten = False
    unflattened = layer(ragged_sets(random_sets)).numpy()
    assert flat.shape == (4, 9)
    np.testing.assert_array_equal(flat, unflattened.reshape(4, 9))


def all_gradients_finite(layer, inputs, **call_kwargs):
    inputs = tf.constant(inputs)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        outputs = layer(inputs, **call_kwargs)
    gradients = tape.gradient(outputs, [inputs] + layer.trainable_variables)
    return np.all(np.isfinite(outputs.numpy())) and all(
        np.all(np.isfinite(g.numpy())) for g in gradients
    )


@pytest.mark.parametrize(
    "elements",
    [
        [0.0, 0.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0, 0.5],
        [0.0],
        [1.0],
        [0.3],
        [1e-30, 1e-12, 1 - 1e-8],
    ],
)
def test_edges_of_unit_interval_finite(elements):
    inputs = np.array(elements, "float32")[None, :, None]
    exponents, coefficients = random_parameters(units=4, seed=10)
    exponents[:, 0] = 0.0  # all exponents exactly 0
    exponents[1::2, 1] = 0.0  # inner exponents 0: counts, 0^0 = 1
    exponents[0::2, 2] = 0.0  # outer exponents 0
    layer = layer_with(exponents, coefficients)
    assert all_gradients_finite(layer, inputs)
    assert all_gradients_finite(LAF.from_closed_forms(["max", "min"]), inputs)
    assert all_gradients_finite(LAF(units=3), inputs)


def test_zero_to_the_zero_is_one():
    # x^0 = 1 also for x = 0, so the count counts zeros.
    layer = LAF.from_closed_forms(["count", "sum"], flatten=False)
    outputs = layer(np.array([[[0.0], [0.0], [1.0]]], "float32")).numpy()
    # 0 is floored at epsilon inside the logarithm: 0^1 = 1e-7.
    np.testing.assert_allclose(outputs[0, 0], [3.0, 1.0], rtol=1e-6)


def test_empty_sets():
    # An empty set gives 0 whatever the unit, as the fixed aggregators do.
    layer = LAF.from_closed_forms(
        [{"name": "constant", "value": 2.0}, "count", "sum", "mean", "max"]
        + ["min"],
        flatten=False,
    )
    expected = [0.0] * 6
    empty_ragged = tf.RaggedTensor.from_row_lengths(
        np.array([[0.5]], "float32"), [0, 1]
    )
    np.testing.assert_allclose(layer(empty_ragged).numpy()[0, 0], expected)
    values = np.array([[[0.5], [0.2]]], "float32")
    all_false = layer(values, mask=np.zeros((1, 2), bool)).numpy()
    np.testing.assert_allclose(all_false[0, 0], expected)
    no_elements = layer(
        np.zeros((0, 1), "float32"),
        segment_ids=np.zeros((0,), "int32"),
        num_segments=2,
    ).numpy()
    np.testing.assert_allclose(no_elements[:, 0], [expected, expected])
    assert all_gradients_finite(
        LAF(units=4), values, mask=np.array([[False, False]])
    )


def test_empty_set_gives_zero_without_a_denominator():
    # A numerator term whose outer exponent is 0, no such term in the
    # denominator: with 0^0 = 1 an empty set would give alpha over epsilon
    # (1e7) and as much gradient, as a node without incoming edges did once
    # training moved the denominator's outer exponents off 0.
    layer = LAF(units=1, flatten=False)
    layer.build((None, None, 1))
    layer.exponents.assign([[0.0]] + [[0.5]] * 7)
    layer.coefficients.assign([[1.0], [0.0], [1.0], [0.0]])
    values = np.array([[[0.5], [0.2]]], "float32")
    with tf.GradientTape() as tape:
        outputs = layer(values, mask=np.zeros((1, 2), bool))
    gradients = tape.gradient(outputs, layer.trainable_variables)
    np.testing.assert_array_equal(outputs.numpy(), 0.0)
    for gradient in gradients:
        np.testing.assert_array_equal(gradient.numpy(), 0.0)


def test_large_sets_finite_and_exact():
    inputs = np.random.default_rng(11).uniform(0, 1, (1, 100_000, 2))
    inputs = inputs.astype("float32")
    layer = LAF.from_closed_forms(["sum", "mean", "count"], flatten=False)
    outputs = layer(inputs).numpy()[0]
    np.testing.assert_allclose(outputs[:, 0], inputs[0].sum(0), rtol=1e-4)
    np.testing.assert_allclose(outputs[:, 1], inputs[0].mean(0), rtol=1e-4)
    np.testing.assert_allclose(outputs[:, 2], 100_000, rtol=1e-5)
    assert all_gradients_finite(LAF(units=3), inputs)
    # (sum x)^40 / count^40 overflows float32 in both terms; the ratio
    # (the 40th power of the mean) does not.
    power = LAF.from_closed_forms(
        [{"name": "moment_power", "k": 1, "l": 40}], flatten=False
    )
    np.testing.assert_allclose(
        power(inputs).numpy()[0, :, 0], inputs[0].mean(0) ** 40, rtol=1e-3
    )


def test_zero_denominator_is_floored():
    exponents = np.ones((8, 1), "float32")
    coefficients = np.array([[1.0], [0.0], [0.0], [0.0]], "float32")
    layer = layer_with(exponents, coefficients, epsilon=1e-6)
    # numerator sum(x) = 0.5, denominator 0 -> 0.5 / 1e-6.
    outputs = layer(np.array([[[0.2], [0.3]]], "float32")).numpy()
    np.testing.assert_allclose(outputs[0, 0, 0], 0.5e6, rtol=1e-4)
    coefficients[3] = -1e-9  # negative, tiny: the floor keeps the sign
    layer.set_weights([exponents, coefficients])
    outputs = layer(np.array([[[0.2], [0.3]]], "float32")).numpy()
    np.testing.assert_allclose(outputs[0, 0, 0], -0.5e6, rtol=1e-4)
    assert all_gradients_finite(layer, np.array([[[0.2], [0.3]]], "float32"))


def runaway_unit():
    """(sum x)^1.25 / 1: grows faster than the set, as a unit trained on
    small sets could before the presets clipped the numerator's outer
    exponents."""
    exponents = np.zeros((8, 1), "float32")
    exponents[:2, 0] = [1.25, 1.0]
    coefficients = np.array([[2.0], [0.0], [1.0], [0.0]], "float32")
    return exponents, coefficients


@pytest.mark.parametrize("size", [2, 40, 400])
def test_output_bound_stops_a_runaway_unit(size):
    values = np.full((1, size, 1), 0.9, "float32")
    unbounded = layer_with(*runaway_unit())
    expected = 2 * (0.9 * size) ** 1.25
    np.testing.assert_allclose(unbounded(values)[0, 0, 0], expected, rtol=1e-5)
    # The denominator floored at 2 N^1.25 / 10.
    bounded = layer_with(*runaway_unit(), output_bound=10.0)
    expected = min(expected, 10 * 0.9**1.25)
    np.testing.assert_allclose(bounded(values)[0, 0, 0], expected, rtol=1e-5)
    ragged = ragged_sets([values[0], values[0, :1]])
    np.testing.assert_allclose(bounded(ragged)[:1], bounded(values), rtol=1e-5)
    assert all_gradients_finite(bounded, values)


def test_output_bound_leaves_the_pooling_anchors_alone(random_sets):
    # Max, min, mean and the second moment never reach the bound.
    values, mask = padded_sets(random_sets, set_size=7)
    bounded = LAF(units=8, flatten=False, output_bound=10.0)
    unbounded = LAF(units=8, flatten=False)
    bounded.build((None, None, 3))
    unbounded.build((None, None, 3))
    unbounded.set_weights(bounded.get_weights())
    anchors = slice(1, None, 2)
    np.testing.assert_allclose(
        bounded(values, mask=mask)[..., anchors],
        unbounded(values, mask=mask)[..., anchors],
        rtol=1e-6,
    )


def test_mixed_float16():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        layer = LAF(units=4)
        inputs = np.random.default_rng(12).uniform(0, 1, (2, 50, 3))
        outputs = layer(inputs.astype("float16"))
        assert layer.exponents.dtype == "float32"
        assert layer.coefficients.dtype == "float32"
        assert outputs.dtype == "float16"
        assert np.all(np.isfinite(outputs.numpy()))
        large = LAF.from_closed_forms([{"name": "moment_power", "l": 5}])
        ones = np.ones((1, 1000, 1), "float16")
        # (count)^5 overflows float16; the clipped output stays finite.
        assert np.all(np.isfinite(large(ones).numpy()))
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_inside_xla_function(random_sets):
    layer = layer_with(*random_parameters(units=3, seed=19))
    values, mask = padded_sets(random_sets, set_size=7)
    compiled = tf.function(lambda v, m: layer(v, mask=m), jit_compile=True)
    np.testing.assert_allclose(
        compiled(values, mask).numpy(),
        layer(values, mask=mask).numpy(),
        rtol=1e-5,
    )


def test_fit_on_ragged_pipeline_and_constraint():
    rng = np.random.default_rng(13)
    sets = [rng.integers(0, 10, rng.integers(1, 6)) for _ in range(64)]
    labels = np.array([s.max() for s in sets], "float32")[:, None]
    dataset = tf.data.Dataset.from_tensor_slices(
        (tf.ragged.constant(sets), labels)
    ).batch(16)
    laf_layer = LAF(units=3, exponent_constraint=BoundedNonNeg(max_value=1.5))
    inputs = keras.Input(shape=(None, 1), ragged=True)
    model = keras.Model(inputs, keras.layers.Dense(1)(laf_layer(inputs)))
    model.compile(optimizer=keras.optimizers.SGD(100.0), loss="mae")
    scaled = dataset.map(
        lambda x, y: (tf.expand_dims(tf.cast(x, "float32") / 9.0, -1), y)
    )
    history = model.fit(scaled, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    # A huge learning rate moves exponents far outside [0, 1.5]; the
    # optimizer's projection puts them back.
    exponents = laf_layer.exponents.numpy()
    assert exponents.min() >= 0.0 and exponents.max() <= 1.5
    assert np.any(exponents == 0.0) or np.any(exponents == 1.5)


def test_fit_dense_with_mask_under_jit_compile(random_sets):
    values, mask = padded_sets(random_sets, set_size=7)
    inputs = keras.Input(shape=(7, 3))
    mask_input = keras.Input(shape=(7,), dtype="bool")
    outputs = keras.layers.Dense(1)(LAF(units=2)(inputs, mask=mask_input))
    model = keras.Model([inputs, mask_input], outputs)
    model.compile(optimizer="adam", loss="mse", jit_compile=True)
    history = model.fit(
        [values, mask], np.ones((4, 1)), epochs=2, batch_size=2, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()


def test_save_and_reload_without_custom_objects(tmp_path, random_sets):
    inputs = keras.Input(shape=(None, 3), ragged=True)
    hidden = LAF.from_closed_forms(["mean", {"name": "max", "r": 20}])(inputs)
    hidden2 = LAF(units=4, name="learned")(inputs)
    outputs = keras.layers.Concatenate()([hidden, hidden2])
    model = keras.Model(inputs, outputs)
    path = os.path.join(tmp_path, "laf.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    batch = ragged_sets(random_sets)
    np.testing.assert_array_equal(reloaded(batch).numpy(), model(batch).numpy())


def test_config_round_trip():
    layer = LAF(
        units=3,
        flatten=False,
        epsilon=1e-5,
        exponent_constraint=BoundedNonNeg(max_value=7.0),
        coefficient_regularizer="l2",
        name="laf_layer",
    )
    clone = LAF.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    assert clone.exponent_constraint.max_value == 7.0
    assert clone.output_bound == float("inf")
    # Layers saved before the bound computed without one.
    config = layer.get_config()
    del config["output_bound"]
    assert LAF.from_config(config).output_bound == float("inf")
    forms = LAF.from_closed_forms(["sum", {"name": "moment", "k": 3}])
    forms_clone = LAF.from_config(forms.get_config())
    inputs = np.random.default_rng(14).uniform(0, 1, (2, 4, 2))
    np.testing.assert_allclose(forms_clone(inputs), forms(inputs))


def test_compute_output_shape():
    assert LAF(units=3).compute_output_shape((None, None, 5)) == (None, 15)
    shape = LAF(units=3, flatten=False).compute_output_shape((8, 10, 5))
    assert shape == (8, 5, 3)
    assert LAF(units=2).compute_output_shape((100, 5)) == (None, 10)


def test_formulas():
    layer = LAF.from_closed_forms(["mean", "min"])
    layer.build((None, None, 1))
    mean, minimum = layer.formulas()
    assert mean == (
        "(1.00(Σx^1.00)^1.00 + 0.00(Σ(1-x)^0.00)^0.00) / "
        "(1.00(Σx^0.00)^1.00 + 0.00(Σ(1-x)^0.00)^0.00)"
    )
    assert "-1.00(Σ(1-x)^50.00)^0.02" in minimum
    with pytest.raises(ValueError, match="build"):
        LAF(units=1).formulas()


def test_closed_form_table_rows():
    exponents, coefficients = keras_laf.closed_form("min/max", r=10)
    np.testing.assert_allclose(exponents, [0, 0, 0.1, 10, 0.1, 10, 0, 0])
    np.testing.assert_allclose(coefficients, [1, -1, 1, 0])
    exponents, coefficients = keras_laf.closed_form("max/min", r=10)
    np.testing.assert_allclose(exponents, [0.1, 10, 0, 0, 0, 0, 0.1, 10])
    np.testing.assert_allclose(coefficients, [1, 0, 1, -1])


def test_scaled_closed_forms_are_the_forms_times_the_scale():
    rng = np.random.default_rng(0)
    values = rng.random((4, 7, 1)).astype("float32")
    layer = LAF.from_closed_forms(
        [{"name": "sum", "scale": 0.01}, {"name": "min", "scale": 3.0}]
    )
    outputs = keras.ops.convert_to_numpy(layer(values))
    np.testing.assert_allclose(
        outputs[:, 0], 0.01 * values.sum(axis=(1, 2)), rtol=1e-5
    )
    # Table 1's min, 1 - (sum (1-x)^50)^(1/50), within its n^(1/50) factor.
    np.testing.assert_allclose(
        outputs[:, 1], 3.0 * values.min(axis=(1, 2)), atol=3 * 0.05
    )
    with pytest.raises(ValueError, match="scale=-1"):
        keras_laf.closed_form("sum", scale=-1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"units": 0}, "units=0"),
        ({"units": 2.5}, "units=2.5"),
        ({"units": 2, "epsilon": 0.0}, "epsilon=0.0"),
        ({"units": 2, "flatten": "yes"}, "flatten='yes'"),
        ({"units": 2, "output_bound": 0.0}, "output_bound=0.0"),
        ({"units": 2, "output_bound": "10"}, "output_bound='10'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LAF(**kwargs)


def test_bad_closed_forms():
    with pytest.raises(ValueError, match="Unknown closed form 'median'"):
        LAF.from_closed_forms(["median"])
    with pytest.raises(ValueError, match="takes parameters"):
        LAF.from_closed_forms([{"name": "sum", "k": 2}])
    with pytest.raises(ValueError, match="positive"):
        keras_laf.closed_form("max", r=0)
    with pytest.raises(ValueError, match="non-empty list"):
        LAF.from_closed_forms("sum")
    with pytest.raises(ValueError, match="max_value=100.0"):
        LAF.from_closed_forms([{"name": "max", "r": 500}])
    with pytest.raises(ValueError, match="max_value"):
        BoundedNonNeg(max_value=-1)


@pytest.mark.parametrize(
    "inputs, kwargs, message",
    [
        (np.zeros((2, 3), "float32"), {}, "need `segment_ids`"),
        (np.zeros((2, 3, 4, 5), "float32"), {}, "expected max_ndim=3"),
        (np.zeros((2, 3, 1), "float32"), {"mask": np.ones((2, 4))}, "mask"),
        (np.zeros((2, 3, 1), "float32"), {"mask": np.ones((2,))}, "mask"),
        (
            np.zeros((4, 1), "float32"),
            {"segment_ids": np.zeros(4, "float32")},
            "integer",
        ),
        (
            np.zeros((4, 1), "float32"),
            {"segment_ids": np.zeros(3, "int32")},
            "one id per element",
        ),
        (
            np.zeros((2, 3, 1), "float32"),
            {"segment_ids": np.zeros(2, "int32")},
            "rank 2",
        ),
        (np.zeros((2, 3, 1), "float32"), {"num_segments": 2}, "segment_ids"),
    ],
)
def test_bad_inputs(inputs, kwargs, message):
    with pytest.raises(ValueError, match=message):
        LAF(units=2)(inputs, **kwargs)


def test_ragged_features_rejected():
    inputs = tf.ragged.constant([[[0.1, 0.2], [0.3]]])
    with pytest.raises(ValueError, match="known number of features"):
        LAF(units=2)(inputs)


@pytest.mark.parametrize("output_bound", [float("inf"), 0.5])
def test_xla_path_matches_plain_path(output_bound):
    # On TensorFlow padded sets run XLA-compiled, the set axis padded to a
    # bucket size, with a gradient wired by hand; values and gradients must
    # equal the plain keras.ops path's. 2500 elements make many chunks of
    # the set axis; a bound of 0.5 is active on many units and sets.
    from keras_laf.core.sets import PaddedSets
    from keras_laf.ops import formula
    from keras_laf.ops import laf_over_sets
    from keras_laf.ops import tensorflow_programs

    rng = np.random.default_rng(15)
    values = tf.constant(rng.uniform(0, 1, (2, 2500, 4)).astype("float32"))
    mask = tf.constant(np.arange(2500)[None] < np.array([[2500], [1700]]))
    exponents, coefficients = random_parameters(units=3, seed=16)
    exponents = tf.constant(exponents)
    coefficients = tf.constant(coefficients)

    def value_and_gradients(function):
        with tf.GradientTape() as tape:
            tape.watch([values, exponents, coefficients])
            outputs = function(
                values,
                PaddedSets(mask),
                exponents,
                coefficients,
                1e-7,
                3e38,
                output_bound,
            )
        gradients = tape.gradient(outputs, [values, exponents, coefficients])
        return [outputs] + gradients

    assert tensorflow_programs.bucket_size(2500) == 2560
    compiled = value_and_gradients(laf_over_sets)
    plain = value_and_gradients(formula.laf_math)
    for compiled_value, plain_value in zip(compiled, plain):
        np.testing.assert_allclose(
            compiled_value, plain_value, rtol=2e-4, atol=2e-6
        )


def test_bucket_sizes_of_static_and_run_time_set_sizes_agree():
    from keras_laf.ops.tensorflow_programs import bucket_size

    for set_size in list(range(0, 70)) + [1000, 2500, 4097]:
        static = bucket_size(set_size)
        run_time = bucket_size(tf.constant(set_size))
        assert isinstance(static, int)
        assert static == int(run_time) >= set_size
    assert [bucket_size(n) for n in (5, 9, 13, 25, 100, 129)] == [
        5,
        10,
        14,
        28,
        112,
        160,
    ]


def num_while_loops(concrete_function):
    """While loops in a traced function and every function it calls."""
    graph = concrete_function.graph.as_graph_def()
    nodes = list(graph.node)
    for function in graph.library.function:
        nodes += list(function.node_def)
    return sum(node.op in ("While", "StatelessWhile") for node in nodes)


def test_traced_call_is_chunked_whether_the_set_size_is_known_or_not():
    # Memory stays bounded whether the set size is known when tracing or
    # only at run time (ragged sets, a dynamic set axis): the set axis is
    # cut into chunks, a loop over them; the values agree.
    # 2 sets of 8 features, 8 units: chunks of 2^19 / (2 * 8 * 4 * 8) = 1,024
    # elements (the CPU default budget), three of them per set.
    exponents, coefficients = random_parameters(units=8, seed=3)
    values = np.random.default_rng(4).uniform(0, 1, (2, 3000, 8))

    def traced(signature):
        @tf.function(input_signature=[signature])
        def call(inputs):
            return keras_laf.laf(inputs, exponents, coefficients)

        return call, call.get_concrete_function()

    results = {}
    for name, signature in [
        ("static", tf.TensorSpec((2, 3000, 8), "float32")),
        ("dynamic", tf.TensorSpec((None, None, 8), "float32")),
    ]:
        call, concrete = traced(signature)
        results[name] = (num_while_loops(concrete), call(values))
    assert results["static"][0] > 0
    assert results["dynamic"][0] > 0
    np.testing.assert_allclose(
        results["static"][1], results["dynamic"][1], rtol=1e-5
    )


@pytest.mark.parametrize(
    "budget", [1, 72 * 32], ids=["elements", "overlapping"]
)
def test_ragged_sets_over_many_chunks_match_the_plain_path(
    chunk_budget, budget
):
    # Ragged sets: their set size is known only at run time, and they are
    # cut into chunks all the same: with one value per chunk, of one
    # element; with 32 elements' values (72 each), the 80 elements of the
    # bucketed sets in three chunks of 27, the last overlapping the one
    # before (the plain path: 70 elements in three chunks of 24).
    from keras_laf.core.sets import PaddedSets
    from keras_laf.ops import formula

    chunk_budget(padded=budget)
    rng = np.random.default_rng(9)
    lengths = [70, 33, 1]
    flat = rng.uniform(0, 1, (sum(lengths), 3)).astype("float32")
    exponents, coefficients = random_parameters(units=2, seed=10)
    weights = tf.constant(rng.normal(size=(3, 3, 2)), "float32")

    @tf.function
    def ragged_call(flat):
        with tf.GradientTape() as tape:
            tape.watch(flat)
            ragged = tf.RaggedTensor.from_row_lengths(flat, lengths)
            outputs = keras_laf.laf(ragged, exponents, coefficients)
            loss = tf.reduce_sum(outputs * weights)
        return outputs, tape.gradient(loss, flat)

    mask = np.arange(70)[None] < np.array(lengths)[:, None]
    positions = np.zeros(mask.shape, "int32")
    positions[mask] = np.arange(sum(lengths))
    flat = tf.constant(flat)
    with tf.GradientTape() as tape:
        tape.watch(flat)
        padded = tf.where(mask[..., None], tf.gather(flat, positions), 0.0)
        outputs = formula.laf_math(
            padded,
            PaddedSets(mask),
            exponents,
            coefficients,
            1e-7,
            3e38,
            float("inf"),
        )
        loss = tf.reduce_sum(outputs * weights)
    plain = (outputs, tape.gradient(loss, flat))
    for computed, expected in zip(ragged_call(flat), plain):
        np.testing.assert_allclose(
            tf.convert_to_tensor(computed),
            tf.convert_to_tensor(expected),
            rtol=2e-4,
            atol=2e-6,
        )


def test_chunk_budget_is_public_configuration(chunk_budget):
    # Fewer values per chunk: more chunks, the same result.
    exponents, coefficients = random_parameters(units=2, seed=5)
    values = np.random.default_rng(6).uniform(0, 1, (2, 300, 2))
    values = values.astype("float32")
    default = keras_laf.laf(values, exponents, coefficients)
    chunk_budget(padded=1, segments=1)
    assert keras_laf.config.chunk_budget("padded") == 1
    chunked = keras_laf.laf(values, exponents, coefficients)
    np.testing.assert_allclose(chunked, default, rtol=1e-5)
    chunk_budget(padded=None)
    assert keras_laf.config.chunk_budget("padded") is None
    with pytest.raises(ValueError, match="padded=0"):
        keras_laf.config.set_chunk_budget(padded=0)
    with pytest.raises(ValueError, match="layout"):
        keras_laf.config.chunk_budget("ragged")


@pytest.mark.parametrize("form", ["padded", "segments"])
def test_gradients_match_autodiff_of_the_formula(form):
    # The power sums have a hand-written gradient; compare everything with
    # TensorFlow's autodiff of the plain formula on values inside (0, 1).
    # Sets over many chunks: tests/ops/test_laf_every_backend.py, on every
    # backend.
    rng = np.random.default_rng(20)
    values = tf.constant(rng.uniform(0.05, 0.95, (2, 6, 3)), "float32")
    exponents, coefficients = random_parameters(units=4, seed=21)
    layer = layer_with(exponents, coefficients)

    def formula(x):
        x = x[:, :, :, None]  # (batch, set, features, 1)
        a, b, c, d, e, f, g, h = tf.unstack(layer.exponents)
        alpha, beta, gamma, delta = tf.unstack(layer.coefficients)

        def power_sum(source, outer, inner):
            return tf.reduce_sum(source**inner, axis=1) ** outer

        numerator = alpha * power_sum(x, a, b) + beta * power_sum(1 - x, c, d)
        denominator = gamma * power_sum(x, e, f) + delta * power_sum(
            1 - x, g, h
        )
        return numerator / denominator

    weights = tf.constant(rng.normal(size=(2, 3, 4)), "float32")
    results = []
    for function in ("layer", "formula"):
        with tf.GradientTape() as tape:
            tape.watch(values)
            if function == "formula":
                outputs = formula(values)
            elif form == "padded":
                outputs = layer(values)
            else:
                outputs = layer(
                    tf.reshape(values, (-1, 3)),
                    segment_ids=np.repeat([0, 1], 6),
                    num_segments=2,
                )
            loss = tf.reduce_sum(outputs * weights)
        results.append(
            [outputs]
            + tape.gradient(loss, [values, *layer.trainable_variables])
        )
    for computed, expected in zip(*results):
        np.testing.assert_allclose(computed, expected, rtol=1e-3, atol=1e-6)


def test_model_compiled_with_jit_trains_as_without():
    # The padded core is a jit-compiled function; inside a step compiled
    # whole (jit_compile=True, Keras's default on a GPU) it must train as
    # it does nested in a plain graph.
    rng = np.random.default_rng(31)
    values = rng.uniform(0, 1, (32, 6, 3)).astype("float32")
    mask = np.arange(6)[None] < rng.integers(1, 7, (32, 1))
    targets = values.sum(axis=(1, 2))[:, None] * mask.mean(1, keepdims=True)

    def trained(jit_compile):
        keras.utils.set_random_seed(0)
        inputs = keras.Input((6, 3))
        mask_input = keras.Input((6,), dtype="bool")
        aggregated = LAF(units=2)(inputs, mask=mask_input)
        outputs = keras.layers.Dense(1)(keras.layers.Flatten()(aggregated))
        model = keras.Model([inputs, mask_input], outputs)
        model.compile("adam", "mse", jit_compile=jit_compile)
        history = model.fit(
            [values, mask], targets, batch_size=8, epochs=2, verbose=0
        )
        return history.history["loss"]

    np.testing.assert_allclose(trained(True), trained(False), rtol=1e-4)

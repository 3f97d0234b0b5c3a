"""Inputs that are wrong, on every Keras backend: non-finite elements,
elements outside [0, 1], wrong dtypes, masks and segment ids.
"""

import re

import keras
import numpy as np
import pytest
from backend_helpers import BACKEND
from backend_helpers import NEEDS_TENSORFLOW
from backend_helpers import ON_TENSORFLOW
from backend_helpers import flat
from backend_helpers import numpy
from backend_helpers import padded

import keras_laf
from keras_laf.core.sets import is_ragged

pytestmark = pytest.mark.multi_backend


# NaN and inf in real elements.


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("form", ["padded", "segments", "ragged"])
def test_nonfinite_element_makes_its_set_nan(sets, form, bad_value):
    if form == "ragged" and not ON_TENSORFLOW:
        pytest.skip(NEEDS_TENSORFLOW)
    sets[0][1, 0] = bad_value  # set 0, feature 0
    layer = keras_laf.LAF(units=2, flatten=False)
    if form == "padded":
        values, mask = padded(sets, 6)
        # Padding holds NaN too: it must have no effect.
        values[~mask] = np.nan
        outputs = layer(values, mask=mask)
    elif form == "segments":
        values, ids = flat(sets)
        outputs = layer(values, segment_ids=ids, num_segments=len(sets))
    else:
        import tensorflow as tf

        values, ids = flat(sets)
        outputs = layer(tf.RaggedTensor.from_value_rowids(values, ids))
    outputs = numpy(outputs)
    assert np.isnan(outputs[0, 0]).all()
    assert np.isfinite(outputs[0, 1]).all()  # the other feature
    assert np.isfinite(outputs[1:]).all()  # the other sets


def test_terminate_on_nan_stops_fit(sets):
    values, mask = padded(sets, 6)
    values[2, 4, 1] = np.nan
    model = keras.Sequential(
        [keras.Input((6, 2)), keras_laf.LAF(units=2), keras.layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        values,
        np.ones((3, 1)),
        batch_size=3,
        epochs=5,
        verbose=0,
        callbacks=[keras.callbacks.TerminateOnNaN()],
    )
    assert len(history.history["loss"]) == 1
    assert np.isnan(history.history["loss"][0])


# Elements outside [0, 1] are told, not clipped.

FORMS = ["padded", "segments", "ragged"]


def call_in_form(function, sets, form, padding=0.0):
    """`function(inputs, **kwargs)` on `sets` in `form`: padded with a mask
    (the padding holding `padding`), flat with segment ids, or ragged."""
    if form == "ragged" and not ON_TENSORFLOW:
        pytest.skip(NEEDS_TENSORFLOW)
    if form == "padded":
        values, mask = padded(sets, 6)
        values[~mask] = padding
        return function(values, mask=mask)
    values, ids = flat(sets)
    if form == "segments":
        return function(values, segment_ids=ids, num_segments=len(sets))
    import tensorflow as tf

    return function(tf.RaggedTensor.from_value_rowids(values, ids))


def unit_interval_error(low, high):
    """The message of elements in [low, high], as a pattern."""
    return re.escape(
        f"aggregates values in [0, 1]; received values in [{low!s}, "
        f"{high!s}]. Put a sigmoid (as the paper does) or another map into "
        "[0, 1] before the layer, e.g. keras.layers.Activation('sigmoid')."
    )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shift", [1.0, -1.0])
def test_elements_outside_unit_interval_are_an_error_in_eager_calls(
    sets, form, shift
):
    # The case: the mean of sets in [1, 2] was 1.0, every input
    # clipped. The padding, far out of range, is neither an error nor in
    # the range the message gives.
    shifted = [elements + shift for elements in sets]
    real = np.concatenate(shifted).astype("float32")
    layer = keras_laf.LAF.from_closed_forms(["mean"])
    with pytest.raises(
        ValueError, match=unit_interval_error(real.min(), real.max())
    ):
        call_in_form(layer, shifted, form, padding=7.0)


@pytest.mark.parametrize("form", FORMS)
def test_elements_within_rounding_of_unit_interval_are_accepted(sets, form):
    sets[0][0, 0] = 1 + 1e-7
    sets[1][0, 1] = -1e-7
    layer = keras_laf.LAF.from_closed_forms(["mean", "sum"], flatten=False)
    outputs = numpy(call_in_form(layer, sets, form, padding=7.0))
    for i, elements in enumerate(sets):
        clipped = np.clip(elements.astype("float32"), 0.0, 1.0)
        # atol: x is floored at epsilon (1e-7) inside the logarithm.
        for k, reference in enumerate([clipped.mean(0), clipped.sum(0)]):
            np.testing.assert_allclose(
                outputs[i, :, k], reference, rtol=1e-5, atol=1e-6
            )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bad_value", [1.5, -0.5, 1 + 1e-5])
def test_element_outside_unit_interval_makes_its_set_nan(sets, form, bad_value):
    # What a traced call (`Model.fit`, `predict`) computes, where no error
    # can be raised on a value: the functional op never raises on one.
    sets[0][1, 0] = bad_value  # set 0, feature 0
    exponents, coefficients = keras_laf.closed_form("mean")

    def mean(inputs, **kwargs):
        return keras_laf.laf(
            inputs, exponents[:, None], coefficients[:, None], **kwargs
        )

    outputs = numpy(call_in_form(mean, sets, form, padding=7.0))
    assert np.isnan(outputs[0, 0]).all()
    # The other feature, and the other sets, whose padding holds 7.
    np.testing.assert_allclose(outputs[0, 1, 0], sets[0][:, 1].mean(), 1e-5)
    for i, elements in enumerate(sets[1:], 1):
        np.testing.assert_allclose(outputs[i, :, 0], elements.mean(0), 1e-5)


def test_fit_on_elements_outside_unit_interval_is_told():
    # A LAF on unsquashed inputs in [1, 2]: compiled steps (TensorFlow,
    # JAX) make the loss NaN and TerminateOnNaN stops; PyTorch trains
    # eagerly, so the layer raises at the first step.
    values = np.random.default_rng(1).uniform(1, 2, (3, 6, 2))
    model = keras.Sequential(
        [keras.Input((6, 2)), keras_laf.LAF(units=2), keras.layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")

    def fit():
        return model.fit(
            values.astype("float32"),
            np.ones((3, 1)),
            batch_size=3,
            epochs=5,
            verbose=0,
            callbacks=[keras.callbacks.TerminateOnNaN()],
        )

    if BACKEND == "torch":
        with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
            fit()
        return
    history = fit()
    assert len(history.history["loss"]) == 1
    assert np.isnan(history.history["loss"][0])


# Inputs that are wrong.


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_values_are_an_error_for_laf(dtype):
    digits = np.array([[[3], [5], [7]]], dtype)
    with pytest.raises(ValueError, match="Embed integers"):
        keras_laf.LAF(units=1)(digits)
    with pytest.raises(ValueError, match="Embed integers"):
        keras_laf.laf(digits, *keras_laf.closed_form("sum"))


def test_integer_values_are_an_error_when_a_model_is_traced():
    inputs = keras.Input((None, 1), dtype="int32")
    model = keras.Model(inputs, keras_laf.LAF(units=1)(inputs))
    # Raised while the step is traced, before anything is compiled.
    with pytest.raises(ValueError, match="Embed integers"):
        model.predict(np.array([[[3], [5], [7]]], "int32"), verbose=0)


def test_bool_values_are_an_error():
    with pytest.raises(ValueError, match="numeric"):
        keras_laf.FixedAggregation(["sum"])(np.ones((1, 3, 1), bool))


@pytest.mark.parametrize("bad_mask", [[[1.0, 0.5, 0.0]], [[1, -1, 0]]])
def test_mask_values_other_than_0_and_1_are_an_error(bad_mask):
    values = np.full((1, 3, 1), 0.5, "float32")
    with pytest.raises(ValueError, match="only 0"):
        keras_laf.LAF(units=1)(values, mask=np.array(bad_mask))


def test_numeric_mask_of_0_and_1_is_the_boolean_mask():
    values = np.random.default_rng(2).uniform(size=(2, 3, 1)).astype("f4")
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    layer = keras_laf.LAF(units=2)
    np.testing.assert_allclose(
        numpy(layer(values, mask=mask.astype("float32"))),
        numpy(layer(values, mask=mask.astype(bool))),
    )


@pytest.mark.parametrize(
    "ids, num_segments, message",
    [
        ([0, -1, 1], 2, r"in \[0, 2\)"),
        ([0, 2, 1], 2, r"in \[0, 2\)"),
        ([0.0, 1.0, 1.0], 2, "integer"),
        ([0, 1, 1], 2.0, "non-negative integer"),
        ([0, 1, 1], -1, "non-negative integer"),
    ],
)
def test_bad_segment_ids_are_errors(ids, num_segments, message):
    values = np.full((3, 1), 0.5, "float32")
    with pytest.raises(ValueError, match=message):
        keras_laf.LAF(units=1)(
            values, segment_ids=np.array(ids), num_segments=num_segments
        )


@pytest.mark.tensorflow_only(NEEDS_TENSORFLOW)
def test_string_values_and_mask_are_errors_before_compilation():
    import tensorflow as tf

    with pytest.raises(ValueError, match="numeric"):
        keras_laf.LAF(units=1)(tf.constant([[["a"], ["b"]]]))
    with pytest.raises(ValueError, match="mask"):
        keras_laf.LAF(units=1)(
            np.ones((1, 2, 1), "float32"), mask=tf.constant([["a", "b"]])
        )


@pytest.mark.tensorflow_only(NEEDS_TENSORFLOW)
def test_out_of_range_ids_and_mask_values_fail_inside_tf_function():
    import tensorflow as tf

    layer = keras_laf.LAF(units=1)
    segments = tf.function(
        lambda v, ids: layer(v, segment_ids=ids, num_segments=2)
    )
    values = np.full((3, 1), 0.5, "float32")
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        segments(values, np.array([0, -1, 1], "int32"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="beyond"):
        segments(values, np.array([0, 2, 1], "int32"))
    masked = tf.function(lambda v, m: layer(v, mask=m))
    with pytest.raises(tf.errors.InvalidArgumentError, match="only 0"):
        masked(np.full((1, 3, 1), 0.5, "float32"), np.array([[1.0, 0.5, 0]]))


def test_wrong_rank_or_features_fail_when_the_model_is_built():
    with pytest.raises(
        ValueError, match=r"'laf' \(LAF\).*Received: inputs.shape=\(None, 3\)"
    ):
        keras.Sequential([keras.Input((3,)), keras_laf.LAF(2, name="laf")])
    with pytest.raises(
        ValueError, match="'pma'.*expected ndim=3, found ndim=2"
    ):
        keras.Sequential(
            [keras.Input((4,)), keras_laf.PMA(4, 2, 1, name="pma")]
        )
    # Where the weights fix the number of features.
    for layer in [
        keras_laf.PermutationEquivariant(2, name="equivariant"),
        keras_laf.SAB(4, 2, name="sab"),
        keras_laf.LSTMAggregation(2, name="lstm"),
    ]:
        keras.Sequential([keras.Input((None, 3)), layer])
        with pytest.raises(
            ValueError, match=f"'{layer.name}'.*value 3.*None, 4"
        ):
            keras.Sequential([keras.Input((None, 4)), layer])


@pytest.mark.skipif(
    BACKEND == "jax",
    reason="inside jax.jit no value can be checked: JAX's gathers and "
    "scatters drop or clamp out-of-range indices",
)
@pytest.mark.parametrize(
    "ids, mask, cause",
    [
        ([0, -1, 2], None, "segment ids holds a negative index"),
        ([0, 3, 2], None, "segment ids holds an index beyond the sets"),
        (None, [[1, 0.5, 0]], "mask must hold only 0"),
    ],
    ids=["negative-id", "id-beyond", "mask-value"],
)
def test_bad_ids_and_masks_inside_fit_name_the_cause_first(ids, mask, cause):
    # A traced TensorFlow step reports the failed op's stack first and its
    # message thousands of characters in; the op is named after the cause.
    values = keras.Input((2,))
    if ids is not None:
        extra = keras.Input((), dtype="int32")
        pooled = keras_laf.LAF(2)(values, segment_ids=extra, num_segments=3)
        data = (np.full((3, 2), 0.5, "float32"), np.array(ids, "int32"))
        targets = np.zeros((3, 4), "float32")
    else:
        values = keras.Input((3, 2))
        extra = keras.Input((3,))
        pooled = keras_laf.LAF(2)(values, mask=extra)
        data = (np.full((1, 3, 2), 0.5, "float32"), np.array(mask, "float32"))
        targets = np.zeros((1, 4), "float32")
    model = keras.Model([values, extra], pooled)
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(Exception) as error:
        model.fit(data, targets, batch_size=len(targets), verbose=0)
    head = re.sub("[^A-Za-z0-9]+", " ", str(error.value)[:300])
    assert cause in head, str(error.value)[:300]


@pytest.mark.skipif(ON_TENSORFLOW, reason="checks the non-TensorFlow error")
def test_ragged_inputs_on_other_backends_say_how_to_pad():
    tf = pytest.importorskip("tensorflow")
    ragged = tf.ragged.constant([[[0.1], [0.2]], [[0.3]]], ragged_rank=1)
    # A predicate: the layers raise, once, where the input enters.
    assert not is_ragged(ragged)
    for layer in [
        keras_laf.LAF(units=1),
        keras_laf.PerElement(keras.layers.Dense(2)),
    ]:
        with pytest.raises(
            ValueError, match=r"to_padded_batches.*Received: a tf.RaggedTensor"
        ):
            layer(ragged)
    exponents, coefficients = keras_laf.closed_form("sum")
    with pytest.raises(ValueError, match="Received: a tf.RaggedTensor"):
        keras_laf.laf(ragged, exponents[:, None], coefficients[:, None])

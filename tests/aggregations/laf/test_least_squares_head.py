"""`LeastSquaresHead` against NumPy's least squares, and its bad inputs."""

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf.aggregations.laf.callbacks import LeastSquaresHead


def linear_model(hidden_activation="tanh"):
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, activation=hidden_activation, name="hidden")(
        inputs
    )
    outputs = keras.layers.Dense(2, name="head")(hidden)
    return keras.Model(inputs, outputs)


@pytest.mark.multi_backend
def test_head_is_numpys_least_squares_fit():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 3)).astype("float32")
    y = np.stack([x.sum(1), x[:, 0] - 2.0], 1).astype("float32")
    model = linear_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=1, verbose=0, callbacks=[LeastSquaresHead((x, y))])
    hidden = keras.Model(model.input, model.get_layer("hidden").output)
    design = np.c_[keras.ops.convert_to_numpy(hidden(x)), np.ones(len(x))]
    expected = np.linalg.lstsq(design.astype("float64"), y, rcond=None)[0]
    kernel, bias = model.get_layer("head").get_weights()
    np.testing.assert_allclose(kernel, expected[:-1], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(bias, expected[-1], rtol=1e-3, atol=1e-4)


def test_sample_weights_weigh_the_fit():
    import tensorflow as tf

    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 3)).astype("float32")
    y = rng.normal(size=(200, 2)).astype("float32")
    weights = rng.uniform(0, 2, size=200).astype("float32")
    data = tf.data.Dataset.from_tensor_slices((x, y, weights)).batch(32)
    model = linear_model()
    model.compile(optimizer="adam", loss="mse")
    model.fit(data, epochs=1, verbose=0, callbacks=[LeastSquaresHead(data)])
    hidden = keras.Model(model.input, model.get_layer("hidden").output)
    design = np.c_[keras.ops.convert_to_numpy(hidden(x)), np.ones(len(x))]
    root = np.sqrt(weights.astype("float64"))[:, None]
    expected = np.linalg.lstsq(design * root, y * root, rcond=None)[0]
    kernel, _ = model.get_layer("head").get_weights()
    np.testing.assert_allclose(kernel, expected[:-1], rtol=1e-3, atol=1e-4)


def test_exact_counts_extrapolate_after_the_refit():
    # A count unit, and a head left off by the optimizer: the refit on
    # sets of 2..10 makes the count exact on sets of 50.
    model = keras_laf.models.deep_sets(
        vocabulary_size=10,
        phi_units=(),
        aggregation=keras_laf.LAF.from_closed_forms(["count"], name="laf"),
    )
    model.compile(optimizer=keras.optimizers.Adam(1e-6), loss="mae")
    rng = np.random.default_rng(2)
    sizes = rng.integers(2, 11, 512)
    digits = rng.integers(0, 10, (512, 10))
    mask = (np.arange(10) < sizes[:, None]).astype("float32")
    data = ([digits, mask], sizes[:, None].astype("float32"))
    model.get_layer("output").set_weights(
        [np.full((10, 1), 0.098, "float32"), np.zeros(1, "float32")]
    )
    model.fit(*data, epochs=1, verbose=0, callbacks=[LeastSquaresHead(data)])
    large = [rng.integers(0, 10, (4, 50)), np.ones((4, 50), "float32")]
    prediction = model.predict(large, verbose=0)
    np.testing.assert_allclose(prediction, 50.0, rtol=1e-4)


def test_bad_heads_are_rejected():
    x = np.zeros((8, 3), "float32")
    y = np.zeros((8, 2), "float32")
    for activation, message in (
        ("tanh", "with a linear activation"),
        (None, "output is the model's"),
    ):
        model = linear_model(activation)
        model.compile(optimizer="adam", loss="mse")
        with pytest.raises(ValueError, match=message):
            model.fit(
                x,
                y,
                epochs=1,
                verbose=0,
                callbacks=[LeastSquaresHead((x, y), layer_name="hidden")],
            )
    with pytest.raises(ValueError, match="Received: layer_name=3"):
        LeastSquaresHead((x, y), layer_name=3)
    with pytest.raises(ValueError, match="batch_size"):
        LeastSquaresHead((x, y), batch_size=0)

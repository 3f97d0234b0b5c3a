"""Tests of the Set Transformer blocks MAB, SAB, ISAB and PMA."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_laf.layers.attention import ISAB
from keras_laf.layers.attention import MAB
from keras_laf.layers.attention import PMA
from keras_laf.layers.attention import SAB

DIM = 8
NUM_HEADS = 2
FEATURES = 4

# Three sets of 3, 2 and 1 elements.
RNG = np.random.default_rng(0)
SETS = [RNG.normal(size=(n, FEATURES)).astype("float32") for n in (3, 2, 1)]


def make_layer(kind, **kwargs):
    if kind == "MAB":
        return MAB(DIM, NUM_HEADS, **kwargs)
    if kind == "SAB":
        return SAB(DIM, NUM_HEADS, **kwargs)
    if kind == "ISAB":
        return ISAB(DIM, NUM_HEADS, num_inducing=2, **kwargs)
    return PMA(DIM, NUM_HEADS, num_seeds=2, **kwargs)


SET_LAYERS = ["SAB", "ISAB", "PMA"]
EQUIVARIANT_LAYERS = ["SAB", "ISAB"]


def padded_sets(sets, set_size=3, fill=np.nan):
    """Padded values (padding filled with `fill`) and their mask."""
    values = np.full((len(sets), set_size, FEATURES), fill, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for i, elements in enumerate(sets):
        values[i, : len(elements)] = elements
        mask[i, : len(elements)] = True
    return values, mask


def ragged_sets(sets):
    return tf.RaggedTensor.from_row_lengths(
        np.concatenate(sets), [len(s) for s in sets]
    )


def alone(layer, elements):
    """The layer's output for one set without padding: `(rows, dim)`."""
    return keras.ops.convert_to_numpy(layer(elements[None]))[0]


def layer_norm(x, gamma, beta, epsilon=1e-5):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta


def reference_mab(weights, query, value):
    """NumPy MAB of one query set `(t, q)` and one value set `(s, v)`."""
    w = {path.split("/", 1)[1]: array for path, array in weights.items()}
    x = query @ w["query_projection/kernel"] + w["query_projection/bias"]
    heads = {}
    for name, source in (("query", x), ("key", value), ("value", value)):
        heads[name] = (
            np.einsum("td,dnh->tnh", source, w[f"attention/{name}/kernel"])
            + w[f"attention/{name}/bias"]
        )
    scores = np.einsum("tnh,snh->nts", heads["query"], heads["key"])
    scores /= np.sqrt(DIM // NUM_HEADS)
    probabilities = np.exp(scores - scores.max(-1, keepdims=True))
    probabilities /= probabilities.sum(-1, keepdims=True)
    attended = np.einsum("nts,snh->tnh", probabilities, heads["value"])
    attention = (
        np.einsum(
            "tnh,nhd->td", attended, w["attention/attention_output/kernel"]
        )
        + w["attention/attention_output/bias"]
    )
    hidden = layer_norm(
        x + attention,
        w["attention_layer_norm/gamma"],
        w["attention_layer_norm/beta"],
    )
    feedforward = np.maximum(
        hidden @ w["feedforward/kernel"] + w["feedforward/bias"], 0
    )
    return layer_norm(
        hidden + feedforward,
        w["feedforward_layer_norm/gamma"],
        w["feedforward_layer_norm/beta"],
    )


def test_mab_matches_numpy():
    query = RNG.normal(size=(2, 3, 3)).astype("float32")
    value = RNG.normal(size=(2, 4, 5)).astype("float32")
    block = MAB(DIM, NUM_HEADS)
    outputs = keras.ops.convert_to_numpy(block(query, value))
    assert outputs.shape == (2, 3, DIM)
    weights = {w.path: w.numpy() for w in block.weights}
    for i in range(2):
        expected = reference_mab(weights, query[i], value[i])
        np.testing.assert_allclose(outputs[i], expected, atol=1e-5)


def test_mab_without_layer_norm_is_residual():
    block = MAB(DIM, NUM_HEADS, layer_norm=False)
    query = RNG.normal(size=(2, 3, DIM)).astype("float32")
    value = RNG.normal(size=(2, 2, DIM)).astype("float32")
    block(query, value)
    assert not any("layer_norm" in w.path for w in block.weights)
    assert not any("query_projection" in w.path for w in block.weights)
    # An empty value set adds nothing: the output is X + rFF(X).
    outputs = block(query, value, value_mask=np.zeros((2, 2), bool))
    weights = {w.path.split("/", 1)[1]: w.numpy() for w in block.weights}
    feedforward = np.maximum(
        query @ weights["feedforward/kernel"] + weights["feedforward/bias"], 0
    )
    np.testing.assert_allclose(outputs, query + feedforward, atol=1e-6)


@pytest.mark.parametrize("name", SET_LAYERS)
def test_output_shapes(name):
    layer = make_layer(name)
    values, _ = padded_sets(SETS, fill=0.0)
    outputs = layer(values)
    rows = 2 if name == "PMA" else 3
    assert tuple(outputs.shape) == (3, rows, DIM)
    assert layer.compute_output_shape((None, None, FEATURES)) == (
        None,
        2 if name == "PMA" else None,
        DIM,
    )
    symbolic = make_layer(name)(keras.Input(shape=(None, FEATURES)))
    assert tuple(symbolic.shape) == (None, 2 if name == "PMA" else None, DIM)


@pytest.mark.parametrize("name", SET_LAYERS)
def test_mask_equals_each_set_alone(name):
    layer = make_layer(name)
    values, mask = padded_sets(SETS)  # padding is NaN
    outputs = keras.ops.convert_to_numpy(layer(values, mask=mask))
    assert np.isfinite(outputs).all()
    for i, elements in enumerate(SETS):
        expected = alone(layer, elements)
        if name == "PMA":
            np.testing.assert_allclose(outputs[i], expected, atol=1e-5)
        else:
            n = len(elements)
            np.testing.assert_allclose(outputs[i, :n], expected, atol=1e-5)
            np.testing.assert_array_equal(outputs[i, n:], 0.0)


def test_mab_masks_equal_each_set_alone():
    block = MAB(DIM, NUM_HEADS)
    queries = [RNG.normal(size=(n, 3)).astype("float32") for n in (1, 3, 2)]
    query = np.full((3, 3, 3), np.nan, "float32")
    query_mask = np.zeros((3, 3), bool)
    for i, elements in enumerate(queries):
        query[i, : len(elements)] = elements
        query_mask[i, : len(elements)] = True
    value, value_mask = padded_sets(SETS)
    outputs = block(query, value, query_mask=query_mask, value_mask=value_mask)
    outputs = keras.ops.convert_to_numpy(outputs)
    for i, (elements, values) in enumerate(zip(queries, SETS)):
        expected = block(elements[None], values[None])[0]
        n = len(elements)
        np.testing.assert_allclose(outputs[i, :n], expected, atol=1e-5)
        np.testing.assert_array_equal(outputs[i, n:], 0.0)
    # Ragged query and value give the same rows.
    ragged = block(ragged_sets(queries), ragged_sets(SETS))
    assert isinstance(ragged, tf.RaggedTensor)
    np.testing.assert_allclose(ragged.to_tensor(), outputs, atol=1e-6)


def set_transformer():
    """Masking, SAB, ISAB, PMA and a MAB of the pooled set and elements."""
    inputs = keras.Input(shape=(None, FEATURES))
    x = keras.layers.Masking(mask_value=0.0, name="masking")(inputs)
    elements = SAB(DIM, NUM_HEADS, name="sab")(x)
    elements = ISAB(DIM, NUM_HEADS, num_inducing=2, name="isab")(elements)
    pooled = PMA(DIM, NUM_HEADS, num_seeds=2, name="pma")(elements)
    pooled = MAB(DIM, NUM_HEADS, name="mab")(pooled, elements)
    outputs = keras.layers.Dense(1, name="head")(
        keras.layers.Flatten(name="flatten")(pooled)
    )
    return keras.Model(inputs, outputs, name="set_transformer")


def test_keras_masks_propagate_through_a_model():
    model = set_transformer()
    values, _ = padded_sets(SETS, fill=0.0)
    batch = keras.ops.convert_to_numpy(model(values))
    for i, elements in enumerate(SETS):
        expected = keras.ops.convert_to_numpy(model(elements[None]))[0]
        np.testing.assert_allclose(batch[i], expected, atol=1e-5)


@pytest.mark.parametrize("name", SET_LAYERS)
def test_ragged_equals_padded_with_mask(name):
    layer = make_layer(name)
    values, mask = padded_sets(SETS)
    padded = keras.ops.convert_to_numpy(layer(values, mask=mask))
    outputs = layer(ragged_sets(SETS))
    if name == "PMA":
        assert not isinstance(outputs, tf.RaggedTensor)
        np.testing.assert_allclose(outputs, padded, atol=1e-6)
    else:
        assert isinstance(outputs, tf.RaggedTensor)
        assert outputs.row_lengths().numpy().tolist() == [3, 2, 1]
        np.testing.assert_allclose(outputs.to_tensor(), padded, atol=1e-6)
        # The ragged output chains into the next block.
        assert tuple(make_layer("PMA")(outputs).shape) == (3, 2, DIM)


@pytest.mark.parametrize("name", SET_LAYERS)
def test_empty_set_is_finite(name):
    layer = make_layer(name)
    values, mask = padded_sets(SETS)
    mask[1] = False  # the second set is empty
    with tf.GradientTape() as tape:
        outputs = layer(values, mask=mask)
        loss = keras.ops.sum(outputs)
    gradients = tape.gradient(loss, layer.trainable_variables)
    outputs = keras.ops.convert_to_numpy(outputs)
    assert np.isfinite(outputs).all()
    assert all(np.isfinite(g).all() for g in gradients if g is not None)
    ragged = layer(ragged_sets([SETS[0], SETS[0][:0], SETS[2]]))
    if name == "PMA":
        # Every empty set pools to the same learned constant.
        other = layer(values, mask=np.zeros_like(mask))
        np.testing.assert_allclose(other[0], outputs[1], atol=1e-6)
        np.testing.assert_allclose(ragged[1], outputs[1], atol=1e-6)
    else:
        np.testing.assert_array_equal(outputs[1], 0.0)
        assert ragged.row_lengths().numpy().tolist() == [3, 0, 1]
        np.testing.assert_allclose(ragged.to_tensor(), outputs, atol=1e-6)


@pytest.mark.parametrize("name", SET_LAYERS)
def test_permutations(name):
    layer = make_layer(name)
    values = RNG.normal(size=(2, 3, FEATURES)).astype("float32")
    order = [2, 0, 1]
    outputs = keras.ops.convert_to_numpy(layer(values))
    permuted = keras.ops.convert_to_numpy(layer(values[:, order]))
    if name == "PMA":
        np.testing.assert_allclose(permuted, outputs, atol=1e-5)
    else:
        np.testing.assert_allclose(permuted, outputs[:, order], atol=1e-5)


@pytest.mark.parametrize("name", EQUIVARIANT_LAYERS)
def test_compute_mask_returns_input_mask(name):
    layer = make_layer(name)
    mask = np.array([[True, False]])
    assert layer.compute_mask(np.zeros((1, 2, FEATURES)), mask) is mask
    assert make_layer("PMA").compute_mask(None, mask) is None


@pytest.mark.parametrize("name", [*SET_LAYERS, "MAB"])
def test_config_round_trip(name):
    kwargs = {"layer_norm": False, "dropout": 0.1, "name": "block"}
    layer = make_layer(name, **kwargs)
    values, mask = padded_sets(SETS)
    call_args = (values, values) if name == "MAB" else (values,)
    call_kwargs = {"query_mask" if name == "MAB" else "mask": mask}
    outputs = layer(*call_args, **call_kwargs)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    clone(*call_args, **call_kwargs)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        clone(*call_args, **call_kwargs), outputs, atol=1e-6
    )


def test_nested_layers_start_from_different_weights():
    layer = ISAB(DIM, NUM_HEADS, num_inducing=2, name="isab")
    layer.build((None, None, DIM))
    weights = {w.path: w.numpy() for w in layer.weights}
    assert not np.array_equal(
        weights["isab/inducing_mab/feedforward/kernel"],
        weights["isab/output_mab/feedforward/kernel"],
    )


def test_dropout_only_in_training():
    layer = SAB(DIM, NUM_HEADS, dropout=0.5)
    values, mask = padded_sets(SETS)
    inference = layer(values, mask=mask)
    np.testing.assert_allclose(layer(values, mask=mask), inference)
    training = keras.ops.convert_to_numpy(
        layer(values, mask=mask, training=True)
    )
    assert np.isfinite(training).all()
    assert not np.allclose(training, inference)
    np.testing.assert_array_equal(training[~mask], 0.0)


def test_save_and_reload(tmp_path):
    model = set_transformer()
    values, _ = padded_sets(SETS, fill=0.0)
    expected = model(values)
    path = os.path.join(tmp_path, "set_transformer.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path)
    np.testing.assert_allclose(reloaded(values), expected, atol=1e-6)


def test_fit_on_ragged_inputs():
    inputs = keras.Input(shape=(None, FEATURES), ragged=True)
    x = SAB(DIM, NUM_HEADS)(inputs)
    x = ISAB(DIM, NUM_HEADS, num_inducing=2)(x)
    x = PMA(DIM, NUM_HEADS, num_seeds=1)(x)
    assert tuple(x.shape) == (None, 1, DIM)
    outputs = keras.layers.Dense(1)(keras.layers.Flatten()(x))
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        ragged_sets(SETS), np.ones((3, 1)), batch_size=3, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("name", SET_LAYERS)
def test_mixed_float16(name):
    try:
        keras.config.set_dtype_policy("mixed_float16")
        layer = make_layer(name)
        values, mask = padded_sets(SETS)
        mask[1] = False
        outputs = layer(values, mask=mask)
        ragged = layer(ragged_sets(SETS))
    finally:
        keras.config.set_dtype_policy("float32")
    assert keras.backend.standardize_dtype(outputs.dtype) == "float16"
    assert np.isfinite(keras.ops.convert_to_numpy(outputs)).all()
    assert all(w.dtype == "float32" for w in layer.weights)
    if isinstance(ragged, tf.RaggedTensor):
        ragged = ragged.flat_values
    assert np.isfinite(keras.ops.convert_to_numpy(ragged)).all()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dim": 0}, "dim=0"),
        ({"dim": 8.0}, "dim=8.0"),
        ({"num_heads": 0}, "num_heads=0"),
        ({"num_heads": 3}, "num_heads=3"),
        ({"layer_norm": "yes"}, "layer_norm='yes'"),
        ({"dropout": 1.0}, "dropout=1.0"),
        ({"layer_norm_epsilon": 0}, "layer_norm_epsilon=0"),
    ],
)
@pytest.mark.parametrize("name", [*SET_LAYERS, "MAB"])
def test_bad_arguments(name, kwargs, message):
    arguments = {"dim": DIM, "num_heads": NUM_HEADS, **kwargs}
    if name == "ISAB":
        arguments["num_inducing"] = 2
    if name == "PMA":
        arguments["num_seeds"] = 2
    layer_class = {"SAB": SAB, "ISAB": ISAB, "PMA": PMA, "MAB": MAB}[name]
    with pytest.raises(ValueError, match=message):
        layer_class(**arguments)


def test_bad_counts_and_shapes():
    with pytest.raises(ValueError, match="num_inducing=0"):
        ISAB(DIM, NUM_HEADS, num_inducing=0)
    with pytest.raises(ValueError, match="num_seeds=-1"):
        PMA(DIM, NUM_HEADS, num_seeds=-1)
    # Keras's InputSpec check, naming the layer.
    with pytest.raises(
        ValueError, match="'sab'.*expected ndim=3, found ndim=2"
    ):
        SAB(DIM, NUM_HEADS, name="sab")(np.zeros((2, FEATURES)))
    with pytest.raises(ValueError, match="set_size, features"):
        MAB(DIM, NUM_HEADS)(np.zeros((2, 3, FEATURES)), np.zeros((2, 3)))

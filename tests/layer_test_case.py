"""One test that every public layer goes through, like Keras's own.

Modelled on `run_layer_test` of keras (`keras/src/testing/test_case.py`)
and keras-hub: `run_layer_test` builds the layer from its arguments and
checks, on dense NumPy inputs (and a boolean mask where the layer takes
one), so that it runs on every Keras backend:

- the config round trip (`get_config` / `from_config`, before and after
  building) and the serialization round trip of `keras.saving`;
- an eager call and a symbolic call (`keras.Input`) with the expected
  output shape, and a functional model that gives the eager outputs;
- the `.keras` round trip of that model, without custom objects;
- one training step that changes every trainable weight;
- a `mixed_float16` layer with the same weights: float32 variables, finite
  outputs close to the float32 ones;
- masking: whatever the padded positions hold, the outputs of the real
  positions (all outputs, when the set axis is reduced) do not change.
"""

import copy

import keras
import numpy as np

# Values written into padded positions by the masking check: far from
# the real values, and in [0, 1] so that LAF sees no clipped input.
PADDING_VALUE = 0.987


def _to_numpy(outputs):
    return keras.tree.map_structure(keras.ops.convert_to_numpy, outputs)


def _symbolic_inputs(arrays):
    # One `keras.Input` per array; its first axis is the batch axis.
    return {
        name: keras.Input(
            shape=array.shape[1:],
            dtype=keras.backend.standardize_dtype(array.dtype),
            name=name,
        )
        for name, array in arrays.items()
    }


def _call(layer, arrays, positional):
    # Calls the layer with the arrays named in `positional` as positional
    # arguments, in that order, and the others as keyword arguments.
    args = [arrays[name] for name in positional]
    kwargs = {k: v for k, v in arrays.items() if k not in positional}
    return layer(*args, **kwargs)


def _padded_garbage(arrays, masks):
    # A copy of the inputs whose padded positions hold PADDING_VALUE.
    changed = dict(arrays)
    for values_name, mask_name in masks.items():
        values = np.array(arrays[values_name], copy=True)
        values[~arrays[mask_name].astype(bool)] = PADDING_VALUE
        changed[values_name] = values
    return changed


def run_layer_test(
    layer_cls,
    init_kwargs,
    inputs,
    expected_output_shape,
    tmp_path,
    positional=None,
    masks=None,
    output_mask=None,
    run_training=True,
    run_mixed_precision=True,
    mixed_precision_tolerance=2e-2,
):
    """Runs the shared checks on one layer; raises AssertionError on a fail.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of its constructor arguments.
        inputs: dict from call-argument name to a NumPy array, e.g.
            `{"inputs": values, "mask": mask}`.
        expected_output_shape: the shape of the eager output.
        tmp_path: a directory for the `.keras` file.
        positional: the names of `inputs` passed positionally, in order.
            Defaults to the first name.
        masks: dict from the name of a values input to the name of its
            boolean mask input, for the masking check. Defaults to none.
        output_mask: name of the mask input whose real positions are
            compared when the output keeps the set axis (e.g. `"mask"` for
            `SAB`); None when the set axis is reduced.
        run_training: whether to run the training step.
        run_mixed_precision: whether to run the `mixed_float16` check.
        mixed_precision_tolerance: the absolute and relative tolerance of
            the float16 outputs against the float32 ones.
    """
    names = list(inputs)
    positional = names[:1] if positional is None else list(positional)
    masks = masks or {}

    # Config round trip, before and after building.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    # A copy: `keras.layers.Wrapper.from_config` pops from its argument.
    assert layer_cls.from_config(copy.deepcopy(config)).get_config() == config
    outputs = _to_numpy(_call(layer, inputs, positional))
    assert np.shape(outputs) == tuple(expected_output_shape)
    assert np.all(np.isfinite(outputs))
    built_config = layer.get_config()
    revived = layer_cls.from_config(copy.deepcopy(built_config))
    assert revived.get_config() == built_config
    serialized = keras.saving.serialize_keras_object(layer)
    deserialized = keras.saving.deserialize_keras_object(serialized)
    assert type(deserialized) is layer_cls
    assert deserialized.get_config() == built_config

    # A symbolic call, and a functional model with the eager weights.
    symbolic = _symbolic_inputs(inputs)
    symbolic_outputs = _call(layer, symbolic, positional)
    assert tuple(symbolic_outputs.shape[1:]) == tuple(expected_output_shape[1:])
    model = keras.Model(symbolic, symbolic_outputs)
    np.testing.assert_allclose(
        _to_numpy(model(inputs)), outputs, rtol=1e-5, atol=1e-6
    )

    # The `.keras` round trip, without custom objects.
    path = tmp_path / f"{layer_cls.__name__}.keras"
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(
        _to_numpy(reloaded(inputs)), outputs, rtol=1e-5, atol=1e-6
    )

    if masks:
        changed = _to_numpy(model(_padded_garbage(inputs, masks)))
        if output_mask is None:
            np.testing.assert_allclose(changed, outputs, rtol=1e-5, atol=1e-6)
        else:
            real = inputs[output_mask].astype(bool)
            np.testing.assert_allclose(
                changed[real], outputs[real], rtol=1e-5, atol=1e-6
            )

    if run_training:
        # One step towards random targets: every trainable weight moves
        # (a constant shift would vanish behind a layer normalisation).
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        before = [
            keras.ops.convert_to_numpy(w) for w in model.trainable_weights
        ]
        targets = np.random.default_rng(0).normal(size=np.shape(outputs))
        loss = model.train_on_batch(inputs, targets.astype("float32"))
        assert np.isfinite(loss)
        unchanged = [
            weight.path
            for weight, old in zip(model.trainable_weights, before, strict=True)
            if np.array_equal(keras.ops.convert_to_numpy(weight), old)
        ]
        assert not unchanged, f"weights not trained: {unchanged}"

    if run_mixed_precision:
        half = layer_cls(**{**init_kwargs, "dtype": "mixed_float16"})
        _call(half, inputs, positional)
        half.set_weights(layer.get_weights())
        assert all(
            keras.backend.standardize_dtype(weight.dtype) == "float32"
            for weight in half.weights
        )
        half_outputs = _call(half, inputs, positional)
        assert keras.backend.standardize_dtype(half_outputs.dtype) in (
            "float16",
            "float32",
        )
        half_outputs = _to_numpy(half_outputs).astype("float32")
        assert np.all(np.isfinite(half_outputs))
        # The float32 outputs of the same (possibly trained) weights.
        np.testing.assert_allclose(
            half_outputs,
            _to_numpy(_call(layer, inputs, positional)),
            rtol=mixed_precision_tolerance,
            atol=mixed_precision_tolerance,
        )

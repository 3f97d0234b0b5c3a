"""Public names: the LAF function and the module of the LAF layer differ."""

import importlib.util

import keras_laf


def test_laf_function_is_not_shadowed_by_a_module():
    # `keras_laf.laf` is the function; the layer's module has its own name,
    # so `import keras_laf.laf` cannot replace one with the other.
    assert callable(keras_laf.laf)
    assert keras_laf.laf.__module__ == "keras_laf.ops"
    layer_module = importlib.import_module("keras_laf.laf_layer")
    assert layer_module.LAF is keras_laf.LAF
    assert importlib.util.find_spec("keras_laf.laf") is None

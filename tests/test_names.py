"""Public names: the LAF function and the package of the LAF layer differ."""

import importlib.util

import keras_laf


def test_laf_function_is_not_shadowed_by_a_module():
    # `keras_laf.laf` is the function; the layer's package has its own name,
    # so `import keras_laf.laf` cannot replace one with the other.
    assert callable(keras_laf.laf)
    assert keras_laf.laf.__module__ == "keras_laf.ops"
    layer_package = importlib.import_module("keras_laf.aggregations.laf")
    assert layer_package.LAF is keras_laf.LAF
    assert importlib.util.find_spec("keras_laf.laf") is None

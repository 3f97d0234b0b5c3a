"""Every docstring example of keras_laf (its subpackages included), of
keras_laf.models and of laf_experiments runs as shown, as
`--doctest-modules` would run them, on every backend (`KERAS_BACKEND`):
the printed outputs, NumPy arrays and numbers, are compared as written.

An example that needs TensorFlow says so below, with the reason, and is
skipped on the other backends."""

import doctest
import importlib
import importlib.util
import pkgutil

import keras
import numpy as np
import pytest

import keras_laf

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Examples that build ragged tensors or `tf.data` pipelines, which only
# TensorFlow has, with the reason shown when they are skipped.
TENSORFLOW_ONLY = {
    "keras_laf.layers.attention.ISAB": "ragged sets (tf.ragged.constant)",
    "keras_laf.datasets.ragged_dataset.ragged_set_dataset": (
        "builds a tf.data pipeline of tf.RaggedTensor batches"
    ),
    "keras_laf.datasets.ragged_dataset.to_padded_batches": (
        "builds a tf.data pipeline of tf.RaggedTensor batches"
    ),
    "keras_laf.aggregations.recurrent.LSTMAggregation": (
        "ragged sets (tf.ragged.constant)"
    ),
    "keras_laf.layers.per_element.PerElement": (
        "ragged sets (tf.ragged.constant)"
    ),
    "keras_laf.datasets.graph_batches.GraphBatches.distribute": (
        "builds a tf.distribute dataset"
    ),
}


# Examples that parse SMILES, which needs RDKit (the `molecules` extra).
NEEDS_RDKIT = ("keras_laf.datasets.molecules.",)
HAS_RDKIT = importlib.util.find_spec("rdkit") is not None


def common_imports():
    """The names the examples take as given, as in Keras's docstrings;
    `tf` on the TensorFlow backend only."""
    imports = {"keras": keras, "keras_laf": keras_laf, "np": np}
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        imports["tf"] = tf
    return imports


def package_modules(package_name):
    package = importlib.import_module(package_name)
    names = [package_name]
    for module in pkgutil.walk_packages(package.__path__, package_name + "."):
        names.append(module.name)
    return names


def collect_examples():
    finder = doctest.DocTestFinder()
    examples = []
    # `keras_laf.models` is installed from the top-level `models/` folder, so
    # walking `keras_laf` alone does not find it.
    module_names = [
        *package_modules("keras_laf"),
        *package_modules("keras_laf.models"),
        *package_modules("laf_experiments"),
    ]
    for module_name in sorted(set(module_names)):
        module = importlib.import_module(module_name)
        for test in finder.find(module, module_name):
            # Objects imported from elsewhere are tested in their own module.
            if test.examples and test.name.startswith(module_name):
                examples.append(test)
    return sorted(examples, key=lambda test: test.name)


EXAMPLES = collect_examples()

# Examples that fail today in files other changes own: the backends they
# fail on, and why. Strict: once an example is fixed, its entry must go.
KNOWN_FAILURES = {}


def example_param(test):
    marks = []
    backends, reason = KNOWN_FAILURES.get(test.name, ((), None))
    if keras.config.backend() in backends:
        marks.append(pytest.mark.xfail(reason=reason, strict=True))
    if test.name in TENSORFLOW_ONLY:
        marks.append(pytest.mark.tensorflow_only(TENSORFLOW_ONLY[test.name]))
    if test.name.startswith(NEEDS_RDKIT) and not HAS_RDKIT:
        marks.append(pytest.mark.skip(reason="parses SMILES: needs RDKit"))
    return pytest.param(test, id=test.name, marks=marks)


@pytest.mark.multi_backend
def test_examples_are_found_in_layers_and_models():
    names = {test.name for test in EXAMPLES}
    assert "keras_laf.aggregations.laf.layer.LAF" in names
    assert "keras_laf.models.deep_sets.deep_sets" in names
    assert len(EXAMPLES) >= 40
    assert set(TENSORFLOW_ONLY) <= names


@pytest.mark.multi_backend
def test_examples_that_use_tf_are_marked_tensorflow_only():
    using_tf = {
        test.name
        for test in EXAMPLES
        if any("tf." in example.source for example in test.examples)
    }
    assert using_tf <= set(TENSORFLOW_ONLY)


@pytest.mark.slow
@pytest.mark.multi_backend
@pytest.mark.parametrize("test", [example_param(test) for test in EXAMPLES])
def test_docstring_example(test):
    keras.utils.set_random_seed(0)
    test.globs = {**common_imports(), **test.globs}
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    results = runner.run(test, out=report.append)
    assert results.failed == 0, "".join(report)

"""Every docstring example of keras_laf (its subpackages included), of
keras_laf.models and of laf_experiments runs as shown, as
`--doctest-modules` would run them."""

import doctest
import importlib
import pkgutil

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_laf

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# As in Keras's docstrings, the examples take these imports as given.
COMMON_IMPORTS = {"keras": keras, "keras_laf": keras_laf, "np": np, "tf": tf}


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

# Examples that fail today in files other changes own, and why. Strict: once
# an example is fixed, its entry must go.
KNOWN_FAILURES = {}


def example_param(test):
    marks = []
    if test.name in KNOWN_FAILURES:
        marks.append(
            pytest.mark.xfail(reason=KNOWN_FAILURES[test.name], strict=True)
        )
    return pytest.param(test, id=test.name, marks=marks)


def test_examples_are_found_in_layers_and_models():
    names = {test.name for test in EXAMPLES}
    assert "keras_laf.laf_layer.LAF" in names
    assert "keras_laf.models.deep_sets.deep_sets" in names
    assert len(EXAMPLES) >= 40


@pytest.mark.slow
@pytest.mark.parametrize("test", [example_param(test) for test in EXAMPLES])
def test_docstring_example(test):
    keras.utils.set_random_seed(0)
    test.globs = {**COMMON_IMPORTS, **test.globs}
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    report = []
    results = runner.run(test, out=report.append)
    assert results.failed == 0, "".join(report)

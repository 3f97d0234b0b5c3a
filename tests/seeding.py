"""The same starting weights in every run: an autouse fixture that seeds
Python, NumPy and Keras (hence TensorFlow) before each test.

A test module takes it with `from seeding import seeded  # noqa: F401`.
"""

import keras
import pytest


@pytest.fixture(autouse=True)
def seeded():
    """Seeds Python, NumPy and Keras with 0 before the test."""
    keras.utils.set_random_seed(0)

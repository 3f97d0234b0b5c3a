import os

# Quiet TensorFlow's start-up logging in test output.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402

BACKEND_MARKERS = {
    "multi_backend": "runs on every Keras backend (KERAS_BACKEND); the "
    "other tests are written against TensorFlow",
    "tensorflow_only(reason)": "a multi_backend test's case that needs "
    "TensorFlow (ragged tensors, tf.function), skipped elsewhere",
}


def pytest_configure(config):
    for marker, description in BACKEND_MARKERS.items():
        config.addinivalue_line("markers", f"{marker}: {description}")


def pytest_collection_modifyitems(config, items):
    backend = keras.config.backend()
    if backend == "tensorflow":
        return
    for item in items:
        tensorflow_only = item.get_closest_marker("tensorflow_only")
        if item.get_closest_marker("multi_backend") is None:
            reason = (
                "written against TensorFlow (tf.RaggedTensor, tf.data, "
                f"tf.GradientTape); the {backend} run covers the tests "
                "marked multi_backend"
            )
        elif tensorflow_only is not None:
            reason = tensorflow_only.args[0]
        else:
            continue
        item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def seeded():
    """The same starting weights in every run: seeds Python, NumPy and
    Keras with 0 before each test."""
    keras.utils.set_random_seed(0)


@pytest.fixture
def chunk_budget():
    """`keras_laf.config.set_chunk_budget`, reset to the defaults after the
    test."""
    import keras_laf

    yield keras_laf.config.set_chunk_budget
    keras_laf.config.set_chunk_budget()


@pytest.fixture
def sets():
    """Three sets of 3, 1 and 5 elements with 2 features in (0.05, 0.95),
    the multi-backend tests' inputs (`backend_helpers.padded` and `flat`
    lay them out)."""
    import numpy as np

    rng = np.random.default_rng(0)
    return [rng.uniform(0.05, 0.95, (n, 2)) for n in (3, 1, 5)]

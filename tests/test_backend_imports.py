"""Importing keras_laf on JAX and PyTorch imports no TensorFlow."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.multi_backend


@pytest.mark.tensorflow_only("runs each backend in its own interpreter")
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_import_without_tensorflow_on_other_backends(backend):
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, keras_laf; keras_laf.LAF(2);"
            "print('tensorflow' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KERAS_BACKEND": backend},
    )
    if f"No module named '{backend}'" in completed.stderr:
        pytest.skip(f"{backend} is not installed")
    assert completed.stdout.strip() == "False", completed.stderr[-3000:]

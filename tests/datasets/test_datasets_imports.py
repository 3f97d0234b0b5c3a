"""`keras_laf.datasets` on JAX and PyTorch leaves TensorFlow unimported:
its NumPy helpers run without it, and the `tf.data` helpers import it only
when called."""

import os
import subprocess
import sys

import pytest

SCRIPT = """
import sys
import numpy as np
import keras_laf
from keras_laf.datasets import disjoint_union, pad_sets
padded, mask = pad_sets([np.array([1, 2, 3]), np.array([4])])
assert padded.tolist() == [[1, 2, 3], [4, 0, 0]], padded
assert mask.tolist() == [[1, 1, 1], [1, 0, 0]], mask
inputs = disjoint_union([np.zeros((2, 1)), np.zeros((1, 1))], [[[0, 1]], []])
assert inputs["edge_source"].tolist() == [0], inputs
print(sorted(name for name in sys.modules if name.startswith("tensorflow")))
"""


@pytest.mark.slow
@pytest.mark.multi_backend
@pytest.mark.tensorflow_only("runs each backend in its own interpreter")
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_datasets_do_not_import_tensorflow(backend):
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "KERAS_BACKEND": backend},
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().splitlines()[-1] == "[]"

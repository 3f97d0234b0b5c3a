"""What the tests that run on every Keras backend share.

Inputs are NumPy arrays, padded with a mask or flat with segment ids, and
results are checked against NumPy, so each backend is checked against the
same reference. Ragged tensors exist only in TensorFlow; their cases are
marked `tensorflow_only`. The sets of the `sets` fixture are in
`conftest.py`. What must be set before a backend starts (XLA's devices,
TensorFlow's logical devices) runs in a fresh interpreter
(`run_in_fresh_interpreter`).
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
from keras import ops

BACKEND = keras.config.backend()
ON_TENSORFLOW = BACKEND == "tensorflow"
NEEDS_TENSORFLOW = "ragged tensors and tf.function need TensorFlow"


def numpy(tensor):
    return ops.convert_to_numpy(tensor)


def padded(sets, set_size):
    """Padded values `(batch, set_size, features)` and a boolean mask."""
    values = np.zeros((len(sets), set_size, sets[0].shape[1]), "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for i, elements in enumerate(sets):
        values[i, : len(elements)] = elements
        mask[i, : len(elements)] = True
    return values, mask


def flat(sets):
    """Flat values `(num_elements, features)` and their segment ids."""
    ids = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    return np.concatenate(sets).astype("float32"), ids.astype("int32")


REFERENCES = {
    "sum": np.sum,
    "mean": np.mean,
    "count": len,
    "max": np.max,
    "min": np.min,
}


def run_in_fresh_interpreter(script, backend, env=None, timeout=300):
    """Runs `script` with `python -c` on `backend` and returns its last
    line of output, read as JSON.

    For what must be set before Keras, JAX or TensorFlow starts (the
    backend, `XLA_FLAGS`, TensorFlow's logical devices), which a test's
    own interpreter has already started. A failed script fails the test
    with the end of its stderr.
    """
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "KERAS_BACKEND": backend, **(env or {})},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])

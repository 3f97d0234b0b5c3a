"""What the tests that run on every Keras backend share.

Inputs are NumPy arrays, padded with a mask or flat with segment ids, and
results are checked against NumPy, so each backend is checked against the
same reference. Ragged tensors exist only in TensorFlow; their cases are
marked `tensorflow_only`. The sets of the `sets` fixture are in
`conftest.py`.
"""

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

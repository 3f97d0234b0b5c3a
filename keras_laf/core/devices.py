"""Which device the running Keras backend computes on by default.

The defaults of `keras_laf.config` depend on it: they were measured on a
CPU and on a GPU.
"""

import keras

from keras_laf.core import backend


def platform():
    """Where the backend computes by default: `"gpu"` or `"cpu"`.

    A backend that places tensors on a GPU whenever it has one (TensorFlow,
    JAX) computes there; any other device, and PyTorch, whose tensors
    stay on the CPU unless moved, count as a CPU.

    Returns:
        `"gpu"` or `"cpu"`.

    Example:

    >>> keras_laf.core.devices.platform() in ("cpu", "gpu")
    True
    """
    if not backend.lists_devices():
        return "cpu"
    devices = keras.distribution.list_devices()
    return (
        "gpu" if any(device.startswith("gpu") for device in devices) else "cpu"
    )

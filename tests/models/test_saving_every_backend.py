"""Saving and loading models on every Keras backend, a model saved on
one backend predicting the same on the others, and JAX data
parallelism.
"""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from backend_helpers import numpy
from backend_helpers import padded

import keras_laf

pytestmark = pytest.mark.multi_backend


def test_save_and_reload(tmp_path, sets):
    values, mask = padded(sets, 6)
    model = saved_model_for_backends(os.path.join(tmp_path, "laf.keras"))
    reloaded = keras.models.load_model(os.path.join(tmp_path, "laf.keras"))
    np.testing.assert_array_equal(
        numpy(reloaded([values, mask])), numpy(model([values, mask]))
    )


def saved_model_for_backends(path):
    """Builds, fits a step and saves a LAF model at `path`."""
    keras.utils.set_random_seed(3)
    inputs = keras.Input((6, 2), name="sets")
    mask = keras.Input((6,), name="mask")
    hidden = keras.layers.Dense(4, activation="sigmoid")(inputs)
    pooled = keras_laf.LAF(units=3, name="laf")(hidden, mask=mask)
    model = keras.Model([inputs, mask], keras.layers.Dense(1)(pooled))
    model.compile(optimizer="adam", loss="mse")
    model.fit(
        [np.ones((2, 6, 2), "float32"), np.ones((2, 6), "float32")],
        np.ones((2, 1)),
        verbose=0,
    )
    model.save(path)
    return model


CROSS_BACKEND_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import keras
    import keras_laf
    sys.path[:0] = [{tests!r}, {models!r}]
    from backend_helpers import padded
    from test_saving_every_backend import saved_model_for_backends

    rng = np.random.default_rng(0)
    sets = [rng.uniform(0.05, 0.95, (n, 2)) for n in (3, 1, 5)]
    values, mask = padded(sets, 6)
    if sys.argv[1] == "save":
        model = saved_model_for_backends(sys.argv[2])
    else:
        model = keras.models.load_model(sys.argv[2])
    predictions = keras.ops.convert_to_numpy(model([values, mask]))
    print(json.dumps(predictions.tolist()))
    """
)


def run_on_backend(backend, *args, env=None):
    models = os.path.dirname(__file__)
    script = CROSS_BACKEND_SCRIPT.format(
        tests=os.path.dirname(models), models=models
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KERAS_BACKEND": backend, **(env or {})},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return np.array(json.loads(completed.stdout.strip().splitlines()[-1]))


ALL_BACKENDS = ("tensorflow", "jax", "torch")


@pytest.mark.slow
@pytest.mark.tensorflow_only("runs each backend in its own interpreter")
@pytest.mark.parametrize("saving", ALL_BACKENDS)
def test_saved_model_predicts_the_same_on_the_other_backends(tmp_path, saving):
    for module in ALL_BACKENDS:
        pytest.importorskip(module)
    path = os.path.join(tmp_path, "laf.keras")
    saved = run_on_backend(saving, "save", path)
    for loading in ALL_BACKENDS:
        if loading != saving:
            loaded = run_on_backend(loading, "load", path)
            # float32 round-off differs between the backends.
            np.testing.assert_allclose(
                loaded, saved, rtol=1e-4, atol=1e-5, err_msg=loading
            )


DATA_PARALLEL_SCRIPT = textwrap.dedent(
    """
    import keras
    import numpy as np
    from keras_laf import models

    devices = keras.distribution.list_devices("cpu")
    assert len(devices) == 2, devices
    keras.distribution.set_distribution(
        keras.distribution.DataParallel(devices=devices)
    )
    rng = np.random.default_rng(0)
    digits = rng.integers(0, 10, (64, 5)).astype("int32")
    mask = (rng.uniform(size=(64, 5)) < 0.8).astype("float32")
    sums = (digits * mask).sum(1, keepdims=True)
    model = models.deep_sets(
        vocabulary_size=10,
        phi_units=(),
        aggregation_kwargs={"units": 3},
        ragged=False,
    )
    model.compile(optimizer="adam", loss="mae")
    history = model.fit([digits, mask], sums, batch_size=16, epochs=2,
                        verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    sharding = model.weights[0].value.sharding
    print("data parallel ok on", len(sharding.device_set), "devices")
    """
)


@pytest.mark.slow
@pytest.mark.tensorflow_only("runs JAX in its own interpreter")
def test_jax_data_parallel_on_two_virtual_cpus():
    pytest.importorskip("jax")
    completed = subprocess.run(
        [sys.executable, "-c", DATA_PARALLEL_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            # Read when JAX starts, hence the subprocess.
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        },
    )
    assert "data parallel ok on 2 devices" in completed.stdout, (
        completed.stderr[-3000:]
    )

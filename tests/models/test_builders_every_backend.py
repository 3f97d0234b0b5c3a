"""The model builders on every Keras backend: their default inputs, one
fit, and a user's script unchanged across backends.
"""

import json
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from backend_helpers import ON_TENSORFLOW

import keras_laf
from keras_laf import models

pytestmark = pytest.mark.multi_backend


def integer_sets(num_sets, seed=0):
    """Padded digit sets, their mask and their sums, as the paper's task."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, num_sets)
    digits = np.zeros((num_sets, 5), "int32")
    mask = np.zeros((num_sets, 5), "float32")
    for i, size in enumerate(sizes):
        digits[i, :size] = rng.integers(0, 10, size)
        mask[i, :size] = 1
    return digits, mask, (digits * mask).sum(1, keepdims=True)


@pytest.mark.parametrize(
    "builder",
    [
        lambda: models.deep_sets(
            vocabulary_size=10, aggregation_kwargs={"units": 3}, ragged=False
        ),
        lambda: models.set_transformer(
            input_dim=1, hidden_units=8, num_heads=2, ragged=False
        ),
        lambda: models.point_cloud_classifier(
            num_classes=3,
            hidden_units=8,
            aggregation="laf",
            aggregation_kwargs={"units": 4},
            input_dim=1,
            ragged=False,
        ),
    ],
    ids=["deep_sets", "set_transformer", "point_cloud"],
)
def test_builders_fit_on_padded_sets(builder):
    digits, mask, sums = integer_sets(32)
    model = builder()
    inputs = digits if model.inputs[0].dtype == "int32" else digits[..., None]
    inputs = inputs.astype(model.inputs[0].dtype)
    targets = sums if model.outputs[0].shape[-1] == 1 else sums % 3
    loss = (
        "mae"
        if model.outputs[0].shape[-1] == 1
        # The classifier gives logits.
        else keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    model.compile(optimizer="adam", loss=loss)
    history = model.fit(
        [inputs, mask], targets, epochs=2, batch_size=16, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()


# The builders' default inputs, (name, shape, dtype), the same on every
# backend: padded sets and a float32 mask.
DEFAULT_INPUTS = {
    "deep_sets_integers": [
        ("sets", (None, None), "int32"),
        ("mask", (None, None), "float32"),
    ],
    **{
        name: [
            ("sets", (None, None, 1), "float32"),
            ("mask", (None, None), "float32"),
        ]
        for name in ("deep_sets", "set_transformer", "point_cloud")
    },
}
DEFAULT_BUILDERS = {
    "deep_sets_integers": lambda: models.deep_sets(vocabulary_size=10),
    "deep_sets": lambda: models.deep_sets(input_dim=1),
    "set_transformer": lambda: models.set_transformer(input_dim=1),
    "point_cloud": lambda: models.point_cloud_classifier(
        num_classes=3, input_dim=1
    ),
}


def input_specs(model):
    return [
        (tensor.name, tuple(tensor.shape), tensor.dtype)
        for tensor in model.inputs
    ]


@pytest.mark.parametrize("name", sorted(DEFAULT_BUILDERS))
def test_builders_defaults_take_the_same_inputs_and_fit(name):
    # The same on TensorFlow, JAX and PyTorch: listed sets of different
    # sizes, padded with their mask by `pad_sets`, and a plain `fit`.
    from keras_laf.datasets import pad_sets

    model = DEFAULT_BUILDERS[name]()
    assert input_specs(model) == DEFAULT_INPUTS[name]
    rng = np.random.default_rng(0)
    sets = [rng.integers(0, 10, size) for size in rng.integers(1, 6, 32)]
    if name != "deep_sets_integers":
        sets = [elements[:, None] / 10 for elements in sets]
    padded, mask = pad_sets(sets)
    assert (padded.dtype, mask.dtype) == (
        DEFAULT_INPUTS[name][0][2],
        "float32",
    )
    sums = np.array([elements.sum() for elements in sets], "float32")
    classes = model.outputs[0].shape[-1]
    model.compile(
        optimizer="adam",
        # The classifier gives logits.
        loss="mae"
        if classes == 1
        else keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    targets = sums if classes == 1 else np.round(sums) % classes
    history = model.fit(
        [padded, mask], targets, epochs=2, batch_size=16, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()


# A user's script, unchanged on every backend.
FIT_SCRIPT = textwrap.dedent(
    """
    import json

    import numpy as np

    from keras_laf import models
    from keras_laf.datasets import pad_sets

    rng = np.random.default_rng(0)
    sets = [rng.integers(0, 10, size) for size in rng.integers(1, 6, 32)]
    sums = np.array([elements.sum() for elements in sets], "float32")
    padded, mask = pad_sets(sets)
    model = models.deep_sets(
        vocabulary_size=10, aggregation_kwargs={"units": 3}
    )
    model.compile(optimizer="adam", loss="mae")
    history = model.fit([padded, mask], sums, epochs=1, batch_size=16)
    assert np.isfinite(history.history["loss"]).all()
    inputs = [(x.name, list(x.shape), x.dtype) for x in model.inputs]
    print("inputs:", json.dumps(inputs))
    """
)


@pytest.mark.slow
@pytest.mark.tensorflow_only("runs each backend in its own interpreter")
def test_one_fit_script_runs_unchanged_on_every_backend():
    inputs = {}
    for backend in ("tensorflow", "jax", "torch"):
        completed = subprocess.run(
            [sys.executable, "-c", FIT_SCRIPT],
            capture_output=True,
            text=True,
            env={**os.environ, "KERAS_BACKEND": backend},
            timeout=600,
        )
        assert completed.returncode == 0, (backend, completed.stderr[-3000:])
        [line] = [
            line
            for line in completed.stdout.splitlines()
            if line.startswith("inputs: ")
        ]
        inputs[backend] = json.loads(line.removeprefix("inputs: "))
    assert inputs["jax"] == inputs["tensorflow"] == inputs["torch"]
    assert inputs["tensorflow"] == [
        ["sets", [None, None], "int32"],
        ["mask", [None, None], "float32"],
    ]


@pytest.mark.skipif(ON_TENSORFLOW, reason="checks the non-TensorFlow error")
def test_ragged_builder_on_other_backends_says_what_to_pass():
    with pytest.raises(
        ValueError, match=r"ragged=False.*Received: ragged=True"
    ):
        models.deep_sets(vocabulary_size=10, ragged=True)


def graph_batches():
    """Endless disjoint-union batches of 2 and of 3 graphs for `fit`,
    padded to one bucket (`disjoint_union(..., pad=True)`): a compiled
    model compiles its step once."""
    rng = np.random.default_rng(2)
    edges = {
        1: np.zeros((0, 2), "int32"),
        3: np.array([[0, 1], [1, 0], [1, 2]]),
        4: np.array([[0, 3], [3, 0]]),
    }
    batches = [
        keras_laf.datasets.disjoint_union(
            [rng.uniform(size=(n, 2)) for n in sizes],
            [edges[n] for n in sizes],
            [rng.uniform(size=(n, 3)) for n in sizes],
            rng.uniform(size=(len(sizes), 3)),
            pad=True,
        )
        for sizes in [(3, 4), (4, 1, 3)]
    ]
    while True:
        yield from batches


def test_graph_network_defaults_fit():
    # The numbers of real nodes, edges and graphs change from batch to
    # batch, their padded numbers do not; JAX traces the model with the
    # number of graphs as a shape, the length of `nodes_per_graph`.
    model = models.graph_network()
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(graph_batches(), steps_per_epoch=4, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    inputs, targets, _ = next(graph_batches())
    outputs = model.predict_on_batch(inputs)
    assert outputs["graph_outputs"].shape == targets["graph_outputs"].shape
    assert outputs["node_outputs"].shape == targets["node_outputs"].shape

import pathlib

import keras
import numpy as np
import pytest

# Registers the layers for loading, by their registered names
# ("keras_laf>LAF"), not by the module paths saved in the file.
import keras_laf  # noqa: F401

DATA = pathlib.Path(__file__).parent.parent / "data"
INPUTS = [
    "sets",
    "mask",
    "nodes",
    "source",
    "target",
    "graph_ids",
    "nodes_per_graph",
]


@pytest.mark.multi_backend
def test_model_saved_before_subpackages_loads_and_predicts_as_it_did():
    # Saved on TensorFlow by keras-laf at c646c6a, when every layer lived
    # directly in keras_laf/: LAF, MultiAggregation (LAF and max),
    # FixedAggregation and PMA over padded sets with a mask, and GINConv
    # with a GraphReadout (LAF and max) over two graphs.
    saved = np.load(DATA / "model_saved_before_subpackages.npz")
    model = keras.models.load_model(
        DATA / "model_saved_before_subpackages.keras"
    )
    set_predictions, graph_predictions = model([saved[name] for name in INPUTS])
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(set_predictions),
        saved["set_predictions"],
        rtol=1e-5,
        atol=1e-6,
    )
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(graph_predictions),
        saved["graph_predictions"],
        rtol=1e-5,
        atol=1e-6,
    )
    assert {
        "LAF",
        "MultiAggregation",
        "FixedAggregation",
        "PMA",
        "GINConv",
        "GraphReadout",
    } <= {layer.__class__.__name__ for layer in model.layers}

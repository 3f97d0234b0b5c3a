"""Every public layer through the shared `run_layer_test`.

Each aggregation the package registers has a case made from its registry
entry; the other layers, and aggregations whose case needs more than their
registered defaults, have one written here (`SPECIAL_CASES`)."""

import keras
import numpy as np
import pytest
from layer_test_case import run_layer_test

import keras_laf
from keras_laf import aggregations

BATCH, SET_SIZE, FEATURES = 2, 3, 2


def _sets(seed=0):
    # Two sets of 3 slots with 2 features in (0, 1); the second set has
    # one padded slot.
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.1, 0.9, (BATCH, SET_SIZE, FEATURES))
    mask = np.array([[True, True, True], [True, True, False]])
    return values.astype("float32"), mask


def _set_case(layer_cls, init_kwargs, output_shape, keeps_set_axis=False):
    values, mask = _sets()
    return dict(
        layer_cls=layer_cls,
        init_kwargs=init_kwargs,
        inputs={"inputs": values, "mask": mask},
        expected_output_shape=output_shape,
        masks={"inputs": "mask"},
        output_mask="mask" if keeps_set_axis else None,
    )


def _mab_case():
    values, mask = _sets()
    query, query_mask = _sets(seed=1)
    return dict(
        layer_cls=keras_laf.MAB,
        init_kwargs={"dim": 4, "num_heads": 2},
        inputs={
            "query": query,
            "value": values,
            "query_mask": query_mask,
            "value_mask": mask,
        },
        positional=["query", "value"],
        expected_output_shape=(BATCH, SET_SIZE, 4),
        masks={"query": "query_mask", "value": "value_mask"},
        output_mask="query_mask",
    )


def _graph():
    # Two graphs of 3 and 2 nodes; edges in both directions.
    rng = np.random.default_rng(2)
    node_features = rng.uniform(0.1, 0.9, (5, FEATURES)).astype("float32")
    edges = np.array([[0, 1], [1, 0], [1, 2], [2, 1], [3, 4], [4, 3]])
    return {
        "node_features": node_features,
        "edge_source": edges[:, 0].astype("int32"),
        "edge_target": edges[:, 1].astype("int32"),
    }


def _graph_case(layer_cls, init_kwargs, output_shape):
    return dict(
        layer_cls=layer_cls,
        init_kwargs=init_kwargs,
        inputs=_graph(),
        positional=["node_features", "edge_source", "edge_target"],
        expected_output_shape=output_shape,
    )


SPECIAL_CASES = {
    # No weights to train (Keras warns on fitting a model without any).
    "FixedAggregation": {
        **_set_case(
            keras_laf.FixedAggregation,
            {"aggregators": ["sum", "max", "std"]},
            (BATCH, FEATURES * 3),
        ),
        "run_training": False,
    },
    "SoftmaxAggregation": _set_case(
        keras_laf.SoftmaxAggregation,
        {"t": 2.0, "learn": True, "channels": FEATURES},
        (BATCH, FEATURES),
    ),
    "PowerMeanAggregation": _set_case(
        keras_laf.PowerMeanAggregation,
        {"p": 3.0, "learn": True},
        (BATCH, FEATURES),
    ),
    # Parameters of their own for each feature.
    "GenAggAggregation": _set_case(
        keras_laf.GenAggAggregation,
        {"units": 3, "channels": FEATURES},
        (BATCH, FEATURES),
    ),
    # No weights to train.
    "QuantileAggregation": {
        **_set_case(
            keras_laf.QuantileAggregation,
            {"q": [0.25, 0.5], "interpolation": "midpoint"},
            (BATCH, FEATURES * 2),
        ),
        "run_training": False,
    },
    "AttentionalAggregation": _set_case(
        keras_laf.AttentionalAggregation,
        {
            # No bias: the softmax over a set ignores a shift of the gate,
            # so a bias's gradient is 0 up to rounding, and whether one
            # step moves it is down to the rounding.
            "gate": keras.layers.Dense(1, use_bias=False),
            "transform": keras.layers.Dense(3),
        },
        (BATCH, 3),
    ),
    "DegreeScalerAggregation": _set_case(
        keras_laf.DegreeScalerAggregation,
        {
            "aggregation": "mean",
            "scalers": ["identity", "amplification"],
            "degree_histogram": [1, 2, 1],
            "train_average_log_degree": True,
        },
        (BATCH, 2 * FEATURES),
    ),
    "MultiAggregation": _set_case(
        keras_laf.MultiAggregation,
        {"aggregations": ["laf", "max", "softmax"]},
        (BATCH, FEATURES * (9 + 1 + 1)),
    ),
    "PerElement": _set_case(
        keras_laf.PerElement,
        {"layer": keras.layers.Dense(4)},
        (BATCH, SET_SIZE, 4),
        keeps_set_axis=True,
    ),
    "PermutationEquivariant": _set_case(
        keras_laf.PermutationEquivariant,
        {"units": 4},
        (BATCH, SET_SIZE, 4),
        keeps_set_axis=True,
    ),
    "MAB": _mab_case(),
    "SAB": _set_case(
        keras_laf.SAB,
        {"dim": 4, "num_heads": 2},
        (BATCH, SET_SIZE, 4),
        keeps_set_axis=True,
    ),
    "ISAB": _set_case(
        keras_laf.ISAB,
        {"dim": 4, "num_heads": 2, "num_inducing": 2},
        (BATCH, SET_SIZE, 4),
        keeps_set_axis=True,
    ),
    "PMA": _set_case(
        keras_laf.PMA,
        {"dim": 4, "num_heads": 2, "num_seeds": 2},
        (BATCH, 2, 4),
    ),
    "AggregationConv": _graph_case(
        keras_laf.AggregationConv,
        {"units": 4, "aggregation": "laf", "aggregation_kwargs": {"units": 2}},
        (5, 4),
    ),
    "MessagePassing": _graph_case(
        keras_laf.MessagePassing,
        {"units": 4, "aggregation": "laf", "laf_units": 2},
        (5, 4),
    ),
    "GINConv": _graph_case(
        keras_laf.GINConv, {"units": 4, "hidden_units": 3}, (5, 4)
    ),
    "GINEConv": dict(
        layer_cls=keras_laf.GINEConv,
        init_kwargs={"units": 4, "hidden_units": 3},
        inputs={
            **_graph(),
            # 3 features per directed edge.
            "edge_features": np.random.default_rng(3)
            .uniform(0.1, 0.9, (6, 3))
            .astype("float32"),
        },
        positional=[
            "node_features",
            "edge_source",
            "edge_target",
            "edge_features",
        ],
        expected_output_shape=(5, 4),
    ),
    "GCNConv": _graph_case(
        keras_laf.GCNConv, {"units": 4, "activation": "relu"}, (5, 4)
    ),
    "GATConv": _graph_case(
        keras_laf.GATConv, {"units": 3, "num_heads": 2}, (5, 6)
    ),
    "GraphReadout": dict(
        layer_cls=keras_laf.GraphReadout,
        init_kwargs={"aggregation": "laf", "aggregation_kwargs": {"units": 2}},
        inputs={
            "node_features": _graph()["node_features"],
            "node_graph_ids": np.array([0, 0, 0, 1, 1], "int32"),
        },
        positional=["node_features", "node_graph_ids"],
        expected_output_shape=(2, FEATURES * 2),
    ),
}


def _registered_cases():
    # One case for each aggregation class the package registers, made as
    # its first name makes it: the registered defaults, and the width that
    # `output_width` gives for the name.
    values, mask = _sets()
    cases = {}
    for name in aggregations.NAMES:
        layer_cls, defaults = aggregations.registered(name)
        if layer_cls.__name__ in cases:
            continue
        layer = layer_cls(**defaults)
        layer(values, mask=mask)
        width = aggregations.output_width(name, FEATURES)
        cases[layer_cls.__name__] = {
            **_set_case(layer_cls, defaults, (BATCH, width)),
            # Keras warns on fitting a model without weights to train.
            "run_training": bool(layer.trainable_weights),
        }
    return cases


CASES = {**_registered_cases(), **SPECIAL_CASES}


def test_every_public_layer_has_a_case():
    public_layers = {
        name
        for name in keras_laf.__all__
        if isinstance(getattr(keras_laf, name), type)
        and issubclass(getattr(keras_laf, name), keras.layers.Layer)
        # The abstract bases of the aggregations.
        and name not in ("SetAggregation", "SetPooling")
    }
    assert public_layers == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_layer(name, tmp_path):
    keras.utils.set_random_seed(0)
    run_layer_test(tmp_path=tmp_path, **CASES[name])

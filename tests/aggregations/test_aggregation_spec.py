"""The aggregation spec, `(identifier, aggregation_kwargs)`, from a builder
to the layer: one resolver, few frames, the same layer on every path."""

import ast
import inspect
import warnings

import keras
import pytest

import keras_laf
from keras_laf import aggregations
from keras_laf.models import graph_network


@aggregations.register("frame_counter")
class FrameCounter(keras_laf.SetAggregation):
    """A sum that records the frames between a builder and its __init__."""

    num_aggregates = 1
    frames = None

    def __init__(self, marker=None, **kwargs):
        # Innermost first: this __init__, then its callers.
        FrameCounter.frames = [frame.function for frame in inspect.stack(0)]
        super().__init__(**kwargs)
        self.marker = marker

    def aggregate(self, values, sets):
        return keras.ops.expand_dims(sets.sum(values), -1)

    def get_config(self):
        return {**super().get_config(), "marker": self.marker}


def frames_from(function_name):
    # The frames from `function_name` (its outermost frame, a deprecation
    # wrapper's included) down to the aggregation's __init__, both counted.
    frames = FrameCounter.frames
    return frames[: frames.index(function_name) + 1]


@pytest.mark.parametrize(
    "scalers", [("identity",), ("identity", "amplification")]
)
def test_aggregation_kwargs_reach_the_layer_in_at_most_8_frames(scalers):
    graph_network(
        aggregation="frame_counter",
        aggregation_kwargs={"marker": 7},
        scalers=scalers,
        average_log_degree=1.0,
        readout_aggregation="sum",
        num_layers=1,
    )
    frames = frames_from("graph_network")
    assert len(frames) <= 8, frames
    assert frames[0] == "__init__"
    assert frames.count("resolve") == 1


def test_every_holder_resolves_through_one_function():
    for build in (
        lambda: aggregations.get("frame_counter"),
        lambda: aggregations.MultiAggregation(["frame_counter", "max"]),
        lambda: aggregations.DegreeScalerAggregation(
            "frame_counter", "identity"
        ),
        lambda: keras_laf.GraphReadout("frame_counter"),
        lambda: keras_laf.AggregationConv(2, aggregation="frame_counter"),
        lambda: keras_laf.models.deep_sets(
            input_dim=2, aggregation="frame_counter"
        ),
    ):
        build()
        assert FrameCounter.frames[1] == "resolve"


def test_a_list_names_its_members_alike_on_every_path():
    by_get = aggregations.get(["frame_counter", "max"])
    by_class = aggregations.MultiAggregation(["frame_counter", "max"])
    assert [m.name for m in by_get.members] == [
        m.name for m in by_class.members
    ]


def test_holders_save_the_spec_and_load_the_same_layer():
    layer = keras_laf.GraphReadout(
        "frame_counter", aggregation_kwargs={"marker": 3}
    )
    config = layer.get_config()
    assert config["aggregation_kwargs"] == {"marker": 3}
    again = keras_laf.GraphReadout.from_config(config)
    assert again.aggregation_layer().marker == 3
    inner = keras_laf.LAF(4)
    config = keras_laf.DegreeScalerAggregation(inner, "identity").get_config()
    assert isinstance(config["aggregation"], dict)
    again = keras_laf.DegreeScalerAggregation.from_config(config)
    assert again.aggregation_layer().units == 4


def test_registry_knows_no_argument_names():
    # The strings of its code, docstrings and messages aside.
    tree = ast.parse(inspect.getsource(aggregations.registry))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    strings = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }
    assert not strings & {"units", "preset", "dim", "aggregators", "laf"}


def test_new_classes_take_no_deprecated_arguments():
    for cls in (keras_laf.GINConv, keras_laf.GCNConv, keras_laf.GATConv):
        with pytest.raises((TypeError, ValueError)):
            cls(2, laf_units=4)


@pytest.mark.parametrize(
    "build, expected",
    [
        (lambda: graph_network(laf_units=5, num_layers=1), 5),
        (lambda: keras_laf.GraphReadout("laf", laf_units=3), 3),
        (
            lambda: keras_laf.models.deep_sets(
                vocabulary_size=10, phi_units=(), units=4
            ),
            4,
        ),
        (
            lambda: keras_laf.models.point_cloud_classifier(
                pooling="laf", units=6, width=8
            ),
            6,
        ),
        (
            lambda: keras_laf.models.set_transformer(
                3, head="laf", units=5, dim=8
            ),
            5,
        ),
    ],
)
def test_0_1_0_arguments_warn_and_still_work(build, expected):
    with pytest.warns(DeprecationWarning, match="removed in keras-laf 0.3.0"):
        built = build()
    units = [
        layer.units
        for layer in _layers(built)
        if isinstance(layer, keras_laf.LAF)
    ]
    assert units and set(units) == {expected}


def _layers(layer):
    found = [layer]
    for sublayer in getattr(layer, "_layers", []) or []:
        found.extend(_layers(sublayer))
    if hasattr(layer, "aggregation_layer"):
        found.extend(_layers(layer.aggregation_layer()))
    return found


def test_message_passing_warns_with_its_removal():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        keras_laf.MessagePassing(2, aggregation="sum")
    assert any("0.3.0" in str(w.message) for w in caught)

"""Tests of the aggregation registry: `register`, `get` and the names."""

import numpy as np
import pytest

import keras_laf
from keras_laf import aggregations

# Two sets of 3 elements with 2 features in (0, 1).
VALUES = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3, 2)).astype("f4")


@pytest.mark.parametrize("name", aggregations.NAMES)
def test_every_name_gives_a_new_layer_of_its_kind(name):
    layer = aggregations.get(name, name="pooling")
    # The class registered under the name, public as `keras_laf.<its name>`
    # and `keras_laf.aggregations.<its name>`.
    expected, _ = aggregations.registered(name)
    assert type(layer) is expected
    assert getattr(keras_laf, expected.__name__) is expected
    assert getattr(aggregations, expected.__name__) is expected
    assert layer.name == "pooling"
    assert aggregations.get(name) is not aggregations.get(name)
    outputs = np.asarray(layer(VALUES))
    assert outputs.shape == (2, layer.output_width(2))
    assert outputs.shape == (2, aggregations.output_width(name, 2))
    if name in aggregations.PER_FEATURE_NAMES:
        # The per-feature count that the graph layers size themselves by.
        assert outputs.shape == (2, 2 * aggregations.num_aggregates(name))


def test_some_names_and_their_classes():
    # Written out: a registry that gave names the wrong classes fails here.
    expected = {
        "laf": keras_laf.LAF,
        "max": keras_laf.FixedAggregation,
        "pna": keras_laf.FixedAggregation,
        "softmax": keras_laf.SoftmaxAggregation,
        "set2set": keras_laf.Set2Set,
        "lstm": keras_laf.LSTMAggregation,
        "median": keras_laf.MedianAggregation,
        "kolmogorov_mean": keras_laf.KolmogorovMeanAggregation,
    }
    for name, cls in expected.items():
        assert aggregations.registered(name)[0] is cls, name
    assert aggregations.registered("multi")[0] is keras_laf.MultiAggregation


def test_every_registered_class_of_the_package_is_public():
    # Registered in a module of `keras_laf.aggregations`, a class is
    # handed on by its class name; the bases and the scaler are listed.
    package = {
        cls
        for cls in aggregations.registry.classes()
        if cls.__module__.startswith("keras_laf.aggregations.")
    }
    public = {
        getattr(aggregations, name)
        for name in aggregations.__all__
        if isinstance(getattr(aggregations, name), type)
    }
    assert package == public - {
        keras_laf.SetAggregation,
        keras_laf.SetPooling,
        keras_laf.DegreeScalerAggregation,
    }
    assert {cls.__name__ for cls in public} <= set(keras_laf.__all__)
    for names in (aggregations.__all__, keras_laf.__all__):
        assert list(names) == sorted(set(names))


def test_the_names_defaults_are_registered_with_them():
    assert aggregations.get("laf").units == 9
    assert aggregations.get("lstm").units == 32
    assert aggregations.get("gmt").dim == 32
    assert aggregations.registered("laf") == (keras_laf.LAF, {"units": 9})
    assert aggregations.get("laf", units=5).units == 5
    assert aggregations.num_aggregates("laf", units=5) == 5


def test_fixed_names_and_lists_match_numpy():
    layer = aggregations.get(["mean", "max"], flatten=False)
    expected = np.stack([VALUES.mean(1), VALUES.max(1)], axis=-1)
    np.testing.assert_allclose(layer(VALUES), expected, rtol=1e-6)
    presets = {"deepsets": 9, "pna": 7}
    for name, count in presets.items():
        assert len(aggregations.get(name).aggregators) == count
        assert aggregations.num_aggregates(name) == count
    assert aggregations.get("pna").aggregators == list(
        keras_laf.PNA_AGGREGATORS
    )
    # A preset inside a list is a member of its own.
    mixed = aggregations.get(["deepsets", "max"])
    assert type(mixed) is keras_laf.MultiAggregation
    assert aggregations.num_aggregates(["deepsets", "max"]) == 10


def test_a_mixed_list_takes_each_members_arguments():
    layer = aggregations.get(
        ["laf", "max"],
        aggregations_kwargs=[{"units": 4, "preset": "closed_forms"}, {}],
        mode="proj",
        units=6,
    )
    assert layer.members[0].units == 4
    assert layer.members[0].preset == "closed_forms"
    assert layer.units == 6
    assert np.asarray(layer(VALUES)).shape == (2, 6)
    with pytest.raises(ValueError, match="one per aggregation"):
        aggregations.get(["laf", "max"], aggregations_kwargs=[{}])


def test_shortcuts_new_in_0_2_0_are_gone():
    # `get(..., units=...)` for every member went before 0.2.0's release:
    # a name takes its class's arguments only.
    with pytest.raises(ValueError, match="takes no argument 'units'"):
        aggregations.get("max", units=3)
    layer = aggregations.get(["laf", "lstm", "max"])
    assert [member.name for member in layer.members] == [
        "aggregation_0",
        "aggregation_1",
        "aggregation_2",
    ]


def test_layers_pass_through_and_their_input_domain():
    layer = keras_laf.LAF(2)
    assert aggregations.get(layer) is layer
    assert layer.input_domain == "unit_interval"
    assert aggregations.get("mean").input_domain == "real"
    # MultiAggregation squashes LAF's elements itself, unless told not to.
    assert aggregations.get(["laf", "max"]).input_domain == "real"
    unsquashed = aggregations.get(["laf", "max"], laf_activation=None)
    assert unsquashed.input_domain == "unit_interval"
    scaled = keras_laf.DegreeScalerAggregation("laf", "identity")
    assert scaled.input_domain == "unit_interval"
    values = np.array([-2.0, 0.0, 3.0], "float32")
    np.testing.assert_allclose(
        layer.squash_inputs(values), 1 / (1 + np.exp(-values)), rtol=1e-6
    )
    np.testing.assert_array_equal(
        aggregations.get("max").squash_inputs(values), values
    )
    with pytest.raises(ValueError, match="own arguments"):
        aggregations.get(layer, units=3)


@pytest.mark.parametrize(
    "identifier",
    ["medians", [], ["mean", "medians"], 3, ("laf", 1), None],
)
def test_unknown_identifiers_raise(identifier):
    with pytest.raises(ValueError, match="aggregation"):
        aggregations.get(identifier)


def test_unknown_arguments_name_the_class_and_its_arguments():
    with pytest.raises(ValueError, match="takes no argument 'unit'"):
        aggregations.get("laf", unit=3)
    with pytest.raises(ValueError, match="non-empty string"):
        aggregations.register("")
    with pytest.raises(ValueError, match="subclass of"):
        aggregations.register("not_an_aggregation")(dict)


def test_names_new_in_0_2_0_are_gone():
    for name in ("needs_unit_interval", "DEFAULT_UNITS", "check"):
        with pytest.raises(AttributeError):
            getattr(aggregations, name)


@pytest.mark.parametrize("name", ["laf", "softmax", "gmt", "pna", "median"])
def test_a_name_is_the_same_layer_everywhere(name):
    def config(layer):
        return {
            key: value
            for key, value in layer.get_config().items()
            if key != "name"
        }

    expected = config(aggregations.get(name))
    multi = keras_laf.MultiAggregation([name, "max"])
    scaled = keras_laf.DegreeScalerAggregation(name, "identity")
    places = {
        "MultiAggregation": multi.members[0],
        "DegreeScalerAggregation": scaled.aggregation_layer(),
        "AggregationConv": keras_laf.AggregationConv(
            4, aggregation=name
        ).aggregation_layer(),
        "GraphReadout": keras_laf.GraphReadout(name).aggregation_layer(),
    }
    for place, layer in places.items():
        assert config(layer) == expected, place

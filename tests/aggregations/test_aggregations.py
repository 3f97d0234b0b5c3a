"""Tests of the aggregation registry `keras_laf.aggregations`."""

import numpy as np
import pytest

import keras_laf
from keras_laf import aggregations

# Two sets of 3 elements with 2 features in (0, 1).
VALUES = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3, 2)).astype("f4")


@pytest.mark.parametrize("name", aggregations.NAMES)
def test_every_name_gives_a_new_layer_of_its_kind(name):
    layer = aggregations.get(name, units=3, name="pooling")
    expected = {
        "laf": keras_laf.LAF,
        "lstm": keras_laf.LSTMAggregation,
        "gru": keras_laf.GRUAggregation,
        "softmax": keras_laf.SoftmaxAggregation,
        "powermean": keras_laf.PowerMeanAggregation,
        "genagg": keras_laf.GenAggAggregation,
        "attention": keras_laf.AttentionalAggregation,
        "set2set": keras_laf.Set2Set,
        "gmt": keras_laf.GraphMultisetTransformer,
    }.get(name, keras_laf.FixedAggregation)
    assert type(layer) is expected
    assert layer.name == "pooling"
    assert aggregations.get(name) is not aggregations.get(name)
    outputs = np.asarray(layer(VALUES))
    if name not in aggregations.PER_FEATURE_NAMES:
        # The poolings mix the features into a width of their own.
        assert outputs.shape == (2, aggregations.output_width(name, 2, 3))
    else:
        # The per-feature count that the graph layers size themselves by.
        num = aggregations.num_aggregates(name, units=3)
        assert outputs.shape == (2, 2 * num)


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


def test_units_of_learned_aggregations():
    assert aggregations.get("laf").units == aggregations.DEFAULT_UNITS["laf"]
    assert aggregations.get("lstm").units == aggregations.DEFAULT_UNITS["lstm"]
    assert aggregations.get("laf", units=5).units == 5
    assert aggregations.num_aggregates("laf", units=5) == 5


def test_layers_pass_through_and_unit_interval():
    layer = keras_laf.LAF(2)
    assert aggregations.get(layer) is layer
    assert aggregations.needs_unit_interval("laf")
    assert aggregations.needs_unit_interval(layer)
    assert not aggregations.needs_unit_interval(["mean"])


@pytest.mark.parametrize(
    "identifier", ["median", [], ["mean", "median"], 3, ("laf", 1), None]
)
def test_unknown_identifiers_raise(identifier):
    with pytest.raises(ValueError, match="Unknown aggregation"):
        aggregations.get(identifier)


def test_allowed_names_restrict_the_choice():
    assert aggregations.check(["sum"], aggregations.PER_FEATURE_NAMES) == [
        "sum"
    ]
    with pytest.raises(ValueError, match="'lstm'"):
        aggregations.check("lstm", aggregations.PER_FEATURE_NAMES)
    with pytest.raises(ValueError, match="Unknown aggregation"):
        aggregations.num_aggregates("lstm")

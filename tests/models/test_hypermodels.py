"""Tests of the KerasTuner hypermodels of the set models."""

import keras
import keras_tuner as kt
import numpy as np
import pytest

from keras_laf import LAF
from keras_laf import PMA
from keras_laf import FixedAggregation
from keras_laf.datasets import to_padded_batches
from keras_laf.models.hypermodels import DeepSetsHyperModel
from keras_laf.models.hypermodels import SetTransformerHyperModel
from laf_experiments.data import make_training_sets

# Tiny models; eager execution, much faster than tracing for a few batches.
DEEP_SETS = {
    "vocabulary_size": 10,
    "model_kwargs": {"phi_units": (), "embedding_dim": 4},
    "compile_kwargs": {"run_eagerly": True},
}
SET_TRANSFORMER = {
    "input_dim": 3,
    "model_kwargs": {"hidden_units": 8, "num_heads": 2, "num_blocks": 1},
    "compile_kwargs": {"run_eagerly": True},
}
DEFAULTS = {
    "aggregation": "laf",
    "laf_units": 9,
    "laf_preset": "pooling",
    "learning_rate": 1e-3,
}


def learning_rate(model):
    return float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))


def space(hp):
    return {hyperparameter.name: hyperparameter for hyperparameter in hp.space}


def test_deep_sets_defaults_with_empty_hyperparameters():
    hp = kt.HyperParameters()
    model = DeepSetsHyperModel(**DEEP_SETS).build(hp)
    assert hp.values == DEFAULTS
    aggregation = model.get_layer("aggregation")
    assert isinstance(aggregation, LAF)
    assert aggregation.units == 9
    assert aggregation.preset == "pooling"
    assert isinstance(model.optimizer, keras.optimizers.Adam)
    np.testing.assert_allclose(learning_rate(model), 1e-3)
    assert model.loss == "mae"
    assert model.output_shape == (None, 1)


def test_deep_sets_search_space():
    hp = kt.HyperParameters()
    DeepSetsHyperModel(**DEEP_SETS, aggregations=("laf", "sum")).build(hp)
    hyperparameters = space(hp)
    assert list(hyperparameters) == [
        "aggregation",
        "laf_units",
        "laf_preset",
        "learning_rate",
    ]
    aggregation = hyperparameters["aggregation"]
    assert list(aggregation.values) == ["laf", "sum"]
    units = hyperparameters["laf_units"]
    assert isinstance(units, kt.engine.hyperparameters.Int)
    assert (units.min_value, units.max_value, units.step) == (1, 21, 1)
    assert units.default == 9
    # Units only matter, and only exist, when the aggregation is LAF.
    assert [c.get_config() for c in units.conditions] == [
        {"name": "aggregation", "values": ["laf"]}
    ]
    preset = hyperparameters["laf_preset"]
    assert list(preset.values) == ["pooling", "closed_forms", "paper"]
    assert preset.default == "pooling"
    assert [c.get_config() for c in preset.conditions] == [
        {"name": "aggregation", "values": ["laf"]}
    ]
    assert list(hyperparameters["learning_rate"].values) == [1e-2, 1e-3, 1e-4]


def test_set_transformer_defaults_with_empty_hyperparameters():
    hp = kt.HyperParameters()
    model = SetTransformerHyperModel(**SET_TRANSFORMER).build(hp)
    assert hp.values == DEFAULTS
    assert model.get_layer("laf").units == 9
    assert model.get_layer("laf").preset == "pooling"
    np.testing.assert_allclose(learning_rate(model), 1e-3)
    assert model.output_shape == (None, 1)


def test_fixed_hyperparameters_override_the_defaults():
    hp = kt.HyperParameters()
    hp.Fixed("laf_units", 3)
    hp.Fixed("laf_preset", "closed_forms")
    hp.Fixed("learning_rate", 1e-2)
    model = DeepSetsHyperModel(**DEEP_SETS).build(hp)
    assert hp.values == {
        "laf_units": 3,
        "laf_preset": "closed_forms",
        "learning_rate": 1e-2,
        "aggregation": "laf",
    }
    assert model.get_layer("aggregation").units == 3
    assert model.get_layer("aggregation").preset == "closed_forms"
    np.testing.assert_allclose(learning_rate(model), 1e-2)


def test_deprecated_units_name_still_fixes_the_laf_units():
    hp = kt.HyperParameters()
    hp.Fixed("units", 3)
    with pytest.warns(DeprecationWarning, match="'units'.*now 'laf_units'"):
        model = DeepSetsHyperModel(**DEEP_SETS).build(hp)
    assert hp.get("laf_units") == 3
    assert model.get_layer("aggregation").units == 3


def test_other_aggregation_has_no_units():
    hp = kt.HyperParameters()
    hp.Fixed("aggregation", "sum")
    model = DeepSetsHyperModel(**DEEP_SETS, aggregations=("laf", "sum")).build(
        hp
    )
    assert "laf_units" not in hp
    assert "laf_preset" not in hp
    assert isinstance(model.get_layer("aggregation"), FixedAggregation)


def test_set_transformer_pma_head():
    hp = kt.HyperParameters()
    hp.Fixed("aggregation", "pma")
    model = SetTransformerHyperModel(
        **SET_TRANSFORMER, aggregations=("laf", "pma")
    ).build(hp)
    assert "laf_units" not in hp
    assert "laf_preset" not in hp
    assert isinstance(model.get_layer("pma"), PMA)
    assert not any(isinstance(layer, LAF) for layer in model.layers)


def test_laf_presets_constructor_fixes_the_preset():
    hp = kt.HyperParameters()
    model = DeepSetsHyperModel(**DEEP_SETS, laf_presets=("paper",)).build(hp)
    assert hp.get("laf_preset") == "paper"
    assert model.get_layer("aggregation").preset == "paper"
    assert list(space(hp)["laf_preset"].values) == ["paper"]


def test_constructor_overrides():
    hypermodel = DeepSetsHyperModel(
        **DEEP_SETS,
        min_units=4,
        max_units=4,
        learning_rates=(1e-2,),
        aggregations=("max", "laf"),
        default_aggregation="max",
        loss="mse",
    )
    hp = kt.HyperParameters()
    model = hypermodel.build(hp)
    assert hp.values == {"aggregation": "max", "learning_rate": 1e-2}
    assert model.loss == "mse"
    np.testing.assert_allclose(learning_rate(model), 1e-2)
    hp = kt.HyperParameters()
    hp.Fixed("aggregation", "laf")
    model = hypermodel.build(hp)
    assert model.get_layer("aggregation").units == 4


@pytest.mark.parametrize(
    "units_range, expected",
    [
        ({"min_units": 12}, 12),
        ({"max_units": 5}, 5),
        ({"units_step": 5}, 11),
        ({"units_step": 2}, 9),
        ({"units_step": 4, "default_units": 5}, 5),
    ],
)
def test_default_units_stay_in_the_range(units_range, expected):
    hypermodel = DeepSetsHyperModel(**DEEP_SETS, **units_range)
    assert hypermodel.default_units == expected
    hp = kt.HyperParameters()
    hypermodel.build(hp)
    assert hp.get("laf_units") == expected


def test_default_learning_rate_is_the_nearest_choice():
    hypermodel = DeepSetsHyperModel(**DEEP_SETS, learning_rates=(3e-2, 3e-4))
    assert hypermodel.default_learning_rate == 3e-4
    assert hypermodel.learning_rates == (3e-2, 3e-4)


def test_model_kwargs_reach_the_builder():
    hypermodel = DeepSetsHyperModel(
        input_dim=3,
        model_kwargs={"phi_units": (5,), "name": "tuned"},
    )
    model = hypermodel.build(kt.HyperParameters())
    assert model.name == "tuned"
    assert len(model.inputs) == 2  # padded sets and a mask
    assert model.get_layer("phi_0").layer.units == 5


@pytest.mark.slow
# keras-tuner reloads the best checkpoint into a model whose optimizer is not
# built yet; only the weights matter here.
@pytest.mark.filterwarnings(
    "ignore:Skipping variable loading for optimizer:UserWarning"
)
def test_two_trial_search(tmp_path):
    train = to_padded_batches(
        make_training_sets(64, "sum", seed=0).to_dataset(32)
    )
    validation = to_padded_batches(
        make_training_sets(32, "sum", seed=1).to_dataset(32)
    )
    hypermodel = DeepSetsHyperModel(
        **DEEP_SETS, max_units=4, aggregations=("laf", "sum")
    )
    tuner = kt.RandomSearch(
        hypermodel,
        objective="val_loss",
        max_trials=2,
        seed=0,
        directory=tmp_path,
        overwrite=True,
    )
    tuner.search(train, validation_data=validation, epochs=1, verbose=0)

    trials = tuner.oracle.get_best_trials(num_trials=2)
    assert len(trials) == 2
    for trial in trials:
        values = trial.hyperparameters.values
        assert values["aggregation"] in ("laf", "sum")
        assert values["learning_rate"] in (1e-2, 1e-3, 1e-4)
        assert ("laf_units" in values) == (values["aggregation"] == "laf")
        if "laf_units" in values:
            assert 1 <= values["laf_units"] <= 4
        assert np.isfinite(trial.score)
    best = tuner.get_best_hyperparameters()[0]
    assert best.values == trials[0].hyperparameters.values
    model = tuner.get_best_models()[0]
    assert model.evaluate(validation, verbose=0, return_dict=True)["mae"] >= 0


@pytest.mark.slow
def test_search_keeps_fixed_units(tmp_path):
    train = to_padded_batches(
        make_training_sets(64, "count", seed=0).to_dataset(32)
    )
    hp = kt.HyperParameters()
    hp.Fixed("laf_units", 2)
    tuner = kt.RandomSearch(
        DeepSetsHyperModel(**DEEP_SETS),
        hyperparameters=hp,
        objective="loss",
        max_trials=2,
        seed=0,
        directory=tmp_path,
        overwrite=True,
    )
    tuner.search(train, epochs=1, verbose=0)
    trials = tuner.oracle.get_best_trials(num_trials=2)
    assert len(trials) == 2
    assert [trial.hyperparameters.get("laf_units") for trial in trials] == [
        2,
        2,
    ]
    # The rest (the learning rate and the LAF preset) is still searched.
    others = {
        (
            trial.hyperparameters.get("learning_rate"),
            trial.hyperparameters.get("laf_preset"),
        )
        for trial in trials
    }
    assert len(others) == 2


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"min_units": 0}, "min_units=0"),
        ({"max_units": -1}, "max_units=-1"),
        ({"min_units": 5, "max_units": 4}, "min_units=5, max_units=4"),
        ({"units_step": 0}, "units_step=0"),
        ({"min_units": 1.5}, "min_units=1.5"),
        ({"default_units": 22}, "default_units=22"),
        ({"units_step": 2, "default_units": 4}, "default_units=4"),
        ({"default_units": 9.0}, "default_units=9.0"),
        ({"learning_rates": ()}, r"learning_rates=\(\)"),
        ({"learning_rates": 1e-3}, "learning_rates=0.001"),
        ({"learning_rates": (1e-3, 0.0)}, r"learning_rates=\(0.001, 0.0\)"),
        ({"learning_rates": (-1e-3,)}, "learning_rates="),
        ({"learning_rates": ("fast",)}, "learning_rates="),
        ({"learning_rates": (1e-3, 1e-3)}, "repeat"),
        ({"default_learning_rate": 0.5}, "default_learning_rate=0.5"),
        ({"aggregations": ()}, r"aggregations=\(\)"),
        ({"aggregations": "laf"}, "aggregations='laf'"),
        ({"aggregations": ("laf", "medians")}, "Unknown aggregation 'medians'"),
        ({"aggregations": ("laf", "laf")}, "repeat"),
        ({"default_aggregation": "sum"}, "default_aggregation='sum'"),
        ({"compile_kwargs": {"optimizer": "sgd"}}, "optimizer"),
        ({"model_kwargs": {"aggregation_kwargs": {}}}, "aggregation_kwargs="),
        ({"laf_presets": ()}, r"laf_presets=\(\)"),
        ({"laf_presets": "paper"}, "laf_presets='paper'"),
        ({"laf_presets": ("paper", "median")}, "Unknown LAF preset 'median'"),
        (
            {"laf_presets": ("paper",), "default_laf_preset": "pooling"},
            "default_laf_preset='pooling'",
        ),
        ({"model_kwargs": {"aggregation": "sum"}}, "aggregation='sum'"),
        ({"model_kwargs": {"dropout": 0.5}}, "dropout=0.5"),
    ],
)
def test_bad_arguments_raise(arguments, match):
    with pytest.raises(ValueError, match=match):
        DeepSetsHyperModel(**{**DEEP_SETS, **arguments})


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"input_dim": 3}, "exactly one"),
        ({"vocabulary_size": None}, "exactly one"),
        ({"vocabulary_size": 0}, "vocabulary_size=0"),
        ({"output_dim": 0}, "output_dim=0"),
    ],
)
def test_bad_deep_sets_inputs_raise(arguments, match):
    with pytest.raises(ValueError, match=match):
        DeepSetsHyperModel(**{**DEEP_SETS, **arguments})


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"aggregations": ("laf", "sum")}, "Unknown aggregation 'sum'"),
        ({"input_dim": 0}, "input_dim=0"),
        ({"model_kwargs": {"aggregation": "pma"}}, "aggregation='pma'"),
        ({"min_units": 3, "max_units": 2}, "min_units=3"),
    ],
)
def test_bad_set_transformer_arguments_raise(arguments, match):
    with pytest.raises(ValueError, match=match):
        SetTransformerHyperModel(**{**SET_TRANSFORMER, **arguments})

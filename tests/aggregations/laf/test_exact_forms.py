"""LAF's default constraints pull units onto the exact forms of Table 1."""

import keras
import numpy as np
import pytest

from keras_laf import LAF
from keras_laf.aggregations.laf.constraints import BoundedNonNeg
from keras_laf.aggregations.laf.constraints import ClosedFormExponents
from keras_laf.aggregations.laf.constraints import PositiveDenominator


def apply(constraint, weights):
    tensor = keras.ops.convert_to_tensor(np.asarray(weights, "float32"))
    return keras.ops.convert_to_numpy(constraint(tensor))


def pull_reference(
    weights, pull, outer_window, inner_window, keep_degree, anchor_inner=None
):
    # Element by element: clip, then the L1 proximal step towards the
    # nearest of 0 and 1 inside the row's window, then the floor of the
    # outer exponents of terms with a large inner one.
    weights = np.clip(np.asarray(weights, "float64"), 0.0, 100.0)
    result = weights.copy()
    for row in range(8):
        for unit in range(weights.shape[1]):
            value = weights[row, unit]
            nearest = 0.0 if value < 0.5 else 1.0
            if row % 2 == 0:
                degree = value * weights[row + 1, unit]
                if nearest == 0.0 and degree >= keep_degree:
                    continue
                window = outer_window
            else:
                window = inner_window
            distance = value - nearest
            if abs(distance) < window:
                result[row, unit] = nearest + np.sign(distance) * max(
                    abs(distance) - pull, 0.0
                )
    if anchor_inner is not None:
        for row in range(0, 8, 2):
            for unit in range(weights.shape[1]):
                inner = result[row + 1, unit]
                if inner >= anchor_inner:
                    result[row, unit] = max(
                        result[row, unit], keep_degree / inner
                    )
    return result


def test_exponents_match_the_reference():
    rng = np.random.default_rng(0)
    weights = rng.uniform(-0.2, 1.6, size=(8, 40))
    weights[1, :5] = 50.0  # max-like terms with a small outer exponent
    weights[0, :5] = [0.02, 0.01, 0.004, 0.6, 0.3]
    weights[3, :3] = [5.0, 20.0, 4.9]  # the floor's edge
    weights[2, :3] = 0.0
    for kwargs in (
        {"pull": 0.01, "outer_window": 0.5, "inner_window": 0.1},
        {"pull": 0.2, "outer_window": 0.25, "inner_window": 0.0},
        {"pull": 0.0, "outer_window": 0.5, "inner_window": 0.5},
        {"pull": 0.01, "outer_window": 0.5, "inner_window": 0.5}
        | {"anchor_inner": 5.0},
        # Inner exponents inside the pull's window: the floor reads them
        # after the pull.
        {"pull": 0.3, "outer_window": 0.5, "inner_window": 0.5}
        | {"anchor_inner": 1.2},
    ):
        constraint = ClosedFormExponents(**kwargs)
        np.testing.assert_allclose(
            apply(constraint, weights),
            pull_reference(weights, keep_degree=0.25, **kwargs),
            atol=1e-6,
        )


def test_anchors_keep_their_degree():
    # Table 1's min term, its outer exponent driven to 0 by the gradient:
    # the floor gives it back the degree keep_degree, 0.25 / 50.
    exponents = np.zeros((8, 2), "float32")
    exponents[2:4, 0] = [0.0, 50.0]
    exponents[2:4, 1] = [0.0, 2.0]  # not max-like: left at 0
    floored = apply(ClosedFormExponents(anchor_inner=5.0), exponents)
    np.testing.assert_allclose(floored[2:4, 0], [0.005, 50.0])
    np.testing.assert_array_equal(floored[2:4, 1], [0.0, 2.0])
    assert apply(ClosedFormExponents(), exponents)[2, 0] == 0.0


def test_exponents_within_the_pull_land_exactly_and_max_anchor_is_kept():
    constraint = ClosedFormExponents(pull=0.01)
    exponents = np.zeros((8, 3), "float32")
    exponents[:2, 0] = [1.004, 0.996]  # sum, a hair away
    exponents[:2, 1] = [0.02, 50.0]  # Table 1's max: a = 1/50, b = 50
    exponents[4:6, 2] = [0.003, 1.7]  # a residual outer exponent
    pulled = apply(constraint, exponents)
    assert pulled[0, 0] == 1.0 and pulled[1, 0] == 1.0
    np.testing.assert_allclose(pulled[:2, 1], [0.02, 50.0])
    assert pulled[4, 2] == 0.0
    np.testing.assert_allclose(pulled[5, 2], 1.7)
    # Once a max anchor's outer exponent has a degree below keep_degree,
    # it is pulled like any other.
    assert apply(ClosedFormExponents(keep_degree=2.0), exponents)[0, 1] < 0.02


def test_exponents_are_clipped_into_range():
    constraint = ClosedFormExponents(max_value=3.0, pull=0.0)
    pulled = apply(constraint, np.full((8, 2), -1.0) + np.eye(8, 2) * 10)
    assert pulled.min() == 0.0 and pulled.max() == 3.0


def coefficient_reference(weights, pull):
    weights = np.asarray(weights, "float64").copy()
    for start in (0, 2):
        pair = weights[start : start + 2]
        step = pull * np.abs(pair).max(axis=0)
        pair[:] = np.sign(pair) * np.maximum(np.abs(pair) - step, 0.0)
    denominator = np.maximum(weights[2:], 0.0)
    total = denominator.sum(axis=0)
    weights[2:] = denominator
    return weights / np.clip(total, 1e-30, 1.0)


def test_coefficient_pull_matches_the_reference():
    rng = np.random.default_rng(1)
    weights = rng.normal(size=(4, 30))
    weights[2:] = np.abs(weights[2:]) + 0.1
    weights[1, :3] = [0.001, -0.002, 0.0005]  # near-zero numerator terms
    for pull in (0.0, 0.01, 0.2):
        np.testing.assert_allclose(
            apply(PositiveDenominator(pull=pull), weights),
            coefficient_reference(weights, pull),
            rtol=1e-5,
            atol=1e-6,
        )
    pulled = apply(PositiveDenominator(pull=0.01), weights)
    # Small terms are exactly 0; denominators stay positive and >= 1.
    assert np.all(pulled[1, :3] == 0.0)
    assert pulled[2:].min() >= 0
    assert np.all(pulled[2:].sum(axis=0) >= 1 - 1e-6)


# Exponents (8, 2), rows a..h: unit 0 is (alpha sum x + beta) /
# (gamma sum x + delta sum (1 - x)), whose denominator terms vanish on a
# set of zeros and a set of ones; unit 1 is (alpha sum x + beta) /
# (gamma N + delta sum (1 - x)), whose gamma term, the count, never
# vanishes.
POLE_EXPONENTS = np.array(
    [[1, 1], [1, 1], [0, 0], [1, 1], [1, 0], [1, 0], [1, 1], [1, 1]],
    "float32",
)
# Coefficients (4, 2): a small delta under a large gamma in both units.
SMALL_DELTA = np.array(
    [[0.5, 0.5], [-0.001, -0.001], [1.0, 1.0], [1e-4, 1e-4]], "float32"
)


def test_the_layer_does_not_pull_a_denominator_onto_a_pole():
    layer = LAF(2, preset="closed_forms")
    layer.build((None, None, 1))
    layer.exponents.assign(POLE_EXPONENTS)
    constraint = layer.coefficients.constraint
    pull = layer.coefficient_constraint.pull
    pulled = apply(constraint, SMALL_DELTA)
    # By hand: alpha and beta step by pull * 0.5 towards 0; delta lands on
    # 0 in unit 1 only; gamma stays, since delta's term vanishes on a set
    # of ones in both units.
    expected = SMALL_DELTA.astype("float64")
    expected[0] -= pull * 0.5
    expected[1] += pull * 0.5
    expected[3, 1] = 0.0
    np.testing.assert_allclose(pulled, expected, rtol=1e-6)
    # The constraint alone pulls delta onto 0 in both units.
    alone = apply(PositiveDenominator(pull=pull), SMALL_DELTA)
    np.testing.assert_array_equal(alone[3], [0.0, 0.0])
    # A copy: the layer's own constraint and its config are unchanged.
    assert layer.coefficient_constraint.exponents is None
    assert constraint.get_config() == layer.coefficient_constraint.get_config()


@pytest.mark.multi_backend
def test_training_keeps_a_vanishing_denominator_off_its_pole():
    # One step of Adam at a negligible rate: only the pull moves delta.
    layer = LAF(2, preset="closed_forms", name="laf")
    model = keras.Sequential(
        [keras.Input((3, 1)), layer, keras.layers.Dense(1)]
    )
    layer.exponents.assign(POLE_EXPONENTS)
    layer.coefficients.assign(SMALL_DELTA)
    model.compile(keras.optimizers.Adam(1e-9), "mse")
    values = np.random.default_rng(0).uniform(size=(8, 3, 1))
    model.fit(values, np.ones(8), batch_size=8, epochs=1, verbose=0)
    delta = keras.ops.convert_to_numpy(layer.coefficients)[3]
    np.testing.assert_allclose(delta, [1e-4, 0.0], atol=1e-8)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pull": -1e-4}, "Received: pull=-0.0001"),
        ({"pull": "0.1"}, "Received: pull='0.1'"),
        ({"outer_window": 0.6}, "Received: outer_window=0.6"),
        ({"inner_window": -0.1}, "Received: inner_window=-0.1"),
        ({"keep_degree": 0}, "Received: keep_degree=0"),
        ({"anchor_inner": -5.0}, "Received: anchor_inner=-5.0"),
        ({"anchor_inner": "5"}, "Received: anchor_inner='5'"),
        ({"max_value": True}, "Received: max_value=True"),
    ],
)
def test_bad_exponent_constraint_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ClosedFormExponents(**kwargs)


@pytest.mark.parametrize("pull", [-0.1, 1.0, None])
def test_bad_coefficient_pull(pull):
    with pytest.raises(ValueError, match="Received: pull="):
        PositiveDenominator(pull=pull)


def test_constraints_round_trip_their_config():
    for constraint in (
        ClosedFormExponents(pull=1e-3, outer_window=0.2, keep_degree=0.5),
        ClosedFormExponents(anchor_inner=5.0),
        PositiveDenominator(pull=1e-3),
    ):
        restored = keras.constraints.deserialize(
            keras.constraints.serialize(constraint)
        )
        assert type(restored) is type(constraint)
        assert restored.get_config() == constraint.get_config()


def test_closed_forms_layer_pulls_and_paper_layer_only_projects():
    layer = LAF(3, preset="closed_forms")
    assert isinstance(layer.exponent_constraint, ClosedFormExponents)
    assert layer.exponent_constraint.pull > 0
    assert layer.coefficient_constraint.pull > 0
    paper = LAF(3, preset="paper")
    assert type(paper.exponent_constraint) is BoundedNonNeg


def test_layers_saved_before_the_pull_keep_their_constraints():
    # A config written before these defaults names BoundedNonNeg and a
    # PositiveDenominator without a pull.
    config = LAF(2, preset="closed_forms").get_config()
    config["exponent_constraint"] = keras.constraints.serialize(BoundedNonNeg())
    config["coefficient_constraint"]["config"] = {}
    layer = LAF.from_config(config)
    assert type(layer.exponent_constraint) is BoundedNonNeg
    assert layer.coefficient_constraint.pull == 0.0


@pytest.mark.slow
def test_closed_forms_layer_learns_the_exact_count_and_extrapolates():
    # Sets of 2..10 reals in [0, 1] labelled by their size: LAF with the
    # closed_forms preset finds the count exactly and keeps it on sets of
    # 50.
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 11, size=4000)
    values = rng.uniform(size=(4000, 10, 1)).astype("float32")
    mask = np.arange(10) < sizes[:, None]
    keras.utils.set_random_seed(0)
    sets = keras.Input((None, 1))
    set_mask = keras.Input((None,), dtype="bool")
    laf = LAF(3, preset="closed_forms", name="laf")
    outputs = keras.layers.Dense(1)(laf(sets, mask=set_mask))
    model = keras.Model([sets, set_mask], outputs)
    model.compile(keras.optimizers.Adam(1e-3), "mae", steps_per_execution=8)
    model.fit([values, mask], sizes.astype("float32"), epochs=25, verbose=0)
    exponents = keras.ops.convert_to_numpy(laf.exponents)
    assert np.any(exponents == 0.0) and np.any(exponents == 1.0)
    assert "count" in laf.closed_forms()
    large = rng.uniform(size=(200, 50, 1)).astype("float32")
    predictions = model.predict([large, np.ones((200, 50), bool)], verbose=0)
    assert np.abs(predictions - 50).mean() < 0.5

"""Tests of `GenAggAggregation` against a NumPy transcription of GenAgg and
against the special cases of the GenAgg paper (mean, sum, root mean
square, 2-norm, standard deviation, geometric and harmonic means,
log-sum-exp, maximum and minimum in the limit), with fixed a, b and f.

Each is checked on padded sets with a mask (padding holds NaN, so any leak
shows), on unsorted segment ids and, on TensorFlow, on ragged sets.
"""

import keras
import numpy as np
import pytest
from keras import ops

import keras_laf
from keras_laf import GenAggAggregation
from keras_laf import MultiAggregation
from keras_laf import aggregations

pytestmark = pytest.mark.multi_backend

FEATURES = 2
# Four sets of 4, 1, 0 and 3 positive elements: the geometric and
# harmonic means and the log map need positive elements.
SETS = [
    np.array([[0.5, 2.0], [1.5, 0.2], [3.0, 1.0], [0.8, 4.0]], "float32"),
    np.array([[2.0, 0.7]], "float32"),
    np.zeros((0, FEATURES), "float32"),
    np.array([[0.3, 1.2], [2.2, 0.9], [1.1, 3.3]], "float32"),
]


def padded(sets, set_size=5):
    """Padded sets whose padding holds NaN, and their mask."""
    values = np.full((len(sets), set_size, FEATURES), np.nan, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for index, elements in enumerate(sets):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    return values, mask


def segments(sets, seed=0):
    """Flat values in a shuffled order and their segment ids."""
    values = np.concatenate(sets).astype("float32")
    ids = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    order = np.random.default_rng(seed).permutation(len(ids))
    return values[order], ids[order].astype("int32")


def outputs_of_every_form(layer, sets=SETS):
    """The layer's outputs on padded sets and on segments (and on ragged
    sets on TensorFlow)."""
    values, mask = padded(sets)
    flat, ids = segments(sets)
    outputs = [
        layer(values, mask=mask),
        layer(flat, segment_ids=ids, num_segments=len(sets)),
    ]
    if keras.config.backend() == "tensorflow":
        import tensorflow as tf

        outputs.append(layer(tf.ragged.constant(sets, ragged_rank=1)))
    return [ops.convert_to_numpy(output) for output in outputs]


# The NumPy transcription of GenAgg, one set `x` `(n, features)` at a time,
# in float64: f^-1(n^a mean_i f(x_i - b mean(x))).


def monotone_map(x, linear, slopes, offsets, scales):
    # x (...,); the weights of one feature: linear a scalar, the others
    # (units,).
    inner = np.tanh(x[..., None] * slopes + offsets)
    return linear * x + (scales * inner).sum(-1)


def monotone_inverse(y, weights):
    # Bisection in float64 inside |f(x) - c x| <= sum w.
    linear, _, _, scales = weights
    low = (y - scales.sum()) / linear
    high = (y + scales.sum()) / linear
    for _ in range(200):
        middle = (low + high) / 2
        above = monotone_map(middle, *weights) > y
        high = np.where(above, middle, high)
        low = np.where(above, low, middle)
    return (low + high) / 2


MAPS = {
    "identity": (lambda x, p: x, lambda y, p: y),
    "power": (lambda x, p: np.abs(x) ** p, lambda y, p: y ** (1 / p)),
    "log": (lambda x, p: np.log(x), lambda y, p: np.exp(y)),
    "exp": (lambda x, p: np.exp(p * x), lambda y, p: np.log(y) / p),
}


def genagg_reference(x, f, a=0.0, b=0.0, p=1.0, weights=None):
    """GenAgg of one set, feature by feature; `weights[d]` are the
    monotone map's weights of feature d."""
    x = x.astype("float64")
    n = len(x)
    if n == 0:
        return np.zeros(x.shape[1])
    centred = x - b * x.mean(0)
    outputs = []
    for feature in range(x.shape[1]):
        column = centred[:, feature]
        if f == "monotone":
            mapped = monotone_map(column, *weights[feature])
            y = n**a * mapped.mean()
            outputs.append(monotone_inverse(np.array(y), weights[feature]))
        else:
            forward, inverse = MAPS[f]
            outputs.append(inverse(n**a * forward(column, p).mean(), p))
    return np.array(outputs, dtype="float64")


def references(function, sets=SETS):
    return np.stack([function(x) for x in sets])


def fixed(**kwargs):
    return GenAggAggregation(learn_a=False, learn_b=False, **kwargs)


def root_mean_square(x):
    return np.sqrt((x**2).mean(0))


# The special cases: (layer arguments, the aggregate they give).
SPECIAL_CASES = {
    "mean": ({"f": "identity"}, lambda x: x.mean(0)),
    "sum": ({"f": "identity", "a": 1.0}, lambda x: x.sum(0)),
    "root mean square": ({"f": "power", "p": 2.0}, root_mean_square),
    "2-norm": (
        {"f": "power", "p": 2.0, "a": 1.0},
        lambda x: np.linalg.norm(x, axis=0),
    ),
    "standard deviation": (
        {"f": "power", "p": 2.0, "b": 1.0},
        lambda x: x.std(0),
    ),
    "geometric mean": ({"f": "log"}, lambda x: np.exp(np.log(x).mean(0))),
    "harmonic mean": (
        {"f": "power", "p": -1.0},
        lambda x: 1 / (1 / x).mean(0),
    ),
    "log-sum-exp": (
        {"f": "exp", "p": 1.0, "a": 1.0},
        lambda x: np.log(np.exp(x).sum(0)),
    ),
    # The limits: within log(n) / p = 1.4e-5 of the extremes.
    "max (power)": ({"f": "power", "p": 1e5}, lambda x: x.max(0)),
    "max (exp)": ({"f": "exp", "p": 1e5}, lambda x: x.max(0)),
    "min (exp)": ({"f": "exp", "p": -1e5}, lambda x: x.min(0)),
}


@pytest.mark.parametrize("case", SPECIAL_CASES)
def test_special_cases_of_the_paper(case):
    kwargs, aggregate = SPECIAL_CASES[case]
    expected = references(
        lambda x: aggregate(x.astype("float64")) if len(x) else np.zeros(2)
    )
    for outputs in outputs_of_every_form(fixed(**kwargs)):
        np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"f": "identity", "a": 0.5, "b": 0.3},
        {"f": "power", "p": 3.0, "a": 0.7, "b": 0.5},
        {"f": "power", "p": -2.0, "a": -0.4},
        {"f": "log", "a": 0.3, "b": 0.1},
        {"f": "exp", "p": -2.5, "a": 0.6, "b": 1.0},
    ],
)
def test_fixed_maps_match_numpy_for_any_a_and_b(kwargs):
    expected = references(lambda x: genagg_reference(x, **kwargs))
    for outputs in outputs_of_every_form(fixed(**kwargs)):
        np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)


def learned_weights(seed, channels, units):
    """Random weights for the monotone map, a and b: what the layer holds
    and what the reference reads, `(channels,)` and `(channels, units)`."""
    rng = np.random.default_rng(seed)
    return {
        "a": rng.uniform(-0.5, 1.0, channels),
        "b": rng.uniform(0.0, 1.0, channels),
        "raw_linear": rng.normal(0.0, 1.0, channels),
        "raw_slopes": rng.normal(0.5, 1.0, (channels, units)),
        "offsets": rng.normal(0.0, 2.0, (channels, units)),
        "raw_scales": rng.normal(0.5, 1.5, (channels, units)),
    }


def softplus(x):
    return np.log1p(np.exp(x))


@pytest.mark.parametrize("channels", [1, FEATURES])
def test_monotone_map_matches_numpy(channels):
    units = 3
    layer = GenAggAggregation(units=units, channels=channels)
    values, mask = padded(SETS)
    layer(values, mask=mask)
    weights = learned_weights(channels, channels, units)
    layer.exponent.assign(weights["a"])
    layer.centring.assign(weights["b"])
    for name in ("raw_linear", "raw_slopes", "offsets", "raw_scales"):
        getattr(layer, name).assign(weights[name])
    # The weights of each feature's map: shared, or one map each.
    per_feature = [
        (
            softplus(weights["raw_linear"][c]) + 1e-3,
            softplus(weights["raw_slopes"][c]),
            weights["offsets"][c],
            softplus(weights["raw_scales"][c]),
        )
        for c in ([0] * FEATURES if channels == 1 else range(FEATURES))
    ]

    def reference(x):
        if channels == 1:
            return genagg_reference(
                x,
                "monotone",
                weights["a"][0],
                weights["b"][0],
                weights=per_feature,
            )
        return np.array(
            [
                genagg_reference(
                    x[:, [d]],
                    "monotone",
                    weights["a"][d],
                    weights["b"][d],
                    weights=[per_feature[d]],
                )[0]
                for d in range(FEATURES)
            ]
        )

    expected = references(reference)
    for outputs in outputs_of_every_form(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-5)


def test_monotone_inverse_inverts_far_from_the_start():
    # Values far beyond the tanh units' range, and steep units: f^-1(f(x))
    # must still give x.
    layer = GenAggAggregation(units=4, learn_a=False, learn_b=False)
    layer(np.zeros((1, 1, 1), "float32"))
    layer.raw_slopes.assign(np.array([[3.0, -2.0, 5.0, 0.0]]))
    layer.raw_scales.assign(np.array([[4.0, 1.0, 6.0, -3.0]]))
    parameters = layer.monotone_parameters()
    x = np.linspace(-200.0, 200.0, 81, dtype="float32").reshape(-1, 1)
    x = np.concatenate([x, np.linspace(-2, 2, 41, dtype="float32")[:, None]])
    mapped, derivatives = layer.monotone_map(
        ops.convert_to_tensor(x), parameters
    )
    assert np.all(ops.convert_to_numpy(ops.stop_gradient(derivatives)) > 0)
    inverted = layer.monotone_inverse(mapped, parameters)
    inverted = ops.convert_to_numpy(ops.stop_gradient(inverted))
    np.testing.assert_allclose(inverted, x, rtol=1e-5, atol=1e-4)


def test_a_moves_from_the_mean_to_the_sum_and_b_centres():
    values = np.array([[[1.0], [2.0], [6.0]]], "float32")
    for a, expected in ((0.0, 3.0), (1.0, 9.0), (0.5, 3.0 * np.sqrt(3))):
        outputs = ops.convert_to_numpy(fixed(f="identity", a=a)(values))
        np.testing.assert_allclose(outputs, [[expected]], rtol=1e-6)
    # Centred by the whole mean, the identity gives 0.
    outputs = ops.convert_to_numpy(fixed(f="identity", b=1.0)(values))
    np.testing.assert_allclose(outputs, [[0.0]], atol=1e-6)


def test_an_f_mean_lies_between_the_extremes():
    # Any increasing f with a = b = 0 gives a mean: between the smallest
    # and the largest element, equal to them on constant sets.
    values, mask = padded(SETS)
    outputs = ops.convert_to_numpy(GenAggAggregation()(values, mask=mask))
    for output, x in zip(outputs, SETS, strict=True):
        if len(x):
            assert np.all(x.min(0) - 1e-6 <= output)
            assert np.all(output <= x.max(0) + 1e-6)
    constant = np.full((1, 3, FEATURES), 0.7, "float32")
    outputs = ops.convert_to_numpy(GenAggAggregation()(constant))
    np.testing.assert_allclose(outputs, np.full((1, FEATURES), 0.7), rtol=1e-6)


def test_empty_sets_and_an_empty_set_axis_give_zero():
    for layer in (GenAggAggregation(), fixed(f="log"), fixed(f="exp")):
        outputs = ops.convert_to_numpy(layer(np.zeros((2, 0, 3), "float32")))
        np.testing.assert_array_equal(outputs, np.zeros((2, 3)))
        outputs = layer(
            np.zeros((0, 3), "float32"),
            segment_ids=np.zeros((0,), "int32"),
            num_segments=2,
        )
        np.testing.assert_array_equal(ops.convert_to_numpy(outputs), 0.0)


def test_registry_multi_aggregation_and_serialization(tmp_path):
    layer = aggregations.get("genagg", name="pooling")
    assert type(layer) is GenAggAggregation and layer.name == "pooling"
    assert aggregations.num_aggregates(["genagg", "max"]) == 2
    values, mask = padded(SETS)
    combined = MultiAggregation(["genagg", "mean"])
    outputs = ops.convert_to_numpy(combined(values, mask=mask))
    assert outputs.shape == (len(SETS), 2 * FEATURES)
    np.testing.assert_allclose(
        outputs[:, FEATURES:],
        references(lambda x: x.mean(0) if len(x) else np.zeros(2)),
        rtol=1e-6,
    )
    inputs = keras.Input((None, FEATURES))
    model = keras.Model(inputs, fixed(f="power", p=3.0, b=0.5)(inputs))
    model.save(tmp_path / "genagg.keras")
    reloaded = keras.models.load_model(tmp_path / "genagg.keras")
    np.testing.assert_allclose(
        ops.convert_to_numpy(reloaded(values[:, :1])),
        ops.convert_to_numpy(model(values[:, :1])),
    )
    assert keras_laf.GenAggAggregation is GenAggAggregation


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"f": "square"}, "`f` must be one of"),
        ({"p": 0.0}, "Received: p=0.0"),
        ({"p": float("inf")}, "Received: p=inf"),
        ({"a": "1"}, "Received: a='1'"),
        ({"b": None}, "Received: b=None"),
        ({"learn_a": 1}, "Received: learn_a=1"),
        ({"units": 0}, "Received: units=0"),
        ({"channels": 2.0}, "channels=2.0"),
        ({"inverse_steps": -1}, "Received: inverse_steps=-1"),
        ({"epsilon": 1.0}, "Received: epsilon=1.0"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GenAggAggregation(**kwargs)


def test_channels_must_match_the_features():
    with pytest.raises(ValueError, match="channels=3"):
        GenAggAggregation(channels=3)(np.zeros((1, 2, 2), "float32"))


@pytest.mark.tensorflow_only("tf.GradientTape; the backends share the math")
@pytest.mark.parametrize("kwargs", [{}, {"f": "power", "p": 2.0}, {"f": "log"}])
def test_gradients_match_finite_differences(kwargs):
    # In float64, the derivative of the sum of the outputs along a random
    # direction of every weight and of the inputs, against a central
    # difference: the monotone map's through its implicit-function step.
    import tensorflow as tf

    layer = GenAggAggregation(units=3, a=0.3, b=0.2, dtype="float64", **kwargs)
    values = np.random.default_rng(0).uniform(0.5, 2.0, (2, 4, FEATURES))
    layer(values)
    directions = [
        np.random.default_rng(index).normal(size=weight.shape)
        for index, weight in enumerate(layer.weights)
    ]
    input_direction = np.random.default_rng(9).normal(size=values.shape)
    start = [weight.numpy() for weight in layer.weights]
    inputs = tf.constant(values)
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        total = tf.reduce_sum(layer(inputs))
    gradients = tape.gradient(total, [*layer.weights, inputs])
    analytic = sum(
        float(np.sum(g.numpy() * d))
        for g, d in zip(gradients, [*directions, input_direction], strict=True)
    )

    def total_at(step):
        for weight, value, d in zip(
            layer.weights, start, directions, strict=True
        ):
            weight.assign(value + step * d)
        return float(np.sum(layer(values + step * input_direction).numpy()))

    step = 1e-5
    numeric = (total_at(step) - total_at(-step)) / (2 * step)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5)


@pytest.mark.parametrize(
    "init_kwargs",
    [{"units": 3, "channels": FEATURES}, {"f": "power", "p": 3.0}],
)
def test_run_layer_test_on_every_backend(init_kwargs, tmp_path):
    # The shared checks of tests/test_every_layer.py (config, symbolic
    # call, .keras round trip, a training step, mixed precision, masks),
    # here on every backend.
    from layer_test_case import run_layer_test

    values = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3, FEATURES))
    mask = np.array([[True, True, True], [True, True, False]])
    run_layer_test(
        GenAggAggregation,
        init_kwargs,
        {"inputs": values.astype("float32"), "mask": mask},
        (2, FEATURES),
        tmp_path,
        masks={"inputs": "mask"},
    )

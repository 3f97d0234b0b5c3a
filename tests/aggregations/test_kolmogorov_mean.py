"""Tests of `KolmogorovMeanAggregation` against a NumPy transcription of
the neuralized Kolmogorov mean `psi^-1(mean_i psi(x_i))`, with the
coupling networks of `psi` set to known weights.

Each is checked on padded sets with a mask (padding holds NaN, so any leak
shows), on unsorted segment ids and, on TensorFlow, on ragged sets.
"""

import keras
import numpy as np
import pytest
from keras import ops

import keras_laf
from keras_laf import KolmogorovMeanAggregation
from keras_laf import MultiAggregation
from keras_laf import aggregations

pytestmark = pytest.mark.multi_backend

# Three features: the coupling halves are 1 and 2 wide.
FEATURES = 3
# Four sets of 4, 1, 0 and 3 elements.
SETS = [
    np.array(
        [[0.5, -2.0, 1.0], [1.5, 0.2, -0.4], [-3.0, 1.0, 2.5], [0.8, 4.0, 0.0]],
        "float32",
    ),
    np.array([[2.0, -0.7, 1.1]], "float32"),
    np.zeros((0, FEATURES), "float32"),
    np.array([[0.3, 1.2, -1.5], [-2.2, 0.9, 0.6], [1.1, -3.3, 2.0]], "f4"),
]


def padded(sets, set_size=5, padding=np.nan):
    """Padded sets whose padding holds `padding`, and their mask."""
    features = sets[0].shape[1]
    values = np.full((len(sets), set_size, features), padding, "float32")
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


# The NumPy transcription, in float64. Each coupling network is
# (hidden kernel, hidden bias, output kernel): relu(x W1 + b1) W2.


def network(x, weights):
    hidden_kernel, hidden_bias, output_kernel = weights
    return np.maximum(x @ hidden_kernel + hidden_bias, 0.0) @ output_kernel


def psi_reference(x, networks, split):
    # Block b: x1 += m1(x2) with networks[2b], then x2 += m2(x1) with
    # networks[2b + 1].
    x1, x2 = x[..., :split], x[..., split:]
    for first, second in zip(networks[::2], networks[1::2], strict=True):
        x1 = x1 + network(x2, first)
        x2 = x2 + network(x1, second)
    return np.concatenate([x1, x2], -1)


def psi_inverse_reference(y, networks, split):
    y1, y2 = y[..., :split], y[..., split:]
    for first, second in reversed(
        list(zip(networks[::2], networks[1::2], strict=True))
    ):
        y2 = y2 - network(y1, second)
        y1 = y1 - network(y2, first)
    return np.concatenate([y1, y2], -1)


def kolmogorov_mean_reference(x, networks, split):
    """psi^-1(mean_i psi(x_i)) of one set `(n, features)`; 0 if empty."""
    if len(x) == 0:
        return np.zeros(x.shape[1])
    mapped = psi_reference(x.astype("float64"), networks, split)
    return psi_inverse_reference(mapped.mean(0), networks, split)


def references(function, sets=SETS):
    return np.stack([function(x) for x in sets])


def known_networks(seed, features, hidden_units, num_blocks):
    """Random weights of every coupling network, as the layer holds them
    (`(input, hidden)`, `(hidden,)`, `(hidden, output)`): m1 maps the
    last ceil(d / 2) features onto the first floor(d / 2), m2 back."""
    rng = np.random.default_rng(seed)
    split = features // 2
    widths = [(features - split, split), (split, features - split)]
    return [
        (
            rng.normal(0.0, 1.0, (source, hidden_units)),
            rng.normal(0.0, 1.0, hidden_units),
            rng.normal(0.0, 0.7, (hidden_units, target)),
        )
        for _ in range(num_blocks)
        for source, target in widths
    ]


def layer_with(networks, features=FEATURES, **kwargs):
    """A layer built for `features` features whose coupling networks hold
    `networks`."""
    hidden_units = networks[0][1].shape[0]
    layer = KolmogorovMeanAggregation(
        hidden_units=hidden_units, num_blocks=len(networks) // 2, **kwargs
    )
    layer.build((None, None, features))
    for index, (kernel, bias, output_kernel) in enumerate(networks):
        layer.hidden_layers[index].kernel.assign(kernel)
        layer.hidden_layers[index].bias.assign(bias)
        layer.output_layers[index].kernel.assign(output_kernel)
    return layer


def random_sets(features, seed=1):
    """Sets of 4, 1, 0 and 3 elements of `features` features."""
    rng = np.random.default_rng(seed)
    return [
        rng.normal(0.0, 1.5, (size, features)).astype("float32")
        for size in (4, 1, 0, 3)
    ]


@pytest.mark.parametrize(
    "features, num_blocks", [(FEATURES, 2), (FEATURES, 3), (2, 1), (4, 2)]
)
def test_matches_numpy_for_known_coupling_weights(features, num_blocks):
    networks = known_networks(features, features, 5, num_blocks)
    layer = layer_with(networks, features)
    sets = SETS if features == FEATURES else random_sets(features)
    split = features // 2
    expected = references(
        lambda x: kolmogorov_mean_reference(x, networks, split), sets
    )
    # The weights make psi far from linear: the arithmetic mean is not
    # the answer.
    arithmetic = references(
        lambda x: x.mean(0) if len(x) else np.zeros(features), sets
    )
    assert np.abs(expected - arithmetic).max() > 0.1
    for outputs in outputs_of_every_form(layer, sets):
        np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-4)


def test_odd_features_split_floor_then_ceil():
    layer = KolmogorovMeanAggregation(hidden_units=4, num_blocks=2)
    layer.build((None, None, 5))
    # m1: the last 3 features to shifts of the first 2; m2: back.
    shapes = [
        (tuple(hidden.kernel.shape), tuple(output.kernel.shape))
        for hidden, output in zip(
            layer.hidden_layers, layer.output_layers, strict=True
        )
    ]
    assert shapes == [((3, 4), (4, 2)), ((2, 4), (4, 3))] * 2
    assert all(output.bias is None for output in layer.output_layers)


def test_psi_inverse_inverts_psi_exactly():
    networks = known_networks(7, FEATURES, 6, 3)
    layer = layer_with(networks)
    x = np.random.default_rng(2).normal(0.0, 20.0, (64, FEATURES))
    x = x.astype("float32")
    mapped = layer.psi(ops.convert_to_tensor(x))
    np.testing.assert_allclose(
        ops.convert_to_numpy(mapped),
        psi_reference(x.astype("float64"), networks, FEATURES // 2),
        rtol=1e-4,
        atol=1e-3,
    )
    inverted = ops.convert_to_numpy(layer.psi_inverse(mapped))
    np.testing.assert_allclose(inverted, x, rtol=1e-5, atol=1e-3)
    back = layer.psi(layer.psi_inverse(ops.convert_to_tensor(x)))
    np.testing.assert_allclose(ops.convert_to_numpy(back), x, atol=1e-3)


def test_a_set_of_identical_elements_gives_that_element():
    layer = layer_with(known_networks(3, FEATURES, 8, 2))
    rng = np.random.default_rng(4)
    elements = rng.normal(0.0, 5.0, (6, FEATURES)).astype("float32")
    sizes = [1, 2, 3, 5, 4, 5]
    sets = [np.repeat(e[None], size, 0) for e, size in zip(elements, sizes)]
    for outputs in outputs_of_every_form(layer, sets):
        np.testing.assert_allclose(outputs, elements, rtol=1e-5, atol=1e-4)


def test_zero_output_kernels_give_the_arithmetic_mean():
    # psi = identity: the quasi-arithmetic mean is the mean.
    networks = [
        (kernel, bias, np.zeros_like(output))
        for kernel, bias, output in known_networks(5, FEATURES, 4, 2)
    ]
    expected = references(lambda x: x.mean(0) if len(x) else np.zeros(FEATURES))
    for outputs in outputs_of_every_form(layer_with(networks)):
        np.testing.assert_allclose(outputs, expected, rtol=1e-6, atol=1e-6)


def test_padding_changes_nothing_and_the_order_of_elements_neither():
    layer = layer_with(known_networks(6, FEATURES, 5, 2))
    outputs = []
    for padding in (0.0, -1e3, 7.5):
        values, mask = padded(SETS, padding=padding)
        outputs.append(ops.convert_to_numpy(layer(values, mask=mask)))
    for other in outputs[1:]:
        np.testing.assert_array_equal(other, outputs[0])
    values, mask = padded([x[::-1] for x in SETS])
    np.testing.assert_allclose(
        ops.convert_to_numpy(layer(values, mask=mask)),
        outputs[0],
        rtol=1e-5,
        atol=1e-5,
    )


def test_empty_sets_and_an_empty_set_axis_give_zero():
    layer = layer_with(known_networks(8, FEATURES, 4, 2))
    outputs = ops.convert_to_numpy(layer(np.zeros((2, 0, FEATURES), "f4")))
    np.testing.assert_array_equal(outputs, np.zeros((2, FEATURES)))
    outputs = layer(
        np.zeros((0, FEATURES), "float32"),
        segment_ids=np.zeros((0,), "int32"),
        num_segments=2,
    )
    np.testing.assert_array_equal(ops.convert_to_numpy(outputs), 0.0)


def test_one_fit_step_on_nan_padding_keeps_the_weights_finite():
    # Padded positions hold NaN: neither the loss nor any gradient may
    # see them.
    values, mask = padded(SETS)
    inputs = keras.Input((None, FEATURES))
    mask_input = keras.Input((None,), dtype="bool")
    layer = KolmogorovMeanAggregation()
    model = keras.Model([inputs, mask_input], layer(inputs, mask=mask_input))
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    before = [ops.convert_to_numpy(w) for w in model.trainable_weights]
    targets = np.random.default_rng(0).normal(size=(len(SETS), FEATURES))
    history = model.fit(
        [values, mask], targets.astype("float32"), epochs=1, verbose=0
    )
    assert np.isfinite(history.history["loss"][0])
    after = [ops.convert_to_numpy(w) for w in model.trainable_weights]
    assert all(np.all(np.isfinite(w)) for w in after)
    assert all(
        not np.array_equal(old, new)
        for old, new in zip(before, after, strict=True)
    )


def test_registry_multi_aggregation_and_serialization(tmp_path):
    layer = aggregations.get("kolmogorov_mean", name="pooling")
    assert type(layer) is KolmogorovMeanAggregation
    assert layer.name == "pooling" and layer.hidden_units == 128
    assert "kolmogorov_mean" in aggregations.POOLING_NAMES
    assert aggregations.output_width("kolmogorov_mean", FEATURES) == FEATURES
    values, mask = padded(SETS)
    combined = MultiAggregation(["kolmogorov_mean", "mean"])
    outputs = ops.convert_to_numpy(combined(values, mask=mask))
    assert outputs.shape == (len(SETS), 2 * FEATURES)
    np.testing.assert_allclose(
        outputs[:, FEATURES:],
        references(lambda x: x.mean(0) if len(x) else np.zeros(FEATURES)),
        rtol=1e-6,
    )
    inputs = keras.Input((None, FEATURES))
    mask_input = keras.Input((None,), dtype="bool")
    pooling = KolmogorovMeanAggregation(hidden_units=6, num_blocks=3)
    model = keras.Model([inputs, mask_input], pooling(inputs, mask=mask_input))
    model.save(tmp_path / "kolmogorov_mean.keras")
    reloaded = keras.models.load_model(tmp_path / "kolmogorov_mean.keras")
    padded_values = np.nan_to_num(values)
    np.testing.assert_allclose(
        ops.convert_to_numpy(reloaded([padded_values, mask])),
        ops.convert_to_numpy(model([padded_values, mask])),
        rtol=1e-6,
    )
    revived = reloaded.layers[-1]
    assert type(revived) is KolmogorovMeanAggregation
    assert (revived.hidden_units, revived.num_blocks) == (6, 3)
    assert keras_laf.aggregations.KolmogorovMeanAggregation is (
        KolmogorovMeanAggregation
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"hidden_units": 0}, "Received: hidden_units=0"),
        ({"hidden_units": 2.5}, "hidden_units=2.5"),
        ({"hidden_units": True}, "hidden_units=True"),
        ({"num_blocks": -1}, "Received: num_blocks=-1"),
        ({"num_blocks": "2"}, "num_blocks='2'"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        KolmogorovMeanAggregation(**kwargs)


def test_one_feature_is_refused_with_the_alternative():
    with pytest.raises(ValueError, match=r"at least 2 features.*GenAgg"):
        KolmogorovMeanAggregation()(np.zeros((2, 3, 1), "float32"))
    with pytest.raises(ValueError, match=r"inputs.shape=\(None, 1\)"):
        KolmogorovMeanAggregation().build((None, 1))


@pytest.mark.parametrize("init_kwargs", [{}, {"num_blocks": 3}])
def test_run_layer_test_on_every_backend(init_kwargs, tmp_path):
    # The shared checks of tests/test_every_layer.py (config, symbolic
    # call, .keras round trip, a training step, mixed precision, masks),
    # here on every backend. With the default 128 ReLU units, kinks of
    # every coupling fall among the elements of a set, so that every
    # weight has a gradient.
    from layer_test_case import run_layer_test

    values = np.random.default_rng(0).uniform(-1.0, 1.0, (2, 3, FEATURES))
    mask = np.array([[True, True, True], [True, True, False]])
    run_layer_test(
        KolmogorovMeanAggregation,
        init_kwargs,
        {"inputs": values.astype("float32"), "mask": mask},
        (2, FEATURES),
        tmp_path,
        masks={"inputs": "mask"},
    )

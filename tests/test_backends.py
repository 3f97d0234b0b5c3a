"""Tests that run on every Keras backend (TensorFlow, JAX and PyTorch in CI).

Inputs are NumPy arrays, padded with a mask or flat with segment ids, and
results are checked against NumPy, so the same file checks each backend
against the same reference. Ragged tensors exist only in TensorFlow; their
cases are marked `tensorflow_only`.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
from keras import ops

import keras_laf
from keras_laf import models
from keras_laf.sets import is_ragged

pytestmark = pytest.mark.multi_backend

BACKEND = keras.config.backend()
ON_TENSORFLOW = BACKEND == "tensorflow"
NEEDS_TENSORFLOW = "ragged tensors and tf.function need TensorFlow"


def numpy(tensor):
    return ops.convert_to_numpy(tensor)


def padded(sets, set_size):
    """Padded values `(batch, set_size, features)` and a boolean mask."""
    values = np.zeros((len(sets), set_size, sets[0].shape[1]), "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for i, elements in enumerate(sets):
        values[i, : len(elements)] = elements
        mask[i, : len(elements)] = True
    return values, mask


def flat(sets):
    """Flat values `(num_elements, features)` and their segment ids."""
    ids = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    return np.concatenate(sets).astype("float32"), ids.astype("int32")


@pytest.fixture
def sets():
    rng = np.random.default_rng(0)
    return [rng.uniform(0.05, 0.95, (n, 2)) for n in (3, 1, 5)]


REFERENCES = {
    "sum": np.sum,
    "mean": np.mean,
    "count": len,
    "max": np.max,
    "min": np.min,
}


@pytest.mark.parametrize("form", ["padded", "segments"])
def test_laf_closed_forms_match_numpy(sets, form):
    layer = keras_laf.LAF.from_closed_forms(
        [
            "sum",
            "mean",
            "count",
            {"name": "max", "r": 200},
            {"name": "min", "r": 200},
        ],
        flatten=False,
        exponent_constraint=keras_laf.constraints.BoundedNonNeg(1000.0),
    )
    if form == "padded":
        outputs = layer(*padded(sets, 6)[:1], mask=padded(sets, 6)[1])
    else:
        values, ids = flat(sets)
        outputs = layer(values, segment_ids=ids, num_segments=len(sets))
    outputs = numpy(outputs)
    for i, elements in enumerate(sets):
        for k, reference in enumerate(REFERENCES.values()):
            expected = [reference(elements[:, j]) for j in range(2)]
            # (sum x^200)^(1/200) and its min counterpart approximate.
            tolerance = 2e-2 if k >= 3 else 1e-5
            np.testing.assert_allclose(
                outputs[i, :, k], expected, rtol=tolerance
            )


@pytest.mark.parametrize("form", ["padded", "segments"])
def test_laf_output_bound_holds_on_a_runaway_unit(form):
    # 2 (sum x)^1.25 over a constant: the floor 2 N^1.25 / bound on its
    # denominator stops it at bound * 0.9^1.25 on sets of 0.9s, where
    # without the bound it grows as N^1.25.
    exponents = np.zeros((8, 1), "float32")
    exponents[:2, 0] = [1.25, 1.0]
    coefficients = np.array([[2.0], [0.0], [1.0], [0.0]], "float32")
    sets = [np.full((n, 1), 0.9) for n in (2, 30)]
    for bound, expected in (
        (float("inf"), [2 * (0.9 * n) ** 1.25 for n in (2, 30)]),
        (8.0, [2 * 1.8**1.25, 8 * 0.9**1.25]),
    ):
        layer = keras_laf.LAF(1, output_bound=bound)
        layer.build((None, None, 1))
        layer.set_weights([exponents, coefficients])
        if form == "padded":
            values, mask = padded(sets, 30)
            outputs = layer(values, mask=mask)
        else:
            values, ids = flat(sets)
            outputs = layer(values, segment_ids=ids, num_segments=2)
        np.testing.assert_allclose(numpy(outputs)[:, 0], expected, rtol=1e-5)


def test_laf_gradients_finite_and_padding_inert(sets):
    layer = keras_laf.LAF(units=4)
    values, mask = padded(sets, 6)
    garbage = np.where(mask[..., None], values, 1e30).astype("float32")
    np.testing.assert_allclose(
        numpy(layer(garbage, mask=mask)), numpy(layer(values, mask=mask))
    )
    model = keras.Sequential(
        [keras.Input((6, 2)), layer, keras.layers.Dense(1)]
    )
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(values, np.ones((3, 1)), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert all(np.isfinite(numpy(w)).all() for w in model.weights)


def numpy_laf(elements, exponents, coefficients, epsilon=1e-7):
    """LAF of one set of one feature in float64 NumPy, from the formula:
    `elements` `(n,)`, exponents `(8,)`, coefficients `(4,)`. A sum over
    no element is 0 and 0^0 = 1; the denominator's magnitude is floored
    at `epsilon`, keeping its sign."""
    a, b, c, d, e, f, g, h = exponents
    alpha, beta, gamma, delta = coefficients
    x = np.maximum(elements, epsilon)
    y = np.maximum(1.0 - elements, epsilon)
    numerator = alpha * np.sum(x**b) ** a + beta * np.sum(y**d) ** c
    denominator = gamma * np.sum(x**f) ** e + delta * np.sum(y**h) ** g
    magnitude = max(abs(denominator), epsilon)
    return numerator / (magnitude if denominator >= 0 else -magnitude)


@pytest.mark.parametrize("set_size", [0, 3])
def test_laf_on_empty_set_axis_equals_numpy(set_size):
    # A set axis of size 0 (every set empty) goes through every backend's
    # reductions, and gives the formula's value on the empty set.
    forms = ["sum", "count", "mean", "max", "min", {"name": "moment", "k": 2}]
    layer = keras_laf.LAF.from_closed_forms(forms, flatten=False)
    values = np.random.default_rng(3).uniform(0.1, 0.9, (2, set_size, 3))
    outputs = numpy(layer(values.astype("float32")))
    assert outputs.shape == (2, 3, len(forms))
    exponents, coefficients = (numpy(w) for w in layer.weights)
    expected = [
        [
            [
                numpy_laf(values[i, :, j], exponents[:, k], coefficients[:, k])
                for k in range(len(forms))
            ]
            for j in range(3)
        ]
        for i in range(2)
    ]
    np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 0, 3), (0, 4, 3), (0, 0, 3)])
def test_laf_on_empty_set_axis_or_batch(shape):
    # No set, or only empty sets: shapes with a 0 must go through every
    # reshape; an empty set axis gives what fully masked sets give.
    layer = keras_laf.LAF(units=3)
    outputs = numpy(layer(np.zeros(shape, "float32")))
    assert outputs.shape == (shape[0], 9)
    masked = layer(
        np.full((shape[0], 4, 3), 0.3, "float32"),
        mask=np.zeros((shape[0], 4), bool),
    )
    np.testing.assert_allclose(outputs, numpy(masked))


def differentiable_laf(x, real, exponents, coefficients, power):
    """LAF written out in `keras.ops`, for the backend's autodiff: x `(sets,
    set_size, features, 1)`, `real` its mask broadcast alike, `power(source,
    b)` the elementwise power source^b; `(sets, features, units)`."""

    def term(source, outer, inner):
        powers = ops.where(real, power(source, exponents[inner]), 0.0)
        return ops.sum(powers, axis=1) ** exponents[outer]

    numerator = coefficients[0] * term(x, 0, 1) + coefficients[1] * term(
        1 - x, 2, 3
    )
    denominator = coefficients[2] * term(x, 4, 5) + coefficients[3] * term(
        1 - x, 6, 7
    )
    return numerator / denominator


def value_and_gradients(function, *args):
    """`function(*args)` and its gradients w.r.t. every arg, by the
    backend's own autodiff."""
    if BACKEND == "jax":
        import jax

        value, gradients = jax.value_and_grad(
            lambda *a: ops.sum(function(*a)), argnums=tuple(range(len(args)))
        )(*args)
        return [value, *gradients]
    if BACKEND == "torch":
        import torch

        args = [torch.tensor(arg, requires_grad=True) for arg in args]
        value = ops.sum(function(*args))
        return [value.detach(), *torch.autograd.grad(value, args)]
    import tensorflow as tf

    args = [tf.constant(arg) for arg in args]
    with tf.GradientTape() as tape:
        tape.watch(args)
        value = ops.sum(function(*args))
    return [value, *tape.gradient(value, args)]


@pytest.mark.parametrize(
    "form, padded_budget",
    [
        ("padded", 1),
        ("padded", 48 * 16),
        ("padded", None),
        ("padded", "auto"),
        ("segments", 1),
    ],
    ids=[
        "padded-chunks",
        "padded-overlapping-chunks",
        "padded-whole-sets",
        "padded-exponentials-kept",
        "segments-chunks",
    ],
)
def test_laf_gradients_over_many_chunks_match_the_formula(
    form, padded_budget, chunk_budget
):
    # The power sums loop over chunks of the set axis with a hand-written
    # gradient. With one value per chunk allowed, sets of 40 elements are
    # summed one element at a time; padded sets with 16 elements' values
    # (48 each) allowed, in three chunks of 14, the last
    # overlapping the one before. With None, padded sets are one chunk, as
    # on a GPU; with the CPU's budget too, and then, except in TensorFlow's
    # programs, the gradient reuses the forward pass's exponentials.
    # Compare the value and the gradients with respect to the elements,
    # exponents and coefficients with autodiff of the formula written with
    # powers.
    chunk_budget(padded=padded_budget, segments=1)
    rng = np.random.default_rng(7)
    sets_ = [rng.uniform(0.05, 0.95, (n, 2)) for n in (40, 23)]
    exponents = rng.uniform(0.2, 1.5, (8, 3)).astype("float32")
    coefficients = rng.uniform(0.5, 1.5, (4, 3)).astype("float32")
    weights = ops.convert_to_tensor(rng.normal(size=(2, 2, 3)), "float32")
    padded_values, mask = padded(sets_, 40)
    flat_values, ids = flat(sets_)
    # Position in the flat values of each padded element (0 at padding).
    positions = np.zeros(mask.shape, "int32")
    positions[mask] = np.arange(len(ids))

    def as_padded(values):
        if form == "padded":
            return values
        return ops.take(values, positions, axis=0)

    def formula(values, exponents, coefficients):
        # (sets, set_size, features, 1), padding excluded from the sums
        # and set to 0.5 first, so that no power of 0 makes its gradient
        # NaN.
        real = mask[:, :, None, None]
        x = ops.where(real, as_padded(values)[..., None], 0.5)
        outputs = differentiable_laf(
            x, real, exponents, coefficients, lambda source, b: source**b
        )
        return outputs * weights

    def layer_function(values, exponents, coefficients):
        if form == "padded":
            return weights * keras_laf.laf(
                values, exponents, coefficients, mask=mask
            )
        return weights * keras_laf.laf(
            values, exponents, coefficients, segment_ids=ids, num_segments=2
        )

    values = padded_values if form == "padded" else flat_values
    computed = value_and_gradients(
        layer_function, values, exponents, coefficients
    )
    expected = value_and_gradients(formula, values, exponents, coefficients)
    for got, want in zip(computed, expected):
        np.testing.assert_allclose(
            numpy(got), numpy(want), rtol=2e-3, atol=1e-5
        )


def test_sets_any_is_any_over_the_real_elements():
    # Padding never counts; an empty set is False, padded or as a segment
    # with no element (TensorFlow fills those with the lowest int).
    from keras_laf.sets import PaddedSets
    from keras_laf.sets import SegmentSets

    flags = [
        np.array([[False, True], [False, False]]),
        np.zeros((0, 2), bool),
        np.array([[False, False], [False, False], [True, False]]),
    ]
    expected = np.array([f.any(0) for f in flags])
    values = np.ones((3, 3, 2), bool)  # True at padding too
    mask = np.zeros((3, 3), bool)
    for i, f in enumerate(flags):
        values[i, : len(f)] = f
        mask[i, : len(f)] = True
    padded_any = PaddedSets(ops.convert_to_tensor(mask)).any(
        ops.convert_to_tensor(values)
    )
    np.testing.assert_array_equal(numpy(padded_any), expected)
    ids = np.repeat(np.arange(3), [len(f) for f in flags]).astype("int32")
    segments = SegmentSets(ops.convert_to_tensor(ids), 3)
    segment_any = segments.any(ops.convert_to_tensor(np.concatenate(flags)))
    np.testing.assert_array_equal(numpy(segment_any), expected)


@pytest.mark.parametrize("padded_budget", [1, None, "auto"])
def test_laf_gradients_at_the_floor_of_the_logs_match_the_formula(
    padded_budget, chunk_budget
):
    # The logs are floored at epsilon: log max(x, 1e-7) and log max(1 - x,
    # 1e-7). Below the floor (x = 0, x = 1e-9, x = 1) a source's power sums
    # do not depend on x, so its share of the gradient is 0, while the
    # other source's is not. Compare the gradient from recomputed
    # exponentials (in chunks of one element, and in one) and from kept
    # ones with autodiff of the formula with the floored logs written out.
    chunk_budget(padded=padded_budget)
    epsilon = 1e-7
    rng = np.random.default_rng(11)
    values = rng.uniform(0.05, 0.95, (2, 6, 2)).astype("float32")
    values[0, :3, 0] = [0.0, 1e-9, 1.0]
    values[1, 2:5, 1] = [1.0, 0.0, 0.0]
    mask = np.arange(6) < np.array([[6], [5]])
    exponents = rng.uniform(0.2, 1.5, (8, 3)).astype("float32")
    coefficients = rng.uniform(0.5, 1.5, (4, 3)).astype("float32")

    def formula(values, exponents, coefficients):
        def floored_power(source, b):
            return ops.exp(b * ops.log(ops.maximum(source, epsilon)))

        return differentiable_laf(
            values[..., None],
            mask[:, :, None, None],
            exponents,
            coefficients,
            floored_power,
        )

    def layer_function(values, exponents, coefficients):
        return keras_laf.laf(
            values, exponents, coefficients, mask=mask, epsilon=epsilon
        )

    computed = value_and_gradients(
        layer_function, values, exponents, coefficients
    )
    expected = value_and_gradients(formula, values, exponents, coefficients)
    for got, want in zip(computed, expected):
        np.testing.assert_allclose(
            numpy(got), numpy(want), rtol=2e-3, atol=1e-5
        )


@pytest.mark.parametrize("num_elements, units", [(5, 3), (5, 13), (4100, 13)])
def test_backend_hooks_compute_what_numpy_computes(num_elements, units):
    # Each backend lays a sum or a loop out its own way
    # (keras_laf/ops/backend/<backend>.py); all compute the same. On JAX
    # the gradient's sum over the units is written out term by term up to
    # 12 units, a reduction with 13 on short sets, and written out again
    # on sets longer than 4096; the sums over the elements are one
    # reduction with two operands.
    from keras_laf.ops import backend
    from keras_laf.ops.power_sums import PADDING_SHIFTED_LOG
    from keras_laf.ops.power_sums import PaddedPowerSums

    rng = np.random.default_rng(8)
    rows = 6
    y = -rng.uniform(0, 3, (2, 1, num_elements, rows)).astype("float32")
    padding = rng.uniform(size=(num_elements, rows)) < 0.3
    # Padding marked in the shifted logs, as `PaddedPowerSums` marks it.
    y_marked = np.where(padding, PADDING_SHIFTED_LOG, y)
    q = rng.uniform(0, 2, (2, 2 * units)).astype("float32")
    weights = rng.normal(size=(2, 2 * units, rows)).astype("float32")
    # sum_k weights_k exp(y q_k) over the units k, zero at padding.
    expected = np.einsum(
        "skr,sknr->snr",
        weights,
        np.exp(y * q[:, :, None, None]) * ~padding,
    )
    computed = backend.weighted_sum_over_units(
        PaddedPowerSums.exponentials,
        *(ops.convert_to_tensor(array) for array in (y_marked, q, weights)),
    )
    np.testing.assert_allclose(numpy(computed), expected, rtol=1e-5, atol=1e-6)
    # The power sums and their derivatives by q over the elements.
    terms = np.exp(y * q[:, :, None, None]) * ~padding
    sums, derivatives = backend.sums_over_elements(
        ops.convert_to_tensor(terms), ops.convert_to_tensor(y)
    )
    np.testing.assert_allclose(numpy(sums), terms.sum(2), rtol=1e-5)
    np.testing.assert_allclose(
        numpy(derivatives), (y * terms).sum(2), rtol=1e-5, atol=1e-6
    )
    chunks = ops.convert_to_tensor(weights)

    def chunk_outputs(index):
        return (ops.take(chunks, index, axis=0),)

    (total,) = backend.sum_over_chunks(
        chunk_outputs, 2, (ops.zeros(weights.shape[1:]),)
    )
    np.testing.assert_allclose(numpy(total), numpy(weights).sum(0), rtol=1e-6)


def padded_layout(values, mask, budget):
    """`PaddedPowerSums` of LAF(2) on padded `values` with `mask`."""
    from keras_laf.ops import power_sums

    return power_sums.padded_power_sums(
        ops.convert_to_tensor(values),
        ops.convert_to_tensor(mask),
        1e-7,
        2,
        budget,
    )


def numpy_power_terms(values, mask, max_logs, q, epsilon=1e-7):
    """NumPy reference of `PaddedPowerSums`, in its layout: the shifted
    logs y = log x - M `(2, set_size, sets * features)`, 0 at padding, and
    the exponentials exp(y q) `(2, 2 * units, set_size, sets * features)`,
    0 at padding."""
    num_sets, set_size, features = values.shape
    x = np.transpose(values, (1, 0, 2)).reshape(set_size, -1)
    real = mask.T.repeat(features, 1)
    logs = np.log(np.maximum(np.stack([x, 1 - x]), epsilon))
    y = np.where(real, logs - max_logs[:, None], 0.0)
    return y, np.exp(y[:, None] * q[:, :, None, None]) * real


@pytest.mark.parametrize(
    "budget, kept", [(2**19, True), (None, False), (64, False)]
)
def test_padded_power_sums_keep_exponentials_only_within_a_budget(budget, kept):
    # Sets that fit one chunk of a budget keep their exponentials for the
    # gradient; without a budget (a GPU's) or over several chunks, none.
    from keras_laf.ops import power_sums

    rng = np.random.default_rng(9)
    values = rng.uniform(0.05, 0.95, (3, 5, 2)).astype("float32")
    mask = np.arange(5) < np.array([[5], [2], [4]])
    q = rng.uniform(0, 2, (2, 4)).astype("float32")
    layout = padded_layout(values, mask, budget)
    assert layout.keeps_exponentials is kept
    m = power_sums.max_logs(layout, values)
    sums, _, exponentials = power_sums.sums(layout, values, m, q)
    if not kept:
        assert exponentials is None
        return
    _, expected = numpy_power_terms(values, mask, numpy(m), q)
    np.testing.assert_allclose(numpy(exponentials), expected, rtol=1e-5)
    np.testing.assert_allclose(numpy(sums), expected.sum(2), rtol=1e-5)


def test_padded_sets_cut_into_chunks_hold_at_most_the_backends_most():
    # Where the budget cuts sets into chunks, a backend may cut them
    # smaller (JAX: 16 elements, for its one reduction per chunk); sets
    # that fit one chunk stay whole, and the sums are the same.
    from keras_laf.ops import backend
    from keras_laf.ops import power_sums

    most = backend.most_elements_per_chunk()
    rng = np.random.default_rng(10)
    # 2 sets x 3 features x 2 sources x 4 inner exponents = 48 values per
    # element: a budget of 48 * 64 values makes chunks of 64 elements.
    values = rng.uniform(0.05, 0.95, (2, 150, 3)).astype("float32")
    mask = np.arange(150) < np.array([[150], [97]])
    q = rng.uniform(0, 2, (2, 4)).astype("float32")
    layouts = {
        budget: padded_layout(values, mask, budget)
        for budget in (48 * 64, 48 * 256, None)
    }
    # 150 elements in chunks of at most 64, or of the backend's most.
    assert layouts[48 * 64].num_chunks == -(-150 // min(64, most or 64))
    assert layouts[48 * 64].chunk_size <= min(64, most or 64)
    assert not layouts[48 * 64].keeps_exponentials
    # Sets that fit one chunk of the budget stay whole.
    assert layouts[48 * 256].num_chunks == 1
    assert layouts[48 * 256].keeps_exponentials
    for layout in layouts.values():
        m = power_sums.max_logs(layout, values)
        sums, derivatives, _ = power_sums.sums(layout, values, m, q)
        y, terms = numpy_power_terms(values, mask, numpy(m), q)
        np.testing.assert_allclose(numpy(sums), terms.sum(2), rtol=1e-5)
        np.testing.assert_allclose(
            numpy(derivatives),
            (y[:, None] * terms).sum(2),
            rtol=1e-4,
            atol=1e-5,
        )


@pytest.mark.parametrize("budget", [None, 48 * 2])
def test_padding_adds_nothing_whatever_the_inner_exponents(budget):
    # Padding is marked in the shifted logs, and the inner exponents are
    # offset by a tiny amount so that it adds 0 whatever q is: q = 0 (0^0
    # = 1 counts real elements only), q tiny, q large (where padding's
    # exponent overflows to -inf), in one chunk or in five whose last
    # overlaps the one before; and the gradient of the elements is 0 at
    # padding, finite everywhere.
    from keras_laf.ops import power_sums

    rng = np.random.default_rng(11)
    values = rng.uniform(0.0, 1.0, (2, 9, 3)).astype("float32")
    values[0, 0] = 0.0
    values[1, 1] = 1.0
    mask = np.arange(9) < np.array([[6], [2]])
    # Padding holds the extremes too: it must not count.
    values[0, 8], values[1, 5] = 1.0, 0.0
    q = np.array([[0.0, 1e-30, 0.5, 12.0]] * 2, "float32")
    layout = padded_layout(values, mask, budget)
    assert layout.num_chunks == (1 if budget is None else 5)
    m = power_sums.max_logs(layout, values)
    sums, derivatives, kept = power_sums.sums(layout, values, m, q)
    y, terms = numpy_power_terms(values, mask, numpy(m), q)
    np.testing.assert_allclose(numpy(sums), terms.sum(2), rtol=1e-5)
    # q = 0 and q = 1e-30 count the real elements: 6 and 2 per feature.
    np.testing.assert_array_equal(
        numpy(sums)[:, :2], [[[6] * 3 + [2] * 3] * 2] * 2
    )
    np.testing.assert_allclose(
        numpy(derivatives),
        (y[:, None] * terms).sum(2),
        rtol=1e-4,
        atol=1e-5,
    )
    upstream = rng.normal(size=(2, 4, 6)).astype("float32")
    gradients = numpy(
        power_sums.value_gradients(layout, values, m, q, upstream, kept)
    )
    assert np.isfinite(gradients).all()
    np.testing.assert_array_equal(gradients[~mask], 0.0)
    assert (gradients[mask] != 0.0).any()


@pytest.mark.parametrize(
    "layer",
    [
        lambda: keras_laf.FixedAggregation(["sum", "max", "mean"]),
        lambda: keras_laf.LAF(units=3),
        lambda: keras_laf.PermutationEquivariant(4),
        lambda: keras_laf.SAB(dim=4, num_heads=2),
        lambda: keras_laf.ISAB(dim=4, num_heads=2, num_inducing=2),
        lambda: keras_laf.PMA(num_seeds=1, dim=4, num_heads=2),
        lambda: keras_laf.PerElement(keras.layers.Dense(3)),
    ],
    ids=["fixed", "laf", "equivariant", "sab", "isab", "pma", "per_element"],
)
def test_layers_padded_with_mask_equal_each_set_alone(sets, layer):
    layer = layer()
    values, mask = padded(sets, 6)
    outputs = numpy(layer(values, mask=mask))
    for i, elements in enumerate(sets):
        alone = numpy(layer(elements[None].astype("float32")))[0]
        if outputs.ndim == 3 and outputs.shape[1] == 6:  # keeps the set
            np.testing.assert_allclose(
                outputs[i, : len(elements)], alone, rtol=1e-4, atol=1e-6
            )
        else:
            np.testing.assert_allclose(outputs[i], alone, rtol=1e-4, atol=1e-6)


def test_graph_layers():
    # A path 0 - 1 - 2 and a lone node 3.
    source = np.array([0, 1, 1, 2], "int32")
    target = np.array([1, 0, 2, 1], "int32")
    features = np.random.default_rng(1).uniform(size=(4, 2)).astype("float32")
    layer = keras_laf.MessagePassing(3, aggregation="laf", laf_units=2)
    outputs = numpy(layer(features, source, target))
    assert outputs.shape == (4, 3) and np.isfinite(outputs).all()
    aggregates = numpy(layer.aggregate_neighbours(features, source, target))
    order = [3, 1, 0, 2]  # the same edges in another order
    np.testing.assert_allclose(
        numpy(
            layer.aggregate_neighbours(features, source[order], target[order])
        ),
        aggregates,
        rtol=1e-5,
    )
    readout = keras_laf.GraphReadout(["mean", "max"])
    graph_ids = np.array([0, 0, 0, 1], "int32")
    expected = [
        np.stack([features[:3].mean(0), features[:3].max(0)], -1).ravel(),
        np.stack([features[3], features[3]], -1).ravel(),
    ]
    np.testing.assert_allclose(
        numpy(readout(features, graph_ids, num_graphs=2)), expected, rtol=1e-6
    )


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
        lambda: models.deep_sets(vocabulary_size=10, laf_units=3, ragged=False),
        lambda: models.set_transformer(
            input_dim=1, hidden_units=8, num_heads=2, ragged=False
        ),
        lambda: models.point_cloud_classifier(
            num_classes=3,
            hidden_units=8,
            pooling="laf",
            laf_units=4,
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
    model = models.deep_sets(vocabulary_size=10, laf_units=3)
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


def test_graph_readout_with_nodes_per_graph_matches_numpy():
    rng = np.random.default_rng(4)
    features = rng.uniform(size=(7, 2)).astype("float32")
    graph_ids = np.array([2, 0, 0, 2, 1, 0, 2], "int32")  # unsorted
    # A fourth graph without nodes, which max(graph_ids) + 1 cannot count.
    nodes_per_graph = np.array([3, 1, 3, 0], "int32")
    expected = np.zeros((4, 2, 3), "float32")
    for graph in range(3):
        members = features[graph_ids == graph]
        expected[graph] = np.stack(
            [members.sum(0), members.mean(0), members.max(0)], -1
        )
    expected = expected.reshape(4, 6)
    readout = keras_laf.GraphReadout(["sum", "mean", "max"])
    outputs = numpy(
        readout(features, graph_ids, nodes_per_graph=nodes_per_graph)
    )
    np.testing.assert_allclose(outputs, expected, rtol=1e-6)
    # The number of graphs from the ids, as without `nodes_per_graph`.
    np.testing.assert_allclose(
        outputs[:3], numpy(readout(features, graph_ids)), rtol=1e-6
    )
    # In a model, where the number of graphs is the input's leading shape.
    inputs = [
        keras.Input((2,)),
        keras.Input((), dtype="int32"),
        keras.Input((), dtype="int32"),
    ]
    model = keras.Model(
        inputs, readout(inputs[0], inputs[1], nodes_per_graph=inputs[2])
    )
    np.testing.assert_allclose(
        numpy(model([features, graph_ids, nodes_per_graph])),
        expected,
        rtol=1e-6,
    )


def graph_batches():
    """Endless disjoint-union batches of 2 and of 3 graphs for `fit`."""
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
        )
        for sizes in [(3, 4), (4, 1, 3)]
    ]
    while True:
        yield from batches


def test_graph_network_defaults_fit():
    # The numbers of nodes, edges and graphs change from batch to batch;
    # JAX traces the model with the number of graphs as a shape, the
    # length of `nodes_per_graph`.
    model = models.graph_network()
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(graph_batches(), steps_per_epoch=4, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    inputs, targets = next(graph_batches())
    outputs = model.predict_on_batch(inputs)
    assert outputs["graph_outputs"].shape == targets["graph_outputs"].shape
    assert outputs["node_outputs"].shape == targets["node_outputs"].shape


def test_save_and_reload(tmp_path, sets):
    values, mask = padded(sets, 6)
    model = saved_model_for_backends(os.path.join(tmp_path, "laf.keras"))
    reloaded = keras.models.load_model(os.path.join(tmp_path, "laf.keras"))
    np.testing.assert_array_equal(
        numpy(reloaded([values, mask])), numpy(model([values, mask]))
    )


def saved_model_for_backends(path):
    """Builds, fits a step and saves a LAF model at `path`."""
    keras.utils.set_random_seed(3)
    inputs = keras.Input((6, 2), name="sets")
    mask = keras.Input((6,), name="mask")
    hidden = keras.layers.Dense(4, activation="sigmoid")(inputs)
    pooled = keras_laf.LAF(units=3, name="laf")(hidden, mask=mask)
    model = keras.Model([inputs, mask], keras.layers.Dense(1)(pooled))
    model.compile(optimizer="adam", loss="mse")
    model.fit(
        [np.ones((2, 6, 2), "float32"), np.ones((2, 6), "float32")],
        np.ones((2, 1)),
        verbose=0,
    )
    model.save(path)
    return model


CROSS_BACKEND_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import keras
    import keras_laf
    sys.path.insert(0, {tests!r})
    from test_backends import padded, saved_model_for_backends

    rng = np.random.default_rng(0)
    sets = [rng.uniform(0.05, 0.95, (n, 2)) for n in (3, 1, 5)]
    values, mask = padded(sets, 6)
    if sys.argv[1] == "save":
        model = saved_model_for_backends(sys.argv[2])
    else:
        model = keras.models.load_model(sys.argv[2])
    predictions = keras.ops.convert_to_numpy(model([values, mask]))
    print(json.dumps(predictions.tolist()))
    """
)


def run_on_backend(backend, *args, env=None):
    script = CROSS_BACKEND_SCRIPT.format(tests=os.path.dirname(__file__))
    completed = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KERAS_BACKEND": backend, **(env or {})},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return np.array(json.loads(completed.stdout.strip().splitlines()[-1]))


ALL_BACKENDS = ("tensorflow", "jax", "torch")


@pytest.mark.slow
@pytest.mark.parametrize("saving", ALL_BACKENDS)
def test_saved_model_predicts_the_same_on_the_other_backends(tmp_path, saving):
    for module in ALL_BACKENDS:
        pytest.importorskip(module)
    path = os.path.join(tmp_path, "laf.keras")
    saved = run_on_backend(saving, "save", path)
    for loading in ALL_BACKENDS:
        if loading != saving:
            loaded = run_on_backend(loading, "load", path)
            # float32 round-off differs between the backends.
            np.testing.assert_allclose(
                loaded, saved, rtol=1e-4, atol=1e-5, err_msg=loading
            )


DATA_PARALLEL_SCRIPT = textwrap.dedent(
    """
    import keras
    import numpy as np
    from keras_laf import models

    devices = keras.distribution.list_devices("cpu")
    assert len(devices) == 2, devices
    keras.distribution.set_distribution(
        keras.distribution.DataParallel(devices=devices)
    )
    rng = np.random.default_rng(0)
    digits = rng.integers(0, 10, (64, 5)).astype("int32")
    mask = (rng.uniform(size=(64, 5)) < 0.8).astype("float32")
    sums = (digits * mask).sum(1, keepdims=True)
    model = models.deep_sets(
        vocabulary_size=10, phi_units=(), laf_units=3, ragged=False
    )
    model.compile(optimizer="adam", loss="mae")
    history = model.fit([digits, mask], sums, batch_size=16, epochs=2,
                        verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    sharding = model.weights[0].value.sharding
    print("data parallel ok on", len(sharding.device_set), "devices")
    """
)


@pytest.mark.slow
def test_jax_data_parallel_on_two_virtual_cpus():
    pytest.importorskip("jax")
    completed = subprocess.run(
        [sys.executable, "-c", DATA_PARALLEL_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "KERAS_BACKEND": "jax",
            # Read when JAX starts, hence the subprocess.
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        },
    )
    assert "data parallel ok on 2 devices" in completed.stdout, (
        completed.stderr[-3000:]
    )


# NaN and inf in real elements (issue 10, item 1).


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("form", ["padded", "segments", "ragged"])
def test_nonfinite_element_makes_its_set_nan(sets, form, bad_value):
    if form == "ragged" and not ON_TENSORFLOW:
        pytest.skip(NEEDS_TENSORFLOW)
    sets[0][1, 0] = bad_value  # set 0, feature 0
    layer = keras_laf.LAF(units=2, flatten=False)
    if form == "padded":
        values, mask = padded(sets, 6)
        # Padding holds NaN too: it must have no effect.
        values[~mask] = np.nan
        outputs = layer(values, mask=mask)
    elif form == "segments":
        values, ids = flat(sets)
        outputs = layer(values, segment_ids=ids, num_segments=len(sets))
    else:
        import tensorflow as tf

        values, ids = flat(sets)
        outputs = layer(tf.RaggedTensor.from_value_rowids(values, ids))
    outputs = numpy(outputs)
    assert np.isnan(outputs[0, 0]).all()
    assert np.isfinite(outputs[0, 1]).all()  # the other feature
    assert np.isfinite(outputs[1:]).all()  # the other sets


def test_terminate_on_nan_stops_fit(sets):
    values, mask = padded(sets, 6)
    values[2, 4, 1] = np.nan
    model = keras.Sequential(
        [keras.Input((6, 2)), keras_laf.LAF(units=2), keras.layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(
        values,
        np.ones((3, 1)),
        batch_size=3,
        epochs=5,
        verbose=0,
        callbacks=[keras.callbacks.TerminateOnNaN()],
    )
    assert len(history.history["loss"]) == 1
    assert np.isnan(history.history["loss"][0])


# Elements outside [0, 1] are told, not clipped (issue 37, item 4).

FORMS = ["padded", "segments", "ragged"]


def call_in_form(function, sets, form, padding=0.0):
    """`function(inputs, **kwargs)` on `sets` in `form`: padded with a mask
    (the padding holding `padding`), flat with segment ids, or ragged."""
    if form == "ragged" and not ON_TENSORFLOW:
        pytest.skip(NEEDS_TENSORFLOW)
    if form == "padded":
        values, mask = padded(sets, 6)
        values[~mask] = padding
        return function(values, mask=mask)
    values, ids = flat(sets)
    if form == "segments":
        return function(values, segment_ids=ids, num_segments=len(sets))
    import tensorflow as tf

    return function(tf.RaggedTensor.from_value_rowids(values, ids))


def unit_interval_error(low, high):
    """The message of elements in [low, high], as a pattern."""
    return re.escape(
        f"aggregates values in [0, 1]; received values in [{low!s}, "
        f"{high!s}]. Put a sigmoid (as the paper does) or another map into "
        "[0, 1] before the layer, e.g. keras.layers.Activation('sigmoid')."
    )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shift", [1.0, -1.0])
def test_elements_outside_unit_interval_are_an_error_in_eager_calls(
    sets, form, shift
):
    # The case: the mean of sets in [1, 2] was 1.0, every input
    # clipped. The padding, far out of range, is neither an error nor in
    # the range the message gives.
    shifted = [elements + shift for elements in sets]
    real = np.concatenate(shifted).astype("float32")
    layer = keras_laf.LAF.from_closed_forms(["mean"])
    with pytest.raises(
        ValueError, match=unit_interval_error(real.min(), real.max())
    ):
        call_in_form(layer, shifted, form, padding=7.0)


@pytest.mark.parametrize("form", FORMS)
def test_elements_within_rounding_of_unit_interval_are_accepted(sets, form):
    sets[0][0, 0] = 1 + 1e-7
    sets[1][0, 1] = -1e-7
    layer = keras_laf.LAF.from_closed_forms(["mean", "sum"], flatten=False)
    outputs = numpy(call_in_form(layer, sets, form, padding=7.0))
    for i, elements in enumerate(sets):
        clipped = np.clip(elements.astype("float32"), 0.0, 1.0)
        # atol: x is floored at epsilon (1e-7) inside the logarithm.
        for k, reference in enumerate([clipped.mean(0), clipped.sum(0)]):
            np.testing.assert_allclose(
                outputs[i, :, k], reference, rtol=1e-5, atol=1e-6
            )


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bad_value", [1.5, -0.5, 1 + 1e-5])
def test_element_outside_unit_interval_makes_its_set_nan(sets, form, bad_value):
    # What a traced call (`Model.fit`, `predict`) computes, where no error
    # can be raised on a value: the functional op never raises on one.
    sets[0][1, 0] = bad_value  # set 0, feature 0
    exponents, coefficients = keras_laf.closed_form("mean")

    def mean(inputs, **kwargs):
        return keras_laf.laf(
            inputs, exponents[:, None], coefficients[:, None], **kwargs
        )

    outputs = numpy(call_in_form(mean, sets, form, padding=7.0))
    assert np.isnan(outputs[0, 0]).all()
    # The other feature, and the other sets, whose padding holds 7.
    np.testing.assert_allclose(outputs[0, 1, 0], sets[0][:, 1].mean(), 1e-5)
    for i, elements in enumerate(sets[1:], 1):
        np.testing.assert_allclose(outputs[i, :, 0], elements.mean(0), 1e-5)


def test_fit_on_elements_outside_unit_interval_is_told():
    # A LAF on unsquashed inputs in [1, 2]: compiled steps (TensorFlow,
    # JAX) make the loss NaN and TerminateOnNaN stops; PyTorch trains
    # eagerly, so the layer raises at the first step.
    values = np.random.default_rng(1).uniform(1, 2, (3, 6, 2))
    model = keras.Sequential(
        [keras.Input((6, 2)), keras_laf.LAF(units=2), keras.layers.Dense(1)]
    )
    model.compile(optimizer="sgd", loss="mse")

    def fit():
        return model.fit(
            values.astype("float32"),
            np.ones((3, 1)),
            batch_size=3,
            epochs=5,
            verbose=0,
            callbacks=[keras.callbacks.TerminateOnNaN()],
        )

    if BACKEND == "torch":
        with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
            fit()
        return
    history = fit()
    assert len(history.history["loss"]) == 1
    assert np.isnan(history.history["loss"][0])


# Inputs that are wrong (issue 10, item 2).


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_values_are_an_error_for_laf(dtype):
    digits = np.array([[[3], [5], [7]]], dtype)
    with pytest.raises(ValueError, match="Embed integers"):
        keras_laf.LAF(units=1)(digits)
    with pytest.raises(ValueError, match="Embed integers"):
        keras_laf.laf(digits, *keras_laf.closed_form("sum"))


def test_integer_values_are_an_error_when_a_model_is_traced():
    inputs = keras.Input((None, 1), dtype="int32")
    model = keras.Model(inputs, keras_laf.LAF(units=1)(inputs))
    # Raised while the step is traced, before anything is compiled.
    with pytest.raises(ValueError, match="Embed integers"):
        model.predict(np.array([[[3], [5], [7]]], "int32"), verbose=0)


def test_bool_values_are_an_error():
    with pytest.raises(ValueError, match="numeric"):
        keras_laf.FixedAggregation(["sum"])(np.ones((1, 3, 1), bool))


@pytest.mark.parametrize("bad_mask", [[[1.0, 0.5, 0.0]], [[1, -1, 0]]])
def test_mask_values_other_than_0_and_1_are_an_error(bad_mask):
    values = np.full((1, 3, 1), 0.5, "float32")
    with pytest.raises(ValueError, match="only 0"):
        keras_laf.LAF(units=1)(values, mask=np.array(bad_mask))


def test_numeric_mask_of_0_and_1_is_the_boolean_mask():
    values = np.random.default_rng(2).uniform(size=(2, 3, 1)).astype("f4")
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    layer = keras_laf.LAF(units=2)
    np.testing.assert_allclose(
        numpy(layer(values, mask=mask.astype("float32"))),
        numpy(layer(values, mask=mask.astype(bool))),
    )


@pytest.mark.parametrize(
    "ids, num_segments, message",
    [
        ([0, -1, 1], 2, r"in \[0, 2\)"),
        ([0, 2, 1], 2, r"in \[0, 2\)"),
        ([0.0, 1.0, 1.0], 2, "integer"),
        ([0, 1, 1], 2.0, "non-negative integer"),
        ([0, 1, 1], -1, "non-negative integer"),
    ],
)
def test_bad_segment_ids_are_errors(ids, num_segments, message):
    values = np.full((3, 1), 0.5, "float32")
    with pytest.raises(ValueError, match=message):
        keras_laf.LAF(units=1)(
            values, segment_ids=np.array(ids), num_segments=num_segments
        )


@pytest.mark.tensorflow_only(NEEDS_TENSORFLOW)
def test_string_values_and_mask_are_errors_before_compilation():
    import tensorflow as tf

    with pytest.raises(ValueError, match="numeric"):
        keras_laf.LAF(units=1)(tf.constant([[["a"], ["b"]]]))
    with pytest.raises(ValueError, match="mask"):
        keras_laf.LAF(units=1)(
            np.ones((1, 2, 1), "float32"), mask=tf.constant([["a", "b"]])
        )


@pytest.mark.tensorflow_only(NEEDS_TENSORFLOW)
def test_out_of_range_ids_and_mask_values_fail_inside_tf_function():
    import tensorflow as tf

    layer = keras_laf.LAF(units=1)
    segments = tf.function(
        lambda v, ids: layer(v, segment_ids=ids, num_segments=2)
    )
    values = np.full((3, 1), 0.5, "float32")
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        segments(values, np.array([0, -1, 1], "int32"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="beyond"):
        segments(values, np.array([0, 2, 1], "int32"))
    masked = tf.function(lambda v, m: layer(v, mask=m))
    with pytest.raises(tf.errors.InvalidArgumentError, match="only 0"):
        masked(np.full((1, 3, 1), 0.5, "float32"), np.array([[1.0, 0.5, 0]]))


def test_wrong_rank_or_features_fail_when_the_model_is_built():
    with pytest.raises(
        ValueError, match=r"'laf' \(LAF\).*Received: inputs.shape=\(None, 3\)"
    ):
        keras.Sequential([keras.Input((3,)), keras_laf.LAF(2, name="laf")])
    with pytest.raises(
        ValueError, match="'pma'.*expected ndim=3, found ndim=2"
    ):
        keras.Sequential(
            [keras.Input((4,)), keras_laf.PMA(4, 2, 1, name="pma")]
        )
    # Where the weights fix the number of features.
    for layer in [
        keras_laf.PermutationEquivariant(2, name="equivariant"),
        keras_laf.SAB(4, 2, name="sab"),
        keras_laf.LSTMAggregation(2, name="lstm"),
    ]:
        keras.Sequential([keras.Input((None, 3)), layer])
        with pytest.raises(
            ValueError, match=f"'{layer.name}'.*value 3.*None, 4"
        ):
            keras.Sequential([keras.Input((None, 4)), layer])


@pytest.mark.skipif(
    BACKEND == "jax",
    reason="inside jax.jit no value can be checked: JAX's gathers and "
    "scatters drop or clamp out-of-range indices",
)
@pytest.mark.parametrize(
    "ids, mask, cause",
    [
        ([0, -1, 2], None, "segment ids holds a negative index"),
        ([0, 3, 2], None, "segment ids holds an index beyond the sets"),
        (None, [[1, 0.5, 0]], "mask must hold only 0"),
    ],
    ids=["negative-id", "id-beyond", "mask-value"],
)
def test_bad_ids_and_masks_inside_fit_name_the_cause_first(ids, mask, cause):
    # A traced TensorFlow step reports the failed op's stack first and its
    # message thousands of characters in; the op is named after the cause.
    values = keras.Input((2,))
    if ids is not None:
        extra = keras.Input((), dtype="int32")
        pooled = keras_laf.LAF(2)(values, segment_ids=extra, num_segments=3)
        data = (np.full((3, 2), 0.5, "float32"), np.array(ids, "int32"))
        targets = np.zeros((3, 4), "float32")
    else:
        values = keras.Input((3, 2))
        extra = keras.Input((3,))
        pooled = keras_laf.LAF(2)(values, mask=extra)
        data = (np.full((1, 3, 2), 0.5, "float32"), np.array(mask, "float32"))
        targets = np.zeros((1, 4), "float32")
    model = keras.Model([values, extra], pooled)
    model.compile(optimizer="adam", loss="mse")
    with pytest.raises(Exception) as error:
        model.fit(data, targets, batch_size=len(targets), verbose=0)
    head = re.sub("[^A-Za-z0-9]+", " ", str(error.value)[:300])
    assert cause in head, str(error.value)[:300]


@pytest.mark.skipif(ON_TENSORFLOW, reason="checks the non-TensorFlow error")
def test_ragged_inputs_on_other_backends_say_how_to_pad():
    tf = pytest.importorskip("tensorflow")
    ragged = tf.ragged.constant([[[0.1], [0.2]], [[0.3]]], ragged_rank=1)
    # A predicate: the layers raise, once, where the input enters.
    assert not is_ragged(ragged)
    for layer in [
        keras_laf.LAF(units=1),
        keras_laf.PerElement(keras.layers.Dense(2)),
    ]:
        with pytest.raises(
            ValueError, match=r"to_padded_batches.*Received: a tf.RaggedTensor"
        ):
            layer(ragged)
    exponents, coefficients = keras_laf.closed_form("sum")
    with pytest.raises(ValueError, match="Received: a tf.RaggedTensor"):
        keras_laf.laf(ragged, exponents[:, None], coefficients[:, None])


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_import_without_tensorflow_on_other_backends(backend):
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, keras_laf; keras_laf.LAF(2);"
            "print('tensorflow' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KERAS_BACKEND": backend},
    )
    if f"No module named '{backend}'" in completed.stderr:
        pytest.skip(f"{backend} is not installed")
    assert completed.stdout.strip() == "False", completed.stderr[-3000:]


@pytest.mark.tensorflow_only("TensorFlow's tf.function retracing warning")
def test_eager_calls_on_many_set_sizes_do_not_warn_of_retracing(caplog):
    layer = keras_laf.LAF(units=3)
    rng = np.random.default_rng(0)
    with caplog.at_level("WARNING", logger="tensorflow"):
        for set_size in range(2, 9):
            values = rng.uniform(size=(2, set_size, 2)).astype("float32")
            assert np.isfinite(ops.convert_to_numpy(layer(values))).all()
    assert not [r for r in caplog.records if "retracing" in r.getMessage()]

"""LAF's power sums and formula on every Keras backend, against NumPy:
closed forms, gradients, chunks of the set axis, the backend hooks and
padding.
"""

import keras
import numpy as np
import pytest
from backend_helpers import BACKEND
from backend_helpers import REFERENCES
from backend_helpers import flat
from backend_helpers import numpy
from backend_helpers import padded
from keras import ops

import keras_laf

pytestmark = pytest.mark.multi_backend


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
    `elements` `(n,)`, exponents `(8,)`, coefficients `(4,)`. An empty set
    gives 0; the denominator's magnitude is floored at `epsilon`, keeping
    its sign."""
    if not len(elements):
        return 0.0
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
    # reductions, and gives 0.
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
        ("segments", 24 * 16),
    ],
    ids=[
        "padded-chunks",
        "padded-overlapping-chunks",
        "padded-whole-sets",
        "padded-exponentials-kept",
        "segments-chunks",
        "segments-padded-chunks",
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
    # programs, the gradient reuses the forward pass's exponentials. The 63
    # flat elements with 16 elements' values (24 each) allowed are four
    # chunks of 16, the last padded by one element, which must add to no
    # set.
    # Compare the value and the gradients with respect to the elements,
    # exponents and coefficients with autodiff of the formula written with
    # powers.
    chunk_budget(
        padded=padded_budget if form == "padded" else 1,
        segments=padded_budget if form == "segments" else 1,
    )
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
    from keras_laf.core.sets import PaddedSets
    from keras_laf.core.sets import SegmentSets

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
    # (keras_laf/core/backend/<backend>.py); all compute the same. On JAX
    # the gradient's sum over the units is written out term by term up to
    # 12 units, a reduction with 13 on short sets, and written out again
    # on sets longer than 4096; the sums over the elements are one
    # reduction with two operands.
    from keras_laf.core import backend
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


def test_exponentials_hook_is_exp_flushing_only_what_underflows():
    # Normal results exactly as NumPy's exp; below float32's smallest
    # normal number (exp(-87.34)) 0 or the subnormal, whichever the
    # backend gives; -inf (padding) gives 0 and NaN stays NaN.
    from keras_laf.core import backend

    exponents = np.array(
        [0.0, -1.0, -30.5, -87.0, -87.4, -95.0, -200.0, -1e38, -np.inf, np.nan],
        "float32",
    )
    computed = numpy(backend.exponentials(ops.convert_to_tensor(exponents)))
    expected = np.exp(exponents)
    normal = exponents >= np.log(np.finfo("float32").tiny)
    np.testing.assert_allclose(computed[normal], expected[normal], rtol=1e-6)
    underflows = ~normal & ~np.isnan(exponents)
    assert (computed[underflows] >= 0).all()
    assert (computed[underflows] <= np.finfo("float32").tiny).all()
    assert np.isnan(computed[-1])


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
    from keras_laf.core import backend
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


@pytest.mark.tensorflow_only("TensorFlow's tf.function retracing warning")
def test_eager_calls_on_many_set_sizes_do_not_warn_of_retracing(caplog):
    layer = keras_laf.LAF(units=3)
    rng = np.random.default_rng(0)
    with caplog.at_level("WARNING", logger="tensorflow"):
        for set_size in range(2, 9):
            values = rng.uniform(size=(2, set_size, 2)).astype("float32")
            assert np.isfinite(ops.convert_to_numpy(layer(values))).all()
    assert not [r for r in caplog.records if "retracing" in r.getMessage()]

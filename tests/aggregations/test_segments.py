"""Aggregations over segments (flat elements with segment ids), on every
backend: the backend's segment reductions, the fused fixed aggregates of
`MultiAggregation`, the softmax aggregation and the empty set's aggregates,
against NumPy and against the padded form of the same sets."""

import keras
import numpy as np
import pytest
from keras import ops

from keras_laf import FixedAggregation
from keras_laf import MultiAggregation
from keras_laf import SoftmaxAggregation
from keras_laf.aggregations.fixed import AGGREGATOR_NAMES
from keras_laf.core import backend
from keras_laf.core.sets import PaddedSets
from keras_laf.core.sets import SegmentSets

pytestmark = pytest.mark.multi_backend

# Sets 1 and 4 are empty; the ids are shuffled.
SIZES = [3, 0, 1, 4, 0, 2]


def segments(features=3, seed=0):
    rng = np.random.default_rng(seed)
    ids = np.repeat(np.arange(len(SIZES)), SIZES).astype("int32")
    order = rng.permutation(len(ids))
    values = rng.normal(size=(len(ids), features)).astype("float32")
    return values[order], ids[order]


def padded(values, ids):
    """The same sets padded, in order of appearance, with their mask."""
    set_size = max(SIZES)
    dense = np.zeros((len(SIZES), set_size, values.shape[1]), "float32")
    mask = np.zeros((len(SIZES), set_size), bool)
    filled = [0] * len(SIZES)
    for value, set_index in zip(values, ids):
        dense[set_index, filled[set_index]] = value
        mask[set_index, filled[set_index]] = True
        filled[set_index] += 1
    return dense, mask


def numpy_sets(values, ids):
    return [values[ids == index] for index in range(len(SIZES))]


def test_segment_reductions_match_numpy_with_empty_segments():
    values, ids = segments()
    sums = backend.segment_sum(values, ids, len(SIZES))
    counts = np.array(SIZES, "float32")
    maxima = backend.segment_max(
        values, ids, len(SIZES), lambda: ops.convert_to_tensor(counts)
    )
    for index, elements in enumerate(numpy_sets(values, ids)):
        np.testing.assert_allclose(
            ops.convert_to_numpy(sums)[index], elements.sum(0), atol=1e-6
        )
        expected = elements.max(0) if len(elements) else -np.inf
        np.testing.assert_array_equal(
            ops.convert_to_numpy(maxima)[index], expected
        )


def test_segment_sets_count_their_sizes_once():
    _, ids = segments()
    sets = SegmentSets(ops.convert_to_tensor(ids), len(SIZES))
    sizes = sets.sizes()
    assert sets.sizes() is sizes
    np.testing.assert_array_equal(ops.convert_to_numpy(sizes), SIZES)


def test_both_layouts_count_all_their_elements():
    # 10 elements in six sets, two of them empty; padding is not counted.
    values, ids = segments()
    _, mask = padded(values, ids)
    segment_sets = SegmentSets(ops.convert_to_tensor(ids), len(SIZES))
    padded_sets = PaddedSets(ops.convert_to_tensor(mask))
    for sets in (segment_sets, padded_sets):
        assert float(ops.convert_to_numpy(sets.num_elements())) == 10.0


def test_segment_sum_gradient_is_a_gather():
    values, ids = segments()
    upstream = np.arange(len(SIZES) * 3, dtype="float32").reshape(-1, 3)

    def loss(values):
        sums = backend.segment_sum(values, ids, len(SIZES))
        return ops.sum(ops.multiply(sums, upstream))

    np.testing.assert_allclose(gradient(loss, values), upstream[ids])


def gradient(loss, values):
    """d loss / d values, on any backend."""
    backend_name = keras.config.backend()
    if backend_name == "jax":
        import jax

        return np.asarray(jax.grad(loss)(values))
    if backend_name == "torch":
        import torch

        tensor = torch.tensor(values, requires_grad=True)
        loss(tensor).backward()
        return tensor.grad.numpy()
    import tensorflow as tf

    tensor = tf.Variable(values)
    with tf.GradientTape() as tape:
        result = loss(tensor)
    return tape.gradient(result, tensor).numpy()


@pytest.mark.parametrize("form", ["segments", "padded"])
def test_empty_sets_aggregate_to_zero_std_included(form):
    values, ids = segments()
    layer = FixedAggregation(list(AGGREGATOR_NAMES), flatten=False)
    if form == "segments":
        outputs = layer(values, segment_ids=ids, num_segments=len(SIZES))
    else:
        outputs = layer(*padded(values, ids)[:1], mask=padded(values, ids)[1])
    outputs = ops.convert_to_numpy(outputs)
    for index, size in enumerate(SIZES):
        if size == 0:
            np.testing.assert_array_equal(outputs[index], 0.0)
    # A set of one element: zero variance, std sqrt(epsilon).
    std = outputs[SIZES.index(1), :, AGGREGATOR_NAMES.index("std")]
    np.testing.assert_allclose(std, np.sqrt(1e-5), rtol=1e-6)


def test_std_of_empty_sets_is_zero_with_a_finite_gradient():
    values, ids = segments()
    layer = FixedAggregation(["std"])

    def loss(values):
        return ops.sum(
            layer(values, segment_ids=ids, num_segments=len(SIZES) + 2)
        )

    grads = gradient(loss, values)
    assert np.isfinite(grads).all()
    outputs = ops.convert_to_numpy(
        layer(values, segment_ids=ids, num_segments=len(SIZES) + 2)
    )
    np.testing.assert_array_equal(outputs[-2:], 0.0)


@pytest.mark.parametrize("form", ["segments", "padded"])
def test_std_of_sets_far_from_zero_matches_float64(form):
    # float32 elements 1e4 + noise of standard deviation 0.1: E[x^2] is
    # 1e8, whose float32 spacing (8) dwarfs the variance (0.01).
    sizes = [30, 0, 1, 200, 7]
    rng = np.random.default_rng(1)
    ids = np.repeat(np.arange(len(sizes)), sizes).astype("int32")
    values = (1e4 + 0.1 * rng.normal(size=(len(ids), 3))).astype("float32")
    order = rng.permutation(len(ids))
    values, ids = values[order], ids[order]
    layer = FixedAggregation(["var", "std"], flatten=False)
    if form == "segments":
        outputs = layer(values, segment_ids=ids, num_segments=len(sizes))
    else:
        set_size = max(sizes)
        dense = np.zeros((len(sizes), set_size, 3), "float32")
        mask = np.arange(set_size) < np.array(sizes)[:, None]
        for index in range(len(sizes)):
            dense[index, : sizes[index]] = values[ids == index]
        outputs = layer(dense, mask=mask)
    std = ops.convert_to_numpy(outputs)[..., 1]
    expected = np.zeros_like(std, "float64")
    unshifted = np.zeros_like(std)
    for index in range(len(sizes)):
        elements = values[ids == index]
        if len(elements):
            expected[index] = np.sqrt(elements.astype("float64").var(0) + 1e-5)
            # The one-pass formula without a shift, in float32.
            mean = elements.mean(0, dtype="float32")
            squares = (elements**2).mean(0, dtype="float32")
            unshifted[index] = np.sqrt(np.maximum(squares - mean**2, 0) + 1e-5)
    tolerance = 1e-4
    np.testing.assert_allclose(std, expected, rtol=0, atol=tolerance)
    np.testing.assert_array_equal(std[1], 0.0)
    assert np.abs(unshifted - expected).max() > 100 * tolerance


@pytest.mark.tensorflow_only("ragged tensors exist only in TensorFlow")
def test_empty_ragged_set_has_zero_std():
    import tensorflow as tf

    sets = tf.RaggedTensor.from_row_lengths(np.ones((2, 2), "float32"), [2, 0])
    outputs = FixedAggregation(["std"])(sets).numpy()
    np.testing.assert_array_equal(outputs[1], 0.0)


AGGREGATIONS = [
    ["mean", "max", "std"],
    ["sum", "min", "var", "count"],
    ["mean", "skewness", "kurtosis", "max"],
]


@pytest.mark.parametrize("names", AGGREGATIONS)
def test_fused_multi_aggregation_equals_its_members_alone(names):
    values, ids = segments(features=4)
    layer = MultiAggregation(names)
    fused = layer(values, segment_ids=ids, num_segments=len(SIZES))
    alone = [
        member(values, segment_ids=ids, num_segments=len(SIZES))
        for member in layer.members
    ]
    # Fused with a moment, the sum and the mean come from the shifted sums
    # of the variance: the same to rounding.
    np.testing.assert_allclose(
        ops.convert_to_numpy(fused),
        np.concatenate([ops.convert_to_numpy(a) for a in alone], -1),
        rtol=1e-6,
        atol=1e-6,
    )


def test_multi_aggregation_matches_numpy_on_segments_and_padded():
    values, ids = segments(features=2)
    layer = MultiAggregation(["mean", "max", "std"])
    expected = []
    for elements in numpy_sets(values, ids):
        if len(elements):
            std = np.sqrt(elements.var(0) + 1e-5)
            expected.append(
                np.concatenate([elements.mean(0), elements.max(0), std])
            )
        else:
            expected.append(np.zeros(6))
    expected = np.array(expected)
    from_segments = layer(values, segment_ids=ids, num_segments=len(SIZES))
    dense, mask = padded(values, ids)
    from_padded = layer(dense, mask=mask)
    np.testing.assert_allclose(
        ops.convert_to_numpy(from_segments), expected, atol=1e-5
    )
    np.testing.assert_allclose(
        ops.convert_to_numpy(from_padded), expected, atol=1e-5
    )


def numpy_softmax_aggregation(sets, t):
    outputs = []
    for elements in sets:
        if not len(elements):
            outputs.append(np.zeros(elements.shape[1]))
            continue
        scores = t * elements.astype("float64")
        weights = np.exp(scores - scores.max(0))
        outputs.append((weights * elements).sum(0) / weights.sum(0))
    return np.array(outputs)


@pytest.mark.parametrize("t", [0.0, 1.0, -3.0, 40.0])
def test_softmax_aggregation_matches_numpy_in_both_forms(t):
    values, ids = segments()
    layer = SoftmaxAggregation(t=t)
    expected = numpy_softmax_aggregation(numpy_sets(values, ids), t)
    from_segments = layer(values, segment_ids=ids, num_segments=len(SIZES))
    dense, mask = padded(values, ids)
    np.testing.assert_allclose(
        ops.convert_to_numpy(from_segments), expected, rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        ops.convert_to_numpy(layer(dense, mask=mask)),
        expected,
        rtol=1e-5,
        atol=1e-6,
    )


def test_softmax_aggregation_gradient_matches_finite_differences():
    values, ids = segments(features=2)
    layer = SoftmaxAggregation(t=2.0)
    weights = np.random.default_rng(1).normal(size=(len(SIZES), 2))
    weights = weights.astype("float32")

    def loss(values):
        outputs = layer(values, segment_ids=ids, num_segments=len(SIZES))
        return ops.sum(ops.multiply(outputs, weights))

    def numpy_loss(values):
        sets = numpy_sets(values, ids)
        return (numpy_softmax_aggregation(sets, 2.0) * weights).sum()

    step = 1e-3
    expected = np.zeros(values.shape)
    for index in np.ndindex(values.shape):
        shifted = values.astype("float64")
        shifted[index] += step
        above = numpy_loss(shifted)
        shifted[index] -= 2 * step
        expected[index] = (above - numpy_loss(shifted)) / (2 * step)
    np.testing.assert_allclose(gradient(loss, values), expected, atol=1e-3)


def test_softmax_of_a_set_with_nan_is_nan_and_others_unchanged():
    values, ids = segments()
    values[np.flatnonzero(ids == 0)[0], 0] = np.nan
    outputs = ops.convert_to_numpy(
        SoftmaxAggregation()(values, segment_ids=ids, num_segments=len(SIZES))
    )
    assert np.isnan(outputs[0, 0])
    assert np.isfinite(outputs[1:]).all()

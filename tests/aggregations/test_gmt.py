"""The Graph Multiset Transformer on sets given by segment ids, and the
padded layout it builds for them, on every backend.

The reference is the same layer on the sets padded by hand in NumPy, the
padding holding NaN so that any leak of it shows. JAX and PyTorch pad
segment-form sets with `keras.ops`, by class of sizes
(`keras_laf.aggregations.gmt.size_classes`); TensorFlow through a ragged
tensor.
"""

import itertools

import keras
import numpy as np
import pytest
from keras import ops

from keras_laf import GraphMultisetTransformer
from keras_laf.aggregations.gmt import size_classes
from keras_laf.core.sets import SegmentSets

pytestmark = pytest.mark.multi_backend

FEATURES = 3
# Sets of 3, 0, 1, 9, 2, 0 and 5 elements: empty sets, and one set large
# enough to need a class of its own.
SIZES = (3, 0, 1, 9, 2, 0, 5)


def numpy(tensor):
    return ops.convert_to_numpy(tensor)


def sets_and_segments(sizes=SIZES, seed=0):
    """The sets, and their elements flat in a shuffled order with their
    segment ids."""
    rng = np.random.default_rng(seed)
    sets = [rng.normal(size=(n, FEATURES)).astype("float32") for n in sizes]
    values = np.concatenate(sets)
    ids = np.repeat(np.arange(len(sizes)), sizes).astype("int32")
    order = rng.permutation(len(ids))
    return sets, values[order], ids[order]


def padded_by_hand(sets):
    """`(num_sets, largest size, features)` with NaN padding, and the mask;
    at least one (masked-out) element per set."""
    set_size = max(1, max(len(s) for s in sets))
    values = np.full((len(sets), set_size, FEATURES), np.nan, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for index, elements in enumerate(sets):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    return values, mask


def test_size_classes_hold_any_sets_within_their_bound():
    for num_elements, num_sets in itertools.product(range(40), range(1, 12)):
        classes = size_classes(num_elements, num_sets)
        widths = [width for width, _ in classes]
        assert widths == sorted(widths)
        assert widths[-1] >= num_elements
        # The most sets a class can get: those of more elements than the
        # class below is wide.
        for (below, _), (_, num_rows) in zip(classes, classes[1:]):
            assert num_rows == min(num_sets, num_elements // (below + 1))
        slots = sum(width * rows for width, rows in classes)
        bound = num_elements + num_sets
        bound += 4 * num_elements * int(np.ceil(np.log(num_sets) / np.log(4)))
        assert slots <= bound


def test_size_classes_of_a_neighbour_aggregation():
    # 1024 nodes, 4096 edges: 50 times fewer slots than one batch of
    # every node's neighbours padded to 4096.
    classes = size_classes(num_elements=4096, num_sets=1024)
    assert classes == [
        (4, 1024),
        (16, 819),
        (64, 240),
        (256, 63),
        (1024, 15),
        (4096, 3),
    ]
    slots = sum(width * rows for width, rows in classes)
    assert slots * 50 < 1024 * 4096


def test_segments_give_each_set_padded_by_hand():
    layer = GraphMultisetTransformer(
        dim=4, num_heads=2, num_seeds=3, num_encoder_blocks=2
    )
    sets, values, ids = sets_and_segments()
    padded, mask = padded_by_hand(sets)
    expected = numpy(layer(padded, mask=mask))
    assert np.all(np.isfinite(expected))
    outputs = numpy(layer(values, segment_ids=ids, num_segments=len(sets)))
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)
    # The empty sets: the output of one masked-out element.
    empty = numpy(
        layer(np.zeros((1, 1, FEATURES)), mask=np.zeros((1, 1), bool))
    )
    np.testing.assert_allclose(
        outputs[[1, 5]], np.tile(empty, (2, 1)), rtol=1e-5, atol=1e-6
    )


def test_segments_in_a_jax_jit():
    if keras.config.backend() != "jax":
        pytest.skip("jax.jit; the other backends run the same keras.ops")
    import jax

    layer = GraphMultisetTransformer(dim=4, num_heads=2, num_seeds=2)
    sets, values, ids = sets_and_segments(seed=1)
    padded, mask = padded_by_hand(sets)
    expected = numpy(layer(padded, mask=mask))

    @jax.jit
    def pool(values, ids):
        return layer(values, segment_ids=ids, num_segments=len(sets))

    np.testing.assert_allclose(
        numpy(pool(values, ids)), expected, rtol=1e-5, atol=1e-5
    )


def test_no_elements():
    layer = GraphMultisetTransformer(dim=4, num_seeds=2)
    values = np.zeros((0, FEATURES), "float32")
    ids = np.zeros((0,), "int32")
    outputs = numpy(layer(values, segment_ids=ids, num_segments=2))
    empty = numpy(
        layer(np.zeros((1, 1, FEATURES)), mask=np.zeros((1, 1), bool))
    )
    np.testing.assert_allclose(
        outputs, np.tile(empty, (2, 1)), rtol=1e-5, atol=1e-6
    )
    no_sets = layer(values, segment_ids=ids, num_segments=0)
    assert tuple(no_sets.shape) == (0, 4)


def test_to_padded_keeps_the_order_of_appearance():
    sets, values, ids = sets_and_segments()
    layout = SegmentSets(ops.convert_to_tensor(ids), len(sets))
    padded, padded_sets = layout.to_padded(values)
    mask = numpy(padded_sets.mask)
    assert padded.shape == (len(sets), max(SIZES), FEATURES)
    np.testing.assert_array_equal(mask.sum(axis=1), SIZES)
    padded = numpy(padded)
    for index in range(len(sets)):
        np.testing.assert_array_equal(
            padded[index, mask[index]], values[ids == index]
        )
    np.testing.assert_array_equal(padded[~mask], 0)


def test_to_padded_rows_of_chosen_sets():
    # On every backend, TensorFlow included: rows of chosen sets, and an
    # empty row (index num_sets), to a chosen width.
    sets, values, ids = sets_and_segments()
    layout = SegmentSets(ops.convert_to_tensor(ids), len(sets))
    rows = np.array([4, len(sets), 0, 1], "int32")
    padded, padded_sets = layout.to_padded(values, rows, set_size=3)
    assert padded.shape == (4, 3, FEATURES)
    mask = numpy(padded_sets.mask)
    np.testing.assert_array_equal(mask.sum(axis=1), [2, 0, 3, 0])
    padded = numpy(padded)
    for row, index in enumerate(rows):
        np.testing.assert_array_equal(
            padded[row, mask[row]], values[ids == index]
        )
    np.testing.assert_array_equal(padded[~mask], 0)

"""`keras_laf.datasets`: sets padded with a mask, from lists, ragged
tensors and `tf.data` batches."""

import numpy as np
import pytest
import tensorflow as tf

from keras_laf.datasets import ragged_set_dataset


def test_pad_sets_from_a_list_and_from_a_ragged_tensor():
    from keras_laf.datasets import pad_sets

    sets = [np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0]])]
    padded, mask = pad_sets(sets)
    np.testing.assert_array_equal(padded, [[[1, 2], [3, 4]], [[5, 6], [0, 0]]])
    np.testing.assert_array_equal(mask, [[1, 1], [1, 0]])
    assert (padded.dtype, mask.dtype) == ("float32", "float32")
    ragged = tf.ragged.constant(
        [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]], ragged_rank=1
    )
    from_ragged, ragged_mask = pad_sets(ragged, set_size=3)
    np.testing.assert_array_equal(from_ragged[:, :2], padded)
    np.testing.assert_array_equal(ragged_mask, [[1, 1, 0], [1, 0, 0]])
    integers, _ = pad_sets([np.array([1, 2], "int64"), np.array([], "int64")])
    assert integers.dtype == "int32"
    np.testing.assert_array_equal(integers, [[1, 2], [0, 0]])


@pytest.mark.parametrize(
    "sets, kwargs, match",
    [
        ([], {}, "at least one set"),
        ([np.zeros(3)], {"set_size": 2}, "set 0 has 3 elements"),
        ([np.zeros((2, 2)), np.zeros((2, 3))], {}, "set 1 of shape"),
        ([np.array(["a"])], {}, "numbers"),
        ("abc", {}, "list of arrays"),
        ([np.zeros(2)], {"set_size": 0}, "set_size=0"),
    ],
)
def test_pad_sets_bad_inputs(sets, kwargs, match):
    from keras_laf.datasets import pad_sets

    with pytest.raises(ValueError, match=match):
        pad_sets(sets, **kwargs)


def test_to_padded_batches_gives_the_builders_dtypes():
    from keras_laf.datasets import to_padded_batches

    dataset = ragged_set_dataset(
        [np.array([1, 2], "int64"), np.array([3], "int64")], [3.0, 3.0], 2
    )
    (values, mask), _ = next(iter(to_padded_batches(dataset)))
    assert (values.dtype, mask.dtype) == (tf.int32, tf.float32)

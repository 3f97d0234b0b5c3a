"""`keras_laf.datasets.SetBatches`: padded sets with their mask in NumPy,
the same batches as the `tf.data` pipeline, on every backend."""

import keras
import numpy as np
import pytest

from keras_laf.datasets import SetBatches

pytestmark = pytest.mark.multi_backend


def sets_and_labels(num_sets=10, seed=0):
    rng = np.random.default_rng(seed)
    sets = [rng.integers(0, 7, rng.integers(1, 5)) for _ in range(num_sets)]
    return sets, np.array([elements.sum() for elements in sets], "float32")


def test_batches_pad_each_set_and_keep_its_label():
    sets, labels = sets_and_labels()
    batches = SetBatches(sets, labels, batch_size=4, set_size=6)
    assert len(batches) == 3
    for index in range(len(batches)):
        (padded, mask), batch_labels = batches[index]
        assert padded.shape[1:] == (6,) and padded.dtype == "int32"
        assert mask.dtype == "float32" and batch_labels.shape[1] == 1
        for row in range(len(padded)):
            elements = sets[4 * index + row]
            size = len(elements)
            np.testing.assert_array_equal(padded[row, :size], elements)
            assert not padded[row, size:].any()
            np.testing.assert_array_equal(mask[row], np.arange(6) < size)
            assert batch_labels[row, 0] == elements.sum()
    # A plain loop ends at the last batch.
    assert sum(len(labels) for _, labels in batches) == len(sets)


def test_element_table_rows_are_gathered():
    table = np.arange(12, dtype="float64").reshape(6, 2)
    sets = [np.array([0, 5]), np.array([3])]
    (padded, mask), _ = SetBatches(sets, [1.0, 2.0], 2, element_table=table)[0]
    assert padded.dtype == "float32" and padded.shape == (2, 2, 2)
    np.testing.assert_array_equal(padded[0], table[[0, 5]])
    np.testing.assert_array_equal(padded[1], [table[3], [0, 0]])
    np.testing.assert_array_equal(mask, [[1, 1], [1, 0]])


def test_shuffle_visits_every_set_once_and_changes_order_each_epoch():
    sets, labels = sets_and_labels(num_sets=50)
    batches = SetBatches(sets, labels, batch_size=8, shuffle=True, seed=3)

    def epoch_labels():
        return np.concatenate([batch[1][:, 0] for batch in batches])

    first = epoch_labels()
    np.testing.assert_array_equal(np.sort(first), np.sort(labels))
    batches.on_epoch_end()
    second = epoch_labels()
    np.testing.assert_array_equal(np.sort(second), np.sort(labels))
    assert not np.array_equal(first, second)
    again = SetBatches(sets, labels, batch_size=8, shuffle=True, seed=3)
    np.testing.assert_array_equal(
        np.concatenate([batch[1][:, 0] for batch in again]), first
    )


def test_a_model_fits_and_predicts_on_the_batches():
    from keras_laf.models import deep_sets

    sets, labels = sets_and_labels(num_sets=32)
    batches = SetBatches(sets, labels, batch_size=8, set_size=5)
    model = deep_sets(vocabulary_size=7, phi_units=(), aggregation="sum")
    model.compile(optimizer="adam", loss="mae")
    model.fit(batches, epochs=1, verbose=0)
    predicted = model.predict(batches, verbose=0)
    padded, mask = zip(*(inputs for inputs, _ in batches), strict=True)
    expected = model.predict(
        [np.concatenate(padded), np.concatenate(mask)], verbose=0
    )
    np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.tensorflow_only("compares with the tf.data pipeline")
def test_same_batches_as_the_tf_data_pipeline():
    from keras_laf.datasets import ragged_set_dataset
    from keras_laf.datasets import to_padded_batches

    sets, labels = sets_and_labels()
    ours = SetBatches(sets, labels, batch_size=4, set_size=6)
    theirs = to_padded_batches(ragged_set_dataset(sets, labels, 4), 6)
    for ((padded, mask), batch_labels), (
        (tf_padded, tf_mask),
        tf_labels,
    ) in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(padded, tf_padded.numpy())
        np.testing.assert_array_equal(mask, tf_mask.numpy())
        np.testing.assert_array_equal(batch_labels, tf_labels.numpy())
        assert padded.dtype == keras.backend.standardize_dtype(tf_padded.dtype)


@pytest.mark.parametrize(
    "arguments, match",
    [
        (([], [], 2), "at least one set"),
        (([np.zeros(2)], [1.0, 2.0], 2), "one label per set"),
        (([np.zeros(2)], [1.0], 0), "batch_size"),
        (([np.zeros(3)], [1.0], 2, 2), "set 0 has 3 elements"),
    ],
)
def test_bad_arguments_raise(arguments, match):
    with pytest.raises(ValueError, match=match):
        SetBatches(*arguments)[0]

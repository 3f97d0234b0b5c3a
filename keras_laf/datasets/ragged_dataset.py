"""A `tf.data` pipeline of ragged batches of variable-size sets.

TensorFlow is imported when a function here is called, so that importing
`keras_laf.datasets` does not import it on JAX or PyTorch.
"""

import numpy as np

from keras_laf.core.validation import check_positive_int
from keras_laf.datasets.padded_sets import checked_set_labels


def ragged_set_dataset(
    sets,
    labels,
    batch_size,
    shuffle=False,
    seed=None,
    element_table=None,
):
    """Builds a `tf.data.Dataset` of ragged batches of sets with labels.

    Args:
        sets: sequence of NumPy arrays, one per set, all of the same dtype
            and with the same trailing shape; the first axis indexes the
            elements, so sets may have different sizes.
        labels: array-like `(len(sets),)`, one number per set.
        batch_size: positive int, the number of sets per batch (the last
            batch may be smaller).
        shuffle: whether to shuffle the sets, afresh at every epoch.
        seed: optional int seed of the shuffling.
        element_table: optional array `(num_rows, ...)`. When given, `sets`
            hold int row indices into it, and each batch carries the
            gathered rows instead of the indices (so large elements such as
            images are stored once, not once per occurrence).

    Returns:
        A `tf.data.Dataset` of `(sets, labels)` batches: `sets` is a
        `tf.RaggedTensor` `(batch, None, *trailing_shape)` of the dtype of
        `sets` (with `element_table`: `(batch, None, *row_shape)` of its
        dtype), `labels` is a float32 tensor `(batch, 1)`.

    Example:

    >>> dataset = ragged_set_dataset(
    ...     [np.array([1, 2, 3]), np.array([4])], [6.0, 4.0], batch_size=2
    ... )
    >>> batch_sets, batch_labels = next(iter(dataset))
    >>> batch_sets.shape, batch_labels.shape
    (TensorShape([2, None]), TensorShape([2, 1]))
    """
    import tensorflow as tf

    check_positive_int("batch_size", batch_size)
    labels = checked_set_labels(sets, labels)
    elements = tf.RaggedTensor.from_row_lengths(
        np.concatenate(sets), [len(elements) for elements in sets]
    )
    dataset = tf.data.Dataset.from_tensor_slices((elements, labels[:, None]))
    if shuffle:
        dataset = dataset.shuffle(len(sets), seed=seed)
    dataset = dataset.ragged_batch(batch_size)
    if element_table is not None:
        table = tf.constant(element_table)
        dataset = dataset.map(
            lambda indices, labels: (tf.gather(table, indices), labels),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    return dataset.prefetch(tf.data.AUTOTUNE)


def to_padded_batches(dataset, set_size=None):
    """Turns ragged batches `(sets, labels)` into `((padded, mask), labels)`.

    The form that the models of `keras_laf.models` take by default
    (`ragged=False`) on every backend, and the way to
    train with `tf.distribute` strategies: Keras cannot split ragged
    batches across replicas (Keras 3.15 fails with `'RaggedTensor' object
    has no attribute 'device'` under `MirroredStrategy`), while padded
    batches with a mask give the same results, padding having no effect.

    Args:
        dataset: a `tf.data.Dataset` of `(sets, labels)` with `sets` a
            `tf.RaggedTensor` `(batch, None, ...)`.
        set_size: optional int. Pad every batch to this many elements (a
            fixed shape, which XLA and distribution strategies prefer);
            larger sets raise an error when the batch is produced. Defaults
            to the largest set of each batch.

    Returns:
        A `tf.data.Dataset` of `((padded, mask), labels)`: `padded` is
        `(batch, set_size, ...)` with zeros at padded positions, int32 for
        integer elements and float32 otherwise (as `pad_sets` gives them),
        and `mask`
        a float32 `(batch, set_size)`, 1 for real elements and 0 for
        padding. (Float, not bool: Keras 3.15 fails on boolean inputs
        under `MirroredStrategy`, adding them with `AddN`.)

    Example:

    >>> padded = to_padded_batches(ragged_set_dataset(
    ...     [np.array([1, 2, 3]), np.array([4])], [6.0, 4.0], batch_size=2))
    >>> (values, mask), labels = next(iter(padded))
    >>> mask.numpy()
    array([[1., 1., 1.],
           [1., 0., 0.]], dtype=float32)
    """
    import tensorflow as tf

    if set_size is not None:
        set_size = check_positive_int("set_size", set_size)

    def pad(sets, labels):
        if set_size is not None:
            tf.debugging.assert_less_equal(
                tf.reduce_max(sets.row_lengths()),
                tf.cast(set_size, tf.int64),
                message="a set is larger than `set_size`",
            )
        shape = None if set_size is None else [None, set_size, *sets.shape[2:]]
        padded = sets.to_tensor(shape=shape)
        padded = tf.cast(
            padded, "int32" if padded.dtype.is_integer else "float32"
        )
        mask = tf.sequence_mask(
            sets.row_lengths(), tf.shape(padded)[1], dtype=tf.float32
        )
        return (padded, mask), labels

    return dataset.map(pad, num_parallel_calls=tf.data.AUTOTUNE)

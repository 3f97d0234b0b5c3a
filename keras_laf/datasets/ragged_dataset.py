"""A `tf.data` pipeline of ragged batches of variable-size sets."""

import numpy as np
import tensorflow as tf


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
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(
            f"`batch_size` must be a positive int. Received: {batch_size}"
        )
    if len(sets) == 0:
        raise ValueError("`sets` must contain at least one set. Received: []")
    labels = np.asarray(labels, dtype="float32")
    if labels.shape != (len(sets),):
        raise ValueError(
            f"`labels` must have shape ({len(sets)},), one label per set. "
            f"Received shape: {labels.shape}"
        )
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

"""Sets of different sizes as the builders take them on every backend, in
NumPy: TensorFlow is not imported."""

import keras
import numpy as np

from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import tensorflow_module


def pad_sets(sets, set_size=None):
    """Pads sets to one size and returns them with their mask.

    The inputs `[sets, mask]` of the models of `keras_laf.models` built
    with their default `ragged=False`, the same on TensorFlow, JAX and
    PyTorch: NumPy arrays that `Model.fit`, `predict` and `__call__` take
    on every backend.

    Args:
        sets: a list of arrays, one per set, whose first axis indexes the
            elements (sets may differ in size; the other axes may not), or
            a `tf.RaggedTensor` `(num_sets, None, ...)`.
        set_size: int. The padded size; a larger set raises a ValueError.
            Defaults to `None`: the size of the largest set.

    Returns:
        A tuple `(padded, mask)`: `padded` is `(num_sets, set_size, ...)`,
        float32 for float elements and int32 for integer elements, with
        zeros after each set's elements; `mask` is float32
        `(num_sets, set_size)`, 1 for real elements and 0 for padding.

    Example:

    >>> padded, mask = pad_sets([np.array([1, 2, 3]), np.array([4])])
    >>> padded
    array([[1, 2, 3],
           [4, 0, 0]], dtype=int32)
    >>> mask
    array([[1., 1., 1.],
           [1., 0., 0.]], dtype=float32)
    """
    # A ragged tensor exists only once TensorFlow is imported: NumPy sets
    # never import it.
    tf = tensorflow_module()
    if tf is not None and isinstance(sets, tf.RaggedTensor):
        if sets.ragged_rank != 1:
            raise ValueError(
                "`sets` must be ragged in the set axis only, "
                "(num_sets, None, ...). Received: a RaggedTensor of shape "
                f"{sets.shape} with ragged_rank={sets.ragged_rank}"
            )
        lengths = sets.row_lengths().numpy()
        sets = np.split(sets.values.numpy(), np.cumsum(lengths)[:-1])
    if isinstance(sets, (str, bytes)) or not hasattr(sets, "__len__"):
        raise ValueError(
            "`sets` must be a list of arrays (one per set) or a "
            f"tf.RaggedTensor. Received: {type(sets).__name__}"
        )
    if len(sets) == 0:
        raise ValueError("`sets` must contain at least one set. Received: []")
    arrays = [np.asarray(elements) for elements in sets]
    for index, elements in enumerate(arrays):
        if elements.ndim == 0 or elements.shape[1:] != arrays[0].shape[1:]:
            raise ValueError(
                "Every set must be an array (num_elements, ...) with the "
                f"element shape of the first, {arrays[0].shape[1:]}. "
                f"Received: set {index} of shape {elements.shape}"
            )
    sizes = np.array([len(elements) for elements in arrays])
    if set_size is None:
        set_size = max(int(sizes.max()), 1)
    set_size = check_positive_int("set_size", set_size)
    if sizes.max() > set_size:
        raise ValueError(
            f"A set is larger than `set_size`: set {int(sizes.argmax())} "
            f"has {int(sizes.max())} elements. Received: set_size={set_size}"
        )
    values = np.concatenate(arrays)
    if np.issubdtype(values.dtype, np.integer):
        dtype = "int32"
    elif np.issubdtype(values.dtype, np.floating) or values.dtype == bool:
        dtype = "float32"
    else:
        raise ValueError(
            "The elements must be numbers. Received: elements of dtype "
            f"{values.dtype}"
        )
    element_shape = arrays[0].shape[1:]
    padded = np.zeros((len(arrays), set_size, *element_shape), dtype=dtype)
    mask = np.zeros((len(arrays), set_size), dtype="float32")
    for index, elements in enumerate(arrays):
        padded[index, : len(elements)] = elements
        mask[index, : len(elements)] = 1.0
    return padded, mask


def checked_set_labels(sets, labels):
    """`labels` as float32 `(len(sets),)`, one per set of a non-empty list;
    a ValueError saying what was received otherwise."""
    if len(sets) == 0:
        raise ValueError("`sets` must contain at least one set. Received: []")
    labels = np.asarray(labels, dtype="float32")
    if labels.shape != (len(sets),):
        raise ValueError(
            f"`labels` must have shape ({len(sets)},), one label per set. "
            f"Received shape: {labels.shape}"
        )
    return labels


class SetBatches(keras.utils.PyDataset):
    """Batches of sets of different sizes, padded with their mask, for
    `Model.fit`, `evaluate` and `predict` on every backend.

    The same batches as `to_padded_batches(ragged_set_dataset(...))`,
    `((padded, mask), labels)`, made in NumPy rather than `tf.data`, so that
    they need no TensorFlow (JAX or PyTorch alone, as on an accelerator
    image without it). Each batch is padded by `pad_sets` to `set_size`
    elements, one fixed shape for compiled steps.

    Args:
        sets: sequence of arrays, one per set, whose first axis indexes the
            elements; with `element_table`, int arrays of row indices into
            it.
        labels: array-like `(len(sets),)`, one number per set.
        batch_size: int, sets per batch (the last batch may hold fewer).
        set_size: int, the padded size of every batch. Defaults to `None`:
            the size of the largest set.
        shuffle: bool, whether the sets are shuffled, afresh at every
            epoch. Defaults to `False`.
        seed: optional int, the seed of the shuffling.
        element_table: optional array `(num_rows, ...)` whose rows `sets`
            index, gathered batch by batch (images stored once).
        **kwargs: `keras.utils.PyDataset` arguments (`workers`, ...).

    Example:

    >>> batches = SetBatches(
    ...     [np.array([1, 2, 3]), np.array([4])], [6.0, 4.0], batch_size=2)
    >>> (padded, mask), labels = batches[0]
    >>> mask
    array([[1., 1., 1.],
           [1., 0., 0.]], dtype=float32)
    """

    def __init__(
        self,
        sets,
        labels,
        batch_size,
        set_size=None,
        shuffle=False,
        seed=None,
        element_table=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.batch_size = check_positive_int("batch_size", batch_size)
        self.labels = checked_set_labels(sets, labels)
        self.sets = list(sets)
        self.set_size = (
            max(len(elements) for elements in self.sets)
            if set_size is None
            else check_positive_int("set_size", set_size)
        )
        self.shuffle = shuffle
        self.element_table = element_table
        self._rng = np.random.default_rng(seed)
        self._order = np.arange(len(self.sets))
        self.on_epoch_end()

    def __len__(self):
        return -(-len(self.sets) // self.batch_size)

    def __getitem__(self, index):
        # IndexError past the end lets a plain `for` loop iterate batches.
        if not 0 <= index < len(self):
            raise IndexError(f"batch {index} of {len(self)}")
        chosen = self._order[
            index * self.batch_size : (index + 1) * self.batch_size
        ]
        sets = [self.sets[position] for position in chosen]
        if self.element_table is not None:
            sets = [self.element_table[rows] for rows in sets]
        padded, mask = pad_sets(sets, self.set_size)
        return (padded, mask), self.labels[chosen, None]

    def on_epoch_end(self):
        if self.shuffle:
            self._order = self._rng.permutation(len(self.sets))

"""Sets of different sizes as the builders take them on every backend, in
NumPy: TensorFlow is not imported."""

import numpy as np

from keras_laf.validation import check_positive_int
from keras_laf.validation import tensorflow_module


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

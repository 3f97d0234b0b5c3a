"""Argument and input checks shared by the layers and builders.

Layers declare what Keras can check, the rank and the number of features
of their first input, as a `keras.layers.InputSpec`; the checks here are
what an `InputSpec` cannot say (a rank that depends on another argument,
index tensors, the backend), each made once, where the input enters.
"""

import sys

import keras
import numpy as np
from keras import ops

from keras_laf.core import backend

# How far outside [0, 1] an element of LAF may lie: rounding (a sigmoid
# computed in float32 and rescaled, say). Elements within it are clipped
# into [0, 1]; elements beyond it are an error.
UNIT_INTERVAL_TOLERANCE = 1e-6


def describe_received(name, value):
    """Returns `name=value` for an error message, with the value's repr and,
    unless it is an int, its type.

    The type is what tells `units='3'` (a string) or `units=3.0` apart from
    a valid `units=3`.

    Args:
        name: str, the argument's name.
        value: the received value.

    Example:

    >>> describe_received("units", "3")
    "units='3' (of type str)"
    >>> describe_received("units", 0)
    'units=0'
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{name}={value!r}"
    return f"{name}={value!r} (of type {type(value).__name__})"


def is_int(value):
    """Whether `value` is a Python or NumPy integer, and not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def is_number(value):
    """Whether `value` is a Python or NumPy int or float, and not a bool."""
    return isinstance(
        value, (int, float, np.integer, np.floating)
    ) and not isinstance(value, bool)


def check_bool(name, value):
    """Returns `value`, or raises a ValueError naming it unless it is a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(
            f"`{name}` expected a bool (True or False). "
            f"Received: {describe_received(name, value)}"
        )
    return bool(value)


def check_int(name, value, minimum=None):
    """Returns `value` as an int, or raises a ValueError naming it unless it
    is an integer (of at least `minimum`); bools are rejected."""
    if not is_int(value) or (minimum is not None and value < minimum):
        if minimum == 1:
            expected = "a positive integer"
        elif minimum == 0:
            expected = "a non-negative integer"
        elif minimum is not None:
            expected = f"an integer of at least {minimum}"
        else:
            expected = "an integer"
        raise ValueError(
            f"`{name}` expected {expected}. "
            f"Received: {describe_received(name, value)}"
        )
    return int(value)


def check_positive_int(name, value):
    """Returns `value` as an int, or raises a ValueError naming it.

    Args:
        name: str, the argument's name, for the message.
        value: the received value; bools are rejected.
    """
    return check_int(name, value, minimum=1)


def check_non_negative_int(name, value):
    """Returns `value` as an int, or raises a ValueError unless it is an
    integer >= 0; bools are rejected."""
    return check_int(name, value, minimum=0)


def check_seed(name, value):
    """Returns `value` as an int or None, or raises a ValueError naming it
    unless it is one (a random seed); bools are rejected."""
    if value is None:
        return None
    if not is_int(value):
        raise ValueError(
            f"`{name}` expected an integer or None. "
            f"Received: {describe_received(name, value)}"
        )
    return int(value)


def _bounds(minimum, below, above, maximum):
    """The bounds of `check_number` in words, e.g. ` in [0, 1)`."""
    lower = (
        f"[{minimum}"
        if minimum is not None
        else f"({above}"
        if above is not None
        else None
    )
    upper = (
        f"{maximum}]"
        if maximum is not None
        else f"{below})"
        if below is not None
        else None
    )
    if lower and upper:
        return f" in {lower}, {upper}"
    if minimum is not None:
        return f" of at least {minimum}"
    if above is not None:
        return f" above {above}"
    if maximum is not None:
        return f" of at most {maximum}"
    if below is not None:
        return f" below {below}"
    return ""


def check_number(
    name,
    value,
    minimum=None,
    below=None,
    above=None,
    maximum=None,
    allow_inf=False,
):
    """Returns `value` as a float, or raises a ValueError naming it.

    Args:
        name: str, the argument's name, for the message.
        value: the received value: an int or float, Python or NumPy, not
            NaN; bools are rejected.
        minimum: optional number, the smallest value accepted.
        below: optional number, which the value must stay under.
        above: optional number, which the value must exceed.
        maximum: optional number, the largest value accepted.
        allow_inf: bool, whether `inf` and `-inf` pass (within the
            bounds). Defaults to False: the value must be finite.

    Example:

    >>> check_number("dropout", 0.5, minimum=0, below=1)
    0.5
    >>> check_number("output_bound", float("inf"), above=0, allow_inf=True)
    inf
    """
    if (
        not is_number(value)
        or np.isnan(value)
        or (not allow_inf and np.isinf(value))
        or (minimum is not None and value < minimum)
        or (above is not None and value <= above)
        or (maximum is not None and value > maximum)
        or (below is not None and value >= below)
    ):
        raise ValueError(
            f"`{name}` expected "
            f"{'a number' if allow_inf else 'a finite number'}"
            f"{_bounds(minimum, below, above, maximum)}"
            f"{' (inf included)' if allow_inf else ''}. "
            f"Received: {describe_received(name, value)}"
        )
    return float(value)


def check_positive_number(name, value, allow_inf=False):
    """Returns `value` as a float, or raises a ValueError naming it unless
    it is a number above 0 (or inf, with `allow_inf`); bools are rejected."""
    return check_number(name, value, above=0, allow_inf=allow_inf)


def clone_initializer(initializer):
    """A new initializer object with the configuration of `initializer`.

    One for each weight or sub-layer: a seeded initializer shared between
    them would give them the same values.
    """
    return initializer.__class__.from_config(initializer.get_config())


def check_open_unit_interval(name, value):
    """Returns `value` as a float, or raises a ValueError naming it unless
    it is a number in (0, 1); bools are rejected."""
    return check_number(name, value, above=0, below=1)


def tensorflow_module():
    """The TensorFlow module if something imported it already, else None.

    A `tf.RaggedTensor` can only exist once its creator has imported
    TensorFlow, so checking for one never needs to import it.
    """
    return sys.modules.get("tensorflow")


def is_traced(tensor):
    """Whether `tensor` is symbolic, its values unknown until it runs.

    True inside `tf.function` (`Model.fit`, `predict`), JAX tracing
    (`jax.jit`), `torch.compile`, and while a functional model is built
    (Keras's PyTorch backend then runs the layers on the "meta" device).
    Never imports TensorFlow.
    """
    return backend.is_traced(tensor)


def check_unit_interval(layer, values, sets):
    """Raises where a real element of concrete `values` lies outside [0, 1].

    The check of LAF's elements in eager calls, made once, before the
    layer computes; the range over the real elements is computed only for
    the message. Traced calls (`Model.fit`, `predict`, `jax.jit`) cannot
    raise on a value: there LAF makes such a set's output NaN, so the loss
    shows it. Padding is ignored; so are NaN and inf, whose sets' outputs
    are NaN; elements within `UNIT_INTERVAL_TOLERANCE` of [0, 1] are
    accepted (and clipped); integer values get their own error.

    Args:
        layer: the LAF layer, named in the message.
        values: float `(elements..., features)`, in the layout of `sets`,
            padding zeroed (`keras_laf.core.sets.as_set_batch`).
        sets: a `keras_laf.core.sets.PaddedSets` or `SegmentSets`.
    """
    dtype = keras.backend.standardize_dtype(values.dtype)
    if "float" not in dtype or is_traced(values):
        return
    values = ops.cast(values, "float32")
    finite = ops.isfinite(values)
    # Padding is zero, never outside; NaN and inf make their sets NaN.
    outside = finite & (
        (values < -UNIT_INTERVAL_TOLERANCE)
        | (values > 1 + UNIT_INTERVAL_TOLERANCE)
    )
    if not ops.convert_to_numpy(ops.any(outside)):
        return
    # The range of the real elements, for the message: the largest finite
    # element of each set, and the largest negated one, (2, sets, features).
    extremes = ops.stack(
        [
            sets.max(ops.where(finite, values, float("-inf"))),
            sets.max(ops.where(finite, -values, float("-inf"))),
        ]
    )
    highest, negated_lowest = np.max(
        ops.convert_to_numpy(extremes), axis=(1, 2), initial=-np.inf
    )
    raise ValueError(
        f"Layer '{layer.name}' ({type(layer).__name__}) aggregates "
        "values in [0, 1]; received values in "
        f"[{-negated_lowest!s}, {highest!s}]. Put a sigmoid (as the paper "
        "does) or another map into [0, 1] before the layer, e.g. "
        "keras.layers.Activation('sigmoid')."
    )


PADDED_SETS_INSTEAD = (
    "pass padded sets (batch, set_size, features) with a mask (batch, "
    "set_size), e.g. from `keras_laf.datasets.to_padded_batches(dataset)`, "
    "or flat values with `segment_ids`"
)


def require_tensorflow(feature, received, instead=PADDED_SETS_INSTEAD):
    """Raises the ValueError of a feature that needs the TensorFlow backend.

    The one place that says so, and what to do on the other backends.

    Args:
        feature: str, what needs TensorFlow, e.g. `"Ragged inputs"`.
        received: str, what was received, for the message.
        instead: str, what to do instead. Defaults to passing padded sets
            with a mask, or segment ids.
    """
    if not backend.takes_ragged_tensors():
        raise ValueError(
            f"{feature} need the TensorFlow backend. On the "
            f"{keras.config.backend()} backend {instead}. Received: "
            f"{received}"
        )


def check_backend_supports(inputs):
    """Raises where `inputs` is a `tf.RaggedTensor` off TensorFlow.

    Keras would reject it before `call` with a message about positional
    arguments; this says how to pad the sets instead.
    """
    tf = tensorflow_module()
    if tf is not None and isinstance(inputs, tf.RaggedTensor):
        require_tensorflow(
            "Ragged inputs (tf.RaggedTensor)",
            f"a tf.RaggedTensor of shape {inputs.shape}",
        )


def check_shape(layer, argument, shape, ranks, layout):
    """Returns `shape` as a tuple, or raises a ValueError naming `layer`.

    Args:
        layer: the layer checking its input, named in the message.
        argument: str, the call argument, e.g. `"inputs"`.
        shape: the received shape.
        ranks: tuple of the accepted ranks.
        layout: str, the expected shape in words, e.g.
            `"(batch, set_size, features)"`.
    """
    shape = tuple(shape)
    if len(shape) not in ranks or shape[-1] is None:
        raise ValueError(
            f"Layer '{layer.name}' ({type(layer).__name__}) expects "
            f"`{argument}` of shape {layout} with a known number of "
            f"features. Received: {argument}.shape={shape}"
        )
    return shape


def check_set_form(layer, inputs, segment_ids):
    """Raises where flat values `(num_elements, features)` come without
    `segment_ids`, which alone say which set each element belongs to.

    Checked when the layer is called, before Keras builds it: a rank-2
    `keras.Input` into a set aggregation fails when the model is built.
    """
    shape = tuple(getattr(inputs, "shape", np.shape(inputs)))
    if segment_ids is None and len(shape) == 2:
        raise ValueError(
            f"Layer '{layer.name}' ({type(layer).__name__}) expects sets "
            "of shape (batch, set_size, features); flat values "
            "(num_elements, features) need `segment_ids`. Received: "
            f"inputs.shape={shape} and segment_ids=None"
        )


def check_index_tensor(layer, name, indices, items):
    """Checks the dtype and rank of an index tensor (symbolic or not).

    Args:
        layer: the layer checking its input, named in the message.
        name: str, the argument's name.
        indices: the received tensor.
        items: str, what the indices count (`"node"`, `"graph"`).
    """
    if indices is None:
        raise ValueError(
            f"Layer '{layer.name}' ({type(layer).__name__}) needs "
            f"`{name}`. Received: {name}=None"
        )
    dtype = keras.backend.standardize_dtype(indices.dtype)
    if "int" not in dtype:
        raise ValueError(
            f"`{name}` must be an integer tensor of {items} indices; cast "
            f"it to int32. Received: {name}.dtype={dtype}"
        )
    if len(indices.shape) != 1:
        raise ValueError(
            f"`{name}` must have rank 1, one index per item. "
            f"Received: {name}.shape={tuple(indices.shape)}"
        )


def check_same_length(first_name, first, second_name, second):
    """Raises where two tensors' known leading sizes differ."""
    first_length, second_length = first.shape[0], second.shape[0]
    if (
        first_length is not None
        and second_length is not None
        and first_length != second_length
    ):
        raise ValueError(
            f"`{first_name}` and `{second_name}` must have the same length. "
            f"Received: {first_name}.shape={tuple(first.shape)}, "
            f"{second_name}.shape={tuple(second.shape)}"
        )


def check_set_inputs(layer, inputs, segment_ids):
    """The checks of an aggregation's call, before Keras builds it: no
    ragged tensor off TensorFlow, no flat values without `segment_ids`."""
    check_backend_supports(inputs)
    check_set_form(layer, inputs, segment_ids)


def check_set_shape(layer, input_shape):
    """The shape of an aggregation's sets, `(batch, set_size, features)`
    or `(num_elements, features)`, with known features (`check_shape`)."""
    return check_shape(
        layer,
        "inputs",
        input_shape,
        (2, 3),
        "(batch, set_size, features), or (num_elements, features) with "
        "segment_ids,",
    )


def aggregation_input_spec(features=None):
    """The `InputSpec` of an aggregation over sets: rank 3 `(batch,
    set_size, features)` or 2 `(num_elements, features)`, with
    `features` features where the layer's weights fix them."""
    axes = None if features is None else {-1: features}
    return keras.layers.InputSpec(min_ndim=2, max_ndim=3, axes=axes)

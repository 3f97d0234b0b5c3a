"""Pieces shared by the set model builders: inputs, element networks, heads.

Every builder's default, `ragged=False`, gives the same model inputs on
TensorFlow, JAX and PyTorch, so that one `fit` script runs on each: the
padded sets `(batch, set_size, ...)` and a float32 mask `(batch, set_size)`
(1 for real elements, 0 for padding; float rather than bool because Keras
3.15 fails on boolean inputs under `MirroredStrategy`), which is passed to
every layer that looks across the set. `keras_laf.datasets.pad_sets` makes
them from a list of sets or a ragged tensor, and
`keras_laf.datasets.to_padded_batches` from a ragged `tf.data` pipeline
(the way to train with `tf.distribute` too: Keras cannot distribute ragged
batches). `ragged=True` is a TensorFlow option: one input,
`keras.Input(shape=(None, ...), ragged=True)`.
"""

import keras

from keras_laf import aggregations
from keras_laf.aggregations import MultiAggregation
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import is_int
from keras_laf.core.validation import require_tensorflow
from keras_laf.layers import PerElement


def with_laf_arguments(identifier, aggregation_kwargs=None, **laf_kwargs):
    """`aggregation_kwargs` with LAF's arguments `laf_kwargs` (None ones
    left out) where `identifier` is `"laf"` or a list holding it (in its
    member's `aggregations_kwargs`); the arguments given win.

    Example:

    >>> from keras_laf.models.building_blocks import with_laf_arguments
    >>> with_laf_arguments("laf", {"output_bound": 10.0}, units=9)
    {'units': 9, 'output_bound': 10.0}
    >>> with_laf_arguments(["laf", "max"], units=9, preset=None)
    {'aggregations_kwargs': [{'units': 9}, {}]}
    >>> with_laf_arguments("max", units=9)
    {}
    """
    laf_kwargs = {k: v for k, v in laf_kwargs.items() if v is not None}
    kwargs = dict(aggregation_kwargs or {})
    if isinstance(identifier, str):
        return {**laf_kwargs, **kwargs} if identifier == "laf" else kwargs
    if isinstance(identifier, (list, tuple)) and "laf" in identifier:
        members = kwargs.get("aggregations_kwargs") or [{} for _ in identifier]
        kwargs["aggregations_kwargs"] = [
            {**laf_kwargs, **member} if name == "laf" else dict(member)
            for name, member in zip(identifier, members, strict=True)
        ]
    return kwargs


def set_aggregation(aggregation, aggregation_kwargs, name):
    """The aggregation layer of a set model, from its spec.

    Its elements come out of a sigmoid (or LAF's own map into [0, 1])
    already: a `MultiAggregation` made from a list squashes none of its
    members' elements again, unless `aggregation_kwargs` say otherwise.
    """
    layer = aggregations.resolve(
        aggregation,
        **aggregations.held_kwargs(aggregation, aggregation_kwargs, name, None),
    )
    kwargs = dict(aggregation_kwargs or {})
    if (
        isinstance(layer, MultiAggregation)
        and not isinstance(aggregation, keras.layers.Layer)
        and "laf_activation" not in kwargs
    ):
        kwargs["laf_activation"] = None
        layer = aggregations.resolve(
            aggregation,
            **aggregations.held_kwargs(aggregation, kwargs, name, None),
        )
    return layer


def check_widths(name, widths):
    try:
        sequence = tuple(widths)
    except TypeError:  # a single width, or None
        sequence = None
    if sequence is None or not all(
        is_int(width) and width > 0 for width in sequence
    ):
        raise ValueError(
            f"`{name}` must be a sequence of positive integers (layer "
            f"widths). Received: {name}={widths}"
        )
    return tuple(int(width) for width in sequence)


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(
            f"Unknown {name} {value!r}. Expected one of {list(choices)}."
        )


def set_inputs(element_shape, ragged, dtype="float32"):
    """Model inputs for sets of elements of `element_shape`.

    Args:
        element_shape: tuple, the shape of one element.
        ragged: bool, the builder's argument (None is taken as False,
            the default).
        dtype: str, the dtype of the elements.

    Returns:
        A tuple `(inputs, sets, mask)`: the model's inputs (one tensor, or
        `[sets, mask]` when not ragged), the sets tensor, and the mask
        tensor or None.
    """
    if ragged is None:
        ragged = False
    ragged = check_bool("ragged", ragged)
    if ragged:
        require_tensorflow(
            "Ragged model inputs",
            "ragged=True",
            instead="build the model with ragged=False (the default) and "
            "feed padded sets with a mask, e.g. from "
            "`keras_laf.datasets.pad_sets(sets)`",
        )
        sets = keras.Input(
            shape=(None, *element_shape), dtype=dtype, ragged=True, name="sets"
        )
        return sets, sets, None
    sets = keras.Input(shape=(None, *element_shape), dtype=dtype, name="sets")
    mask = keras.Input(shape=(None,), dtype="float32", name="mask")
    return [sets, mask], sets, mask


def element_network(elements, widths, activation, output_activation, name):
    """Dense layers applied to every element; the last has its own activation.

    With no widths, only `output_activation` is applied (e.g. the sigmoid
    that brings elements into [0, 1] before LAF).
    """
    if not widths:
        layer = keras.layers.Activation(output_activation)
        return PerElement(layer, name=f"{name}_activation")(elements)
    for index, width in enumerate(widths):
        last = index == len(widths) - 1
        layer = keras.layers.Dense(
            width, activation=output_activation if last else activation
        )
        elements = PerElement(layer, name=f"{name}_{index}")(elements)
    return elements


def dense_head(features, widths, activation, output_dim, name):
    """Dense layers of `widths` then a linear output layer."""
    for index, width in enumerate(widths):
        features = keras.layers.Dense(
            width, activation=activation, name=f"{name}_{index}"
        )(features)
    return keras.layers.Dense(output_dim, name="output")(features)

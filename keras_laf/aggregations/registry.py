"""The registry of aggregations: `register` fills it, `resolve` reads it.

`register(name, **defaults)` names a class, the package's and a user's
alike; `resolve(identifier, **aggregation_kwargs)` (also `get`) is the
only path from a name, a list or a layer to a layer, as PyTorch
Geometric's `aggregation_resolver`. Beside `base` at the bottom of
`keras_laf.aggregations`, it knows the classes only through registration.
"""

import inspect

import keras

from keras_laf.aggregations.base import SetAggregation

# name -> (class, the arguments its name stands for).
_REGISTRY = {}
# The name of the class whose `from_list` combines a list; a list of
# names of one class with a `list_argument`, each that argument alone
# (the fixed aggregators), is one layer of that class.
MULTI = "multi"


def register(name, **defaults):
    """Registers an aggregation class under `name` for `resolve`, and
    for Keras serialization (package `"keras_laf"`) if it is not yet.

    Args:
        name: str. The name, e.g. `"laf"`; registered again, it names the
            new class (a notebook cell run again).
        **defaults: the arguments the name stands for, e.g.
            `register("laf", units=9)`; `resolve` may override them.

    Example:

    >>> @register("twice_the_sum")
    ... class TwiceTheSum(keras_laf.SetAggregation):
    ...     num_aggregates = 1
    ...     def aggregate(self, values, sets):
    ...         return keras.ops.expand_dims(2.0 * sets.sum(values), -1)
    >>> layer = keras_laf.aggregations.resolve("twice_the_sum")
    >>> keras.ops.convert_to_numpy(layer(np.ones((1, 3, 1), "float32")))
    array([[6.]], dtype=float32)
    """
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"`name` must be a non-empty string. Received: name={name!r}"
        )

    def decorator(cls):
        if not (isinstance(cls, type) and issubclass(cls, SetAggregation)):
            raise ValueError(
                "`register` takes a subclass of `keras_laf.SetAggregation`. "
                f"Received: {cls!r} for the name {name!r}"
            )
        _check_arguments(cls, defaults, name)
        serialized_name = keras.saving.get_registered_name(cls)
        if keras.saving.get_registered_object(serialized_name) is not cls:
            keras.saving.register_keras_serializable(package="keras_laf")(cls)
        _REGISTRY[name] = (cls, dict(defaults))
        return cls

    return decorator


def names():
    """The registered names, a user's included, in registration order;
    without those of the classes that combine lists (`"multi"`, `"fixed"`).

    Example:

    >>> {"laf", "sum", "max", "softmax", "set2set"} <= set(names())
    True
    """
    return tuple(
        name
        for name, (cls, defaults) in _REGISTRY.items()
        if name != MULTI
        and not (getattr(cls, "list_argument", None) and not defaults)
    )


def classes():
    """The registered classes, a user's included, in registration order."""
    return tuple(dict.fromkeys(cls for cls, _ in _REGISTRY.values()))


def registered(name):
    """The class and default arguments registered under `name`.

    Raises:
        ValueError: no aggregation has that name.
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(
            f"Unknown aggregation {name!r}. Expected one of "
            f"{list(_REGISTRY)}, a list of them (e.g. ['laf', 'max']) or an "
            "aggregation layer; `keras_laf.aggregations.register` adds a "
            "name."
        )
    cls, defaults = _REGISTRY[name]
    return cls, dict(defaults)


def _combined_list(members):
    # The class and its argument when every member is a name registered to
    # one class with a `list_argument`, each with it alone as a string.
    if not all(isinstance(member, str) for member in members):
        return None
    entries = [_REGISTRY.get(member) for member in members]
    if None in entries:
        return None
    classes = {cls for cls, _ in entries}
    cls = next(iter(classes))
    argument = getattr(cls, "list_argument", None)
    if len(classes) != 1 or argument is None:
        return None
    if not all(
        set(defaults) == {argument} and isinstance(defaults[argument], str)
        for _, defaults in entries
    ):
        return None
    return cls, argument


def _accepted_arguments(cls):
    # The keyword arguments of the `__init__` chain of `cls`, down to the
    # first without `**kwargs` or to the base layer's own.
    names = set()
    for klass in cls.__mro__:
        if klass is keras.layers.Layer:
            return names | {"name", "dtype", "trainable", "autocast"}
        if "__init__" in vars(klass):
            parameters = inspect.signature(klass.__init__).parameters.values()
            kinds = {parameter.kind: parameter.name for parameter in parameters}
            names |= {
                parameter.name
                for parameter in parameters
                if parameter.kind
                in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
            } - {"self"}
            if inspect.Parameter.VAR_KEYWORD not in kinds:
                return names
    return names


def _check_arguments(cls, arguments, name):
    unknown = sorted(set(arguments) - _accepted_arguments(cls))
    if unknown:
        raise ValueError(
            f"The aggregation {name!r} ({cls.__name__}) takes no argument "
            f"{', '.join(map(repr, unknown))}. Its arguments: "
            f"{sorted(_accepted_arguments(cls))}"
        )


def resolve(identifier, **aggregation_kwargs):
    """The aggregation layer of the spec `(identifier, aggregation_kwargs)`.

    The one path from a spec to a layer, as PyTorch Geometric's
    `aggregation_resolver`: the graph layers, `MultiAggregation`,
    `DegreeScalerAggregation` and the builders all call it.

    - a registered name (`"laf"`, `"sum"`, `"softmax"`, `"set2set"`, a
      user's own, ...): a new layer of its class, with the arguments the
      name was registered with, then `aggregation_kwargs`;
    - a list of fixed aggregator names (`["mean", "max"]`): one
      `FixedAggregation`;
    - any other list (`["laf", "max"]`): a `MultiAggregation` of them;
      `aggregation_kwargs` are its own (`mode`, `units`,
      `aggregations_kwargs` with each member's, as PyTorch Geometric's
      `aggrs_kwargs`);
    - an aggregation layer: returned as it is.

    Raises:
        ValueError: the identifier names no aggregation, or the layer
            takes no such argument.

    Example:

    >>> resolve("laf").units  # the paper's 9 units
    9
    >>> resolve("laf", units=4, preset="closed_forms").preset
    'closed_forms'
    >>> resolve(["mean", "max"], name="pooling").aggregators
    ['mean', 'max']
    >>> layer = resolve(["laf", "max"], aggregations_kwargs=[{"units": 4}, {}])
    >>> type(layer).__name__, layer.members[0].units
    ('MultiAggregation', 4)
    """
    if isinstance(identifier, keras.layers.Layer):
        if not isinstance(identifier, SetAggregation):
            raise ValueError(
                "An aggregation layer must be a `keras_laf.SetAggregation` "
                "(LAF, FixedAggregation, SoftmaxAggregation, ...). Received: "
                f"a layer of type {type(identifier).__name__}"
            )
        if aggregation_kwargs:
            raise ValueError(
                "An aggregation layer comes with its own arguments; "
                "`aggregation_kwargs` configure one made from a name. "
                f"Received: {sorted(aggregation_kwargs)} with the layer "
                f"'{identifier.name}'"
            )
        return identifier
    if isinstance(identifier, str):
        cls, defaults = registered(identifier)
    elif isinstance(identifier, (list, tuple)) and identifier:
        combined = _combined_list(identifier)
        if combined is None:
            multi, _ = registered(MULTI)
            return multi.from_list(list(identifier), **aggregation_kwargs)
        cls, argument = combined
        defaults = {argument: list(identifier)}
    else:
        raise ValueError(
            "An aggregation is a name, a non-empty list of names or an "
            f"aggregation layer. Expected one of {list(names())}, a list "
            "of them or a `keras_laf.SetAggregation`. Received: "
            f"{identifier!r}"
        )
    arguments = {**defaults, **aggregation_kwargs}
    _check_arguments(cls, arguments, identifier)
    return cls(**arguments)


# `get` is Keras's name for it (`keras.layers.get`, `keras.activations.get`).
get = resolve


def held_kwargs(identifier, aggregation_kwargs, name, dtype):
    """The arguments of `resolve(identifier, **held_kwargs(...))` for a
    layer that holds the aggregation: one made from a name is named `name`
    with the holder's `dtype` policy, unless `aggregation_kwargs` say
    otherwise; a layer takes none.

    Raises:
        ValueError: `aggregation_kwargs` is not a dict or None.
    """
    if aggregation_kwargs is not None and not isinstance(
        aggregation_kwargs, dict
    ):
        raise ValueError(
            "`aggregation_kwargs` must be a dict of the aggregation's "
            "arguments, e.g. {'units': 8} for 'laf'. Received: "
            f"aggregation_kwargs={aggregation_kwargs!r}"
        )
    if isinstance(identifier, keras.layers.Layer):
        return dict(aggregation_kwargs or {})
    return {"name": name, "dtype": dtype, **(aggregation_kwargs or {})}

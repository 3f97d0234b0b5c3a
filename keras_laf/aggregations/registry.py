"""The registry of aggregations: `register` fills it, `get` reads it.

`register(name, **defaults)` is a class decorator: the package's own
aggregations and a user's are registered the same way, and from then on
their name works wherever an aggregation is taken (`get`,
`MultiAggregation`, `DegreeScalerAggregation`, every graph layer and the
builders). `get(identifier, **aggregation_kwargs)` is the only path from a
name, a list or an instance to a layer, as PyTorch Geometric's
`aggregation_resolver`: a name means the same layer everywhere, its
defaults those it was registered with.

This module sits at the bottom of `keras_laf.aggregations` beside `base`:
it knows the classes only through what was registered.
"""

import inspect
import warnings

import keras

from keras_laf.aggregations.base import SetAggregation

# name -> (class, the arguments its name stands for).
_REGISTRY = {}
# The names under which `get` finds the combinations of a list of names:
# a list of the fixed aggregators' names is one `FixedAggregation`, any
# other list a `MultiAggregation`.
FIXED = "fixed"
MULTI = "multi"


def register(name, **defaults):
    """Registers an aggregation class under `name`, for `get` and
    everything that takes aggregations by name.

    A class not yet registered for Keras serialization is registered too
    (package `"keras_laf"`), so that models holding it save and load.

    Args:
        name: str. The name, e.g. `"laf"`. A name registered before is
            taken over by the new class (a notebook cell run again).
        **defaults: arguments the name stands for, e.g.
            `register("laf", units=9)`; a call of `get` may override them.

    Returns:
        A class decorator returning the class unchanged.

    Example:

    >>> @register("twice_the_sum")
    ... class TwiceTheSum(keras_laf.SetAggregation):
    ...     num_aggregates = 1
    ...     def aggregate(self, values, sets):
    ...         return keras.ops.expand_dims(2.0 * sets.sum(values), -1)
    >>> layer = keras_laf.aggregations.get("twice_the_sum")
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
        if (
            keras.saving.get_registered_object(
                keras.saving.get_registered_name(cls)
            )
            is not cls
        ):
            keras.saving.register_keras_serializable(package="keras_laf")(cls)
        _REGISTRY[name] = (cls, dict(defaults))
        return cls

    return decorator


def names():
    """The registered names, the user's included, in registration order;
    without `"fixed"` and `"multi"`, under which `get` finds the classes
    that combine a list.

    Example:

    >>> {"laf", "sum", "max", "softmax", "set2set"} <= set(names())
    True
    """
    return tuple(name for name in _REGISTRY if name not in (FIXED, MULTI))


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


def is_fixed_name(name):
    """Whether `name` is one fixed aggregator (`"sum"`, `"max"`, ...),
    which lists combine into one `FixedAggregation`."""
    if not isinstance(name, str) or name not in _REGISTRY:
        return False
    cls, defaults = _REGISTRY[name]
    return (
        FIXED in _REGISTRY
        and cls is _REGISTRY[FIXED][0]
        and isinstance(defaults.get("aggregators"), str)
    )


def _accepted_arguments(cls):
    """The keyword arguments of `cls`, or None if it takes any."""
    parameters = {}
    for klass in cls.__mro__:
        if klass is keras.layers.Layer:
            break
        if "__init__" not in vars(klass):
            continue
        signature = inspect.signature(klass.__init__)
        for parameter in list(signature.parameters.values())[1:]:
            if parameter.kind in (
                parameter.POSITIONAL_OR_KEYWORD,
                parameter.KEYWORD_ONLY,
            ):
                parameters.setdefault(parameter.name, parameter)
        if not any(
            parameter.kind == parameter.VAR_KEYWORD
            for parameter in signature.parameters.values()
        ):
            return set(parameters)
    # The base layer's own keyword arguments.
    return set(parameters) | {"name", "dtype", "trainable", "autocast"}


def _check_arguments(cls, arguments, name):
    unknown = sorted(set(arguments) - _accepted_arguments(cls))
    if unknown:
        raise ValueError(
            f"The aggregation {name!r} ({cls.__name__}) takes no argument "
            f"{', '.join(map(repr, unknown))}. Its arguments: "
            f"{sorted(_accepted_arguments(cls))}"
        )


def get(identifier, **aggregation_kwargs):
    """Returns the aggregation layer `identifier` names.

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

    Args:
        identifier: a name, a non-empty list of names and layers, or a
            `keras_laf.SetAggregation` layer.
        **aggregation_kwargs: arguments of the layer built, e.g.
            `units=4, preset="closed_forms"` for `"laf"`, and `name`,
            `dtype`.

    Returns:
        A `keras_laf.SetAggregation` layer.

    Raises:
        ValueError: the identifier names no aggregation, or the layer
            takes no such argument.

    Example:

    >>> get("laf").units  # the paper's 9 units
    9
    >>> get("laf", units=4, preset="closed_forms").preset
    'closed_forms'
    >>> get(["mean", "max"], name="pooling").aggregators
    ['mean', 'max']
    >>> layer = get(["laf", "max"], aggregations_kwargs=[{"units": 4}, {}])
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
        return _build(identifier, aggregation_kwargs)
    if isinstance(identifier, (list, tuple)) and identifier:
        members = list(identifier)
        if all(is_fixed_name(member) for member in members):
            return _build(FIXED, {"aggregators": members, **aggregation_kwargs})
        aggregation_kwargs = _former_units_and_preset(
            members, aggregation_kwargs
        )
        members_kwargs = checked_members_kwargs(
            aggregation_kwargs.pop("aggregations_kwargs", None), len(members)
        )
        # The members are built here, named after their names, and handed
        # over as layers: the weights of saved models are where those put
        # them.
        dtype = aggregation_kwargs.get("dtype")
        layers = [
            get(
                member,
                **(
                    {"name": f"{member}_{index}", "dtype": dtype}
                    if isinstance(member, str)
                    else {}
                ),
                **kwargs,
            )
            for index, (member, kwargs) in enumerate(
                zip(members, members_kwargs, strict=True)
            )
        ]
        return _build(MULTI, {"aggregations": layers, **aggregation_kwargs})
    raise ValueError(
        "An aggregation is a name, a non-empty list of names or an "
        f"aggregation layer. Expected one of {list(_REGISTRY)}, a list of "
        f"them or a `keras_laf.SetAggregation`. Received: {identifier!r}"
    )


def checked_members_kwargs(aggregations_kwargs, num_members):
    """The arguments of each member of a list, one dict each (empty ones
    for None), or a ValueError naming what was received."""
    if aggregations_kwargs is None:
        return [{}] * num_members
    if not (
        isinstance(aggregations_kwargs, (list, tuple))
        and len(aggregations_kwargs) == num_members
        and all(isinstance(kwargs, dict) for kwargs in aggregations_kwargs)
    ):
        raise ValueError(
            "`aggregations_kwargs` must be a list of dicts, one per "
            f"aggregation ({num_members}). Received: "
            f"aggregations_kwargs={aggregations_kwargs!r}"
        )
    return [dict(kwargs) for kwargs in aggregations_kwargs]


def _build(name, arguments):
    cls, defaults = registered(name)
    arguments = {**defaults, **arguments}
    arguments = _without_former_shortcuts(name, cls, arguments)
    _check_arguments(cls, arguments, name)
    return cls(**arguments)


# Before `aggregation_kwargs`, `get` took `units` and `preset` for every
# identifier and gave them to the aggregations that have them: the LAF's
# units and preset, the recurrent aggregations' units, the GMT's width.
_FORMER_SHORTCUTS = {
    "laf": {"units": "units", "preset": "preset"},
    "lstm": {"units": "units"},
    "gru": {"units": "units"},
    "gmt": {"units": "dim"},
}


def former_shortcut_kwargs(identifier, units=None, preset=None):
    """The `aggregation_kwargs` that the former `units` and `preset`
    shortcuts stand for with `identifier`: LAF's units and preset, the
    recurrent aggregations' units, the GMT's width, each member's for a
    list; nothing for a layer or a name that has none of them.

    Example:

    >>> former_shortcut_kwargs("laf", units=4)
    {'units': 4}
    >>> former_shortcut_kwargs(["laf", "max"], units=4)
    {'aggregations_kwargs': [{'units': 4}, {}]}
    """
    given = {
        key: value
        for key, value in (("units", units), ("preset", preset))
        if value is not None
    }
    if isinstance(identifier, str):
        names = _FORMER_SHORTCUTS.get(identifier, {})
        return {
            names[key]: value for key, value in given.items() if key in names
        }
    if isinstance(identifier, (list, tuple)) and not all(
        is_fixed_name(member) for member in identifier
    ):
        members = [
            former_shortcut_kwargs(member, units, preset)
            if isinstance(member, str)
            else {}
            for member in identifier
        ]
        return {"aggregations_kwargs": members} if any(members) else {}
    return {}


def with_former_shortcuts(
    identifier, aggregation_kwargs, units, preset, caller, stacklevel=2
):
    """`aggregation_kwargs` with the deprecated `laf_units` and
    `laf_preset` of `caller` folded in (`former_shortcut_kwargs`); the
    arguments given in `aggregation_kwargs` win.

    Args:
        identifier: the aggregation: a name, a list or a layer.
        aggregation_kwargs: None or the dict of the aggregation's
            arguments.
        units: the former `laf_units` shortcut, None where not given.
        preset: the former `laf_preset` shortcut, None where not given.
        caller: what took them, for the warning (`"AggregationConv"`).
        stacklevel: the `warnings.warn` stack level, counted from the
            caller of this function.

    Returns:
        A new dict.

    Raises:
        ValueError: a shortcut is given with an aggregation layer, which
            has its own.
    """
    aggregation_kwargs = dict(aggregation_kwargs or {})
    if units is None and preset is None:
        return aggregation_kwargs
    if isinstance(identifier, keras.layers.Layer):
        raise ValueError(
            "`laf_units` and `laf_preset` configure a LAF made from a "
            "name; an aggregation layer has its own, e.g. "
            "`keras_laf.LAF(units=8, preset='closed_forms')`. Received: "
            f"laf_units={units!r}, laf_preset={preset!r} with "
            f"aggregation={type(identifier).__name__}"
        )
    warnings.warn(
        f"`{caller}(laf_units=..., laf_preset=...)` is deprecated: pass "
        "the aggregation's arguments as `aggregation_kwargs`, e.g. "
        "`aggregation='laf', aggregation_kwargs={'units': 8, "
        "'preset': 'closed_forms'}`.",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return {
        **former_shortcut_kwargs(identifier, units, preset),
        **aggregation_kwargs,
    }


def _without_former_shortcuts(name, cls, arguments):
    # `get("max", units=4)`: a shortcut the class has no use for, dropped
    # with a warning as the former `get` ignored it.
    accepted = _accepted_arguments(cls)
    dropped = sorted(
        key
        for key in ("units", "preset")
        if key in arguments and key not in accepted
    )
    if not dropped:
        return arguments
    warnings.warn(
        f"`get({name!r}, {', '.join(dropped)}=...)`: {cls.__name__} takes "
        "no such argument, and it is ignored; passing it is deprecated and "
        "will raise a ValueError.",
        DeprecationWarning,
        stacklevel=4,
    )
    return {
        key: value for key, value in arguments.items() if key not in dropped
    }


def _former_units_and_preset(members, arguments):
    # `get(["laf", "max"], units=4)`: the former shortcuts, which gave
    # each member its units, where they cannot be the projection's width.
    if "preset" not in arguments and (
        "units" not in arguments or arguments.get("mode") == "proj"
    ):
        return arguments
    arguments = dict(arguments)
    units = (
        None
        if arguments.get("mode") == "proj"
        else arguments.pop("units", None)
    )
    preset = arguments.pop("preset", None)
    warnings.warn(
        "`get([...], units=..., preset=...)` is deprecated: pass each "
        "member's arguments as `aggregations_kwargs`, e.g. "
        "`get(['laf', 'max'], aggregations_kwargs=[{'units': 4}, {}])`.",
        DeprecationWarning,
        stacklevel=3,
    )
    return {**former_shortcut_kwargs(members, units, preset), **arguments}


def output_width(identifier, features, **aggregation_kwargs):
    """The output width of `get(identifier, **aggregation_kwargs)` on
    elements of `features` features.

    Example:

    >>> output_width(["laf", "max"], 3, aggregations_kwargs=[{"units": 4}, {}])
    15
    >>> output_width("set2set", 3)
    6
    """
    return get(identifier, **aggregation_kwargs).output_width(features)

"""Argument checks shared by the layers and builders."""

import numpy as np


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


def check_positive_int(name, value):
    """Returns `value` as an int, or raises a ValueError naming it.

    Args:
        name: str, the argument's name, for the message.
        value: the received value; bools are rejected.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 1
    ):
        raise ValueError(
            f"`{name}` expected a positive integer. "
            f"Received: {describe_received(name, value)}"
        )
    return int(value)

"""Argument checks shared by the layers and builders."""

import numpy as np


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
            f"`{name}` expected a positive integer. Received: {name}={value}"
        )
    return int(value)

"""LAF parameters of the aggregators in Table 1 of the paper.

Each aggregator is a row of exponents (a..h) and coefficients
(alpha, beta, gamma, delta). Two rows of the printed table have a wrong
sign: min/max needs beta = -1 and max/min needs delta = -1, because
min(x) = 1 - max(1 - x). The max and min rows approximate the maximum by
(sum x^r)^(1/r), which is within a factor n^(1/r) of the maximum of n
elements (6.2% for n = 20, r = 50); the log-space computation of
`keras_laf.LAF` keeps that bound at every scale.
"""

import keras
import numpy as np
from keras import ops

# Aggregator name -> (parameters with defaults, function of the parameters
# returning ((a, b, c, d, e, f, g, h), (alpha, beta, gamma, delta))). Unused
# terms have coefficient 0 and exponents 0 (the term is then 1).
_TABLE = {
    "constant": (
        {"value": 1.0},
        lambda value: ((0, 0, 0, 0, 0, 0, 0, 0), (value, 0, 1, 0)),
    ),
    "count": ({}, lambda: ((1, 0, 0, 0, 0, 0, 0, 0), (1, 0, 1, 0))),
    "sum": ({}, lambda: ((1, 1, 0, 0, 0, 0, 0, 0), (1, 0, 1, 0))),
    "mean": ({}, lambda: ((1, 1, 0, 0, 1, 0, 0, 0), (1, 0, 1, 0))),
    "moment": (
        {"k": 2.0},
        lambda k: ((1, k, 0, 0, 1, 0, 0, 0), (1, 0, 1, 0)),
    ),
    "moment_power": (
        {"k": 2.0, "l": 2.0},
        # k and l as in the paper.
        lambda k, l: ((l, k, 0, 0, l, 0, 0, 0), (1, 0, 1, 0)),  # noqa: E741
    ),
    "max": (
        {"r": 50.0},
        lambda r: ((1 / r, r, 0, 0, 0, 0, 0, 0), (1, 0, 1, 0)),
    ),
    "min": (
        {"r": 50.0},
        lambda r: ((0, 0, 1 / r, r, 0, 0, 0, 0), (1, -1, 1, 0)),
    ),
    "min/max": (
        {"r": 50.0},
        lambda r: ((0, 0, 1 / r, r, 1 / r, r, 0, 0), (1, -1, 1, 0)),
    ),
    "max/min": (
        {"r": 50.0},
        lambda r: ((1 / r, r, 0, 0, 0, 0, 1 / r, r), (1, 0, 1, -1)),
    ),
}

CLOSED_FORM_NAMES = tuple(_TABLE)


def _standardize(form):
    """`"max"` or `{"name": "max", "r": 20}` -> `("max", {"r": 20.0})`."""
    if isinstance(form, str):
        name, parameters = form, {}
    elif isinstance(form, dict) and "name" in form:
        parameters = dict(form)
        name = parameters.pop("name")
    else:
        raise ValueError(
            "A closed form is a name or a dict with a 'name' key and its "
            f"parameters, e.g. {{'name': 'moment', 'k': 3}}. Received: {form}"
        )
    if name not in _TABLE:
        raise ValueError(
            f"Unknown closed form {name!r}. Expected one of "
            f"{list(CLOSED_FORM_NAMES)}."
        )
    defaults, _ = _TABLE[name]
    unknown = set(parameters) - set(defaults)
    if unknown:
        raise ValueError(
            f"Closed form {name!r} takes parameters {sorted(defaults)}. "
            f"Received: {sorted(unknown)}"
        )
    values = {**defaults, **parameters}
    for key, value in values.items():
        if not isinstance(value, (int, float)) or not np.isfinite(value):
            raise ValueError(
                f"Parameter {key!r} of closed form {name!r} must be a finite "
                f"number. Received: {key}={value!r}"
            )
        if key != "value" and value <= 0:
            raise ValueError(
                f"Parameter {key!r} of closed form {name!r} must be "
                f"positive. Received: {key}={value}"
            )
    return name, {key: float(value) for key, value in values.items()}


def closed_form(name, **parameters):
    """LAF parameters of one aggregator of Table 1 of the paper.

    Args:
        name: str. One of `"constant"` (parameter `value`, default 1),
            `"count"`, `"sum"`, `"mean"`, `"moment"` (the k-th moment
            mean(x^k), parameter `k`, default 2), `"moment_power"` (the l-th
            power of the k-th moment, parameters `k` and `l`, default 2),
            `"max"`, `"min"`, `"min/max"`, `"max/min"` (parameter `r` of
            the approximation max(x) ~ (sum x^r)^(1/r), default 50).
        **parameters: the aggregator's parameters.

    Returns:
        A tuple `(exponents, coefficients)` of float32 NumPy arrays of
        shapes `(8,)` (a..h) and `(4,)` (alpha, beta, gamma, delta).

    Example:

    >>> exponents, coefficients = closed_form("moment", k=3)
    >>> exponents
    array([1., 3., 0., 0., 1., 0., 0., 0.], dtype=float32)
    """
    name, values = _standardize({"name": name, **parameters})
    exponents, coefficients = _TABLE[name][1](**values)
    return (
        np.asarray(exponents, "float32"),
        np.asarray(coefficients, "float32"),
    )


@keras.saving.register_keras_serializable(package="keras_laf")
class ClosedForm(keras.initializers.Initializer):
    """Initializes LAF units to aggregators of Table 1 of the paper.

    Used in pairs, one for the exponents and one for the coefficients, by
    `keras_laf.LAF.from_closed_forms`.

    Args:
        forms: list, one entry per unit: a name accepted by `closed_form`
            or a dict `{"name": ..., **parameters}`.
        part: `"exponents"` (shape `(8, units)`) or `"coefficients"` (shape
            `(4, units)`).

    Example:

    >>> initializer = ClosedForm(["sum", {"name": "max", "r": 20}],
    ...                          part="coefficients")
    >>> keras.ops.convert_to_numpy(initializer((4, 2)))
    array([[1., 1.],
           [0., 0.],
           [1., 1.],
           [0., 0.]], dtype=float32)
    """

    def __init__(self, forms, part):
        if part not in ("exponents", "coefficients"):
            raise ValueError(
                "`part` must be 'exponents' or 'coefficients'. "
                f"Received: part={part!r}"
            )
        if isinstance(forms, (str, dict)) or not forms:
            raise ValueError(
                "`forms` must be a non-empty list of closed forms, one per "
                f"unit. Received: forms={forms!r}"
            )
        standardized = [_standardize(form) for form in forms]
        self.forms = [{"name": name, **values} for name, values in standardized]
        self.part = part

    def table(self):
        """The parameters as a NumPy array `(8 or 4, units)`."""
        index = 0 if self.part == "exponents" else 1
        columns = [closed_form(**form)[index] for form in self.forms]
        return np.stack(columns, axis=1)

    def __call__(self, shape, dtype=None):
        table = self.table()
        if tuple(shape) != table.shape:
            raise ValueError(
                f"ClosedForm with {len(self.forms)} forms initializes "
                f"{self.part} of shape {table.shape}. Received: shape={shape}"
            )
        return ops.convert_to_tensor(table, dtype=dtype)

    def get_config(self):
        return {"forms": self.forms, "part": self.part}

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

from keras_laf.core.validation import check_open_unit_interval
from keras_laf.core.validation import is_number

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
# Every form also takes `scale`, a factor on its numerator (alpha, beta):
# `{"name": "sum", "scale": 0.01}` is 0.01 times the sum.
_COMMON_PARAMETERS = {"scale": 1.0}


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
    defaults = {**_TABLE[name][0], **_COMMON_PARAMETERS}
    unknown = set(parameters) - set(defaults)
    if unknown:
        raise ValueError(
            f"Closed form {name!r} takes parameters {sorted(defaults)}. "
            f"Received: {sorted(unknown)}"
        )
    values = {**defaults, **parameters}
    for key, value in values.items():
        if not is_number(value) or not np.isfinite(value):
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
        **parameters: the aggregator's parameters, and for every form
            `scale`, a positive factor on the numerator (alpha and beta),
            default 1: `closed_form("sum", scale=0.01)` is 0.01 times the
            sum.

    Returns:
        A tuple `(exponents, coefficients)` of float32 NumPy arrays of
        shapes `(8,)` (a..h) and `(4,)` (alpha, beta, gamma, delta).

    Example:

    >>> exponents, coefficients = closed_form("moment", k=3)
    >>> exponents
    array([1., 3., 0., 0., 1., 0., 0., 0.], dtype=float32)
    >>> closed_form("min", scale=0.5)[1]
    array([ 0.5, -0.5,  1. ,  0. ], dtype=float32)
    """
    name, values = _standardize({"name": name, **parameters})
    scale = values.pop("scale")
    exponents, coefficients = _TABLE[name][1](**values)
    alpha, beta, gamma, delta = coefficients
    return (
        np.asarray(exponents, "float32"),
        np.asarray((scale * alpha, scale * beta, gamma, delta), "float32"),
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


# The aggregators `identify_closed_forms` recognises: a label and the
# function of a padded batch (values, mask) it is compared with.
def _masked_sum(values, mask, power=1.0):
    return np.where(mask, values**power, 0.0).sum(axis=1)


def _reference_forms(r=50.0):
    # The extremes as Table 1 writes them, (sum x^r)^(1/r).
    count = lambda x, m: m.sum(axis=1).astype("float64")  # noqa: E731
    forms = {
        "count": count,
        "sum": _masked_sum,
        "mean": lambda x, m: _masked_sum(x, m) / count(x, m),
        # Not a row of Table 1, but the paper's inverse-count target, which
        # a unit computes exactly with a constant over the count.
        "1/count": lambda x, m: 1 / count(x, m),
        "max": lambda x, m: _masked_sum(x, m, r) ** (1 / r),
        "min": lambda x, m: 1 - _masked_sum(1 - x, m, r) ** (1 / r),
    }
    for k in (2, 3, 4):
        forms[f"moment(k={k})"] = lambda x, m, k=k: (
            _masked_sum(x, m, k) / count(x, m)
        )
    forms["min/max"] = lambda x, m: forms["min"](x, m) / forms["max"](x, m)
    forms["max/min"] = lambda x, m: forms["max"](x, m) / forms["min"](x, m)
    return forms


def _probe_sets(num_sets=512, max_size=30, seed=0):
    # (num_sets, max_size) values in [0.02, 0.98] and a mask of sizes
    # uniform in 1..max_size: the sets every unit is evaluated on.
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.02, 0.98, size=(num_sets, max_size))
    sizes = rng.integers(1, max_size, size=num_sets, endpoint=True)
    return values, np.arange(max_size) < sizes[:, None]


def laf_units_numpy(exponents, coefficients, values, mask):
    """LAF units on padded sets, in float64 NumPy (a reference).

    Args:
        exponents: array `(8, units)`, rows a..h.
        coefficients: array `(4, units)`, rows alpha, beta, gamma, delta.
        values: array `(sets, set_size)` of values in (0, 1).
        mask: bool array `(sets, set_size)`, True for real elements.

    Returns:
        float64 array `(sets, units)`.
    """
    a, b, c, d, e, f, g, h = np.asarray(exponents, "float64")[:, None, :]
    alpha, beta, gamma, delta = np.asarray(coefficients, "float64")[:, None]
    # (sets, set_size, 1), then each term (sets, units).
    x = np.asarray(values, "float64")[..., None]
    m = np.asarray(mask, bool)[..., None]

    def term(base, outer, inner):
        return np.where(m, base**inner, 0.0).sum(axis=1) ** outer

    numerator = alpha * term(x, a, b) + beta * term(1 - x, c, d)
    denominator = gamma * term(x, e, f) + delta * term(1 - x, g, h)
    return numerator / denominator


def _match_units(exponents, coefficients, tolerance):
    # For each unit, (name of the best-matching form or None, scale of the
    # least-squares fit `scale * form + offset`; None for a constant).
    check_open_unit_interval("tolerance", tolerance)
    values, mask = _probe_sets()
    with np.errstate(all="ignore"):
        units = laf_units_numpy(exponents, coefficients, values, mask)
        references = {
            name: function(values, mask)
            for name, function in _reference_forms().items()
        }
    matches = []
    for unit in units.T:
        if not np.all(np.isfinite(unit)):
            matches.append((None, None))
            continue
        spread = unit.std()
        if spread <= tolerance * max(np.abs(unit).mean(), 1e-30):
            matches.append(("constant", None))
            continue
        best, best_scale, best_residual = None, None, tolerance * spread
        for name, reference in references.items():
            design = np.stack([reference, np.ones_like(reference)], axis=1)
            fit, *_ = np.linalg.lstsq(design, unit, rcond=None)
            residual = np.sqrt(np.mean((design @ fit - unit) ** 2))
            if residual < best_residual:
                best, best_scale, best_residual = name, fit[0], residual
        matches.append((best, best_scale))
    return matches


def identify_closed_forms(exponents, coefficients, tolerance=0.02):
    """Names the aggregator of Table 1 that each LAF unit computes.

    Each unit is evaluated on a fixed batch of random sets (1 to 30
    values in [0.02, 0.98]) and compared with count, 1/count, sum, mean,
    max, min, the moments mean(x^k) for k = 2, 3, 4, min/max and max/min,
    up to a scale and an offset (the layer after LAF absorbs both): a unit
    matches a form when the least-squares fit `scale * form + offset`
    leaves a root-mean-square residual below `tolerance` times the unit's
    standard deviation. A unit whose spread is below `tolerance` times its
    mean magnitude is `"constant"`. Max and min are Table 1's (sum x^r)^(1/r)
    and 1 - (sum (1-x)^r)^(1/r) with r = 50, which units with r between
    about 40 and 60 match.

    Args:
        exponents: array `(8, units)`, rows a..h.
        coefficients: array `(4, units)`, rows alpha, beta, gamma, delta.
        tolerance: float in (0, 1). Relative residual accepted. Defaults
            to `0.02`.

    Returns:
        A list with, for each unit, the name of the best-matching form, or
        None when no form matches.

    Example:

    >>> exponents, coefficients = zip(closed_form("count"),
    ...                               closed_form("max"))
    >>> identify_closed_forms(np.stack(exponents, 1),
    ...                       np.stack(coefficients, 1))
    ['count', 'max']
    """
    return [
        name for name, _ in _match_units(exponents, coefficients, tolerance)
    ]


def _exact_parameters(name):
    # The exact parameters of a form `identify_closed_forms` names.
    if name == "1/count":
        # A constant over the count: alpha L_{0,0}(x) / gamma L_{1,0}(x).
        return (
            np.array([0, 0, 0, 0, 1, 0, 0, 0], "float32"),
            np.array([1, 0, 1, 0], "float32"),
        )
    if name.startswith("moment(k="):
        return closed_form("moment", k=float(name[len("moment(k=") : -1]))
    return closed_form(name)


def snap_closed_forms(exponents, coefficients, tolerance=0.1):
    """Puts LAF units that nearly compute a form of Table 1 onto it exactly.

    Each unit that `identify_closed_forms` matches with a form at
    `tolerance` gets that form's exact exponents, and its coefficients
    times the scale of the fit (alpha and beta, so that the unit keeps its
    sign and size); the fit's offset is left to the layers after LAF, which
    training after the snap refits (`keras_laf.callbacks.SnapToClosedForms`
    does both). Constant units and units that match no form are unchanged.

    Args:
        exponents: array `(8, units)`, rows a..h.
        coefficients: array `(4, units)`, rows alpha, beta, gamma, delta.
        tolerance: float in (0, 1). Relative residual accepted, as in
            `identify_closed_forms`. Defaults to `0.1`.

    Returns:
        A tuple `(exponents, coefficients, snapped)`: the new float32
        arrays of the same shapes, and a list of `(unit, form, scale)`, one
        per snapped unit.

    Example:

    A unit 2 sum_i x_i^0.02 / (sum_i x_i^0)^0.01, about 1.9 times the
    count on sets of values in [0.02, 0.98]:

    >>> near_count = np.array([1.0, 0.02, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0])
    >>> exponents, coefficients, snapped = snap_closed_forms(
    ...     near_count[:, None], np.array([[2.0], [0.0], [1.0], [0.0]]))
    >>> exponents[:, 0]
    array([1., 0., 0., 0., 0., 0., 0., 0.], dtype=float32)
    >>> [(unit, form, round(scale, 2)) for unit, form, scale in snapped]
    [(0, 'count', 1.89)]
    """
    exponents = np.array(exponents, "float32")
    coefficients = np.array(coefficients, "float32")
    snapped = []
    matches = _match_units(exponents, coefficients, tolerance)
    for unit, (name, scale) in enumerate(matches):
        if name is None or name == "constant":
            continue
        form_exponents, form_coefficients = _exact_parameters(name)
        exponents[:, unit] = form_exponents
        coefficients[:, unit] = form_coefficients
        coefficients[:2, unit] *= scale
        snapped.append((unit, name, float(scale)))
    return exponents, coefficients, snapped

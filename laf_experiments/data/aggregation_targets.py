"""The twelve aggregation targets of the LAF scalar experiments, and two
more of QUANN's MNIST benchmark.

Each target maps a set (a multiset of real numbers, here the digits 0..9)
`x_1, ..., x_n` to one real number. With `mean = (x_1 + ... + x_n) / n` and
the population central moments `m_k = ((x_1 - mean)^k + ... +
(x_n - mean)^k) / n`:

| name            | definition                                             |
| --------------- | ------------------------------------------------------ |
| `count`         | `n`                                                    |
| `sum`           | `x_1 + ... + x_n`                                      |
| `mean`          | `sum / n`                                              |
| `max`           | largest element                                        |
| `min`           | smallest element                                       |
| `inverse_count` | `1 / n`                                                |
| `median`        | middle element of the sorted set; for an even `n`, the |
|                 | mean of the two middle elements                        |
| `min_over_max`  | `min / max`; 0 when `max` is 0                         |
| `max_minus_min` | `max - min`                                            |
| `std`           | population standard deviation `sqrt(m_2)` (divides by  |
|                 | `n`, not `n - 1`)                                      |
| `skewness`      | population skewness `m_3 / m_2^(3/2)`                  |
| `kurtosis`      | population kurtosis `m_4 / m_2^2`: the plain           |
|                 | standardized fourth central moment, NOT the excess     |
|                 | kurtosis (a normal distribution has kurtosis 3)        |

`EXTRA_TARGETS`, beyond the paper's twelve (the MNIST benchmark of QUANN,
"Neuralized Kolmogorov Mean", ICLR 2026, has them):

| name            | definition                                             |
| --------------- | ------------------------------------------------------ |
| `variance`      | population variance `m_2` (divides by `n`)             |
| `mode`          | the most frequent element; of several, the smallest    |

Conventions:

- Constant sets (all elements equal, `m_2 = 0`): `std`, `variance`,
  `skewness` and `kurtosis` are 0. Constancy is tested exactly as
  `max == min`, so rounding in `m_2` cannot produce huge values.
- The empty set: every target, `count` included, is 0 (so are `1 / n`
  and the undefined mean, extrema, median and moments).
- A set containing 0: nothing special, except that `min_over_max` is 0
  when `max` is 0 (for the non-negative digits: when all elements are 0).

All values are computed in float64.
"""

import numpy as np

TARGETS = (
    "count",
    "sum",
    "mean",
    "max",
    "min",
    "inverse_count",
    "median",
    "min_over_max",
    "max_minus_min",
    "std",
    "skewness",
    "kurtosis",
)
EXTRA_TARGETS = ("variance", "mode")


def check_target(name):
    """Raises `ValueError` unless `name` is one of `TARGETS` or
    `EXTRA_TARGETS`.

    Args:
        name: the target name to check.

    Returns:
        `name`, unchanged.

    Example:

    >>> check_target("median")
    'median'
    """
    if name not in _TARGET_FUNCTIONS:
        raise ValueError(
            f"Unknown aggregation target. Expected one of "
            f"{', '.join(_TARGET_FUNCTIONS)}. Received: {name!r}"
        )
    return name


def target_values(name, sets):
    """Computes one aggregation target for many sets, vectorised in NumPy.

    See the module docstring for the exact definition of each target and
    the conventions for empty and constant sets.

    Args:
        name: one of `TARGETS` or `EXTRA_TARGETS`.
        sets: sequence of 1-D array-likes of numbers, one per set; the sets
            may have different sizes.

    Returns:
        float64 NumPy array `(len(sets),)`.

    Example:

    >>> target_values("median", [[1, 2, 3, 4], [7], [0, 5, 5]])
    array([2.5, 7. , 5. ])
    """
    check_target(name)
    sets = [np.asarray(elements, dtype="float64") for elements in sets]
    for elements in sets:
        if elements.ndim != 1:
            raise ValueError(
                "Each set must be a 1-D array of numbers. Received a set "
                f"with shape {elements.shape}."
            )
    sizes = np.array([len(elements) for elements in sets], dtype="int64")
    if not sets:
        return np.zeros((0,), dtype="float64")
    width = max(int(sizes.max()), 1)
    mask = np.arange(width) < sizes[:, None]
    values = np.zeros((len(sets), width), dtype="float64")
    values[mask] = np.concatenate(sets)
    return _TARGET_FUNCTIONS[name](values, mask, sizes)


def target_value(name, elements):
    """Computes one aggregation target for a single set.

    The NumPy reference for one set; see the module docstring for the
    definitions and conventions.

    Args:
        name: one of `TARGETS` or `EXTRA_TARGETS`.
        elements: 1-D array-like of numbers, the elements of the set.

    Returns:
        The target value, a Python float.

    Example:

    >>> target_value("min_over_max", [0, 0, 0])
    0.0
    >>> target_value("kurtosis", [0, 2])
    1.0
    """
    return float(target_values(name, [elements])[0])


def _per_set(numerator, sizes):
    # numerator / n, and 0 for empty sets.
    return np.divide(
        numerator, sizes, out=np.zeros(len(sizes)), where=sizes > 0
    )


def _count(values, mask, sizes):
    return sizes.astype("float64")


def _sum(values, mask, sizes):
    return values.sum(axis=1)


def _mean(values, mask, sizes):
    return _per_set(values.sum(axis=1), sizes)


def _max(values, mask, sizes):
    largest = np.where(mask, values, -np.inf).max(axis=1)
    return np.where(sizes > 0, largest, 0.0)


def _min(values, mask, sizes):
    smallest = np.where(mask, values, np.inf).min(axis=1)
    return np.where(sizes > 0, smallest, 0.0)


def _inverse_count(values, mask, sizes):
    return _per_set(np.ones(len(sizes)), sizes)


def _median(values, mask, sizes):
    ordered = np.sort(np.where(mask, values, np.inf), axis=1)
    rows = np.arange(len(sizes))
    lower = ordered[rows, np.maximum((sizes - 1) // 2, 0)]
    upper = ordered[rows, sizes // 2]
    return np.where(sizes > 0, (lower + upper) / 2, 0.0)


def _min_over_max(values, mask, sizes):
    largest = _max(values, mask, sizes)
    return np.divide(
        _min(values, mask, sizes),
        largest,
        out=np.zeros(len(sizes)),
        where=largest != 0,
    )


def _max_minus_min(values, mask, sizes):
    return _max(values, mask, sizes) - _min(values, mask, sizes)


def _central_moment(values, mask, sizes, order):
    deviations = values - _mean(values, mask, sizes)[:, None]
    return _per_set(np.where(mask, deviations**order, 0.0).sum(1), sizes)


def _variance(values, mask, sizes):
    variance = _central_moment(values, mask, sizes, 2)
    return np.where(_is_constant(values, mask, sizes), 0, variance)


def _std(values, mask, sizes):
    return np.sqrt(_variance(values, mask, sizes))


def _mode(values, mask, sizes):
    # (sets, width, width): the count of each element's value in its set.
    counts = (
        (values[:, :, None] == values[:, None, :]) & mask[:, None, :]
    ).sum(axis=2)
    counts = np.where(mask, counts, 0)
    most = counts == counts.max(axis=1, keepdims=True)
    smallest = np.where(mask & most, values, np.inf).min(axis=1)
    return np.where(sizes > 0, smallest, 0.0)


def _standardized_moment(values, mask, sizes, order):
    variance = _central_moment(values, mask, sizes, 2)
    return np.divide(
        _central_moment(values, mask, sizes, order),
        variance ** (order / 2),
        out=np.zeros(len(sizes)),
        where=~_is_constant(values, mask, sizes),
    )


def _is_constant(values, mask, sizes):
    # Also True for empty sets, whose moments are 0 by convention.
    return _max(values, mask, sizes) == _min(values, mask, sizes)


def _skewness(values, mask, sizes):
    return _standardized_moment(values, mask, sizes, 3)


def _kurtosis(values, mask, sizes):
    return _standardized_moment(values, mask, sizes, 4)


_TARGET_FUNCTIONS = {
    "count": _count,
    "sum": _sum,
    "mean": _mean,
    "max": _max,
    "min": _min,
    "inverse_count": _inverse_count,
    "median": _median,
    "min_over_max": _min_over_max,
    "max_minus_min": _max_minus_min,
    "std": _std,
    "skewness": _skewness,
    "kurtosis": _kurtosis,
    "variance": _variance,
    "mode": _mode,
}

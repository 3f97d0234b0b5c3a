"""The LAF formula on the power sums of each set, in `keras.ops`.

`laf_math` is the plain `keras.ops` path of LAF: the power sums
(`keras_laf.ops.power_sums`) and the per-set arithmetic below. It is the
reference that the tests compare every backend's speed path against.
"""

import keras
import numpy as np
from keras import ops

from keras_laf.core.sets import reduce_or_initial
from keras_laf.core.validation import UNIT_INTERVAL_TOLERANCE
from keras_laf.ops.power_sums import power_sums
from keras_laf.ops.power_sums import shape

# Limits of the floor on the denominator's scaled magnitude: exp(+-80) is a
# normal float32, so the floor never becomes 0 or inf.
LOG_FLOOR_LIMIT = 80.0


def check_float_values(values):
    """Raises a ValueError for integer (or other non-float) values."""
    dtype = keras.backend.standardize_dtype(values.dtype)
    if "float" not in dtype:
        raise ValueError(
            "LAF aggregates values in [0, 1] and needs float inputs; integer "
            "inputs would be clipped into [0, 1]. Embed integers first "
            "(`keras.layers.Embedding` followed by a sigmoid, as in the "
            "paper) or scale them into [0, 1] (e.g. `x / x_max`). "
            f"Received: inputs.dtype={dtype}"
        )


def by_source_and_part(weights, num_per_term):
    """Rows ordered as the four terms L_ab(x), L_cd(1-x), L_ef(x),
    L_gh(1-x), `num_per_term` rows each: `(part, source, ...)` ->
    `(source, part, ...)`, part 0 the numerator, 1 the denominator; source
    0 x, 1 1 - x."""
    weights = ops.reshape(weights, (2, 2, num_per_term, ops.shape(weights)[-1]))
    return ops.transpose(weights, (1, 0, 2, 3))


def outer_and_inner(exponents):
    """The exponents per source (x, then 1 - x), those of the numerator's
    term then of the denominator's: outer (a, e or c, g) `(2, 2 * units,
    1)` and inner (b, f or d, h) `(2, 2 * units)`."""
    exponents = by_source_and_part(ops.cast(exponents, "float32"), 2)
    units = ops.shape(exponents)[-1]
    outer = ops.reshape(exponents[:, :, 0], (2, 2 * units, 1))
    inner = ops.reshape(exponents[:, :, 1], (2, 2 * units))
    return outer, inner


def nonfinite_sets(values, sets):
    """True `(sets, features)` where a real element is NaN, infinite, or
    outside [0, 1] by more than `UNIT_INTERVAL_TOLERANCE`.

    Their outputs are made NaN, so that the loss shows it (and
    `keras.callbacks.TerminateOnNaN` stops training) instead of the element
    silently acting as 0 or 1: inside `Model.fit` no error can be raised
    on a value (eager calls of the LAF layer raise one first, see
    `keras_laf.core.validation.check_unit_interval`). Padding has no effect.
    """
    # False for NaN, which fails every comparison. A boolean reduction, which
    # XLA fuses with the comparisons; a sum of floats goes to YNNPACK on
    # XLA's CPU, which stores its input, a copy of the values.
    inside = (values >= -UNIT_INTERVAL_TOLERANCE) & (
        values <= 1.0 + UNIT_INTERVAL_TOLERANCE
    )
    return sets.any(ops.logical_not(inside))


def laf_of_power_sums(
    sums,
    max_logs,
    exponents,
    coefficients,
    nonfinite,
    sizes,
    epsilon,
    limit,
    output_bound,
):
    """LAF units from the power sums of each set and feature.

    Args:
        sums: `(2, 2 * units, sets * features)` from `power_sums`, at
            least 1 for non-empty sets.
        max_logs: `(2, sets * features)`, the shift of the log-sum-exp
            (the result does not depend on it; empty sets get 0).
        exponents, coefficients: as `keras_laf.ops.laf_over_sets`.
        nonfinite: bool `(sets, features)`, sets whose output is NaN.
        sizes: float32 `(sets,)`, the number of elements of each set.
        epsilon: float, floor of the denominator's magnitude.
        limit: float, the output is clipped into `[-limit, limit]`.
        output_bound: float > 0 or inf, as `keras_laf.ops.laf_over_sets`.

    Returns:
        float32 `(sets, features, units)`.
    """
    outer, inner = outer_and_inner(exponents)
    units = ops.shape(inner)[-1] // 2
    # Every set and feature is on the minor axis.
    nonempty = sums > 0.5
    log_sums = ops.log(ops.where(nonempty, sums, 1.0)) + ops.expand_dims(
        inner, -1
    ) * ops.expand_dims(max_logs, 1)
    # log L = a log(sum). Every term of an empty set is 0, so its output
    # is 0, as a fixed aggregator's. With 0^0 = 1 a term would step from 1
    # to 0 as its outer exponent leaves 0, which one update does, and with
    # no denominator term left the output would be the numerator's
    # coefficients over epsilon (a node without incoming edges).
    log_terms = ops.where(nonempty, outer * log_sums, float("-inf"))
    # (source, part, units, sets * features)
    log_terms = ops.reshape(log_terms, (2, 2, units, shape(log_terms)[-1]))
    # (1, 1, units, sets * features): the largest of the four terms.
    scale = ops.stop_gradient(
        reduce_or_initial(
            ops.max, log_terms, (0, 1), float("-inf"), keepdims=True
        )
    )
    scale = ops.where(ops.isfinite(scale), scale, 0.0)
    scaled_terms = ops.exp(log_terms - scale)

    # (source, part, units, 1)
    coefficients = by_source_and_part(ops.cast(coefficients, "float32"), 1)
    coefficients = ops.transpose(coefficients, (0, 1, 3, 2))
    # (part, units, sets * features)
    parts = ops.sum(scaled_terms * coefficients, axis=0)
    numerator, denominator = parts[0], parts[1]
    # |denominator| >= epsilon in unscaled units, i.e. epsilon / exp(scale).
    log_floor = ops.clip(
        np.log(epsilon) - scale[0, 0],
        -LOG_FLOOR_LIMIT,
        LOG_FLOOR_LIMIT,
    )
    magnitude = ops.maximum(ops.abs(denominator), ops.exp(log_floor))
    num_sets, features = shape(nonfinite)
    if output_bound != float("inf"):
        # (1, sets * features): log N, with N >= 1 (an empty set's
        # numerator is 0).
        log_sizes = ops.log(ops.maximum(sizes, 1.0))
        log_sizes = ops.reshape(
            ops.broadcast_to(log_sizes[:, None], (num_sets, features)),
            (1, -1),
        )
        # (source, units, 1): the numerator's outer exponents (a, c) and
        # coefficients (alpha, beta).
        numerator_outer = ops.reshape(outer, (2, 2, units, 1))[:, 0]
        # (units, sets * features): |alpha| N^a + |beta| N^c, scaled, the
        # numerator's largest magnitude on a set of N values in [0, 1].
        largest = ops.sum(
            ops.abs(coefficients[:, 0])
            * ops.exp(
                ops.minimum(
                    numerator_outer * log_sizes - scale[0], LOG_FLOOR_LIMIT
                )
            ),
            axis=0,
        )
        magnitude = ops.maximum(magnitude, largest / output_bound)
    denominator = ops.where(denominator < 0, -magnitude, magnitude)
    outputs = ops.clip(numerator / denominator, -limit, limit)
    # (units, sets * features) -> (sets, features, units)
    outputs = ops.reshape(outputs, (units, num_sets, features))
    outputs = ops.transpose(outputs, (1, 2, 0))
    return ops.where(ops.expand_dims(nonfinite, -1), float("nan"), outputs)


def laf_math(
    values, sets, exponents, coefficients, epsilon, output_limit, output_bound
):
    """LAF units applied to each feature of each set of a set layout, as
    plain `keras.ops`: the reference path. Arguments and result as
    `keras_laf.ops.laf_over_sets`."""
    values = ops.cast(values, "float32")
    _, inner = outer_and_inner(exponents)
    sums, max_logs = power_sums(values, inner, sets, epsilon)
    args = (exponents, coefficients, nonfinite_sets(values, sets))
    return laf_of_power_sums(
        sums,
        max_logs,
        *args,
        sets.sizes(),
        epsilon,
        output_limit,
        output_bound,
    )

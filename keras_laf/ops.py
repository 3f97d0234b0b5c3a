"""The LAF function, computed in log space.

For a set x of values in [0, 1] and exponents a..h >= 0,

    L_{a,b}(x) = (sum_i x_i^b)^a
    LAF(x) = (alpha L_{a,b}(x) + beta L_{c,d}(1-x))
             / (gamma L_{e,f}(x) + delta L_{g,h}(1-x))

(Pellegrini et al., "Learning Aggregation Functions", IJCAI 2021).

How it is computed, and why:

- Power sums in log space. With z_i = log x_i (or log(1 - x_i)) and
  M = max_i z_i, log sum_i x_i^b = b M + log sum_i exp(b (z_i - M)).
  Because b >= 0, the shift that keeps the log-sum-exp stable is b M for
  every unit, so M is computed once per set and feature. The inner sum is
  at least 1 for a non-empty set (the largest element contributes
  exp(0) = 1), so it never underflows: (sum x^r)^(1/r) approximates the
  maximum at every scale, with no epsilon clamp on the sum.
- The four terms are divided by their largest value before they are
  exponentiated; the common factor cancels in the ratio, so large sets and
  large exponents neither overflow nor turn into inf / inf.
- The exponentials, one per element, feature, unit and term, are the bulk
  of the work. `_power_sums` never stores them: its gradient recomputes
  them, and on padded batches the whole function runs as one XLA cluster
  so the exponentials are fused into the reductions.

Conventions:

- Inputs are clipped into [0, 1] (the paper puts a sigmoid before LAF).
  Inside the logarithm x and 1 - x are floored at `epsilon`, so 0^b is
  computed as epsilon^b, and the gradient with respect to an element below
  epsilon is 0.
- 0^0 = 1, also for an element equal to 0 (x^0 = 1 for every x).
- A sum over an empty set is 0, and (0)^0 = 1, so for an empty set
  L_{a,b} is 1 when a = 0 and 0 otherwise.
- Near a zero denominator: the magnitude of the denominator is floored at
  `epsilon`, keeping its sign (0 counts as positive). The output stays
  finite and its gradient is zero while the floor is active.
- The output is finally clipped into the finite range of the output dtype.
"""

import numpy as np
import tensorflow as tf
from keras import ops
from tensorflow.python.ops import control_flow_util

from keras_laf.sets import PaddedSets
from keras_laf.sets import SegmentSets
from keras_laf.sets import as_set_batch

EXPONENT_NAMES = ("a", "b", "c", "d", "e", "f", "g", "h")
COEFFICIENT_NAMES = ("alpha", "beta", "gamma", "delta")

# Limits of the floor on the denominator's scaled magnitude: exp(+-80) is a
# normal float32, so the floor never becomes 0 or inf.
_LOG_FLOOR_LIMIT = 80.0


def _power_sums(shifted_logs, inner_exponents, sets):
    """Sums exp(q * y) over each set, recomputing exp in the gradient.

    Args:
        shifted_logs: y, `(elements..., features, 2)`, last axis the source
            (x, 1 - x), at most 0 for the real elements.
        inner_exponents: q, `(2, 2 * units)`, one row per source.
        sets: the set layout, which computes the sums and their gradient.
            The gradient with respect to q comes from sums of y exp(q y)
            taken in the same pass as the forward sums; the gradient with
            respect to y recomputes the exponentials instead of storing
            them.

    Returns:
        `(sets, features, 2, 2 * units)`.
    """

    @ops.custom_gradient
    def power_sums(y, q):
        sums, log_weighted_sums = sets.power_sums(y, q)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            grad_q = ops.sum(upstream * log_weighted_sums, axis=(0, 1))
            return sets.power_sums_gradient(y, q, upstream), grad_q

        return sums, grad

    return power_sums(shifted_logs, inner_exponents)


def _by_source_and_part(weights, num_per_term):
    # Rows ordered as the four terms L_ab(x), L_cd(1-x), L_ef(x), L_gh(1-x),
    # `num_per_term` rows each: (part, source, ...) -> (source, part, ...),
    # part 0 the numerator, 1 the denominator; source 0 x, 1 1 - x.
    weights = ops.reshape(weights, (2, 2, num_per_term, ops.shape(weights)[-1]))
    return ops.transpose(weights, (1, 0, 2, 3))


def laf_of_sets(values, sets, exponents, coefficients, epsilon, output_limit):
    """LAF units applied to each feature of each set of a set layout.

    Args:
        values: `(elements..., features)`, any float dtype.
        sets: `PaddedSets` or `SegmentSets`, the layout of `values`.
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        epsilon: float, floor of x and 1 - x inside the logarithm and of
            the magnitude of the denominator.
        output_limit: float, the output is clipped into
            `[-output_limit, output_limit]`.

    Returns:
        float32 `(sets, features, units)`.
    """
    values = ops.clip(ops.cast(values, "float32"), 0.0, 1.0)
    # (elements..., features, 2): log x and log(1 - x).
    logs = ops.log(ops.maximum(ops.stack([values, 1.0 - values], -1), epsilon))
    # (sets, features, 2). The result does not depend on the shift, so no
    # gradient flows through it; empty sets get 0.
    max_logs = ops.stop_gradient(sets.max(logs))
    max_logs = ops.where(ops.isfinite(max_logs), max_logs, 0.0)
    shifted_logs = logs - sets.broadcast(max_logs)

    exponents = _by_source_and_part(ops.cast(exponents, "float32"), 2)
    units = ops.shape(exponents)[-1]
    # (2, 2 * units): per source, the exponents of the numerator's term then
    # of the denominator's term.
    outer = ops.reshape(exponents[:, :, 0], (2, 2 * units))
    inner = ops.reshape(exponents[:, :, 1], (2, 2 * units))

    # (sets, features, 2, 2 * units), at least 1 for non-empty sets.
    sums = _power_sums(shifted_logs, inner, sets)
    nonempty = sums > 0.5
    log_sums = ops.log(ops.where(nonempty, sums, 1.0)) + inner * (
        ops.expand_dims(max_logs, -1)
    )
    # log L = a log(sum); for an empty set, log(0^a) with 0^0 = 1.
    log_terms = ops.where(
        nonempty,
        outer * log_sums,
        ops.where(outer > 0, float("-inf"), 0.0),
    )
    # (sets, features, source, part, units)
    log_terms = ops.reshape(log_terms, (*ops.shape(log_terms)[:2], 2, 2, units))
    # (sets, features, 1, 1, units): the largest of the four terms.
    scale = ops.stop_gradient(ops.max(log_terms, axis=(2, 3), keepdims=True))
    scale = ops.where(ops.isfinite(scale), scale, 0.0)
    scaled_terms = ops.exp(log_terms - scale)

    coefficients = _by_source_and_part(ops.cast(coefficients, "float32"), 1)
    # (sets, features, part, units)
    parts = ops.sum(scaled_terms * coefficients[:, :, 0], axis=2)
    numerator, denominator = parts[:, :, 0], parts[:, :, 1]
    # |denominator| >= epsilon in unscaled units, i.e. epsilon / exp(scale).
    log_floor = ops.clip(
        np.log(epsilon) - scale[:, :, 0, 0],
        -_LOG_FLOOR_LIMIT,
        _LOG_FLOOR_LIMIT,
    )
    magnitude = ops.maximum(ops.abs(denominator), ops.exp(log_floor))
    denominator = ops.where(denominator < 0, -magnitude, magnitude)
    return ops.clip(numerator / denominator, -output_limit, output_limit)


# Padded batches run as one XLA cluster: it vectorises the
# exponentials along the set axis and runs a training step as two kernels,
# about 5x faster than TensorFlow's ops on CPU for 64 sets of 1000 elements.
# XLA compiles once per input shape (about a second on CPU), so the set axis
# is padded to a few bucket sizes. Segment batches, whose number of sets is
# a run-time value, run as plain TensorFlow ops.
@tf.function(jit_compile=True, reduce_retracing=True)
def _compiled_padded_laf(
    values, mask, exponents, coefficients, epsilon, output_limit
):
    return laf_of_sets(
        values, PaddedSets(mask), exponents, coefficients, epsilon, output_limit
    )


def _bucket_size(set_size):
    """The smallest 2^k or 3 * 2^(k-1) >= set_size, as an int32 tensor.

    Padding the set axis to these sizes bounds the number of shapes XLA
    compiles for to two per doubling of the set size, for at most a third
    more work.
    """
    set_size = ops.cast(ops.maximum(set_size, 1), "float64")
    power = 2.0 ** ops.ceil(ops.log2(set_size) - 1e-9)
    smaller = 0.75 * power
    bucket = ops.where((power >= 4) & (smaller >= set_size), smaller, power)
    return ops.cast(bucket, "int32")


def _bucketed_padded_laf(values, mask, *args):
    set_size = ops.shape(values)[1]
    padding = _bucket_size(set_size) - set_size
    values = ops.pad(values, [[0, 0], [0, padding], [0, 0]])
    mask = ops.pad(mask, [[0, 0], [0, padding]])
    return _compiled_padded_laf(values, mask, *args)


def _inside_xla_compilation():
    # Inside `tf.function(jit_compile=True)` (such as Keras's
    # `compile(jit_compile=True)`) the whole step is compiled already, and
    # the gradient of the nested compiled call, whose bucket padding is a
    # run-time value there, fails to compile. TensorFlow has no public test
    # for this; its own cond_v2 uses this one.
    return control_flow_util.GraphOrParentsInXlaContext(
        tf.compat.v1.get_default_graph()
    )


def apply_laf(values, sets, exponents, coefficients, epsilon, output_limit):
    """`laf_of_sets`, compiled with XLA for padded batches."""
    if isinstance(sets, SegmentSets) or _inside_xla_compilation():
        return laf_of_sets(
            values, sets, exponents, coefficients, epsilon, output_limit
        )
    return _bucketed_padded_laf(
        values, sets.mask, exponents, coefficients, epsilon, output_limit
    )


def laf(
    inputs,
    exponents,
    coefficients,
    mask=None,
    segment_ids=None,
    num_segments=None,
    epsilon=1e-7,
):
    """Applies LAF units to every feature of every set.

    The functional form of the `keras_laf.LAF` layer, for callers that hold
    the parameters themselves. See the module docstring for the numerics
    and the conventions for empty sets and small denominators.

    Args:
        inputs: a dense tensor `(batch, set_size, features)`, a
            `tf.RaggedTensor` `(batch, None, features)`, or flat values
            `(num_elements, features)` with `segment_ids`. Values are
            clipped into [0, 1].
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        mask: optional boolean `(batch, set_size)` for dense inputs.
        segment_ids: optional int `(num_elements,)`, the set of each element.
        num_segments: number of sets with `segment_ids`; defaults to
            `max(segment_ids) + 1`.
        epsilon: float. Floor of x and 1 - x inside the logarithm and of the
            magnitude of the denominator. Defaults to `1e-7`.

    Returns:
        float32 tensor `(num_sets, features, units)`: unit k applied to
        feature j of set i at `[i, j, k]`.

    Example:

    >>> import numpy as np
    >>> from keras_laf import closed_form
    >>> exponents, coefficients = closed_form("mean")
    >>> x = np.array([[[0.2], [0.4], [0.9]]], "float32")
    >>> laf(x, exponents[:, None], coefficients[:, None])  # mean: 0.5
    """
    values, sets = as_set_batch(inputs, mask, segment_ids, num_segments)
    return apply_laf(
        values,
        sets,
        exponents,
        coefficients,
        float(epsilon),
        float(np.finfo("float32").max),
    )

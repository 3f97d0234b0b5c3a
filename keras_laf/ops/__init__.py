r"""The LAF function, computed in log space.

For a set $x$ of values in $[0, 1]$ and exponents $a, \dots, h \ge 0$,

$$
L_{a,b}(x) = \Big(\sum_i x_i^b\Big)^a \qquad
\mathrm{LAF}(x) = \frac{\alpha L_{a,b}(x) + \beta L_{c,d}(1-x)}
{\gamma L_{e,f}(x) + \delta L_{g,h}(1-x)}
$$

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
  of the work. They are never stored beyond one chunk: the power sums
  (`keras_laf.ops.power_sums`) loop over chunks of the set axis, summing
  each chunk's exponentials, and their gradient recomputes them, unless
  the sets fit one chunk, whose exponentials the gradient reuses. Memory
  thus stays at the size of the inputs plus the per-set sums and one
  chunk. How many values a chunk holds is
  `keras_laf.config.set_chunk_budget`.
- Layout: for padded sets every (set, feature) pair lies on one axis, the
  minor axis of the per-set tensors `(2, 2 * units, sets * features)` and
  of the per-element ones `(2, set_size, sets * features)`, so no
  exponential needs a transpose: XLA vectorises its loops along the
  minor axis only.

How it is laid out, as Keras lays out its ops:

- this module: the public functions, backend-agnostic;
- `keras_laf.ops.formula`: the formula on the power sums, and
  `laf_math`, the plain `keras.ops` path, the reference of the tests;
- `keras_laf.ops.power_sums`: the power sums chunk by chunk and their
  gradient;
- `keras_laf.core.backend`: one dispatch to the backend's module
  (`tensorflow`, `jax`, or `generic`), which holds where a backend's
  compiler wants another layout, and its speed path: on TensorFlow padded
  sets run as three XLA programs, the forward pass and the gradient in
  two; on JAX the training step is compiled whole.

Conventions:

- Inputs are float values in [0, 1] (the paper puts a sigmoid before
  LAF); integer inputs are an error: embed them or scale them into
  [0, 1]. Values within 1e-6 of [0, 1] (rounding) are clipped into it.
- NaN, inf, or a value further outside [0, 1] in a real element makes
  that set's output NaN (per feature), so the loss shows it; padded
  positions have no effect whatever they hold. (Where values are known,
  in eager calls, the `LAF` layer raises a ValueError first for a finite
  value outside [0, 1].)
  Inside the logarithm x and 1 - x are floored at `epsilon`, so 0^b is
  computed as epsilon^b, and the gradient with respect to an element below
  epsilon is 0.
- 0^0 = 1, also for an element equal to 0 (x^0 = 1 for every x).
- An empty set gives 0, as the fixed aggregators do: each of its terms
  $L_{a,b}$ is 0, also for $a = 0$. (With $0^0 = 1$ a term would step
  from 1 to 0 as its outer exponent leaves 0, which one training step
  does, and an empty set whose denominator has no term left would give
  the numerator's coefficients over `epsilon`.)
- Near a zero denominator: the magnitude of the denominator is floored at
  `epsilon`, keeping its sign (0 counts as positive). The output stays
  finite and its gradient is zero while the floor is active.
- With an output bound B (`keras_laf.LAF(output_bound=...)`), the
  denominator's magnitude is also floored at (|alpha| N^a + |beta| N^c) / B
  for a set of N elements: the numerator is at most |alpha| N^a + |beta|
  N^c in magnitude, so the output lies in [-B, B] on sets of any size and
  content, where a unit whose numerator grows faster with N than its
  denominator would otherwise run away.
- The output is finally clipped into the finite range of the output dtype.
"""

import importlib

import ml_dtypes

from keras_laf.core import backend
from keras_laf.core.sets import as_set_batch
from keras_laf.core.sets import in_fastest_layout
from keras_laf.core.validation import check_backend_supports
from keras_laf.ops.formula import check_float_values
from keras_laf.ops.formula import laf_math


def largest_finite(dtype):
    """The largest finite value of a float dtype name, as a Python float."""
    return float(ml_dtypes.finfo(dtype).max)


def laf_over_sets(
    values,
    sets,
    exponents,
    coefficients,
    epsilon,
    output_limit,
    output_bound,
):
    """LAF units applied to each feature of each set of a set layout.

    The computation behind `laf` and the `LAF` layer, for values already in
    a set layout (see `keras_laf.core.sets.as_set_batch`), on the backend's
    fastest path: padded sets on TensorFlow as XLA programs of their own
    (`keras_laf.ops.tensorflow_programs`), eager calls on JAX as one
    compiled program (`keras_laf.ops.jax_programs`), everything else as
    `keras.ops` (`keras_laf.ops.formula.laf_math`).

    Args:
        values: float `(elements..., features)`, padding zeroed.
        sets: `PaddedSets` or `SegmentSets`, the layout of `values`.
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        epsilon: float, floor of x and 1 - x inside the logarithm and of
            the magnitude of the denominator.
        output_limit: float, the output is clipped into
            `[-output_limit, output_limit]`.
        output_bound: float > 0, or inf for none. The denominator's
            magnitude is floored at `(|alpha| N^a + |beta| N^c) /
            output_bound` for a set of N elements, the numerator's largest
            magnitude on N values in [0, 1] over the bound, so every
            output lies in `[-output_bound, output_bound]` (see
            `keras_laf.LAF`'s `output_bound`).

    Returns:
        float32 `(sets, features, units)`; NaN for every feature of a set
        with a NaN or infinite real element in that feature.
    """
    check_float_values(values)
    programs = backend.laf_programs()
    path = (
        laf_math
        if programs is None
        else importlib.import_module(programs).laf_over_sets
    )
    return path(
        values,
        sets,
        exponents,
        coefficients,
        epsilon,
        output_limit,
        output_bound,
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
            `(num_elements, features)` with `segment_ids`. Float values
            in [0, 1] (within 1e-6 of it, then clipped); integer inputs
            raise a ValueError (embed them or scale them into [0, 1]
            first). A real element that is NaN, infinite or outside
            [0, 1] makes its set's output NaN in that feature.
        exponents: `(8, units)`, rows a..h, all >= 0.
        coefficients: `(4, units)`, rows alpha, beta, gamma, delta.
        mask: optional `(batch, set_size)` for dense inputs: boolean, or
            numeric holding only 0 (padding) and 1 (real elements).
            Padding has no effect whatever it holds.
        segment_ids: optional int `(num_elements,)`, the set of each
            element, in `[0, num_segments)`. Ids out of range raise a
            ValueError in eager calls and, on TensorFlow, an
            `InvalidArgumentError` when a traced call runs.
        num_segments: number of sets with `segment_ids`; defaults to
            `max(segment_ids) + 1`. Pass it as an int inside `jax.jit`.
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
    >>> outputs = laf(x, exponents[:, None], coefficients[:, None])
    >>> np.round(keras.ops.convert_to_numpy(outputs), 4)  # the mean
    array([[[0.5]]], dtype=float32)
    """
    check_backend_supports(inputs)
    values, sets = in_fastest_layout(
        *as_set_batch(inputs, mask, segment_ids, num_segments)
    )
    return laf_over_sets(
        values,
        sets,
        exponents,
        coefficients,
        float(epsilon),
        largest_finite("float32"),
        float("inf"),
    )

"""Projection constraint for LAF exponents."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_laf")
class BoundedNonNeg(keras.constraints.Constraint):
    """Clips weights into `[0, max_value]`.

    The LAF exponents `a..h` must be non-negative. The paper optimises them
    by projected gradient descent: after each optimizer step the exponents
    are projected back onto the feasible set. Keras optimizers apply a
    variable's constraint right after its update, so attaching this
    constraint to a variable gives exactly that projection. The upper bound
    keeps `x ** b` from underflowing to a step function and leaves room for
    the Table 1 max/min approximations, which use exponents around 50.

    Args:
        max_value: float. Upper bound of the projection. Defaults to `100.0`.

    Example:

    >>> constraint = BoundedNonNeg(max_value=2.0)
    >>> constraint(keras.ops.convert_to_tensor([-1.0, 0.5, 3.0]))
    <tf.Tensor: shape=(3,), dtype=float32, numpy=array([0. , 0.5, 2. ], ...)>
    """

    def __init__(self, max_value=100.0):
        if not isinstance(max_value, (int, float)) or not max_value > 0:
            raise ValueError(
                "`max_value` must be a positive number. "
                f"Received: max_value={max_value}"
            )
        self.max_value = float(max_value)

    def __call__(self, w):
        return ops.clip(w, 0.0, self.max_value)

    def get_config(self):
        return {"max_value": self.max_value}


@keras.saving.register_keras_serializable(package="keras_laf")
class PositiveDenominator(keras.constraints.Constraint):
    """Keeps LAF's denominator coefficients gamma, delta >= 0, not both 0.

    Applied to LAF's `(4, units)` coefficients (rows alpha, beta, gamma,
    delta). The power sums are positive, so a denominator with gamma,
    delta >= 0 never crosses zero: a trained unit has no pole on sets
    larger than those it was trained on. It must not shrink to zero
    either, so the projection first clips gamma and delta at 0, then, for
    each unit whose gamma + delta is below 1, scales all four coefficients
    by 1 / (gamma + delta). A unit's output is unchanged by a common scale
    of its coefficients, so this fixes the scale without changing the
    function; a unit whose gamma and delta are both clipped to 0 restarts
    with gamma = 1. Every aggregator of Table 1 of the paper stays
    reachable except `max/min`, whose delta is -1.

    Example:

    >>> constraint = PositiveDenominator()
    >>> coefficients = keras.ops.convert_to_tensor(
    ...     [[-1.0, 2.0], [-1.0, 0.0], [-1.0, 0.25], [0.5, 0.25]]
    ... )
    >>> keras.ops.convert_to_numpy(constraint(coefficients))
    array([[-2. ,  4. ],
           [-2. ,  0. ],
           [ 0. ,  0.5],
           [ 1. ,  0.5]], dtype=float32)
    """

    def __call__(self, w):
        numerator = w[:2]
        # (2, units), then (1, units).
        denominator = ops.maximum(w[2:], 0.0)
        total = ops.sum(denominator, axis=0, keepdims=True)
        restart = ops.convert_to_tensor([[1.0], [0.0]], dtype=w.dtype)
        denominator = ops.where(total > 0, denominator, restart)
        scale = 1.0 / ops.clip(total, 1e-30, 1.0)
        scale = ops.where(total > 0, scale, 1.0)
        return ops.concatenate([numerator, denominator], 0) * scale

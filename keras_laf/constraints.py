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
class NonNegDenominator(keras.constraints.Constraint):
    """Keeps the denominator coefficients gamma and delta of LAF >= 0.

    Applied to LAF's `(4, units)` coefficients (rows alpha, beta, gamma,
    delta), it clips the last two rows at 0 and leaves the numerator's free.
    The power sums are positive, so a denominator with gamma, delta >= 0
    never crosses zero: a trained unit has no pole on sets larger than
    those it was trained on. Every aggregator of Table 1 of the paper
    stays reachable except `max/min`, whose delta is -1.

    Example:

    >>> constraint = NonNegDenominator()
    >>> coefficients = keras.ops.convert_to_tensor(
    ...     [[-1.0], [-1.0], [-1.0], [0.5]]
    ... )
    >>> keras.ops.convert_to_numpy(constraint(coefficients))[:, 0]
    array([-1. , -1. ,  0. ,  0.5], dtype=float32)
    """

    def __call__(self, w):
        numerator, denominator = w[:2], w[2:]
        return ops.concatenate([numerator, ops.maximum(denominator, 0.0)], 0)

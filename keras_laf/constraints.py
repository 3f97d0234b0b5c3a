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

"""Projection constraint for LAF exponents."""

import keras
from keras import ops

from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_number


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
    >>> clipped = constraint(keras.ops.convert_to_tensor([-1.0, 0.5, 3.0]))
    >>> keras.ops.convert_to_numpy(clipped)
    array([0. , 0.5, 2. ], dtype=float32)
    """

    def __init__(self, max_value=100.0):
        self.max_value = check_positive_number(
            "max_value", max_value, allow_inf=True
        )

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

    With `pull > 0`, each coefficient first moves towards 0 by `pull`
    times the larger magnitude of its pair (alpha, beta in the numerator,
    gamma, delta in the denominator), landing exactly on 0 when closer
    than that (an L1 proximal step that does not depend on the unit's
    scale). A term the data does not need, such as a
    constant added to a mean, then vanishes instead of lingering at a
    small value that shifts the unit on larger sets. `keras_laf.LAF`'s
    `"closed_forms"` preset uses `pull=2e-4` (its `"pooling"` preset, the
    default, no pull), chosen for Adam at the paper's learning rate
    1e-3.

    A denominator term vanishes at an end of [0, 1] when both its
    exponents are positive: `(sum x^f)^e` on a set of zeros, `(sum
    (1-x)^h)^g` on a set of ones. Pulling the other term's coefficient
    onto 0 would leave a pole there, which features after a sigmoid reach
    (a unit `(alpha sum x + beta) / (gamma sum x + delta sum (1-x))` whose
    delta is pulled to 0). So within a `keras_laf.LAF` layer, which gives
    the constraint its exponents (`with_exponents`), a denominator
    coefficient is not pulled while the other term can vanish; used
    alone, the constraint pulls both pairs.

    Args:
        pull: float >= 0. Relative step towards 0 per optimizer step.
            Defaults to `0.0` (no pull).

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

    def __init__(self, pull=0.0):
        self.pull = check_number("pull", pull, minimum=0, below=1)
        self.exponents = None

    def with_exponents(self, exponents):
        """This constraint for the coefficients of a LAF layer whose
        exponents are `exponents`, a variable `(8, units)` read at every
        call: a copy that does not pull a denominator coefficient onto a
        pole."""
        bound = self.__class__(**self.get_config())
        bound.exponents = exponents
        return bound

    def __call__(self, w):
        if self.pull:
            # (2, 2, units): the numerator's and the denominator's pair;
            # each pair steps by `pull` times its larger magnitude, so the
            # rescale below cannot feed one pair's step into the other.
            pairs = ops.reshape(w, (2, 2, ops.shape(w)[1]))
            step = self.pull * ops.max(ops.abs(pairs), axis=1, keepdims=True)
            pulled = ops.sign(pairs) * ops.maximum(ops.abs(pairs) - step, 0.0)
            if self.exponents is not None:
                # (2, units): whether gamma's and delta's terms can vanish;
                # each coefficient stays where the other's term can.
                exponents = self.exponents.value
                vanishes = (exponents[4::2] > 0) & (exponents[5::2] > 0)
                others_vanish = ops.flip(vanishes, axis=0)
                pulled = ops.stack(
                    [pulled[0], ops.where(others_vanish, pairs[1], pulled[1])]
                )
            w = ops.reshape(pulled, ops.shape(w))
        numerator = w[:2]
        # (2, units), then (1, units).
        denominator = ops.maximum(w[2:], 0.0)
        total = ops.sum(denominator, axis=0, keepdims=True)
        restart = ops.convert_to_tensor([[1.0], [0.0]], dtype=w.dtype)
        denominator = ops.where(total > 0, denominator, restart)
        scale = 1.0 / ops.clip(total, 1e-30, 1.0)
        scale = ops.where(total > 0, scale, 1.0)
        return ops.concatenate([numerator, denominator], 0) * scale

    def get_config(self):
        return {"pull": self.pull}


@keras.saving.register_keras_serializable(package="keras_laf")
class ClosedFormExponents(keras.constraints.Constraint):
    """Clips LAF exponents into [0, max_value] and pulls them onto 0 and 1.

    The closed forms of Table 1 of the paper have exponents exactly 0 or 1
    (sum, count, mean, their ratios) or a pair a = 1/b with b large (max,
    min). A unit that stops a few hundredths away, an outer exponent of
    0.04 instead of 0 say, scales as N^0.04 with the set size N and drifts
    on sets larger than those it was trained on. After each optimizer
    step this constraint clips the exponents into [0, max_value] (the
    paper's projection), then moves every exponent within a window of 0 or
    1 towards it by `pull`, landing exactly on it when closer than that:
    the proximal step of an L1 penalty on the distance to the nearest of 0
    and 1. Under Adam, whose steps are at most about the learning rate, an
    exponent whose gradient keeps pushing it away by more than `pull` per
    step stays where the data wants it; one whose gradient is weak or
    noisy settles exactly on 0 or 1, where the unit is a closed form that
    extrapolates.

    An outer exponent (a, c, e, g) whose term has degree outer * inner of
    at least `keep_degree` is not pulled towards 0: a small outer exponent
    then undoes a large inner one, as in the max and min of Table 1
    (a = 1/50, b = 50), and pulling it to 0 would turn the maximum into a
    constant.

    With `anchor_inner`, a term whose inner exponent is at least
    `anchor_inner` (a max- or min-like term, as the anchors of LAF's
    presets) also keeps its degree at `keep_degree` or more: its
    outer exponent is raised to `keep_degree / inner` when below. Adam
    moves an exponent by about the learning rate per step, which for the
    anchors' outer exponent 1/50 is 5% of its value per step: in the
    first epoch the gradient can drive it to 0, where the term is a
    constant and the pull keeps it (with or without the pull, half of the
    restarts of a 9-unit min then failed). With the floor the term stays
    at least max(x)^keep_degree and its unit can still learn a max or a
    min; its coefficient can still turn it off.

    Applied to LAF's `(8, units)` exponents, rows a..h (outer and inner
    exponents alternate). `pull` is per optimizer step; the default suits
    Adam at the paper's learning rate, 1e-3 (scale it with the learning
    rate).

    Args:
        max_value: float. Upper bound of the exponents. Defaults to
            `100.0`.
        pull: float >= 0. How far an exponent moves towards 0 or 1 per
            step. 0 turns the pull off (`BoundedNonNeg`). Defaults to
            `5e-4`.
        outer_window: float in [0, 0.5]. Outer exponents (a, c, e, g)
            closer than this to 0 or 1 are pulled. Defaults to `0.5`.
        inner_window: float in [0, 0.5]. Inner exponents (b, d, f, h)
            closer than this to 0 or 1 are pulled. Defaults to `0.5`.
        keep_degree: float > 0. Outer exponents of terms whose degree
            outer * inner reaches this are not pulled towards 0. Defaults
            to `0.25`.
        anchor_inner: None or float > 0. Terms whose inner exponent is at
            least this keep a degree of at least `keep_degree`. Defaults to
            None (no floor, as layers saved before this option);
            `keras_laf.LAF`'s presets use 5.
        max_numerator_outer: None or float > 0. The numerator's outer
            exponents (a, c) are clipped to at most this. With 1, no
            numerator grows faster than the number of elements N, as
            none of Table 1's forms does (a count, a sum), while a unit
            such as `(sum x)^1.25`, which fits small sets and runs away
            on larger ones, cannot be learned. Defaults to None (no clip,
            as layers saved before this option); `keras_laf.LAF`'s
            presets use 1.

    Example:

    >>> constraint = ClosedFormExponents(pull=0.01)
    >>> exponents = keras.ops.convert_to_tensor(
    ...     [[0.995, 0.02], [0.3, 50.0], [0.004, 0.0], [0.0, 0.0],
    ...      [0.0, 0.0], [0.0, 0.0], [1.2, 0.0], [0.0, 0.0]]
    ... )
    >>> pulled = keras.ops.convert_to_numpy(constraint(exponents))
    >>> print(np.array2string(pulled, precision=3, suppress_small=True))
    [[ 1.    0.02]
     [ 0.29 50.  ]
     [ 0.    0.  ]
     [ 0.    0.  ]
     [ 0.    0.  ]
     [ 0.    0.  ]
     [ 1.19  0.  ]
     [ 0.    0.  ]]
    """

    def __init__(
        self,
        max_value=100.0,
        pull=5e-4,
        outer_window=0.5,
        inner_window=0.5,
        keep_degree=0.25,
        anchor_inner=None,
        max_numerator_outer=None,
    ):
        self.max_value = check_positive_number(
            "max_value", max_value, allow_inf=True
        )
        self.pull = check_number("pull", pull, minimum=0, allow_inf=True)
        self.outer_window = check_number(
            "outer_window", outer_window, minimum=0, maximum=0.5
        )
        self.inner_window = check_number(
            "inner_window", inner_window, minimum=0, maximum=0.5
        )
        self.keep_degree = check_positive_number(
            "keep_degree", keep_degree, allow_inf=True
        )
        self.anchor_inner = (
            None
            if anchor_inner is None
            else check_positive_number(
                "anchor_inner", anchor_inner, allow_inf=True
            )
        )
        self.max_numerator_outer = (
            None
            if max_numerator_outer is None
            else check_positive_number(
                "max_numerator_outer", max_numerator_outer, allow_inf=True
            )
        )

    def __call__(self, w):
        w = ops.clip(w, 0.0, self.max_value)
        units = ops.shape(w)[1]
        # (4, units) each: the outer and inner exponent of every term.
        pairs = ops.reshape(w, (4, 2, units))
        outer, inner = pairs[:, 0], pairs[:, 1]
        # (8, units): the nearest of 0 and 1, and the distance to it.
        nearest = ops.round(ops.minimum(w, 1.0))
        distance = w - nearest
        keeps = (outer * inner >= self.keep_degree) & (outer < 0.5)
        # (8, units): how close an exponent must be to be pulled; outer
        # exponents that keep their value get a window no distance is in.
        window = ops.reshape(
            ops.stack(
                [
                    ops.where(keeps, -1.0, self.outer_window),
                    ops.full_like(inner, self.inner_window),
                ],
                axis=1,
            ),
            (8, units),
        )
        pulled = nearest + ops.sign(distance) * ops.maximum(
            ops.abs(distance) - self.pull, 0.0
        )
        w = ops.where(ops.abs(distance) < window, pulled, w)
        if self.anchor_inner is None and self.max_numerator_outer is None:
            return w
        pairs = ops.reshape(w, (4, 2, units))
        outer, inner = pairs[:, 0], pairs[:, 1]
        if self.anchor_inner is not None:
            # (4, units) each: max/min-like terms get their least outer
            # exponent.
            anchors = inner >= self.anchor_inner
            floor = self.keep_degree / ops.where(anchors, inner, 1.0)
            outer = ops.where(anchors, ops.maximum(outer, floor), outer)
        if self.max_numerator_outer is not None:
            # (4, 1): terms 0 and 1 (a and c) are the numerator's.
            numerator = ops.convert_to_tensor(
                [[True], [True], [False], [False]]
            )
            outer = ops.where(
                numerator, ops.minimum(outer, self.max_numerator_outer), outer
            )
        return ops.reshape(ops.stack([outer, inner], axis=1), (8, units))

    def get_config(self):
        return {
            "max_value": self.max_value,
            "pull": self.pull,
            "outer_window": self.outer_window,
            "inner_window": self.inner_window,
            "keep_degree": self.keep_degree,
            "anchor_inner": self.anchor_inner,
            "max_numerator_outer": self.max_numerator_outer,
        }

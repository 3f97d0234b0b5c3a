"""GenAgg: the generalised f-mean, the other learnable aggregation function.

For each feature of a set `x_1, ..., x_n`, GenAgg (Kortvelesy, Morad,
Prorok, "Generalised f-Mean Aggregation for Graph Neural Networks",
NeurIPS 2023) computes

    f^-1( n^a * mean_i f(x_i - b * mean(x)) )

with an invertible scalar map `f`, an exponent `a` that moves it from an
f-mean (`a = 0`) to an f-sum (`a = 1`), and a centring `b` (`b = 1` gives
central moments). `GenAggAggregation` learns `f` as a monotone network, or
takes a fixed named map for the paper's special cases.
"""

import math

import keras
import numpy as np
from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.pooling import set_logsumexp
from keras_laf.aggregations.registry import register
from keras_laf.core.validation import aggregation_input_spec
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_open_unit_interval
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import describe_received
from keras_laf.core.validation import is_number

# The maps f: learned ("monotone"), or fixed for the special cases.
MAPS = ("monotone", "identity", "power", "log", "exp")
# The smallest slope of the linear term of the monotone map: it keeps f
# strictly increasing, and the bracket of its inverse finite.
MIN_LINEAR_SLOPE = 1e-3


def _softplus_inverse(value):
    return math.log(math.expm1(value))


@register("genagg")
class GenAggAggregation(SetAggregation):
    """GenAgg: `f^-1(n^a mean_i f(x_i - b mean(x)))` of each feature.

    The generalised f-mean of Kortvelesy, Morad and Prorok ("Generalised
    f-Mean Aggregation for Graph Neural Networks", NeurIPS 2023), learnable
    between intensive aggregators (means, `a = 0`) and extensive ones
    (sums, `a = 1`), with central moments through `b`.

    With `f="monotone"` (the default), `f` is learned as
    `f(x) = c x + sum_k w_k tanh(u_k x + d_k)` with positive `c`, `w_k`
    and `u_k` (softplus of free weights, `c` at least `MIN_LINEAR_SLOPE`),
    so it is strictly increasing and maps the reals onto the reals: its
    inverse exists everywhere, and no reconstruction loss is needed. The
    paper instead learns `f` and `f^-1` as two free MLPs tied by a
    reconstruction loss, so its `f^-1` is an inverse only approximately,
    and only where that loss was trained. Here `f^-1(y)` is found to float
    precision by `inverse_steps` Newton steps kept inside a bisection
    bracket (`|f(x) - c x| <= sum_k w_k` bounds the root), run without
    gradients, then one more Newton step with gradients: at the root its
    derivatives are those of the implicit function theorem, `1 / f'(x)`
    in `y` and `-(df/dtheta) / f'(x)` in the weights of `f`. That gives
    exact gradients whose memory does not grow with the steps, where
    differentiating the unrolled steps would store every step (and
    bisection alone has a zero gradient in the weights).

    The fixed maps give the paper's special cases exactly: `"identity"`
    (`f(x) = x`: the mean, and the sum at `a = 1`), `"power"`
    (`f(x) = |x|^p`: the root mean square and the 2-norm at `p = 2`, the
    standard deviation with `b = 1`, the harmonic mean of positive sets at
    `p = -1`, the maximum of `|x|` as `p` grows), `"log"` (`f(x) = log x`:
    the geometric mean of positive sets; elements below `epsilon` count as
    `epsilon`) and `"exp"` (`f(x) = exp(p x)`: log-sum-exp at `p = 1` and
    `a = 1`, the maximum as `p -> inf`, the minimum as `p -> -inf`). The
    power and exponential maps are computed in log space, so large `|p|`
    stay finite; `|x|` is floored at `epsilon` inside the logarithm.

    An empty set gives 0. Computations run in float32 at least.

    Args:
        f: str. The map: `"monotone"` (learned), `"identity"`, `"power"`,
            `"log"` or `"exp"`. Defaults to `"monotone"`.
        units: int. Number of tanh units of the monotone map. Defaults to
            `8`.
        p: float. The exponent of `"power"` and the rate of `"exp"`,
            non-zero; the other maps ignore it. Defaults to `1.0`.
        a: float. The exponent of `n`, or its initial value when learned.
            Defaults to `0.0` (an f-mean).
        b: float. The weight of the mean subtracted from each element, or
            its initial value when learned. Defaults to `0.0`.
        learn_a: bool. Whether `a` is trainable. Defaults to `True`.
        learn_b: bool. Whether `b` is trainable. Defaults to `True`.
        channels: int. 1 (one map, `a` and `b` shared by the features) or
            the number of features (one for each). Defaults to `1`.
        inverse_steps: int. Newton-bisection steps of the monotone map's
            inverse. Defaults to `20`.
        epsilon: float. Floor of `|x|` (and `x` for `"log"`) inside the
            logarithm, in (0, 1). Defaults to `1e-7`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = GenAggAggregation(f="power", p=2.0, learn_a=False)
    >>> outputs = layer(np.array([[[1.0], [7.0]]], "float32"))
    >>> keras.ops.convert_to_numpy(outputs).round(4)  # sqrt((1 + 49) / 2)
    array([[5.]], dtype=float32)
    >>> layer = GenAggAggregation(units=4)  # f learned, a and b too
    >>> tuple(layer(np.random.rand(2, 5, 3)).shape)
    (2, 3)
    """

    num_aggregates = 1

    def __init__(
        self,
        f="monotone",
        units=8,
        p=1.0,
        a=0.0,
        b=0.0,
        learn_a=True,
        learn_b=True,
        channels=1,
        inverse_steps=20,
        epsilon=1e-7,
        **kwargs,
    ):
        super().__init__(flatten=True, **kwargs)
        if f not in MAPS:
            raise ValueError(
                f"`f` must be one of {list(MAPS)}. Received: f={f!r}"
            )
        if is_number(p) and p == 0:
            raise ValueError(
                "`p` expected a finite non-zero number. "
                f"Received: {describe_received('p', p)}"
            )
        self.f = f
        self.units = check_positive_int("units", units)
        self.p = check_number("p", p)
        self.a = check_number("a", a)
        self.b = check_number("b", b)
        self.learn_a = check_bool("learn_a", learn_a)
        self.learn_b = check_bool("learn_b", learn_b)
        self.channels = check_positive_int("channels", channels)
        self.inverse_steps = check_positive_int("inverse_steps", inverse_steps)
        self.epsilon = check_open_unit_interval("epsilon", epsilon)

    def build(self, input_shape):
        super().build(input_shape)
        features = input_shape[-1]
        if self.channels not in (1, features):
            raise ValueError(
                f"Layer '{self.name}' (GenAggAggregation) expects "
                "`channels` to be 1 (one map for every feature) or the "
                f"number of features, {features}. Received: "
                f"channels={self.channels}"
            )
        if self.channels > 1:
            self.input_spec = aggregation_input_spec(features)
        shape = (self.channels,)
        if self.learn_a:
            self.exponent = self.add_weight(
                name="a",
                shape=shape,
                initializer=keras.initializers.Constant(self.a),
            )
        if self.learn_b:
            self.centring = self.add_weight(
                name="b",
                shape=shape,
                initializer=keras.initializers.Constant(self.b),
            )
        if self.f == "monotone":
            self._add_monotone_map()

    def _add_monotone_map(self):
        # Starts at f(x) = x + mean_k tanh(x - d_k), offsets d_k evenly
        # spread over (-2, 2): slopes between 1 and 2 wherever the inputs
        # of the earlier layers start, none saturated.
        units_shape = (self.channels, self.units)
        offsets = 4.0 * ((np.arange(self.units) + 0.5) / self.units - 0.5)
        self.raw_linear = self.add_weight(
            name="raw_linear",
            shape=(self.channels,),
            initializer=keras.initializers.Constant(
                _softplus_inverse(1.0 - MIN_LINEAR_SLOPE)
            ),
        )
        self.raw_slopes = self.add_weight(
            name="raw_slopes",
            shape=units_shape,
            initializer=keras.initializers.Constant(_softplus_inverse(1.0)),
        )
        self.offsets = self.add_weight(
            name="offsets",
            shape=units_shape,
            initializer=lambda shape, dtype=None: ops.cast(
                ops.broadcast_to(offsets, shape), dtype
            ),
        )
        self.raw_scales = self.add_weight(
            name="raw_scales",
            shape=units_shape,
            initializer=keras.initializers.Constant(
                _softplus_inverse(1.0 / self.units)
            ),
        )

    def monotone_parameters(self, dtype="float32"):
        """The positive weights of the monotone map, `(c, u, d, w)`.

        `f(x) = c x + sum_k w_k tanh(u_k x + d_k)`: `c` `(channels,)`,
        the slopes `u`, offsets `d` and scales `w` `(channels, units)`.
        """

        def positive(weight):
            return ops.softplus(ops.cast(weight, dtype))

        return (
            positive(self.raw_linear) + MIN_LINEAR_SLOPE,
            positive(self.raw_slopes),
            ops.cast(self.offsets, dtype),
            positive(self.raw_scales),
        )

    @staticmethod
    def monotone_map(x, parameters):
        """`f(x)` and `f'(x)` of the monotone map, both shaped like `x`
        `(..., features)`."""
        linear, slopes, offsets, scales = parameters
        # (..., features, units)
        activations = ops.tanh(ops.expand_dims(x, -1) * slopes + offsets)
        values = linear * x + ops.sum(scales * activations, -1)
        derivatives = linear + ops.sum(
            scales * slopes * (1.0 - activations**2), -1
        )
        return values, derivatives

    def monotone_inverse(self, y, parameters):
        """`f^-1(y)` of the monotone map, `(num_sets, features)`, with the
        gradients of the implicit function theorem."""
        fixed = [ops.stop_gradient(weight) for weight in parameters]
        target = ops.stop_gradient(y)
        linear, scales = fixed[0], fixed[3]
        # |f(x) - c x| <= sum_k w_k brackets the root.
        bound = ops.sum(scales, -1)
        low = (target - bound) / linear
        high = (target + bound) / linear
        x = target / linear
        for _ in range(self.inverse_steps):
            values, derivatives = self.monotone_map(x, fixed)
            above = values > target
            high = ops.where(above, x, high)
            low = ops.where(above, low, x)
            newton = x - (values - target) / derivatives
            inside = ops.logical_and(newton >= low, newton <= high)
            x = ops.where(inside, newton, (low + high) / 2)
        # At the root, this step changes x by rounding only; its gradient
        # is dx/dy = 1 / f'(x), dx/dtheta = -(df/dtheta) / f'(x).
        values, derivatives = self.monotone_map(x, parameters)
        return x - (values - y) / ops.stop_gradient(derivatives)

    def aggregate(self, values, sets):
        dtype = "float64" if self.compute_dtype == "float64" else "float32"
        values = ops.cast(values, dtype)
        a = ops.cast(self.exponent, dtype) if self.learn_a else self.a
        b = ops.cast(self.centring, dtype) if self.learn_b else self.b
        # (num_sets, 1)
        sizes = ops.expand_dims(ops.cast(sets.sizes(), dtype), -1)
        nonempty = sizes > 0
        log_sizes = ops.log(ops.maximum(sizes, 1.0))
        # (num_sets, features)
        means = sets.sum(values) / ops.maximum(sizes, 1.0)
        centred = values - sets.broadcast(b * means)
        # Padded positions get 1, inside the domain of every map, so that
        # neither they nor their gradients are NaN; the sums skip them.
        real = sets.broadcast(ops.ones_like(means)) > 0
        centred = ops.where(real, centred, 1.0)
        if self.f in ("power", "exp"):
            if self.f == "power":
                logs = ops.log(ops.maximum(ops.abs(centred), self.epsilon))
                scores = self.p * logs
            else:
                scores = self.p * centred
            # log(n^a mean_i f(x_i)), then f^-1 in log space.
            log_sums = ops.where(nonempty, set_logsumexp(scores, sets), 0.0)
            log_outputs = (a * log_sizes + log_sums - log_sizes) / self.p
            outputs = ops.exp(log_outputs) if self.f == "power" else log_outputs
        else:
            scale = ops.exp(a * log_sizes) / ops.maximum(sizes, 1.0)
            if self.f == "identity":
                outputs = scale * sets.sum(centred)
            elif self.f == "log":
                logs = ops.log(ops.maximum(centred, self.epsilon))
                outputs = ops.exp(scale * sets.sum(logs))
            else:
                parameters = self.monotone_parameters(dtype)
                mapped, _ = self.monotone_map(centred, parameters)
                outputs = self.monotone_inverse(
                    scale * sets.sum(mapped), parameters
                )
        outputs = ops.where(nonempty, outputs, 0.0)
        # (num_sets, features, 1)
        return ops.expand_dims(ops.cast(outputs, self.compute_dtype), -1)

    def get_config(self):
        config = super().get_config()
        # Always one aggregate per feature: nothing to flatten.
        config.pop("flatten")
        return {
            **config,
            "f": self.f,
            "units": self.units,
            "p": self.p,
            "a": self.a,
            "b": self.b,
            "learn_a": self.learn_a,
            "learn_b": self.learn_b,
            "channels": self.channels,
            "inverse_steps": self.inverse_steps,
            "epsilon": self.epsilon,
        }

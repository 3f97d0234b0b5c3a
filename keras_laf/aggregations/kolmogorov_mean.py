"""The neuralized Kolmogorov mean: a quasi-arithmetic mean of vectors.

For a set `x_1, ..., x_n` of vectors in R^d, QUANN ("Neuralized
Kolmogorov Mean", ICLR 2026) computes

    psi^-1( mean_i psi(x_i) )

with `psi: R^d -> R^d` an invertible network. Its `psi` is built from
additive coupling blocks (NICE, RevNet), so `psi^-1` is exact: each block
is undone by subtracting what it added, in reverse order.
`KolmogorovMeanAggregation` learns it.
"""

import math

import keras
from keras import ops

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import register
from keras_laf.core.validation import check_positive_int


@register("kolmogorov_mean")
class KolmogorovMeanAggregation(SetPooling):
    """Neuralized Kolmogorov mean: `psi^-1(mean_i psi(x_i))` of each set.

    The aggregation of QUANN ("Neuralized Kolmogorov Mean", ICLR 2026): a
    quasi-arithmetic (Kolmogorov) mean whose generator `psi: R^d -> R^d`
    is an invertible network, so that the whole vector of features is
    averaged in a learned space and mapped back. `psi` is `num_blocks`
    additive coupling blocks (Dinh, Krueger, Bengio, "NICE", 2015; Gomez
    et al., "The Reversible Residual Network", 2017): the features split
    into `x1`, the first `floor(d / 2)`, and `x2`, the other
    `ceil(d / 2)`, and each block computes

        y1 = x1 + m1(x2),    y2 = x2 + m2(y1),

    each `m` an MLP with one hidden layer of `hidden_units` ReLU units.
    Whatever the weights, `psi` is a bijection and `psi^-1` is exact:
    `x2 = y2 - m2(y1)`, then `x1 = y1 - m1(x2)`, block by block in
    reverse order. The output of a set of identical elements is that
    element, as for any mean; unlike `GenAggAggregation`, whose map acts
    on each feature alone, `psi` mixes the features.

    The output layers of the MLPs have no bias: a constant added to `psi`
    leaves the mean unchanged, and the hidden biases downstream absorb
    any shift inside. With ReLU units `psi` is piecewise linear, and a set
    whose elements all lie in one linear piece gets its arithmetic mean:
    the hidden biases start uniform in `+-1 / sqrt(fan_in)`, as PyTorch's
    `Linear`, not at 0, where every kink would pass through the origin.

    A coupling needs two halves, so the layer needs at least 2 features
    and raises a ValueError on 1: the quasi-arithmetic mean of one feature
    is GenAgg's learned f-mean, `GenAggAggregation(learn_a=False,
    learn_b=False)`.

    Padded elements take no part. An empty set gives 0, as the other
    means of keras-laf do. The sums over a set run in float32 at least.

    Args:
        hidden_units: int. Units of the hidden layer of each coupling MLP.
            Defaults to `128`.
        num_blocks: int. Number of coupling blocks of `psi`. Defaults to
            `2`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`; at least 2
        features.

    Output shape:
        `(num_sets, features)`.

    Example:

    >>> layer = KolmogorovMeanAggregation(hidden_units=8)
    >>> values = np.array([[[1.0, -2.0], [1.0, -2.0], [1.0, -2.0]]], "f4")
    >>> keras.ops.convert_to_numpy(layer(values)).round(4)  # a mean
    array([[ 1., -2.]], dtype=float32)
    >>> flat = np.random.rand(5, 3).astype("float32")  # 2 sets, 3 features
    >>> outputs = KolmogorovMeanAggregation()(
    ...     flat, segment_ids=np.array([0, 0, 1, 1, 1]), num_segments=2
    ... )
    >>> keras.ops.convert_to_numpy(outputs).shape
    (2, 3)
    """

    def __init__(self, hidden_units=128, num_blocks=2, **kwargs):
        super().__init__(**kwargs)
        self.hidden_units = check_positive_int("hidden_units", hidden_units)
        self.num_blocks = check_positive_int("num_blocks", num_blocks)

    def build(self, input_shape):
        super().build(input_shape)
        features = input_shape[-1]
        if features < 2:
            raise ValueError(
                f"Layer '{self.name}' (KolmogorovMeanAggregation) needs at "
                "least 2 features: its coupling blocks split them in two "
                "halves. For one feature, use GenAggAggregation(learn_a="
                "False, learn_b=False), a learned monotone f-mean. "
                f"Received: inputs.shape={tuple(input_shape)}"
            )
        # x1 the first floor(d / 2) features, x2 the other ceil(d / 2).
        self.split = features // 2
        first, second = self.split, features - self.split
        # Block b holds m1 (x2 -> shift of x1) at index 2b and m2 (y1 ->
        # shift of x2) at index 2b + 1: (name, input width, output width).
        networks = [
            (f"block_{block}_m{half}", *widths)
            for block in range(self.num_blocks)
            for half, widths in ((1, (second, first)), (2, (first, second)))
        ]
        self.hidden_layers = []
        self.output_layers = []
        for name, source, target in networks:
            # Spread kinks (the class docstring): where a set's elements
            # share one linear piece of psi, the last coupling's gradient
            # is 0.
            limit = 1.0 / math.sqrt(source)
            hidden = keras.layers.Dense(
                self.hidden_units,
                activation="relu",
                bias_initializer=keras.initializers.RandomUniform(
                    -limit, limit
                ),
                name=f"{name}_hidden",
                dtype=self.dtype_policy,
            )
            output = keras.layers.Dense(
                target,
                use_bias=False,
                name=f"{name}_output",
                dtype=self.dtype_policy,
            )
            hidden.build((None, source))
            output.build((None, self.hidden_units))
            self.hidden_layers.append(hidden)
            self.output_layers.append(output)

    def output_width(self, features):
        return features

    def _shift(self, index, values):
        return self.output_layers[index](self.hidden_layers[index](values))

    def psi(self, values):
        """The generator `psi`, `(..., features)` to `(..., features)`."""
        x1, x2 = values[..., : self.split], values[..., self.split :]
        for block in range(self.num_blocks):
            x1 = x1 + self._shift(2 * block, x2)
            x2 = x2 + self._shift(2 * block + 1, x1)
        return ops.concatenate([x1, x2], axis=-1)

    def psi_inverse(self, values):
        """The exact inverse of `psi`, `(..., features)` to `(...,
        features)`: each block's shifts subtracted, in reverse order."""
        y1, y2 = values[..., : self.split], values[..., self.split :]
        for block in reversed(range(self.num_blocks)):
            y2 = y2 - self._shift(2 * block + 1, y1)
            y1 = y1 - self._shift(2 * block, y2)
        return ops.concatenate([y1, y2], axis=-1)

    def pool(self, values, sets, training=None):
        sum_dtype = "float64" if self.compute_dtype == "float64" else "float32"
        # (num_sets, 1)
        sizes = ops.expand_dims(ops.cast(sets.sizes(), sum_dtype), -1)
        # Padded positions may hold anything, NaN included: 0 there keeps
        # psi and its gradients finite, and the sums skip them.
        real = sets.broadcast(ops.ones_like(sizes)) > 0
        values = ops.where(real, values, ops.zeros_like(values))
        mapped = ops.cast(self.psi(values), sum_dtype)
        # (num_sets, features); an empty set divides its 0 by 1.
        means = sets.sum(mapped) / ops.maximum(sizes, 1.0)
        outputs = self.psi_inverse(ops.cast(means, self.compute_dtype))
        return ops.where(sizes > 0, outputs, ops.zeros_like(outputs))

    def get_config(self):
        return {
            **super().get_config(),
            "hidden_units": self.hidden_units,
            "num_blocks": self.num_blocks,
        }

"""The LAF layer: learnable aggregation functions over sets."""

import keras
import numpy as np
from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.laf.closed_forms import ClosedForm
from keras_laf.aggregations.laf.closed_forms import identify_closed_forms
from keras_laf.aggregations.laf.closed_forms import snap_closed_forms
from keras_laf.aggregations.laf.constraints import ClosedFormExponents
from keras_laf.aggregations.laf.constraints import PositiveDenominator
from keras_laf.aggregations.laf.presets import DEFAULT_PRESET
from keras_laf.aggregations.laf.presets import preset_arguments
from keras_laf.aggregations.laf.presets import standardize_preset
from keras_laf.aggregations.registry import register
from keras_laf.core.sets import in_fastest_layout
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import check_positive_number
from keras_laf.core.validation import check_unit_interval
from keras_laf.ops import laf_over_sets
from keras_laf.ops import largest_finite


@register("laf", units=9)
class LAF(SetAggregation):
    r"""Learnable Aggregation Functions over sets.

    Each of the `units` LAF units is the function of a set $x$ of values in
    $[0, 1]$

    $$
    L_{a,b}(x) = \Big(\sum_i x_i^b\Big)^a \qquad
    \mathrm{LAF}(x) = \frac{\alpha L_{a,b}(x) + \beta L_{c,d}(1-x)}
    {\gamma L_{e,f}(x) + \delta L_{g,h}(1-x)}
    $$

    with learned exponents $a, \dots, h \ge 0$ and coefficients
    $\alpha, \dots, \delta$. One unit can be the sum, count, mean, max,
    min, moments and ratios of these (see `LAF.from_closed_forms`), or
    anything between. Every feature of every set is aggregated by every
    unit.

    The power sums are computed in log space, so the output is accurate for
    small and large sets alike, and finite with finite gradients for
    elements equal to 0 or 1, exponents equal to 0, single-element sets,
    very large sets and empty sets. An empty set (a node without incoming
    edges) gives 0, as the fixed aggregators do. The magnitude of the
    denominator is floored at `epsilon`. See
    `keras_laf.ops` for the details. Internally the layer computes in
    float32, also under a mixed precision policy, and casts its output to
    the compute dtype.

    Input values must lie in [0, 1]: put a sigmoid (as the paper does) or
    another map into [0, 1] before the layer. Values outside it (by more
    than 1e-6 of rounding, within which they are clipped) are not clipped
    silently: an eager call (PyTorch's `Model.fit` among them) raises a
    ValueError naming the received range, and inside a compiled
    `Model.fit` or `predict` the set's output is NaN in that feature, as
    for a NaN or infinite element, so the loss shows it and
    `keras.callbacks.TerminateOnNaN` stops.

    Reference: Pellegrini, Tibo, Frasconi, Passerini, Jaeger, "Learning
    Aggregation Functions", IJCAI 2021.

    Args:
        units: int. Number of LAF units r. The output has `features * units`
            values per set. Defaults to `1`.
        flatten: bool. If True the output is `(batch, features * units)`,
            else `(batch, features, units)`. Defaults to `True`.
        epsilon: float. Floor of x and 1 - x inside the logarithm and of
            the magnitude of the denominator. Defaults to `1e-7`.
        preset: str. How the units start and how their parameters are
            constrained, by purpose (see `keras_laf.presets`): `"pooling"`,
            `"closed_forms"` or `"paper"` (None: the default). Defaults to
            `"pooling"`, a pooling inside a model: every other unit starts as
            the maximum, the minimum, the mean or the second moment of Table 1
            in turn (PNA's aggregators), the others at random exponents in [0,
            1] with a positive denominator (see
            `keras_laf.initializers.AnchoredLAF`); the exponents are projected
            onto [0, 100], the numerator's outer exponents (a, c) onto [0, 1] so
            that no unit grows faster than the set (a count and a sum still
            can), max/min-like terms keep a least degree, and `gamma, delta >=
            0` with `gamma + delta >= 1` (no pole on large sets).
            `"closed_forms"`, for targets that are closed forms (a count, a sum,
            a mean) and must hold on larger sets, starts with a small count,
            then every third unit as the maximum, the minimum or the mean, clips
            the numerator's outer exponents as `"pooling"` does, and adds pulls
            after every step that settle exponents near 0 or 1 and coefficients
            the data does not need exactly there
            (`keras_laf.constraints.ClosedFormExponents`,
            `keras_laf.constraints.PositiveDenominator(pull=2e-4)`). `"paper"`
            is the paper's scheme exactly: exponents uniform in [0, 1],
            coefficients normal with standard deviation 0.01, only the exponents
            projected onto [0, 100].
        output_bound: float > 0, `float("inf")` for none, or None for the
            preset's. Every output lies in `[-output_bound,
            output_bound]`: on a set of N elements the denominator's
            magnitude is floored at `(|alpha| N^a + |beta| N^c) /
            output_bound`, the numerator's largest magnitude over the
            bound, so a unit whose numerator grows faster with the set
            than its denominator, or whose denominator vanishes on sets
            unlike the training sets, cannot run away. A bound also stops
            counts and sums at it: use one for targets that do not grow
            with the set and must hold on sets larger than the training
            sets (a kurtosis, say, for which `10` suits digits of 0..9).
            Defaults to None:
            the preset's, none for every preset.
        exponent_initializer: initializer of the exponents, shape
            `(8, units)`. Defaults to the preset's.
        coefficient_initializer: initializer of the coefficients, shape
            `(4, units)`. Defaults to the preset's.
        exponent_constraint: constraint applied by the optimizer after each
            update of the exponents. Defaults to the preset's. Pass a
            constraint that keeps the exponents non-negative.
        coefficient_constraint: constraint of the coefficients. Defaults to
            the preset's. Pass `keras.constraints.Constraint()` (the
            identity) to leave the signs free.
        exponent_regularizer: optional regularizer of the exponents.
        coefficient_regularizer: optional regularizer of the coefficients.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: a dense tensor `(batch, set_size, features)`, a
            `tf.RaggedTensor` `(batch, None, features)`, or flat element
            values `(num_elements, features)` together with `segment_ids`.
        mask: optional boolean tensor `(batch, set_size)`, True for real
            elements of dense inputs; a Keras mask from an upstream layer
            arrives here too. Padded elements have no effect at all.
        segment_ids: optional int tensor `(num_elements,)`, the set of each
            element for flat inputs; need not be sorted.
        num_segments: optional int or scalar tensor, the number of sets for
            flat inputs. Defaults to `max(segment_ids) + 1`.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, features * units)` if `flatten`, else
        `(num_sets, features, units)`, where `num_sets` is the batch size
        or `num_segments`. `output[i, j, k]` is unit k applied to feature j
        of set i.

    Example:

    >>> model = keras.Sequential([
    ...     keras.Input(shape=(None, 8)),
    ...     keras.layers.Dense(16, activation="sigmoid"),
    ...     LAF(units=9),
    ...     keras.layers.Dense(1),
    ... ])
    >>> tuple(model(np.random.rand(4, 10, 8)).shape)
    (4, 1)
    >>> layer = LAF.from_closed_forms(["sum", "max"])
    >>> tuple(layer(np.random.rand(2, 5, 1)).shape)
    (2, 2)
    >>> layer.formulas()[0].split(" / ")[0]
    '(1.00(Σx^1.00)^1.00 + 0.00(Σ(1-x)^0.00)^0.00)'
    """

    # The power sums take x and 1 - x in [0, 1].
    input_domain = "unit_interval"

    def __init__(
        self,
        units=1,
        flatten=True,
        epsilon=1e-7,
        preset=DEFAULT_PRESET,
        output_bound=None,
        exponent_initializer=None,
        coefficient_initializer=None,
        exponent_constraint=None,
        coefficient_constraint=None,
        exponent_regularizer=None,
        coefficient_regularizer=None,
        **kwargs,
    ):
        # The layer computes in float32 and casts its output itself.
        kwargs["autocast"] = False
        super().__init__(flatten=flatten, **kwargs)
        self.units = check_positive_int("units", units)
        self.epsilon = check_number("epsilon", epsilon, above=0, below=0.5)
        self.num_aggregates = self.units
        # None: the default, as for every other argument left out.
        self.preset = standardize_preset(
            DEFAULT_PRESET if preset is None else preset
        )
        defaults = preset_arguments(self.preset)
        if output_bound is None:
            output_bound = defaults["output_bound"]
        # inf for no bound.
        self.output_bound = check_positive_number(
            "output_bound", output_bound, allow_inf=True
        )
        self.exponent_initializer = keras.initializers.get(
            exponent_initializer or defaults["exponent_initializer"]
        )
        self.coefficient_initializer = keras.initializers.get(
            coefficient_initializer or defaults["coefficient_initializer"]
        )
        self.exponent_constraint = keras.constraints.get(
            exponent_constraint or defaults["exponent_constraint"]
        )
        self.coefficient_constraint = keras.constraints.get(
            coefficient_constraint or defaults["coefficient_constraint"]
        )
        self.exponent_regularizer = keras.regularizers.get(exponent_regularizer)
        self.coefficient_regularizer = keras.regularizers.get(
            coefficient_regularizer
        )

    @classmethod
    def from_closed_forms(cls, forms, **kwargs):
        """A LAF layer whose units start as aggregators of Table 1.

        Args:
            forms: list, one entry per unit: a name (`"constant"`,
                `"count"`, `"sum"`, `"mean"`, `"moment"`, `"moment_power"`,
                `"max"`, `"min"`, `"min/max"`, `"max/min"`) or a dict with
                a `"name"` and the aggregator's parameters, e.g.
                `{"name": "moment", "k": 3}`; see `keras_laf.closed_form`.
            **kwargs: further `LAF` arguments, except `units` and the
                initializers. Without an `output_bound`, none (a count or
                a sum grows with the set). Without a
                `coefficient_constraint`, forms
                that need a negative denominator coefficient (`"max/min"`)
                leave the coefficients unconstrained; the others keep the
                default `PositiveDenominator`.

        Returns:
            A `LAF` layer with `len(forms)` units.

        Example:

        >>> layer = LAF.from_closed_forms(["mean", {"name": "max", "r": 50}])
        >>> outputs = layer(np.array([[[0.1], [0.5]], [[0.5], [0.5]]]))
        >>> # The mean, and the maximum within a factor 2^(1/50):
        >>> np.round(keras.ops.convert_to_numpy(outputs), 4)
        array([[0.3  , 0.5  ],
               [0.5  , 0.507]], dtype=float32)
        """
        exponents = ClosedForm(forms, part="exponents")
        constraint = keras.constraints.get(
            kwargs.get("exponent_constraint") or ClosedFormExponents()
        )
        largest = float(exponents.table().max())
        bound = getattr(constraint, "max_value", None)
        if bound is not None and largest > bound:
            raise ValueError(
                f"The closed forms need exponents up to {largest}, above the "
                f"exponent constraint's max_value={bound}. Pass "
                "exponent_constraint=ClosedFormExponents(max_value=...) with "
                "a larger bound."
            )
        coefficients = ClosedForm(forms, part="coefficients")
        if kwargs.get("coefficient_constraint") is None and np.any(
            coefficients.table()[2:] < 0
        ):
            # max/min has delta = -1, out of reach of the default
            # PositiveDenominator: leave the coefficients unconstrained.
            kwargs["coefficient_constraint"] = keras.constraints.Constraint()
        # Exact forms hold on sets of any size: counts and sums unbounded.
        kwargs.setdefault("output_bound", float("inf"))
        return cls(
            units=len(exponents.forms),
            exponent_initializer=exponents,
            coefficient_initializer=coefficients,
            **kwargs,
        )

    def build(self, input_shape):
        super().build(input_shape)
        self.exponents = self.add_weight(
            name="exponents",
            shape=(8, self.units),
            initializer=self.exponent_initializer,
            regularizer=self.exponent_regularizer,
            constraint=self.exponent_constraint,
            dtype="float32",
        )
        coefficient_constraint = self.coefficient_constraint
        if isinstance(coefficient_constraint, PositiveDenominator):
            coefficient_constraint = coefficient_constraint.with_exponents(
                self.exponents
            )
        self.coefficients = self.add_weight(
            name="coefficients",
            shape=(4, self.units),
            initializer=self.coefficient_initializer,
            regularizer=self.coefficient_regularizer,
            constraint=coefficient_constraint,
            dtype="float32",
        )

    def aggregate(self, values, sets):
        values, sets = in_fastest_layout(values, sets)
        check_unit_interval(self, values, sets)
        # `.value` reads the variables: the backend tensors go into the
        # compiled kernels, the Keras variables would not.
        outputs = laf_over_sets(
            values,
            sets,
            self.exponents.value,
            self.coefficients.value,
            self.epsilon,
            largest_finite(self.compute_dtype),
            self.output_bound,
        )
        return ops.cast(outputs, self.compute_dtype)

    def formulas(self, precision=2):
        """The units as readable formulas, in the paper's appendix style.

        Args:
            precision: int. Decimals of each parameter. Defaults to `2`.

        Returns:
            A list of `units` strings, e.g. for the mean
            `"(1.00(Σx^1.00)^1.00 + 0.00(Σ(1-x)^0.00)^0.00) /
            (1.00(Σx^0.00)^1.00 + 0.00(Σ(1-x)^0.00)^0.00)"`.
        """
        self._check_built("formulas()")
        a, b, c, d, e, f, g, h = ops.convert_to_numpy(self.exponents)
        alpha, beta, gamma, delta = ops.convert_to_numpy(self.coefficients)

        def term(coefficient, source, outer, inner):
            return (
                f"{coefficient:.{precision}f}(Σ{source}^{inner:.{precision}f})"
                f"^{outer:.{precision}f}"
            )

        return [
            f"({term(alpha[k], 'x', a[k], b[k])} + "
            f"{term(beta[k], '(1-x)', c[k], d[k])}) / "
            f"({term(gamma[k], 'x', e[k], f[k])} + "
            f"{term(delta[k], '(1-x)', g[k], h[k])})"
            for k in range(self.units)
        ]

    def closed_forms(self, tolerance=0.02):
        """The aggregator of Table 1 that each unit computes, if any.

        Each unit is compared, up to a scale and an offset, with count,
        sum, mean, max, min, the moments mean(x^k) for k = 2, 3, 4,
        min/max and max/min on a fixed batch of random sets (see
        `keras_laf.aggregations.laf.closed_forms.identify_closed_forms`).

        Args:
            tolerance: float in (0, 1). Root-mean-square residual of the
                fit accepted, relative to the unit's standard deviation.
                Defaults to `0.02`.

        Returns:
            A list of `units` entries: the name of the form (`"count"`,
            `"sum"`, `"moment(k=2)"`, `"constant"`, ...) or None.

        Example:

        >>> layer = LAF.from_closed_forms(["count", "max", "mean"])
        >>> layer.build((None, None, 1))
        >>> layer.closed_forms()
        ['count', 'max', 'mean']
        """
        self._check_built("closed_forms()")
        return identify_closed_forms(
            ops.convert_to_numpy(self.exponents),
            ops.convert_to_numpy(self.coefficients),
            tolerance,
        )

    def describe_units(self, tolerance=0.02, precision=2):
        """One line per unit: the form of Table 1 it computes, or its formula.

        Args:
            tolerance: float in (0, 1). As in `closed_forms`. Defaults to
                `0.02`.
            precision: int. Decimals of the formulas of units that match
                no form. Defaults to `2`.

        Returns:
            A list of `units` strings such as `"unit 0: count"` or
            `"unit 1: none of Table 1: (...) / (...)"`.

        Example:

        >>> layer = LAF.from_closed_forms(["sum", "min"])
        >>> layer.build((None, None, 1))
        >>> layer.describe_units()
        ['unit 0: sum', 'unit 1: min']
        """
        forms = self.closed_forms(tolerance)
        formulas = self.formulas(precision)
        return [
            f"unit {index}: {form}"
            if form
            else f"unit {index}: none of Table 1: {formula}"
            for index, (form, formula) in enumerate(zip(forms, formulas))
        ]

    def snap_to_closed_forms(self, tolerance=0.1):
        """Puts the units that nearly compute a form of Table 1 onto it.

        A unit that `closed_forms(tolerance)` names gets that form's exact
        exponents, and coefficients that keep its scale (see
        `keras_laf.aggregations.laf.closed_forms.snap_closed_forms`); the other
        units are unchanged. The layers after LAF see each snapped unit
        shifted by an offset and slightly reshaped, so train on for an epoch
        or two after the snap, as `keras_laf.callbacks.SnapToClosedForms`
        does: a form that is exact keeps what it computes on sets of any
        size.

        Args:
            tolerance: float in (0, 1). As in `closed_forms`. Defaults to
                `0.1`.

        Returns:
            A list of `(unit, form, scale)`, one per snapped unit.

        Example:

        >>> layer = LAF(2, preset="closed_forms")
        >>> layer.build((None, None, 1))
        >>> # Unit 0 nearly a count, unit 1 (sum x)^0.5 none of Table 1.
        >>> exponents = np.array([[1.0, 0.5], [0.03, 1.0], [0.0, 0.0],
        ...                       [0.0, 0.0], [0.01, 0.0], [0.0, 0.0],
        ...                       [0.0, 0.0], [0.0, 0.0]])
        >>> coefficients = np.array([[1.0, 1.0], [0.0, 0.0],
        ...                          [1.0, 1.0], [0.0, 0.0]])
        >>> layer.set_weights([exponents, coefficients])
        >>> [(unit, form) for unit, form, _ in layer.snap_to_closed_forms()]
        [(0, 'count')]
        >>> layer.closed_forms()
        ['count', None]
        """
        self._check_built("snap_to_closed_forms()")
        exponents, coefficients, snapped = snap_closed_forms(
            ops.convert_to_numpy(self.exponents),
            ops.convert_to_numpy(self.coefficients),
            tolerance,
        )
        self.exponents.assign(exponents)
        self.coefficients.assign(coefficients)
        return snapped

    def _check_built(self, method):
        if not self.built:
            raise ValueError(
                f"{method} needs the layer's weights: build or call the "
                "layer first."
            )

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "epsilon": self.epsilon,
            "preset": self.preset,
            "output_bound": self.output_bound,
            "exponent_initializer": keras.initializers.serialize(
                self.exponent_initializer
            ),
            "coefficient_initializer": keras.initializers.serialize(
                self.coefficient_initializer
            ),
            "exponent_constraint": keras.constraints.serialize(
                self.exponent_constraint
            ),
            "coefficient_constraint": keras.constraints.serialize(
                self.coefficient_constraint
            ),
            "exponent_regularizer": keras.regularizers.serialize(
                self.exponent_regularizer
            ),
            "coefficient_regularizer": keras.regularizers.serialize(
                self.coefficient_regularizer
            ),
        }

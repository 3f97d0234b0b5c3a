"""Starting parameters of LAF units.

`AnchoredLAF` is the start of `keras_laf.LAF`'s presets (see
`keras_laf.presets`): most units start at random exponents with a positive
denominator, and every second or third unit starts as an aggregator of
Table 1 of the paper (max, min, mean and, for pooling, the second moment):
random units do not reach the extremes in training, and an exact mean
needs six exponents and coefficients to land on 0 or 1 together.
"""

import keras
import numpy as np
from keras import ops

from keras_laf.aggregations.laf.closed_forms import ClosedForm
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import check_positive_number
from keras_laf.core.validation import check_seed

_PARTS = {"exponents": 8, "coefficients": 4}


@keras.saving.register_keras_serializable(package="keras_laf")
class AnchoredLAF(keras.initializers.Initializer):
    """Initializes LAF units: random units with max, min and mean anchors.

    Unit k is an anchor when `(k + 1) % anchor_every == 0`: the anchors take
    the aggregators of `anchors` in turn (by default the maximum, the
    minimum and the mean of Table 1). The first units can start as other
    forms, `leading_anchors`, in place of what they would otherwise be.
    The other units are random: exponents uniform in [0, 1] as in the
    paper, numerator coefficients alpha, beta normal with standard
    deviation `numerator_stddev` (0.01 as in the paper by default), and
    denominator coefficients gamma, delta uniform in [0.5, 1], so that
    every denominator starts positive (and stays so under
    `keras_laf.constraints.PositiveDenominator`).

    Used in pairs, one for the exponents and one for the coefficients, by
    `keras_laf.LAF`; the anchors sit at the same units in both.

    Args:
        part: `"exponents"` (shape `(8, units)`) or `"coefficients"` (shape
            `(4, units)`).
        anchors: list of closed forms (names or dicts accepted by
            `keras_laf.closed_form`) the anchor units cycle through.
            Defaults to `("max", "min", "mean")`. An empty list means no
            anchors.
        anchor_every: int. Every `anchor_every`-th unit is an anchor.
            Defaults to `3`.
        leading_anchors: list of closed forms that units 0, 1, ... start
            as, whatever they would be otherwise, e.g.
            `[{"name": "count", "scale": 0.01}]`, in layers of more units
            than these forms (a layer of fewer units has no room for
            them besides what it learns). Defaults to `()`.
        numerator_stddev: float > 0. Standard deviation of the random
            units' alpha and beta. The paper's 0.01 starts them near 0, so
            that the data decides which terms a unit keeps; about 1 starts
            them as live features of the set. Defaults to `0.01`.
        seed: optional int seed of the random units.

    Example:

    >>> exponents = AnchoredLAF("exponents", seed=0)((8, 3))
    >>> keras.ops.convert_to_numpy(exponents)[:2, 2].tolist()  # unit 3: max
    [0.019999999552965164, 50.0]
    """

    def __init__(
        self,
        part,
        anchors=("max", "min", "mean"),
        anchor_every=3,
        leading_anchors=(),
        numerator_stddev=0.01,
        seed=None,
    ):
        if part not in _PARTS:
            raise ValueError(
                "`part` must be 'exponents' or 'coefficients'. "
                f"Received: part={part!r}"
            )
        for argument, forms in (
            ("anchors", anchors),
            ("leading_anchors", leading_anchors),
        ):
            if isinstance(forms, (str, dict)):
                raise ValueError(
                    f"`{argument}` must be a list of closed forms, e.g. "
                    f"['max', 'min']. Received: {argument}={forms!r}"
                )
        self.part = part
        self.anchors = list(anchors)
        self.leading_anchors = list(leading_anchors)
        # Validates the forms now rather than at the first call.
        self._anchor_table, self._leading_table = (
            ClosedForm(forms, part=part).table() if forms else None
            for forms in (self.anchors, self.leading_anchors)
        )
        self.anchor_every = check_positive_int("anchor_every", anchor_every)
        self.numerator_stddev = check_positive_number(
            "numerator_stddev", numerator_stddev, allow_inf=True
        )
        self.seed = check_seed("seed", seed)

    def _random_part(self, units, dtype):
        if self.part == "exponents":
            return keras.initializers.RandomUniform(0.0, 1.0, seed=self.seed)(
                (8, units), dtype=dtype
            )
        numerator = keras.initializers.RandomNormal(
            0.0, self.numerator_stddev, seed=self.seed
        )((2, units), dtype=dtype)
        denominator = keras.initializers.RandomUniform(
            0.5, 1.0, seed=self.seed
        )((2, units), dtype=dtype)
        return ops.concatenate([numerator, denominator], axis=0)

    def leading_units(self, units):
        """How many of `units` the leading anchors start: all of them, or
        none in a layer without room for more."""
        leading = len(self.leading_anchors)
        return leading if units > leading else 0

    def anchor_units(self, units):
        """Indices of the units `anchors` start, among `units`, in order
        (after the leading anchors)."""
        if self._anchor_table is None:
            return []
        first = self.leading_units(units)
        return [
            unit
            for unit in range(self.anchor_every - 1, units, self.anchor_every)
            if unit >= first
        ]

    def __call__(self, shape, dtype=None):
        rows = _PARTS[self.part]
        if len(shape) != 2 or shape[0] != rows:
            raise ValueError(
                f"AnchoredLAF initializes {self.part} of shape ({rows}, "
                f"units). Received: shape={shape}"
            )
        units = shape[1]
        values = self._random_part(units, dtype)
        # (rows, units): the anchor's parameters at anchor units, 0 elsewhere.
        table = np.zeros((rows, units), "float32")
        is_anchor = np.zeros((units,), bool)
        for position, unit in enumerate(self.anchor_units(units)):
            table[:, unit] = self._anchor_table[:, position % len(self.anchors)]
            is_anchor[unit] = True
        leading = self.leading_units(units)
        if leading:
            table[:, :leading] = self._leading_table
            is_anchor[:leading] = True
        if not is_anchor.any():
            return values
        return ops.where(
            is_anchor, ops.convert_to_tensor(table, dtype=dtype), values
        )

    def get_config(self):
        return {
            "part": self.part,
            "anchors": self.anchors,
            "anchor_every": self.anchor_every,
            "leading_anchors": self.leading_anchors,
            "numerator_stddev": self.numerator_stddev,
            "seed": self.seed,
        }

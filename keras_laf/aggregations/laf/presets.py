"""Presets of `keras_laf.LAF`: how its units start and are constrained.

A preset is a prior on what the units should become, chosen by purpose:

- `"pooling"` (the default): a pooling inside a deeper model (point
  clouds, Set Transformer heads, graph readouts) or a target that is not a
  closed form (a median, a kurtosis). PNA's aggregators as anchors at
  every other unit (the maximum, the minimum, the mean and the second
  moment, from which the next layer gets the standard deviation), random
  units between them, denominators kept positive, nothing pulling the
  units onto closed forms, and the numerator's outer exponents at most 1,
  so that no unit grows faster than the set: counts and sums hold at
  every size, and no unit runs away on sets larger than those it was
  trained on.
- `"closed_forms"`: targets that are closed forms (a count, a sum, a mean,
  their ratios) and must hold on sets much larger than the training sets.
  A small count (0.01 times the number of elements) at the first unit and
  a small sum at the second, max, min and mean anchors at every third
  unit, the numerator's outer exponents at most 1, and after every step
  the exponents near 0 or 1 and the coefficients the data does not need
  are pulled onto them, so that units settle on exact closed forms that
  extrapolate.
- `"paper"`: the paper's scheme exactly, exponents uniform in [0, 1],
  coefficients normal with standard deviation 0.01, exponents projected
  onto [0, 100].
"""

import keras

from keras_laf.aggregations.laf.constraints import BoundedNonNeg
from keras_laf.aggregations.laf.constraints import ClosedFormExponents
from keras_laf.aggregations.laf.constraints import PositiveDenominator
from keras_laf.aggregations.laf.initializers import AnchoredLAF

DEFAULT_PRESET = "pooling"
# Preset name -> what it is for, in one line (the README's table).
PRESETS = {
    "pooling": "a pooling inside a model, or a target that is no closed form",
    "closed_forms": "closed-form targets (count, sum, mean) that must hold "
    "on larger sets",
    "paper": "the paper's initialisation and projection, for comparisons",
}
# The closed-forms preset's pull of the coefficients towards 0 per step
# (`PositiveDenominator(pull=...)`), chosen by a seed study on the
# paper's integer targets.
COEFFICIENT_PULL = 2e-4
# The closed-forms preset's first units: a count and a sum, each at this
# fraction, from which a head extrapolates counts and sums linearly.
# Without the count, units that only approach a count, or 1/count inverted
# by a nonlinear head, ran away on larger sets; without the sum, a head of
# counts and means made the sum as their product, which its ReLU layers
# did only over the sizes it saw (MNIST's sum: 4 of 10 seeds past twice
# the paper's error without it, none of 15 with it; MNIST's count, the
# price: 2 of 5 seeds past its bound with it, none without). Small, so
# that the coefficient pull turns them off where the target does not grow
# with the set; larger and smaller fractions, and a sum in place of the
# count, extrapolated worse.
LEADING_ANCHORS = (
    {"name": "count", "scale": 0.01},
    {"name": "sum", "scale": 0.01},
)
# The pooling preset's anchors, at every other unit: PNA's mean, max, min
# and, for its standard deviation, the second moment (Corso et al.,
# "Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020).
POOLING_ANCHORS = ("max", "min", "mean", {"name": "moment", "k": 2})
# Terms whose inner exponent is at least this (max/min-like, as the
# anchors) keep their degree (`ClosedFormExponents(anchor_inner=...)`),
# chosen with the same seed study.
ANCHOR_INNER = 5.0
# Both presets clip the numerator's outer exponents (a, c) to at most 1
# (`ClosedFormExponents(max_numerator_outer=...)`): no unit's numerator
# grows faster than the set, so a unit fitted on small sets as a power of
# a sum cannot run away on larger ones, while counts and sums, which grow
# as fast as the set, stay exact at every size.
MAX_NUMERATOR_OUTER = 1.0


def standardize_preset(preset):
    """Returns the preset's name, checked.

    Args:
        preset: str. A name of `PRESETS`.

    Raises:
        ValueError: `preset` names no preset.
    """
    if isinstance(preset, str) and preset in PRESETS:
        return preset
    raise ValueError(
        f"`preset` must be one of {list(PRESETS)}. Received: preset={preset!r}"
    )


def preset_arguments(preset):
    """The initializers and constraints of a preset, as `LAF` arguments.

    Args:
        preset: str. A name of `PRESETS`.

    Returns:
        A dict with fresh `exponent_initializer`, `coefficient_initializer`,
        `exponent_constraint` and `coefficient_constraint` (None for no
        constraint), and the `output_bound` (inf for none).

    Example:

    >>> arguments = preset_arguments("closed_forms")
    >>> arguments["exponent_constraint"].pull
    0.0005
    >>> preset_arguments("pooling")["exponent_constraint"].pull
    0.0
    """
    preset = standardize_preset(preset)
    if preset == "paper":
        return {
            "exponent_initializer": keras.initializers.RandomUniform(0.0, 1.0),
            "coefficient_initializer": keras.initializers.RandomNormal(
                0.0, 0.01
            ),
            "exponent_constraint": BoundedNonNeg(),
            "coefficient_constraint": None,
            "output_bound": float("inf"),
        }
    if preset == "closed_forms":
        return {
            "exponent_initializer": AnchoredLAF(
                "exponents", leading_anchors=LEADING_ANCHORS
            ),
            "coefficient_initializer": AnchoredLAF(
                "coefficients", leading_anchors=LEADING_ANCHORS
            ),
            "exponent_constraint": ClosedFormExponents(
                anchor_inner=ANCHOR_INNER,
                max_numerator_outer=MAX_NUMERATOR_OUTER,
            ),
            "coefficient_constraint": PositiveDenominator(
                pull=COEFFICIENT_PULL
            ),
            "output_bound": float("inf"),
        }
    return {
        "exponent_initializer": AnchoredLAF(
            "exponents", anchors=POOLING_ANCHORS, anchor_every=2
        ),
        "coefficient_initializer": AnchoredLAF(
            "coefficients", anchors=POOLING_ANCHORS, anchor_every=2
        ),
        "exponent_constraint": ClosedFormExponents(
            pull=0.0,
            anchor_inner=ANCHOR_INNER,
            max_numerator_outer=MAX_NUMERATOR_OUTER,
        ),
        "coefficient_constraint": PositiveDenominator(),
        "output_bound": float("inf"),
    }

"""
Title: LAF in five minutes
Author: keras-laf contributors
Date created: 2026-11-26
Last modified: 2026-11-26
Description: The LAF formula, its closed forms, pictures of LAF functions,
    and the `LAF` layer in Sequential and functional models.
"""

# ruff: noqa: E402

"""
## Introduction

A model of sets (point clouds, bags of words, the neighbours of a node)
must give the same answer whatever the order of the elements. The usual
recipe is DeepSets: apply a network to every element, **aggregate** the
results with a function that ignores order, then apply a network to the
aggregate. The aggregation is usually fixed by hand: sum, mean or max. A
fixed choice is a bet on the task: the mean cannot count, the sum cannot
tell a large set of small values from a small set of large values, the max
ignores everything but one element.

LAF (Learnable Aggregation Functions, Pellegrini et al., IJCAI 2021) learns
the aggregation instead. For a set x = {x_1, ..., x_n} of values in [0, 1],
one LAF unit computes

```
L_{a,b}(x) = (sum_i x_i^b)^a

LAF(x) = (alpha L_{a,b}(x) + beta L_{c,d}(1 - x))
         / (gamma L_{e,f}(x) + delta L_{g,h}(1 - x))
```

with eight learned exponents a..h >= 0 and four learned coefficients
alpha..delta. The inner exponent picks what is summed (b = 0 counts the
elements, b = 1 sums them, a large b lets the largest element dominate),
the outer exponent undoes it (a = 1/b turns a sum of x^50 into an
approximate maximum), the terms in 1 - x give minima, and the ratio gives
means, moments and ratios of those.

This tutorial shows:

1. that the aggregators of Table 1 of the paper are LAF units, evaluated
   next to NumPy;
2. what random LAF units look like on sets of two elements (the paper's
   Figure 1);
3. how to put the `LAF` layer into Sequential and functional models;
4. how to read what a trained unit computes with `formulas()`.
"""

"""
## Setup

Every tutorial of keras-laf takes `--quick` (a few seconds, used by the
tests) and `--output DIR` (where the figures go). The figures need
matplotlib (`pip install matplotlib`, or the `experiments` extra).
"""

import argparse
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import matplotlib
import numpy as np
import tensorflow as tf

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import matplotlib.ticker

import keras_laf
from keras_laf import LAF
from keras_laf import PerElement

NAME = "laf_in_five_minutes"
parser = argparse.ArgumentParser(
    description=__doc__.split("\n")[1].removeprefix("Title: ")
)
parser.add_argument(
    "--quick", action="store_true", help="a run of a few seconds (tests)"
)
parser.add_argument(
    "--output",
    default=str(pathlib.Path(__file__).resolve().parent / "output" / NAME),
    help="directory of the figures (default: %(default)s)",
)
args = parser.parse_args()
output_dir = pathlib.Path(args.output)
output_dir.mkdir(parents=True, exist_ok=True)

# The training of the last section: number of sets and epochs.
NUM_TRAIN_SETS, EPOCHS = (256, 3) if args.quick else (4_000, 30)

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)

"""
## The formula in NumPy

Here is LAF written out for one set and one unit, straight from the
formula. NumPy takes `0 ** 0` to be 1, as the package does.
"""


def laf_numpy(x, exponents, coefficients):
    """One LAF unit applied to a 1-D array `x` of values in [0, 1]."""
    a, b, c, d, e, f, g, h = exponents
    alpha, beta, gamma, delta = coefficients

    def power_sum(values, outer, inner):  # L_{outer,inner}
        return np.sum(values**inner) ** outer

    numerator = alpha * power_sum(x, a, b) + beta * power_sum(1 - x, c, d)
    denominator = gamma * power_sum(x, e, f) + delta * power_sum(1 - x, g, h)
    return numerator / denominator


"""
## Table 1: the usual aggregators are LAF units

`keras_laf.closed_form(name, **parameters)` returns the exponents and
coefficients with which one unit computes an aggregator of Table 1 of the
paper. (Two printed rows of that table have a wrong sign; the package
uses the corrected ones, see the docstring of
`keras_laf.aggregations.laf.closed_forms`.)
`LAF.from_closed_forms` builds a layer whose units *start* as those
aggregators; training is then free to move them.

We evaluate every aggregator on one set of 20 numbers in three ways: the
exact aggregator in NumPy, the LAF formula in NumPy with the Table-1
parameters, and the `LAF` layer. The two LAF columns agree; the exact
column differs only for the aggregators built on the maximum. LAF
approximates max(x) by (sum x^r)^(1/r) with r = 50, which overestimates the
maximum of n elements by at most a factor n^(1/r) (6.2% for n = 20, less
when one element stands out). The minimum is computed as 1 - max(1 - x),
so it is *under*estimated by the error of that maximum, and the ratios
min/max and max/min inherit both errors. A larger r (`{"name": "max",
"r": 100}`) tightens the approximation.
"""

x = rng.uniform(0.1, 0.9, size=20).astype("float32")
exact = {
    "constant": 1.0,
    "count": len(x),
    "sum": x.sum(),
    "mean": x.mean(),
    "moment": np.mean(x**2),  # k = 2
    "moment_power": np.mean(x**2) ** 2,  # k = 2, l = 2
    "max": x.max(),
    "min": x.min(),
    "min/max": x.min() / x.max(),
    "max/min": x.max() / x.min(),
}
names = list(keras_laf.CLOSED_FORM_NAMES)
# One layer, one unit per aggregator. `flatten=False` keeps the output
# (sets, features, units) instead of (sets, features * units).
table_layer = LAF.from_closed_forms(names, flatten=False)
# A batch of one set of 20 elements with one feature: (1, 20, 1).
layer_values = np.asarray(table_layer(x[None, :, None]))[0, 0]

print(f"{'aggregator':>13} {'exact':>10} {'NumPy LAF':>10} {'LAF layer':>10}")
for name, layer_value in zip(names, layer_values):
    exponents, coefficients = keras_laf.closed_form(name)
    formula_value = laf_numpy(x.astype("float64"), exponents, coefficients)
    print(
        f"{name:>13} {exact[name]:10.4f} {formula_value:10.4f} "
        f"{layer_value:10.4f}"
    )

"""
The same function is available without a layer, for parameters you hold
yourself: `keras_laf.laf(inputs, exponents, coefficients)` with exponents
of shape `(8, units)` and coefficients of shape `(4, units)`. Its output is
`(num_sets, features, units)`. Here, the third moment of two sets of
different sizes, given as one ragged batch:
"""

exponents, coefficients = keras_laf.closed_form("moment", k=3)
sets = [np.array([0.2, 0.4, 0.9]), np.array([0.5, 0.5])]
ragged = tf.ragged.constant(
    [s[:, None] for s in sets], ragged_rank=1, dtype="float32"
)
third_moments = keras_laf.laf(ragged, exponents[:, None], coefficients[:, None])
print("third moments:", np.asarray(third_moments)[:, 0, 0])
print("NumPy:        ", [float(np.mean(s**3)) for s in sets])

"""
## What LAF functions look like (the paper's Figure 1)

A set of two elements {x1, x2} is a point of the unit square, so a LAF unit
on such sets is a function of (x1, x2) that we can draw as a heat map. It
is symmetric about the diagonal x1 = x2, as every function of a *set* must
be.

The top row shows four units of Table 1. The two rows below show units with
random parameters: exponents uniform in [0, 2], numerator coefficients
standard normal and denominator coefficients uniform in [0.1, 1]. (The
layer's default preset, `"pooling"`, draws exponents in [0, 1], numerator
coefficients from N(0, 0.01^2) and denominator coefficients in [0.5, 1],
and makes every other unit a maximum, a minimum, a mean or a second
moment; the scale of the coefficients cancels in the ratio. The
denominator stays positive, as the layer keeps it by default: a
denominator that changes sign has a pole along a curve of the square,
which would swamp the picture.)
"""

grid = np.linspace(0.0, 1.0, 101, dtype="float32")
x1, x2 = np.meshgrid(grid, grid)
# Every point of the grid is one set of two elements of one feature:
# (101 * 101, 2, 1).
pairs = np.stack([x1.ravel(), x2.ravel()], axis=1)[:, :, None]

table_forms = ["sum", "mean", "max", "min"]
table_units = LAF.from_closed_forms(table_forms)
num_random = 8
random_units = LAF(units=num_random)
random_units.build(pairs.shape)
random_units.exponents.assign(rng.uniform(0, 2, (8, num_random)))
random_units.coefficients.assign(
    np.concatenate(
        [
            rng.normal(size=(2, num_random)),  # alpha, beta
            rng.uniform(0.1, 1.0, size=(2, num_random)),  # gamma, delta
        ]
    )
)

surfaces = np.concatenate(
    [np.asarray(table_units(pairs)), np.asarray(random_units(pairs))], axis=1
).reshape(len(grid), len(grid), -1)
titles = table_forms + [f"random unit {k + 1}" for k in range(num_random)]

figure, axes = plt.subplots(
    3, 4, figsize=(15, 10), layout="constrained", sharey=True
)
for index, axis in enumerate(axes.flat):
    surface = surfaces[..., index]
    image = axis.imshow(
        surface, origin="lower", extent=(0, 1, 0, 1), cmap="viridis"
    )
    axis.contour(grid, grid, surface, levels=8, colors="white", linewidths=0.5)
    axis.set_title(titles[index])
    axis.set_xlabel("x1")
    if index % 4 == 0:
        axis.set_ylabel("x2")
    # Four short tick labels, so that the bar's labels clear the next
    # panel.
    colorbar = figure.colorbar(image, ax=axis, shrink=0.8, format="%.2g")
    colorbar.locator = matplotlib.ticker.MaxNLocator(4)
figure.suptitle("LAF units on sets of two elements {x1, x2}")
path = output_dir / "laf_functions_on_pairs.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## `LAF` in a Sequential model: padded sets and masks

`LAF` takes a batch of sets `(batch, set_size, features)` and returns
`(batch, features * units)`: every unit aggregates every feature of every
set. Its inputs must lie in [0, 1]: a value outside is an error in an
eager call, and makes its set's output NaN inside `fit`. The paper
therefore puts a **sigmoid** before LAF, here the activation of the last
`Dense` layer applied to each element.

Sets of different sizes are padded to a common size. Keras marks the padded
positions with a *mask*: the `Masking` layer below marks every element
whose features all equal 0 as padding, `Dense` passes the mask on, and
`LAF` leaves the masked elements out entirely. Without the mask the
padding would count as elements of value `sigmoid(bias)`, changing every
count, mean and minimum.
"""

sequential = keras.Sequential(
    [
        keras.Input(shape=(None, 3)),
        keras.layers.Masking(mask_value=0.0),
        keras.layers.Dense(8, activation="sigmoid"),
        LAF(units=4),
        keras.layers.Dense(1),
    ],
    name="sequential_laf",
)
sequential.summary()

one_set = rng.uniform(0.1, 1.0, size=(1, 3, 3)).astype("float32")
padded = np.concatenate([one_set, np.zeros((1, 5, 3), "float32")], axis=1)
print("the set alone:         ", float(sequential(one_set)[0, 0]))
print("padded with 5 zeros:   ", float(sequential(padded)[0, 0]))

"""
The mask can also be given explicitly, `LAF(...)(values, mask=mask)` with
a boolean `(batch, set_size)` tensor, True for real elements.

## `LAF` in a functional model: ragged sets

A `tf.RaggedTensor` stores sets of different sizes without padding. Keras
layers such as `Dense` do not accept ragged tensors, so
`keras_laf.PerElement` applies a layer to the elements of every set and
returns a ragged tensor again. The aggregation then takes the ragged batch
directly.
"""

set_input = keras.Input(shape=(None, 3), ragged=True, name="sets")
elements = PerElement(keras.layers.Dense(8, activation="sigmoid"), name="phi")(
    set_input
)
aggregated = LAF(units=4, name="laf")(elements)
prediction = keras.layers.Dense(1, name="rho")(aggregated)
functional = keras.Model(set_input, prediction, name="functional_laf")
functional.summary()

batch = tf.ragged.constant(
    [rng.random((2, 3)), rng.random((5, 3))], ragged_rank=1, dtype="float32"
)
print("two sets of 2 and 5 elements ->", functional(batch).shape)

"""
## Reading what a unit has learned: `formulas()`

We train a single LAF unit, with nothing around it, to compute the mean of
sets of 2 to 10 numbers drawn uniformly from [0, 1]. The mean is a closed
form of Table 1, so the unit uses `preset="closed_forms"`: besides keeping
the exponents non-negative after each step (the projected gradient
descent of the paper), its constraints pull exponents near 0 or 1 onto
them, where the unit is an exact mean that holds on any set size.
"""

sizes = rng.integers(2, 11, size=NUM_TRAIN_SETS)
train_sets = [rng.random(size).astype("float32") for size in sizes]
train_x = tf.ragged.constant(
    [s[:, None] for s in train_sets], ragged_rank=1, dtype="float32"
)
train_y = np.array([s.mean() for s in train_sets], "float32")[:, None]

unit_input = keras.Input(shape=(None, 1), ragged=True)
mean_unit = LAF(units=1, preset="closed_forms", name="mean_unit")
mean_model = keras.Model(unit_input, mean_unit(unit_input))
mean_model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mae")
history = mean_model.fit(
    train_x, train_y, batch_size=64, epochs=EPOCHS, verbose=2
)

"""
`formulas()` prints each unit in the style of the paper's appendix, as
`(alpha (sum x^b)^a + beta (sum (1-x)^d)^c) / (gamma (sum x^f)^e + delta
(sum (1-x)^h)^g)`. Compare it with the Table-1 mean, whose numerator is the
sum (a = b = 1) and whose denominator is the count (e = 1, f = 0):
"""

table_mean = LAF.from_closed_forms(["mean"])
table_mean.build((None, None, 1))  # formulas() reads the weights
print("learned: ", mean_unit.formulas()[0])
print("Table 1: ", table_mean.formulas()[0])

"""
The learned formula need not look like the Table-1 one: many settings of
the twelve parameters give nearly the same function on the training sets
(scaling all four coefficients, for one, changes nothing). What matters is
how the unit behaves on sets *larger* than those it was trained on:
"""

for size in (5, 50, 500):
    test_sets = rng.random((200, size, 1)).astype("float32")
    predicted = np.asarray(mean_model(test_sets))[:, 0]
    error = np.mean(np.abs(predicted - test_sets.mean(axis=(1, 2))))
    print(f"sets of {size:3d} elements: mean absolute error {error:.4f}")

"""
The learned unit also gets its own picture on pairs, next to the exact
mean (x1 + x2) / 2.
"""

learned = np.asarray(mean_model(pairs)).reshape(len(grid), len(grid))
figure, axes = plt.subplots(1, 2, figsize=(9, 4), layout="constrained")
for axis, surface, title in (
    (axes[0], learned, "learned LAF unit"),
    (axes[1], (x1 + x2) / 2, "mean (x1 + x2) / 2"),
):
    image = axis.imshow(
        surface, origin="lower", extent=(0, 1, 0, 1), vmin=0, vmax=1
    )
    axis.contour(grid, grid, surface, levels=10, colors="white", linewidths=0.5)
    axis.set_title(title)
    axis.set_xlabel("x1")
    axis.set_ylabel("x2")
figure.colorbar(image, ax=axes, shrink=0.8)
path = output_dir / "learned_mean_unit.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## Where next

- `learning_aggregators.py`: LAF against fixed aggregators on sets of
  digits, and how each generalises to larger sets.
- `ragged_sets.py`: ragged batches, masks and segment ids in a `tf.data`
  pipeline.
- `set_transformer_unique_sum.py` and `point_clouds.py`: LAF as the pooling
  of a Set Transformer and of a point-cloud classifier.
"""

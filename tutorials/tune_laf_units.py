"""
Title: Tuning the number of LAF units with KerasTuner
Author: keras-laf contributors
Date created: 2026-11-26
Last modified: 2026-11-26
Description: How many LAF units does a model need? Search it with the
    keras-laf hypermodels and KerasTuner, restarts included.
"""

# ruff: noqa: E402

"""
## Introduction

A `LAF` layer has one argument that matters more than the others: `units`,
the number of learnable aggregators it computes side by side. One unit
already covers sum, mean, max, min, count and many more as special cases;
more units let the next layer combine several aggregates (a maximum minus a
minimum, a variance) and give the optimiser more than one chance to find a
good one. The LAF paper (Pellegrini et al., "Learning Aggregation
Functions", IJCAI 2021) found that a single unit learns some targets but
is unstable across restarts, while several units (6 to 9) learn them
reliably. Its models use 9.

For your own data, that question is one call away. `keras_laf.models`
has KerasTuner hypermodels of its set models, `DeepSetsHyperModel` and
`SetTransformerHyperModel`, in which three things are hyperparameters:

- `"laf_units"`: the LAF units, an integer from 1 to 21, 9 by default;
- `"learning_rate"`: Adam's learning rate, one of 1e-2, 1e-3 and 1e-4,
  1e-3 by default;
- `"aggregation"`: the aggregation, `"laf"` by default, chosen among those
  you allow; `"laf_units"` only exists when it is `"laf"`. It is named
  like the `laf_units` argument of the model builders.

This tutorial:

1. builds the hypermodel and shows its defaults and how to override them;
2. runs a grid search over the number of units, each value trained from
   several random starts, and plots the validation MAE against the units;
3. tests the best model on sets up to five times larger than in training;
4. searches units, learning rate and aggregation together.
"""

"""
## Setup

The sets and their targets are a few lines of NumPy, below: the same
sets `keras-laf scalars` and `keras-laf units` train on. You need
KerasTuner and matplotlib: `pip install "keras-laf[tuner]" matplotlib`
(or the `experiments` extra, which has both).

Every tutorial of keras-laf takes `--quick` (a few seconds, used by the
tests) and `--output DIR` (where the figures go). KerasTuner also writes
its trials to a `tuner` folder there.
"""

import argparse
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import keras_tuner as kt
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from keras_laf.datasets import ragged_set_dataset
from keras_laf.datasets import to_padded_batches
from keras_laf.models.hypermodels import DeepSetsHyperModel

NAME = "tune_laf_units"
parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
parser.add_argument(
    "--quick", action="store_true", help="a run of a few seconds (tests)"
)
parser.add_argument(
    "--output",
    default=str(pathlib.Path(__file__).resolve().parent / "output" / NAME),
    help="directory of the figures (default: tutorials/output/%(default)s)",
)
args = parser.parse_args()
output_dir = pathlib.Path(args.output)
output_dir.mkdir(parents=True, exist_ok=True)
tuner_dir = output_dir / "tuner"

# Sets for training, validation and each test size; epochs of each run.
NUM_TRAIN_SETS, NUM_VAL_SETS, NUM_TEST_SETS, EPOCHS = (
    (256, 128, 128, 1) if args.quick else (5_000, 1_000, 1_000, 20)
)
# The units tried, the restarts of each, the trials of the wider search.
MIN_UNITS, MAX_UNITS, UNITS_STEP, RESTARTS, WIDE_TRIALS = (
    (1, 9, 4, 2, 2) if args.quick else (1, 21, 2, 3, 12)
)
TEST_SIZES = (10, 50) if args.quick else tuple(range(5, 51, 5))
BATCH_SIZE = 64

keras.utils.set_random_seed(0)

"""
## The data: the spread of a set of digits

Each training set has 2 to 10 digits drawn uniformly from 0..9 and is
labelled by its largest minus its smallest element. That target combines
two aggregates, a max and a min, so it is harder to learn than either
alone: a target where the number of units is likely to matter. The
validation sets are drawn the same way with another seed; the test sets
(below) are larger.
"""

TARGET = "max_minus_min"


def training_sets(num_sets, seed, max_size=10):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_size, size=num_sets, endpoint=True)
    digits = rng.integers(0, 10, size=(num_sets, max_size))
    return [row[:size].astype("int32") for row, size in zip(digits, sizes)]


def spreads(sets):
    return np.array([digits.max() - digits.min() for digits in sets], "float32")


def padded_batches(sets, batch_size, shuffle=False, seed=None):
    # Ragged batches of the sets with their labels, then padded with their
    # mask: the models' inputs on every backend.
    dataset = ragged_set_dataset(
        sets, spreads(sets), batch_size, shuffle=shuffle, seed=seed
    )
    return to_padded_batches(dataset)


train_sets = training_sets(NUM_TRAIN_SETS, seed=0)
train = padded_batches(train_sets, BATCH_SIZE, shuffle=True, seed=0)
validation = padded_batches(training_sets(NUM_VAL_SETS, seed=1), BATCH_SIZE)
print("A set and its label:", train_sets[0], spreads(train_sets[:1])[0])

"""
## The hypermodel and its defaults

`DeepSetsHyperModel` takes what the model needs and does not tune (here,
digits from a vocabulary of 10), the ranges of the hyperparameters, and,
in `model_kwargs`, any other argument of `keras_laf.models.deep_sets`.
With `phi_units=()` the model is the paper's: an embedding of each digit,
a sigmoid to bring it into [0, 1], LAF, and a linear output.

`build(hp)` returns a model compiled with Adam and the MAE loss. With an
empty `HyperParameters` every hyperparameter takes its default.
"""

MODEL_KWARGS = {"phi_units": (), "embedding_dim": 10}
hypermodel = DeepSetsHyperModel(vocabulary_size=10, model_kwargs=MODEL_KWARGS)
hp = kt.HyperParameters()
model = hypermodel.build(hp)
print("Defaults:", hp.values)
print("LAF units of the model:", model.get_layer("aggregation").units)

"""
A hyperparameter declared before `build` wins over the hypermodel's
range. `hp.Fixed` is the way to pin one down, here or in a tuner (pass
`hyperparameters=hp` to it): the other hyperparameters are still searched.
"""

hp = kt.HyperParameters()
hp.Fixed("laf_units", 3)
model = hypermodel.build(hp)
print("With hp.Fixed('laf_units', 3):", hp.values)

"""
The constructor changes ranges and defaults. Every range is checked at
once, with a `ValueError` that names the bad value.
"""

try:
    DeepSetsHyperModel(vocabulary_size=10, min_units=8, max_units=4)
except ValueError as error:
    print("ValueError:", error)

"""
## A grid search over the number of units

The question is about units, so we search only them: the learning rate is
fixed to 1e-3 through the constructor (a single choice), the aggregation
is LAF (the default), and `kt.GridSearch` tries every number of units in
the range once.

The paper's point is about restarts: with `executions_per_trial`, every
trial trains its model several times from new random weights. KerasTuner
scores a trial by the mean over its executions; to see each restart, we
override `HyperModel.fit`, which receives the trial's hyperparameters, and
record the best validation MAE of every training run.

With a few small batches, eager execution is faster than tracing a graph
for every model; `compile_kwargs` passes that to `Model.compile`. On real
data sizes, leave it out.
"""

runs = []  # (units, best validation MAE of one restart)


class RecordingHyperModel(DeepSetsHyperModel):
    def fit(self, hp, model, *args, **kwargs):
        history = model.fit(*args, **kwargs)
        runs.append((hp.get("laf_units"), min(history.history["val_mae"])))
        return history


units_hypermodel = RecordingHyperModel(
    vocabulary_size=10,
    min_units=MIN_UNITS,
    max_units=MAX_UNITS,
    units_step=UNITS_STEP,
    learning_rates=(1e-3,),
    model_kwargs=MODEL_KWARGS,
    compile_kwargs={"run_eagerly": True} if args.quick else None,
)
tuner = kt.GridSearch(
    units_hypermodel,
    objective="val_loss",
    executions_per_trial=RESTARTS,
    directory=tuner_dir,
    project_name="units",
    overwrite=True,
    seed=0,
)
tuner.search_space_summary()
tuner.search(train, validation_data=validation, epochs=EPOCHS, verbose=0)

"""
## Validation MAE against the number of units

Each dot is one restart; the line joins the medians. Look for two things:
where the error stops falling (more units than that buy nothing) and how
far apart the restarts of one setting are (a wide spread means that
setting is unreliable, even if its best restart looks good).
"""

units_values = sorted({units for units, _ in runs})
errors_by_units = {
    units: [error for value, error in runs if value == units]
    for units in units_values
}
for units in units_values:
    errors = errors_by_units[units]
    print(
        f"units={units:2d}  validation MAE: median {np.median(errors):.3f}, "
        f"restarts {', '.join(f'{error:.3f}' for error in errors)}"
    )

figure, axis = plt.subplots(figsize=(6, 4), layout="constrained")
axis.scatter(
    [units for units, _ in runs],
    [error for _, error in runs],
    alpha=0.6,
    label="one restart",
)
axis.plot(
    units_values,
    [np.median(errors_by_units[units]) for units in units_values],
    marker="o",
    color="black",
    label="median",
)
axis.set_xlabel("LAF units")
axis.set_ylabel("best validation MAE")
axis.set_yscale("log")  # a restart that fails can be far off
axis.set_xticks(units_values)
axis.set_title(f"DeepSets with LAF on '{TARGET}'")
axis.legend()
path = output_dir / "val_mae_by_units.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## The best model on larger sets

The tuner keeps the weights of every trial. `get_best_models` rebuilds the
best trial's model and loads them; `get_best_hyperparameters` gives its
hyperparameters, to build and train a fresh model on more data.

LAF is meant to generalise to sets larger than those it was trained on.
The test sets of maximum size M hold 2 to M digits, so up to five times
more than in training at M = 50. Uniform digits would make them dull (50
of them almost always span 0 to 9), so each test set draws its digits
from its own range and weights, as in `learning_aggregators.py`: between
two uniform digits, each digit strictly between them allowed with
probability 1/2, with weights from a flat Dirichlet draw.
"""

best_hp = tuner.get_best_hyperparameters()[0]
best_model = tuner.get_best_models()[0]
print("Best hyperparameters:", best_hp.values)


def diversified_sets(num_sets, max_size, seed):
    # A stream of its own for each M, whichever other sizes are drawn.
    rng = np.random.default_rng([seed, max_size])
    sizes = rng.integers(2, max_size, size=num_sets, endpoint=True)
    ends = rng.integers(0, 10, size=(num_sets, 2))
    low, high = ends.min(axis=1, keepdims=True), ends.max(axis=1, keepdims=True)
    values = np.arange(10)
    between = (values > low) & (values < high)
    allowed = (values == low) | (values == high)
    allowed |= between & (rng.random((num_sets, 10)) < 0.5)
    weights = rng.gamma(1.0, size=(num_sets, 10)) * allowed
    cumulative = np.cumsum(weights, axis=1)
    cumulative /= cumulative[:, -1:]
    uniforms = rng.random((num_sets, max_size))
    # The digit is the number of cumulative weights at or below a uniform
    # draw, so a digit of zero weight is never drawn.
    digits = (cumulative[:, None, :] <= uniforms[:, :, None]).sum(axis=2)
    return [row[:size].astype("int32") for row, size in zip(digits, sizes)]


test_errors = {
    max_size: best_model.evaluate(
        padded_batches(diversified_sets(NUM_TEST_SETS, max_size, seed=1), 256),
        verbose=0,
        return_dict=True,
    )["mae"]
    for max_size in TEST_SIZES
}
for max_size, error in test_errors.items():
    print(f"test MAE on sets of up to {max_size} digits: {error:.3f}")

figure, axis = plt.subplots(figsize=(6, 4), layout="constrained")
axis.plot(list(test_errors), list(test_errors.values()), marker="o")
axis.axvline(10, color="gray", linestyle="--", label="largest training set")
axis.set_xlabel("maximum set size M")
axis.set_ylabel("test MAE")
best_units = best_hp.get("laf_units")
axis.set_title(f"Best model: LAF({best_units}) on '{TARGET}'")
axis.legend()
path = output_dir / "test_mae_by_max_size.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## Units, learning rate and aggregation together

The same hypermodel searches more when given more choices. Here the
aggregation is one of LAF, sum and max, and the learning rate one of the
three defaults. `"laf_units"` is a conditional hyperparameter: it exists
only in trials whose aggregation is `"laf"`, so the tuner does not waste
trials on settings that differ only in units that are not used.
`kt.RandomSearch` samples the space; `kt.BayesianOptimization` and
`kt.Hyperband` take the same hypermodel.
"""

wide_hypermodel = DeepSetsHyperModel(
    vocabulary_size=10,
    min_units=MIN_UNITS,
    max_units=MAX_UNITS,
    aggregations=("laf", "sum", "max"),
    model_kwargs=MODEL_KWARGS,
    compile_kwargs={"run_eagerly": True} if args.quick else None,
)
wide_tuner = kt.RandomSearch(
    wide_hypermodel,
    objective="val_loss",
    max_trials=WIDE_TRIALS,
    directory=tuner_dir,
    project_name="wide",
    overwrite=True,
    seed=1,
)
wide_tuner.search(train, validation_data=validation, epochs=EPOCHS, verbose=0)
for trial in wide_tuner.oracle.get_best_trials(num_trials=WIDE_TRIALS):
    print(f"val MAE {trial.score:.3f}: {trial.hyperparameters.values}")

"""
## Where next

- `SetTransformerHyperModel` does the same for a Set Transformer, where
  `"aggregation"` chooses its pooling, `"laf"` or `"pma"`.
- A tuned model is an ordinary Keras model: `best_model.save("best.keras")`
  keeps it, and `hypermodel.build(best_hp)` rebuilds it untrained, to
  train on all the data.
"""

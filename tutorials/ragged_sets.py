"""
Title: Ragged sets end to end
Author: keras-laf contributors
Date created: 2026-11-26
Last modified: 2026-11-26
Description: Sets of different sizes in tf.data and Keras: ragged batches,
    padding with masks, segment ids, and what happens to the padding.
"""

# ruff: noqa: E402

"""
## Introduction

Sets come in different sizes, and a batch of them does not fit a
rectangular tensor. keras-laf accepts a batch of sets in three forms, and
every aggregation layer (`LAF`, `FixedAggregation`, `LSTMAggregation`)
gives the same numbers for the same sets in all three:

1. **Ragged**: a `tf.RaggedTensor` of shape `(batch, None, features)`, one
   row per set, no padding at all.
2. **Padded with a mask**: a dense tensor `(batch, set_size, features)`
   where the short sets are filled up with padding, and a boolean mask
   `(batch, set_size)`, True for the real elements.
3. **Flat with segment ids**: all elements in one tensor
   `(num_elements, features)` and an int tensor `(num_elements,)` naming the
   set of each element, the form of graph neighbourhoods.

This tutorial builds a `tf.data` pipeline of ragged batches, converts one
batch into the other two forms, shows where padding could leak into the
result and how the mask prevents it, and trains the same model on ragged
and on padded batches.
"""

"""
## Setup

The figures need matplotlib (`pip install matplotlib`, or the
`experiments` extra).
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

from keras_laf import LAF
from keras_laf import FixedAggregation
from keras_laf.datasets import ragged_set_dataset
from keras_laf.datasets import to_padded_batches
from keras_laf.models import deep_sets

NAME = "ragged_sets"
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

NUM_SETS, EPOCHS = (256, 2) if args.quick else (4_000, 20)

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)

"""
## A `tf.data` pipeline of ragged batches

Our sets hold 1 to 12 points of the unit square, and the label of a set is
the number of its points below the diagonal (x > y): a count of the
elements that pass a test, which needs a network on each element *and* an
aggregation.

`ragged_set_dataset(sets, labels, batch_size)` takes a list of NumPy arrays,
one per set, and returns a `tf.data.Dataset` of `(sets, labels)` batches,
the sets as a `tf.RaggedTensor`. With `shuffle=True` it reshuffles the sets
at every epoch.
"""

sizes = rng.integers(1, 13, size=NUM_SETS)
sets = [rng.random((size, 2)).astype("float32") for size in sizes]
labels = np.array([np.sum(s[:, 0] > s[:, 1]) for s in sets], "float32")

dataset = ragged_set_dataset(sets, labels, batch_size=32, shuffle=True, seed=0)
batch, batch_labels = next(iter(dataset))
print("sets:  ", batch.shape, batch.dtype)  # (32, None, 2)
print("labels:", batch_labels.shape)  # (32, 1)

"""
A ragged tensor stores the elements of all sets one after the other in
`flat_values`, and where each set starts in `row_splits`. `row_lengths()`
gives the size of each set, and `value_rowids()` the set of each element:
exactly the segment ids of the third form.
"""

small = batch[:4]
print("row lengths: ", small.row_lengths().numpy())
print("row splits:  ", small.row_splits.numpy())
print("flat values: ", small.flat_values.shape)
print("segment ids: ", small.value_rowids().numpy())

"""
## One batch, three forms

The padded form comes from `to_tensor()`, which fills the short rows with
zeros, and the mask from the row lengths. The flat form is `flat_values`
with `value_rowids()`; `num_segments` gives the number of sets, so that
sets with no elements at the end of the batch still get an output.
"""

padded = batch.to_tensor()  # (32, largest set, 2)
mask = tf.sequence_mask(batch.row_lengths(), maxlen=padded.shape[1])
flat = batch.flat_values  # (elements in the batch, 2)
segment_ids = batch.value_rowids()

layer = LAF(units=3)
from_ragged = layer(batch)
from_padded = layer(padded, mask=mask)
from_segments = layer(flat, segment_ids=segment_ids, num_segments=batch.nrows())
print("output shape:", from_ragged.shape)  # (32, 2 features * 3 units)


def relative_difference(result, reference):
    result, reference = np.asarray(result), np.asarray(reference)
    scale = np.maximum(np.abs(reference), 1.0)
    return float(np.max(np.abs(result - reference) / scale))


print("padded vs ragged:  ", relative_difference(from_padded, from_ragged))
print("segments vs ragged:", relative_difference(from_segments, from_ragged))

"""
The padded and the ragged forms run the same computation and agree
exactly. The segment form is computed by other kernels (TensorFlow's
segment sums instead of one XLA-compiled function over the padded sets),
so it agrees up to float32 rounding; hence the relative difference.

The figure shows the padded form of the first sets of the batch: each row
is a set, each column a position in it, the colour the first feature. The
hatched cells are padding; the mask is False there.
"""

shown = 12
figure, axis = plt.subplots(figsize=(7, 4.5), layout="constrained")
values = np.asarray(padded[:shown, :, 0])
shown_mask = np.asarray(mask[:shown])
image = axis.imshow(
    np.where(shown_mask, values, np.nan), cmap="viridis", vmin=0, vmax=1
)
axis.imshow(
    np.where(shown_mask, np.nan, 0.0), cmap="Greys", vmin=-1, vmax=1, alpha=0.4
)
for row, column in zip(*np.nonzero(~shown_mask)):
    axis.add_patch(
        plt.Rectangle(
            (column - 0.5, row - 0.5), 1, 1, fill=False, hatch="//", lw=0
        )
    )
axis.set_xlabel("position in the padded set")
axis.set_ylabel("set in the batch")
axis.set_title("A ragged batch as padded values (hatched: mask is False)")
figure.colorbar(image, ax=axis, label="first feature")
path = output_dir / "ragged_batch_as_padded.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## What happens to the padding

With a mask, a padded position takes no part in the aggregation at all.
The layers first replace every padded value by zero, so whatever the
padding holds, even NaN, cannot reach the result:
"""

nan_padded = tf.where(mask[:, :, None], padded, float("nan"))
from_nan_padded = layer(nan_padded, mask=mask)
print(
    "NaN padding with a mask vs ragged:",
    relative_difference(from_nan_padded, from_ragged),
)

"""
Without a mask there is no way to tell padding from data, and the padding
zeros become elements of the set. Take one set of five values and
aggregate it with the count, mean, maximum and minimum of Table 1 (as LAF
units) while padding it with more and more zeros:
"""

table_units = LAF.from_closed_forms(["count", "mean", "max", "min"])
one_set = np.array([0.3, 0.5, 0.6, 0.8, 0.9], "float32")
num_padding = np.arange(0, 21)
with_mask, without_mask = [], []
for extra in num_padding:
    values = np.concatenate([one_set, np.zeros(extra, "float32")])
    values = values[None, :, None]  # one set, one feature: (1, n, 1)
    set_mask = np.arange(values.shape[1])[None] < len(one_set)
    with_mask.append(np.asarray(table_units(values, mask=set_mask))[0])
    without_mask.append(np.asarray(table_units(values))[0])
with_mask, without_mask = np.array(with_mask), np.array(without_mask)

figure, axes = plt.subplots(1, 4, figsize=(14, 3.5), layout="constrained")
for index, (axis, name) in enumerate(
    zip(axes, ["count", "mean", "max", "min"])
):
    axis.plot(num_padding, with_mask[:, index], label="with a mask")
    axis.plot(num_padding, without_mask[:, index], "--", label="without a mask")
    axis.set_title(name)
    axis.set_xlabel("padding zeros added")
axes[0].legend()
figure.suptitle("LAF units on one set of 5 values, padded with zeros")
path = output_dir / "padding_with_and_without_mask.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
The count and the mean drift, and the minimum falls to 0 with the first
padding zero, then below it: the Table-1 minimum is the approximation
1 - (sum (1 - x)^50)^(1/50), and every padding zero adds 1 to that sum.
Only the maximum survives, because the padding value 0 is not above the
data. The fixed aggregators are just as exposed:
"""

padded_once = np.concatenate([one_set, np.zeros(3, "float32")])[None, :, None]
set_mask = np.array([[True] * 5 + [False] * 3])
pooling = FixedAggregation(["count", "mean", "min"])
pooled_with_mask = np.asarray(pooling(padded_once, mask=set_mask))[0]
pooled_without_mask = np.asarray(pooling(padded_once))[0]
print("count, mean, min with a mask:   ", np.round(pooled_with_mask, 3))
print("count, mean, min without a mask:", np.round(pooled_without_mask, 3))

"""
In a Keras model the mask usually comes by itself: `keras.layers.Masking`
or `Embedding(mask_zero=True)` attach a mask to their output, layers such as
`Dense` pass it on, and the aggregation receives it as its `mask` argument
(see `laf_in_five_minutes.py`). Ragged tensors need no mask: their row
lengths say which elements exist.

## Empty sets and segment ids

Segment ids need not be sorted, and `num_segments` may exceed the largest
id: the extra sets are empty. The conventions of LAF for an empty set
follow from "a sum over no elements is 0" and 0^0 = 1 (see the docstring of
`keras_laf.ops`); for the Table-1 units:
"""

elements = np.array([[0.2], [0.9], [0.4], [0.6]], "float32")
ids = np.array([1, 0, 1, 0])  # set 0: {0.9, 0.6}, set 1: {0.2, 0.4}
outputs = table_units(elements, segment_ids=ids, num_segments=3)
for set_index, row in enumerate(np.asarray(outputs)):
    print(f"set {set_index}: count, mean, max, min = {np.round(row, 3)}")

"""
Set 2 has no elements: its count, mean and maximum are 0, and its minimum,
computed as 1 - max(1 - x), is 1.

## Training on ragged batches, and on padded ones

`keras_laf.models.deep_sets` builds a model that takes two inputs by
default, on every backend: the padded sets and a float32 mask, 1 for real
elements and 0 for padding. With `ragged=True`, on TensorFlow only, the
same architecture takes one ragged tensor instead.
`to_padded_batches` turns the ragged pipeline into that form; its
`set_size` argument pads every batch to the same size, which distribution
strategies (Keras cannot split ragged batches across replicas) and XLA
prefer.
"""

ragged_model = deep_sets(
    input_dim=2, phi_units=(16,), ragged=True, name="ragged"
)
ragged_model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mae")
ragged_model.fit(dataset, epochs=EPOCHS, shuffle=False, verbose=2)

padded_dataset = to_padded_batches(dataset, set_size=12)
(padded_values, padded_mask), _ = next(iter(padded_dataset))
print("padded batch:", padded_values.shape, "mask:", padded_mask.shape)

padded_model = deep_sets(input_dim=2, phi_units=(16,), name="padded")
padded_model.set_weights(ragged_model.get_weights())

"""
Both models now hold the same weights. On the same sets they predict the
same numbers, whether the sets arrive ragged or padded to 12 elements:
"""

test_sizes = rng.integers(1, 13, size=64)
test_sets = [rng.random((size, 2)).astype("float32") for size in test_sizes]
test_labels = np.array([np.sum(s[:, 0] > s[:, 1]) for s in test_sets])
test_ragged = ragged_set_dataset(test_sets, test_labels, batch_size=64)
ragged_predictions = ragged_model.predict(test_ragged, verbose=0)
padded_predictions = padded_model.predict(
    to_padded_batches(test_ragged, set_size=12), verbose=0
)
print(
    "largest difference of the predictions:",
    float(np.max(np.abs(ragged_predictions - padded_predictions))),
)
test_error = np.mean(np.abs(ragged_predictions[:, 0] - test_labels))
print(f"test MAE: {test_error:.3f}")

"""
## Summary

- Keep sets ragged as long as you can: `ragged_set_dataset` builds the
  pipeline, `PerElement` applies Keras layers to ragged elements, and the
  aggregations take ragged batches directly.
- When a dense tensor is needed (attention layers work on padded sets
  internally, distribution strategies need it), pad and **always** pass the
  mask: without it, padding counts as data.
- Flat elements with segment ids are the form of graphs, where the sets
  are the neighbourhoods of the nodes.
"""

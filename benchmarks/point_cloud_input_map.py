"""How LAF pooling gets its elements into [0, 1] on point clouds, and with
which anchors: the study behind `point_cloud_classifier`'s map and the
pooling preset's anchors.

The classifier of `benchmarks/point_cloud_pooling.py` (three
`PermutationEquivariant` layers of 64 tanh units, LAF(10), Dense(64, tanh),
logits), built here by hand so that what comes between the last
equivariant layer and LAF can vary. A variant is `<map>_<anchors>[_<norm>]`:

- map: `half`, (1 + tanh) / 2 (the builder's now); `sigmoid`, the last
  equivariant layer ends in a sigmoid instead of tanh; `squash`, a sigmoid
  after tanh (the builder's before), squeezing the features into
  [0.27, 0.73]; `sig4`, a sigmoid of 4 times the last layer's
  pre-activation;
- anchors: `mmm`, max, min and mean at every third unit, no pulls (the
  pooling candidate `no_pull`); `pna`, PNA's max, min, mean and second
  moment at every other unit (the pooling preset); `bank`, every unit a
  distinct aggregator of Table 1 (`no_pull_bank`);
- norm (optional): `bn`, batch normalisation after LAF; `ln`, layer
  normalisation.

Generated solids (1,600 training clouds, 400 test clouds of 100 points),
Adam 3e-3, batch 32, 12 epochs; one JSON line per variant and seed with the
test accuracy and the training accuracy of each epoch, resuming where a
run stopped:

    python benchmarks/point_cloud_input_map.py --variants half_pna,sigmoid_pna \
        --seeds 3
"""

import argparse
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from laf_initialization import AGGREGATOR_BANK  # noqa: E402
from laf_initialization import SECOND_MOMENT  # noqa: E402
from laf_initialization import unpulled_variant  # noqa: E402
from point_cloud_pooling import padded_with_mask  # noqa: E402
from point_cloud_pooling import run_resumable  # noqa: E402

import keras_laf  # noqa: E402
from laf_experiments.datasets import make_solid_point_clouds  # noqa: E402

MAPS = ("half", "sigmoid", "squash", "sig4")
ANCHORS = {
    "mmm": unpulled_variant(),
    "pna": unpulled_variant(
        anchors=("max", "min", "mean", SECOND_MOMENT), anchor_every=2
    ),
    "bank": unpulled_variant(anchors=AGGREGATOR_BANK, anchor_every=1),
}
NORMALIZATIONS = {
    "bn": keras.layers.BatchNormalization,
    "ln": keras.layers.LayerNormalization,
}


def parse_variant(variant):
    """`"half_pna_bn"` -> `("half", "pna", "bn")`; the norm may be None."""
    parts = variant.split("_")
    if (
        len(parts) not in (2, 3)
        or parts[0] not in MAPS
        or parts[1] not in ANCHORS
        or (len(parts) == 3 and parts[2] not in NORMALIZATIONS)
    ):
        raise ValueError(
            f"Unknown variant {variant!r}: expected <map>_<anchors>[_<norm>] "
            f"with map in {MAPS}, anchors in {tuple(ANCHORS)}, norm in "
            f"{tuple(NORMALIZATIONS)}."
        )
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


def build(variant, width=64, num_classes=8):
    input_map, anchors, normalization = parse_variant(variant)
    sets = keras.Input((None, 3), name="sets")
    mask = keras.Input((None,), name="mask")
    features = sets
    for index in range(3):
        activation = "tanh"
        if index == 2 and input_map == "sigmoid":
            activation = "sigmoid"
        elif index == 2 and input_map == "sig4":
            activation = lambda z: keras.ops.sigmoid(4.0 * z)  # noqa: E731
        features = keras_laf.PermutationEquivariant(
            width, activation=activation
        )(features, mask=mask)
    if input_map == "half":
        features = keras.layers.Rescaling(0.5, offset=0.5)(features)
    elif input_map == "squash":
        features = keras.layers.Activation("sigmoid")(features)
    pooled = keras_laf.LAF(10, name="laf", **ANCHORS[anchors])(
        features, mask=mask
    )
    if normalization:
        pooled = NORMALIZATIONS[normalization]()(pooled)
    hidden = keras.layers.Dense(width, activation="tanh")(pooled)
    return keras.Model([sets, mask], keras.layers.Dense(num_classes)(hidden))


def run_one(variant, seed, epochs):
    keras.utils.set_random_seed(seed)
    train = make_solid_point_clouds(1_600, 100, seed=seed)
    test = make_solid_point_clouds(400, 100, seed=999)
    model = build(variant)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    started = time.perf_counter()
    history = model.fit(
        padded_with_mask(train, 32, shuffle=True, seed=seed),
        epochs=epochs,
        verbose=0,
    )
    seconds = time.perf_counter() - started
    logits = model.predict(padded_with_mask(test, 256), verbose=0)
    keras.backend.clear_session()
    return {
        "variant": variant,
        "seed": seed,
        "test_accuracy": float(np.mean(np.argmax(logits, -1) == test.labels)),
        "train_accuracy": [
            round(value, 3) for value in history.history["accuracy"]
        ],
        "train_seconds": seconds,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--variants", default="half_pna,sigmoid_pna,half_mmm")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("benchmarks/results/point_cloud_input_map.jsonl"),
    )
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    for variant in variants:
        parse_variant(variant)
    run_resumable(
        args.output,
        "variant",
        variants,
        args.seeds,
        lambda variant, seed: run_one(variant, seed, args.epochs),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

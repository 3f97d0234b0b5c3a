"""Speed and memory of the LAF layer against a direct transcription.

Two measurements, each against a baseline in the same run, on one Keras
backend (`--backend`, default `KERAS_BACKEND` or TensorFlow):

1. Large sets: one forward + backward step (gradients with respect to the
   layer's variables and to the input) at batch 64, set size 1000, 64
   features, 10 units, float32. The baseline transcribes the formula
   directly: `keras.ops.power` on the materialised (batch, set, features,
   4, units) tensor, sums clamped at epsilon. Each variant runs in its own
   process. Peak memory: on TensorFlow the peak of TensorFlow's allocator
   (CPU or GPU) during the first step above the memory before it, which
   holds every tensor and XLA's temporary buffers, not the compilers'
   working memory; on JAX the step is one compiled XLA program and its
   memory is XLA's own account (temporary plus output buffers). Also the
   growth of the process's peak RSS over the first step (compile
   included), and on TensorFlow LAF on the same sets as a
   `tf.RaggedTensor`, whose set size is known only at run time. Both
   steps also run on one set of 16 elements: the RSS growth that does not
   depend on the sets' size (compiling, the runtime), and the padded
   ratio with it taken out of both.
2. Small sets, many steps: the paper's integer-scalar model (Embedding(10,
   10) -> sigmoid -> LAF(9) -> Dense(1)) trained with `model.fit` on 20,000
   sets of sizes 2..10, batch 64: seconds per epoch, after a first epoch
   that compiles, against the same model with a plain sum in place of
   LAF. On TensorFlow the sets are a ragged `tf.data` pipeline; on other
   backends, or with `--jit-compile`, NumPy arrays padded to 10 elements
   with a mask, the whole training step compiled.
3. Peers (`--part peers`): one epoch of the same integer model with LAF(9),
   with Set Transformer's PMA (dim 16, 4 heads, 1 seed, then Flatten) and
   with a plain sum, padded sets of 2..10 digits with a mask, batch 64,
   the training step compiled as the backend compiles it by default. The
   three models live in one process and their epochs alternate; each
   figure is the median of `--peer-epochs` epochs (3) after one that
   compiles. Beside them, one pass of LAF(9)'s exponentials alone over
   the epoch's batches (forward, compiled): the least work any LAF
   training step does.

4. Scaling (`--part scaling`): one LAF(9) forward and backward step on 8
   padded sets of 16 features at 1e6 and at 4e6 elements in all, each in
   its own process: the growth of the peak RSS from one to the other per
   element-feature added, and the time per element-feature of each.

Usage:

    python -m benchmarks.laf_layer                  # both, prints a table
    python -m benchmarks.laf_layer --backend jax    # on JAX
    python -m benchmarks.laf_layer --quick          # small sizes, seconds
    python -m benchmarks.laf_layer --output results.json
    python -m benchmarks.laf_layer --part small     # only the small sets
    python -m benchmarks.laf_layer --part small --jit-compile
    python -m benchmarks.laf_layer --part peers     # LAF, PMA and sum
    python -m benchmarks.laf_layer --part scaling   # 1e6 and 4e6 elements

To compare with another version of the package, check it out elsewhere
and pass its directory (each measurement imports keras_laf from there):

    git worktree add /tmp/keras-laf-before <commit>
    python -m benchmarks.laf_layer --package-path /tmp/keras-laf-before
"""

import argparse
import json
import os
import platform
import sys
import time

from benchmarks.common import exponential_pass_seconds
from benchmarks.common import run_child
from benchmarks.common import write_record


def transcription(values, exponents, coefficients, epsilon=1e-7):
    """The formula as written: pow on the full tensor, sums clamped."""
    from keras import ops

    x = ops.clip(values, epsilon, 1.0 - epsilon)
    # (batch, set, features, 4, 1): x, 1 - x, x, 1 - x
    sources = ops.stack([x, 1.0 - x, x, 1.0 - x], axis=-1)[..., None]
    inner = ops.stack([exponents[1], exponents[3], exponents[5], exponents[7]])
    outer = ops.stack([exponents[0], exponents[2], exponents[4], exponents[6]])
    # (batch, set, features, 4, units)
    powers = ops.power(sources, inner)
    sums = ops.maximum(ops.sum(powers, axis=1), epsilon)
    terms = ops.power(sums, outer) * coefficients  # (batch, features, 4, units)
    numerator = terms[:, :, 0] + terms[:, :, 1]
    denominator = terms[:, :, 2] + terms[:, :, 3]
    return numerator / (denominator + epsilon)


def peak_rss_bytes():
    """The process's peak resident set size so far, in bytes (Linux)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def tensorflow_large_step(forward, values, variables, steps):
    """Seconds per step and allocator peak of a TensorFlow training step."""
    import numpy as np
    import tensorflow as tf

    @tf.function
    def step(inputs):
        with tf.GradientTape() as tape:
            tape.watch([inputs] + variables)
            loss = tf.reduce_sum(forward(inputs, variables))
        return tape.gradient(loss, [inputs] + variables)

    device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
    if not isinstance(values, tf.RaggedTensor):
        values = tf.constant(values)
    tf.config.experimental.reset_memory_stats(device)
    before = tf.config.experimental.get_memory_info(device)["current"]
    rss_before = peak_rss_bytes()
    for gradient in step(values):  # trace, compile, warm up
        gradient.numpy()
    peak = tf.config.experimental.get_memory_info(device)["peak"] - before
    rss_growth = peak_rss_bytes() - rss_before
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        for gradient in step(values):
            gradient.numpy()
        times.append(time.perf_counter() - start)
    return {
        "seconds": float(np.median(times)),
        "peak_bytes": peak,
        "rss_growth_bytes": rss_growth,
    }


def jax_large_step(forward, values, variables, steps):
    """Seconds per step and XLA's memory account of a JAX training step."""
    import jax
    import numpy as np

    def loss(inputs, variables):
        return forward(inputs, variables).sum()

    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    values = jax.device_put(values)
    variables = [jax.device_put(v) for v in variables]
    rss_before = peak_rss_bytes()
    compiled = step.lower(values, variables).compile()
    memory = compiled.memory_analysis()
    jax.block_until_ready(compiled(values, variables))  # warm up
    rss_growth = peak_rss_bytes() - rss_before
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        jax.block_until_ready(compiled(values, variables))
        times.append(time.perf_counter() - start)
    return {
        "seconds": float(np.median(times)),
        "peak_bytes": memory.temp_size_in_bytes + memory.output_size_in_bytes,
        "rss_growth_bytes": rss_growth,
    }


def large_step(variant, batch, set_size, features, units, steps):
    """Times one variant's training step; returns seconds and bytes."""
    import keras
    import numpy as np
    from keras import ops

    import keras_laf

    rng = np.random.default_rng(0)
    values = rng.uniform(0, 1, (batch, set_size, features)).astype("float32")
    exponents, coefficients = (
        rng.uniform(0, 1, (8, units)).astype("float32"),
        rng.normal(0, 0.01, (4, units)).astype("float32"),
    )
    if variant == "laf-ragged":
        import tensorflow as tf

        # Every set full, its size known only at run time.
        values = tf.RaggedTensor.from_tensor(values)
    if variant in ("laf", "laf-ragged"):

        def forward(inputs, variables):
            return keras_laf.laf(inputs, *variables)

    else:

        def forward(inputs, variables):
            return transcription(inputs, *variables)

    variables = [
        ops.convert_to_tensor(exponents),
        ops.convert_to_tensor(coefficients),
    ]
    if keras.config.backend() == "jax":
        return jax_large_step(forward, values, variables, steps)
    return tensorflow_large_step(forward, values, variables, steps)


def integer_sets(num_sets):
    """Sets of 2..10 digits and their sums."""
    import numpy as np

    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 11, num_sets)
    elements = rng.integers(0, 10, sizes.sum()).astype("int32")
    return sizes, elements, np.add.reduceat(elements, np.cumsum(sizes) - sizes)


def integer_set_epochs(aggregation, num_sets, epochs, jit_compile=False):
    """Seconds per epoch of the integer-scalar model with `aggregation`;
    with `jit_compile`, the training step compiled whole by XLA (on
    TensorFlow, padded sets with a mask: XLA cannot take ragged ones)."""
    import keras
    import numpy as np

    import keras_laf

    sizes, elements, labels = integer_sets(num_sets)
    labels = labels.astype("float32")
    if keras.config.backend() == "tensorflow" and not jit_compile:
        import tensorflow as tf

        sets = tf.RaggedTensor.from_row_lengths(elements, sizes)
        data = (
            tf.data.Dataset.from_tensor_slices((sets, labels))
            .batch(64)
            .prefetch(tf.data.AUTOTUNE)
        )
        inputs = keras.Input(shape=(None,), dtype="int32", ragged=True)
        mask = None
        fit_data = {"x": data}
    else:
        # (num_sets, 10) padded digits and their mask.
        positions = np.arange(10)
        mask_values = (positions[None] < sizes[:, None]).astype("float32")
        digits = np.zeros((num_sets, 10), "int32")
        digits[mask_values > 0] = elements
        sets = keras.Input(shape=(10,), dtype="int32")
        mask = keras.Input(shape=(10,), dtype="float32")
        inputs = [sets, mask]
        fit_data = {"x": [digits, mask_values], "y": labels, "batch_size": 64}
    embedded = keras.layers.Embedding(10, 10)(inputs if mask is None else sets)
    embedded = keras.layers.Activation("sigmoid")(embedded)
    if aggregation == "laf":
        aggregate = keras_laf.LAF(units=9)(embedded, mask=mask)
    else:
        aggregate = keras_laf.FixedAggregation(["sum"])(embedded, mask=mask)
    model = keras.Model(inputs, keras.layers.Dense(1)(aggregate))
    model.compile(
        optimizer="adam", loss="mae", jit_compile=jit_compile or "auto"
    )
    # A first epoch traces and compiles for every batch shape (the last,
    # smaller batch; on TensorFlow the set-size buckets of XLA).
    model.fit(**fit_data, verbose=0)
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        model.fit(**fit_data, verbose=0)
        times.append(time.perf_counter() - start)
    return {"seconds_per_epoch": float(np.median(times))}


def peer_epochs(num_sets, epochs):
    """Seconds per epoch of the integer model with LAF, PMA and a sum, in
    one process, their epochs alternated: the median of `epochs` each."""
    import keras
    import numpy as np

    import keras_laf

    sizes, elements, labels = integer_sets(num_sets)
    labels = labels.astype("float32")
    # (num_sets, 10) padded digits and their mask.
    mask_values = np.arange(10)[None] < sizes[:, None]
    digits = np.zeros((num_sets, 10), "int32")
    digits[mask_values] = elements
    mask_values = mask_values.astype("float32")

    def model(aggregation):
        sets = keras.Input(shape=(10,), dtype="int32")
        mask = keras.Input(shape=(10,), dtype="float32")
        embedded = keras.layers.Embedding(10, 10)(sets)
        embedded = keras.layers.Activation("sigmoid")(embedded)
        if aggregation == "laf":
            aggregate = keras_laf.LAF(units=9)(embedded, mask=mask)
        elif aggregation == "pma":
            pooled = keras_laf.PMA(dim=16, num_heads=4, num_seeds=1)(
                embedded, mask=mask
            )
            aggregate = keras.layers.Flatten()(pooled)
        else:
            aggregate = keras_laf.FixedAggregation(["sum"])(embedded, mask=mask)
        built = keras.Model([sets, mask], keras.layers.Dense(1)(aggregate))
        built.compile(optimizer="adam", loss="mae")
        return built

    names = ("laf", "pma", "sum")
    models = {name: model(name) for name in names}
    fit_data = {"x": [digits, mask_values], "y": labels, "batch_size": 64}
    for built in models.values():  # traces and compiles
        built.fit(**fit_data, verbose=0)
    times = {name: [] for name in names}
    for _ in range(epochs):
        for name in names:
            start = time.perf_counter()
            models[name].fit(**fit_data, verbose=0)
            times[name].append(time.perf_counter() - start)
    # Every epoch is kept: an occasional pause of about 0.6 s at an
    # epoch's first batch (seen on TensorFlow, hitting any of the models)
    # moves a median of few epochs.
    results = {
        name: {
            "seconds_per_epoch": float(np.median(times[name])),
            "epoch_seconds": times[name],
        }
        for name in names
    }
    batches = -(-num_sets // fit_data["batch_size"])
    results["exponentials"] = {
        "seconds_per_epoch": exponential_pass_seconds(batches, epochs)
    }
    return results


def versions():
    """The machine and the versions of the libraries that matter here."""
    import keras
    import numpy as np

    found = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.platform()}",
        "python": platform.python_version(),
        "keras": keras.__version__,
        "backend": keras.config.backend(),
        "numpy": np.__version__,
    }
    if keras.config.backend() == "jax":
        import jax

        found["jax"] = jax.__version__
        found["devices"] = ", ".join(str(d) for d in jax.devices())
    else:
        import tensorflow as tf

        found["tensorflow"] = tf.__version__
        gpus = tf.config.list_physical_devices("GPU")
        found["devices"] = ", ".join(d.name for d in gpus) or "CPU"
    return found


def run_in_subprocess(backend, function, package_path=None, **kwargs):
    """Runs `function(**kwargs)` of this module in a fresh process, with
    keras_laf imported from `package_path` when given."""
    environment = {**os.environ, "KERAS_BACKEND": backend}
    if function == "large_step":
        # TensorFlow keeps the statistics of its CPU allocator only with
        # the BFC allocator.
        environment.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
    return run_child(
        "benchmarks.laf_layer",
        function,
        environment,
        package_path=package_path and os.path.abspath(package_path),
        **kwargs,
    )


def measure_large_sets(backend, package_path, shape, steps):
    """Time and memory of LAF against the transcription; on TensorFlow
    also of LAF on the same sets as a `tf.RaggedTensor`."""
    large = dict(shape, steps=steps)
    variants = ["laf", "transcription"]
    if backend == "tensorflow":
        variants.append("laf-ragged")
    for variant in variants:
        print(f"large sets, {variant} ...", flush=True)
        large[variant] = run_in_subprocess(
            backend,
            "large_step",
            package_path,
            variant=variant,
            steps=steps,
            **shape,
        )
    # The same steps on one set of 16 elements: the growth of peak RSS
    # that does not depend on the sets' size (compiling, the runtime).
    tiny = dict(shape, batch=1, set_size=16)
    for variant in ("laf", "transcription"):
        print(f"one small set, {variant} ...", flush=True)
        large[f"{variant}-one-small-set"] = run_in_subprocess(
            backend,
            "large_step",
            package_path,
            variant=variant,
            steps=1,
            **tiny,
        )
    large["time_ratio"] = (
        large["laf"]["seconds"] / large["transcription"]["seconds"]
    )
    large["memory_ratio"] = (
        large["laf"]["peak_bytes"] / large["transcription"]["peak_bytes"]
    )
    # The growth of the process's peak RSS over the first step, compile
    # included, as a user sees it.
    for variant in variants[::2]:
        name = "ragged" if variant == "laf-ragged" else "padded"
        large[f"{name}_rss_ratio"] = (
            large[variant]["rss_growth_bytes"]
            / large["transcription"]["rss_growth_bytes"]
        )
        large[f"{name}_time_ratio"] = (
            large[variant]["seconds"] / large["transcription"]["seconds"]
        )
    # The same ratio, both growths less that of their step on one small
    # set: what grows with the sets.
    large["padded_rss_ratio_beyond_one_small_set"] = size_dependent_rss(
        large, "laf"
    ) / size_dependent_rss(large, "transcription")
    return large


def measure_scaling(backend, package_path, elements=(10**6, 4 * 10**6)):
    """How LAF(9)'s step grows with the elements: one forward and backward
    step on 8 padded sets of 16 features, at each total of `elements`, in
    a process of its own; the growth of the peak RSS and the time per
    element-feature between the smallest and the largest."""
    rows = {}
    for total in elements:
        print(f"scaling, {total} elements ...", flush=True)
        rows[total] = run_in_subprocess(
            backend,
            "large_step",
            package_path,
            variant="laf",
            steps=2,
            batch=8,
            set_size=total // 8,
            features=16,
            units=9,
        )
    smallest, largest = min(elements), max(elements)
    added = (largest - smallest) * 16
    return {
        "elements": list(elements),
        "steps": {str(total): row for total, row in rows.items()},
        "rss_growth_bytes_per_element_feature": (
            rows[largest]["rss_growth_bytes"]
            - rows[smallest]["rss_growth_bytes"]
        )
        / added,
        "nanoseconds_per_element_feature": {
            str(total): row["seconds"] / (total * 16) * 1e9
            for total, row in rows.items()
        },
    }


def size_dependent_rss(large, variant):
    """The growth of peak RSS of a large step less that of the same step on
    one small set."""
    return (
        large[variant]["rss_growth_bytes"]
        - large[f"{variant}-one-small-set"]["rss_growth_bytes"]
    )


def measure_integer_sets(
    backend, package_path, num_sets, epochs, jit_compile=False
):
    """Epoch time of the integer model with LAF against a plain sum."""
    small = {"num_sets": num_sets, "epochs": epochs, "jit_compile": jit_compile}
    for aggregation in ("laf", "sum"):
        print(f"integer sets, {aggregation} ...", flush=True)
        small[aggregation] = run_in_subprocess(
            backend,
            "integer_set_epochs",
            package_path,
            aggregation=aggregation,
            num_sets=num_sets,
            epochs=epochs,
            jit_compile=jit_compile,
        )
    small["time_ratio"] = (
        small["laf"]["seconds_per_epoch"] / small["sum"]["seconds_per_epoch"]
    )
    return small


def measure_peers(backend, package_path, num_sets, epochs):
    """Epoch time of the integer model with LAF, PMA and a sum."""
    print("integer sets, LAF, PMA and sum alternated ...", flush=True)
    peers = run_in_subprocess(
        backend,
        "peer_epochs",
        package_path,
        num_sets=num_sets,
        epochs=epochs,
    )
    peers.update(num_sets=num_sets, epochs=epochs)
    peers["laf_to_pma"] = (
        peers["laf"]["seconds_per_epoch"] / peers["pma"]["seconds_per_epoch"]
    )
    return peers


def report(results, backend):
    """The results as the table printed at the end of a run."""
    megabyte = 2.0**20
    lines = [f"{k}: {v}" for k, v in results["versions"].items()]
    if "large_sets" in results:
        large = results["large_sets"]
        shape = {k: large[k] for k in ("batch", "set_size", "features")}
        lines += [
            f"Large sets {shape}, {large['units']} units, forward + backward:",
            f"  LAF            {large['laf']['seconds']:8.3f} s   "
            f"{large['laf']['peak_bytes'] / megabyte:9.1f} MiB peak",
            f"  transcription  {large['transcription']['seconds']:8.3f} s   "
            f"{large['transcription']['peak_bytes'] / megabyte:9.1f} MiB peak",
            f"  ratio          {large['time_ratio']:8.3f}     "
            f"{large['memory_ratio']:9.3f}",
        ]
        for name in ("padded", "ragged"):
            if f"{name}_rss_ratio" not in large:
                continue
            variant = "laf-ragged" if name == "ragged" else "laf"
            growth = large[variant]["rss_growth_bytes"] / megabyte
            lines.append(
                f"  {name} LAF: peak RSS growth {growth:.0f} MiB, "
                f"{large[f'{name}_rss_ratio']:.3f} of the transcription's "
                f"({large['transcription']['rss_growth_bytes'] / megabyte:.0f}"
                f" MiB); time {large[f'{name}_time_ratio']:.3f}"
            )
        if "padded_rss_ratio_beyond_one_small_set" in large:
            fixed = {
                variant: large[f"{variant}-one-small-set"]["rss_growth_bytes"]
                / megabyte
                for variant in ("laf", "transcription")
            }
            lines.append(
                "  peak RSS growth on one set of 16 elements: LAF "
                f"{fixed['laf']:.0f} MiB, transcription "
                f"{fixed['transcription']:.0f} MiB; padded ratio less "
                f"these: {large['padded_rss_ratio_beyond_one_small_set']:.3f}"
            )
    if "integer_sets" in results:
        small = results["integer_sets"]
        ragged = backend == "tensorflow" and not small.get("jit_compile")
        form = "ragged" if ragged else "padded + mask"
        compiled = ", jit_compile=True" if small.get("jit_compile") else ""
        laf, plain_sum = (
            small[name]["seconds_per_epoch"] for name in ("laf", "sum")
        )
        lines += [
            f"Integer sets ({small['num_sets']} {form} sets, batch 64"
            f"{compiled}), model.fit:",
            f"  LAF(9)         {laf:8.3f} s/epoch",
            f"  sum            {plain_sum:8.3f} s/epoch",
            f"  ratio          {small['time_ratio']:8.3f}",
        ]
    if "peers" in results:
        peers = results["peers"]
        lines += [
            f"Peers ({peers['num_sets']} padded sets + mask, batch 64, "
            f"median of {peers['epochs']} alternated epochs), model.fit:",
            *(
                f"  {label:<14} {peers[name]['seconds_per_epoch']:8.3f} s/epoch"
                for name, label in (
                    ("laf", "LAF(9)"),
                    ("pma", "PMA + Flatten"),
                    ("sum", "sum"),
                )
            ),
            f"  LAF / PMA      {peers['laf_to_pma']:8.3f}",
        ]
        if "exponentials" in peers:
            lines.append(
                "  one pass of LAF(9)'s exponentials alone (forward, "
                f"compiled): {peers['exponentials']['seconds_per_epoch']:.3f}"
                " s/epoch"
            )
    if "scaling" in results:
        scaling = results["scaling"]
        smallest, largest = scaling["elements"][0], scaling["elements"][-1]
        per_element = scaling["nanoseconds_per_element_feature"]
        lines += [
            "Scaling (LAF(9), 8 padded sets x 16 features, one step):",
            "  peak RSS growth from "
            f"{smallest:.0e} to {largest:.0e} elements: "
            f"{scaling['rss_growth_bytes_per_element_feature']:.1f} B per "
            "element-feature",
            *(
                f"  {int(total):.0e} elements: {nanoseconds:.1f} ns per "
                "element-feature"
                for total, nanoseconds in per_element.items()
            ),
        ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend",
        default=os.environ.get("KERAS_BACKEND", "tensorflow"),
        help="Keras backend: tensorflow or jax (default: KERAS_BACKEND)",
    )
    parser.add_argument(
        "--part",
        choices=("both", "large", "small", "peers", "scaling", "all"),
        default="both",
        help="large sets, the integer model's small sets, or both; "
        "peers: LAF against PMA and a sum; scaling: LAF(9) at 1e6 and 4e6 "
        "elements; all: the four",
    )
    parser.add_argument(
        "--package-path",
        help="import keras_laf from this directory (another version)",
    )
    parser.add_argument(
        "--jit-compile",
        action="store_true",
        help="compile the integer models' training step whole with XLA "
        "(model.compile(jit_compile=True), padded sets on TensorFlow)",
    )
    parser.add_argument(
        "--peer-epochs",
        type=int,
        default=3,
        help="alternated epochs per model of the peer part (default: 3)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--output", help="write the results as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        request = json.loads(args.child)
        kwargs = request["kwargs"]
        package_path = kwargs.pop("package_path")
        if package_path:
            # Ahead of the repository, which `python -m` puts first: every
            # function imports keras_laf inside, after this.
            sys.path.insert(0, package_path)
        function = globals()[request["function"]]
        print(json.dumps(function(**kwargs)))
        return
    if args.package_path and not os.path.isdir(
        os.path.join(args.package_path, "keras_laf")
    ):
        sys.exit(f"No keras_laf package in --package-path {args.package_path}")

    if args.quick:
        shape = {"batch": 8, "set_size": 100, "features": 8, "units": 10}
        steps, num_sets, epochs = 3, 2000, 1
    else:
        shape = {"batch": 64, "set_size": 1000, "features": 64, "units": 10}
        steps, num_sets, epochs = 5, 20_000, 3
    results = {
        "versions": run_in_subprocess(
            args.backend, "versions", args.package_path
        )
    }
    if args.package_path:
        results["package_path"] = os.path.abspath(args.package_path)
    if args.part in ("both", "large", "all"):
        results["large_sets"] = measure_large_sets(
            args.backend, args.package_path, shape, steps
        )
    if args.part in ("both", "small", "all"):
        results["integer_sets"] = measure_integer_sets(
            args.backend, args.package_path, num_sets, epochs, args.jit_compile
        )
    if args.part in ("peers", "all"):
        peer_epochs = 1 if args.quick else args.peer_epochs
        results["peers"] = measure_peers(
            args.backend, args.package_path, num_sets, peer_epochs
        )
    if args.part in ("scaling", "all"):
        results["scaling"] = measure_scaling(args.backend, args.package_path)
    print("\n" + report(results, args.backend))
    write_record(args.output, results)


if __name__ == "__main__":
    main()

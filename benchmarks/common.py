"""What the benchmarks share: records, timing, and the models they time.

Every script in `benchmarks/` imports its helpers from here and from the
package, never from another script. Records are JSON (or JSON lines, one
run a line) carrying the commit and the date they were measured at
(`write_record`, `append_record`); `results/README.md` describes them.
Keras and the package are imported inside the functions that need them,
so that a script can set `KERAS_BACKEND` or XLA's flags first.
"""

import datetime
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
RESULTS = REPOSITORY / "results"


# Records.


def commit():
    """The repository's commit (12 hex digits), `-dirty` appended where the
    package's files differ from it; None outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "keras_laf"],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head}-dirty" if changed else head


def provenance():
    """`{"commit": ..., "date": ...}`: where and when a record was made
    (the date in UTC, ISO 8601), and under `"malloc"` glibc's allocator
    settings (`MALLOC_*` variables) where any is set: they change XLA's
    CPU timings."""
    record = {
        "commit": commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
    }
    malloc = {
        name: value
        for name, value in sorted(os.environ.items())
        if name.startswith("MALLOC_")
    }
    if malloc:
        record["malloc"] = malloc
    return record


def write_record(path, results):
    """Writes `results` with their `provenance()` as indented JSON to
    `path` (a str or a `pathlib.Path`, its folder made if missing);
    nothing where `path` is None (no `--output` given)."""
    if path is None:
        return
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {**provenance(), **results}
    path.write_text(json.dumps(record, indent=2) + "\n")


def append_record(path, record):
    """Appends `record` with its `provenance()` as one line of the JSON-lines
    file `path`, so that an interrupted study keeps what it finished."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as file:
        file.write(json.dumps({**provenance(), **record}) + "\n")


def read_jsonl(path):
    """The records of a JSON-lines file, none where it is missing."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


# Tables.


def mean_std(values):
    values = np.asarray(values, float)
    return f"{values.mean():.3g} ± {values.std():.2g}"


# Timing.


def median_seconds(function, wait, repeats, *args):
    """The median seconds of `repeats` calls `wait(function(*args))`, after
    one that traces and compiles."""
    wait(function(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        wait(function(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def compiled_functions(layer):
    """The layer's forward, forward + gradient (with respect to the input
    and the weights), and constraints, compiled as the backend compiles a
    training step; and how to wait for their outputs."""
    import keras
    from keras import ops

    if keras.config.backend() == "jax":
        import jax

        def loss(variables, values, mask):
            outputs, _ = layer.stateless_call(variables, [], values, mask=mask)
            return ops.sum(outputs)

        variables = [variable.value for variable in layer.trainable_variables]

        def constrain(variables):
            return [
                variable.constraint(value)
                for variable, value in zip(
                    layer.trainable_variables, variables, strict=True
                )
            ]

        forward = jax.jit(loss)
        gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
        constrained = jax.jit(constrain)
        return (
            lambda values, mask: forward(variables, values, mask),
            lambda values, mask: gradient(variables, values, mask),
            lambda: constrained(variables),
            jax.block_until_ready,
        )
    import tensorflow as tf

    @tf.function
    def forward(values, mask):
        return layer(values, mask=mask)

    @tf.function
    def forward_and_gradient(values, mask):
        with tf.GradientTape() as tape:
            tape.watch(values)
            outputs = ops.sum(layer(values, mask=mask))
        return tape.gradient(outputs, [values, *layer.trainable_variables])

    @tf.function
    def constrain():
        for variable in layer.trainable_variables:
            variable.assign(variable.constraint(variable))
        return [variable.value for variable in layer.trainable_variables]

    def wait(outputs):
        return [np.asarray(output) for output in tf.nest.flatten(outputs)]

    return forward, forward_and_gradient, constrain, wait


def exponential_pass_seconds(
    batches, epochs, num_sets=64, set_size=10, features=10, units=9
):
    """Seconds for `batches` passes of LAF's exponentials over a padded
    batch (by default the integer sets': 64 sets x 10 elements x 10
    features, LAF(9): 4 * 9 inner exponents), summed over each set,
    compiled, forward only: the least work any LAF training step does (the
    median of `epochs`)."""
    import keras
    from keras import ops

    def one_pass(y, q):
        # (2, 2 * units, rows): exp(q y) summed over the set axis.
        return ops.sum(ops.exp(ops.expand_dims(y, 1) * q[:, :, None, None]), 2)

    if keras.config.backend() == "jax":
        import jax

        compiled, wait = jax.jit(one_pass), jax.block_until_ready
    else:
        import tensorflow as tf

        compiled = tf.function(one_pass, jit_compile=True)
        wait = np.asarray
    rng = np.random.default_rng(0)
    # (2, set_size, sets * features): log x and log(1 - x).
    y = rng.uniform(size=(2, set_size, num_sets * features))
    y = ops.convert_to_tensor(np.log(y).astype("float32"))
    q = rng.uniform(size=(2, 2 * units)).astype("float32")
    q = ops.convert_to_tensor(q)
    wait(compiled(y, q))
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        for _ in range(batches):
            outputs = compiled(y, q)
        wait(outputs)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def jax_thunk_seconds(step, args, repeats):
    """Seconds per step of each XLA thunk of `step` (a jitted JAX
    function), from a profiler trace, largest first."""
    import collections
    import gzip
    import tempfile

    import jax

    totals = collections.Counter()
    with tempfile.TemporaryDirectory() as trace_dir:
        with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
            for _ in range(repeats):
                jax.block_until_ready(step(*args))
        (trace,) = pathlib.Path(trace_dir).rglob("perfetto_trace.json.gz")
        with gzip.open(trace) as trace_file:
            events = json.load(trace_file)
    if isinstance(events, dict):
        events = events["traceEvents"]
    for event in events:
        # Complete events of the XLA program: its fusions and other thunks
        # (the runtime's and Python's own events are left out).
        name = event.get("name", "")
        if event.get("ph") == "X" and not (
            name.startswith("$") or "::" in name or name[:1].isupper()
        ):
            totals[name] += event.get("dur", 0) * 1e-6 / repeats
    return dict(totals.most_common())


def jax_step_bytes_per_element_feature(layer, values, mask):
    """XLA's temporary and output bytes of the layer's jitted forward +
    gradient step, per element-feature of the input (JAX only)."""
    import jax
    import keras

    def loss(variables, values, mask):
        outputs, _ = layer.stateless_call(variables, [], values, mask=mask)
        return keras.ops.sum(outputs)

    variables = [variable.value for variable in layer.trainable_variables]
    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    memory = step.lower(variables, values, mask).compile().memory_analysis()
    total = memory.temp_size_in_bytes + memory.output_size_in_bytes
    return total / values.size


def parse_budget(text):
    """A chunk budget's text -> its value: `2^19`, `524288` or `none` ->
    2**19, 524288 or None."""
    if text.lower() == "none":
        return None
    if "^" in text:
        base, power = text.split("^")
        return int(base) ** int(power)
    return int(text)


def budget_label(budget):
    """A chunk budget as a name: `2^19`, or `whole set` for None."""
    return "whole set" if budget is None else f"2^{budget.bit_length() - 1}"


def epoch_times():
    """A Keras callback whose `seconds` lists each epoch's wall time."""
    import keras

    class EpochTimes(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds = []

        def on_epoch_begin(self, epoch, logs=None):
            self.started = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append(time.perf_counter() - self.started)

    return EpochTimes()


# Models.


def laf_and_full_sets(num_sets, set_size, features, units):
    """A built `LAF(units)`, and full padded sets of uniform values for it:
    `(layer, values, mask)`, the sets as NumPy arrays."""
    import keras_laf

    rng = np.random.default_rng(0)
    values = rng.uniform(size=(num_sets, set_size, features))
    mask = np.ones((num_sets, set_size), bool)
    layer = keras_laf.LAF(units)
    layer.build(values.shape)
    return layer, values.astype("float32"), mask


def padded_digits(sets, labels):
    """Digit sets as padded int arrays, a float mask and labels:
    `((digits, mask), labels)`, labels `(num_sets, 1)`."""
    size = max(len(elements) for elements in sets)
    digits = np.zeros((len(sets), size), "int32")
    mask = np.zeros((len(sets), size), "float32")
    for row, elements in enumerate(sets):
        digits[row, : len(elements)] = elements
        mask[row, : len(elements)] = 1.0
    return (digits, mask), np.asarray(labels, "float32")[:, None]


def count_only_laf_arguments():
    """The closed-forms preset's `LAF` arguments as they were before its
    sum anchor: a count alone at unit 0
    (`AnchoredLAF(leading_anchors=[count])`), for comparisons."""
    import keras_laf
    from keras_laf.aggregations.laf.presets import LEADING_ANCHORS

    count = [anchor for anchor in LEADING_ANCHORS if anchor["name"] == "count"]
    return {
        "preset": "closed_forms",
        **{
            f"{part[:-1]}_initializer": keras_laf.initializers.AnchoredLAF(
                part, leading_anchors=count
            )
            for part in ("exponents", "coefficients")
        },
    }


def pooling_aggregation(name, units, squashed=True):
    """A pooling of `keras_laf.aggregations` by name: `"deepsets"` (3 sums,
    3 maxima, 3 means), `"laf"` (`LAF(units)`, the default preset), any
    other name; `"+"` joins several into a `keras_laf.MultiAggregation`,
    which squashes LAF's elements into [0, 1] unless they are `squashed`
    already."""
    import keras_laf
    from keras_laf import aggregations

    if name == "laf":
        return keras_laf.LAF(units, name="laf")
    if "+" not in name:
        return aggregations.get(name, name="aggregation")
    return aggregations.get(
        name.split("+"),
        units=units,
        name="aggregation",
        **({"laf_activation": None} if squashed else {}),
    )


def integer_model(aggregation, pipeline="arrays"):
    """The paper's integer model, Embedding(10, 10) -> sigmoid ->
    `aggregation` -> Dense(1). For the `"arrays"` pipeline it takes padded
    digits and a mask (`padded_digits`); for `"ragged"` and `"padded"`
    batches of `tf.data` it is `keras_laf.models.deep_sets`, as a user
    builds it."""
    import keras

    from keras_laf.models import deep_sets

    if pipeline != "arrays":
        return deep_sets(
            vocabulary_size=10,
            phi_units=(),
            aggregation=aggregation,
            ragged=pipeline == "ragged",
        )
    digits = keras.Input(shape=(None,), dtype="int32", name="digits")
    mask = keras.Input(shape=(None,), dtype="float32", name="mask")
    elements = keras.layers.Embedding(10, 10, name="embedding")(digits)
    elements = keras.layers.Activation("sigmoid", name="sigmoid")(elements)
    aggregated = aggregation(elements, mask=keras.ops.cast(mask, "bool"))
    output = keras.layers.Dense(1, name="output")(aggregated)
    return keras.Model([digits, mask], output, name="integer_laf")


def compile_integer_model(model, learning_rate, pipeline="arrays"):
    """MAE and Adam; the arrays harness runs 16 steps per execution, the
    `tf.data` pipelines compile plainly, as a user would."""
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss="mae",
        steps_per_execution=16 if pipeline == "arrays" else 1,
    )


def point_cloud_model(pooling, width, learning_rate, metrics=("accuracy",)):
    """`keras_laf.models.point_cloud_classifier` for the 8 generated solids
    with a pooling (a name of the classifier's, `"+"` joining several, or
    an aggregation layer), no
    dropout, padded clouds with a mask, compiled with Adam at
    `learning_rate`."""
    import keras

    from keras_laf.models import point_cloud_classifier

    model = point_cloud_classifier(
        num_classes=8,
        aggregation=(
            pooling.split("+")
            if isinstance(pooling, str) and "+" in pooling
            else pooling
        ),
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


# The point-cloud task of `keras_laf.models.point_cloud_classifier`: 1,600
# training and 400 test clouds of 100 points from 8 generated solids,
# width 64, no dropout, Adam 3e-3, batches of 32, 12 epochs, padded clouds
# with a mask.
POINT_CLOUD_SETTINGS = {
    "train_size": 1_600,
    "test_size": 400,
    "num_points": 100,
    "width": 64,
    "epochs": 12,
    "batch_size": 32,
    "learning_rate": 3e-3,
}


def padded_clouds(clouds, batch_size, shuffle_seed=None):
    """Batches of `((points, mask), labels)`: every point is real."""
    import tensorflow as tf

    dataset = clouds.to_dataset(
        batch_size, shuffle=shuffle_seed is not None, seed=shuffle_seed
    )
    return dataset.map(
        lambda points, labels: (
            (points, tf.ones(tf.shape(points)[:2], "float32")),
            labels,
        )
    )


def point_cloud_accuracy(pooling, seed):
    """Trains the point-cloud classifier with `pooling` (as in
    `point_cloud_model`) under `POINT_CLOUD_SETTINGS` from `seed`:
    `{"accuracy": test accuracy, "train_seconds": ..., "epoch_seconds":
    [...]}`, the test clouds the same for every seed."""
    import keras

    from laf_experiments.data import make_solid_point_clouds

    settings = POINT_CLOUD_SETTINGS
    keras.utils.set_random_seed(seed)
    train = make_solid_point_clouds(
        settings["train_size"], settings["num_points"], seed=seed
    )
    test = make_solid_point_clouds(
        settings["test_size"], settings["num_points"], seed=999
    )
    model = point_cloud_model(
        pooling, settings["width"], settings["learning_rate"], metrics=()
    )
    times = epoch_times()
    started = time.perf_counter()
    model.fit(
        padded_clouds(train, settings["batch_size"], shuffle_seed=seed),
        epochs=settings["epochs"],
        verbose=0,
        callbacks=[times],
    )
    seconds = time.perf_counter() - started
    logits = model.predict(padded_clouds(test, 256), verbose=0)
    keras.backend.clear_session()
    return {
        "accuracy": float(np.mean(np.argmax(logits, -1) == test.labels)),
        "train_seconds": seconds,
        "epoch_seconds": times.seconds,
    }


def run_child(module, function, environment, **kwargs):
    """Runs `function(**kwargs)` of the benchmark `module` (its `--child`
    entry) in a fresh process with `environment`, and returns what the
    child printed as JSON on its last line.

    Raises:
        RuntimeError: the child failed; the message ends with its stderr.
    """
    request = {"function": function, "kwargs": kwargs}
    completed = subprocess.run(
        [sys.executable, "-m", module, "--child", json.dumps(request)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPOSITORY,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{function}{kwargs} failed:\n{completed.stderr[-5000:]}"
        )
    return json.loads(completed.stdout.strip().splitlines()[-1])

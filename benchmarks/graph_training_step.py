"""A training step of the graph network on batches of graphs of varying size.

`graph_network(num_node_features=2, aggregation_kwargs={"units": 8},
hidden_units=16, num_layers=2)` trained with `train_on_batch` on 48
random graphs of 5 to 30 nodes (each pair of nodes joined with
probability 0.2, in both directions), in batches of 8 graphs, in three
forms, each with a model of its own:

- `fresh`: the batches drawn afresh each epoch (a new shuffle), as the
  disjoint unions they are: every batch a new shape;
- `bucketed`: the same batches padded by
  `keras_laf.datasets.pad_graph_batch` to buckets of their numbers of
  nodes, edges and graphs, with the sample weights that keep padding out
  of the loss;
- `fixed`: 8 copies of one graph, the same batch at every step (one
  shape, the least a compiled step can cost).

The figure of each form is the median step of epoch `--epochs` (the
third by default; 6 steps an epoch). On JAX the script also counts the
XLA compilations of each form's training step (from JAX's compilation
log) and the distinct batch shapes it met. `--against` reads the record of a run
on another backend and gives each form's ratio to that run's.

    KERAS_BACKEND=tensorflow python -m benchmarks.graph_training_step \\
        --output /tmp/graphs_tf.json
    KERAS_BACKEND=jax python -m benchmarks.graph_training_step \\
        --against /tmp/graphs_tf.json
    KERAS_BACKEND=jax python -m benchmarks.graph_training_step \\
        --forms fresh  # one compilation per batch
"""

import argparse
import json
import logging
import os
import platform
import sys
import time

import keras
import numpy as np

from benchmarks.common import write_record
from keras_laf.datasets import disjoint_union
from keras_laf.datasets import pad_graph_batch
from keras_laf.models import graph_network

FORMS = ("fresh", "bucketed", "fixed")
NUM_GRAPHS = 48
BATCH_SIZE = 8
NODES = (5, 30)
EDGE_PROBABILITY = 0.2


def random_graphs(seed=0):
    """48 graphs: node features (n, 2), edges (m, 2), node labels (n, 3);
    and graph labels (48, 3)."""
    rng = np.random.default_rng(seed)
    features, edges, node_labels = [], [], []
    for _ in range(NUM_GRAPHS):
        n = int(rng.integers(NODES[0], NODES[1] + 1))
        upper = np.triu(rng.uniform(size=(n, n)) < EDGE_PROBABILITY, 1)
        sources, targets = np.nonzero(upper | upper.T)
        features.append(rng.uniform(size=(n, 2)).astype("float32"))
        edges.append(np.stack([sources, targets], 1).astype("int32"))
        node_labels.append(rng.uniform(size=(n, 3)).astype("float32"))
    graph_labels = rng.uniform(size=(NUM_GRAPHS, 3)).astype("float32")
    return features, edges, node_labels, graph_labels


def epoch_batches(form, graphs, rng):
    """One epoch's batches `(inputs, targets, sample_weights or None)`."""
    features, edges, node_labels, graph_labels = graphs
    if form == "fixed":
        chosen = [np.zeros(BATCH_SIZE, int)] * (NUM_GRAPHS // BATCH_SIZE)
    else:
        order = rng.permutation(NUM_GRAPHS)
        chosen = np.split(order, NUM_GRAPHS // BATCH_SIZE)
    batches = []
    for indices in chosen:
        inputs, targets = disjoint_union(
            [features[i] for i in indices],
            [edges[i] for i in indices],
            [node_labels[i] for i in indices],
            graph_labels[indices],
            pad=False,
        )
        if form == "bucketed":
            batches.append(pad_graph_batch(inputs, targets))
        else:
            batches.append((inputs, targets, None))
    return batches


class CompileCounter:
    """Counts the XLA compilations of Keras's training step on JAX (from
    JAX's compilation log; none counted elsewhere)."""

    MESSAGE = "Finished XLA compilation of jit(train_step)"

    def __init__(self):
        self.count = 0
        if keras.config.backend() == "jax":
            import jax

            jax.config.update("jax_log_compiles", True)
            handler = logging.Handler()
            handler.emit = self._record
            logger = logging.getLogger("jax")
            logger.addHandler(handler)
            # The log is read here, not printed.
            logger.propagate = False

    def _record(self, record):
        if record.getMessage().startswith(self.MESSAGE):
            self.count += 1


def time_form(form, graphs, epochs, counter):
    keras.utils.set_random_seed(0)
    model = graph_network(
        num_node_features=2,
        aggregation_kwargs={"units": 8},
        hidden_units=16,
        num_layers=2,
    )
    model.compile(optimizer="adam", loss="mse")
    rng = np.random.default_rng(1)
    compiles_before = counter.count
    shapes = set()
    epoch_steps = []
    for _ in range(epochs):
        steps = []
        for inputs, targets, weights in epoch_batches(form, graphs, rng):
            shapes.add(tuple(len(inputs[key]) for key in sorted(inputs)))
            start = time.perf_counter()
            model.train_on_batch(inputs, targets, sample_weight=weights)
            steps.append(time.perf_counter() - start)
        epoch_steps.append(steps)
    return {
        "form": form,
        "median_step_ms": 1e3 * float(np.median(epoch_steps[-1])),
        "epoch_median_steps_ms": [
            1e3 * float(np.median(steps)) for steps in epoch_steps
        ],
        "compilations": (
            counter.count - compiles_before
            if keras.config.backend() == "jax"
            else None
        ),
        "batch_shapes": len(shapes),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--forms",
        type=lambda text: text.split(","),
        default=None,
        help="comma-separated forms among fresh,bucketed,fixed (all on "
        "TensorFlow; bucketed,fixed on JAX, where fresh compiles once a "
        "batch)",
    )
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--against", help="a record of this script on another backend"
    )
    parser.add_argument("--output", help="write the record as JSON here")
    args = parser.parse_args(argv)
    backend = keras.config.backend()
    forms = args.forms or (
        ["bucketed", "fixed"] if backend == "jax" else list(FORMS)
    )
    unknown = sorted(set(forms) - set(FORMS))
    if unknown:
        parser.error(f"unknown forms {unknown}; choose among {list(FORMS)}")
    graphs = random_graphs()
    counter = CompileCounter()
    load_before = os.getloadavg()
    results = [time_form(form, graphs, args.epochs, counter) for form in forms]
    record = {
        "benchmark": "graph_training_step",
        "backend": backend,
        "keras": keras.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "epochs": args.epochs,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "forms": results,
    }
    by_form = {result["form"]: result for result in results}
    if "fixed" in by_form:
        record["ratios_to_fixed"] = {
            form: result["median_step_ms"] / by_form["fixed"]["median_step_ms"]
            for form, result in by_form.items()
        }
    if args.against:
        other = json.loads(open(args.against).read())
        other_forms = {f["form"]: f for f in other["forms"]}
        record["against"] = {
            "backend": other["backend"],
            "ratios": {
                f"{form} / {other_form}": result["median_step_ms"]
                / other_forms[other_form]["median_step_ms"]
                for form, result in by_form.items()
                for other_form in other_forms
                if form == other_form
                or (form == "bucketed" and other_form == "fresh")
            },
        }
    print(
        f"\n{backend}, epoch {args.epochs}'s median step, load "
        f"{load_before[0]:.2f} -> {record['load_average_after'][0]:.2f}"
    )
    print(f"{'form':<10}{'ms':>10}{'compiles':>10}{'shapes':>8}")
    for result in results:
        compiles = result["compilations"]
        print(
            f"{result['form']:<10}{result['median_step_ms']:>10.2f}"
            f"{'-' if compiles is None else compiles:>10}"
            f"{result['batch_shapes']:>8}"
        )
    for name, ratio in record.get("ratios_to_fixed", {}).items():
        print(f"{name} / fixed: {ratio:.2f}")
    for name, ratio in record.get("against", {}).get("ratios", {}).items():
        print(f"{name} ({record['against']['backend']}): {ratio:.2f}")
    write_record(args.output, record)


if __name__ == "__main__":
    sys.exit(main())

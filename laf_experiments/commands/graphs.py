"""`keras-laf graphs`: the multi-task graph-properties benchmark of PNA.

Section 4.5 of the LAF paper: random graphs of many types (Corso et al.,
"Principal Neighbourhood Aggregation for Graph Nets", NeurIPS 2020), each
labelled with three node properties (N1 shortest-path length from a
source node, N2 eccentricity, N3 Laplacian features) and three graph
properties (G1 connectivity, G2 diameter, G3 spectral radius), learned
jointly by one message-passing network (`keras_laf.models.graph_network`)
whose neighbour aggregation is LAF (`laf`), PNA's aggregators (mean, max,
min, std) with its degree scalers (identity, amplification, attenuation)
(`pna`) or without them (`pna_star`, PNA's "PNA*"), or the sum or the
maximum of an MPNN (`sum`, `max`); or whose layers are the graph
convolutions GIN, GCN or GAT (`gin`, `gcn`, `gat`); `baseline` predicts
the mean of the training labels of every task (PNA's baseline). The score of
a task is the log10 of its mean squared error on normalised labels, on
test graphs of the training sizes (15 to 24 nodes) and on larger ones, to
see how the aggregations extrapolate.

The graphs are generated once (data seed 0, with networkx, the
`keras-laf[graphs]` extra); the seeds of a run change the initial weights
and the order of the training graphs. Every method shares one graph
readout (`--readout`, the mean of the node states by default), as PNA's
models share theirs, so the neighbour aggregation is the only difference.

Default run: 512 training, 128 validation and 64 test graphs per size
range, 10 epochs in batches of 16 graphs, 8 LAF units, 16 hidden units,
4 layers, one seed, the nine methods; PNA's learning rate, 3e-3, halved
after 10 epochs without a lower validation loss. 15 to 25 s per method
on two CPU cores, LAF about 50 s. It is a small-scale run, not the
paper's result: GCN and GAT stay near the baseline at 10 epochs
(RESULTS.md, Graphs).
"""

import argparse
import json
import math
import pathlib

import numpy as np

from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data.constants import EXTRAPOLATION_SIZES
from laf_experiments.data.constants import GRAPH_TASKS
from laf_experiments.data.constants import NODE_TASKS
from laf_experiments.data.constants import TRAIN_SIZES
from laf_experiments.errors import log
from laf_experiments.errors import require
from laf_experiments.runner import cached
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

METHODS = (
    "laf",
    "pna",
    "pna_star",
    "gin",
    "gcn",
    "gat",
    "sum",
    "max",
    "baseline",
)
METHOD_LABELS = {
    "laf": "LAF",
    "pna": "PNA",
    "pna_star": "PNA* (no scalers)",
    "gin": "GIN",
    "gcn": "GCN",
    "gat": "GAT",
    "sum": "MPNN (sum)",
    "max": "MPNN (max)",
    "baseline": "Baseline (training mean)",
}
# The message-passing layer of each method (`graph_network`'s
# `convolution`), and of the `MessagePassing` methods their neighbour
# aggregation and degree scalers; `aggregation` also gives the readout of
# `--readout method` (GIN's sum, GCN's and GAT's mean). `baseline` has no
# network.
CONVOLUTIONS = {"gin": "gin", "gcn": "gcn", "gat": "gat"}
AGGREGATIONS = {
    "laf": "laf",
    "pna": ("mean", "max", "min", "std"),
    "pna_star": ("mean", "max", "min", "std"),
    "gin": "sum",
    "gcn": "mean",
    "gat": "mean",
    "sum": "sum",
    "max": "max",
}
SCALERS = {
    "laf": ("identity",),
    "pna": ("identity", "amplification", "attenuation"),
    "pna_star": ("identity",),
    "sum": ("identity",),
    "max": ("identity",),
}
BASELINE = "baseline"
# The graph readout: a fixed aggregation shared by every method, or each
# method's own neighbour aggregation ("method").
READOUTS = ("mean", "sum", "max", "method")
TASKS = NODE_TASKS + GRAPH_TASKS
TASK_LABELS = dict(zip(TASKS, ("N1", "N2", "N3", "G1", "G2", "G3")))
# The record of the benchmark's score, the mean log10 MSE of the tasks.
AVERAGE = "average"
# log10 MSE of the LAF paper's graph-properties table (test graphs of the
# training sizes), tasks in `TASKS` order.
PAPER = {
    "pna": (-2.89, -2.89, -3.77, -2.61, -3.04, -3.57),
    "laf": (-2.13, -2.20, -1.67, -2.35, -2.77, -3.63),
}
KEY_FIELDS = ("method", "seed")
DATA_SEED = 0
PREDICT_BATCH_SIZE = 128
TABLE = "table.md"
PLOT = "log10_mse.png"
# One colour per method, LAF and PNA as in the other figures.
_COLORS = {
    "laf": "tab:red",
    "pna": "tab:green",
    "pna_star": "tab:olive",
    "gin": "tab:orange",
    "gcn": "tab:brown",
    "gat": "tab:pink",
    "sum": "tab:blue",
    "max": "tab:purple",
    "baseline": "tab:gray",
}
# A marker and a line style per method, so that lines that overlap stay
# apart.
_MARKERS = {
    "laf": ("o", "-"),
    "pna": ("^", "-"),
    "pna_star": ("v", "--"),
    "gin": ("s", "-."),
    "gcn": ("D", ":"),
    "gat": ("P", "--"),
    "sum": ("X", "-."),
    "max": ("<", ":"),
    "baseline": ("_", "--"),
}

# Batches of 16 graphs at PNA's learning rate, halved after 10 epochs
# without progress (the Table 4 study's schedule): chosen over batches of
# 64 at 1e-3 by a seed study at this budget (RESULTS.md, Graphs).
SCHEDULE = {"batch_size": 16, "learning_rate": 3e-3, "lr_patience": 10}
DEFAULTS = {
    "train_size": 512,
    "val_size": 128,
    "test_size": 64,
    "epochs": 10,
    "seeds": 1,
    "laf_units": 8,
    "hidden_units": 16,
    "num_layers": 4,
    "extrapolation_sizes": EXTRAPOLATION_SIZES,
    **SCHEDULE,
}
QUICK = {
    "train_size": 32,
    "val_size": 16,
    "test_size": 8,
    "epochs": 1,
    "seeds": 1,
    "laf_units": 2,
    "hidden_units": 8,
    "num_layers": 2,
    "extrapolation_sizes": ((45, 50), (95, 100)),
    **SCHEDULE,
}


def _ranges_text(ranges):
    return ",".join(f"{low}-{high - 1}" for low, high in ranges)


HELP = "graph properties: LAF, PNA, GIN, GCN, GAT, MPNN (PNA benchmark)"
DESCRIPTION = f"""\
Learns three node and three graph properties of random graphs jointly
(PNA's multi-task benchmark) with a message-passing network whose
neighbour aggregation is LAF or a baseline, and tests it on graphs of the
training sizes ({_ranges_text([TRAIN_SIZES])} nodes) and larger ones.

Methods: laf (LAF units on sigmoid messages), pna (mean, max, min and std
with the identity, amplification and attenuation scalers), pna_star (the
same aggregators without scalers), gin, gcn and gat (GIN, GCN and GAT
layers in place of the message passing), sum and max (MPNN), baseline
(the mean of the training labels, no network). The network: a node
embedding, --num-layers message-passing layers of --hidden-units units
with a shared GRU update, a graph readout (--readout) and three-layer
output MLPs; trained with Adam, the sum of
the node and graph MSE losses and a learning-rate decay on validation
plateaus. Scores: log10 of each task's MSE on labels divided by their
training maxima (N1 shortest path, N2 eccentricity, N3 Laplacian
features, G1 connectivity, G2 diameter, G3 spectral radius).

Writes results.json, results.csv (method, split, task, seed, log10_mse),
summary.csv, {TABLE} (our scores beside the paper's) and {PLOT}.
Needs networkx: pip install 'keras-laf[experiments]'.

The default run ({DEFAULTS["train_size"]} training graphs, \
{DEFAULTS["epochs"]} epochs, {DEFAULTS["laf_units"]} LAF units, one seed)
takes up to a few minutes per method on two CPU cores (pick some with
--methods); it is a small-scale run, not the paper's result. The scale
of the paper (PNA's splits, 100 LAF units; days on a CPU):

  keras-laf graphs --num-train 5120 --num-validation 640 --num-test 1280 \\
      --laf-units 100 --epochs 1000 --batch-size 128 --seeds 3 --patience 30

(--patience stops each run once its validation loss has not improved for
that many epochs and keeps its best epoch's weights.)
"""


def node_ranges(text):
    """Parses comma-separated node-count ranges, e.g. `20-24,95-99`.

    Returns:
        A sorted tuple of half-open ranges `(low, high + 1)`.
    """
    ranges = set()
    for item in (item.strip() for item in text.split(",")):
        low, _, high = item.partition("-")
        try:
            low, high = int(low), int(high)
        except ValueError:
            low = high = 0
        if not 2 <= low <= high:
            raise argparse.ArgumentTypeError(
                "expected comma-separated node-count ranges LOW-HIGH with "
                f"2 <= LOW <= HIGH, such as 20-24,95-99, received {text!r}"
            )
        ranges.add((low, high + 1))
    return tuple(sorted(ranges))


def add_arguments(parser):
    """Adds the arguments of `keras-laf graphs`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--methods",
        type=choice_list(METHODS, "method"),
        default=METHODS,
        help="comma-separated methods: laf, pna, pna_star (PNA without "
        "scalers), gin, gcn, gat, sum (MPNN), max (MPNN), baseline "
        f"(training means) (default: {','.join(METHODS)})",
    )
    group.add_argument(
        "--extrapolation-sizes",
        type=node_ranges,
        metavar="LOW-HIGH,...",
        help="node counts of the test sets beyond the training sizes, one "
        "test set each (default: "
        f"{_ranges_text(DEFAULTS['extrapolation_sizes'])}; --quick: "
        f"{_ranges_text(QUICK['extrapolation_sizes'])})",
    )
    group.add_argument(
        "--readout",
        choices=READOUTS,
        default="mean",
        help="the graph readout of every method, or 'method' for each "
        "method's own aggregation (a LAF readout may diverge: its outputs "
        "start far from the labels) (default: mean)",
    )
    group = parser.add_argument_group("model")
    for name, flag, text in (
        ("laf_units", "--laf-units", "LAF units of each layer"),
        ("hidden_units", "--hidden-units", "node state size"),
        ("num_layers", "--num-layers", "message-passing layers"),
    ):
        group.add_argument(
            flag,
            type=positive_int,
            metavar="N",
            help=f"{text} (default: {DEFAULTS[name]}; --quick: {QUICK[name]})",
        )
    add_common_arguments(parser, "graphs", DEFAULTS, QUICK)
    group = parser.add_argument_group("early stopping")
    group.add_argument(
        "--patience",
        type=positive_int,
        metavar="N",
        help="stop a run after N epochs without a lower validation loss "
        "and keep the weights of its best epoch; the count and the best "
        "weights are backed up every epoch, so a resumed run goes on "
        "counting (default: train every --epochs epoch)",
    )
    group = parser.add_argument_group("the benchmark's names of the sizes")
    for flag, dest, text in (
        ("--num-train", "train_size", "--train-size"),
        ("--num-validation", "val_size", "--val-size"),
        ("--num-test", "test_size", "--test-size"),
    ):
        group.add_argument(
            flag,
            dest=dest,
            type=positive_int,
            metavar="N",
            help=f"the same as {text}",
        )


def build_model(
    method,
    laf_units,
    hidden_units,
    num_layers,
    readout,
    degree_histogram,
    laf_preset=None,
):
    """The benchmark's network with the method's neighbour aggregation.

    Args:
        method: one of `METHODS` but `"baseline"` (see `baseline_model`).
        laf_units: LAF units of each layer (LAF only).
        hidden_units: the node state size.
        num_layers: the number of message-passing layers.
        readout: one of `READOUTS`.
        degree_histogram: the number of training nodes of each in-degree
            (`keras_laf.degree_histogram`), the scalers' statistics.
        laf_preset: the preset of the LAF layers. Defaults to `None`: the
            layer's default.
    """
    from keras_laf import aggregations
    from keras_laf.models import graph_network

    aggregation = AGGREGATIONS[method]
    if isinstance(aggregation, tuple):
        aggregation = list(aggregation)
    return graph_network(
        aggregation=aggregation,
        # LAF's units and preset (for a list, those of its LAF member).
        aggregation_kwargs=aggregations.former_shortcut_kwargs(
            aggregation, laf_units, laf_preset
        ),
        hidden_units=hidden_units,
        num_layers=num_layers,
        scalers=SCALERS.get(method, ("identity",)),
        degree_histogram=degree_histogram,
        readout_aggregation=None if readout == "method" else readout,
        convolution=CONVOLUTIONS.get(method, "message_passing"),
        name=f"graph_network_{method}",
    )


# Files of `early_stopping` in a run's backup directory, beside those of
# `BackupAndRestore`: its count and the weights of the best epoch so far.
EARLY_STOPPING_STATE = "early_stopping.json"
BEST_WEIGHTS = "best_weights.npz"


def early_stopping(patience, backup_directory):
    """Early stopping on the validation loss that survives resumption.

    Keras's `EarlyStopping` keeps its count and its best weights in
    memory, so a run resumed by `BackupAndRestore` would count afresh from
    the restored epoch and could not return to a best epoch trained before
    the interruption. This callback writes both to `backup_directory`
    after every epoch (after `BackupAndRestore` has written its own files
    there) and reads them back when training starts. An epoch that
    `BackupAndRestore` saved but this callback did not record (an
    interruption between the two writes) counts as one without
    improvement.

    Args:
        patience: int. Epochs without a lower validation loss after which
            training stops.
        backup_directory: the run's `BackupAndRestore` directory.

    Returns:
        A `keras.callbacks.Callback` that stops training after `patience`
        epochs without improvement and sets the model's weights to those
        of its best epoch when training ends. Its attributes
        `epochs_trained`, `best_epoch` (1-based) and `best_loss` describe
        the run once it has ended.
    """
    import keras

    directory = pathlib.Path(backup_directory)
    state_path = directory / EARLY_STOPPING_STATE
    weights_path = directory / BEST_WEIGHTS

    class ResumableEarlyStopping(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.best_loss = math.inf
            self.best_epoch = 0
            self.epochs_trained = runner.backed_up_epoch(directory)
            self.wait = 0
            self.best_weights = None
            try:
                state = json.loads(state_path.read_text())
                with np.load(weights_path) as arrays:
                    weights = [arrays[f"w{i}"] for i in range(len(arrays))]
            except (OSError, ValueError, KeyError):
                return
            self.best_loss = state["best_loss"]
            self.best_epoch = state["best_epoch"]
            # Epochs restored by the backup but not recorded here.
            missed = max(0, self.epochs_trained - state["epochs"])
            self.wait = state["wait"] + missed
            self.best_weights = weights
            if self.wait >= patience:
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            loss = (logs or {}).get("val_loss")
            self.epochs_trained = epoch + 1
            if loss is not None and loss < self.best_loss:
                self.best_loss = float(loss)
                self.best_epoch = epoch + 1
                self.wait = 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
            if directory.is_dir():
                self._save()
            if self.wait >= patience:
                self.model.stop_training = True

        def _save(self):
            # Written to temporary names and renamed, so an interruption
            # leaves the previous state whole.
            if self.wait == 0:
                partial = weights_path.with_suffix(".partial.npz")
                np.savez(
                    partial,
                    **{f"w{i}": w for i, w in enumerate(self.best_weights)},
                )
                partial.replace(weights_path)
            partial = state_path.with_suffix(".partial")
            partial.write_text(
                json.dumps(
                    {
                        "epochs": self.epochs_trained,
                        "best_epoch": self.best_epoch,
                        "best_loss": self.best_loss,
                        "wait": self.wait,
                    }
                )
            )
            partial.replace(state_path)

        def on_train_end(self, logs=None):
            if self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    return ResumableEarlyStopping()


def training_degree_histogram(graphs):
    """The in-degree histogram of the training `PropertyGraphs`, the
    statistics of PNA's scalers (`keras_laf.degree_histogram`)."""
    from keras_laf import degree_histogram

    inputs, _ = graphs.batch()
    return degree_histogram(
        inputs["edge_target"], num_nodes=len(inputs["node_features"])
    )


def baseline_model(graphs):
    """PNA's baseline: predicts the mean training label of every task.

    Args:
        graphs: the training `PropertyGraphs`, with normalised labels.

    Returns:
        A `keras.Model` with the inputs and outputs of `graph_network`
        whose outputs are constants: the mean over the training nodes of
        each node label and over the training graphs of each graph label.
    """
    import keras

    node_means = np.mean(np.concatenate(graphs.node_labels), axis=0)
    graph_means = np.mean(graphs.graph_labels, axis=0)
    inputs = {
        "node_features": keras.Input((None,), name="node_features"),
        "edge_source": keras.Input((), dtype="int32", name="edge_source"),
        "edge_target": keras.Input((), dtype="int32", name="edge_target"),
        "node_graph_ids": keras.Input((), dtype="int32", name="node_graph_ids"),
        "nodes_per_graph": keras.Input(
            (), dtype="int32", name="nodes_per_graph"
        ),
    }

    def constant_rows(per_row, means):
        # (rows, tasks): `means` repeated once per entry of `per_row`.
        rows = keras.ops.ones_like(keras.ops.cast(per_row, "float32"))[:, None]
        return rows * keras.ops.convert_to_tensor(means, "float32")[None]

    node_outputs = keras.layers.Lambda(
        lambda ids: constant_rows(ids, node_means), name="node_outputs"
    )(inputs["node_graph_ids"])
    graph_outputs = keras.layers.Lambda(
        lambda counts: constant_rows(counts, graph_means),
        name="graph_outputs",
    )(inputs["nodes_per_graph"])
    return keras.Model(
        inputs,
        {"node_outputs": node_outputs, "graph_outputs": graph_outputs},
        name="graph_baseline",
    )


def graph_batches(graphs, batch_size, shuffle=False, seed=None):
    """The batches of `PropertyGraphs` that `fit` trains on.

    On JAX, where every batch shape is a compilation, the disjoint unions
    padded to a few sizes with sample weights that keep padding out of the
    loss (`keras_laf.datasets.GraphBatches`); elsewhere the `tf.data`
    pipeline of `PropertyGraphs.to_dataset`, whose unions TensorFlow and
    PyTorch run as they are, without the padding's extra work.
    """
    import keras

    if keras.config.backend() != "jax":
        return graphs.to_dataset(batch_size, shuffle=shuffle, seed=seed)
    from keras_laf.datasets import GraphBatches

    return GraphBatches(
        graphs.node_features,
        graphs.edges,
        graphs.node_labels,
        graphs.graph_labels,
        batch_size=batch_size,
        shuffle=shuffle,
        seed=seed,
    )


def predictions(model, graphs, batch_size):
    """The model's node and graph outputs on `PropertyGraphs`, in order:
    a dict of `"node_outputs"` and `"graph_outputs"` arrays. On JAX the
    batches are padded (`graph_batches`) and the padding's rows dropped."""
    import keras

    if keras.config.backend() != "jax":
        return model.predict(graphs.to_dataset(batch_size), verbose=0)
    batches = graph_batches(graphs, batch_size)
    outputs = {name: [] for name in ("node_outputs", "graph_outputs")}
    for index in range(len(batches)):
        inputs, _, weights = batches[index]
        predicted = model.predict_on_batch(inputs)
        for name, rows in outputs.items():
            rows.append(np.asarray(predicted[name])[weights[name] > 0])
    return {name: np.concatenate(rows) for name, rows in outputs.items()}


def task_errors(model, graphs, batch_size=128):
    """The mean squared error of each task of the benchmark.

    Args:
        model: a model of `graph_network` with 3 node and 3 graph outputs.
        graphs: a `PropertyGraphs`, with normalised labels.
        batch_size: int. Graphs per prediction batch. Defaults to `128`.

    Returns:
        A dict: the MSE of each task of `NODE_TASKS` (over all nodes) and
        `GRAPH_TASKS` (over all graphs), and `"average_log10_mse"`, the
        mean over the six tasks of log10(MSE), the benchmark's score.
    """
    predicted = predictions(model, graphs, batch_size)
    node_labels = np.concatenate(graphs.node_labels)
    errors = {}
    node_errors = np.mean((predicted["node_outputs"] - node_labels) ** 2, 0)
    graph_errors = np.mean(
        (predicted["graph_outputs"] - graphs.graph_labels) ** 2, 0
    )
    for task, error in zip(TASKS, [*node_errors, *graph_errors]):
        errors[task] = float(error)
    errors["average_log10_mse"] = float(
        np.mean(np.log10([errors[task] for task in TASKS]))
    )
    return errors


def split_name(low, high):
    """The name of the test split of node counts `[low, high)`."""
    return f"{low}-{high - 1}"


def graph_records(runs):
    """One record per run, test split and task (and the average)."""
    return [
        {
            "method": run["method"],
            "split": item["split"],
            "task": task,
            "seed": run["seed"],
            "log10_mse": value,
        }
        for run in runs
        for item in run["test"]
        for task, value in item["log10_mse"].items()
    ]


def _log10(value):
    return math.log10(value) if value > 0 else float("nan")


def run(args):
    """Runs `keras-laf graphs`."""
    import keras

    from laf_experiments.data.graph_properties import make_graph_property_splits

    require("networkx", "networkx", "keras-laf graphs")
    experiment = args.experiment
    settings = resolve_settings(
        args,
        extra_names=(
            "laf_units",
            "hidden_units",
            "num_layers",
            "extrapolation_sizes",
        ),
    )
    settings["readout"] = args.readout
    settings["patience"] = args.patience
    settings["data_seed"] = DATA_SEED
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        graph_records,
        group_fields=("method", "split", "task"),
        value_field="log10_mse",
    )
    test_sizes = (TRAIN_SIZES, *args.extrapolation_sizes)

    def make_splits(key):
        log(
            experiment,
            f"generating {args.train_size} training, {args.val_size} "
            f"validation and {len(test_sizes)} x {args.test_size} test "
            "graphs",
        )
        return make_graph_property_splits(
            num_train=args.train_size,
            num_validation=args.val_size,
            num_test=args.test_size,
            train_sizes=TRAIN_SIZES,
            test_sizes=test_sizes,
            seed=DATA_SEED,
        )

    # The same graphs for every run.
    splits = cached(make_splits, lambda key: DATA_SEED)

    def training_data(key):
        return (
            graph_batches(
                splits(key)["train"],
                args.batch_size,
                shuffle=True,
                seed=key["seed"],
            ),
            graph_batches(splits(key)["validation"], args.batch_size),
        )

    def evaluate(key, model):
        test = []
        for low, high in test_sizes:
            errors = task_errors(
                model, splits(key)[f"test-({low},{high})"], PREDICT_BATCH_SIZE
            )
            log10_mse = {task: _log10(errors[task]) for task in TASKS}
            log10_mse[AVERAGE] = errors["average_log10_mse"]
            test.append(
                {
                    "split": split_name(low, high),
                    "min_nodes": low,
                    "max_nodes": high - 1,
                    "mse": {task: errors[task] for task in TASKS},
                    "log10_mse": log10_mse,
                }
            )
        scores = test[0]["log10_mse"]
        tasks = " ".join(
            f"{TASK_LABELS[task]} {scores[task]:.2f}" for task in TASKS
        )
        summary = (
            f"log10 MSE on {test[0]['split']} nodes: {tasks}; average "
            f"{scores[AVERAGE]:.2f}, on {test[-1]['split']} nodes "
            f"{test[-1]['log10_mse'][AVERAGE]:.2f}"
        )
        if not np.isfinite(scores[AVERAGE]):
            summary += (
                "; training diverged (a loss of NaN), try a smaller "
                "--learning-rate"
            )
        return {"test": test}, summary

    def train(key, store):
        if key["method"] == BASELINE:
            # Nothing to train: the means of the training labels.
            model = baseline_model(splits(key)["train"])
            return model, {
                "epochs": 0,
                "train_seconds": 0.0,
                "resumed_from_epoch": 0,
                "val_loss": None,
            }
        callbacks = [keras.callbacks.TerminateOnNaN()]
        if args.patience:
            stopping = early_stopping(
                args.patience, store.backup_directory(**key)
            )
            callbacks.append(stopping)
        fitting = runner.fitting(
            args,
            settings,
            training_data,
            build_model=lambda key: build_model(
                key["method"],
                args.laf_units,
                args.hidden_units,
                args.num_layers,
                args.readout,
                training_degree_histogram(splits(key)["train"]),
                laf_preset=args.laf_preset,
            ),
            loss={"node_outputs": "mse", "graph_outputs": "mse"},
            callbacks=callbacks,
        )
        model, training = fitting(key, store)
        if args.patience:
            # The weights are the best epoch's: its validation loss.
            training.update(
                epochs=stopping.epochs_trained,
                best_epoch=stopping.best_epoch,
                val_loss=stopping.best_loss,
            )
        return model, training

    reports.run_methods(args, store, train, evaluate)
    reports.write_results(
        args,
        store,
        table=(
            TABLE,
            lambda: results_table(store.summary, settings, store.runs),
        ),
        figure=(PLOT, lambda: plot_results(store.summary)),
    )


def _find(summary, method, split, task):
    for record in summary:
        if (record["method"], record["split"], record["task"]) == (
            method,
            split,
            task,
        ):
            return record
    return None


def _cell(record):
    if record is None:
        return ""
    text = f"{record['log10_mse_mean']:.2f}"
    if record["num_seeds"] > 1:
        text += f" ± {record['log10_mse_std']:.2f}"
    return text


def _markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join(" --- " for _ in header) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _methods_and_splits(summary):
    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    splits = sorted(
        {record["split"] for record in summary},
        key=lambda name: tuple(int(part) for part in name.split("-")),
    )
    return methods, splits


def _training_lines(runs, settings):
    # Epochs trained and best epoch of every seed of each method: whether
    # early stopping ended a run before the epoch cap.
    trained = [run for run in runs if run["method"] != BASELINE]
    if not trained or settings.get("patience") is None:
        return []

    def seeds_text(values):
        return ", ".join(str(value) for value in values)

    rows = []
    for method in METHODS:
        own = sorted(
            (run for run in trained if run["method"] == method),
            key=lambda run: run["seed"],
        )
        if own:
            rows.append(
                [
                    METHOD_LABELS[method],
                    seeds_text(run["epochs"] for run in own),
                    seeds_text(run.get("best_epoch", "") for run in own),
                    f"{np.mean([run['train_seconds'] for run in own]):.0f}",
                ]
            )
    return [
        "",
        "## Training: epochs per seed",
        "",
        f"At most {settings['epochs']} epochs; a run stops after "
        f"{settings['patience']} epochs without a lower validation loss "
        "and keeps its best epoch's weights (fewer epochs than the cap: "
        "stopped on a plateau).",
        "",
        *_markdown(
            ["Method", "Epochs trained", "Best epoch", "Seconds per seed"],
            rows,
        ),
    ]


def results_table(summary, settings, runs=()):
    """The Markdown tables of `table.md`: ours beside the paper's.

    Args:
        summary: the records of `summary.csv` (`method`, `split`, `task`,
            `log10_mse_mean`, `log10_mse_std`, `num_seeds`).
        settings: the run's settings.
        runs: the recorded runs (`ResultStore.runs`). With early stopping
            (`settings["patience"]`), a last table gives each method's
            epochs trained and best epoch per seed. Defaults to none.

    Returns:
        The Markdown text: log10 MSE per task on the test graphs of the
        training sizes, the paper's rows first, then the average log10
        MSE of every test split.
    """
    methods, splits = _methods_and_splits(summary)
    seeds = sorted({record["num_seeds"] for record in summary})
    test_split = split_name(*TRAIN_SIZES)
    header = ["Method", *(TASK_LABELS[task] for task in TASKS), "Average"]
    rows = []
    for method, scores in PAPER.items():
        rows.append(
            [
                f"{METHOD_LABELS[method]} (paper)",
                *(f"{score:.2f}" for score in scores),
                f"{np.mean(scores):.2f}",
            ]
        )
    for method in methods:
        rows.append(
            [f"{METHOD_LABELS[method]} (ours)"]
            + [
                _cell(_find(summary, method, test_split, task))
                for task in (*TASKS, AVERAGE)
            ]
        )
    seed_text = "/".join(map(str, seeds))
    epochs_text = str(settings["epochs"])
    if settings.get("patience") is not None:
        epochs_text = f"up to {epochs_text} (early stopping)"
    lines = [
        "# Graph-properties benchmark: log10 MSE (lower is better)",
        "",
        f"Test graphs of {test_split} nodes, the training sizes. N1 "
        "shortest path, N2 eccentricity, N3 Laplacian features, G1 "
        "connectivity, G2 diameter, G3 spectral radius; Average: the mean "
        "of the six (the paper's rows: the mean of its six numbers).",
        "",
        "Paper: Pellegrini et al., 'Learning Aggregation Functions', IJCAI "
        "2021, trained on PNA's full splits. Ours: "
        f"{settings['train_size']} training graphs, {epochs_text} "
        f"epochs, {settings['laf_units']} LAF units, "
        f"{settings['hidden_units']} hidden units, "
        f"{settings['num_layers']} layers, a {settings['readout']} readout; "
        f"mean (± std) over {seed_text} seed(s).",
        "",
        *_markdown(header, rows),
        "",
        "## Average log10 MSE by test-graph size (nodes)",
        "",
        *_markdown(
            ["Method", *splits],
            [
                [METHOD_LABELS[method]]
                + [
                    _cell(_find(summary, method, split, AVERAGE))
                    for split in splits
                ]
                for method in methods
            ],
        ),
        *_training_lines(runs, settings),
    ]
    return "\n".join(lines) + "\n"


def plot_results(summary):
    """The figure of `log10_mse.png`: scores per task, and against graph
    size.

    The left panel shows the log10 MSE of every task on the test graphs
    of the training sizes, one bar per method (with the paper's values as
    diamonds of the method's colour); the right one the average log10 MSE
    against the number of nodes of the test graphs, the training sizes
    shaded.
    """
    from matplotlib.figure import Figure

    methods, splits = _methods_and_splits(summary)
    test_split = split_name(*TRAIN_SIZES)
    figure = Figure(figsize=(12, 4.4), layout="constrained")
    tasks_axis, sizes_axis = figure.subplots(
        1, 2, gridspec_kw={"width_ratios": (3, 2)}
    )
    labels = [*(TASK_LABELS[task] for task in TASKS), "Average"]
    positions = np.arange(len(labels))
    width = 0.8 / len(methods)
    for index, method in enumerate(methods):
        label = METHOD_LABELS[method]
        records = [
            _find(summary, method, test_split, task)
            for task in (*TASKS, AVERAGE)
        ]
        means = [r["log10_mse_mean"] if r else np.nan for r in records]
        stds = [r["log10_mse_std"] if r else 0.0 for r in records]
        offsets = positions - 0.4 + width * (index + 0.5)
        tasks_axis.bar(
            offsets,
            means,
            width,
            yerr=stds,
            color=_COLORS[method],
            label=label,
        )
        if method in PAPER:
            scores = list(PAPER[method]) + [float(np.mean(PAPER[method]))]
            tasks_axis.scatter(
                offsets,
                scores,
                marker="D",
                s=28,
                color=_COLORS[method],
                edgecolor="black",
                zorder=3,
                label=f"{label} (paper)",
            )
        points = [
            (
                np.mean([int(part) for part in split.split("-")]),
                _find(summary, method, split, AVERAGE),
            )
            for split in splits
        ]
        points = [(x, record) for x, record in points if record]
        sizes = np.array([x for x, _ in points])
        means = np.array([record["log10_mse_mean"] for _, record in points])
        stds = np.array([record["log10_mse_std"] for _, record in points])
        marker, linestyle = _MARKERS[method]
        sizes_axis.plot(
            sizes,
            means,
            color=_COLORS[method],
            marker=marker,
            linestyle=linestyle,
            markersize=5,
            label=label,
        )
        if any(record["num_seeds"] > 1 for _, record in points):
            sizes_axis.fill_between(
                sizes,
                means - stds,
                means + stds,
                color=_COLORS[method],
                alpha=0.15,
            )
    tasks_axis.set_xticks(positions, labels)
    tasks_axis.axhline(0, color="black", linewidth=0.8)
    tasks_axis.set_ylabel("log10 MSE")
    tasks_axis.set_title(f"Test graphs of {test_split} nodes")
    tasks_axis.grid(axis="y", alpha=0.3)
    handles, labels = tasks_axis.get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 6),
        frameon=False,
    )
    low, high = TRAIN_SIZES
    sizes_axis.axvspan(low, high - 1, color="grey", alpha=0.15)
    sizes_axis.set_xlabel("nodes of the test graphs (training sizes shaded)")
    sizes_axis.set_ylabel("average log10 MSE")
    sizes_axis.set_title("Extrapolation to larger graphs")
    sizes_axis.grid(alpha=0.3)
    figure.suptitle(
        "Graph-properties benchmark: log10 MSE (lower is better)",
        fontsize="medium",
    )
    return figure

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
4 layers, one seed, the nine methods (`--quick`: LAF, PNA, MPNN-sum and the
baseline, 1 epoch); PNA's learning rate, 3e-3, halved
after 10 epochs without a lower validation loss. It is a small-scale
run, not the paper's result: GCN and GAT stay near the baseline at 10
epochs (RESULTS.md, Graphs). The networks, their batches and scores are
`laf_experiments.graph_networks`; the table and the figure
`laf_experiments.graph_reports`.
"""

import argparse

import numpy as np

from laf_experiments import early_stopping
from laf_experiments import graph_networks
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data.constants import EXTRAPOLATION_SIZES
from laf_experiments.data.constants import TRAIN_SIZES
from laf_experiments.errors import log
from laf_experiments.errors import require
from laf_experiments.graph_networks import AVERAGE
from laf_experiments.graph_networks import BASELINE
from laf_experiments.graph_networks import READOUTS
from laf_experiments.graph_networks import TASKS
from laf_experiments.graph_reports import TASK_LABELS
from laf_experiments.graph_reports import graph_records
from laf_experiments.graph_reports import results_figure
from laf_experiments.graph_reports import results_table
from laf_experiments.runner import cached
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

# The table of methods: the names of `laf_experiments.methods` that the
# networks of `graph_networks` implement, in the order they run.
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
# The methods of a `--quick` run: LAF, PNA, an MPNN and the baseline; the
# other convolutions take the same code paths and have their own tests.
QUICK_METHODS = ("laf", "pna", "sum", "baseline")
KEY_FIELDS = ("method", "seed")
DATA_SEED = 0
TABLE = "table.md"
PLOT = "log10_mse.png"

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
        default=None,
        help="comma-separated methods: laf, pna, pna_star (PNA without "
        "scalers), gin, gcn, gat, sum (MPNN), max (MPNN), baseline "
        f"(training means) (default: {','.join(METHODS)}; --quick: "
        f"{','.join(QUICK_METHODS)})",
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


def run(args):
    """Runs `keras-laf graphs`."""
    import keras

    from laf_experiments.data.graph_properties import make_graph_property_splits

    require("networkx", "networkx", "keras-laf graphs")
    if args.methods is None:
        args.methods = QUICK_METHODS if args.quick else METHODS
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
            graph_networks.graph_batches(
                splits(key)["train"],
                args.batch_size,
                shuffle=True,
                seed=key["seed"],
            ),
            graph_networks.graph_batches(
                splits(key)["validation"], args.batch_size
            ),
        )

    def evaluate(key, model):
        test = graph_networks.test_scores(model, splits(key), test_sizes)
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
            model = graph_networks.baseline_model(splits(key)["train"])
            return model, {
                "epochs": 0,
                "train_seconds": 0.0,
                "resumed_from_epoch": 0,
                "val_loss": None,
            }
        callbacks = [keras.callbacks.TerminateOnNaN()]
        if args.patience:
            stopping = early_stopping.early_stopping(
                args.patience, store.backup_directory(**key)
            )
            callbacks.append(stopping)
        fitting = runner.fitting(
            args,
            settings,
            training_data,
            build_model=lambda key: graph_networks.build_model(
                key["method"],
                args.laf_units,
                args.hidden_units,
                args.num_layers,
                args.readout,
                graph_networks.training_degree_histogram(splits(key)["train"]),
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
        figure=(PLOT, lambda: results_figure(store.summary)),
    )

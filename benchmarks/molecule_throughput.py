"""Molecules from a CSV featurised, cached and trained, against PyG.

One run on one machine, over the first `--molecules` rows of a CSV of
SMILES and properties (by default the refractive-index set below, its
three targets standardised):

- featurisation in molecules/s: `keras_laf.datasets.smiles_to_graphs`
  in this process (`workers=1`) and in `--workers` processes (default
  the cores; a first call that starts the processes' fork server and a
  second that reuses it), against PyTorch Geometric's
  `torch_geometric.utils.from_smiles` (one process) on the same SMILES;
- `keras_laf.datasets.read_molecule_table`: its first read (featurised
  by the workers, cached in a fresh folder) and its second read of the
  same file (the cache);
- an epoch over the molecules of `keras_laf.models.molecule_network`
  (a sum for message passing and for the readout, bond features) fed by
  `keras_laf.datasets.MoleculeBatches` (padded to buckets on TensorFlow
  and JAX, unpadded on PyTorch, which compiles nothing), on each backend
  in a process of its own at `compile`'s defaults (on TensorFlow
  `GraphModel` compiles padded batches with XLA, which Keras's `"auto"`
  leaves off on a CPU), and on TensorFlow without XLA too
  (`jit_compile=False`); against PyTorch
  Geometric 2.8 on the same network: `GINEConv` layers (bond features
  added to each neighbour's state, summed, then the update MLP) of the
  same widths and number,
  each with a residual sum, the same sigmoid projection, a sum readout
  (`global_add_pool`) and linear outputs, fed the same featurised graphs
  by its `DataLoader`. Both train with Adam and the MAE loss on batches
  of `--batch-size` molecules. The figure of each is its fastest epoch
  after the first (the first traces and compiles), with the ratios to
  PyTorch Geometric's and to TensorFlow's, and the parameters of both
  networks (they differ: the library's messages are a dense layer of
  both atoms and the bond, GINE's are the neighbour plus a projection of
  the bond);
- the peak resident memory (RSS) of each of these processes.

The data: chemml 1.3 (BSD-3) ships the published refractive-index set,
100,000 molecules of 12-28 heavy atoms (columns `Mol_Smiles`, `Pol_DFT`,
`Den_MD`, `RI_LL`). It stands for a user's own CSV: read it from the
wheel, never install it or commit it.

    pip download --no-deps chemml==1.3 -d /tmp/chemml
    unzip -j /tmp/chemml/chemml-1.3-py3-none-any.whl \\
        chemml/published/RI/input_files/properties.csv -d /tmp/chemml

The peers install apart from the package, and `--peers DIR` puts them on
the path of the processes that run them (without it, PyTorch Geometric's
figures are left out):

    pip install --no-deps --target /tmp/peers torch-geometric==2.8.1 \\
        xxhash aiohttp requests
    python -m benchmarks.molecule_throughput \\
        --data /tmp/chemml/properties.csv --peers /tmp/peers \\
        --output results/molecule-throughput/r.json

The record also holds the load average before and after, to tell
whether other processes shared the machine.
"""

import argparse
import csv
import json
import os
import platform
import sys
import tempfile
import time
import warnings

import numpy as np

from benchmarks.common import epoch_times
from benchmarks.common import run_child
from benchmarks.common import write_record

SMILES_COLUMN = "Mol_Smiles"
TARGET_COLUMNS = ("Pol_DFT", "Den_MD", "RI_LL")
# Each with its `KERAS_BACKEND` and `jit_compile`: at "auto", what a user
# gets (`GraphModel` compiles padded batches with XLA on TensorFlow's CPU
# too, where Keras's "auto" would not).
BACKENDS = {
    "tensorflow": ("tensorflow", "auto"),
    "tensorflow_no_xla": ("tensorflow", False),
    "jax": ("jax", "auto"),
    "torch": ("torch", "auto"),
}


def cores():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# What each child process runs; each returns a JSON-able dict.


def peak_rss_mib():
    """This process's peak resident memory, in MiB (Linux: KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_smiles(table):
    with open(table, newline="") as file:
        return [row[SMILES_COLUMN] for row in csv.DictReader(file)]


def read_table(table, cache_dir, workers=None):
    """`read_molecule_table` of the benchmark's columns, its warnings of
    skipped rows counted rather than printed."""
    from keras_laf.datasets import read_molecule_table

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_molecule_table(
            table,
            SMILES_COLUMN,
            list(TARGET_COLUMNS),
            workers=workers,
            cache_dir=cache_dir,
        )


def featurise(table, cache_dir, workers):
    """keras-laf's featurisation, one process and `workers`, and
    `read_molecule_table`'s first and second reads."""
    import keras
    import rdkit

    from keras_laf.datasets import smiles_to_graphs

    smiles = read_smiles(table)
    seconds = {}
    # The workers' first call starts the fork server (which imports Keras
    # and its backend once); the second reuses it.
    counts = (
        ("one_process", 1),
        ("workers", workers),
        ("workers_warm", workers),
    )
    for name, count in counts:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graphs = smiles_to_graphs(smiles, workers=count)
        seconds[name] = time.perf_counter() - start
    for name in ("table_first_read", "table_second_read"):
        start = time.perf_counter()
        graphs, targets = read_table(table, cache_dir, workers)
        seconds[name] = time.perf_counter() - start
    return {
        "smiles": len(smiles),
        "molecules": len(graphs),
        "skipped": len(graphs.skipped),
        "seconds": seconds,
        "molecules_per_second": {
            name: len(smiles) / seconds[name] for name, _ in counts
        },
        "peak_rss_mib": peak_rss_mib(),
        "versions": {"keras": keras.__version__, "rdkit": rdkit.__version__},
    }


def pyg_featurise(table):
    """PyTorch Geometric's `from_smiles`, one SMILES after the other."""
    import rdkit
    import torch_geometric
    from rdkit import RDLogger
    from torch_geometric.utils import from_smiles

    RDLogger.DisableLog("rdApp.*")
    smiles = read_smiles(table)
    start = time.perf_counter()
    graphs = [from_smiles(text) for text in smiles]
    seconds = time.perf_counter() - start
    return {
        "smiles": len(smiles),
        "molecules": len(graphs),
        "seconds": seconds,
        "molecules_per_second": len(smiles) / seconds,
        "peak_rss_mib": peak_rss_mib(),
        "versions": {
            "torch_geometric": torch_geometric.__version__,
            "rdkit": rdkit.__version__,
        },
    }


def standardised(targets):
    std = targets.std(0)
    return ((targets - targets.mean(0)) / np.where(std > 0, std, 1.0)).astype(
        "float32"
    )


def summary(seconds):
    """The figure of a run's epochs: the fastest after the first, or the
    only one."""
    return min(seconds[1:]) if len(seconds) > 1 else seconds[0]


def backend_versions(backend):
    if backend == "tensorflow":
        import tensorflow as tf

        return {"tensorflow": tf.__version__}
    if backend == "jax":
        import jax

        return {"jax": jax.__version__}
    import torch

    return {"torch": torch.__version__, "threads": torch.get_num_threads()}


def keras_epochs(
    table,
    cache_dir,
    hidden_units,
    num_layers,
    batch_size,
    learning_rate,
    epochs,
    seed,
    jit_compile="auto",
):
    """Epochs of `molecule_network` on `MoleculeBatches` with `fit`, on
    the backend of `KERAS_BACKEND`, compiled with `jit_compile`."""
    import keras

    from keras_laf.datasets import NUM_ATOM_FEATURES
    from keras_laf.datasets import NUM_BOND_FEATURES
    from keras_laf.datasets import MoleculeBatches
    from keras_laf.models import molecule_network

    backend = keras.config.backend()
    start = time.perf_counter()
    graphs, targets = read_table(table, cache_dir)
    load_seconds = time.perf_counter() - start
    keras.utils.set_random_seed(seed)
    pad = backend != "torch"
    batches = MoleculeBatches(
        graphs,
        standardised(targets),
        batch_size=batch_size,
        shuffle=True,
        seed=seed,
        pad=pad,
    )
    model = molecule_network(
        NUM_ATOM_FEATURES,
        NUM_BOND_FEATURES,
        aggregation="sum",
        readout_aggregation="sum",
        hidden_units=hidden_units,
        num_layers=num_layers,
        num_outputs=len(TARGET_COLUMNS),
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss="mae",
        jit_compile=jit_compile,
    )
    times = epoch_times()
    history = model.fit(batches, epochs=epochs, verbose=0, callbacks=[times])
    return {
        "molecules": len(graphs),
        "batches_per_epoch": len(batches),
        "padded": pad,
        "jit_compile": bool(model.jit_compile),
        "cache_load_seconds": load_seconds,
        "epoch_seconds": times.seconds,
        "seconds_per_epoch": summary(times.seconds),
        "loss_by_epoch": [float(value) for value in history.history["loss"]],
        "parameters": model.count_params(),
        "parameters_by_layer": {
            layer.name: layer.count_params()
            for layer in model.layers
            if layer.count_params()
        },
        "peak_rss_mib": peak_rss_mib(),
        "versions": {"keras": keras.__version__, **backend_versions(backend)},
    }


def pyg_network(
    num_atom_features, num_bond_features, hidden_units, num_layers, num_outputs
):
    """`molecule_network`'s shape in PyTorch Geometric, with `GINEConv`
    layers: atom embedding, per layer `h + GINEConv(h, bonds)` (update MLP
    Linear, LeakyReLU(0.2), Linear), sigmoid projection, sum readout,
    linear outputs."""
    import torch
    from torch_geometric.nn import GINEConv
    from torch_geometric.nn import global_add_pool

    class MoleculeNetwork(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.atom_embedding = torch.nn.Linear(
                num_atom_features, hidden_units
            )
            self.convolutions = torch.nn.ModuleList(
                GINEConv(
                    torch.nn.Sequential(
                        torch.nn.Linear(hidden_units, hidden_units),
                        torch.nn.LeakyReLU(0.2),
                        torch.nn.Linear(hidden_units, hidden_units),
                    ),
                    edge_dim=num_bond_features,
                )
                for _ in range(num_layers)
            )
            self.readout_projection = torch.nn.Linear(
                hidden_units, hidden_units
            )
            self.graph_outputs = torch.nn.Linear(hidden_units, num_outputs)

        def forward(self, batch):
            states = self.atom_embedding(batch.x)
            for convolution in self.convolutions:
                states = states + convolution(
                    states, batch.edge_index, batch.edge_attr
                )
            projected = torch.sigmoid(self.readout_projection(states))
            pooled = global_add_pool(projected, batch.batch, batch.num_graphs)
            return self.graph_outputs(pooled)

    return MoleculeNetwork()


def pyg_epochs(
    table,
    cache_dir,
    hidden_units,
    num_layers,
    batch_size,
    learning_rate,
    epochs,
    seed,
):
    """Epochs of `pyg_network` over the same graphs (keras-laf's features,
    read from the cache) with PyTorch Geometric's `DataLoader`."""
    import torch
    import torch_geometric
    from torch_geometric.data import Data
    from torch_geometric.loader import DataLoader

    import keras_laf.datasets  # noqa: F401 (imported before the clock starts)

    start = time.perf_counter()
    graphs, targets = read_table(table, cache_dir)
    load_seconds = time.perf_counter() - start
    labels = standardised(targets)
    start = time.perf_counter()
    data = [
        Data(
            x=torch.from_numpy(node_features),
            edge_index=torch.from_numpy(edges.T.astype("int64")),
            edge_attr=torch.from_numpy(edge_features),
            y=torch.from_numpy(label[None]),
        )
        for node_features, edges, edge_features, label in zip(
            graphs.node_features, graphs.edges, graphs.edge_features, labels
        )
    ]
    conversion_seconds = time.perf_counter() - start
    torch.manual_seed(seed)
    loader = DataLoader(data, batch_size=batch_size, shuffle=True)
    model = pyg_network(
        graphs.node_features[0].shape[1],
        graphs.edge_features[0].shape[1],
        hidden_units,
        num_layers,
        len(TARGET_COLUMNS),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    seconds, losses = [], []
    for _ in range(epochs):
        start = time.perf_counter()
        total = 0.0
        for batch in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.l1_loss(model(batch), batch.y)
            loss.backward()
            optimizer.step()
            total += float(loss) * batch.num_graphs
        seconds.append(time.perf_counter() - start)
        losses.append(total / len(data))
    return {
        "molecules": len(data),
        "batches_per_epoch": len(loader),
        "cache_load_seconds": load_seconds,
        "to_data_seconds": conversion_seconds,
        "epoch_seconds": seconds,
        "seconds_per_epoch": summary(seconds),
        "loss_by_epoch": losses,
        "parameters": sum(p.numel() for p in model.parameters()),
        "parameters_by_module": {
            name: sum(p.numel() for p in module.parameters())
            for name, module in model.named_children()
        },
        "peak_rss_mib": peak_rss_mib(),
        "versions": {
            "torch_geometric": torch_geometric.__version__,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
        },
    }


CHILDREN = {
    "featurise": featurise,
    "pyg_featurise": pyg_featurise,
    "keras_epochs": keras_epochs,
    "pyg_epochs": pyg_epochs,
}


def run_in_subprocess(function, backend, peers=None, **kwargs):
    """Runs `CHILDREN[function](**kwargs)` in a fresh process with
    `KERAS_BACKEND=backend` (and `peers` ahead on `PYTHONPATH`), and
    returns what it printed as JSON on its last line."""
    environment = {**os.environ, "KERAS_BACKEND": backend}
    if peers:
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [peers, os.environ.get("PYTHONPATH")])
        )
    return run_child(
        "benchmarks.molecule_throughput", function, environment, **kwargs
    )


# The parent: the subset of the data, the children in turn, the record.


def write_subset(data, molecules, path):
    """The header and the first `molecules` rows of the CSV `data`, to
    `path`; the number of rows written."""
    with open(data, newline="") as source, open(path, "w", newline="") as out:
        reader = csv.reader(source)
        writer = csv.writer(out)
        header = next(reader)
        for column in (SMILES_COLUMN, *TARGET_COLUMNS):
            if column not in header:
                raise ValueError(
                    f"{data} has no column {column!r}. Its columns: "
                    f"{', '.join(header)}"
                )
        writer.writerow(header)
        rows = 0
        for row in reader:
            if rows == molecules:
                break
            writer.writerow(row)
            rows += 1
    return rows


def ratios(record):
    """Each epoch against PyTorch Geometric's and TensorFlow's, and the
    featurisation's rates against each other."""
    epochs = {
        name: run["seconds_per_epoch"] for name, run in record["epochs"].items()
    }
    found = {}
    for name, seconds in epochs.items():
        for against in ("pyg", "tensorflow"):
            if against in epochs and name != against:
                found[f"epoch {name} / {against}"] = seconds / epochs[against]
    rates = record["featurisation"]["molecules_per_second"]
    for name in ("workers", "workers_warm"):
        found[f"featurisation {name} / one process"] = (
            rates[name] / rates["one_process"]
        )
    if "pyg_featurisation" in record:
        pyg = record["pyg_featurisation"]["molecules_per_second"]
        found["featurisation one process / pyg from_smiles"] = (
            rates["one_process"] / pyg
        )
        found["featurisation workers / pyg from_smiles"] = (
            rates["workers"] / pyg
        )
    seconds = record["featurisation"]["seconds"]
    found["table second read / first read"] = (
        seconds["table_second_read"] / seconds["table_first_read"]
    )
    return found


def run(args):
    load_before = os.getloadavg()
    record = {
        "benchmark": "molecule_throughput",
        "machine": f"{platform.machine()}, {cores()} cores",
        "python": platform.python_version(),
        "data": os.path.basename(args.data),
        "columns": {"smiles": SMILES_COLUMN, "targets": list(TARGET_COLUMNS)},
        "peers": bool(args.peers),
        "settings": {
            "workers": args.workers,
            "hidden_units": args.hidden_units,
            "num_layers": args.num_layers,
            "batch_size": args.batch_size,
            "learning_rate": args.learning_rate,
            "epochs": args.epochs,
            "seed": args.seed,
            "aggregation": "sum",
            "readout_aggregation": "sum",
        },
    }
    network = {
        "hidden_units": args.hidden_units,
        "num_layers": args.num_layers,
        "batch_size": args.batch_size,
        "learning_rate": args.learning_rate,
        "epochs": args.epochs,
        "seed": args.seed,
    }
    with tempfile.TemporaryDirectory() as folder:
        table = os.path.join(folder, "molecules.csv")
        record["rows"] = write_subset(args.data, args.molecules, table)
        cache = os.path.join(folder, "cache")
        print(f"featurising {record['rows']} molecules ...", flush=True)
        record["featurisation"] = run_in_subprocess(
            "featurise",
            args.featurise_backend,
            table=table,
            cache_dir=cache,
            workers=args.workers,
        )
        record["featurisation"]["backend"] = args.featurise_backend
        if args.peers:
            print("PyG from_smiles ...", flush=True)
            record["pyg_featurisation"] = run_in_subprocess(
                "pyg_featurise", "torch", args.peers, table=table
            )
        record["epochs"] = {}
        for name in args.backends:
            print(f"epochs on {name} ...", flush=True)
            backend, jit_compile = BACKENDS[name]
            record["epochs"][name] = run_in_subprocess(
                "keras_epochs",
                backend,
                table=table,
                cache_dir=cache,
                jit_compile=jit_compile,
                **network,
            )
        if args.peers:
            print("epochs of PyG ...", flush=True)
            record["epochs"]["pyg"] = run_in_subprocess(
                "pyg_epochs",
                "torch",
                args.peers,
                table=table,
                cache_dir=cache,
                **network,
            )
    record["ratios"] = ratios(record)
    record["load_average_before"] = load_before
    record["load_average_after"] = os.getloadavg()
    return record


def print_report(record):
    featurisation = record["featurisation"]
    rates = featurisation["molecules_per_second"]
    seconds = featurisation["seconds"]
    print(
        f"\n{featurisation['smiles']} SMILES ({featurisation['skipped']} "
        f"skipped), {record['machine']}, load "
        f"{record['load_average_before'][0]:.2f} -> "
        f"{record['load_average_after'][0]:.2f}"
    )
    print("featurisation, molecules/s:")
    print(f"  smiles_to_graphs, one process  {rates['one_process']:10.0f}")
    print(
        f"  smiles_to_graphs, {record['settings']['workers']} workers"
        f"{rates['workers']:13.0f}"
    )
    print(f"  the same, fork server started  {rates['workers_warm']:10.0f}")
    if "pyg_featurisation" in record:
        pyg = record["pyg_featurisation"]["molecules_per_second"]
        print(f"  PyG from_smiles, one process   {pyg:10.0f}")
    print(
        f"read_molecule_table: first read {seconds['table_first_read']:.2f} "
        f"s, second read (cache) {seconds['table_second_read']:.2f} s"
    )
    print(f"\n{'epoch':<12}{'s/epoch':>10}{'params':>10}{'peak RSS MiB':>14}")
    for name, run in record["epochs"].items():
        print(
            f"{name:<12}{run['seconds_per_epoch']:>10.2f}"
            f"{run['parameters']:>10}{run['peak_rss_mib']:>14.0f}"
        )
    print(f"{'featurise':<12}{'':>20}{featurisation['peak_rss_mib']:>14.0f}")
    if "pyg_featurisation" in record:
        rss = record["pyg_featurisation"]["peak_rss_mib"]
        print(f"{'from_smiles':<12}{'':>20}{rss:>14.0f}")
    print()
    for name, value in record["ratios"].items():
        print(f"  {name:<48}{value:8.2f}")


def backends(text):
    names = text.split(",")
    unknown = sorted(set(names) - set(BACKENDS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown backends {unknown}; choose among {list(BACKENDS)}"
        )
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="The data: pip download --no-deps chemml==1.3, then "
        "chemml/published/RI/input_files/properties.csv from the wheel.",
    )
    parser.add_argument(
        "--data",
        help=f"a CSV with columns {SMILES_COLUMN}, {', '.join(TARGET_COLUMNS)}"
        " (chemml 1.3's properties.csv)",
    )
    parser.add_argument(
        "--molecules",
        type=int,
        default=100_000,
        help="the first rows of the file measured (100000)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=cores(),
        help="featurising worker processes (the cores: %(default)s)",
    )
    parser.add_argument(
        "--peers",
        metavar="DIR",
        help="a folder holding torch_geometric (pip install --no-deps "
        "--target DIR ...); without it, PyG's figures are left out",
    )
    parser.add_argument(
        "--backends",
        type=backends,
        default=list(BACKENDS),
        help="comma-separated Keras backends: "
        f"{','.join(BACKENDS)} (tensorflow_no_xla: jit_compile=False)",
    )
    parser.add_argument(
        "--featurise-backend",
        default=os.environ.get("KERAS_BACKEND", "tensorflow"),
        choices=sorted({backend for backend, _ in BACKENDS.values()}),
        help="the Keras backend of the featurising process (KERAS_BACKEND's)",
    )
    parser.add_argument("--hidden-units", type=int, default=32)
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument(
        "--epochs",
        type=int,
        default=2,
        help="epochs of each network; the figure is the fastest after the "
        "first (2)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="write the record as JSON here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        request = json.loads(args.child)
        function = CHILDREN[request["function"]]
        print(json.dumps(function(**request["kwargs"])))
        return
    if args.data is None:
        parser.error("--data FILE is required (see --help for the file)")
    if not os.path.isfile(args.data):
        parser.error(f"--data {args.data} is no file")
    if args.peers and not os.path.isdir(
        os.path.join(args.peers, "torch_geometric")
    ):
        parser.error(f"no torch_geometric in --peers {args.peers}")
    if args.peers:
        args.peers = os.path.abspath(args.peers)
    for name in ("molecules", "workers", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be positive")
    record = run(args)
    print_report(record)
    write_record(args.output, record)


if __name__ == "__main__":
    sys.exit(main())

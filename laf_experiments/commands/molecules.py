"""`keras-laf molecules`: trained on small molecules, tested on large ones.

A network (`keras_laf.models.molecule_network`) learns each target on the
molecules of `--train-sizes` heavy atoms, with a fifth of them held out
for validation, and is tested on each range of `--test-sizes`: whether the
aggregation of the method (`laf_experiments.molecule_methods`)
extrapolates to larger graphs. The molecules are RDKit's NCI set or a
user's CSV (`laf_experiments.molecule_sources`); the tables and figures
are drawn by `laf_experiments.molecule_reports`.
"""

import os
import tempfile

import numpy as np

from laf_experiments import molecule_reports
from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data.nci_molecules import CLAIM_SPLIT
from laf_experiments.data.nci_molecules import TARGET_LABELS
from laf_experiments.data.nci_molecules import TARGETS
from laf_experiments.data.nci_molecules import TEST_SIZES
from laf_experiments.data.nci_molecules import TRAIN_SIZES
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.errors import require
from laf_experiments.molecule_methods import METHODS
from laf_experiments.molecule_methods import METHODS_DESCRIPTION
from laf_experiments.molecule_methods import aggregations
from laf_experiments.molecule_reports import test_record
from laf_experiments.molecule_sources import SKIPPED
from laf_experiments.molecule_sources import add_data_arguments
from laf_experiments.molecule_sources import data_choices
from laf_experiments.molecule_sources import load_molecules
from laf_experiments.runner import cached
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

KEY_FIELDS = ("target", "method", "seed")
DATA_SEED = 0
VALIDATION_FRACTION = 0.2
PREDICT_BATCH_SIZE = 256
TABLE = "table.md"
PLOT = "mae_by_size.png"
CURVES = "validation_by_epoch.png"
ALL = "all"

DEFAULTS = {
    "train_size": ALL,
    "val_size": ALL,
    "test_size": ALL,
    "epochs": 20,
    "seeds": 5,
    "batch_size": 64,
    "learning_rate": 3e-3,
    "lr_factor": 0.5,
    "lr_patience": 3,
    "hidden_units": 16,
    "message_units": 8,
    "laf_units": 8,
    "num_layers": 2,
}
QUICK = {
    **DEFAULTS,
    "train_size": 256,
    "val_size": 64,
    "test_size": 32,
    "epochs": 1,
    "seeds": 1,
    "hidden_units": 8,
    "message_units": 4,
    "laf_units": 2,
}
QUICK_TARGETS = ("tpsa",)
# A smoke run of every kind of aggregation in under a minute: fixed,
# PNA's, and LAF's two presets.
QUICK_METHODS = ("sum", "max", "pna", "laf", "laf_closed_forms")

HELP = "molecules (RDKit's NCI set or a CSV): trained on small, tested on large"
DESCRIPTION = f"""\
Learns properties of molecules on those of --train-sizes heavy atoms and
tests on each range of --test-sizes, for each aggregation. By default the
data are RDKit's NCI molecules (no download: the files ship with RDKit),
trained on {TRAIN_SIZES[0]} and tested on \
{", ".join(name for name, _, _ in TEST_SIZES)} heavy atoms,
with the targets {", ".join(TARGETS)} (TPSA from RDKit's
first_5k.tpsa.csv; Crippen logP and molar refractivity, heavy atoms,
fraction of sp3 carbons and largest Gasteiger charge from RDKit).

Your own molecules: --data FILE.csv --smiles-column COLUMN --targets
COLUMN,... . Rows whose SMILES RDKit cannot parse, is empty, or whose
target is empty, not a number or not finite are skipped and reported
with their line ({SKIPPED}); the counts are in the records. The
molecules are featurised in --workers processes and cached in
--cache-dir, keyed by the file's content, the columns and the
featuriser: a second run reads the cache in seconds.

{METHODS_DESCRIPTION}

Writes results.json, results.csv (target, method, split, seed, mae,
mae_over_std: the MAE over the standard deviation of the split's labels),
summary.csv, {TABLE} (MAE per target, method and size; the best fixed
aggregation against LAF at {CLAIM_SPLIT} atoms, or the last test split),
{PLOT} and {CURVES} (the validation loss of every epoch: whether
training has levelled). Needs RDKit: pip install 'keras-laf[molecules]'.
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf molecules`."""
    add_data_arguments(parser, QUICK_TARGETS)
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--methods",
        type=choice_list(METHODS, "method"),
        help=f"comma-separated methods, or 'all' (default: all, "
        f"{','.join(METHODS)}; --quick: {','.join(QUICK_METHODS)})",
    )
    group = parser.add_argument_group("model")
    for name, flag, text in (
        ("hidden_units", "--hidden-units", "atom state size"),
        ("message_units", "--message-units", "features of each message"),
        ("laf_units", "--laf-units", "LAF units of each LAF aggregation"),
        ("num_layers", "--num-layers", "message-passing layers"),
    ):
        group.add_argument(
            flag,
            type=positive_int,
            metavar="N",
            help=f"{text} (default: {DEFAULTS[name]}; --quick: {QUICK[name]})",
        )
    # --train-size, --val-size and --test-size (per test split) count
    # molecules, all of them by default.
    add_common_arguments(parser, "molecules", DEFAULTS, QUICK)


def _cached_jax_compilations():
    # Every seed and target compiles the same steps for the same bucket
    # shapes: JAX's persistent cache compiles each once per machine.
    import jax

    if jax.config.jax_compilation_cache_dir is None:
        jax.config.update(
            "jax_compilation_cache_dir",
            os.path.join(tempfile.gettempdir(), "keras-laf-jax-cache"),
        )
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)


def run(args):
    """Runs `keras-laf molecules`."""
    args.targets, train_sizes, test_sizes = data_choices(args, QUICK_TARGETS)
    require("rdkit", "rdkit", "keras-laf molecules")
    import keras

    import keras_laf
    from keras_laf.datasets import NUM_ATOM_FEATURES
    from keras_laf.datasets import NUM_BOND_FEATURES
    from keras_laf.datasets import MoleculeBatches
    from keras_laf.models import molecule_network

    if args.methods is None:
        args.methods = QUICK_METHODS if args.quick else METHODS
    settings = resolve_settings(
        args,
        extra_names=(
            "hidden_units",
            "message_units",
            "laf_units",
            "num_layers",
        ),
    )
    molecules = load_molecules(args)
    splits = molecules.split_indices(
        train_sizes, test_sizes, VALIDATION_FRACTION, seed=DATA_SEED
    )
    counts = ", ".join(f"{name} {len(items)}" for name, items in splits.items())
    log(args.experiment, f"molecules by heavy atoms: {counts}")
    names = [name for name, _, _ in test_sizes]
    settings.update(
        data_seed=DATA_SEED,
        validation_fraction=VALIDATION_FRACTION,
        **molecules.record(),
        train_sizes=train_sizes[0],
        test_sizes=names,
        claim_split=CLAIM_SPLIT if CLAIM_SPLIT in names else names[-1],
        split_molecules={name: len(items) for name, items in splits.items()},
    )
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        molecule_reports.molecule_records,
        group_fields=molecule_reports.SUMMARY_GROUPS,
        value_field="mae",
    )
    molecules.write_skipped(store.directory / SKIPPED)
    if keras.config.backend() == "jax":
        _cached_jax_compilations()

    def data(key):
        # The splits of the molecules that have the target, limited to the
        # sizes asked for, and the standardised labels.
        target = key["target"]
        sizes = dict.fromkeys(splits, args.test_size)
        sizes.update(train=args.train_size, validation=args.val_size)
        indices, missing = molecules.target_splits(
            splits,
            target,
            {n: None if v == ALL else v for n, v in sizes.items()},
        )
        if missing:
            log(
                args.experiment,
                f"{target}: {missing} molecules without a value",
            )
        train_labels = molecules.labels[target][indices["train"]]
        if len(train_labels) < 2 or not len(indices["validation"]):
            raise ExperimentError(
                f"{target}: too few molecules of {train_sizes[0]} heavy "
                f"atoms to train and validate on ({len(train_labels)} and "
                f"{len(indices['validation'])}): choose wider --train-sizes"
            )
        # A target constant on the training molecules is only centred.
        mean = float(np.mean(train_labels))
        std = float(np.std(train_labels)) or 1.0
        labels = (molecules.labels[target] - mean) / std
        return indices, labels, mean, std

    target_data = cached(data, lambda key: key["target"])

    def batches(key, split, shuffle=False):
        indices, labels, _, _ = target_data(key)
        items = indices[split]
        return MoleculeBatches(
            molecules.graphs.subset(items),
            labels[items][:, None],
            batch_size=args.batch_size if shuffle else PREDICT_BATCH_SIZE,
            shuffle=shuffle,
            seed=key["seed"],
        )

    def training_data(key):
        return batches(key, "train", shuffle=True), batches(key, "validation")

    def degree_histogram(key):
        indices, _, _, _ = target_data(key)
        union = molecules.graphs.subset(indices["train"]).batch()
        return keras_laf.degree_histogram(
            union["edge_target"], num_nodes=len(union["node_features"])
        )

    def build_model(key):
        from keras_laf.models.building_blocks import with_laf_arguments

        options = aggregations(
            key["method"], degree_histogram(key), args.laf_preset
        )
        preset = options.pop("laf_preset", None)
        for prefix in ("", "readout_"):
            options[f"{prefix}aggregation_kwargs"] = with_laf_arguments(
                options[f"{prefix}aggregation"],
                units=args.laf_units,
                preset=preset,
            )
        return molecule_network(
            NUM_ATOM_FEATURES,
            NUM_BOND_FEATURES,
            hidden_units=args.hidden_units,
            message_units=args.message_units,
            num_layers=args.num_layers,
            name=f"molecule_network_{key['method']}",
            **options,
        )

    fitting = runner.fitting(
        args,
        settings,
        training_data,
        build_model,
        loss="mae",
        callbacks=lambda key, data: [keras.callbacks.TerminateOnNaN()],
    )

    def train(key, store):
        model, training = fitting(key, store)
        _, _, _, std = target_data(key)
        if training["val_loss"] is not None:
            training["validation_mae"] = training["val_loss"] * std
        return model, training

    def evaluate(key, model):
        indices, _, mean, std = target_data(key)
        true_labels = molecules.labels[key["target"]]
        test = []
        for name, low, high in test_sizes:
            items = indices[name]
            if not len(items):
                continue
            predicted = batches(key, name).predict(model, verbose=0)
            predicted = predicted["graph_outputs"][:, 0] * std + mean
            test.append(
                test_record(name, low, high, predicted, true_labels[items])
            )
        summary = ", ".join(f"{t['split']} {t['mae']:.4g}" for t in test)
        return {"test": test}, f"MAE by heavy atoms: {summary}"

    keys = [
        {"target": target, "method": method, "seed": seed}
        for seed in args.seeds
        for target in args.targets
        for method in args.methods
    ]
    runner.run_all(
        args,
        store,
        keys,
        describe=lambda key: (
            f"{key['method']} on {key['target']}, seed {key['seed']}"
        ),
        train=train,
        evaluate=evaluate,
    )
    labels = TARGET_LABELS if args.data is None else None
    if store.runs and plots.available():
        figure = molecule_reports.plot_validation_curves(
            molecule_reports.validation_curves(store), labels
        )
        if figure is not None:
            plots.save_figure(figure, store.directory / CURVES, args.quick)
    reports.write_results(
        args,
        store,
        table=(
            TABLE,
            lambda: molecule_reports.results_table(
                store.records, settings, labels
            ),
        ),
        figure=(
            PLOT,
            lambda: molecule_reports.plot_results(
                store.records, settings, labels
            ),
        ),
    )

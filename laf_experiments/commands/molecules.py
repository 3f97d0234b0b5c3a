"""`keras-laf molecules`: trained on small molecules, tested on large ones.

Real graphs from RDKit's own data (`laf_experiments.data.
nci_molecules`): the 4,991 NCI molecules that parse, each labelled with
one of six properties (TPSA from the file shipped with RDKit; Crippen's
logP and molar refractivity, the number of heavy atoms, the fraction of
sp3 carbons and the largest Gasteiger charge from RDKit). A network
(`keras_laf.models.molecule_network`) learns each property on the
molecules of at most 15 heavy atoms, with a fifth of them held out for
validation, and is tested on molecules of 16-25, 26-40 and 41 or more:
whether the aggregation extrapolates to larger graphs. Its neighbour and
readout aggregations are those of the method: sum, mean, max, PNA (mean,
max, min and std with the degree scalers of the training graphs'
degree histogram, a plain readout of the four), learnable softmax,
GenAgg, and LAF with its default preset and with `closed_forms`.
"""

import math
import os
import tempfile
import warnings

import numpy as np

from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data.nci_molecules import TARGET_LABELS
from laf_experiments.data.nci_molecules import TARGETS
from laf_experiments.data.nci_molecules import TEST_SIZES
from laf_experiments.data.nci_molecules import TRAIN_SIZES
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.errors import require
from laf_experiments.methods import with_laf_arguments
from laf_experiments.runner import cached
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

METHODS = (
    "sum",
    "mean",
    "max",
    "pna",
    "softmax",
    "genagg",
    "laf",
    "laf_closed_forms",
)
# The aggregations that learn nothing; the best of them at 26-40 atoms is
# what LAF is held against.
FIXED_METHODS = ("sum", "mean", "max", "pna")
LAF_METHODS = ("laf", "laf_closed_forms")
METHOD_LABELS = {
    "sum": "sum",
    "mean": "mean",
    "max": "max",
    "pna": "PNA",
    "softmax": "softmax (learned t)",
    "genagg": "GenAgg",
    "laf": "LAF",
    "laf_closed_forms": "LAF closed_forms",
}
# A colour of tab10 and a marker per method, the same in every figure.
STYLES = {
    "sum": ("tab:blue", "s"),
    "mean": ("tab:orange", "v"),
    "max": ("tab:purple", "<"),
    "pna": ("tab:green", "^"),
    "softmax": ("tab:olive", "X"),
    "genagg": ("tab:brown", "D"),
    "laf": ("tab:red", "o"),
    "laf_closed_forms": ("tab:pink", "P"),
}
PNA_AGGREGATORS = ("mean", "max", "min", "std")
PNA_SCALERS = ("identity", "amplification", "attenuation")
KEY_FIELDS = ("target", "method", "seed")
SPLITS = tuple(name for name, _, _ in TEST_SIZES)
# The split the claims are judged on.
CLAIM_SPLIT = "26-40"
# How close to the best counts as close.
CLOSE_RATIO = 1.5
# Seeds 0-4 and 5-9: two disjoint sets of five.
SEED_SET_SIZE = 5
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

HELP = "molecules (RDKit's NCI set): trained on small, tested on large"
DESCRIPTION = f"""\
Learns six properties of RDKit's NCI molecules (no download: the files
ship with RDKit) on molecules of at most {TRAIN_SIZES[2]} heavy atoms and \
tests on
molecules of {", ".join(SPLITS)} heavy atoms, for each aggregation.

Targets: {", ".join(TARGETS)}. TPSA is the value of
RDKit's first_5k.tpsa.csv; the others are RDKit's on the same molecules
(Crippen logP and molar refractivity, heavy atoms, fraction of sp3
carbons, largest Gasteiger charge; molecules whose charges RDKit cannot
compute are left out of that target).

Methods: {", ".join(METHODS)}. Each is the same network
(keras_laf.models.molecule_network: atom and bond one-hot features,
--num-layers message-passing layers with bond features and residual
updates, a sigmoid projection, a readout, a linear output) whose
neighbour and readout aggregations are the method's: pna is mean, max,
min and std with PNA's identity, amplification and attenuation scalers
(the training molecules' degree histogram) and the four as the readout;
softmax learns its temperature; laf is LAF with --laf-preset (the
layer's default, pooling, unless told), laf_closed_forms LAF with
preset="closed_forms". Labels are standardised with the training mean
and standard deviation; Adam on the MAE, the learning rate halved after
--lr-patience epochs without a lower validation loss.

Writes results.json, results.csv (target, method, split, seed, mae,
mae_over_std: the MAE over the standard deviation of the split's labels),
summary.csv, {TABLE} (MAE per target, method and size; the best fixed
aggregation against LAF at {CLAIM_SPLIT} atoms), {PLOT} and {CURVES}
(the validation loss of every epoch: whether training has levelled).
Needs RDKit: pip install 'keras-laf[molecules]'.
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf molecules`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--targets",
        type=choice_list(TARGETS, "target"),
        help=f"comma-separated targets, or 'all': {', '.join(TARGETS)} "
        f"(default: all; --quick: {','.join(QUICK_TARGETS)})",
    )
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


def aggregations(method, degree_histogram, laf_preset=None):
    """The neighbour and readout aggregations of a method, with the LAF
    preset of `molecule_network` for the LAF methods.

    Args:
        method: one of `METHODS`.
        degree_histogram: the training molecules' in-degree histogram
            (`keras_laf.degree_histogram`), for PNA's scalers.
        laf_preset: the preset of `"laf"` (`--laf-preset`);
            `"laf_closed_forms"` is always `"closed_forms"`. Defaults to
            `None`: the layer's default.

    Returns:
        A dict of `molecule_network` arguments: `aggregation`,
        `readout_aggregation` and, for LAF, `laf_preset`.
    """
    import keras_laf

    if method == "pna":
        return {
            "aggregation": keras_laf.DegreeScalerAggregation(
                list(PNA_AGGREGATORS),
                list(PNA_SCALERS),
                degree_histogram=degree_histogram,
            ),
            "readout_aggregation": list(PNA_AGGREGATORS),
        }
    if method == "softmax":
        return {
            "aggregation": keras_laf.SoftmaxAggregation(learn=True),
            "readout_aggregation": keras_laf.SoftmaxAggregation(learn=True),
        }
    if method == "genagg":
        return {
            "aggregation": keras_laf.GenAggAggregation(),
            "readout_aggregation": keras_laf.GenAggAggregation(),
        }
    if method in LAF_METHODS:
        preset = "closed_forms" if method == "laf_closed_forms" else laf_preset
        return {
            "aggregation": "laf",
            "readout_aggregation": "laf",
            "laf_preset": preset,
        }
    return {"aggregation": method, "readout_aggregation": method}


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


def _first(indices, size):
    return indices if size == ALL else indices[:size]


def _load(args):
    from laf_experiments.data.nci_molecules import load_nci_molecules

    log(args.experiment, "reading and featurising RDKit's NCI molecules")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        molecules = load_nci_molecules()
    for warning in caught:
        log(args.experiment, f"skipped: {warning.message}")
    splits = molecules.split_indices(VALIDATION_FRACTION, seed=DATA_SEED)
    counts = ", ".join(f"{name} {len(items)}" for name, items in splits.items())
    log(
        args.experiment,
        f"{len(molecules.graphs)} molecules by heavy atoms: {counts}",
    )
    return molecules, splits


def _target_data(args, molecules, splits, target):
    # The splits of the molecules that have the target, limited to the
    # sizes asked for, and the training labels' mean and std.
    labels = molecules.labels[target]
    kept = {
        name: indices[np.isfinite(labels[indices])]
        for name, indices in splits.items()
    }
    missing = sum(len(splits[n]) - len(kept[n]) for n in splits)
    if missing:
        log(
            args.experiment,
            f"{target}: {missing} molecules without a value left out",
        )
    kept["train"] = _first(kept["train"], args.train_size)
    kept["validation"] = _first(kept["validation"], args.val_size)
    for name in SPLITS:
        kept[name] = _first(kept[name], args.test_size)
    train_labels = labels[kept["train"]]
    return kept, float(np.mean(train_labels)), float(np.std(train_labels))


def molecule_records(runs):
    """One record per run and test split: the MAE and MAE / label std."""
    return [
        {
            "target": run["target"],
            "method": run["method"],
            "split": item["split"],
            "seed": run["seed"],
            "mae": item["mae"],
            "mae_over_std": item["mae_over_std"],
        }
        for run in runs
        for item in run["test"]
    ]


def run(args):
    """Runs `keras-laf molecules`."""
    require("rdkit", "rdkit", "keras-laf molecules")
    import keras

    import keras_laf
    from keras_laf.datasets import MoleculeBatches
    from keras_laf.datasets.molecules import NUM_ATOM_FEATURES
    from keras_laf.datasets.molecules import NUM_BOND_FEATURES
    from keras_laf.models import molecule_network

    if args.targets is None:
        args.targets = QUICK_TARGETS if args.quick else TARGETS
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
    settings["data_seed"] = DATA_SEED
    settings["validation_fraction"] = VALIDATION_FRACTION
    settings["source"] = "RDKit Data/NCI first_5K.smi, first_5k.tpsa.csv"
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        molecule_records,
        group_fields=("method", "target", "split"),
        value_field="mae",
    )
    if keras.config.backend() == "jax":
        _cached_jax_compilations()
    load = cached(lambda key: _load(args), lambda key: DATA_SEED)

    def data(key):
        molecules, splits = load(key)
        indices, mean, std = _target_data(
            args, molecules, splits, key["target"]
        )
        labels = (molecules.labels[key["target"]] - mean) / std
        return molecules, indices, labels, mean, std

    target_data = cached(data, lambda key: key["target"])

    def batches(key, split, shuffle=False):
        molecules, indices, labels, _, _ = target_data(key)
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
        molecules, indices, _, _, _ = target_data(key)
        union = molecules.graphs.subset(indices["train"]).batch()
        return keras_laf.degree_histogram(
            union["edge_target"], num_nodes=len(union["node_features"])
        )

    def build_model(key):
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
        _, _, _, _, std = target_data(key)
        if training["val_loss"] is not None:
            training["validation_mae"] = training["val_loss"] * std
        return model, training

    def evaluate(key, model):
        molecules, indices, _, mean, std = target_data(key)
        true_labels = molecules.labels[key["target"]]
        test = []
        for name, low, high in TEST_SIZES:
            items = indices[name]
            if not len(items):
                continue
            split = batches(key, name)
            predicted = split.unpad(model.predict(split, verbose=0))
            predicted = predicted["graph_outputs"][:, 0] * std + mean
            truth = true_labels[items]
            mae = float(np.mean(np.abs(predicted - truth)))
            spread = float(np.std(truth))
            test.append(
                {
                    "split": name,
                    "min_atoms": low,
                    "max_atoms": None if math.isinf(high) else high,
                    "num_molecules": len(items),
                    "mae": mae,
                    "label_std": spread,
                    "mae_over_std": mae / spread if spread > 0 else math.nan,
                }
            )
        summary = ", ".join(f"{t['split']} {t['mae']:.4g}" for t in test)
        return {"test": test}, f"MAE by heavy atoms: {summary}"

    keys = [
        {"target": target, "method": method, "seed": seed}
        for seed in range(args.seeds)
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
    if store.runs and plots.available():
        figure = plot_validation_curves(validation_curves(store))
        if figure is not None:
            plots.save_figure(figure, store.directory / CURVES, args.quick)
    reports.write_results(
        args,
        store,
        table=(TABLE, lambda: results_table(store.records, settings)),
        figure=(PLOT, lambda: plot_results(store.records)),
    )


def _statistics(records):
    # {(target, method, split): (mean, std, seeds)} of the MAE.
    groups = {}
    for record in records:
        key = (record["target"], record["method"], record["split"])
        groups.setdefault(key, []).append(record["mae"])
    return {
        key: (float(np.mean(v)), float(np.std(v)), len(v))
        for key, v in groups.items()
    }


def _seed_set(seed):
    # Seeds 0-4 are the first set of five, 5-9 the second, ...
    return seed // SEED_SET_SIZE


def comparisons(records, split=CLAIM_SPLIT):
    """Per target, the best fixed aggregation and each method against it.

    Args:
        records: the records of `molecule_records`.
        split: the test split compared. Defaults to `CLAIM_SPLIT`.

    Returns:
        A dict from target to a dict: `"best"` (the method of lowest mean
        MAE), `"best_fixed"` (the same among `FIXED_METHODS`),
        `"to_best"` (each method's mean MAE over the best's),
        `"to_best_fixed"` (over the best fixed one's) and
        `"to_best_fixed_by_set"` (the same on each set of
        `SEED_SET_SIZE` seeds that both methods ran: a list of `(first
        seed, ratio)`). Targets without a fixed method are left out.
    """
    maes = {}
    for record in records:
        if record["split"] == split:
            key = (record["target"], record["method"])
            maes.setdefault(key, {})[record["seed"]] = record["mae"]
    found = {}
    for target in TARGETS:
        means = {
            method: float(np.mean(list(maes[(target, method)].values())))
            for method in METHODS
            if (target, method) in maes
        }
        fixed = {m: v for m, v in means.items() if m in FIXED_METHODS}
        if not fixed:
            continue
        best = min(means, key=means.get)
        best_fixed = min(fixed, key=fixed.get)
        by_set = {}
        for method in means:
            ratios = []
            for index in sorted(
                {_seed_set(seed) for seed in maes[(target, method)]}
            ):
                own, other = (
                    [
                        value
                        for seed, value in maes[(target, m)].items()
                        if _seed_set(seed) == index
                    ]
                    for m in (method, best_fixed)
                )
                if own and other:
                    ratios.append(
                        (
                            index * SEED_SET_SIZE,
                            float(np.mean(own) / np.mean(other)),
                        )
                    )
            by_set[method] = ratios
        found[target] = {
            "best": best,
            "best_fixed": best_fixed,
            "to_best": {m: v / means[best] for m, v in means.items()},
            "to_best_fixed": {
                m: v / means[best_fixed] for m, v in means.items()
            },
            "to_best_fixed_by_set": by_set,
        }
    return found


def _ratio_cell(item, method):
    if method not in item["to_best_fixed"]:
        return ""
    text = f"{item['to_best_fixed'][method]:.2f}"
    by_set = item["to_best_fixed_by_set"][method]
    if len(by_set) > 1:
        text += " (" + ", ".join(f"{ratio:.2f}" for _, ratio in by_set) + ")"
    return text


def _comparison_lines(records):
    found = comparisons(records)
    if not found:
        return []
    lines = [
        f"## LAF against the best fixed aggregation at {CLAIM_SPLIT} atoms",
        "",
        "Mean MAE over the best fixed aggregation's (of "
        f"{', '.join(METHOD_LABELS[m] for m in FIXED_METHODS)}); in "
        f"brackets, on each set of {SEED_SET_SIZE} seeds that both ran. "
        f"Within {CLOSE_RATIO}x counts as close.",
        "",
        "| target | best fixed (MAE) | "
        + " | ".join(f"{METHOD_LABELS[m]} / best fixed" for m in LAF_METHODS)
        + " | best of all |",
        "| --- | --- |" + " --- |" * (len(LAF_METHODS) + 1),
    ]
    statistics = _statistics(records)
    for target, item in found.items():
        fixed = item["best_fixed"]
        mae = statistics[(target, fixed, CLAIM_SPLIT)][0]
        lines.append(
            f"| {target} | {METHOD_LABELS[fixed]} ({mae:.3g}) | "
            + " | ".join(_ratio_cell(item, m) for m in LAF_METHODS)
            + f" | {METHOD_LABELS[item['best']]} |"
        )
    targets = list(found)
    lines += [
        "",
        f"## Each aggregation against the best at {CLAIM_SPLIT} atoms",
        "",
        "Mean MAE over the best method's of each target; the last column, "
        "the largest.",
        "",
        "| method | " + " | ".join(targets) + " | largest |",
        "| --- |" + " --- |" * (len(targets) + 1),
    ]
    for method in METHODS:
        ratios = [found[t]["to_best"].get(method) for t in targets]
        if all(ratio is None for ratio in ratios):
            continue
        cells = ["" if r is None else f"{r:.2f}" for r in ratios]
        largest = max(r for r in ratios if r is not None)
        lines.append(
            f"| {METHOD_LABELS[method]} | "
            + " | ".join(cells)
            + f" | {largest:.2f} |"
        )
    return ["", *lines]


def _cell(statistics, key, bold=False):
    if key not in statistics:
        return ""
    mean, std, seeds = statistics[key]
    text = f"{mean:.3g} ± {std:.2g}" if seeds > 1 else f"{mean:.3g}"
    return f"**{text}**" if bold else text


def results_table(records, settings):
    """The Markdown of `table.md`: MAE per target, method and test size,
    then the best fixed aggregation against LAF at `CLAIM_SPLIT` atoms."""
    statistics = _statistics(records)
    targets = [t for t in TARGETS if any(k[0] == t for k in statistics)]
    methods = [m for m in METHODS if any(k[1] == m for k in statistics)]
    seeds = sorted({k[2] for k in statistics.values()})
    lines = [
        "# Molecules: trained on small, tested on large (RDKit NCI)",
        "",
        f"MAE (mean ± std over {'/'.join(map(str, seeds))} seeds) by heavy "
        f"atoms of the test molecules; trained on {TRAIN_SIZES[1]}-"
        f"{TRAIN_SIZES[2]} atoms, {settings['epochs']} epochs, "
        f"{settings['hidden_units']} hidden units, "
        f"{settings['laf_units']} LAF units. Bold: the best of a column.",
        "",
    ]
    for target in targets:
        header = ["method", *(f"{s} atoms" for s in SPLITS)]
        best = {}
        for split in SPLITS:
            means = {
                m: statistics[(target, m, split)][0]
                for m in methods
                if (target, m, split) in statistics
            }
            best[split] = min(means, key=means.get) if means else None
        lines += [
            f"## {TARGET_LABELS[target]}",
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(" --- " for _ in header) + "|",
        ]
        for method in methods:
            cells = [
                _cell(
                    statistics,
                    (target, method, split),
                    bold=best[split] == method,
                )
                for split in SPLITS
            ]
            lines.append(
                f"| {METHOD_LABELS[method]} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    lines += _comparison_lines(records)
    return "\n".join(lines)


def plot_results(records):
    """The figure of `mae_by_size.png`: per target, the MAE / label std against
    the heavy atoms of the test molecules, a line per method (a colour and
    a marker each), the training sizes shaded."""
    from matplotlib.figure import Figure

    if not records:
        raise ExperimentError("no records to plot")
    groups = {}
    for record in records:
        key = (record["target"], record["method"], record["split"])
        groups.setdefault(key, []).append(record["mae_over_std"])
    targets = [t for t in TARGETS if any(k[0] == t for k in groups)]
    methods = [m for m in METHODS if any(k[1] == m for k in groups)]
    columns = min(3, len(targets))
    rows = math.ceil(len(targets) / columns)
    figure = Figure(
        figsize=(max(4.2 * columns, 6.4), 3.3 * rows + 1.0),
        layout="constrained",
    )
    axes = list(figure.subplots(rows, columns, squeeze=False).flat)
    for unused in axes[len(targets) :]:
        unused.set_visible(False)
    positions = {name: index for index, name in enumerate(SPLITS)}
    for axis, target in zip(axes, targets):
        for method in methods:
            points = [
                (positions[s], np.mean(groups[k]), np.std(groups[k]))
                for s in SPLITS
                if (k := (target, method, s)) in groups
            ]
            if not points:
                continue
            x, mean, std = (np.array(v) for v in zip(*points))
            color, marker = STYLES[method]
            axis.errorbar(
                x,
                mean,
                yerr=std,
                color=color,
                marker=marker,
                markersize=5,
                capsize=2,
                label=METHOD_LABELS[method],
            )
        axis.set_xticks(range(len(SPLITS)), SPLITS)
        axis.set_yscale("log")
        axis.set_title(TARGET_LABELS[target], fontsize="medium")
        axis.set_xlabel("heavy atoms of the test molecules")
        axis.set_ylabel("MAE / std of the labels")
        axis.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 4),
        frameon=False,
    )
    title = (
        f"Trained on molecules of {TRAIN_SIZES[1]}-{TRAIN_SIZES[2]} heavy "
        "atoms (RDKit NCI), tested on larger ones"
    )
    figure.suptitle(title, fontsize="medium")
    return figure


def validation_curves(store):
    """The validation loss of every epoch of the recorded runs.

    Args:
        store: the command's `ResultStore`; each run's `history.csv`.

    Returns:
        A dict from `(target, method)` to a float array `(seeds, epochs)`
        of the validation MAE of the standardised labels; runs without a
        whole history are left out.
    """
    import csv

    curves = {}
    for item in store.runs:
        key = {field: item[field] for field in KEY_FIELDS}
        path = store.history_path(**key)
        if not path.exists():
            continue
        with open(path, newline="") as file:
            losses = [float(row["val_loss"]) for row in csv.DictReader(file)]
        if len(losses) == store.settings["epochs"]:
            curves.setdefault((item["target"], item["method"]), []).append(
                losses
            )
    return {key: np.array(value) for key, value in curves.items()}


def plot_validation_curves(curves):
    """The figure of `validation_by_epoch.png`, or None without curves: per
    target, the mean over seeds of the validation MAE (standardised
    labels) at every epoch, a line per method, to show where training
    levels off."""
    from matplotlib.figure import Figure

    targets = [t for t in TARGETS if any(k[0] == t for k in curves)]
    if not targets:
        return None
    columns = min(3, len(targets))
    rows = math.ceil(len(targets) / columns)
    figure = Figure(
        figsize=(max(4.2 * columns, 6.4), 3.3 * rows + 1.0),
        layout="constrained",
    )
    axes = list(figure.subplots(rows, columns, squeeze=False).flat)
    for unused in axes[len(targets) :]:
        unused.set_visible(False)
    for axis, target in zip(axes, targets):
        for method in METHODS:
            if (target, method) not in curves:
                continue
            losses = curves[(target, method)].mean(axis=0)
            color, marker = STYLES[method]
            axis.plot(
                np.arange(1, len(losses) + 1),
                losses,
                color=color,
                marker=marker,
                markersize=3,
                markevery=max(1, len(losses) // 5),
                label=METHOD_LABELS[method],
            )
        axis.set_yscale("log")
        axis.set_title(TARGET_LABELS[target], fontsize="medium")
        axis.set_xlabel("epoch")
        axis.set_ylabel("validation MAE / std")
        axis.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 4),
        frameon=False,
    )
    title = "Validation loss by epoch, mean over seeds"
    figure.suptitle(title, fontsize="medium")
    return figure

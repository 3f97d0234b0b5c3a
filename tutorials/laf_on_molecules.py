"""
Title: LAF on molecules: trained on small, tested on large
Author: keras-laf contributors
Date created: 2026-12-01
Last modified: 2026-12-01
Description: Featurise RDKit's NCI molecules from SMILES, learn their
    polar surface area on small molecules with a sum and with LAF, and
    predict molecules up to eight times larger.
"""

# ruff: noqa: E402

"""
## Introduction

A molecule is a graph: its atoms are the nodes and its bonds the edges.
Many properties of a molecule add up over its atoms. The topological polar
surface area (TPSA, Ertl et al., 2000) is one: a sum of contributions of
its nitrogen and oxygen atoms, each set by the atom's neighbourhood. A
graph network predicts it by computing something for every atom and
aggregating over the atoms, and the aggregation decides what happens on
molecules larger than any in training: a mean or a maximum cannot grow
with the molecule, a sum can.

Here we learn TPSA on molecules of at most 15 heavy atoms and predict
molecules of 16 to 120. The data ships with RDKit (no download): the
first 4,999 molecules of the NCI database as SMILES, `Data/NCI/
first_5K.smi`, and their TPSA computed with Daylight's tools,
`first_5k.tpsa.csv`. We compare two aggregations in the same network:

- **sum**, GIN's choice (Xu et al., 2019), both over the neighbours of
  each atom and over the atoms of each molecule;
- **LAF** (Pellegrini et al., 2021) with `preset="closed_forms"`, whose
  units start as count, max, min and mean and are pulled onto closed
  forms that hold on any number of elements.

You need RDKit, and matplotlib for the figures: `pip install
"keras-laf[molecules]" matplotlib`.
"""

"""
## Setup
"""

import argparse
import os
import pathlib
import warnings

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from rdkit import RDConfig

from keras_laf.datasets import MoleculeBatches
from keras_laf.datasets import read_smiles_file
from keras_laf.datasets import smiles_to_graphs
from keras_laf.datasets.molecules import ATOM_FEATURES
from keras_laf.datasets.molecules import BOND_FEATURES
from keras_laf.models import molecule_network

NAME = "laf_on_molecules"
parser = argparse.ArgumentParser(
    description=__doc__.split("\n")[1].removeprefix("Title: ")
)
parser.add_argument(
    "--quick", action="store_true", help="a run of a few seconds (tests)"
)
parser.add_argument(
    "--output",
    default=str(pathlib.Path(__file__).resolve().parent / "output" / NAME),
    help="directory of the figures (default: %(default)s)",
)
parser.add_argument("--epochs", type=int, help="training epochs")
args = parser.parse_args()
output_dir = pathlib.Path(args.output)
output_dir.mkdir(parents=True, exist_ok=True)

# --quick: a few hundred molecules and one epoch, to check that it runs.
num_molecules, epochs = (600, 1) if args.quick else (None, 20)
epochs = args.epochs or epochs
keras.utils.set_random_seed(0)

"""
## From SMILES to graphs

`smiles_to_graphs` parses each SMILES with RDKit and turns the molecule
into a graph of its heavy atoms (hydrogens are counted on their atom).
Each atom gets one-hot features, each with an "other" column for values
outside the list: the element, the number of heavy neighbours, the
formal charge, the number of hydrogens and the hybridisation, then 1 or
0 for aromatic and in a ring. Each bond becomes two directed edges, one
each way, with one-hot features of its own. Ethanol, `CCO`:
"""

ethanol = smiles_to_graphs(["CCO"])
for index, row in enumerate(ethanol.node_features[0]):
    names = [ATOM_FEATURES[i] for i in np.flatnonzero(row)]
    print(f"atom {index}: {', '.join(names)}")
print("edges (source, target):", ethanol.edges[0].tolist())
print(
    "bond 0:",
    [BOND_FEATURES[i] for i in np.flatnonzero(ethanol.edge_features[0][0])],
)

"""
RDKit installs the NCI files in its data folder. `read_smiles_file`
reads the SMILES of `first_5K.smi` with their line numbers; the TPSA
file has a comment line, then a `SMILES,TPSA` line for each molecule of
the SMILES file, in the same order, which we check.
"""

nci = pathlib.Path(RDConfig.RDDataDir) / "NCI"
smiles, line_numbers = read_smiles_file(nci / "first_5K.smi")
rows = [
    line.rsplit(",", 1)
    for line in (nci / "first_5k.tpsa.csv").read_text().splitlines()
    if line and not line.startswith("#")
]
if [row[0] for row in rows] != smiles:
    raise ValueError("The TPSA file does not list the SMILES file's molecules")
tpsa = np.array([float(row[1]) for row in rows])

"""
A SMILES that RDKit cannot parse is skipped, never dropped silently: a
warning names its line. Eight of RDKit's NCI molecules (metal complexes,
a hypervalent oxygen) are reported this way, and their TPSA left out.
"""

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    molecules = smiles_to_graphs(smiles, line_numbers, source="first_5K.smi")
for warning in caught[:3]:
    print(warning.message)
labels = tpsa[np.isin(line_numbers, molecules.line_numbers)]
num_atoms = molecules.num_atoms
print(
    f"{len(molecules)} molecules of {num_atoms.min()} to "
    f"{num_atoms.max()} heavy atoms (median {np.median(num_atoms):.0f})"
)

"""
## Small molecules to train on, large ones to test

We train on the molecules of at most 15 heavy atoms, keeping a fifth of
them for validation, and test on three ranges of larger ones.
"""

rng = np.random.default_rng(0)
small = rng.permutation(np.flatnonzero(num_atoms <= 15))
num_validation = len(small) // 5
splits = {
    "train": small[num_validation:],
    "validation": small[:num_validation],
    "16-25": np.flatnonzero((num_atoms >= 16) & (num_atoms <= 25)),
    "26-40": np.flatnonzero((num_atoms >= 26) & (num_atoms <= 40)),
    "41+": np.flatnonzero(num_atoms >= 41),
}
if num_molecules:
    splits = {
        name: items[: num_molecules // 5] for name, items in splits.items()
    }
for name, items in splits.items():
    print(f"{name}: {len(items)} molecules")

"""
The labels are standardised with the training molecules' mean and
standard deviation. `MoleculeBatches` gives `fit` batches of 64
molecules as one disjoint union (the form of `keras_laf.datasets.
disjoint_union`, with the bond features beside it), padded to a few
sizes so that compiled steps compile once per size; the sample weights
keep the padding out of the loss.
"""

mean, std = labels[splits["train"]].mean(), labels[splits["train"]].std()


def batches(split, shuffle=False):
    items = splits[split]
    return MoleculeBatches(
        molecules.subset(items),
        ((labels[items] - mean) / std)[:, None],
        batch_size=64 if shuffle else 256,
        shuffle=shuffle,
        seed=0,
    )


train_data, validation_data = (
    batches("train", shuffle=True),
    batches("validation"),
)
inputs, targets, weights = train_data[0]
print({name: value.shape for name, value in inputs.items()})

"""
## The network

`keras_laf.models.molecule_network` embeds the atoms, passes messages
along the bonds twice (each message sees both atoms and the bond, the
messages reaching an atom are aggregated, and the atom is updated with a
residual sum), projects the atoms into [0, 1] with a sigmoid, aggregates
the atoms of each molecule and ends with a linear layer. The two models
differ only in their aggregations.
"""

AGGREGATIONS = {
    "sum": {"aggregation": "sum", "readout_aggregation": "sum"},
    "LAF closed_forms": {
        "aggregation": "laf",
        "aggregation_kwargs": {"units": 8, "preset": "closed_forms"},
        "readout_aggregation": "laf",
        "readout_aggregation_kwargs": {"units": 8, "preset": "closed_forms"},
    },
}


def build(options):
    return molecule_network(
        len(ATOM_FEATURES),
        len(BOND_FEATURES),
        hidden_units=16,
        message_units=8,
        **options,
    )


build(AGGREGATIONS["LAF closed_forms"]).summary()

"""
## Training

Adam on the mean absolute error of the standardised labels, the learning
rate halved when the validation loss stops falling for three epochs.
"""

models, histories = {}, {}
for label, options in AGGREGATIONS.items():
    print(f"--- {label}")
    keras.utils.set_random_seed(0)
    models[label] = build(options)
    models[label].compile(keras.optimizers.Adam(3e-3), loss="mae")
    histories[label] = (
        models[label]
        .fit(
            train_data,
            validation_data=validation_data,
            epochs=epochs,
            callbacks=[
                keras.callbacks.ReduceLROnPlateau(factor=0.5, patience=3)
            ],
            verbose=2,
        )
        .history
    )

"""
## Predicting larger molecules

`model.predict` on `MoleculeBatches` returns one row per molecule, in
order, without the padding's rows. We undo the standardisation and
measure the MAE in Å² on each range of sizes.
"""

predictions = {}
for label, model in models.items():
    predictions[label] = {}
    for split in ("16-25", "26-40", "41+"):
        test = batches(split)
        outputs = model.predict(test, verbose=0)["graph_outputs"]
        predictions[label][split] = outputs[:, 0] * std + mean
        error = np.mean(
            np.abs(predictions[label][split] - labels[splits[split]])
        )
        print(f"{label}, {split} heavy atoms: MAE {error:.2f} Å²")

"""
Predicted against true TPSA, each test molecule coloured by its number
of heavy atoms; on the diagonal the prediction is exact.
"""

figure, axes = plt.subplots(
    1, len(models), figsize=(5 * len(models), 4.4), layout="constrained"
)
test_items = np.concatenate([splits[s] for s in ("16-25", "26-40", "41+")])
for axis, label in zip(axes, models):
    predicted = np.concatenate(list(predictions[label].values()))
    truth = labels[test_items]
    points = axis.scatter(
        truth, predicted, c=num_atoms[test_items], s=6, cmap="viridis"
    )
    limits = [0, max(truth.max(), predicted.max()) * 1.05]
    axis.plot(limits, limits, color="black", linewidth=0.8)
    axis.set_xlim(limits)
    axis.set_ylim(limits)
    axis.set_xlabel("true TPSA (Å²)")
    axis.set_ylabel("predicted TPSA (Å²)")
    axis.set_title(f"{label}: molecules of 16 heavy atoms and more")
    axis.grid(alpha=0.3)
figure.colorbar(points, ax=axes, label="heavy atoms")
path = output_dir / "predicted_against_true.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
The MAE by range of sizes, with the training sizes to the left: the
further from the training sizes, the more the aggregation matters.
"""

STYLES = {"sum": ("tab:blue", "s"), "LAF closed_forms": ("tab:pink", "P")}
figure, axis = plt.subplots(figsize=(6, 4), layout="constrained")
for label in models:
    errors = [
        np.mean(np.abs(predictions[label][split] - labels[splits[split]]))
        for split in ("16-25", "26-40", "41+")
    ]
    color, marker = STYLES[label]
    axis.plot(
        ["16-25", "26-40", "41+"],
        errors,
        color=color,
        marker=marker,
        label=label,
    )
axis.set_xlabel("heavy atoms of the test molecules (trained on 1-15)")
axis.set_ylabel("MAE (Å²)")
axis.set_yscale("log")
axis.set_title("TPSA of molecules larger than in training")
axis.grid(alpha=0.3)
axis.legend()
path = output_dir / "mae_by_size.png"
figure.savefig(path, dpi=80)
plt.close(figure)
print(f"Saved {path}")

"""
## Going further

- `keras-laf molecules` runs this comparison for six properties (TPSA,
  Crippen's logP and molar refractivity, heavy atoms, the fraction of sp3
  carbons, the largest Gasteiger charge) and eight aggregations (sum,
  mean, max, PNA, softmax, GenAgg and LAF with both presets) over
  several seeds; RESULTS.md has what it gave.
- The largest Gasteiger charge is a maximum over the atoms and the
  fraction of sp3 carbons a ratio of two counts: a sum readout is the
  wrong aggregation for them, and LAF can learn each.
- `keras_laf.DegreeScalerAggregation` adds PNA's degree scalers to any
  aggregation, with `keras_laf.degree_histogram` of the training
  molecules.
"""

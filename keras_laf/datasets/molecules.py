"""Molecules as graphs: SMILES featurised with RDKit into disjoint unions.

Each molecule is a graph whose nodes are its heavy atoms and whose edges
are its bonds, each in both directions. Atoms and bonds are described by
one-hot features with an "other" bucket (`ATOM_FEATURES`, `BOND_FEATURES`,
`NUM_ATOM_FEATURES` and `NUM_BOND_FEATURES` wide), so an element or a
hybridisation never seen in a list still has a place; a user's own
functions of an atom and of a bond may replace them (`atom_featuriser`,
`bond_featuriser`; `feature_widths` gives their widths).
`smiles_to_graphs` parses and featurises, `read_molecule_table` does so
for a CSV of SMILES and properties, `MoleculeGraphs.batch` gives one
disjoint union (`keras_laf.datasets.disjoint_union`, the bonds' features
as its `"edge_features"`) and `MoleculeBatches` the batches of
`keras_laf.datasets.GraphBatches` with the bonds' features, padded to
buckets; `MoleculeGraphs.predict` gives a model's predictions, one row
per molecule.

A row that gives no molecule (a SMILES RDKit cannot parse, an empty one,
`None`, a target that is empty, not a number or not finite) is skipped
and reported: a `SkippedMoleculeWarning` names its line and
`MoleculeGraphs.skipped` lists it. Large inputs are featurised in worker
processes, and `read_molecule_table` caches the graphs on disk, keyed by
the file's content, the columns and the featuriser, so that reading the
file again is a load and a changed file or featuriser is featurised
afresh.

RDKit (the `molecules` extra, `pip install "keras-laf[molecules]"`) is
imported only when SMILES are parsed.
"""

import concurrent.futures
import csv
import functools
import hashlib
import inspect
import io
import json
import multiprocessing
import os
import pathlib
import pickle
import sys
import threading
import typing
import warnings
import zipfile

import keras
import numpy as np

from keras_laf.core.validation import check_positive_int
from keras_laf.datasets.graph_batches import GraphBatches
from keras_laf.datasets.graph_batches import disjoint_union

# The choices of each categorical atom feature; every one has an "other"
# bucket after its choices. RDKit's names of the hybridisations.
ATOM_CATEGORIES = {
    "element": ("C", "N", "O", "S", "F", "Cl", "Br", "I", "P"),
    "degree": (0, 1, 2, 3, 4, 5),
    "formal_charge": (-1, 0, 1),
    "total_hydrogens": (0, 1, 2, 3, 4),
    "hybridisation": ("SP", "SP2", "SP3", "SP3D", "SP3D2"),
}
# Atom features that are true or false, one 0/1 column each.
ATOM_FLAGS = ("aromatic", "in_ring")
BOND_CATEGORIES = {"bond_type": ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")}
BOND_FLAGS = ("conjugated", "in_ring")
OTHER = "other"


def _feature_names(categories, flags):
    names = []
    for feature, choices in categories.items():
        names += [f"{feature}={choice}" for choice in (*choices, OTHER)]
    return (*names, *flags)


# The names of the columns of the atom and bond features, in order, e.g.
# `"element=C"`, `"element=other"`, `"aromatic"`.
ATOM_FEATURES = _feature_names(ATOM_CATEGORIES, ATOM_FLAGS)
BOND_FEATURES = _feature_names(BOND_CATEGORIES, BOND_FLAGS)
NUM_ATOM_FEATURES = len(ATOM_FEATURES)
NUM_BOND_FEATURES = len(BOND_FEATURES)


# Bumped whenever the features of an atom or a bond, or the layout of the
# cache of `read_molecule_table`, change in a way the feature names do not
# show: a cache keyed by another version is never read.
FEATURISER_VERSION = 1
# SMILES per task of a worker process; the progress bar moves once per
# task.
CHUNK_SIZE = 1000
# With `workers=None`, at most one worker process per this many SMILES
# (and one per core): the worker processes import Keras as they start,
# which fewer SMILES do not repay.
SMILES_PER_WORKER = 10_000
# `SkippedMolecule.problem`: the SMILES cannot be parsed, there is no
# SMILES (empty, None, not a string), or a target is not a finite number.
PROBLEMS = ("unparsable", "no_smiles", "bad_target")


def _columns(categories):
    # Per categorical feature, its column of each choice and its "other"
    # column; then the first column of the flags.
    lookups, start = {}, 0
    for feature, choices in categories.items():
        lookups[feature] = (
            {choice: start + index for index, choice in enumerate(choices)},
            start + len(choices),
        )
        start += len(choices) + 1
    return lookups, start


_ATOM_COLUMNS = _columns(ATOM_CATEGORIES)
_BOND_COLUMNS = _columns(BOND_CATEGORIES)


def _hot_columns(columns, values, flags):
    # The columns of one atom or bond set to 1: each categorical value's
    # (or its "other" column), then those of the true flags.
    lookups, first_flag = columns
    hot = [
        by_choice.get(values[feature], other)
        for feature, (by_choice, other) in lookups.items()
    ]
    return hot + [
        first_flag + index for index, flag in enumerate(flags) if flag
    ]


def _one_hot(hot_columns, width):
    # float32 (len(hot_columns), width): 1 at the columns of each row.
    features = np.zeros((len(hot_columns), width), "float32")
    rows = np.repeat(np.arange(len(hot_columns)), [len(c) for c in hot_columns])
    columns = np.array([c for row in hot_columns for c in row], "int64")
    features[rows, columns] = 1.0
    return features


def _atom_columns(atom):
    values = {
        "element": atom.GetSymbol(),
        "degree": atom.GetDegree(),
        "formal_charge": atom.GetFormalCharge(),
        "total_hydrogens": atom.GetTotalNumHs(),
        "hybridisation": str(atom.GetHybridization()),
    }
    return _hot_columns(
        _ATOM_COLUMNS, values, (atom.GetIsAromatic(), atom.IsInRing())
    )


def _bond_columns(bond):
    values = {"bond_type": str(bond.GetBondType())}
    return _hot_columns(
        _BOND_COLUMNS, values, (bond.GetIsConjugated(), bond.IsInRing())
    )


def atom_features(atom):
    """The features of an RDKit atom: `(NUM_ATOM_FEATURES,)` float32.

    One-hot columns for the element, the number of heavy-atom neighbours
    (`GetDegree`), the formal charge, the number of hydrogens, explicit
    and implicit (`GetTotalNumHs`), and the hybridisation, each with an
    "other" column for values outside `ATOM_CATEGORIES`; then 1 or 0 for
    aromatic and in a ring. Column names: `ATOM_FEATURES`.
    """
    return _one_hot([_atom_columns(atom)], NUM_ATOM_FEATURES)[0]


def bond_features(bond):
    """The features of an RDKit bond: `(NUM_BOND_FEATURES,)` float32.

    One-hot columns for the bond type (single, double, triple, aromatic,
    other), then 1 or 0 for conjugated and in a ring. Column names:
    `BOND_FEATURES`.
    """
    return _one_hot([_bond_columns(bond)], NUM_BOND_FEATURES)[0]


# The molecule whose first atom and bond `feature_widths` gives to a
# user's featurisers.
WIDTH_PROBE_SMILES = "CC"


def _feature_row(value, width):
    # `(float32 row, None)`, or `(None, the problem in words)` where
    # `value` is not `width` finite floats (`width=None`: any number but
    # none).
    try:
        row = np.asarray(value, "float32")
    except (TypeError, ValueError):
        return None, f"{value!r}, which is not a sequence of floats"
    if row.ndim != 1:
        return None, f"an array of shape {row.shape}, not a sequence of floats"
    if width is None and not len(row):
        return None, "no features"
    if width is not None and len(row) != width:
        return None, f"{len(row)} features"
    if not np.isfinite(row).all():
        return None, f"features that are not all finite: {row.tolist()}"
    return row, None


def feature_widths(
    atom_featuriser=atom_features, bond_featuriser=bond_features
):
    """The widths of the features of an atom and of a bond.

    What `keras_laf.models.molecule_network` takes for the graphs of
    `smiles_to_graphs` made with these featurisers:
    `(NUM_ATOM_FEATURES, NUM_BOND_FEATURES)` for the defaults. A user's
    featuriser is called on the first atom or bond of ethane
    (`WIDTH_PROBE_SMILES`), and the length of what it returns is its
    width, which it must then give every atom or bond.

    Args:
        atom_featuriser: callable, an RDKit `Atom` to a sequence of finite
            floats. Defaults to `atom_features`.
        bond_featuriser: callable, an RDKit `Bond` to a sequence of finite
            floats. Defaults to `bond_features`.

    Returns:
        A tuple of ints `(num_atom_features, num_bond_features)`.

    Raises:
        ValueError: a featuriser is not callable, or does not return a
            sequence of finite floats for ethane's atom or bond.
        ImportError: RDKit is not installed (needed for a featuriser
            other than the defaults).

    Example:

    >>> from rdkit import Chem
    >>> def chiral_atom_features(atom):
    ...     # The default features, then the tetrahedral chirality.
    ...     tag = atom.GetChiralTag()
    ...     return [
    ...         *atom_features(atom),
    ...         float(tag == Chem.ChiralType.CHI_TETRAHEDRAL_CW),
    ...         float(tag == Chem.ChiralType.CHI_TETRAHEDRAL_CCW),
    ...     ]
    >>> feature_widths(chiral_atom_features)
    (37, 7)
    >>> feature_widths() == (NUM_ATOM_FEATURES, NUM_BOND_FEATURES)
    True
    """
    featurisers = (
        ("atom", atom_featuriser, atom_features, NUM_ATOM_FEATURES),
        ("bond", bond_featuriser, bond_features, NUM_BOND_FEATURES),
    )
    for kind, featuriser, _, _ in featurisers:
        if not callable(featuriser):
            raise ValueError(
                f"`{kind}_featuriser` must be a function of an RDKit "
                f"{kind} to its features. Received: "
                f"{kind}_featuriser={featuriser!r}"
            )
    widths = []
    for kind, featuriser, default, default_width in featurisers:
        if featuriser is default:
            widths.append(default_width)
            continue
        Chem, _ = _rdkit()
        ethane = Chem.MolFromSmiles(WIDTH_PROBE_SMILES)
        first = ethane.GetAtoms()[0] if kind == "atom" else ethane.GetBonds()[0]
        row, problem = _feature_row(featuriser(first), None)
        if problem is not None:
            raise ValueError(
                f"`{kind}_featuriser` must return a sequence of finite "
                f"floats, as many for every {kind}. Received: {problem}, "
                f"for the first {kind} of {WIDTH_PROBE_SMILES!r} (ethane)"
            )
        widths.append(len(row))
    return tuple(widths)


class _FeatureError(ValueError):
    """A user's featuriser gave an atom or a bond bad features."""


def _checked_features(featuriser, kind, items, width, describe):
    # float32 `(len(items), width)`: `featuriser` of each RDKit atom or
    # bond, each row checked (`_FeatureError` naming the first bad one).
    features = np.zeros((len(items), width), "float32")
    for index, item in enumerate(items):
        try:
            values = featuriser(item)
        except Exception as error:
            # Raised with the row's line and SMILES, from a worker too.
            raise _FeatureError(
                f"`{kind}_featuriser` raised {type(error).__name__} on "
                f"{describe(index, item)}: {error}"
            ) from error
        row, problem = _feature_row(values, width)
        if problem is not None:
            raise _FeatureError(
                f"`{kind}_featuriser` gave {describe(index, item)} "
                f"{problem}, where every {kind} must have {width} finite "
                f"features (its width: `feature_widths` finds {width} for "
                f"the first {kind} of {WIDTH_PROBE_SMILES!r})"
            )
        features[index] = row
    return features


class _Featurisers(typing.NamedTuple):
    # The featurisers of `smiles_to_graphs` and their widths, as the
    # worker processes take them.
    atom: typing.Callable
    bond: typing.Callable
    atom_width: int
    bond_width: int


def _featurisers(atom_featuriser, bond_featuriser):
    return _Featurisers(
        atom_featuriser,
        bond_featuriser,
        *feature_widths(atom_featuriser, bond_featuriser),
    )


def _describe_atom(index, atom):
    return f"atom {index} ({atom.GetSymbol()})"


def _describe_bond(index, bond):
    return (
        f"bond {index} ({bond.GetBondType()}, atoms "
        f"{bond.GetBeginAtomIdx()}-{bond.GetEndAtomIdx()})"
    )


def _molecule_graph(molecule, featurisers):
    atoms = molecule.GetAtoms()
    bonds = molecule.GetBonds()
    if featurisers.atom is atom_features:
        # All the atoms' one-hot columns set at once.
        node_features = _one_hot(
            [_atom_columns(atom) for atom in atoms], NUM_ATOM_FEATURES
        )
    else:
        node_features = _checked_features(
            featurisers.atom,
            "atom",
            list(atoms),
            featurisers.atom_width,
            _describe_atom,
        )
    if featurisers.bond is bond_features:
        bond_rows = _one_hot(
            [_bond_columns(bond) for bond in bonds], NUM_BOND_FEATURES
        )
    else:
        bond_rows = _checked_features(
            featurisers.bond,
            "bond",
            list(bonds),
            featurisers.bond_width,
            _describe_bond,
        )
    pairs = np.array(
        [(bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()) for bond in bonds],
        "int32",
    ).reshape(-1, 2)
    # (num_bonds, 2 directions, 2) rows, then one row per direction.
    edges = np.stack([pairs, pairs[:, ::-1]], axis=1).reshape(-1, 2)
    return node_features, edges, np.repeat(bond_rows, 2, axis=0)


def molecule_graph(
    molecule, atom_featuriser=atom_features, bond_featuriser=bond_features
):
    """One RDKit molecule as a graph of its heavy atoms.

    Args:
        molecule: an RDKit `Mol` (hydrogens implicit, as `MolFromSmiles`
            gives them).
        atom_featuriser: callable, an RDKit `Atom` to its features, as
            `smiles_to_graphs` takes it. Defaults to `atom_features`.
        bond_featuriser: callable, an RDKit `Bond` to its features.
            Defaults to `bond_features`.

    Returns:
        A tuple `(node_features, edges, edge_features)`: float32
        `(num_atoms, num_atom_features)` (`atom_featuriser` of each
        atom), int32 `(2 * num_bonds, 2)` rows (source, target), each
        bond in both directions, the bond `i` as rows `2 i` and `2 i + 1`,
        and float32 `(2 * num_bonds, num_bond_features)`, the
        `bond_featuriser` of each row's bond; the widths as
        `feature_widths` gives them.

    Raises:
        ValueError: a featuriser gives an atom or a bond features of
            another width than `feature_widths`'s, or not finite.
    """
    return _molecule_graph(
        molecule, _featurisers(atom_featuriser, bond_featuriser)
    )


class SkippedMolecule(typing.NamedTuple):
    """A row of the input that gives no molecule, and why.

    Attributes:
        line_number: int, the row's line in its source (1-based).
        smiles: the row's SMILES as given (a string, or what stood in its
            place, e.g. `None`).
        problem: str, one of `PROBLEMS`: `"unparsable"` (RDKit cannot
            parse the SMILES), `"no_smiles"` (empty, `None` or not a
            string) or `"bad_target"` (a target is empty, not a number or
            not finite).
        reason: str, the problem in words, e.g. `"RDKit cannot parse
            'C1CC'"`.
    """

    line_number: int
    smiles: object
    problem: str
    reason: str


class SkippedMoleculeWarning(UserWarning):
    """Warned once per row that gives no molecule, naming its line.

    `MoleculeGraphs.skipped` lists the same rows; to read them there
    instead, `warnings.simplefilter("ignore", SkippedMoleculeWarning)`.
    """


class MoleculeGraphs:
    """Molecules parsed from SMILES, as graphs of their heavy atoms.

    Made by `smiles_to_graphs` and `read_molecule_table`. Every list holds
    one entry per molecule kept, in the order of the input; `skipped`
    lists the rows that gave none.

    Attributes:
        smiles: list of str, the SMILES of each molecule.
        line_numbers: list of int, each molecule's line in its source
            (1-based).
        node_features: list of float32 arrays `(num_atoms_i,
            NUM_ATOM_FEATURES)`.
        edges: list of int32 arrays `(num_edges_i, 2)`, both directions.
        edge_features: list of float32 arrays `(num_edges_i,
            NUM_BOND_FEATURES)`.
        skipped: list of `SkippedMolecule`, in the order of their lines.
        molecules: list of RDKit `Mol`, parsed from `smiles` when first
            read (for computing properties).
    """

    def __init__(
        self,
        smiles,
        line_numbers,
        node_features,
        edges,
        edge_features,
        skipped=(),
    ):
        self.smiles = list(smiles)
        self.line_numbers = list(line_numbers)
        self.node_features = list(node_features)
        self.edges = list(edges)
        self.edge_features = list(edge_features)
        self.skipped = list(skipped)
        self._molecules = None

    def __len__(self):
        return len(self.smiles)

    @property
    def molecules(self):
        if self._molecules is None:
            Chem, _ = _rdkit()
            self._molecules = [Chem.MolFromSmiles(text) for text in self.smiles]
        return self._molecules

    @property
    def num_atoms(self):
        """int array `(num_molecules,)`: the heavy atoms of each."""
        return np.array([len(f) for f in self.node_features], "int64")

    def subset(self, indices):
        """The molecules at `indices` (ints or a boolean mask), as a new
        `MoleculeGraphs` with no skipped SMILES."""
        indices = np.arange(len(self))[np.asarray(indices)]
        return MoleculeGraphs(
            *(
                [values[i] for i in indices]
                for values in (
                    self.smiles,
                    self.line_numbers,
                    self.node_features,
                    self.edges,
                    self.edge_features,
                )
            )
        )

    def batch(self, graph_labels=None):
        """All the molecules as one disjoint union, not padded.

        The input of `model(inputs)`, `model.predict_on_batch(inputs)`
        and, for a `keras_laf.models.GraphModel` (the model of
        `keras_laf.models.molecule_network`), `model.predict(inputs)`, one
        row per molecule. A plain `keras.Model`'s `predict` fails inside
        Keras on a union (see `keras_laf.datasets.disjoint_union`):
        `predict` below gives any model's predictions.

        Args:
            graph_labels: optional array-like `(num_molecules, tasks)`,
                finite.

        Returns:
            The inputs of `keras_laf.datasets.disjoint_union` (float32
            `"node_features"`, int32 `"edge_source"`, `"edge_target"`,
            `"node_graph_ids"`, `"nodes_per_graph"`) with float32
            `"edge_features"` `(num_edges, NUM_BOND_FEATURES)`, the
            features of each edge's bond; with labels, a tuple `(inputs,
            {"graph_outputs": labels})`.

        Raises:
            ValueError: a label is NaN or infinite, naming its molecule.

        Example:

        >>> graphs = smiles_to_graphs(["CCO", "c1ccccc1", "CC(=O)O"])
        >>> model = keras_laf.models.molecule_network(
        ...     NUM_ATOM_FEATURES, NUM_BOND_FEATURES, hidden_units=4
        ... )
        >>> model.predict(graphs.batch(), verbose=0)["graph_outputs"].shape
        (3, 1)
        """
        union = disjoint_union(
            self.node_features,
            self.edges,
            graph_labels=graph_labels,
            edge_features=self.edge_features,
            pad=False,
        )
        if graph_labels is not None:
            _check_finite_labels(self, union[1]["graph_outputs"])
        return union

    def predict(self, model, batch_size=256, **kwargs):
        """A model's predictions for the molecules, one row per molecule.

        `model.predict` over the padded batches of `MoleculeBatches`, the
        padding's rows dropped (`MoleculeBatches.predict`).

        Args:
            model: a model of these molecules' inputs with a
                `"graph_outputs"` output, e.g. of
                `keras_laf.models.molecule_network`.
            batch_size: int, molecules per batch. Defaults to `256`.
            **kwargs: arguments of `model.predict` (`verbose`, ...).

        Returns:
            A dict of NumPy arrays: `"graph_outputs"` `(num_molecules,
            ...)`, in the molecules' order (and `"node_outputs"`, one row
            per atom, for a model with that output).

        Example:

        >>> graphs = smiles_to_graphs(["CCO", "c1ccccc1", "CC(=O)O"])
        >>> model = keras_laf.models.molecule_network(
        ...     NUM_ATOM_FEATURES, NUM_BOND_FEATURES, hidden_units=4
        ... )
        >>> graphs.predict(model, verbose=0)["graph_outputs"].shape
        (3, 1)
        """
        batches = MoleculeBatches(self, batch_size=batch_size)
        return batches.predict(model, **kwargs)


def _check_finite_labels(graphs, graph_labels):
    # Before any training step: a NaN label makes every loss after it NaN.
    labels = np.asarray(graph_labels, "float64").reshape(len(graphs), -1)
    bad = np.flatnonzero(~np.isfinite(labels).all(axis=1))
    if bad.size:
        first = bad[0]
        raise ValueError(
            "`graph_labels` must be finite. Received: NaN or infinite labels "
            f"for {bad.size} of {len(graphs)} molecules, the first molecule "
            f"{first} (line {graphs.line_numbers[first]}, "
            f"{graphs.smiles[first]!r}): {labels[first].tolist()}. Leave "
            "them out, e.g. `keep = np.isfinite(labels).all(axis=1)`, then "
            "`graphs.subset(keep)` and `labels[keep]`"
        )


def _rdkit():
    try:
        from rdkit import Chem
        from rdkit import RDLogger
    except ImportError:
        raise ImportError(
            "Featurising molecules needs RDKit, which is not installed. "
            'Install it with: pip install "keras-laf[molecules]" (or pip '
            "install rdkit)."
        ) from None
    return Chem, RDLogger


# `_featurise_smiles`'s problem where a featuriser gives bad features:
# an error, raised in this process with the row's line.
BAD_FEATURES = "bad_features"


def _featurise_smiles(Chem, text, featurisers):
    # `(problem, reason, None)` for a SMILES that gives no molecule or bad
    # features, else `(None, None, _molecule_graph(...))`.
    if not isinstance(text, str):
        return "no_smiles", f"{text!r} is not a SMILES string", None
    if not text.strip():
        return "no_smiles", "the SMILES is empty", None
    molecule = Chem.MolFromSmiles(text)
    if molecule is None:
        return "unparsable", f"RDKit cannot parse {text!r}", None
    try:
        return None, None, _molecule_graph(molecule, featurisers)
    except _FeatureError as error:
        return BAD_FEATURES, str(error), None


def _featurise_chunk(smiles, featurisers):
    # The work of one task, in a worker process or in this one.
    Chem, RDLogger = _rdkit()
    # RDKit's own message for each SMILES it cannot parse would repeat the
    # warnings of the skipped molecules.
    RDLogger.DisableLog("rdApp.*")
    try:
        return [_featurise_smiles(Chem, text, featurisers) for text in smiles]
    finally:
        RDLogger.EnableLog("rdApp.*")


def _check_picklable(featurisers, workers):
    # Worker processes import each featuriser by its module and name: a
    # clear error here rather than a broken process pool.
    hint = (
        "define it with `def` at the top level of a module or script, or "
        "pass `workers=1` to featurise in this process"
    )
    for argument, featuriser in (
        ("atom_featuriser", featurisers.atom),
        ("bond_featuriser", featurisers.bond),
    ):
        try:
            pickle.dumps(featuriser)
        except (pickle.PicklingError, AttributeError, TypeError) as error:
            raise ValueError(
                f"`{argument}` must be picklable to featurise in {workers} "
                f"worker processes. Received: {featuriser!r}, which cannot "
                f"be pickled ({error}); a lambda or a function defined "
                f"inside another cannot: {hint}"
            ) from None
        main = sys.modules["__main__"]
        if getattr(featuriser, "__module__", None) == "__main__" and not (
            getattr(main, "__file__", None)
        ):
            raise ValueError(
                f"`{argument}` must be importable by {workers} worker "
                f"processes. Received: {featuriser!r}, defined in an "
                f"interactive session or a notebook, which they cannot "
                f"import: {hint}"
            )


def _unreadable_main_script():
    # The main script of this process where worker processes would run it
    # again and cannot (its "file" is `<stdin>`), else None: they crash at
    # their start, and the pool then hangs this process at its exit.
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if getattr(main, "__spec__", None) is not None or path is None:
        return None
    return None if os.path.exists(path) else path


def _num_workers(workers, num_smiles):
    if workers is not None:
        return check_positive_int("workers", workers)
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    return max(1, min(cores, num_smiles // SMILES_PER_WORKER))


def _process_context():
    # Workers forked from this process would inherit the threads of JAX
    # and TensorFlow, which fork() can leave deadlocked; a fork server
    # starts clean, imports this module once and forks each worker from
    # there. Where there is none (Windows), workers are spawned.
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__])
        return context
    return multiprocessing.get_context("spawn")


def _featurise_all(smiles, workers, verbose, featurisers):
    # `_featurise_smiles` of every SMILES, in order, in chunks of at most
    # `CHUNK_SIZE`, shared among `workers` worker processes (and this
    # process while they start).
    workers = _num_workers(workers, len(smiles))
    size = max(1, min(CHUNK_SIZE, -(-len(smiles) // workers)))
    chunks = [smiles[i : i + size] for i in range(0, len(smiles), size)]
    task = functools.partial(_featurise_chunk, featurisers=featurisers)
    progress = keras.utils.Progbar(
        len(smiles), verbose=verbose, unit_name="molecule"
    )
    workers = min(workers, len(chunks))
    if workers > 1 and (script := _unreadable_main_script()) is not None:
        warnings.warn(
            f"Featurising in this process instead of {workers} worker "
            f"processes: they cannot start from a script read from "
            f"{script!r} (a script on standard input), which they would "
            "read again. Save the script to a file and run that to use "
            "worker processes, or pass `workers=1`.",
            stacklevel=4,
        )
        workers = 1
    if workers == 1:
        results = []
        for chunk in chunks:
            results.extend(task(chunk))
            progress.add(len(chunk))
        return results
    _check_picklable(featurisers, workers)
    executor = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=_process_context()
    )
    return _ChunkSharing(task, chunks, executor, workers, progress).run()


class _ChunkSharing:
    """The chunks of `_featurise_all`, shared by this process and a pool.

    A feeding thread starts the pool (its first `submit` waits for the
    fork server to import Keras and its backend), then hands its processes
    the chunks from the first on, at most one more than there are
    processes at a time. Meanwhile this process featurises the chunks from
    the last back; once the pool has started it only collects, as the
    results it receives from the pool would otherwise wait for it. Where
    it takes the last chunk before the pool has started, it has
    featurised all.
    """

    def __init__(self, task, chunks, executor, processes, progress):
        # `executor` is shut down (without waiting) once fed; `processes`
        # are its workers.
        self.task = task
        self.chunks = chunks
        self.executor = executor
        self.progress = progress
        self.lock = threading.Lock()
        # The first chunk nobody has taken, and one past the last.
        self.untaken = (0, len(chunks))
        self.slots = threading.Semaphore(processes + 1)
        self.pool_started = threading.Event()
        self.futures = {}
        self.counted = set()
        self.feeding_error = None

    def take(self, first):
        # The index of the next untaken chunk from the first on (or the
        # last back), now taken; None when every chunk is.
        with self.lock:
            start, stop = self.untaken
            if start == stop:
                return None
            if first:
                self.untaken = (start + 1, stop)
                return start
            self.untaken = (start, stop - 1)
            return stop - 1

    def stop_feeding(self):
        with self.lock:
            self.untaken = (0, 0)
        self.slots.release()

    def feed(self):
        try:
            # A task of no work, to start the pool before it takes a chunk.
            self.executor.submit(int)
            self.pool_started.set()
            while True:
                self.slots.acquire()
                index = self.take(first=True)
                if index is None:
                    return
                future = self.executor.submit(self.task, self.chunks[index])
                future.add_done_callback(lambda _: self.slots.release())
                with self.lock:
                    self.futures[index] = future
        except BaseException as error:
            self.feeding_error = error
        finally:
            self.executor.shutdown(wait=False)

    def count(self, indices):
        for index in indices:
            if index not in self.counted:
                self.counted.add(index)
                self.progress.add(len(self.chunks[index]))

    def run(self):
        feeder = threading.Thread(target=self.feed, daemon=True)
        feeder.start()
        results = {}
        try:
            while (
                self.feeding_error is None
                and not self.pool_started.is_set()
                and (index := self.take(first=False)) is not None
            ):
                results[index] = self.task(self.chunks[index])
                self.count([index])
            # Before the pool has started the feeder has taken no chunk.
            if self.pool_started.is_set():
                while feeder.is_alive():
                    feeder.join(timeout=0.1)
                    with self.lock:
                        done = [i for i, f in self.futures.items() if f.done()]
                    self.count(done)
            if self.feeding_error is not None:
                raise self.feeding_error
            for index, future in sorted(self.futures.items()):
                results[index] = future.result()
                self.count([index])
        finally:
            self.stop_feeding()
            with self.lock:
                futures = list(self.futures.values())
            for future in futures:
                future.cancel()
        return [graph for index in sorted(results) for graph in results[index]]


def _graphs(smiles, line_numbers, workers, verbose, featurisers, source):
    # The molecules of `smiles` that give a graph and the skipped rows, as
    # a `MoleculeGraphs`, and a boolean array of the SMILES kept.
    graphs, skipped, kept = [], [], []
    results = _featurise_all(smiles, workers, verbose, featurisers)
    for text, line, (problem, reason, graph) in zip(
        smiles, line_numbers, results
    ):
        if problem == BAD_FEATURES:
            raise ValueError(f"{source} line {line} ({text!r}): {reason}")
        kept.append(graph is not None)
        if graph is None:
            skipped.append(SkippedMolecule(line, text, problem, reason))
        else:
            graphs.append((text, line, *graph))
    columns = [list(column) for column in zip(*graphs)] or [[]] * 5
    return MoleculeGraphs(*columns, skipped), np.array(kept, bool)


def _report(graphs, source):
    # Warns of each skipped row, or raises where no molecule is left.
    if not len(graphs):
        counts = {problem: 0 for problem in PROBLEMS}
        for item in graphs.skipped:
            counts[item.problem] += 1
        summary = ", ".join(f"{n} {p}" for p, n in counts.items() if n)
        first = graphs.skipped[0]
        raise ValueError(
            f"No row of {source} gives a molecule: all {len(graphs.skipped)} "
            f"were skipped ({summary}), e.g. line {first.line_number}: "
            f"{first.reason}. Check that the SMILES (and the targets) are "
            "read from the right column"
        )
    for item in graphs.skipped:
        warnings.warn(
            f"{source} line {item.line_number}: {item.reason}; the molecule "
            "is skipped",
            SkippedMoleculeWarning,
            stacklevel=3,
        )


def smiles_to_graphs(
    smiles,
    line_numbers=None,
    source="SMILES",
    workers=None,
    verbose=0,
    atom_featuriser=atom_features,
    bond_featuriser=bond_features,
):
    """Parses SMILES with RDKit and featurises each molecule as a graph.

    A SMILES that gives no molecule (RDKit cannot parse it, it is empty,
    or it is `None` or another object than a string) is skipped and
    reported: a `SkippedMoleculeWarning` names its line, and
    `MoleculeGraphs.skipped` lists it. RDKit's own error messages are
    silenced meanwhile.

    The features of each atom and bond are those of `atom_featuriser` and
    `bond_featuriser`: by default the one-hot `atom_features` and
    `bond_features`, or a user's own functions of an RDKit `Atom` or
    `Bond` to a sequence of finite floats, as many for every atom (or
    bond) as `feature_widths` gives. A bond's features are those of both
    its edges. Worker processes import the featurisers by their module
    and name: a user's must be defined with `def` at the top level of a
    module or script (a lambda, a function defined inside another or in
    a notebook raise a `ValueError` unless `workers=1`).

    Args:
        smiles: sequence of str, one SMILES per molecule.
        line_numbers: optional sequence of int, the line of each SMILES in
            its source, for the warnings. Defaults to `None`: 1, 2, ...
        source: str. What the SMILES came from, named in the warnings
            and errors (a file name). Defaults to `"SMILES"`.
        workers: int, the worker processes that featurise, each
            `CHUNK_SIZE` SMILES at a time, from the first on; this
            process featurises from the last back while they start. `1`
            featurises in this process alone. Defaults to `None`: one per
            core, and at most one per `SMILES_PER_WORKER` SMILES.
        verbose: int, `1` shows a progress bar (`keras.utils.Progbar`),
            `2` one line at the end, `0` nothing. Defaults to `0`.
        atom_featuriser: callable, an RDKit `Atom` to its features.
            Defaults to `atom_features` (`NUM_ATOM_FEATURES` wide).
        bond_featuriser: callable, an RDKit `Bond` to its features.
            Defaults to `bond_features` (`NUM_BOND_FEATURES` wide).

    Returns:
        A `MoleculeGraphs` of the molecules kept, in order.

    Raises:
        ValueError: `smiles` is a single string or empty, `line_numbers`
            does not have one entry per SMILES, no SMILES gives a
            molecule (the error names `source` and the problems), a
            featuriser gives an atom or a bond another number of features
            than `feature_widths`'s or values that are not finite (the
            error names the line, the SMILES and the width), or a
            featuriser cannot be pickled for worker processes.
        ImportError: RDKit is not installed.

    Example:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     graphs = smiles_to_graphs(["CCO", "C1CC", "CC(=O)O"])
    >>> len(graphs), graphs.num_atoms, graphs.skipped[0].line_number
    (2, array([3, 4]), 2)
    >>> str(caught[0].message)
    "SMILES line 2: RDKit cannot parse 'C1CC'; the molecule is skipped"
    >>> graphs.edges[0]
    array([[0, 1],
           [1, 0],
           [1, 2],
           [2, 1]], dtype=int32)
    """
    if isinstance(smiles, (str, bytes)):
        raise ValueError(
            "`smiles` must be a sequence of SMILES strings, one per "
            f"molecule. Received: a single string smiles={smiles!r}; wrap "
            "it in a list"
        )
    smiles = list(smiles)
    if not smiles:
        raise ValueError(
            f"`smiles` must hold at least one SMILES. Received: none from "
            f"{source}"
        )
    if line_numbers is None:
        line_numbers = range(1, len(smiles) + 1)
    line_numbers = list(line_numbers)
    if len(line_numbers) != len(smiles):
        raise ValueError(
            "`line_numbers` must hold one entry per SMILES. Received: "
            f"{len(line_numbers)} line numbers for {len(smiles)} SMILES"
        )
    featurisers = _featurisers(atom_featuriser, bond_featuriser)
    graphs, _ = _graphs(
        smiles, line_numbers, workers, verbose, featurisers, source
    )
    _report(graphs, source)
    return graphs


def read_smiles_file(path):
    """Reads a SMILES file: the first column of each line, and its line.

    Blank lines and lines starting with `#` are passed over; the other
    columns (a name, a value), separated by spaces or tabs, are ignored.

    Args:
        path: the file, e.g. RDKit's `Data/NCI/first_5K.smi`.

    Returns:
        A tuple `(smiles, line_numbers)` of lists, for `smiles_to_graphs`.

    Raises:
        ValueError: a first column holds a comma, which no SMILES does:
            the file is a CSV, which `read_molecule_table` reads.
    """
    smiles, line_numbers = [], []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if "," in fields[0]:
                raise ValueError(
                    f"{path} line {number} is no SMILES file line: its first "
                    f"column {fields[0]!r} holds commas, which no SMILES "
                    "does. The file looks like a CSV: read it with "
                    "`keras_laf.datasets.read_molecule_table(path, "
                    "smiles_column=..., target_columns=[...])`"
                )
            smiles.append(fields[0])
            line_numbers.append(number)
    return smiles, line_numbers


def default_cache_dir():
    """The folder of the cache of `read_molecule_table`:
    `$XDG_CACHE_HOME/keras-laf/molecules`, `~/.cache/keras-laf/molecules`
    without `XDG_CACHE_HOME`. Deleting it only costs a featurisation."""
    home = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(home) / "keras-laf" / "molecules"


def _target_problem(column, text):
    # Why a target's field is no finite number, or None; and its value.
    text = text.strip()
    if not text:
        return f"target {column!r} is empty", None
    try:
        value = float(text)
    except ValueError:
        return f"target {column!r} is not a number: {text!r}", None
    if not np.isfinite(value):
        return f"target {column!r} is not finite: {text!r}", None
    return None, value


def _read_table(path, text, smiles_column, target_columns, delimiter):
    # The SMILES, lines and targets of the rows whose targets are finite
    # numbers, and the other rows as `SkippedMolecule`s.
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        raise ValueError(
            f"{path} is empty: expected a header row naming its columns"
        )
    for column in (smiles_column, *target_columns):
        if column not in header:
            raise ValueError(
                f"{path} has no column {column!r}. Its columns "
                f"(delimiter {delimiter!r}): {', '.join(header)}"
            )
    smiles_index = header.index(smiles_column)
    target_indices = [header.index(column) for column in target_columns]
    smiles, lines, targets, skipped = [], [], [], []
    try:
        for row in reader:
            if not row:
                continue
            # `line_num` counts the lines read, so the row's last line.
            line = reader.line_num
            fields = row + [""] * (len(header) - len(row))
            values = []
            for column, index in zip(target_columns, target_indices):
                reason, value = _target_problem(column, fields[index])
                if reason is not None:
                    skipped.append(
                        SkippedMolecule(
                            line, fields[smiles_index], "bad_target", reason
                        )
                    )
                    break
                values.append(value)
            else:
                smiles.append(fields[smiles_index])
                lines.append(line)
                targets.append(values)
    except csv.Error as error:
        raise ValueError(
            f"{path} line {reader.line_num} is no CSV row: {error}"
        ) from None
    targets = np.array(targets, "float64").reshape(-1, len(target_columns))
    return smiles, lines, targets, skipped


def _pack_strings(strings):
    # Strings as arrays for `np.savez` without pickling: their UTF-8
    # bytes, one after the other, and the length of each.
    encoded = [str(text).encode() for text in strings]
    return (
        np.frombuffer(b"".join(encoded), "uint8"),
        np.array([len(e) for e in encoded], "int64"),
    )


def _unpack_strings(data, lengths):
    ends = np.cumsum(lengths)
    raw = data.tobytes()
    return [raw[e - n : e].decode() for e, n in zip(ends, lengths)]


def _compact(features):
    # The default featurisers' features, one-hot and flags, 0 or 1, as
    # uint8; a user's featurisers' as they are.
    small = features.astype("uint8")
    return small if np.array_equal(small, features) else features


def _save_cache(path, settings, graphs, targets):
    # One array per field.
    smiles = _pack_strings(graphs.smiles)
    skipped = [_pack_strings(field) for field in zip(*graphs.skipped)]
    if not skipped:
        skipped = [_pack_strings([])] * 4
    arrays = {
        "smiles": smiles[0],
        "smiles_lengths": smiles[1],
        "line_numbers": np.array(graphs.line_numbers, "int64"),
        "num_atoms": graphs.num_atoms,
        "num_edges": np.array([len(e) for e in graphs.edges], "int64"),
        "node_features": _compact(np.concatenate(graphs.node_features)),
        "edges": np.concatenate(graphs.edges).astype("int32"),
        "edge_features": _compact(np.concatenate(graphs.edge_features)),
        "targets": targets,
        "settings": np.array(settings),
    }
    for name, (data, lengths) in zip(
        SkippedMolecule._fields, skipped, strict=True
    ):
        arrays[f"skipped_{name}"] = data
        arrays[f"skipped_{name}_lengths"] = lengths
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        np.savez(file, **arrays)
    os.replace(temporary, path)


def _load_cache(path, settings):
    # `(graphs, targets)` from `_save_cache`'s file, None if it cannot be
    # read or holds the graphs of other settings (the file's name is a
    # part of their hash).
    try:
        with np.load(path) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile):
        return None
    if str(arrays.get("settings")) != settings:
        return None
    atoms = np.cumsum(arrays["num_atoms"])[:-1]
    edges = np.cumsum(arrays["num_edges"])[:-1]
    skipped = [
        _unpack_strings(
            arrays[f"skipped_{name}"], arrays[f"skipped_{name}_lengths"]
        )
        for name in SkippedMolecule._fields
    ]
    graphs = MoleculeGraphs(
        _unpack_strings(arrays["smiles"], arrays["smiles_lengths"]),
        arrays["line_numbers"].tolist(),
        np.split(arrays["node_features"].astype("float32"), atoms),
        np.split(arrays["edges"], edges),
        np.split(arrays["edge_features"].astype("float32"), edges),
        [
            SkippedMolecule(int(line), smiles, problem, reason)
            for line, smiles, problem, reason in zip(*skipped)
        ],
    )
    return graphs, arrays["targets"]


def _featuriser_key(featuriser):
    # What stands for a featuriser in the cache's settings: "default" for
    # `atom_features` and `bond_features` (`FEATURISER_VERSION` and the
    # feature names stand for them); a function's module, qualified name
    # and source text, with its defaults and the values of its closure
    # (those of a factory's functions differ there); a partial's
    # function's, with its arguments. None where there is no source text
    # to read (a callable object, a builtin, a function typed into an
    # interpreter).
    if featuriser is atom_features or featuriser is bond_features:
        return "default"
    if isinstance(featuriser, functools.partial):
        inner = _featuriser_key(featuriser.func)
        return inner and {
            "partial_of": inner,
            "args": repr(featuriser.args),
            "keywords": repr(sorted(featuriser.keywords.items())),
        }
    if not inspect.isfunction(featuriser):
        return None
    try:
        source = inspect.getsource(featuriser)
    except OSError:
        return None
    return {
        "module": featuriser.__module__,
        "qualname": featuriser.__qualname__,
        "source": source,
        "defaults": repr((featuriser.__defaults__, featuriser.__kwdefaults__)),
        "closure": repr(
            [cell.cell_contents for cell in featuriser.__closure__ or ()]
        ),
    }


def _cache_settings(smiles_column, target_columns, delimiter, keys):
    # Beside the file's content, what the cached graphs and targets
    # depend on: the columns and the featurisers (`keys`, each's
    # `_featuriser_key`), as JSON.
    from rdkit import __version__ as rdkit_version

    return json.dumps(
        {
            "smiles_column": smiles_column,
            "target_columns": list(target_columns),
            "delimiter": delimiter,
            "featuriser_version": FEATURISER_VERSION,
            "atom_features": ATOM_FEATURES,
            "bond_features": BOND_FEATURES,
            **keys,
            "rdkit": rdkit_version,
        }
    )


def read_molecule_table(
    path,
    smiles_column,
    target_columns,
    delimiter=",",
    workers=None,
    cache_dir=None,
    verbose=0,
    atom_featuriser=atom_features,
    bond_featuriser=bond_features,
):
    """Reads a CSV of SMILES and properties: molecules as graphs, with targets.

    The file has a header row naming its columns; each further row is a
    molecule. A row is skipped and reported (a `SkippedMoleculeWarning`
    naming its line, listed in `MoleculeGraphs.skipped`) when a target is
    empty, not a number or not finite, or the SMILES gives no molecule
    (`smiles_to_graphs`); no row is dropped silently. Rows are featurised
    in worker processes (`workers`).

    The graphs, the targets and the skipped rows are cached in
    `cache_dir`, in an `.npz` file keyed by a hash of the file's content,
    the columns, `FEATURISER_VERSION`, the feature names, RDKit's version
    and a user's featurisers (each function's module, qualified name and
    source text, its defaults and closure's values): reading the same
    file again loads them (and warns of the same rows), and a changed
    file or featuriser is featurised afresh. The key does not see the
    functions a featuriser calls or the globals it reads: after changing
    one of those, pass `cache_dir=False` once or delete the cache (a
    lambda is keyed by its line's text). A featuriser without
    source text (a callable object, a function typed into an
    interpreter) is not cached, with a warning.

    Args:
        path: the CSV file.
        smiles_column: str, the name of the column of the SMILES.
        target_columns: sequence of str, the names of the columns of the
            targets, in the order of the targets' columns.
        delimiter: str, the character between fields. Defaults to `","`.
        workers: int, the processes that featurise, as
            `smiles_to_graphs`. Defaults to `None`: one per core, and at
            most one per `SMILES_PER_WORKER` rows.
        cache_dir: the cache's folder, or `False` to featurise without a
            cache. Defaults to `None`: `default_cache_dir()`. A folder
            that cannot be written is warned about, not an error.
        verbose: int, `1` shows a progress bar of the featurisation, `2`
            one line at its end, `0` nothing. Defaults to `0`.
        atom_featuriser: callable, an RDKit `Atom` to its features, as
            `smiles_to_graphs` takes it. Defaults to `atom_features`.
        bond_featuriser: callable, an RDKit `Bond` to its features, as
            `smiles_to_graphs` takes it. Defaults to `bond_features`.

    Returns:
        A tuple `(graphs, targets)`: a `MoleculeGraphs` of the molecules
        kept, in the file's order, and float64 `(len(graphs),
        len(target_columns))`, their targets.

    Raises:
        ValueError: the file is not UTF-8 text or not a CSV, a column is
            missing (the error lists those there are), no row gives a
            molecule, or a featuriser fails as in `smiles_to_graphs`.

    Example:

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "mine.csv").write_text(
    ...     "smiles,logp\\nCCO,-0.31\\nc1ccccc1,1.69\\nCCN,n/a\\n"
    ... )
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     graphs, targets = read_molecule_table(
    ...         folder / "mine.csv", "smiles", ["logp"], cache_dir=folder
    ...     )
    >>> graphs.smiles, targets[:, 0]
    (['CCO', 'c1ccccc1'], array([-0.31,  1.69]))
    >>> graphs.skipped[0].line_number, graphs.skipped[0].reason
    (4, "target 'logp' is not a number: 'n/a'")
    """
    if isinstance(target_columns, str):
        raise ValueError(
            "`target_columns` must be a sequence of column names. "
            f"Received: a single string target_columns={target_columns!r}; "
            "wrap it in a list"
        )
    target_columns = list(target_columns)
    featurisers = _featurisers(atom_featuriser, bond_featuriser)
    path = pathlib.Path(path)
    content = path.read_bytes()
    cache = None
    if cache_dir is not False:
        keys = {
            "atom_featuriser": _featuriser_key(featurisers.atom),
            "bond_featuriser": _featuriser_key(featurisers.bond),
        }
        unkeyed = [argument for argument, key in keys.items() if key is None]
        if unkeyed:
            warnings.warn(
                f"The graphs of {path} are not cached: `{unkeyed[0]}` has "
                "no source text to key the cache by, so a change to it "
                "could not be told. Define it with `def` in a file, or "
                "pass `cache_dir=False`",
                stacklevel=2,
            )
        else:
            settings = _cache_settings(
                smiles_column, target_columns, delimiter, keys
            )
            key = hashlib.sha256(content + settings.encode()).hexdigest()
            folder = default_cache_dir() if cache_dir is None else cache_dir
            cache = pathlib.Path(folder) / f"{path.stem}-{key[:20]}.npz"
            loaded = _load_cache(cache, settings) if cache.exists() else None
            if loaded is not None:
                _report(loaded[0], path.name)
                return loaded
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path} is not UTF-8 text ({error.reason} at byte "
            f"{error.start}): expected a CSV of SMILES and targets"
        ) from None
    smiles, lines, targets, bad_targets = _read_table(
        path, text, smiles_column, target_columns, delimiter
    )
    if not smiles and not bad_targets:
        raise ValueError(f"{path} has a header but no rows")
    graphs, kept = (
        _graphs(smiles, lines, workers, verbose, featurisers, path.name)
        if smiles
        else (MoleculeGraphs([], [], [], [], []), np.zeros(0, bool))
    )
    graphs.skipped = sorted(graphs.skipped + bad_targets)
    targets = targets[kept]
    _report(graphs, path.name)
    if cache is not None:
        try:
            _save_cache(cache, settings, graphs, targets)
        except OSError as error:
            warnings.warn(
                f"The graphs of {path} cannot be cached in {cache.parent} "
                f"({error}); they will be featurised again next time. Pass "
                "a writable `cache_dir`, or `cache_dir=False`",
                stacklevel=2,
            )
    return graphs, targets


class MoleculeBatches(GraphBatches):
    """Batches of molecules for `Model.fit`, with their bond features.

    `keras_laf.datasets.GraphBatches` of the molecules' atoms, bonds and
    bond features (drawn afresh each epoch, padded to buckets by
    `pad_graph_batch` with the sample weights that keep padding out of
    the loss): each batch holds `"edge_features"` `(num_edges,
    NUM_BOND_FEATURES)` beside the other inputs, the bond of every real
    edge and zeros for the padding edges (which join padding nodes only).
    The batches are made as they are drawn, so 10^6 molecules take the
    memory of their graphs. `model.predict(batches)` on a
    `keras_laf.models.GraphModel` (the model of
    `keras_laf.models.molecule_network`), and `batches.predict(model)` on
    any model, give one row per molecule.

    Args:
        graphs: a `MoleculeGraphs`.
        graph_labels: optional array-like `(num_molecules, tasks)`, the
            targets of `"graph_outputs"`, finite.
        **kwargs: the arguments of `GraphBatches` (`batch_size`,
            `shuffle`, `seed`, `pad`, ...).

    Raises:
        ValueError: a label is NaN or infinite (naming its molecule), or
            as `GraphBatches`.

    Example:

    >>> graphs = smiles_to_graphs(["CCO", "c1ccccc1"])
    >>> batches = MoleculeBatches(graphs, np.ones((2, 1)), batch_size=2)
    >>> inputs, targets, weights = batches[0]
    >>> inputs["node_features"].shape, inputs["edge_features"].shape
    ((16, 35), (16, 7))
    >>> weights["graph_outputs"][:3]
    array([8., 8., 0.], dtype=float32)
    """

    def __init__(self, graphs, graph_labels=None, **kwargs):
        super().__init__(
            graphs.node_features,
            graphs.edges,
            graph_labels=graph_labels,
            edge_features=graphs.edge_features,
            **kwargs,
        )
        if self.graph_labels is not None:
            _check_finite_labels(graphs, self.graph_labels)

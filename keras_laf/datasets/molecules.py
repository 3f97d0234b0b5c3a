"""Molecules as graphs: SMILES featurised with RDKit into disjoint unions.

Each molecule is a graph whose nodes are its heavy atoms and whose edges
are its bonds, each in both directions. Atoms and bonds are described by
one-hot features with an "other" bucket (`ATOM_FEATURES`, `BOND_FEATURES`),
so an element or a hybridisation never seen in a list still has a place.
`smiles_to_graphs` parses and featurises, `MoleculeGraphs.batch` gives one
disjoint union (the dict of `keras_laf.datasets.disjoint_union` with
`"edge_features"` beside it) and `MoleculeBatches` the batches of
`keras_laf.datasets.GraphBatches`, padded to buckets, with the bond
features padded alike.

RDKit (the `molecules` extra, `pip install "keras-laf[molecules]"`) is
imported only when SMILES are parsed.
"""

import warnings

import numpy as np

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


def _one_hot(categories, values, flags):
    # One row: each categorical value's column (or its "other" column),
    # then the flags.
    row = []
    for feature, choices in categories.items():
        column = np.zeros(len(choices) + 1, "float32")
        value = values[feature]
        column[choices.index(value) if value in choices else -1] = 1.0
        row.append(column)
    row.append(np.asarray(flags, "float32"))
    return np.concatenate(row)


def atom_features(atom):
    """The features of an RDKit atom: `(NUM_ATOM_FEATURES,)` float32.

    One-hot columns for the element, the number of heavy-atom neighbours
    (`GetDegree`), the formal charge, the number of hydrogens, explicit
    and implicit (`GetTotalNumHs`), and the hybridisation, each with an
    "other" column for values outside `ATOM_CATEGORIES`; then 1 or 0 for
    aromatic and in a ring. Column names: `ATOM_FEATURES`.
    """
    values = {
        "element": atom.GetSymbol(),
        "degree": atom.GetDegree(),
        "formal_charge": atom.GetFormalCharge(),
        "total_hydrogens": atom.GetTotalNumHs(),
        "hybridisation": str(atom.GetHybridization()),
    }
    return _one_hot(
        ATOM_CATEGORIES, values, (atom.GetIsAromatic(), atom.IsInRing())
    )


def bond_features(bond):
    """The features of an RDKit bond: `(NUM_BOND_FEATURES,)` float32.

    One-hot columns for the bond type (single, double, triple, aromatic,
    other), then 1 or 0 for conjugated and in a ring. Column names:
    `BOND_FEATURES`.
    """
    values = {"bond_type": str(bond.GetBondType())}
    return _one_hot(
        BOND_CATEGORIES, values, (bond.GetIsConjugated(), bond.IsInRing())
    )


def molecule_graph(molecule):
    """One RDKit molecule as a graph of its heavy atoms.

    Args:
        molecule: an RDKit `Mol` (hydrogens implicit, as `MolFromSmiles`
            gives them).

    Returns:
        A tuple `(node_features, edges, edge_features)`: float32
        `(num_atoms, NUM_ATOM_FEATURES)`, int32 `(2 * num_bonds, 2)` rows
        (source, target), each bond in both directions, the bond `i` as
        rows `2 i` and `2 i + 1`, and float32 `(2 * num_bonds,
        NUM_BOND_FEATURES)`, the features of each row's bond.
    """
    node_features = np.zeros((molecule.GetNumAtoms(), NUM_ATOM_FEATURES))
    for atom in molecule.GetAtoms():
        node_features[atom.GetIdx()] = atom_features(atom)
    edges, edge_features = [], []
    for bond in molecule.GetBonds():
        begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        features = bond_features(bond)
        edges += [(begin, end), (end, begin)]
        edge_features += [features, features]
    return (
        node_features.astype("float32"),
        np.array(edges, "int32").reshape(-1, 2),
        np.array(edge_features, "float32").reshape(-1, NUM_BOND_FEATURES),
    )


class MoleculeGraphs:
    """Molecules parsed from SMILES, as graphs of their heavy atoms.

    Made by `smiles_to_graphs`. Every list holds one entry per molecule
    that parsed, in the order of the SMILES; `skipped` lists those that
    did not.

    Attributes:
        smiles: list of str, the SMILES of each molecule.
        line_numbers: list of int, each molecule's line in its source
            (1-based).
        molecules: list of RDKit `Mol`, for computing properties.
        node_features: list of float32 arrays `(num_atoms_i,
            NUM_ATOM_FEATURES)`.
        edges: list of int32 arrays `(num_edges_i, 2)`, both directions.
        edge_features: list of float32 arrays `(num_edges_i,
            NUM_BOND_FEATURES)`.
        skipped: list of `(line_number, smiles)` that RDKit could not
            parse.
    """

    def __init__(
        self,
        smiles,
        line_numbers,
        molecules,
        node_features,
        edges,
        edge_features,
        skipped=(),
    ):
        self.smiles = list(smiles)
        self.line_numbers = list(line_numbers)
        self.molecules = list(molecules)
        self.node_features = list(node_features)
        self.edges = list(edges)
        self.edge_features = list(edge_features)
        self.skipped = list(skipped)

    def __len__(self):
        return len(self.smiles)

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
                    self.molecules,
                    self.node_features,
                    self.edges,
                    self.edge_features,
                )
            )
        )

    def batch(self, graph_labels=None):
        """All the molecules as one disjoint union, not padded.

        Args:
            graph_labels: optional array-like `(num_molecules, tasks)`.

        Returns:
            The inputs of `keras_laf.datasets.disjoint_union` (float32
            `"node_features"`, int32 `"edge_source"`, `"edge_target"`,
            `"node_graph_ids"`, `"nodes_per_graph"`) with float32
            `"edge_features"` `(num_edges, NUM_BOND_FEATURES)`, the
            features of each edge's bond; with labels, a tuple `(inputs,
            {"graph_outputs": labels})`.
        """
        union = disjoint_union(
            self.node_features, self.edges, graph_labels=graph_labels, pad=False
        )
        inputs, targets = union if isinstance(union, tuple) else (union, None)
        inputs["edge_features"] = _edge_features(
            self.edge_features, len(inputs["edge_source"])
        )
        return inputs if targets is None else (inputs, targets)


def _edge_features(edge_features, num_edges):
    # The rows of the batch's bonds, then zeros for padding edges.
    real = np.concatenate(edge_features).astype("float32")
    padded = np.zeros((num_edges, NUM_BOND_FEATURES), "float32")
    padded[: len(real)] = real
    return padded


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


def smiles_to_graphs(smiles, line_numbers=None, source="SMILES"):
    """Parses SMILES with RDKit and featurises each molecule as a graph.

    A SMILES that RDKit cannot parse is skipped and reported: a warning
    names its line, and `MoleculeGraphs.skipped` lists it. RDKit's own
    error messages are silenced meanwhile.

    Args:
        smiles: sequence of str, one SMILES per molecule.
        line_numbers: optional sequence of int, the line of each SMILES in
            its source, for the warnings. Defaults to `None`: 1, 2, ...
        source: str. What the SMILES came from, named in the warnings
            (a file name). Defaults to `"SMILES"`.

    Returns:
        A `MoleculeGraphs` of the molecules that parsed, in order.

    Raises:
        ValueError: `smiles` is a single string, or `line_numbers` does
            not have one entry per SMILES.
        ImportError: RDKit is not installed.

    Example:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     graphs = smiles_to_graphs(["CCO", "C1CC", "CC(=O)O"])
    >>> len(graphs), graphs.num_atoms, graphs.skipped
    (2, array([3, 4]), [(2, 'C1CC')])
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
    if line_numbers is None:
        line_numbers = range(1, len(smiles) + 1)
    line_numbers = list(line_numbers)
    if len(line_numbers) != len(smiles):
        raise ValueError(
            "`line_numbers` must hold one entry per SMILES. Received: "
            f"{len(line_numbers)} line numbers for {len(smiles)} SMILES"
        )
    Chem, RDLogger = _rdkit()
    kept = {name: [] for name in ("smiles", "lines", "molecules", "graphs")}
    skipped = []
    RDLogger.DisableLog("rdApp.*")
    try:
        for text, line in zip(smiles, line_numbers):
            molecule = Chem.MolFromSmiles(text)
            if molecule is None:
                skipped.append((line, text))
                continue
            kept["smiles"].append(text)
            kept["lines"].append(line)
            kept["molecules"].append(molecule)
            kept["graphs"].append(molecule_graph(molecule))
    finally:
        RDLogger.EnableLog("rdApp.*")
    for line, text in skipped:
        warnings.warn(
            f"{source} line {line}: RDKit cannot parse {text!r}; the "
            "molecule is skipped",
            stacklevel=2,
        )
    node_features, edges, edge_features = (
        [graph[i] for graph in kept["graphs"]] for i in range(3)
    )
    return MoleculeGraphs(
        kept["smiles"],
        kept["lines"],
        kept["molecules"],
        node_features,
        edges,
        edge_features,
        skipped,
    )


def read_smiles_file(path):
    """Reads a SMILES file: the first column of each line, and its line.

    Blank lines and lines starting with `#` are passed over; the other
    columns (a name, a value) are ignored.

    Args:
        path: the file, e.g. RDKit's `Data/NCI/first_5K.smi`.

    Returns:
        A tuple `(smiles, line_numbers)` of lists, for `smiles_to_graphs`.
    """
    smiles, line_numbers = [], []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                smiles.append(fields[0])
                line_numbers.append(number)
    return smiles, line_numbers


class MoleculeBatches(GraphBatches):
    """Batches of molecules for `Model.fit`, with their bond features.

    The batches of `keras_laf.datasets.GraphBatches` (drawn afresh each
    epoch, padded to buckets by `pad_graph_batch` with the sample weights
    that keep padding out of the loss), each with `"edge_features"`
    `(num_edges, NUM_BOND_FEATURES)` beside the other inputs: the bond of
    every real edge, zeros for the padding edges (which join padding
    nodes only). `unpad` drops the padding's predictions as
    `GraphBatches.unpad` does.

    Args:
        graphs: a `MoleculeGraphs`.
        graph_labels: optional array-like `(num_molecules, tasks)`, the
            targets of `"graph_outputs"`.
        **kwargs: the arguments of `GraphBatches` (`batch_size`,
            `shuffle`, `seed`, `pad`, ...).

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
            **kwargs,
        )
        self.edge_features = list(graphs.edge_features)

    def __getitem__(self, index):
        batch = super().__getitem__(index)
        inputs = batch[0] if isinstance(batch, tuple) else batch
        inputs["edge_features"] = _edge_features(
            [self.edge_features[g] for g in self._graphs(index)],
            len(inputs["edge_source"]),
        )
        return batch

"""A user's own atom and bond features: chirality that the default
features cannot see, the widths, featurisers that give the wrong width or
values that are not finite (named by line, SMILES and width), worker
processes and featurisers they cannot import, and the cache of
`read_molecule_table` keyed by the featurisers."""

import csv
import functools
import importlib.util
import os
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip(
    "rdkit",
    reason="RDKit is not installed (pip install 'keras-laf[molecules]')",
)

from rdkit import Chem  # noqa: E402

import keras_laf  # noqa: E402
from keras_laf.datasets import NUM_ATOM_FEATURES  # noqa: E402
from keras_laf.datasets import NUM_BOND_FEATURES  # noqa: E402
from keras_laf.datasets import SkippedMoleculeWarning  # noqa: E402
from keras_laf.datasets import atom_features  # noqa: E402
from keras_laf.datasets import feature_widths  # noqa: E402
from keras_laf.datasets import read_molecule_table  # noqa: E402
from keras_laf.datasets import smiles_to_graphs  # noqa: E402

# The two enantiomers of alanine: the same atoms and bonds, mirrored.
L_ALANINE = "N[C@@H](C)C(=O)O"
D_ALANINE = "N[C@H](C)C(=O)O"
CLOCKWISE = Chem.ChiralType.CHI_TETRAHEDRAL_CW
ANTICLOCKWISE = Chem.ChiralType.CHI_TETRAHEDRAL_CCW


def chiral_atom_features(atom):
    """The default features, then the tetrahedral chirality tag, one-hot."""
    tag = atom.GetChiralTag()
    return [
        *atom_features(atom),
        float(tag == CLOCKWISE),
        float(tag == ANTICLOCKWISE),
    ]


def bond_order_and_ring(bond):
    return [bond.GetBondTypeAsDouble(), float(bond.IsInRing())]


def atomic_mass(atom):
    # Not 0 or 1, as one-hot features are.
    return [atom.GetMass()]


def featurising_process(atom):
    # Which process featurised the atom.
    return [float(os.getpid())]


def parse(smiles, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return smiles_to_graphs(smiles, **kwargs)


def test_chirality_tells_the_enantiomers_apart():
    default = parse([L_ALANINE, D_ALANINE])
    np.testing.assert_array_equal(*default.node_features)
    chiral = parse([L_ALANINE, D_ALANINE], atom_featuriser=chiral_atom_features)
    # RDKit's own stereocentre and its CIP label, for each enantiomer.
    centres = [
        Chem.FindMolChiralCenters(Chem.MolFromSmiles(s))
        for s in (L_ALANINE, D_ALANINE)
    ]
    assert [label for ((_, label),) in centres] == ["S", "R"]
    ((centre, _),) = centres[0]
    for features, plain in zip(chiral.node_features, default.node_features):
        assert features.shape == (6, NUM_ATOM_FEATURES + 2)
        np.testing.assert_array_equal(features[:, :NUM_ATOM_FEATURES], plain)
        others = np.delete(features[:, NUM_ATOM_FEATURES:], centre, axis=0)
        assert not others.any()
    left, right = (f[centre, NUM_ATOM_FEATURES:] for f in chiral.node_features)
    assert sorted([left.tolist(), right.tolist()]) == [[0, 1], [1, 0]]


def test_widths_of_the_defaults_and_of_a_users_featurisers():
    assert feature_widths() == (NUM_ATOM_FEATURES, NUM_BOND_FEATURES)
    assert (NUM_ATOM_FEATURES, NUM_BOND_FEATURES) == (35, 7)
    assert keras_laf.datasets.feature_widths is feature_widths
    widths = feature_widths(chiral_atom_features, bond_order_and_ring)
    assert widths == (37, 2)
    # A salt has no bond: its edge features still have the width.
    graphs = parse(
        ["c1ccccc1O", "[Na+].[Cl-]"],
        atom_featuriser=chiral_atom_features,
        bond_featuriser=bond_order_and_ring,
    )
    assert [f.shape for f in graphs.node_features] == [(7, 37), (2, 37)]
    assert [f.shape for f in graphs.edge_features] == [(14, 2), (0, 2)]
    assert graphs.edge_features[0].dtype == np.float32


def test_a_bond_gives_both_its_edges_its_features():
    smiles = "c1ccccc1C#N"
    graphs = parse([smiles], bond_featuriser=bond_order_and_ring)
    molecule = Chem.MolFromSmiles(smiles)
    for (source, target), row in zip(graphs.edges[0], graphs.edge_features[0]):
        bond = molecule.GetBondBetweenAtoms(int(source), int(target))
        in_ring = source < 6 and target < 6
        assert row.tolist() == [bond.GetBondTypeAsDouble(), float(in_ring)]
    # Aromatic 1.5 in the ring, single to the nitrile, triple.
    assert sorted(set(graphs.edge_features[0][:, 0].tolist())) == [1, 1.5, 3]


def one_per_neighbour(atom):
    return [1.0] * atom.GetDegree()


def nan_for_oxygen(atom):
    return [np.nan if atom.GetSymbol() == "O" else 1.0]


def mass_of_carbon_and_oxygen(atom):
    # A KeyError on any other element.
    return [{"C": 12.0, "O": 16.0}[atom.GetSymbol()]]


def infinite_for_double_bonds(bond):
    return [np.inf if bond.GetBondTypeAsDouble() == 2 else 1.0]


@pytest.mark.parametrize(
    "featurisers, message",
    [
        (
            {"atom_featuriser": one_per_neighbour},
            "SMILES line 3 \\('CCC'\\): `atom_featuriser` gave atom 1 \\(C\\) "
            "2 features, where every atom must have 1 finite features",
        ),
        (
            {"atom_featuriser": nan_for_oxygen},
            "line 4 \\('CCO'\\): `atom_featuriser` gave atom 2 \\(O\\) "
            "features that are not all finite: \\[nan\\], where every atom "
            "must have 1",
        ),
        (
            {"bond_featuriser": infinite_for_double_bonds},
            "line 5 \\('C=C'\\): `bond_featuriser` gave bond 0 \\(DOUBLE, "
            "atoms 0-1\\) features that are not all finite: \\[inf\\]",
        ),
    ],
)
def test_a_bad_row_of_features_names_the_line_smiles_and_width(
    featurisers, message
):
    smiles = ["CC", "CC", "CCC", "CCO", "C=C"]
    with pytest.raises(ValueError, match=message):
        smiles_to_graphs(smiles, **featurisers)


@pytest.mark.parametrize(
    "featurisers, message",
    [
        ({"atom_featuriser": 3}, "Received: atom_featuriser=3"),
        ({"bond_featuriser": "order"}, "Received: bond_featuriser='order'"),
        (
            {"atom_featuriser": lambda atom: atom.GetSymbol()},
            "Received: 'C', which is not a sequence of floats, for the "
            "first atom of 'CC'",
        ),
        (
            {"bond_featuriser": lambda bond: bond.GetBondTypeAsDouble()},
            "Received: an array of shape \\(\\), not a sequence",
        ),
        ({"bond_featuriser": lambda bond: []}, "Received: no features"),
    ],
)
def test_featurisers_that_are_no_functions_of_an_atom_to_floats(
    featurisers, message
):
    with pytest.raises(ValueError, match=message):
        smiles_to_graphs(["CCO"], **featurisers)
    with pytest.raises(ValueError, match=message):
        feature_widths(**featurisers)


def test_a_bad_row_of_a_table_names_its_line(tmp_path):
    path = write_table(tmp_path / "mine.csv", [("CC", 1), ("CCC", 2)])
    with pytest.raises(ValueError, match="mine.csv line 3 \\('CCC'\\)"):
        read_molecule_table(
            path,
            "smiles",
            ["value"],
            cache_dir=False,
            atom_featuriser=one_per_neighbour,
        )


@pytest.mark.parametrize(
    "workers", [1, pytest.param(2, marks=pytest.mark.slow)]
)
def test_a_featurisers_own_error_names_the_line_and_smiles(workers):
    smiles = ["CC", "CCO", "CCN", "CC"]
    message = (
        "SMILES line 3 \\('CCN'\\): `atom_featuriser` raised KeyError on "
        "atom 2 \\(N\\): 'N'"
    )
    with pytest.raises(ValueError, match=message):
        smiles_to_graphs(
            smiles, workers=workers, atom_featuriser=mass_of_carbon_and_oxygen
        )


def test_worker_processes_need_featurisers_they_can_import(monkeypatch):
    def local(atom):
        return [1.0]

    for featurisers in (
        {"atom_featuriser": lambda atom: [1.0]},
        {"bond_featuriser": local},
    ):
        with pytest.raises(ValueError, match="must be picklable .*workers=1"):
            smiles_to_graphs(["CC", "CCO"], workers=2, **featurisers)
        # The same in this process.
        assert len(parse(["CC", "CCO"], workers=1, **featurisers)) == 2
    # A function of a notebook or an interpreter's session pickles, but
    # the worker processes cannot import it.
    main = sys.modules["__main__"]
    local.__module__, local.__qualname__ = "__main__", "typed_in"
    monkeypatch.setattr(main, "typed_in", local, raising=False)
    monkeypatch.delattr(main, "__file__", raising=False)
    with pytest.raises(ValueError, match="interactive session or a notebook"):
        smiles_to_graphs(["CC", "CCO"], workers=2, atom_featuriser=local)


@pytest.mark.slow
def test_worker_processes_give_a_users_features_in_order():
    smiles = [L_ALANINE, D_ALANINE, "C1CC", "c1ccccc1O", "[Na+].[Cl-]"] * 8
    featurisers = {
        "atom_featuriser": chiral_atom_features,
        "bond_featuriser": bond_order_and_ring,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedMoleculeWarning)
        alone = smiles_to_graphs(smiles, workers=1, **featurisers)
        shared = smiles_to_graphs(smiles, workers=2, **featurisers)
    assert shared.smiles == alone.smiles and shared.skipped == alone.skipped
    assert len(shared) == 32
    for name in ("node_features", "edge_features"):
        for ours, theirs in zip(getattr(shared, name), getattr(alone, name)):
            np.testing.assert_array_equal(ours, theirs)


@pytest.mark.slow
def test_this_process_featurises_beside_its_worker_from_the_last_chunk():
    smiles = ["CCO", "c1ccccc1", "CC(=O)O", "CCN"] * 500
    graphs = smiles_to_graphs(
        smiles, workers=2, atom_featuriser=featurising_process
    )
    assert graphs.smiles == smiles
    featurised_by = [features[0, 0] for features in graphs.node_features]
    # Chunks of 1,000: this process takes the last at once, the worker
    # the first once its process has started (or this process both).
    assert featurised_by[-1] == os.getpid()
    assert len(set(featurised_by[:1000])) == len(set(featurised_by[1000:])) == 1


def write_table(path, rows):
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([("smiles", "value"), *rows])
    return path


ROWS = [("CCO", 1.5), ("c1ccccc1", 2.5), ("CC(=O)O", 3.5)]


def read(path, cache, **featurisers):
    return read_molecule_table(
        path, "smiles", ["value"], cache_dir=cache, **featurisers
    )


def load_module(path, text):
    # A module of the user's, its source text `text`, loaded afresh.
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("user_featurisers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cache_keeps_a_users_features_as_they_are(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    first, _ = read(path, tmp_path / "cache", atom_featuriser=atomic_mass)
    again, _ = read(path, tmp_path / "cache", atom_featuriser=atomic_mass)
    (cached,) = (tmp_path / "cache").iterdir()
    with np.load(cached) as data:
        assert data["node_features"].dtype == np.float32
    expected = [atom.GetMass() for atom in Chem.MolFromSmiles("CCO").GetAtoms()]
    for graphs in (first, again):
        np.testing.assert_allclose(graphs.node_features[0][:, 0], expected)


def test_a_changed_featuriser_is_not_served_from_the_cache(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    cache = tmp_path / "cache"
    source = tmp_path / "user_featurisers.py"
    version_1 = load_module(source, "def atom_value(atom):\n    return [1.0]\n")
    graphs, targets = read(path, cache, atom_featuriser=version_1.atom_value)
    assert graphs.node_features[0].tolist() == [[1.0]] * 3
    # Doubled targets in the cache show whether a read comes from it.
    (cached,) = cache.iterdir()
    with np.load(cached) as data:
        arrays = dict(data)
    np.savez(cached, **{**arrays, "targets": 2 * arrays["targets"]})
    _, doubled = read(path, cache, atom_featuriser=version_1.atom_value)
    np.testing.assert_array_equal(doubled, 2 * targets)
    # The same module and name, another body.
    version_2 = load_module(
        source, "def atom_value(atom):\n    return [float(atom.GetDegree())]\n"
    )
    changed, fresh = read(path, cache, atom_featuriser=version_2.atom_value)
    np.testing.assert_array_equal(fresh, targets)
    assert changed.node_features[0].tolist() == [[1.0], [2.0], [1.0]]
    # The defaults and the bond featuriser are keyed too.
    _, defaults = read(path, cache)
    np.testing.assert_array_equal(defaults, targets)
    read(path, cache, bond_featuriser=bond_order_and_ring)
    assert len(list(cache.iterdir())) == 4


def scaled_degree(scale):
    # A factory: its functions differ only in their closure.
    def featuriser(atom):
        return [scale * atom.GetDegree()]

    return featuriser


def test_closures_and_partials_are_keyed_by_their_values(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    cache = tmp_path / "cache"
    for scale in (1.0, 3.0, 1.0):
        graphs, _ = read(path, cache, atom_featuriser=scaled_degree(scale))
        assert graphs.node_features[0][:, 0].tolist() == [
            scale,
            2 * scale,
            scale,
        ]

    def with_scale(atom, scale):
        return [scale * atom.GetDegree()]

    for scale in (2.0, 5.0):
        featuriser = functools.partial(with_scale, scale=scale)
        graphs, _ = read(path, cache, atom_featuriser=featuriser)
        assert graphs.node_features[0][:, 0].tolist() == [
            scale,
            2 * scale,
            scale,
        ]
    assert len(list(cache.iterdir())) == 4


class Degree:
    def __call__(self, atom):
        return [float(atom.GetDegree())]


def test_a_featuriser_without_source_text_is_not_cached(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    cache = tmp_path / "cache"
    with pytest.warns(UserWarning, match="not cached: `atom_featuriser` has"):
        graphs, _ = read(path, cache, atom_featuriser=Degree())
    assert graphs.node_features[0][:, 0].tolist() == [1, 2, 1]
    assert not cache.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(path, False, atom_featuriser=Degree())

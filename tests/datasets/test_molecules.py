"""Molecules from SMILES as graphs: the features against RDKit's own
counts and a hand-checked molecule, unparsable, empty and missing SMILES
reported with their line, a CSV of SMILES and targets with its bad rows
and its cache, the bond features through padded batches, predictions one
row per molecule, and `molecule_network` giving the same outputs on
padded and unpadded batches, on every backend."""

import csv
import json
import subprocess
import sys
import warnings

import keras
import numpy as np
import pytest

pytest.importorskip(
    "rdkit",
    reason="RDKit is not installed (pip install 'keras-laf[molecules]')",
)

from rdkit import Chem  # noqa: E402

import keras_laf  # noqa: E402
from keras_laf.datasets import MoleculeBatches  # noqa: E402
from keras_laf.datasets import SkippedMoleculeWarning  # noqa: E402
from keras_laf.datasets import molecules as molecule_features  # noqa: E402
from keras_laf.datasets import read_molecule_table  # noqa: E402
from keras_laf.datasets import read_smiles_file  # noqa: E402
from keras_laf.datasets import smiles_to_graphs  # noqa: E402
from keras_laf.models import molecule_network  # noqa: E402

pytestmark = pytest.mark.multi_backend

# Molecules of 7, 3, 4, 6, 5 and 2 heavy atoms: single, double, triple
# and aromatic bonds, a ring, charges, an element outside the list and a
# salt without bonds.
SMILES = [
    "CCCCCCC",
    "C=CC",
    "C#CCC",
    "c1ccccc1",
    "CCC(=O)[O-]",
    "[Na+].[Cl-]",
]


def parse(smiles):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return smiles_to_graphs(smiles)


def hot(row):
    return np.flatnonzero(row).tolist()


def test_feature_names_are_one_hot_blocks_with_other_buckets():
    names = molecule_features.ATOM_FEATURES
    assert len(names) == molecule_features.NUM_ATOM_FEATURES == 35
    assert names[:3] == ("element=C", "element=N", "element=O")
    assert names[9] == "element=other"
    assert names[-2:] == ("aromatic", "in_ring")
    assert molecule_features.BOND_FEATURES == (
        "bond_type=SINGLE",
        "bond_type=DOUBLE",
        "bond_type=TRIPLE",
        "bond_type=AROMATIC",
        "bond_type=other",
        "conjugated",
        "in_ring",
    )


def test_acetic_acid_by_hand():
    graphs = parse(["CC(=O)O"])
    # Columns: element C 0, O 2 | degree 0..5 at 10..15 | formal charge
    # -1, 0, +1 at 17, 18, 19 | hydrogens 0..4 at 21..25 | SP 27, SP2 28,
    # SP3 29 | aromatic 33, in a ring 34.
    assert [hot(row) for row in graphs.node_features[0]] == [
        [0, 11, 18, 24, 29],  # CH3: degree 1, 3 H, sp3
        [0, 13, 18, 21, 28],  # C(=O): degree 3, no H, sp2
        [2, 11, 18, 21, 28],  # =O: degree 1, no H, sp2
        [2, 11, 18, 22, 28],  # OH: degree 1, 1 H, sp2 (conjugated)
    ]
    # Each bond in both directions, in the bonds' order.
    assert graphs.edges[0].tolist() == [
        [0, 1],
        [1, 0],
        [1, 2],
        [2, 1],
        [1, 3],
        [3, 1],
    ]
    # Single 0, double 1 | conjugated 5.
    assert [hot(row) for row in graphs.edge_features[0]] == [
        [0],
        [0],
        [1, 5],
        [1, 5],
        [0, 5],
        [0, 5],
    ]
    assert graphs.node_features[0].dtype == np.float32
    assert graphs.edges[0].dtype == np.int32


def test_other_buckets_and_a_molecule_without_bonds():
    graphs = parse(["[Na+].[Cl-]", "c1ccccc1"])
    sodium, chlorine = (hot(row) for row in graphs.node_features[0])
    # Na: element other 9, degree 0, charge +1, no H, hybridisation "S"
    # (other, 32).
    assert sodium == [9, 10, 19, 21, 32]
    assert chlorine == [5, 10, 17, 21, 29]
    assert graphs.edges[0].shape == (0, 2)
    assert graphs.edge_features[0].shape == (0, 7)
    # Benzene: aromatic sp2 CH in a ring; aromatic, conjugated ring bonds.
    assert hot(graphs.node_features[1][0]) == [0, 12, 18, 22, 28, 33, 34]
    assert hot(graphs.edge_features[1][0]) == [3, 5, 6]


def test_graphs_match_rdkit_counts_on_the_nci_molecules():
    from laf_experiments.data.nci_molecules import nci_directory

    smiles, _ = read_smiles_file(nci_directory() / "first_5K.smi")
    smiles = smiles[:300]
    graphs = parse(smiles)
    assert len(graphs) == 300
    for text, features, edges, bonds in zip(
        smiles, graphs.node_features, graphs.edges, graphs.edge_features
    ):
        molecule = Chem.MolFromSmiles(text)
        assert len(features) == molecule.GetNumHeavyAtoms()
        assert len(edges) == len(bonds) == 2 * molecule.GetNumBonds()
        # Both directions of every bond, with the same features.
        assert sorted(map(tuple, edges)) == sorted(map(tuple, edges[:, ::-1]))
        np.testing.assert_array_equal(bonds[0::2], bonds[1::2])
        # Exactly one column of each one-hot block.
        assert (features.sum(axis=1) - features[:, -2:].sum(axis=1) == 5).all()
        degrees = np.bincount(edges[:, 1], minlength=len(features))
        np.testing.assert_array_equal(
            degrees, [atom.GetDegree() for atom in molecule.GetAtoms()]
        )


def test_unparsable_smiles_are_reported_with_their_line():
    with pytest.warns(UserWarning) as caught:
        graphs = smiles_to_graphs(
            ["CCO", "C1CC", "c1cc", "CCN"],
            line_numbers=[10, 11, 12, 13],
            source="mine.smi",
        )
    messages = [str(warning.message) for warning in caught]
    assert messages == [
        "mine.smi line 11: RDKit cannot parse 'C1CC'; the molecule is skipped",
        "mine.smi line 12: RDKit cannot parse 'c1cc'; the molecule is skipped",
    ]
    assert [(s.line_number, s.smiles, s.problem) for s in graphs.skipped] == [
        (11, "C1CC", "unparsable"),
        (12, "c1cc", "unparsable"),
    ]
    assert graphs.smiles == ["CCO", "CCN"]
    assert graphs.line_numbers == [10, 13]


def test_empty_and_missing_smiles_are_reported_like_unparsable_ones():
    with pytest.warns(SkippedMoleculeWarning) as caught:
        graphs = smiles_to_graphs(["CCO", "", None, "  ", float("nan"), "C"])
    assert [str(warning.message) for warning in caught] == [
        "SMILES line 2: the SMILES is empty; the molecule is skipped",
        "SMILES line 3: None is not a SMILES string; the molecule is skipped",
        "SMILES line 4: the SMILES is empty; the molecule is skipped",
        "SMILES line 5: nan is not a SMILES string; the molecule is skipped",
    ]
    assert graphs.smiles == ["CCO", "C"]
    assert {s.problem for s in graphs.skipped} == {"no_smiles"}
    assert graphs.num_atoms.tolist() == [3, 1]


def test_input_without_any_molecule_is_an_error_that_names_it():
    with pytest.raises(ValueError, match="No row of mine.smi gives a molecule"):
        smiles_to_graphs(["C1CC", "", None], source="mine.smi")
    with pytest.raises(ValueError, match="2 unparsable, 1 no_smiles"):
        smiles_to_graphs(["C1CC", "", "c1cc"])
    with pytest.raises(ValueError, match="at least one SMILES"):
        smiles_to_graphs([])


def test_a_csv_given_as_a_smiles_file_is_an_error_with_a_hint(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("smiles,logp\nCCO,-0.31\n")
    with pytest.raises(ValueError, match="line 1 .* holds commas") as error:
        read_smiles_file(path)
    assert "read_molecule_table" in str(error.value)


def test_feature_widths_are_public():
    datasets = keras_laf.datasets
    assert datasets.NUM_ATOM_FEATURES == len(datasets.ATOM_FEATURES) == 35
    assert datasets.NUM_BOND_FEATURES == len(datasets.BOND_FEATURES) == 7
    graphs = parse(["CCO"])
    assert graphs.node_features[0].shape[1] == datasets.NUM_ATOM_FEATURES
    assert graphs.edge_features[0].shape[1] == datasets.NUM_BOND_FEATURES


def test_smiles_file_lines_are_counted_with_comments_and_blanks(tmp_path):
    path = tmp_path / "molecules.smi"
    path.write_text("# a header\nCCO ethanol\n\nC1CC broken\nCCN 3\n")
    smiles, lines = read_smiles_file(path)
    assert (smiles, lines) == (["CCO", "C1CC", "CCN"], [2, 4, 5])
    with pytest.warns(UserWarning, match="molecules.smi line 4"):
        smiles_to_graphs(smiles, lines, source="molecules.smi")


@pytest.mark.parametrize(
    "smiles, line_numbers, message",
    [
        ("CCO", None, "Received: a single string smiles='CCO'"),
        (["CCO", "CC"], [1], "1 line numbers for 2 SMILES"),
    ],
)
def test_bad_arguments(smiles, line_numbers, message):
    with pytest.raises(ValueError, match=message):
        smiles_to_graphs(smiles, line_numbers)


def test_padded_batches_carry_each_edge_its_bond():
    graphs = parse(SMILES)
    # The molecules differ in atoms: a batch's counts name its molecules.
    by_size = {int(n): index for index, n in enumerate(graphs.num_atoms)}
    batches = MoleculeBatches(
        graphs, np.zeros((len(SMILES), 1)), batch_size=4, shuffle=True, seed=3
    )
    for index in range(len(batches)):
        inputs, _, weights = batches[index]
        num_real = int((weights["graph_outputs"] > 0).sum())
        sizes = inputs["nodes_per_graph"][:num_real]
        molecules = [by_size[int(n)] for n in sizes]
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        edges = np.concatenate(
            [graphs.edges[m] + o for m, o in zip(molecules, offsets)]
        )
        bonds = np.concatenate([graphs.edge_features[m] for m in molecules])
        pairs = np.stack([inputs["edge_source"], inputs["edge_target"]], 1)
        np.testing.assert_array_equal(pairs[: len(edges)], edges)
        np.testing.assert_array_equal(
            inputs["edge_features"][: len(bonds)], bonds
        )
        # Padding edges have no bond.
        assert len(inputs["edge_features"]) == len(pairs)
        assert not inputs["edge_features"][len(bonds) :].any()


def test_batch_of_all_molecules_is_their_disjoint_union():
    graphs = parse(SMILES)
    inputs, targets = graphs.batch(np.arange(6.0)[:, None])
    assert inputs["nodes_per_graph"].tolist() == [7, 3, 4, 6, 5, 2]
    assert len(inputs["edge_features"]) == len(inputs["edge_source"]) == 42
    np.testing.assert_array_equal(
        inputs["edge_features"], np.concatenate(graphs.edge_features)
    )
    assert targets["graph_outputs"].shape == (6, 1)
    subset = graphs.subset([3, 0])
    assert subset.smiles == ["c1ccccc1", "CCCCCCC"] and subset.skipped == []


@pytest.mark.parametrize(
    "aggregation",
    ["sum", "laf", "pna"],
)
def test_padded_and_unpadded_batches_give_the_same_outputs(aggregation):
    graphs = parse(SMILES)
    union = graphs.batch()
    readout = aggregation
    if aggregation == "pna":
        histogram = keras_laf.degree_histogram(
            union["edge_target"], num_nodes=len(union["node_features"])
        )
        aggregation = keras_laf.DegreeScalerAggregation(
            ["mean", "max", "min", "std"],
            ["identity", "amplification", "attenuation"],
            degree_histogram=histogram,
        )
        readout = ["mean", "max", "min", "std"]
    model = molecule_network(
        molecule_features.NUM_ATOM_FEATURES,
        molecule_features.NUM_BOND_FEATURES,
        aggregation=aggregation,
        aggregation_kwargs={"units": 2} if aggregation == "laf" else None,
        readout_aggregation=readout,
        readout_aggregation_kwargs={"units": 2} if readout == "laf" else None,
        hidden_units=8,
    )
    unpadded = keras.ops.convert_to_numpy(
        model.predict_on_batch(union)["graph_outputs"]
    )
    batches = MoleculeBatches(graphs, batch_size=4)
    padded = batches.unpad(model.predict(batches, verbose=0))["graph_outputs"]
    assert padded.shape == (len(SMILES), 1)
    np.testing.assert_allclose(padded, unpadded, rtol=1e-4, atol=1e-5)


def test_molecule_network_fits_on_padded_batches():
    graphs = parse(SMILES)
    labels = graphs.num_atoms[:, None].astype("float32")
    model = molecule_network(
        molecule_features.NUM_ATOM_FEATURES,
        molecule_features.NUM_BOND_FEATURES,
        aggregation="laf",
        aggregation_kwargs={"units": 2, "preset": "closed_forms"},
        readout_aggregation="laf",
        readout_aggregation_kwargs={"units": 2, "preset": "closed_forms"},
        hidden_units=8,
    )
    model.compile("adam", loss="mae")
    history = model.fit(
        MoleculeBatches(graphs, labels, batch_size=3, shuffle=True, seed=0),
        epochs=2,
        verbose=0,
    )
    assert np.isfinite(history.history["loss"]).all()
    assert all(layer.name for layer in model.layers)
    assert {"convolution_1", "convolution_2", "readout"} <= {
        layer.name for layer in model.layers
    }


def test_molecule_network_saves_and_reloads(tmp_path):
    graphs = parse(SMILES)
    model = molecule_network(
        molecule_features.NUM_ATOM_FEATURES,
        molecule_features.NUM_BOND_FEATURES,
        aggregation=keras_laf.SoftmaxAggregation(learn=True),
        readout_aggregation="laf",
        readout_aggregation_kwargs={"units": 2},
        hidden_units=8,
    )
    union = graphs.batch()
    path = tmp_path / "molecules.keras"
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(reloaded(union)["graph_outputs"]),
        keras.ops.convert_to_numpy(model(union)["graph_outputs"]),
        rtol=1e-5,
    )


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"num_atom_features": 0}, "Received: num_atom_features=0"),
        ({"num_bond_features": -1}, "Received: num_bond_features=-1"),
        ({"hidden_units": "8"}, "hidden_units='8'"),
        ({"num_layers": 0}, "Received: num_layers=0"),
    ],
)
def test_molecule_network_rejects_bad_arguments(arguments, message):
    arguments = {"num_atom_features": 3, **arguments}
    with pytest.raises(ValueError, match=message):
        molecule_network(**arguments)


def test_without_bond_features_there_is_no_edge_input():
    model = molecule_network(3, aggregation="max", readout_aggregation="mean")
    assert "edge_features" not in model.input
    inputs = keras_laf.datasets.disjoint_union(
        [np.ones((3, 3)), np.ones((2, 3))],
        [np.array([[0, 1], [1, 0]]), np.zeros((0, 2), "int32")],
        pad=False,
    )
    assert keras.ops.convert_to_numpy(model(inputs)["graph_outputs"]).shape == (
        2,
        1,
    )


def write_table(path, rows, header=("id", "smiles", "logp", "weight")):
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([header, *rows])
    return path


# Lines 2-9 of a table: good rows, then one of each problem.
ROWS = [
    (1, "CCO", "-0.31", "46.07"),
    (2, "c1ccccc1", "1.69", "78.11"),
    (3, "C1CC", "1.0", "1.0"),
    (4, "", "1.0", "1.0"),
    (5, "CCN", "", "45.08"),
    (6, "CCC", "n/a", "44.10"),
    (7, "CCCC", "2.89", "inf"),
    (8, "CC(=O)O", "-0.17", "60.05"),
]


def read(path, **kwargs):
    with pytest.warns(SkippedMoleculeWarning) as caught:
        graphs, targets = read_molecule_table(
            path, "smiles", ["logp", "weight"], **kwargs
        )
    return graphs, targets, [str(warning.message) for warning in caught]


def test_table_rows_and_their_problems_by_line(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    graphs, targets, messages = read(path, cache_dir=False)
    assert graphs.smiles == ["CCO", "c1ccccc1", "CC(=O)O"]
    assert graphs.line_numbers == [2, 3, 9]
    np.testing.assert_array_equal(
        targets, [[-0.31, 46.07], [1.69, 78.11], [-0.17, 60.05]]
    )
    assert messages == [
        f"mine.csv line {line}: {reason}; the molecule is skipped"
        for line, reason in [
            (4, "RDKit cannot parse 'C1CC'"),
            (5, "the SMILES is empty"),
            (6, "target 'logp' is empty"),
            (7, "target 'logp' is not a number: 'n/a'"),
            (8, "target 'weight' is not finite: 'inf'"),
        ]
    ]
    assert [s.problem for s in graphs.skipped] == [
        "unparsable",
        "no_smiles",
        *["bad_target"] * 3,
    ]
    # The same molecules as their SMILES alone.
    alone = parse(graphs.smiles)
    for ours, theirs in zip(graphs.node_features, alone.node_features):
        np.testing.assert_array_equal(ours, theirs)


def test_table_errors_name_the_file_and_the_columns(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    with pytest.raises(ValueError, match="no column 'SMILES'.*id, smiles"):
        read_molecule_table(path, "SMILES", ["logp"], cache_dir=False)
    with pytest.raises(ValueError, match="wrap it in a list"):
        read_molecule_table(path, "smiles", "logp", cache_dir=False)
    bad = write_table(tmp_path / "bad.csv", [(1, "CCO", "x", "1")])
    with pytest.raises(ValueError, match="No row of bad.csv gives a molecule"):
        read_molecule_table(bad, "smiles", ["logp"], cache_dir=False)
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"smiles,logp\n\xff\xfe,1\n")
    with pytest.raises(ValueError, match="binary.csv is not UTF-8 text"):
        read_molecule_table(binary, "smiles", ["logp"], cache_dir=False)


def test_the_cache_is_read_again_and_never_stale(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS)
    cache = tmp_path / "cache"
    graphs, targets, messages = read(path, cache_dir=cache)
    (cached,) = cache.iterdir()
    # Doubled targets in the cache show whether a read comes from it.
    with np.load(cached) as data:
        arrays = dict(data)
    np.savez(cached, **{**arrays, "targets": 2 * arrays["targets"]})
    again, doubled, repeated = read(path, cache_dir=cache)
    np.testing.assert_array_equal(doubled, 2 * targets)
    assert repeated == messages
    assert again.skipped == graphs.skipped
    assert again.line_numbers == graphs.line_numbers
    for name in ("node_features", "edges", "edge_features"):
        for ours, theirs in zip(getattr(again, name), getattr(graphs, name)):
            assert ours.dtype == theirs.dtype
            np.testing.assert_array_equal(ours, theirs)
    # Graphs of another featuriser version are featurised afresh.
    settings = json.loads(str(arrays["settings"]))
    settings["featuriser_version"] = molecule_features.FEATURISER_VERSION - 1
    stale = {"settings": np.array(json.dumps(settings))}
    np.savez(cached, **{**arrays, **stale, "targets": 2 * arrays["targets"]})
    _, fresh, _ = read(path, cache_dir=cache)
    np.testing.assert_array_equal(fresh, targets)
    # Other columns or a changed file: another cache.
    with pytest.warns(SkippedMoleculeWarning):
        _, logp = read_molecule_table(path, "smiles", ["logp"], cache_dir=cache)
    np.testing.assert_array_equal(logp[:, 0], [-0.31, 1.69, 2.89, -0.17])
    write_table(path, ROWS[:2] + [(9, "CCCl", "1.5", "64.5")])
    changed, changed_targets = read_molecule_table(
        path, "smiles", ["logp", "weight"], cache_dir=cache
    )
    assert changed.smiles == ["CCO", "c1ccccc1", "CCCl"]
    np.testing.assert_array_equal(changed_targets[:, 0], [-0.31, 1.69, 1.5])
    assert len(list(cache.iterdir())) == 3


def test_a_cache_that_cannot_be_written_is_a_warning(tmp_path):
    path = write_table(tmp_path / "mine.csv", ROWS[:2])
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with pytest.warns(UserWarning, match="cannot be cached in .*file"):
        graphs, _ = read_molecule_table(
            path, "smiles", ["logp"], cache_dir=not_a_folder
        )
    assert graphs.smiles == ["CCO", "c1ccccc1"]


def test_non_finite_labels_are_an_error_before_training():
    graphs = parse(SMILES)
    labels = np.arange(6.0)[:, None]
    labels[4, 0] = np.nan
    message = "molecule 4 \\(line 5, 'CCC\\(=O\\)\\[O-\\]'\\)"
    with pytest.raises(ValueError, match=message):
        MoleculeBatches(graphs, labels)
    with pytest.raises(ValueError, match="NaN or infinite labels for 1 of 6"):
        graphs.batch(labels)


def test_predict_gives_one_row_per_molecule():
    # 60 molecules in one batch of 64 graph rows.
    smiles = [SMILES[i % len(SMILES)] for i in range(60)]
    graphs = parse(smiles)
    model = molecule_network(
        molecule_features.NUM_ATOM_FEATURES,
        molecule_features.NUM_BOND_FEATURES,
        aggregation="sum",
        hidden_units=4,
    )
    expected = keras.ops.convert_to_numpy(
        model.predict_on_batch(graphs.batch())["graph_outputs"]
    )
    batches = MoleculeBatches(graphs, batch_size=64)
    for predictions in (
        # The union and the padded batch (64 graph rows): 60 rows each.
        model.predict(graphs.batch(), verbose=0),
        model.predict(batches, verbose=0),
        batches.predict(model, verbose=0),
        graphs.predict(model, batch_size=16, verbose=0),
    ):
        assert predictions["graph_outputs"].shape == (60, 1)
        np.testing.assert_allclose(
            predictions["graph_outputs"], expected, rtol=1e-4, atol=1e-5
        )
    shuffled = MoleculeBatches(graphs, batch_size=16, shuffle=True)
    with pytest.raises(ValueError, match="shuffle=False"):
        shuffled.predict(model, verbose=0)


@pytest.mark.slow
def test_worker_processes_give_the_same_graphs_in_order():
    from laf_experiments.data.nci_molecules import nci_directory

    smiles, lines = read_smiles_file(nci_directory() / "first_5K.smi")
    smiles, lines = smiles[2000:2400], lines[2000:2400]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedMoleculeWarning)
        alone = smiles_to_graphs(smiles, lines, workers=1)
        shared = smiles_to_graphs(smiles, lines, workers=2, verbose=0)
    messages = [str(warning.message) for warning in caught]
    # Line 2098 does not parse: warned once by each.
    assert len(messages) == 2 and messages[0] == messages[1]
    assert shared.smiles == alone.smiles and shared.skipped == alone.skipped
    for ours, theirs in zip(shared.node_features, alone.node_features):
        np.testing.assert_array_equal(ours, theirs)
    for ours, theirs in zip(shared.edge_features, alone.edge_features):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.slow
def test_a_script_on_standard_input_featurises_in_its_own_process():
    # Worker processes run the parent's main script again, which a script
    # read from standard input ("<stdin>") cannot give them: before, they
    # crashed (BrokenProcessPool) and the interpreter hung at its exit.
    script = (
        "from keras_laf.datasets import smiles_to_graphs\n"
        "graphs = smiles_to_graphs(['CCO', 'c1ccccc1'] * 20, workers=2)\n"
        "print(len(graphs))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip() == "40"
    assert "Featurising in this process instead of 2 worker" in (
        completed.stderr
    )


def test_a_model_without_the_bond_input_is_named_before_training():
    # Before: Keras fed the bond features to another input and failed on
    # a shape (7 against the atoms' 35 features) that named neither.
    graphs = parse(SMILES)
    model = molecule_network(
        molecule_features.NUM_ATOM_FEATURES, hidden_units=4
    )
    model.compile("adam", "mse")
    batches = MoleculeBatches(graphs, np.ones((len(SMILES), 1)))
    for run in (
        lambda: model.fit(batches, verbose=0),
        lambda: model.predict(graphs.batch(), verbose=0),
        lambda: batches.predict(model, verbose=0),
    ):
        with pytest.raises(ValueError, match="input 'edge_features'"):
            run()

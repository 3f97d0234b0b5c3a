"""`keras-laf molecules`: RDKit's NCI molecules and their targets, a
user's CSV with its bad rows and its own size splits, the table and the
figure from known records, bad input in one line, and the command's
`--quick` run end to end on both."""

import csv
import hashlib
import math
import sys
import warnings

import numpy as np
import pytest
from experiment_helpers import QUIET
from experiment_helpers import assert_png
from experiment_helpers import read_csv
from experiment_helpers import read_json
from experiment_helpers import run

pytest.importorskip(
    "rdkit",
    reason="RDKit is not installed (pip install 'keras-laf[molecules]')",
)

from laf_experiments import molecule_methods  # noqa: E402
from laf_experiments import molecule_reports  # noqa: E402
from laf_experiments import plots  # noqa: E402
from laf_experiments.data import molecule_tables  # noqa: E402
from laf_experiments.data import nci_molecules  # noqa: E402


@pytest.fixture(scope="module")
def nci():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        molecules = nci_molecules.load_nci_molecules()
    messages = [str(warning.message) for warning in caught]
    assert len(messages) == 8
    assert messages[0].startswith("first_5K.smi line 2098: RDKit cannot")
    return molecules


def test_nci_molecules_and_their_targets(nci):
    # 4,999 SMILES, of which RDKit parses 4,991.
    assert len(nci.graphs) == 4991
    assert [item.line_number for item in nci.skipped] == [
        2098,
        2898,
        3227,
        3370,
        4509,
        4596,
        4597,
        4781,
    ]
    labels = nci.labels
    assert set(labels) == set(nci_molecules.TARGETS)
    np.testing.assert_array_equal(labels["heavy_atoms"], nci.graphs.num_atoms)
    # The shipped TPSA of the first line, CC1=CC(=O)C=CC1=O.
    assert labels["tpsa"][0] == 34.14
    assert ((labels["fraction_sp3"] >= 0) & (labels["fraction_sp3"] <= 1)).all()
    # RDKit has no Gasteiger parameters for some atoms (metals).
    missing = np.isnan(labels["max_gasteiger_charge"])
    assert 0 < missing.sum() < 200
    assert all(np.isfinite(labels[t]).all() for t in nci_molecules.TARGETS[:5])


def test_splits_by_heavy_atoms(nci):
    splits = nci.split_indices(
        nci_molecules.TRAIN_SIZES, nci_molecules.TEST_SIZES
    )
    sizes = nci.graphs.num_atoms
    assert len(splits["train"]) + len(splits["validation"]) == 2739
    assert len(splits["validation"]) == 548
    assert [len(splits[name]) for name in ("16-25", "26-40", "41+")] == [
        1708,
        459,
        85,
    ]
    assert sizes[splits["train"]].max() == 15
    assert sizes[splits["41+"]].min() == 41
    assert not set(splits["train"]) & set(splits["validation"])


def test_tpsa_file_must_follow_the_smiles(tmp_path):
    path = tmp_path / "tpsa.csv"
    path.write_text("# comment\nCCO,20.23\nCCN,26.02\n")
    np.testing.assert_array_equal(
        nci_molecules.read_tpsa(path, ["CCO", "CCN"]), [20.23, 26.02]
    )
    with pytest.raises(ValueError, match="2 rows for 1 SMILES"):
        nci_molecules.read_tpsa(path, ["CCO"])


def records(values, seeds=(0, 1)):
    """Records from `{(target, method): mae at 26-40}`: the other splits
    half and twice the value, each seed 10% above the one before."""
    found = []
    for (target, method), mae in values.items():
        for index, seed in enumerate(seeds):
            for split, factor in (("16-25", 0.5), ("26-40", 1.0), ("41+", 2)):
                found.append(
                    {
                        "target": target,
                        "method": method,
                        "split": split,
                        "seed": seed,
                        "mae": mae * factor * (1 + 0.1 * index),
                        "mae_over_std": mae * factor / 10,
                    }
                )
    return found


KNOWN = {
    ("tpsa", "sum"): 10.0,
    ("tpsa", "max"): 40.0,
    ("tpsa", "laf"): 12.0,
    ("tpsa", "laf_closed_forms"): 4.0,
    ("max_gasteiger_charge", "sum"): 0.5,
    ("max_gasteiger_charge", "max"): 0.1,
    ("max_gasteiger_charge", "laf"): 0.2,
}


def test_comparisons_name_the_best_fixed_aggregation():
    found = molecule_reports.comparisons(records(KNOWN), "26-40")
    assert set(found) == {"tpsa", "max_gasteiger_charge"}
    tpsa = found["tpsa"]
    assert (tpsa["best"], tpsa["best_fixed"]) == ("laf_closed_forms", "sum")
    assert tpsa["to_best"]["sum"] == pytest.approx(2.5)
    assert tpsa["to_best_fixed"]["laf_closed_forms"] == pytest.approx(0.4)
    charge = found["max_gasteiger_charge"]
    assert charge["best_fixed"] == "max"
    assert charge["to_best_fixed"]["laf"] == pytest.approx(2.0)


def test_comparisons_on_each_set_of_five_seeds():
    # LAF ran seeds 0 and 5, the sum seeds 0, 5 and 6.
    known = records({("tpsa", "laf"): 1.0}, seeds=(0, 5))
    known += records({("tpsa", "sum"): 2.0}, seeds=(0, 5, 6))
    found = molecule_reports.comparisons(known, "26-40")["tpsa"]
    # Seed set 0-4: 1 / 2; 5-9: 1.1 / mean(2.2, 2.4).
    by_set = found["to_best_fixed_by_set"]["laf"]
    assert by_set == [(0, pytest.approx(0.5)), (5, pytest.approx(1.1 / 2.3))]


def test_table_and_figure_from_known_records(tmp_path):
    settings = {
        "epochs": 20,
        "hidden_units": 16,
        "laf_units": 8,
        "source": nci_molecules.SOURCE,
        "train_sizes": "1-15",
        "claim_split": "26-40",
    }
    labels = nci_molecules.TARGET_LABELS
    table = molecule_reports.results_table(records(KNOWN), settings, labels)
    assert table.startswith(
        "# Molecules: trained on small, tested on large (RDKit Data/NCI"
    )
    assert "## TPSA (Å², shipped file)" in table
    assert "## Each aggregation against the best at 26-40 atoms" in table
    # Mean and population std of 10 and 11; the best of a column in bold.
    assert "| Sum | 5.25 ± 0.25 | 10.5 ± 0.5 | 21 ± 1 |" in table
    assert "| LAF (closed_forms) | **2.1 ± 0.1** |" in table
    assert "| tpsa | Sum (10.5) | 1.20 | 0.40 | LAF (closed_forms) |" in table
    assert "| max_gasteiger_charge | Max (0.105) | 2.00 |  | Max |" in table
    # Each method over the best of each target, and the largest.
    assert "| Sum | 2.50 | 5.00 | 5.00 |" in table
    # Seeds 0 and 1 are one set of five: no figures in brackets to explain.
    assert "in brackets" not in table
    both_sets = records(KNOWN, seeds=(0, 5))
    table = molecule_reports.results_table(both_sets, settings, labels)
    assert "in brackets, on each set of 5 seeds (0-4, 5-9, ...)" in table
    assert "| tpsa | Sum (10.5) | 1.20 (1.20, 1.20) |" in table
    path = tmp_path / "figure.png"
    figure = molecule_reports.plot_results(records(KNOWN), settings, labels)
    plots.save_figure(figure, path, quick=True)
    assert_png(path)
    assert figure.get_suptitle().endswith("(--quick: not a result)")


def test_laf_preset_flag_reaches_the_laf_method():
    from laf_experiments import cli

    args = cli.build_parser().parse_args(["molecules", "--laf-preset", "paper"])
    assert args.laf_preset == "paper"
    assert molecule_methods.aggregations("laf", None, args.laf_preset) == {
        "aggregation": "laf",
        "readout_aggregation": "laf",
        "laf_preset": "paper",
    }
    assert (
        molecule_methods.aggregations("laf_closed_forms", None, "paper")[
            "laf_preset"
        ]
        == "closed_forms"
    )
    assert molecule_methods.aggregations("max", None, "paper") == {
        "aggregation": "max",
        "readout_aggregation": "max",
    }


def test_bad_arguments_are_one_line(tmp_path, capsys):
    status, _, err = run(
        ["molecules", "--targets", "boiling_point", "--output", str(tmp_path)],
        capsys,
    )
    assert status == 2
    assert "unknown target 'boiling_point'" in err
    assert "Traceback" not in err


def test_missing_rdkit_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "rdkit", None)
    status, _, err = run(
        ["molecules", *QUIET, "--output", str(tmp_path / "out")], capsys
    )
    assert status == 2
    assert "keras-laf molecules needs rdkit" in err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("keras-laf: error:")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("16-25", ("16-25", 16, 25)),
        ("41+", ("41+", 41, math.inf)),
        (" 7 ", ("7", 7, 7)),
    ],
)
def test_size_ranges(text, expected):
    assert molecule_tables.parse_size_range(text) == expected


@pytest.mark.parametrize("text", ["0-3", "5-2", "a-b", "", "-3", "3-", "+"])
def test_bad_size_ranges(text):
    with pytest.raises(ValueError, match="expected heavy atoms"):
        molecule_tables.parse_size_range(text)


def test_overlapping_size_ranges():
    train = ("1-15", 1, 15)
    test = molecule_tables.parse_size_ranges("16-25,26+")
    molecule_tables.check_size_ranges(train, test)
    with pytest.raises(ValueError, match="1-15 and 15-25 overlap"):
        molecule_tables.check_size_ranges(train, [("15-25", 15, 25)])
    with pytest.raises(ValueError, match="16-25 and 20\\+ overlap"):
        molecule_tables.check_size_ranges(train, [*test[:1], ("20+", 20, 99)])


# Each end group and its heavy atoms.
END_GROUPS = {"": 0, "O": 1, "N": 1, "Cl": 1, "C(=O)O": 3}
# After the molecules: one row of each problem, lines 102 to 105.
BAD_ROWS = [("C1CC", "1"), ("", "2"), ("CCO", "n/a"), ("CCN", "inf")]


def write_molecules(path):
    """A CSV of chains of 1 to 20 carbons with an end group, lines 2 to
    101, labelled with 1.5 times their heavy atoms, then `BAD_ROWS`."""
    rows = [
        ("C" * length + end, f"{1.5 * (length + atoms):.1f}")
        for length in range(1, 21)
        for end, atoms in END_GROUPS.items()
    ]
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([("smiles", "atoms"), *rows, *BAD_ROWS])
    return path


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--data", "missing.csv", "--targets", "y"], "cannot read missing"),
        (["--data", "{csv}", "--targets", "y"], "has no column 'y'"),
        (["--data", "{csv}"], "--data needs --targets"),
        (["--train-sizes", "1-20", "--test-sizes", "15-30"], "overlap"),
        (["--train-sizes", "1-5,6-7"], "--train-sizes takes one range"),
        (["--test-sizes", "20-10"], "expected heavy atoms"),
    ],
)
def test_bad_data_flags_are_one_line(tmp_path, capsys, flags, message):
    path = write_molecules(tmp_path / "mine.csv")
    flags = [flag.format(csv=path) for flag in flags]
    argv = ["molecules", *QUIET, *flags, "--output", str(tmp_path / "out")]
    status, _, err = run(argv, capsys)
    assert status == 2
    assert "Traceback" not in err
    # The error is one line, after argparse's usage for a bad flag.
    assert message in err.strip().splitlines()[-1]
    assert "error:" in err.strip().splitlines()[-1]


@pytest.mark.slow
def test_quick_run_on_a_csv_records_its_rows_and_splits(tmp_path, capsys):
    path = write_molecules(tmp_path / "mine.csv")
    output = tmp_path / "out"
    argv = [
        "molecules",
        *QUIET,
        "--data",
        str(path),
        "--targets",
        "atoms",
        "--train-sizes",
        "1-10",
        "--test-sizes",
        "11-15,16+",
        "--methods",
        "sum",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--output",
        str(output),
    ]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    settings = read_json(output)["settings"]
    assert settings["source"] == "mine.csv"
    assert (
        settings["data_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    )
    assert settings["num_molecules"] == 100
    assert settings["skipped_rows"] == {
        "unparsable": 1,
        "no_smiles": 1,
        "bad_target": 2,
    }
    assert (settings["train_sizes"], settings["test_sizes"]) == (
        "1-10",
        ["11-15", "16+"],
    )
    assert settings["claim_split"] == "16+"
    # Heavy atoms 1-10: 10 + 3 * 9 + 7 molecules, a fifth for validation.
    assert settings["split_molecules"] == {
        "train": 35,
        "validation": 9,
        "11-15": 25,
        "16+": 31,
    }
    (item,) = read_json(output)["runs"]
    assert [t["num_molecules"] for t in item["test"]] == [25, 31]
    skipped = read_csv(output / "skipped_rows.csv")
    assert [(row["line"], row["problem"]) for row in skipped] == [
        ("102", "unparsable"),
        ("103", "no_smiles"),
        ("104", "bad_target"),
        ("105", "bad_target"),
    ]
    assert "skipped line 104: target 'atoms' is not a number: 'n/a'" in out
    table = (output / "table.md").read_text()
    assert table.startswith("# Molecules: trained on small, tested on large")
    assert table.splitlines()[0].endswith("(mine.csv) (--quick: not a result)")
    assert "## atoms" in table and "| 11-15 atoms | 16+ atoms |" in table
    assert_png(output / "mae_by_size.png")
    assert len(list((tmp_path / "cache").iterdir())) == 1
    # Again: the molecules from the cache, every run recorded.
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert "already recorded" in out


@pytest.mark.slow
def test_quick_run_writes_its_records(tmp_path, capsys):
    output = tmp_path / "molecules"
    argv = [
        "molecules",
        *QUIET,
        "--methods",
        "sum,laf_closed_forms",
        "--output",
        str(output),
    ]
    status, out, err = run(argv, capsys)
    assert status == 0, err
    results = read_json(output)
    assert results["experiment"] == "molecules"
    assert results["settings"]["epochs"] == 1
    assert results["settings"]["train_size"] == 256
    runs = {(r["target"], r["method"]) for r in results["runs"]}
    assert runs == {("tpsa", "sum"), ("tpsa", "laf_closed_forms")}
    for item in results["runs"]:
        assert [t["split"] for t in item["test"]] == ["16-25", "26-40", "41+"]
        assert all(t["num_molecules"] == 32 for t in item["test"])
        assert all(math.isfinite(t["mae"]) for t in item["test"])
    rows = read_csv(output / "results.csv")
    assert len(rows) == 6
    assert set(rows[0]) == {
        "target",
        "method",
        "split",
        "seed",
        "mae",
        "mae_over_std",
        "run",
    }
    assert rows[0]["run"] == "--quick: not a result"
    assert (output / "table.md").read_text().startswith("# Molecules")
    assert_png(output / "mae_by_size.png")
    assert_png(output / "validation_by_epoch.png")
    assert "RDKit cannot parse" in out
    # Run again: every run is recorded already.
    status, out, _ = run(argv, capsys)
    assert status == 0
    assert out.count("already recorded") == 2

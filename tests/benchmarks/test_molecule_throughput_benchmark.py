"""`python -m benchmarks.molecule_throughput` on a tiny CSV without the
peers: every keras-laf figure on each backend, PyG's left out."""

import json
import pathlib

import pytest
from benchmark_helpers import run_benchmark

pytest.importorskip("rdkit")

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
SMILES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN", "C1CCCCC1", "CC(C)O", "CCCl"]


def run(arguments):
    return run_benchmark("benchmarks.molecule_throughput", arguments)


@pytest.mark.slow
def test_tiny_run_without_peers_writes_its_record(tmp_path):
    data = tmp_path / "properties.csv"
    rows = [
        f"{i},{smiles},{1.0 + i},{900.0 + i},{1.4 + i / 100}"
        for i, smiles in enumerate(SMILES)
    ]
    # One row whose SMILES does not parse: counted, not fatal.
    rows.append("99,C1CC,1.0,2.0,3.0")
    data.write_text("Sl.No,Mol_Smiles,Pol_DFT,Den_MD,RI_LL\n" + "\n".join(rows))
    output = tmp_path / "record.json"
    completed = run(
        [
            f"--data={data}",
            "--molecules=7",
            "--workers=2",
            "--epochs=2",
            "--batch-size=4",
            "--hidden-units=4",
            f"--output={output}",
        ]
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    record = json.loads(output.read_text())
    assert set(record) >= {"commit", "date", "ratios"}
    assert record["rows"] == 7 and record["peers"] is False
    assert "pyg_featurisation" not in record
    assert sorted(record["epochs"]) == [
        "jax",
        "tensorflow",
        "tensorflow_no_xla",
        "torch",
    ]
    # GraphModel compiles padded batches with XLA on TensorFlow.
    assert record["epochs"]["tensorflow"]["jit_compile"] is True
    assert record["epochs"]["tensorflow_no_xla"]["jit_compile"] is False
    featurisation = record["featurisation"]
    assert featurisation["molecules"] == 7 and featurisation["skipped"] == 0
    assert featurisation["seconds"]["table_second_read"] > 0
    parameters = {run["parameters"] for run in record["epochs"].values()}
    assert len(parameters) == 1
    for run_record in record["epochs"].values():
        assert len(run_record["epoch_seconds"]) == 2
        assert run_record["batches_per_epoch"] == 2
        assert run_record["peak_rss_mib"] > 0
    assert "epoch jax / tensorflow" in record["ratios"]
    assert not any("pyg" in name for name in record["ratios"])
    assert "PyG" not in completed.stdout


@pytest.mark.slow
def test_data_and_peers_are_checked(tmp_path):
    completed = run([])
    assert completed.returncode == 2 and "--data" in completed.stderr
    data = tmp_path / "properties.csv"
    data.write_text("Mol_Smiles,Pol_DFT,Den_MD,RI_LL\nCCO,1,2,3\n")
    completed = run([f"--data={data}", f"--peers={tmp_path}"])
    assert completed.returncode == 2
    assert "no torch_geometric" in completed.stderr

"""`python -m benchmarks.learnable_aggregations` on its smallest settings: one
record per (method, task, seed), skipped when present, the table and the
CSV at the end."""

import csv
import json
import pathlib

import pytest
from benchmark_helpers import run_benchmark

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
SMALLEST = [
    "--methods=sum,genagg",
    "--tasks=integer:max,regression:harmonic_mean",
    "--seeds=0",
    "--epochs=1",
    "--train-size=64",
    "--test-size=16",
]


def run(arguments):
    return run_benchmark("benchmarks.learnable_aggregations", arguments)


@pytest.mark.slow
def test_smallest_run_writes_records_resumes_and_tabulates(tmp_path):
    completed = run([*SMALLEST, f"--output={tmp_path}"])
    assert completed.returncode == 0, completed.stderr
    records = sorted(tmp_path.glob("*.json"))
    assert [path.name for path in records] == [
        "genagg__integer-max__seed0.json",
        "genagg__regression-harmonic_mean__seed0.json",
        "sum__integer-max__seed0.json",
        "sum__regression-harmonic_mean__seed0.json",
    ]
    record = json.loads(records[0].read_text())
    assert record["method"] == "genagg" and record["epochs"] == 1
    assert record["mae_10"] >= 0 and record["seconds_per_epoch"] > 0
    assert "| integer:max | genagg |" in completed.stdout
    with open(tmp_path / "summary.csv") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 4 and rows[0]["failures"] == "0"
    table = (tmp_path / "table.md").read_text().splitlines()
    assert table[0] == "| task | sum | genagg | constant |"
    assert table[2].startswith("| integer:max | ")
    assert table[-1].startswith("| s / epoch (median) | ")

    # A second run finds every record and trains nothing.
    before = {path: path.stat().st_mtime_ns for path in records}
    again = run([*SMALLEST, f"--output={tmp_path}"])
    assert again.returncode == 0, again.stderr
    assert "seed 0: mae_10" not in again.stdout
    assert {path: path.stat().st_mtime_ns for path in records} == before
    assert "| regression:harmonic_mean | sum |" in again.stdout

    # The table of what is there, the missing seed left out, untrained.
    table = run(
        [*SMALLEST, "--seeds=0,1", "--table-only", f"--output={tmp_path}"]
    )
    assert table.returncode == 0, table.stderr
    assert "seed 1" not in table.stdout
    assert "| integer:max | genagg |" in table.stdout
    assert sorted(tmp_path.glob("*.json")) == records


@pytest.mark.slow
def test_help_and_bad_arguments():
    completed = run(["--help"])
    assert completed.returncode == 0 and "--seeds" in completed.stdout
    completed = run(["--methods=lstm"])
    assert completed.returncode == 2 and "unknown method" in completed.stderr
    completed = run(["--seeds=a-b"])
    assert (
        completed.returncode == 2
        and "expected seeds and ranges of seeds" in completed.stderr
    )

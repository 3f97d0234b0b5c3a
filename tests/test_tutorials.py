"""Runs every tutorial in `tutorials/` in quick mode.

Each tutorial is a script that takes `--quick` (a run of seconds) and
`--output DIR` (where its figures go); the test runs it in a fresh
interpreter, as a user would, and checks that it exits cleanly and saves
at least one figure.
"""

import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

TUTORIALS_DIR = pathlib.Path(__file__).resolve().parent.parent / "tutorials"
TUTORIALS = sorted(TUTORIALS_DIR.glob("*.py"))
# Generous: a quick run takes 10 to 30 seconds on two CPU cores.
TIMEOUT_SECONDS = 300
# Tutorials that need an optional package, and the package.
NEEDS = {"laf_on_molecules": "rdkit"}


def tutorial_param(path):
    package = NEEDS.get(path.stem)
    marks = []
    if package and importlib.util.find_spec(package) is None:
        marks.append(pytest.mark.skip(reason=f"needs {package}"))
    return pytest.param(path, id=path.stem, marks=marks)


def test_tutorials_are_found():
    assert TUTORIALS, f"No tutorials found in {TUTORIALS_DIR}"


@pytest.mark.parametrize("path", [tutorial_param(path) for path in TUTORIALS])
@pytest.mark.slow
def test_tutorial_runs_in_quick_mode(path, tmp_path):
    environment = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "MPLBACKEND": "Agg",
    }
    result = subprocess.run(
        [sys.executable, str(path), "--quick", "--output", str(tmp_path)],
        cwd=TUTORIALS_DIR.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )
    assert result.returncode == 0, (
        f"{path.name} --quick failed with exit code {result.returncode}.\n"
        f"stdout (end):\n{result.stdout[-3000:]}\n"
        f"stderr (end):\n{result.stderr[-3000:]}"
    )
    figures = sorted(tmp_path.rglob("*.png"))
    assert figures, f"{path.name} --quick saved no PNG in {tmp_path}"

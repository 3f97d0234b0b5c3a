"""Every Python block of the README runs as written, each in a fresh
interpreter as a reader would paste it."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).parent.parent / "README.md"


def python_blocks():
    """Returns `(section heading, code)` for each ```python block."""
    blocks = []
    heading = None
    for match in re.finditer(
        r"^## ([^\n]+)$|^```python\n(.*?)^```$",
        README.read_text(encoding="utf-8"),
        re.M | re.S,
    ):
        if match.group(1):
            heading = match.group(1)
        else:
            blocks.append((heading, match.group(2)))
    return blocks


BLOCKS = python_blocks()


def block(heading):
    (code,) = [code for name, code in BLOCKS if name == heading]
    return code


def run_block(code, directory, backend="tensorflow"):
    # The output is checked below, so the block runs in a clean directory
    # (the tuning example writes its trials there).
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=directory,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "TF_CPP_MIN_LOG_LEVEL": "2",
            "KERAS_BACKEND": backend,
        },
        timeout=600,
    )


def test_every_section_with_code_is_found():
    headings = [heading for heading, _ in BLOCKS]
    assert headings == [
        "Quick start",
        "Ragged sets (TensorFlow only)",
        "Saving and loading",
        "Tuning the number of units",
        "Distributed training",
        "Backends",
    ]


@pytest.mark.parametrize(
    "backend",
    [
        "tensorflow",
        pytest.param("jax", marks=pytest.mark.slow),
        pytest.param("torch", marks=pytest.mark.slow),
    ],
)
def test_quick_start_runs_and_prints_formulas(backend, tmp_path):
    # The quick start is the same code on every backend.
    result = run_block(block("Quick start"), tmp_path, backend)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()[-1]
    assert printed.startswith("['(1.00(Σx^1.00)") and printed.count("/") == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    "heading", [heading for heading, _ in BLOCKS if heading != "Quick start"]
)
def test_block_runs(heading, tmp_path):
    result = run_block(block(heading), tmp_path)
    assert result.returncode == 0, result.stderr

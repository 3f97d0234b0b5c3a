"""Every Python block of the README and of the docs guides runs as
written, each in a fresh interpreter as a reader would paste it.

The README's blocks run on the backend of the test run, so CI's JAX and
PyTorch runs of the `multi_backend` tests run each of them there too; the
guides' blocks set their backend themselves."""

import os
import pathlib
import re
import subprocess
import sys

import keras
import pytest

ROOT = pathlib.Path(__file__).parent.parent
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))


def python_blocks(path=README):
    """Returns `(section heading, code)` for each ```python block."""
    blocks = []
    heading = None
    for match in re.finditer(
        r"^## ([^\n]+)$|^```python\n(.*?)^```$",
        path.read_text(encoding="utf-8"),
        re.M | re.S,
    ):
        if match.group(1):
            heading = match.group(1)
        else:
            blocks.append((heading, match.group(2)))
    return blocks


BLOCKS = python_blocks()
GUIDE_BLOCKS = [
    (f"{path.stem}: {heading}", code)
    for path in GUIDES
    for heading, code in python_blocks(path)
]


TENSORFLOW_ONLY = pytest.mark.tensorflow_only(
    "a README section for TensorFlow only (tf.RaggedTensor)"
)


def block(heading):
    (code,) = [code for name, code in BLOCKS if name == heading]
    return code


def run_block(code, directory):
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
            "KERAS_BACKEND": keras.config.backend(),
        },
        timeout=600,
    )


def test_every_section_with_code_is_found():
    headings = [heading for heading, _ in BLOCKS]
    assert headings == [
        "Quick start",
        "Presets: what LAF starts as",
        "Ragged sets (TensorFlow only)",
        "Your own aggregation, by name",
        "Saving and loading",
        "Tuning the number of units",
    ]
    assert [heading for heading, _ in GUIDE_BLOCKS] == [
        "backends: Data-parallel training on JAX",
        "backends: Data-parallel training on JAX",
        "backends: Distributed training on TensorFlow",
        "backends: Distributed training on TensorFlow",
    ]


@pytest.mark.multi_backend
def test_quick_start_runs_and_prints_formulas(tmp_path):
    # The quick start is the same code on every backend.
    result = run_block(block("Quick start"), tmp_path)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()[-1]
    assert printed.startswith("['(1.00(Σx^1.00)") and printed.count("/") == 3


@pytest.mark.multi_backend
def test_your_own_aggregation_works_by_name(tmp_path):
    result = run_block(block("Your own aggregation, by name"), tmp_path)
    assert result.returncode == 0, result.stderr
    # The block's comment: the scaled sum 2 * (1 + 3), then the maximum.
    assert result.stdout.strip().splitlines()[-1] == "[[8. 3.]]"


@pytest.mark.slow
@pytest.mark.multi_backend
def test_closed_forms_route_counts_sets_five_times_larger(tmp_path):
    result = run_block(block("Presets: what LAF starts as"), tmp_path)
    assert result.returncode == 0, result.stderr
    printed = result.stdout.strip().splitlines()[-1]
    counts = [float(value) for value in printed.strip("[]").split()]
    assert len(counts) == 4
    # The block's comment: "50.0 each, to 1e-2".
    assert max(abs(count - 50.0) for count in counts) < 1e-2


@pytest.mark.slow
@pytest.mark.multi_backend
@pytest.mark.parametrize(
    "code",
    [
        pytest.param(
            code,
            id=heading,
            marks=TENSORFLOW_ONLY if "TensorFlow only" in heading else (),
        )
        for heading, code in BLOCKS
        if heading
        not in (
            "Quick start",
            "Presets: what LAF starts as",
            "Your own aggregation, by name",
        )
    ],
)
def test_readme_block_runs(code, tmp_path):
    result = run_block(code, tmp_path)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "code", [pytest.param(code, id=heading) for heading, code in GUIDE_BLOCKS]
)
def test_guide_block_runs(code, tmp_path):
    result = run_block(code, tmp_path)
    assert result.returncode == 0, result.stderr

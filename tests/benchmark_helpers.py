"""Running a benchmark script as a user does, in its own interpreter."""

import os
import pathlib
import subprocess
import sys

REPOSITORY = pathlib.Path(__file__).resolve().parent.parent


def run_benchmark(module, arguments):
    """`python -m module *arguments` from the repository root, TensorFlow's
    start-up logging quiet: the completed process, output captured."""
    return subprocess.run(
        [sys.executable, "-m", module, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        cwd=REPOSITORY,
        timeout=900,
    )

"""`keras-laf` on JAX prints no TensorFlow start-up log lines.

Keras imports TensorFlow, where it is installed, the first time it saves a
model, on every backend; TensorFlow's C++ libraries then print their
start-up lines (oneDNN, CUDA probing, absl) whatever TF_CPP_MIN_LOG_LEVEL
says. The command imports it quietly before it runs.
"""

import os
import re
import subprocess
import sys

import pytest
from experiment_helpers import QUIET
from experiment_helpers import read_json

# A line of TensorFlow's C++ logging ("I0000 00:00:17... port.cc:153] ..."),
# absl's notice before it is initialised, or a known start-up message.
TENSORFLOW_LOG_LINE = re.compile(
    r"^[IWEF]\d{4} \d\d:\d\d:\d\d|absl::InitializeLog|oneDNN custom|"
    r"cuda drivers|cpu_feature_guard",
    re.M,
)

COMMAND = """
import sys
from laf_experiments import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def test_the_pattern_finds_tensorflow_start_up_lines():
    lines = (
        "WARNING: All log messages before absl::InitializeLog() is called "
        "are written to STDERR\n"
        "I0000 00:00:1796529153.273997    4971 cudart_stub.cc:31] Could not "
        "find cuda drivers on your machine, GPU will not be used.\n"
    )
    assert len(TENSORFLOW_LOG_LINE.findall(lines)) >= 2
    assert not TENSORFLOW_LOG_LINE.search("keras-laf scalars: results in x")


@pytest.mark.slow
def test_a_command_on_jax_prints_no_tensorflow_log_line(tmp_path):
    pytest.importorskip("tensorflow", reason="the lines come from TensorFlow")
    pytest.importorskip("jax")
    environment = {**os.environ, "KERAS_BACKEND": "jax"}
    # TensorFlow's default logging, as a user has it.
    environment.pop("TF_CPP_MIN_LOG_LEVEL", None)
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            COMMAND,
            "scalars",
            *QUIET,
            "--targets",
            "sum",
            "--methods",
            "laf",
            "--output",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    # The run saved its model, which imports TensorFlow on JAX.
    assert read_json(tmp_path)["runs"]
    assert not TENSORFLOW_LOG_LINE.search(completed.stderr), completed.stderr

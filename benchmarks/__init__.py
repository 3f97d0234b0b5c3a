"""The benchmarks of keras-laf, one module a question (`README.md`).

Run each from the repository root as a module, `python -m
benchmarks.laf_layer --help`; its helpers come from `benchmarks.common`.
Python imports this package before the module it runs, so what has to
hold before a benchmark imports Keras is set here.
"""

import os

# The level the caller's environment chose, if any; theirs is kept.
_CALLER_LOG_LEVEL = os.environ.get("TF_CPP_MIN_LOG_LEVEL")


def quiet_tensorflow_logs(level="2"):
    """Sets TensorFlow's C++ log level (`TF_CPP_MIN_LOG_LEVEL`) to `level`
    unless the caller's environment set one. TensorFlow reads it at its
    first log line, when it is imported, so this runs before Keras is:
    here with "2" (errors only) for every benchmark, and again at the top
    of a module that imports Keras only inside its functions and wants
    another level."""
    if _CALLER_LOG_LEVEL is None:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = level


quiet_tensorflow_logs()

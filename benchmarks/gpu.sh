#!/usr/bin/env bash
# The LAF benchmark on a GPU machine with JAX, Keras and this package only
# (no TensorFlow): large-set time and memory against the transcription,
# and the small-set epoch ratio, on JAX's default device.
#
#   pip install "jax[cuda12]" keras numpy && pip install --no-deps -e .
#   benchmarks/gpu.sh [--quick] [--output results.json]
#
# PYTHON names the interpreter (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax
PYTHON="${PYTHON:-python3}"
"$PYTHON" - <<'PYTHON'
import sys

import jax

import keras_laf  # noqa: F401

print("JAX devices:", jax.devices())
if "tensorflow" in sys.modules:
    sys.exit("keras_laf imported TensorFlow on the JAX backend")
PYTHON
"$PYTHON" benchmarks/laf_layer.py --backend jax "$@"

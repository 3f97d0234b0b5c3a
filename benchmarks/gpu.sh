#!/usr/bin/env bash
# Benchmarks for a GPU machine with JAX, Keras and this package only (no
# TensorFlow), on JAX's default device.
#
#   pip install "jax[cuda12]" keras numpy networkx matplotlib mlxtend \
#       scikit-learn
#   pip install --no-deps -e .
#
#   benchmarks/gpu.sh [laf-layer] [--quick] [--output results.json]
#       The LAF layer benchmark (`python -m benchmarks.laf_layer`):
#       large-set time and memory against the transcription, and the
#       small-set epoch ratio. The default when no benchmark is named.
#
#   benchmarks/gpu.sh table4 [--output DIR] [keras-laf graphs flags]
#       The paper's Table 4 at its full scale in one go: `keras-laf graphs`
#       on PNA's splits (5,120 / 640 / 1,280 graphs per test size), every
#       method, LAF with 100 units, 3 seeds, up to 1,000 epochs with early
#       stopping (--patience 30, best weights kept) in batches of 128, at
#       PNA's learning rate 3e-3 halved after 10 epochs without progress.
#       Results, table.md and the plot go to DIR (default:
#       results/graphs-table4-gpu). Resumable per epoch: rerunning the
#       same command skips the finished runs and continues an interrupted
#       one from its last epoch. Further flags override these, e.g.
#       `--methods laf,pna` or `--seeds 1`.
#
#   benchmarks/gpu.sh mnist [--output DIR] [keras-laf mnist flags]
#       Section 4.2 (Fig. D.1) on all of MNIST: `keras-laf mnist` on the
#       70,000 images of Keras's cache (--source keras; --source PATH
#       takes a copy carried to the machine), the twelve targets, LAF,
#       DeepSets, PNA and LSTM at the command's default budget (50,000
#       training sets x 10 epochs), test sets of up to 50 images, seeds
#       0-9 (two disjoint sets of five). Results, figures and the table
#       go to DIR (default: results/mnist-gpu); resumable per epoch like
#       table4.
#
#   benchmarks/gpu.sh mnist-quann [--output DIR] [keras-laf mnist flags]
#       QUANN's MNIST benchmark at its full protocol: `keras-laf mnist
#       --protocol quann` on the 70,000 MNIST images of Keras's cache
#       (--source keras, downloaded once where the network is reachable;
#       --source PATH takes a copy), sets of 2 to 16 digits, its five
#       targets, LAF, DeepSets (sum), the Kolmogorov mean, GenAgg and the
#       Set Transformer, 20,000 / 2,000 / 3,000 sets, 50 epochs in
#       batches of 32, 4 seeds, tested on up to 16, 30 and 50 digits.
#       Results, table.md and mse.png go to DIR (default:
#       results/mnist-quann-gpu); resumable per epoch like table4.
#
# PYTHON names the interpreter (default: python3).
set -euo pipefail
cd "$(dirname "$0")/.."
export KERAS_BACKEND=jax
PYTHON="${PYTHON:-python3}"

usage() {
    sed -n '2,47s/^# \{0,1\}//p' "$0"
}

benchmark=laf-layer
case "${1:-}" in
    -h | --help)
        usage
        exit 0
        ;;
    laf-layer | table4 | mnist | mnist-quann)
        benchmark="$1"
        shift
        ;;
esac

# TensorFlow made unimportable: these benchmarks must not need it, and
# where it is installed it would take GPU memory from JAX.
"$PYTHON" - <<'PYTHON'
import sys

sys.modules["tensorflow"] = None
import jax

import keras_laf  # noqa: F401

print("JAX devices:", jax.devices())
PYTHON

if [[ "$benchmark" == laf-layer ]]; then
    exec "$PYTHON" -m benchmarks.laf_layer --backend jax "$@"
fi

# Each command at the paper's full scale; flags after the benchmark's name
# come last, so they override these.
if [[ "$benchmark" == mnist ]]; then
    full_scale=(
        mnist
        --source keras
        --targets all
        --max-sizes 5,10,15,20,25,30,35,40,45,50
        --seeds 0-9
        --verbose 2
        --output results/mnist-gpu
    )
elif [[ "$benchmark" == mnist-quann ]]; then
    full_scale=(
        mnist
        --protocol quann
        --source keras
        --methods laf,deepsets_sum,kolmogorov_mean,genagg,st-pma
        --seeds 4
        --verbose 2
        --output results/mnist-quann-gpu
    )
else
    full_scale=(
        graphs
        --num-train 5120
        --num-validation 640
        --num-test 1280
        --laf-units 100
        --epochs 1000
        --batch-size 128
        --seeds 3
        --patience 30
        --learning-rate 3e-3
        --lr-patience 10
        --verbose 2
        --output results/graphs-table4-gpu
    )
fi

exec "$PYTHON" - "${full_scale[@]}" "$@" <<'PYTHON'
import sys

sys.modules["tensorflow"] = None
sys.modules["tensorflow_datasets"] = None
from laf_experiments import cli

sys.exit(cli.main(sys.argv[1:]))
PYTHON

"""Why does LAF's sum of MNIST digits extrapolate on some seeds and not on
others? The units it learns, seed by seed, with and without a sum unit
at the start.

`keras-laf mnist` trains LAF on the sum by the README's closed-forms route
(the `"closed_forms"` preset, then `SnapToClosedForms` and
`LeastSquaresHead`). This script trains that model on the command's
training sets and seeds (its 784-300-100-30 reader, LAF(9), its
1000-100-1 head, `--train-size` sets of 2..10 images, `--epochs`) for each
variant:

- `closed_forms`: the preset as it is (a count at unit 0 and a sum at
  unit 1, `AnchoredLAF(leading_anchors=[count, sum])`, both at 0.01);
- `count_only`: the preset as it was before its sum anchor, a count
  alone at unit 0.

For each trained model it records the MAE and the slope of prediction on
label on the command's test sets at M = 10 and 50, which units
`SnapToClosedForms` put onto a form of Table 1, and a linear probe: the
sum fitted by least squares on the LAF layer's outputs over training
sets, then tested at 50. A probe that extrapolates means the LAF units
hold a sum; a probe that does not means the head must make one (a count
times a mean), which its ReLU layers do only over the sizes they saw.

Each (variant, seed) is appended to `--output` (JSON lines) as it ends,
and a finished one is not run again.

    python -m benchmarks.mnist_sum_units --source keras --seeds 0-9 \\
        --output results/mnist-sum-units/runs.jsonl
"""

import argparse

import numpy as np

from benchmarks import quiet_tensorflow_logs
from benchmarks.common import append_record
from benchmarks.common import count_only_laf_arguments
from benchmarks.common import read_jsonl

quiet_tensorflow_logs("3")

VARIANTS = ("closed_forms", "count_only")
TEST_SIZES = (10, 50)
# The bound of the issue on MNIST's sum at 50: twice the paper's MAE.
SUM_BOUND = 6.0


def build_model(variant):
    """The MNIST command's LAF model of the sum, under `variant`."""
    from laf_experiments.commands import mnist

    if variant == "closed_forms":
        return mnist.build_model("laf", laf_preset="closed_forms")
    return mnist.build_model("laf", laf_arguments=count_only_laf_arguments())


def outputs(model, layer, batches):
    """The LAF layer's outputs, the model's predictions and the labels."""
    import keras

    features = keras.Model(model.inputs, layer.output)
    rows = [
        (
            keras.ops.convert_to_numpy(features(inputs)),
            keras.ops.convert_to_numpy(model(inputs))[:, 0],
            np.asarray(labels)[:, 0],
        )
        for inputs, labels in batches
    ]
    return (np.concatenate(parts) for parts in zip(*rows))


def run_one(variant, seed, images, args):
    import tempfile

    import keras

    import keras_laf
    from laf_experiments import regression
    from laf_experiments import runner
    from laf_experiments.data import make_test_sets_by_max_size
    from laf_experiments.data import make_training_sets
    from laf_experiments.settings import OPTIMIZER_DEFAULTS as DEFAULTS
    from laf_experiments.settings import STEPS_PER_EXECUTION
    from laf_experiments.settings import TEST_SEED
    from laf_experiments.settings import VALIDATION_SEED

    train_images, test_images = images
    keras.utils.set_random_seed(seed)
    train, validation = (
        make_training_sets(
            size, "sum", seed=data_seed, digit_images=train_images
        )
        for size, data_seed in (
            (args.train_size, seed),
            (args.val_size, VALIDATION_SEED + seed),
        )
    )
    train_data = train.to_padded_batches(64, 10, shuffle=True, seed=seed)
    model = build_model(variant)
    snap = keras_laf.callbacks.SnapToClosedForms(
        fine_tune_epochs=0, verbose=False
    )
    settings = {
        "epochs": args.epochs,
        "learning_rate": DEFAULTS["learning_rate"],
        "lr_factor": DEFAULTS["lr_factor"],
        "lr_patience": DEFAULTS["lr_patience"],
        "steps_per_execution": STEPS_PER_EXECUTION,
    }
    with tempfile.TemporaryDirectory() as folder:
        runner.fit(
            model,
            train_data,
            validation.to_padded_batches(64, 10),
            "mean_absolute_error",
            settings,
            f"{folder}/backup",
            f"{folder}/history.csv",
            verbose=0,
            callbacks=[snap, keras_laf.callbacks.LeastSquaresHead(train_data)],
        )
    (layer,) = [
        layer for layer in model.layers if isinstance(layer, keras_laf.LAF)
    ]
    probe_inputs, _, probe_labels = outputs(
        model, layer, train.to_padded_batches(256, 10)
    )
    design = np.c_[probe_inputs, np.ones(len(probe_inputs))]
    weights = np.linalg.lstsq(design, probe_labels, rcond=None)[0]
    suite = make_test_sets_by_max_size(
        args.test_size,
        "sum",
        TEST_SIZES,
        seed=TEST_SEED,
        digit_images=test_images,
        protocol="diversified",
    )
    record = {"variant": variant, "seed": seed, "train_size": args.train_size}
    record["epochs"] = args.epochs
    record["snapped"] = [
        [unit, form]
        for _, units in snap.snapped.items()
        for unit, form, _ in units
    ]
    for max_size, sets in suite.items():
        batches, _, _ = regression.joined_test_data(
            {max_size: sets}, padded=True
        )
        test_inputs, predictions, labels = outputs(model, layer, batches)
        probe = np.c_[test_inputs, np.ones(len(test_inputs))] @ weights
        record[f"mae_{max_size}"] = float(np.mean(np.abs(predictions - labels)))
        record[f"slope_{max_size}"] = float(
            np.polyfit(labels, predictions, 1)[0]
        )
        record[f"probe_mae_{max_size}"] = float(np.mean(np.abs(probe - labels)))
    keras.backend.clear_session()
    return record


def main(argv=None):
    from laf_experiments.settings import seed_choice

    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument(
        "--seeds", type=seed_choice, default=list(range(5)), help="N or 0-4"
    )
    parser.add_argument("--source", default="auto")
    parser.add_argument("--train-size", type=int, default=50_000)
    parser.add_argument("--val-size", type=int, default=500)
    parser.add_argument("--test-size", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--output", required=True, help="JSON-lines record")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; expected {VARIANTS}")

    from keras_laf.datasets import load_digit_images

    images = [
        load_digit_images(split, args.source) for split in ("train", "test")
    ]
    print(
        f"digit images from {images[0].source}: {len(images[0].labels):,} "
        f"train, {len(images[1].labels):,} test",
        flush=True,
    )
    done = {(r["variant"], r["seed"]) for r in read_jsonl(args.output)}
    for variant in variants:
        for seed in args.seeds:
            if (variant, seed) in done:
                continue
            record = run_one(variant, seed, images, args)
            append_record(args.output, record)
            print(
                f"{variant} seed {seed}: MAE at 50 {record['mae_50']:.3g} "
                f"(slope {record['slope_50']:.3f}, linear probe "
                f"{record['probe_mae_50']:.3g}), snapped {record['snapped']}",
                flush=True,
            )
    records = read_jsonl(args.output)
    for variant in variants:
        maes = [r["mae_50"] for r in records if r["variant"] == variant]
        if maes:
            within = sum(mae <= SUM_BOUND for mae in maes)
            print(
                f"{variant}: sum MAE at 50 over {len(maes)} "
                f"seed{'s' if len(maes) > 1 else ''}: median "
                f"{np.median(maes):.3g}, {within} of {len(maes)} within "
                f"{SUM_BOUND:g}"
            )


if __name__ == "__main__":
    main()

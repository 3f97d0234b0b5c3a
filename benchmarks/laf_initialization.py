"""Which LAF initialisation trains reliably: a seed study on the paper's task.

The paper's integer model, Embedding(10, 10) -> sigmoid -> LAF(9) ->
Dense(1), is trained with the MAE loss and Adam (learning rate 1e-3) on
sets of 2..10 digits, once per (initialisation, target, seed), and tested on
1,000 sets drawn as the paper's authors test (`--test-protocol authors`,
the default: exactly `--max-size` digits for sum, mean, median and the
moments, 80-100% of it for the count, extremes cycling through the digits;
see `laf_experiments.data.sample_authors_test_sets`), or on diversified
sets of 2 to `--max-size` digits (`--test-protocol diversified`). Each
result is appended to a
JSON-lines file as soon as it is known, so an interrupted study resumes
where it stopped; the summary (mean and std over seeds of the test MAE at
the largest size, and the largest |prediction| over the largest label, which
shows poles) is printed and written beside it.

    python -m benchmarks.laf_initialization --seeds 3 \\
        --initializations anchored,anchored_before_pull,deepsets \\
        --targets sum,count,mean,max,min,inverse_count,median,kurtosis

Candidates (`CANDIDATES`): the layer's three presets (`pooling`, the
default, `closed_forms` and `paper`), so the study measures exactly what
users get, and variants of `closed_forms` built from
`keras_laf.initializers.AnchoredLAF` and `keras_laf.constraints` (the
pulls onto the closed forms, the default before them). Any other name is
one of `keras_laf.aggregations` in place of LAF: `deepsets` (3 sums, 3
maxima, 3 means, as wide as LAF(9)) is the reference; `softmax`, `gru`,
`pna` and the rest compare the other poolings, and `laf+max` mixes LAF in.
The records of the study behind the closed-forms preset are in
`results/laf-initialization/exact_forms.jsonl`.
"""

import argparse
import json
import pathlib
import sys
import time

import keras
import numpy as np

import keras_laf
from benchmarks.common import append_record
from benchmarks.common import compile_integer_model
from benchmarks.common import integer_model
from benchmarks.common import padded_digits
from benchmarks.common import pooling_aggregation
from keras_laf.aggregations.laf.callbacks import SnapToClosedForms
from keras_laf.datasets import ragged_set_dataset
from keras_laf.datasets import to_padded_batches
from laf_experiments.data import TEST_PROTOCOLS
from laf_experiments.data import make_test_sets
from laf_experiments.data import make_training_sets
from laf_experiments.data import target_values


def anchored_variant(anchor_every=3, anchors=("max", "min"), **kwargs):
    return {
        "exponent_initializer": keras_laf.initializers.AnchoredLAF(
            "exponents", anchors=anchors, anchor_every=anchor_every
        ),
        "coefficient_initializer": keras_laf.initializers.AnchoredLAF(
            "coefficients", anchors=anchors, anchor_every=anchor_every
        ),
        **kwargs,
    }


def unpulled_variant(
    anchors=("max", "min", "mean"), anchor_every=3, numerator_stddev=0.01
):
    """The default start and degree floor with no pull onto closed forms:
    exponents projected onto [0, 100] (max/min-like terms keep a degree of
    0.25), denominators kept positive, coefficients not pulled."""
    return {
        "exponent_initializer": keras_laf.initializers.AnchoredLAF(
            "exponents", anchors=anchors, anchor_every=anchor_every
        ),
        "coefficient_initializer": keras_laf.initializers.AnchoredLAF(
            "coefficients",
            anchors=anchors,
            anchor_every=anchor_every,
            numerator_stddev=numerator_stddev,
        ),
        "exponent_constraint": keras_laf.constraints.ClosedFormExponents(
            pull=0.0, anchor_inner=5.0
        ),
        "coefficient_constraint": keras_laf.constraints.PositiveDenominator(),
    }


SECOND_MOMENT = {"name": "moment", "k": 2}
# Distinct aggregators of Table 1 for a start where every unit is one.
AGGREGATOR_BANK = (
    "max",
    "min",
    "mean",
    SECOND_MOMENT,
    {"name": "max", "r": 5},
    {"name": "min", "r": 5},
    {"name": "moment", "k": 3},
    {"name": "moment", "k": 0.5},
)

# Name -> keyword arguments of `keras_laf.LAF`.
CANDIDATES = {
    # Candidates of the pooling preset: no pull onto the closed
    # forms; PNA's anchors (max, min, mean and the second moment behind
    # the standard deviation) at every other unit; random units whose
    # numerators start live (standard deviation 1) rather than near 0;
    # or every unit a distinct aggregator.
    "no_pull": unpulled_variant(),
    "no_pull_live": unpulled_variant(numerator_stddev=1.0),
    "no_pull_pna": unpulled_variant(
        anchors=("max", "min", "mean", SECOND_MOMENT), anchor_every=2
    ),
    "no_pull_pna_live": unpulled_variant(
        anchors=("max", "min", "mean", SECOND_MOMENT),
        anchor_every=2,
        numerator_stddev=1.0,
    ),
    "no_pull_bank": unpulled_variant(anchors=AGGREGATOR_BANK, anchor_every=1),
    # The layer's presets; "anchored" is the records' name of
    # "closed_forms", the default before the presets.
    "anchored": {"preset": "closed_forms"},
    "closed_forms": {"preset": "closed_forms"},
    "pooling": {"preset": "pooling"},
    # The pooling preset without its output bound.
    "pooling_unbounded": {"preset": "pooling", "output_bound": float("inf")},
    "paper": {"preset": "paper"},
    # Random units with positive denominators only, no max/min anchors.
    "positive": anchored_variant(anchors=()),
    # Anchors at every other unit.
    "anchored2": anchored_variant(anchor_every=2),
    # The anchored start with the denominator's sign left free.
    "anchored_free": {"coefficient_constraint": keras.constraints.Constraint()},
    # The default before exponents and coefficients were pulled onto the
    # closed forms: max and min anchors, projection onto [0, 100] only.
    "anchored_before_pull": anchored_variant(
        anchors=("max", "min"),
        exponent_constraint=keras_laf.constraints.BoundedNonNeg(),
        coefficient_constraint=keras_laf.constraints.PositiveDenominator(),
    ),
    # Exact forms with max and min anchors: exponents pulled onto 0 and 1
    # after every step ("pull{exponents}o{outer window}i{inner window}
    # c{coefficient pull}").
    **{
        f"pull{pull:g}o{outer:g}i{inner:g}c{coefficient_pull:g}": (
            anchored_variant(
                anchors=("max", "min"),
                exponent_constraint=keras_laf.constraints.ClosedFormExponents(
                    pull=pull, outer_window=outer, inner_window=inner
                ),
                coefficient_constraint=(
                    keras_laf.constraints.PositiveDenominator(
                        pull=coefficient_pull
                    )
                ),
            )
        )
        for pull in (0, 2e-4, 3e-4, 5e-4, 1e-3)
        for outer in (0.1, 0.25, 0.5)
        for inner in (0, 0.1, 0.25, 0.5)
        for coefficient_pull in (0, 2e-4, 5e-4)
    },
    # The default before max/min-like terms kept a least degree (the
    # records named "anchored" up to c8ed171 are this, or older defaults).
    "anchored_without_floor": {
        "exponent_constraint": keras_laf.constraints.ClosedFormExponents()
    },
    # The closed_forms preset before its count anchor: max/min-like terms
    # (inner exponent >= 5) keep a degree of at least 0.25.
    "degree_floor_0.25": {
        "exponent_constraint": keras_laf.constraints.ClosedFormExponents(
            anchor_inner=5.0
        )
    },
    # The default (max, min and mean anchors) with a narrower window for
    # the inner exponents.
    "inner_window_0.1": {
        "exponent_constraint": keras_laf.constraints.ClosedFormExponents(
            inner_window=0.1
        )
    },
}


def laf_arguments(candidate):
    """The `keras_laf.LAF` keyword arguments of a candidate. A candidate
    gives what differs from the `"closed_forms"` preset, the default when
    the candidates were written."""
    if candidate not in CANDIDATES:
        raise ValueError(
            f"Unknown candidate {candidate!r}. Expected one of "
            f"{sorted(CANDIDATES)}."
        )
    return {"preset": "closed_forms", **CANDIDATES[candidate]}


VALIDATION_SEED = 10_000
TEST_SEED = 1


def tf_dataset(sets, labels, pipeline, shuffle=False, seed=None):
    """Batches of 64 sets from `tf.data`, ragged or padded with a mask."""
    dataset = ragged_set_dataset(
        [np.asarray(elements, "int32") for elements in sets],
        np.asarray(labels, "float32"),
        batch_size=64,
        shuffle=shuffle,
        seed=seed,
    )
    return dataset if pipeline == "ragged" else to_padded_batches(dataset)


def build_model(candidate, units, pipeline="arrays"):
    """The integer model pooled by a candidate: `LAF(units)` with a
    candidate's arguments, else a pooling of `common.pooling_aggregation`
    (LAF among them with `units`)."""
    if candidate in CANDIDATES:
        aggregation = keras_laf.LAF(
            units, name="laf", **laf_arguments(candidate)
        )
    else:
        # The arrays model squashes the elements with a sigmoid before the
        # aggregation; `deep_sets` leaves that to the aggregation.
        aggregation = pooling_aggregation(
            candidate, units, squashed=pipeline == "arrays"
        )
    return integer_model(aggregation, pipeline)


def predict(model, sets, labels, pipeline):
    """The model's predictions `(num_sets, 1)` for sets fed as it trained."""
    if pipeline == "arrays":
        inputs, _ = padded_digits(sets, labels)
        return model.predict(inputs, batch_size=512, verbose=0)
    return model.predict(tf_dataset(sets, labels, pipeline), verbose=0)


def probe_sizes(model, target, sizes, settings, num_sets=500, seed=5):
    """Mean label, mean prediction and MAE on sets of exactly each size.

    Shows how a trained model extrapolates: uniform random digits, the
    same sets for every model.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        sets = rng.integers(0, 10, size=(num_sets, size))
        labels = target_values(target, sets)
        predictions = predict(model, sets, labels, settings["pipeline"])[:, 0]
        rows.append(
            {
                "size": int(size),
                "mean_label": float(np.mean(labels)),
                "mean_prediction": float(np.mean(predictions)),
                "mae": float(np.mean(np.abs(predictions - labels))),
            }
        )
    return rows


def run_one(initialization, target, seed, settings, sizes_to_probe=()):
    keras.utils.set_random_seed(seed)
    train = make_training_sets(settings["train_size"], target, seed=seed)
    validation = make_training_sets(
        settings["val_size"], target, seed=VALIDATION_SEED + seed
    )
    test = make_test_sets(
        settings["test_size"],
        target,
        settings["max_size"],
        seed=TEST_SEED,
        protocol=settings["test_protocol"],
    )
    pipeline = settings["pipeline"]
    model = build_model(initialization, settings["units"], pipeline)
    callbacks = []
    if settings["snap_fine_tune_epochs"] is not None:
        callbacks.append(
            SnapToClosedForms(
                settings["snap_fine_tune_epochs"],
                tolerance=settings["snap_tolerance"],
                verbose=False,
            )
        )
    started = time.perf_counter()
    compile_integer_model(model, settings["learning_rate"], pipeline)
    if pipeline == "arrays":
        history = model.fit(
            *padded_digits(train.sets, train.labels),
            validation_data=padded_digits(validation.sets, validation.labels),
            batch_size=64,
            epochs=settings["epochs"],
            shuffle=True,
            callbacks=callbacks,
            verbose=0,
        )
    else:
        # Plain `fit` on `tf.data` batches, as a user would.
        history = model.fit(
            tf_dataset(
                train.sets, train.labels, pipeline, shuffle=True, seed=seed
            ),
            validation_data=tf_dataset(
                validation.sets, validation.labels, pipeline
            ),
            epochs=settings["epochs"],
            callbacks=callbacks,
            verbose=0,
        )
    seconds = time.perf_counter() - started
    labels = np.asarray(test.labels, "float32")[:, None]
    predictions = predict(model, test.sets, test.labels, pipeline)
    errors = np.abs(predictions - labels)[:, 0]
    probes = {}
    if sizes_to_probe:
        probes = {
            "probes": probe_sizes(model, target, sizes_to_probe, settings)
        }
    largest_label = float(np.max(np.abs(labels)))
    parameters = {}
    if initialization in CANDIDATES:
        layer = model.get_layer("laf")
        parameters = {
            "exponents": keras.ops.convert_to_numpy(layer.exponents).tolist(),
            "coefficients": keras.ops.convert_to_numpy(
                layer.coefficients
            ).tolist(),
        }
    keras.backend.clear_session()
    return {
        "initialization": initialization,
        "target": target,
        "seed": seed,
        "test_mae": float(np.mean(errors)),
        "test_mae_largest_sets": float(
            np.mean(errors[test.sizes >= 0.8 * settings["max_size"]])
        ),
        "validation_mae": float(history.history["val_loss"][-1]),
        "max_abs_prediction_over_max_label": float(
            np.max(np.abs(predictions)) / max(largest_label, 1e-9)
        ),
        "finite": bool(np.all(np.isfinite(predictions))),
        "train_seconds": seconds,
        **parameters,
        **probes,
        **(
            {"snapped": callbacks[0].snapped.get("laf", [])}
            if callbacks
            else {}
        ),
        **settings,
    }


def summarize(records):
    groups = {}
    for record in records:
        key = (record["target"], record["initialization"])
        groups.setdefault(key, []).append(record)
    rows = []
    for (target, initialization), group in sorted(groups.items()):
        maes = np.array([record["test_mae"] for record in group])
        poles = max(
            record["max_abs_prediction_over_max_label"] for record in group
        )
        rows.append(
            {
                "target": target,
                "initialization": initialization,
                "seeds": len(group),
                "test_mae_mean": float(maes.mean()),
                "test_mae_std": float(maes.std()),
                "test_mae_worst": float(maes.max()),
                "worst_max_abs_prediction_over_max_label": float(poles),
            }
        )
    return rows


# Settings that records made before them lack, and their value then.
SETTINGS_BEFORE = {
    "test_protocol": "diversified",
    "pipeline": "arrays",
    "snap_fine_tune_epochs": None,
    "snap_tolerance": None,
}


def matches(record, settings):
    """Whether a record was made with these settings."""
    return all(
        record.get(key, SETTINGS_BEFORE.get(key)) == value
        for key, value in settings.items()
    )


def parse_list(text):
    return [item for item in text.split(",") if item]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--initializations", type=parse_list, default=["paper", "anchored"]
    )
    parser.add_argument(
        "--targets",
        type=parse_list,
        default=["count", "sum", "mean", "max", "min", "inverse_count"],
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--train-size", type=int, default=20_000)
    parser.add_argument("--val-size", type=int, default=1_000)
    parser.add_argument("--test-size", type=int, default=1_000)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--units", type=int, default=9)
    parser.add_argument("--max-size", type=int, default=50)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument(
        "--test-protocol", choices=TEST_PROTOCOLS, default="authors"
    )
    parser.add_argument(
        "--pipeline",
        choices=("arrays", "ragged", "padded"),
        default="arrays",
        help="how the sets reach `fit`: NumPy arrays padded with a mask, "
        "shuffled by Keras (the seed study's harness), or batches of 64 "
        "from tf.data into `keras_laf.models.deep_sets`, ragged or padded "
        "with a mask",
    )
    parser.add_argument(
        "--snap-fine-tune-epochs",
        type=int,
        default=None,
        help="snap LAF's near-closed-form units onto their forms this many "
        "epochs before the end (keras_laf.callbacks.SnapToClosedForms); "
        "by default no snap",
    )
    parser.add_argument(
        "--snap-tolerance",
        type=float,
        default=0.1,
        help="the snap's tolerance (default: 0.1, the callback's)",
    )
    parser.add_argument(
        "--probe-sizes",
        type=lambda text: [int(size) for size in parse_list(text)],
        default=[],
        help="also record mean label, mean prediction and MAE on 500 sets "
        "of exactly each of these sizes (e.g. 2,10,50,100)",
    )
    parser.add_argument(
        "--output",
        type=pathlib.Path,
        default=pathlib.Path("benchmarks/results/laf_initialization.jsonl"),
    )
    args = parser.parse_args(argv)
    settings = {
        "train_size": args.train_size,
        "val_size": args.val_size,
        "test_size": args.test_size,
        "epochs": args.epochs,
        "units": args.units,
        "max_size": args.max_size,
        "learning_rate": args.learning_rate,
        "test_protocol": args.test_protocol,
        "pipeline": args.pipeline,
        "snap_fine_tune_epochs": args.snap_fine_tune_epochs,
        "snap_tolerance": (
            None if args.snap_fine_tune_epochs is None else args.snap_tolerance
        ),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    records = []
    if args.output.exists():
        records = [
            json.loads(line)
            for line in args.output.read_text().splitlines()
            if line.strip()
        ]

    def recorded(initialization, target, seed):
        return any(
            record["initialization"] == initialization
            and record["target"] == target
            and record["seed"] == seed
            and matches(record, settings)
            for record in records
        )

    jobs = [
        (initialization, target, seed)
        for seed in range(args.first_seed, args.first_seed + args.seeds)
        for target in args.targets
        for initialization in args.initializations
    ]
    for index, (initialization, target, seed) in enumerate(jobs, 1):
        if recorded(initialization, target, seed):
            continue
        record = run_one(
            initialization, target, seed, settings, args.probe_sizes
        )
        records.append(record)
        append_record(args.output, record)
        poles = record["max_abs_prediction_over_max_label"]
        print(
            f"[{index}/{len(jobs)}] {initialization:>10} {target:>14} "
            f"seed {seed}: test MAE {record['test_mae']:.4g} "
            f"(largest sets {record['test_mae_largest_sets']:.4g}), "
            f"|pred|/max label {poles:.3g}, {record['train_seconds']:.0f} s",
            flush=True,
        )
    selected = [record for record in records if matches(record, settings)]
    rows = summarize(selected)
    args.output.with_suffix(".summary.json").write_text(
        json.dumps(rows, indent=1)
    )
    for row in rows:
        poles = row["worst_max_abs_prediction_over_max_label"]
        print(
            f"{row['target']:>14} {row['initialization']:>10}: "
            f"MAE {row['test_mae_mean']:.4g} ± {row['test_mae_std']:.2g} "
            f"(worst {row['test_mae_worst']:.4g}, "
            f"|pred|/max label {poles:.3g}, {row['seeds']} seeds)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

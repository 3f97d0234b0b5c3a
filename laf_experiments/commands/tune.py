"""`keras-laf tune`: how many LAF units? A KerasTuner search.

The LAF paper found one LAF unit able to learn some aggregation targets
but unstable across restarts, and several units (6 to 9) reliable. This
subcommand searches the number of units of the paper's DeepSets model of
digit sets (`keras_laf.models.DeepSetsHyperModel`) on one target of the
`scalars` experiment (`laf_experiments.unit_search`), then tests the
best model on sets larger than the training ones. KerasTuner keeps its
trials in `<output>/tuner/<target>-seed<seed>`, so an interrupted search
resumes where it stopped.

Default search: target max, 1 to 12 units, 6 random trials of 10 epochs
on 5000 training sets, one seed.
"""

import shutil
import time
import warnings

import numpy as np

from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data import TARGETS
from laf_experiments.data import TEST_MAX_SIZES
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.errors import require
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import QUICK_SIZES
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.settings import set_size_list
from laf_experiments.store import open_store
from laf_experiments.unit_search import HYPERBAND_FACTOR
from laf_experiments.unit_search import TUNERS
from laf_experiments.unit_search import make_tuner
from laf_experiments.unit_search import trial_records
from laf_experiments.unit_search import tuner_trials

DEFAULT_TARGET = "max"
KEY_FIELDS = ("target", "seed")
TUNER_DIRECTORY = "tuner"
PLOT = "val_loss.png"
# Keras's warning when KerasTuner loads a checkpoint into a model whose
# optimizer is not built yet (the best model, a Hyperband continuation):
# only the weights are needed.
_OPTIMIZER_WARNING = "Skipping variable loading for optimizer"

DEFAULTS = {
    "train_size": 5_000,
    "val_size": 1_000,
    "test_size": 1_000,
    "epochs": 10,
    "seeds": 1,
    "min_units": 1,
    "max_units": 12,
    "units_step": 1,
    "max_trials": 6,
    "executions_per_trial": 1,
    "max_sizes": TEST_MAX_SIZES,
}
QUICK = {
    **QUICK_SIZES,
    "min_units": 1,
    "max_units": 3,
    "units_step": 1,
    "max_trials": 2,
    "executions_per_trial": 1,
    "max_sizes": (10, 50),
}

HELP = "KerasTuner search of the number of LAF units on a scalars target"
DESCRIPTION = f"""\
Searches the number of LAF units of the DeepSets model of digit sets
(Embedding(10, 10), a sigmoid, LAF, a linear output; Adam with
--learning-rate and the MAE loss) on one target of 'keras-laf scalars',
with KerasTuner's RandomSearch (--max-trials trials) or Hyperband (up to
--epochs epochs a trial, reduction factor {HYPERBAND_FACTOR}), minimising \
the validation MAE.
The best model is then tested on sets of up to --max-sizes digits.

Prints the best configuration and its test MAE at the largest maximum
size, and writes results.json (the best hyperparameters, the test MAE
at every maximum size, every trial's units and validation MAE),
results.csv (one row per trial), summary.csv (the validation MAE by
units) and {PLOT} (the validation MAE of the trials against the units).
KerasTuner's trials are kept in OUTPUT/{TUNER_DIRECTORY}: running the \
same command
again resumes an interrupted search.

The default search (target {DEFAULT_TARGET}, {DEFAULTS["min_units"]} to \
{DEFAULTS["max_units"]} units, {DEFAULTS["max_trials"]} trials of \
{DEFAULTS["epochs"]} epochs on
{DEFAULTS["train_size"]} training sets, one seed) takes a few minutes on \
two CPU cores. A
search at the paper's scale:

  keras-laf tune --target max --max-units 21 --max-trials 21 \\
      --train-size 100000 --epochs 100
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf tune`."""
    group = parser.add_argument_group("search")
    group.add_argument(
        "--target",
        choices=TARGETS,
        default=DEFAULT_TARGET,
        metavar="TARGET",
        help=f"the aggregation target learned, one of {', '.join(TARGETS)} "
        f"(default: {DEFAULT_TARGET})",
    )
    group.add_argument(
        "--tuner",
        choices=TUNERS,
        default="random",
        help="KerasTuner's RandomSearch or Hyperband (default: random)",
    )
    for name, flag, text in (
        ("min_units", "--min-units", "fewest LAF units tried"),
        ("max_units", "--max-units", "most LAF units tried"),
        ("units_step", "--units-step", "step between the units tried"),
        ("max_trials", "--max-trials", "trials of the random search"),
        (
            "executions_per_trial",
            "--executions-per-trial",
            "trainings of each trial, their validation MAE averaged",
        ),
    ):
        group.add_argument(
            flag,
            type=positive_int,
            metavar="N",
            help=f"{text} (default: {DEFAULTS[name]}; --quick: {QUICK[name]})",
        )
    group.add_argument(
        "--max-sizes",
        type=set_size_list,
        metavar="M1,M2,...",
        help="maximum sizes of the test sets of the best model (default: "
        f"{','.join(map(str, DEFAULTS['max_sizes']))}; --quick: "
        f"{','.join(map(str, QUICK['max_sizes']))})",
    )
    add_common_arguments(parser, "tune", DEFAULTS, QUICK)


def _test_errors(model, target, args):
    from keras_laf.datasets import to_padded_batches
    from laf_experiments.data import make_test_sets_by_max_size

    suite = make_test_sets_by_max_size(
        args.test_size, target, args.max_sizes, seed=TEST_SEED
    )
    test = []
    for max_size, data in suite.items():
        # Padded sets and a mask, the builders' inputs on every backend.
        predictions = model.predict(
            to_padded_batches(data.to_dataset(PREDICT_BATCH_SIZE)), verbose=0
        )[:, 0]
        test.append(
            {
                "max_size": int(max_size),
                "mae": float(np.mean(np.abs(predictions - data.labels))),
            }
        )
    return test


def _report(experiment, run):
    best = ", ".join(
        f"{name}={value}" for name, value in run["best_hyperparameters"].items()
    )
    largest = run["test"][-1]
    num_trials = len(run["trials"])
    log(
        experiment,
        f"best configuration for {run['target']}, seed {run['seed']} "
        f"({num_trials} trial{'' if num_trials == 1 else 's'}): {best}; "
        "validation MAE "
        f"{run['best_val_loss']:.4g}; test MAE at maximum size "
        f"{largest['max_size']}: {largest['mae']:.4g}",
    )


def run(args):
    """Runs `keras-laf tune`."""
    import keras

    require("keras_tuner", "keras-tuner", "keras-laf tune")
    from keras_laf.datasets import to_padded_batches
    from keras_laf.models.hypermodels import DeepSetsHyperModel
    from laf_experiments.data import make_training_sets

    experiment = args.experiment
    settings = resolve_settings(
        args,
        extra_names=(
            "min_units",
            "max_units",
            "units_step",
            "max_trials",
            "executions_per_trial",
            "max_sizes",
        ),
    )
    if args.min_units > args.max_units:
        raise ExperimentError(
            f"--min-units {args.min_units} is larger than --max-units "
            f"{args.max_units}; give a range of units to search."
        )
    settings["tuner"] = args.tuner
    if args.tuner == "hyperband":
        # Hyperband chooses its number of trials.
        del settings["max_trials"]
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        trial_records,
        group_fields=("target", "units"),
        value_field="val_loss",
    )
    output = store.directory
    if args.overwrite:
        shutil.rmtree(output / TUNER_DIRECTORY, ignore_errors=True)
    target = args.target

    def train(key, store):
        seed = key["seed"]
        train = make_training_sets(args.train_size, target, seed=seed)
        validation = make_training_sets(
            args.val_size, target, seed=VALIDATION_SEED + seed
        )
        hypermodel = DeepSetsHyperModel(
            vocabulary_size=10,
            min_units=args.min_units,
            max_units=args.max_units,
            units_step=args.units_step,
            learning_rates=(args.learning_rate,),
            aggregations=("laf",),
            laf_presets=(args.laf_preset,),
            model_kwargs={"phi_units": (), "embedding_dim": 10},
        )
        tuner = make_tuner(
            hypermodel,
            args,
            output / TUNER_DIRECTORY,
            store.run_name(**key),
            seed,
        )
        searched = len(tuner.oracle.trials)
        resuming = ""
        if searched:
            plural = "" if searched == 1 else "s"
            resuming = f", resuming after {searched} trial{plural}"
        log(
            experiment,
            f"{args.tuner} search of {args.min_units} to "
            f"{args.max_units} LAF units{resuming}",
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_OPTIMIZER_WARNING)
            tuner.search(
                to_padded_batches(
                    train.to_dataset(args.batch_size, shuffle=True, seed=seed)
                ),
                validation_data=to_padded_batches(
                    validation.to_dataset(args.batch_size)
                ),
                epochs=args.epochs,
                # Deep-copied for every trial by KerasTuner.
                callbacks=[
                    keras.callbacks.ReduceLROnPlateau(
                        monitor="val_loss",
                        factor=args.lr_factor,
                        patience=args.lr_patience,
                    ),
                    keras.callbacks.TerminateOnNaN(),
                ],
                verbose=args.verbose,
            )
        seconds = time.perf_counter() - start
        best = {
            name: value
            for name, value in tuner.get_best_hyperparameters(1)[
                0
            ].values.items()
            if not name.startswith("tuner/")
        }
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_OPTIMIZER_WARNING)
            model = tuner.get_best_models(1)[0]
        best_trial = tuner.oracle.get_best_trials(1)[0]
        return model, {
            "tuner": args.tuner,
            "best_hyperparameters": best,
            "best_units": int(best["laf_units"]),
            "best_trial": best_trial.trial_id,
            "best_val_loss": float(best_trial.score),
            "train_seconds": round(seconds, 3),
            "trials": tuner_trials(tuner, args.epochs),
        }

    def evaluate(key, model):
        test = _test_errors(model, target, args)
        largest = test[-1]
        return {"test": test}, (
            f"test MAE at maximum size {largest['max_size']}: "
            f"{largest['mae']:.4g}"
        )

    runner.run_all(
        args,
        store,
        keys=[{"target": target, "seed": seed} for seed in args.seeds],
        describe=lambda key: f"{key['target']}, seed {key['seed']}",
        train=train,
        evaluate=evaluate,
    )
    for run in store.runs:
        if run["target"] == target and run["seed"] in args.seeds:
            _report(experiment, run)
    reports.write_results(
        args, store, figure=(PLOT, lambda: trials_figure(store.runs))
    )


def trials_figure(runs):
    """The figure of `val_loss.png` (`plots.trials_figure`): the
    validation MAE of every trial against its LAF units, a panel per
    target."""
    searches = {}
    for run in sorted(runs, key=lambda run: run["seed"]):
        trials = [
            (trial["units"], trial["val_loss"])
            for trial in run["trials"]
            if np.isfinite(trial["val_loss"])
        ]
        searches.setdefault(run["target"], []).append(
            (run["seed"], trials, (run["best_units"], run["best_val_loss"]))
        )
    return plots.trials_figure(
        searches, "KerasTuner search: validation MAE against LAF units"
    )

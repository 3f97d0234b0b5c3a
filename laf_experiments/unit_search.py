"""The KerasTuner search of `keras-laf tune`: its tuner, its trials and
their records."""

TUNERS = ("random", "hyperband")
HYPERBAND_FACTOR = 3


def trial_records(runs):
    """One record per trial: its units and validation MAE."""
    return [
        {
            "target": run["target"],
            "seed": run["seed"],
            "trial": trial["trial_id"],
            "units": trial["units"],
            "val_loss": trial["val_loss"],
        }
        for run in runs
        for trial in run["trials"]
    ]


def make_tuner(hypermodel, args, directory, project_name, seed):
    """The KerasTuner tuner of `args.tuner`, resuming from `directory`."""
    import keras_tuner

    options = {
        "objective": "val_loss",
        "executions_per_trial": args.executions_per_trial,
        "directory": str(directory),
        "project_name": project_name,
        "overwrite": False,
        "seed": seed,
    }
    if args.tuner == "hyperband":
        return keras_tuner.Hyperband(
            hypermodel,
            max_epochs=args.epochs,
            factor=HYPERBAND_FACTOR,
            **options,
        )
    return keras_tuner.RandomSearch(
        hypermodel, max_trials=args.max_trials, **options
    )


def tuner_trials(tuner, epochs):
    """Every trial of `tuner` that tried a number of LAF units: its id,
    units, learning rate, epochs, status and validation MAE (NaN where
    it has no score)."""
    trials = []
    for trial in sorted(
        tuner.oracle.trials.values(), key=lambda trial: trial.trial_id
    ):
        values = trial.hyperparameters.values
        if "laf_units" not in values:
            continue
        score = trial.score
        trials.append(
            {
                "trial_id": trial.trial_id,
                "units": int(values["laf_units"]),
                "learning_rate": float(values["learning_rate"]),
                "epochs": int(values.get("tuner/epochs", epochs)),
                "status": str(trial.status),
                "val_loss": float("nan") if score is None else float(score),
            }
        )
    return trials

"""The early stopping of `keras-laf graphs --patience`, which a resumed
run continues."""

import json
import math
import pathlib

import numpy as np

from laf_experiments import runner

# Files of `early_stopping` in a run's backup directory, beside those of
# `BackupAndRestore`: its count and the weights of the best epoch so far.
EARLY_STOPPING_STATE = "early_stopping.json"
BEST_WEIGHTS = "best_weights.npz"


def early_stopping(patience, backup_directory):
    """Early stopping on the validation loss that survives resumption.

    Keras's `EarlyStopping` keeps its count and its best weights in
    memory, so a run resumed by `BackupAndRestore` would count afresh from
    the restored epoch and could not return to a best epoch trained before
    the interruption. This callback writes both to `backup_directory`
    after every epoch (after `BackupAndRestore` has written its own files
    there) and reads them back when training starts. An epoch that
    `BackupAndRestore` saved but this callback did not record (an
    interruption between the two writes) counts as one without
    improvement.

    Args:
        patience: int. Epochs without a lower validation loss after which
            training stops.
        backup_directory: the run's `BackupAndRestore` directory.

    Returns:
        A `keras.callbacks.Callback` that stops training after `patience`
        epochs without improvement and sets the model's weights to those
        of its best epoch when training ends. Its attributes
        `epochs_trained`, `best_epoch` (1-based) and `best_loss` describe
        the run once it has ended.
    """
    import keras

    directory = pathlib.Path(backup_directory)
    state_path = directory / EARLY_STOPPING_STATE
    weights_path = directory / BEST_WEIGHTS

    class ResumableEarlyStopping(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.best_loss = math.inf
            self.best_epoch = 0
            self.epochs_trained = runner.backed_up_epoch(directory)
            self.wait = 0
            self.best_weights = None
            try:
                state = json.loads(state_path.read_text())
                with np.load(weights_path) as arrays:
                    weights = [arrays[f"w{i}"] for i in range(len(arrays))]
            except (OSError, ValueError, KeyError):
                return
            self.best_loss = state["best_loss"]
            self.best_epoch = state["best_epoch"]
            # Epochs restored by the backup but not recorded here.
            missed = max(0, self.epochs_trained - state["epochs"])
            self.wait = state["wait"] + missed
            self.best_weights = weights
            if self.wait >= patience:
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            loss = (logs or {}).get("val_loss")
            self.epochs_trained = epoch + 1
            if loss is not None and loss < self.best_loss:
                self.best_loss = float(loss)
                self.best_epoch = epoch + 1
                self.wait = 0
                self.best_weights = self.model.get_weights()
            else:
                self.wait += 1
            if directory.is_dir():
                self._save()
            if self.wait >= patience:
                self.model.stop_training = True

        def _save(self):
            # Written to temporary names and renamed, so an interruption
            # leaves the previous state whole.
            if self.wait == 0:
                partial = weights_path.with_suffix(".partial.npz")
                np.savez(
                    partial,
                    **{f"w{i}": w for i, w in enumerate(self.best_weights)},
                )
                partial.replace(weights_path)
            partial = state_path.with_suffix(".partial")
            partial.write_text(
                json.dumps(
                    {
                        "epochs": self.epochs_trained,
                        "best_epoch": self.best_epoch,
                        "best_loss": self.best_loss,
                        "wait": self.wait,
                    }
                )
            )
            partial.replace(state_path)

        def on_train_end(self, logs=None):
            if self.best_weights is not None:
                self.model.set_weights(self.best_weights)

    return ResumableEarlyStopping()

"""Keras callbacks for models with LAF layers."""

import keras

from keras_laf.laf_layer.layer import LAF
from keras_laf.validation import check_open_unit_interval


def laf_layers(layer):
    """The `keras_laf.LAF` layers in `layer`, itself included, nested ones
    (in models, `MultiAggregation`, `MessagePassing`, ...) too, each once,
    in the order their owners hold them.

    Example:

    >>> model = keras_laf.models.deep_sets(
    ...     input_dim=2, aggregation=["laf", "max"])
    >>> [layer.name for layer in laf_layers(model)]
    ['laf_0']
    """
    found, seen, pending = [], set(), [layer]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, LAF):
            found.append(current)
        # Keras tracks sub-layers as attributes, alone or in lists; a
        # model's layers are in `.layers`.
        children = list(getattr(current, "layers", None) or [])
        for value in vars(current).values():
            if isinstance(value, keras.layers.Layer):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children.extend(
                    item
                    for item in value
                    if isinstance(item, keras.layers.Layer)
                )
        pending.extend(children)
    return found


class SnapToClosedForms(keras.callbacks.Callback):
    """Snaps LAF units onto the closed forms they nearly compute, then
    trains on.

    At the end of the epoch `fine_tune_epochs` before the last, every
    `keras_laf.LAF` layer of the model puts the units that nearly compute
    a form of Table 1 (count, sum, mean, a moment, max, min, 1/count, ...)
    onto the form exactly (`LAF.snap_to_closed_forms`). The last
    `fine_tune_epochs` epochs then refit the rest of the model to the
    snapped units. A unit that has learnt, say, 0.22 count / (0.78 +
    0.22 (sum (1 - x))^0.3) on sets of 2 to 10 becomes an exact count,
    which holds on sets of 50. Pair it with the `"closed_forms"` preset,
    whose pulls keep snapped exponents where they are.

    Args:
        fine_tune_epochs: int >= 0. Epochs trained after the snap; `0`
            snaps at the end of training. Defaults to `2`.
        tolerance: float in (0, 1). Root-mean-square residual, relative
            to a unit's spread, below which a unit counts as a form (see
            `LAF.closed_forms`). Defaults to `0.1`.
        verbose: bool. Whether to print what was snapped. Defaults to
            `True`.

    Attributes:
        snapped: dict, after the snap: each LAF layer's name and its list
            of `(unit, form, scale)`.

    Example:

    >>> model = keras_laf.models.deep_sets(
    ...     vocabulary_size=10, phi_units=(),
    ...     aggregation=keras_laf.LAF(9, preset="closed_forms", name="laf"))
    >>> model.compile(optimizer="adam", loss="mae")
    >>> digits = np.random.default_rng(0).integers(0, 10, (256, 10))
    >>> snap = SnapToClosedForms(fine_tune_epochs=1, verbose=False)
    >>> history = model.fit([digits, np.ones((256, 10))],
    ...                     np.full((256, 1), 10.0), epochs=2,
    ...                     callbacks=[snap], verbose=0)
    >>> sorted(snap.snapped)
    ['laf']
    """

    def __init__(self, fine_tune_epochs=2, tolerance=0.1, verbose=True):
        super().__init__()
        if (
            isinstance(fine_tune_epochs, bool)
            or not isinstance(fine_tune_epochs, int)
            or fine_tune_epochs < 0
        ):
            raise ValueError(
                "`fine_tune_epochs` must be an int >= 0. Received: "
                f"fine_tune_epochs={fine_tune_epochs!r}"
            )
        self.fine_tune_epochs = fine_tune_epochs
        self.tolerance = check_open_unit_interval("tolerance", tolerance)
        self.verbose = verbose
        self.snapped = {}

    def on_train_begin(self, logs=None):
        epochs = self.params.get("epochs")
        if epochs is not None and self.fine_tune_epochs >= epochs:
            raise ValueError(
                f"SnapToClosedForms(fine_tune_epochs={self.fine_tune_epochs})"
                f" needs more than {self.fine_tune_epochs} epochs to snap "
                f"before them. Received: epochs={epochs}"
            )
        if not laf_layers(self.model):
            raise ValueError(
                "SnapToClosedForms found no keras_laf.LAF layer in model "
                f"{self.model.name!r}."
            )

    def on_epoch_end(self, epoch, logs=None):
        if epoch != self.params["epochs"] - 1 - self.fine_tune_epochs:
            return
        self.snapped = {
            layer.name: layer.snap_to_closed_forms(self.tolerance)
            for layer in laf_layers(self.model)
        }
        if self.verbose:
            for name, units in self.snapped.items():
                forms = ", ".join(
                    f"unit {unit} -> {form}" for unit, form, _ in units
                )
                print(
                    f"Epoch {epoch + 1}: snapped {len(units)} unit(s) of "
                    f"{name!r} onto closed forms"
                    + (f": {forms}" if forms else "")
                )

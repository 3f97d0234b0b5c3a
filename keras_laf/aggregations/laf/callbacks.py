"""Keras callbacks for models with LAF layers."""

import keras
import numpy as np

from keras_laf.aggregations.laf.layer import LAF
from keras_laf.core.validation import check_non_negative_int
from keras_laf.core.validation import check_open_unit_interval
from keras_laf.core.validation import check_positive_int


def laf_layers(layer):
    """The `keras_laf.LAF` layers in `layer`, itself included, nested ones
    (in models, `MultiAggregation`, `MessagePassing`, ...) too, each once,
    in the order their owners hold them.

    Example:

    >>> model = keras_laf.models.deep_sets(
    ...     input_dim=2, aggregation=["laf", "max"])
    >>> [layer.name for layer in laf_layers(model)]
    ['aggregation_0']
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
        self.fine_tune_epochs = check_non_negative_int(
            "fine_tune_epochs", fine_tune_epochs
        )
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


class LeastSquaresHead(keras.callbacks.Callback):
    """Refits the model's linear output layer by least squares at the end
    of training.

    When the units before the head compute closed forms exactly (a count,
    a sum, a mean, as the `"closed_forms"` preset and `SnapToClosedForms`
    make them), the target is often an exact linear function of them, but
    a gradient optimizer leaves the head a little off (a slope of 0.988
    where 1 is exact), and the error grows with the set. At the end of
    `fit`, this callback computes the head's inputs on `data`, solves the
    least-squares problem for its kernel and bias in float64 (streamed
    over the batches through the normal equations, so memory does not grow
    with the data, and with the minimum-norm solution where units repeat
    one another) and sets them. Put it after `SnapToClosedForms` in the
    callbacks, so that the head is fitted to the snapped units.

    Args:
        data: the training data: a `tf.data.Dataset` (or any iterable) of
            `(inputs, targets)` or `(inputs, targets, sample_weights)`
            batches, or a tuple `(inputs, targets)` of arrays.
        layer_name: str or None. The head, a `keras.layers.Dense` with a
            linear activation whose output is the model's. Defaults to
            None: the model's last layer.
        batch_size: int. Batch size when `data` is a tuple of arrays.
            Defaults to `256`.

    Example:

    >>> model = keras_laf.models.deep_sets(
    ...     vocabulary_size=10, phi_units=(),
    ...     aggregation=keras_laf.LAF(9, preset="closed_forms", name="laf"))
    >>> model.compile(optimizer="adam", loss="mae")
    >>> rng = np.random.default_rng(0)
    >>> digits = rng.integers(0, 10, (256, 10))
    >>> data = ([digits, np.ones((256, 10))], digits.sum(1, keepdims=True))
    >>> history = model.fit(*data, epochs=1, verbose=0,
    ...                     callbacks=[LeastSquaresHead(data)])
    >>> prediction = model.predict(data[0], verbose=0)
    >>> bool(np.max(np.abs(prediction - data[1])) < 1e-2)
    True
    """

    def __init__(self, data, layer_name=None, batch_size=256):
        super().__init__()
        if layer_name is not None and not isinstance(layer_name, str):
            raise ValueError(
                "`layer_name` must be a layer's name or None. Received: "
                f"layer_name={layer_name!r}"
            )
        self.data = data
        self.layer_name = layer_name
        self.batch_size = check_positive_int("batch_size", batch_size)

    def _head(self):
        head = (
            self.model.layers[-1]
            if self.layer_name is None
            else self.model.get_layer(self.layer_name)
        )
        linear = keras.activations.get("linear")
        if not isinstance(head, keras.layers.Dense) or (
            head.activation is not linear
        ):
            raise ValueError(
                "LeastSquaresHead refits a keras.layers.Dense with a linear "
                f"activation. Received: layer {head.name!r} "
                f"({type(head).__name__})"
            )
        if head.output is not self.model.outputs[0]:
            raise ValueError(
                "LeastSquaresHead refits the layer whose output is the "
                f"model's. Received: layer_name={head.name!r}"
            )
        return head

    def _batches(self):
        if isinstance(self.data, tuple) and len(self.data) == 2:
            inputs, targets = self.data
            size = len(targets)
            for start in range(0, size, self.batch_size):
                part = slice(start, start + self.batch_size)
                batch = keras.tree.map_structure(
                    lambda array: array[part], inputs
                )
                yield batch, targets[part], None
            return
        for batch in self.data:
            if not isinstance(batch, (tuple, list)) or len(batch) not in (
                2,
                3,
            ):
                raise ValueError(
                    "LeastSquaresHead needs (inputs, targets) or (inputs, "
                    "targets, sample_weights) batches."
                )
            yield batch[0], batch[1], batch[2] if len(batch) == 3 else None

    def on_train_end(self, logs=None):
        head = self._head()
        features = keras.Model(self.model.input, head.input)
        gram, moments = None, None
        for inputs, targets, weights in self._batches():
            # (batch, head inputs [+ 1 for the bias]) and (batch, outputs).
            design = np.asarray(
                keras.ops.convert_to_numpy(features(inputs, training=False)),
                "float64",
            )
            if head.use_bias:
                design = np.concatenate(
                    [design, np.ones((len(design), 1))], axis=1
                )
            targets = np.asarray(
                keras.ops.convert_to_numpy(targets), "float64"
            ).reshape(len(design), -1)
            if weights is not None:
                weights = np.asarray(
                    keras.ops.convert_to_numpy(weights), "float64"
                ).reshape(-1, 1)
                targets = targets * np.sqrt(weights)
                design = design * np.sqrt(weights)
            batch_gram, batch_moments = design.T @ design, design.T @ targets
            gram = batch_gram if gram is None else gram + batch_gram
            moments = (
                batch_moments if moments is None else moments + batch_moments
            )
        if gram is None:
            raise ValueError("LeastSquaresHead received no data.")
        solution = np.linalg.lstsq(gram, moments, rcond=None)[0]
        kernel = solution[: head.kernel.shape[0]]
        if not np.all(np.isfinite(solution)):
            raise ValueError(
                "LeastSquaresHead: the least-squares head is not finite; the "
                "head's inputs hold NaN or infinity on the data."
            )
        values = [kernel.astype(head.kernel.dtype)]
        if head.use_bias:
            values.append(solution[-1].astype(head.bias.dtype))
        head.set_weights(values)

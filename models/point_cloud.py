"""The DeepSets point-cloud classifier with selectable pooling."""

import keras

from keras_laf import compat
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.layers import PerElement
from keras_laf.layers import PermutationEquivariant
from keras_laf.models.building_blocks import set_aggregation
from keras_laf.models.building_blocks import set_inputs
from keras_laf.models.building_blocks import with_laf_arguments

# The units of a LAF pooling by name: the LAF paper's point-cloud layer.
LAF_UNITS = 10
POOLINGS = (
    "max",
    "sum",
    "pna_neighbourhood",
    "lstm",
    "laf",
    "gru",
    "softmax",
    "powermean",
    "attention",
    "set2set",
    "gmt",
)


@compat.deprecated_arguments(
    pooling=compat.renamed("aggregation"),
    width=compat.renamed("hidden_units"),
    units=compat.aggregation_argument("units"),
)
def point_cloud_classifier(
    num_classes=40,
    aggregation="laf",
    aggregation_kwargs=None,
    hidden_units=256,
    num_equivariant_layers=3,
    dropout=0.5,
    input_dim=3,
    ragged=False,
    name="point_cloud_classifier",
):
    """Builds the DeepSets point-cloud classifier used for ModelNet40.

    Zaheer et al., "Deep Sets" (NeurIPS 2017): `num_equivariant_layers`
    layers x -> tanh(W (x - max(x)) + b) of `hidden_units` units, a pooling over
    the points, dropout, a dense tanh layer, dropout and a linear layer
    giving logits. The pooling is `"laf"` by default (LAF, the LAF paper's
    choice, 10 units there, on the features mapped into [0, 1] by
    (1 + tanh) / 2), or `"max"` (DeepSets), `"sum"` (DeepSets' sum),
    `"pna_neighbourhood"` (PNA's mean, max, min and standard deviation
    concatenated), `"lstm"` (an LSTM over the points in their given order,
    the order-dependent baseline of the LAF paper).
    Points are expected standardised per cloud (zero mean, unit variance), as
    `keras_laf.datasets.make_solid_point_clouds` and `load_modelnet40`
    give them; the model does not standardise.

    Args:
        num_classes: int. Number of classes. Defaults to `40`.
        aggregation: str. The pooling: `"laf"`, `"max"`, `"sum"`,
            `"pna_neighbourhood"` (PNA's mean, max, min and std) or
            `"lstm"`; or the learnable
            `"gru"`, `"softmax"`, `"powermean"`, `"attention"`,
            `"set2set"`, `"gmt"`, or any other registered name
            (`keras_laf.aggregations.names()`, a user's own included)
            (`"gmt"` needs a smaller learning rate than the others, Adam
            1e-3 rather than 3e-3); or a list of
            aggregation names, e.g. `["laf", "max"]` (a
            `keras_laf.MultiAggregation`; when the list holds `"laf"`,
            every member pools the features mapped into [0, 1] as LAF
            alone does); or an aggregation layer (a
            `keras_laf.LAF` with other arguments, say), used as given,
            after the map into [0, 1] if it is a LAF. Defaults to
            `"laf"`.
        aggregation_kwargs: dict. The arguments of a pooling given by
            name, e.g. `{"units": 10, "output_bound": 10.0}` for `"laf"`,
            or `aggregations_kwargs` for a list. Defaults to `None`: the
            name's defaults, but `LAF_UNITS` (10, the LAF paper's) units
            for a LAF by name.
        hidden_units: int. Width of the equivariant and dense layers.
            Defaults to `256`.
        num_equivariant_layers: int. Defaults to `3`.
        dropout: float in [0, 1). Dropout rate. Defaults to `0.5`.
        input_dim: int. Coordinates per point. Defaults to `3`.
        ragged: bool. If False (the default), on every backend the model
            takes two inputs, `[sets, mask]`: the clouds padded to one size,
            float32 `(batch, num_points, input_dim)`, and a float32 mask
            `(batch, num_points)`, 1 for real points and 0 for padding
            (`keras_laf.datasets.pad_sets` and
            `keras_laf.datasets.to_padded_batches` make them). If True, on
            the TensorFlow backend only, one `tf.RaggedTensor` `(batch,
            None, input_dim)` instead. Defaults to `False`.
        name: str. Name of the model.

    Returns:
        An uncompiled `keras.Model` with logits `(batch, num_classes)`.

    Example:

    >>> model = point_cloud_classifier(
    ...     num_classes=40, aggregation_kwargs={"units": 10}
    ... )
    >>> model.get_layer("laf").units
    10
    >>> model.compile(
    ...     optimizer="adam",
    ...     loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    ... )
    """
    for argument, value in (
        ("num_classes", num_classes),
        ("hidden_units", hidden_units),
        ("num_equivariant_layers", num_equivariant_layers),
        ("input_dim", input_dim),
    ):
        check_positive_int(argument, value)
    check_number("dropout", dropout, minimum=0, below=1)

    inputs, points, mask = set_inputs((input_dim,), ragged)
    for index in range(num_equivariant_layers):
        points = PermutationEquivariant(
            hidden_units, activation="tanh", name=f"equivariant_{index}"
        )(points, mask=mask)
    # The pooling layer first: it says whether its elements must lie in
    # [0, 1]. A list holding LAF: every member gets the mapped features,
    # and the MultiAggregation does not squash LAF's again.
    pooling_layer = set_aggregation(
        aggregation,
        with_laf_arguments(aggregation, aggregation_kwargs, units=LAF_UNITS),
        "laf" if aggregation == "laf" else "pooling",
    )
    if pooling_layer.input_domain == "unit_interval":
        # LAF needs its elements in [0, 1]: (1 + tanh) / 2 maps the tanh
        # features onto it exactly, where a sigmoid after tanh would
        # squeeze them into [0.27, 0.73] and a quarter of their spread.
        points = PerElement(
            keras.layers.Rescaling(0.5, offset=0.5), name="to_unit_interval"
        )(points)
    pooled = pooling_layer(points, mask=mask)
    features = keras.layers.Dropout(dropout, name="dropout_0")(pooled)
    features = keras.layers.Dense(
        hidden_units, activation="tanh", name="dense"
    )(features)
    features = keras.layers.Dropout(dropout, name="dropout_1")(features)
    outputs = keras.layers.Dense(num_classes, name="logits")(features)
    return keras.Model(inputs, outputs, name=name)

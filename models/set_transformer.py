"""Set Transformer models with a PMA or an aggregation (LAF) head."""

import keras

from keras_laf import compat
from keras_laf.core.validation import check_positive_int
from keras_laf.layers import ISAB
from keras_laf.layers import PMA
from keras_laf.layers import SAB
from keras_laf.models.building_blocks import check_choice
from keras_laf.models.building_blocks import check_widths
from keras_laf.models.building_blocks import dense_head
from keras_laf.models.building_blocks import element_network
from keras_laf.models.building_blocks import set_aggregation
from keras_laf.models.building_blocks import set_inputs
from keras_laf.models.building_blocks import with_laf_arguments

# The units of a LAF head by name: the LAF paper's ST-LAF.
LAF_UNITS = 10
# The heads of the LAF paper.
HEADS = ("pma", "laf")
ENCODERS = ("sab", "isab")


@compat.deprecated_arguments(
    head=compat.renamed("aggregation"),
    dim=compat.renamed("hidden_units"),
    units=compat.aggregation_argument("units"),
)
def set_transformer(
    input_dim,
    output_dim=1,
    aggregation="pma",
    aggregation_kwargs=None,
    encoder="sab",
    num_blocks=2,
    hidden_units=64,
    num_heads=4,
    num_inducing=16,
    num_seeds=1,
    layer_norm=True,
    phi_units=(),
    phi_activation="relu",
    rho_units=(100,),
    rho_activation="relu",
    ragged=False,
    name="set_transformer",
):
    """Builds a Set Transformer: attention encoder, PMA or LAF pooling, MLP.

    Lee et al., "Set Transformer" (ICML 2019), with the decoder's pooling
    as a choice, as in the LAF paper's comparison: an optional dense
    network on each element, `num_blocks` SAB or ISAB blocks, then either
    PMA with `num_seeds` seed vectors or an aggregation (a sigmoid and
    LAF), then dense layers and a linear output.

    The LAF paper's unique-sum models, by arguments:
    `set_transformer(input_dim=784, phi_units=(300, 100, 30))` (ST-PMA:
    2 x SAB(64, 4 heads), PMA(64, 4), Dense(100) ReLU, Dense(1)) and the
    same with `aggregation="laf", aggregation_kwargs={"units": 10}`
    (ST-LAF).

    Args:
        input_dim: int. Features of each element.
        output_dim: int. Outputs of the model. Defaults to `1`.
        aggregation: the pooling head: `"pma"` (the Set Transformer's
            attention pooling), or an aggregation of
            `keras_laf.aggregations.resolve` (`"laf"`, the LAF paper's
            ST-LAF, its elements through a sigmoid first; a name, a list
            or a layer). Defaults to `"pma"`.
        aggregation_kwargs: dict. The arguments of an aggregation given by
            name, e.g. `{"units": 4}` for `"laf"`. Defaults to `None`: the
            name's defaults, but `LAF_UNITS` (10, the LAF paper's ST-LAF)
            units for a LAF by name.
        encoder: str. `"sab"` or `"isab"`. Defaults to `"sab"`.
        num_blocks: int. Encoder blocks. Defaults to `2`.
        hidden_units: int. Width of the attention blocks. Defaults to
            `64`.
        num_heads: int. Attention heads; must divide `hidden_units`.
            Defaults to `4`.
        num_inducing: int. Inducing points of each ISAB. Defaults to `16`.
        num_seeds: int. Seed vectors of PMA. Defaults to `1`.
        layer_norm: bool. Layer normalisation in the attention blocks.
            Defaults to `True`.
        phi_units: widths of the dense layers applied to each element
            before the encoder. Defaults to `()`.
        phi_activation: their activation. Defaults to `"relu"`.
        rho_units: widths of the dense layers after pooling. Defaults to
            `(100,)`.
        rho_activation: their activation. Defaults to `"relu"`.
        ragged: bool. If False (the default), on every backend the model
            takes two inputs, `[sets, mask]`: the sets padded to one size,
            float32 `(batch, set_size, input_dim)`, and a float32 mask
            `(batch, set_size)`, 1 for real elements and 0 for padding
            (`keras_laf.datasets.pad_sets` and
            `keras_laf.datasets.to_padded_batches` make them). If True, on
            the TensorFlow backend only, one `tf.RaggedTensor` `(batch, None,
            input_dim)` instead. Defaults to `False`.
        name: str. Name of the model. Defaults to `"set_transformer"`.

    Returns:
        An uncompiled `keras.Model` with output `(batch, output_dim)`.

    Example:

    >>> model = set_transformer(
    ...     input_dim=784, aggregation="laf", aggregation_kwargs={"units": 10}
    ... )
    """
    check_choice("encoder", encoder, ENCODERS)
    for argument, value in (
        ("input_dim", input_dim),
        ("output_dim", output_dim),
        ("num_blocks", num_blocks),
        ("hidden_units", hidden_units),
        ("num_heads", num_heads),
        ("num_inducing", num_inducing),
        ("num_seeds", num_seeds),
    ):
        check_positive_int(argument, value)
    if hidden_units % num_heads:
        raise ValueError(
            "`num_heads` must divide `hidden_units`. Received: "
            f"hidden_units={hidden_units}, num_heads={num_heads}"
        )
    phi_units = check_widths("phi_units", phi_units)
    rho_units = check_widths("rho_units", rho_units)

    inputs, elements, mask = set_inputs((input_dim,), ragged)
    if phi_units:
        elements = element_network(
            elements, phi_units, phi_activation, phi_activation, "phi"
        )
    for index in range(num_blocks):
        if encoder == "sab":
            block = SAB(hidden_units, num_heads, layer_norm=layer_norm)
        else:
            block = ISAB(
                hidden_units, num_heads, num_inducing, layer_norm=layer_norm
            )
        block.name = f"encoder_{index}"
        elements = block(elements, mask=mask)
    if aggregation == "pma":
        pooled = PMA(
            hidden_units,
            num_heads,
            num_seeds,
            layer_norm=layer_norm,
            name="pma",
        )(elements, mask=mask)
        pooled = keras.layers.Flatten(name="flatten")(pooled)
    else:
        pooling = set_aggregation(
            aggregation,
            with_laf_arguments(
                aggregation, aggregation_kwargs, units=LAF_UNITS
            ),
            "laf" if aggregation == "laf" else "aggregation",
        )
        if pooling.input_domain == "unit_interval":
            elements = element_network(elements, (), None, "sigmoid", "squash")
        pooled = pooling(elements, mask=mask)
    outputs = dense_head(pooled, rho_units, rho_activation, output_dim, "rho")
    return keras.Model(inputs, outputs, name=name)

"""Set Transformer models with a PMA or a LAF head."""

import keras

from keras_laf import aggregations
from keras_laf.core.validation import check_positive_int
from keras_laf.layers import ISAB
from keras_laf.layers import PMA
from keras_laf.layers import SAB
from keras_laf.models.building_blocks import check_choice
from keras_laf.models.building_blocks import check_widths
from keras_laf.models.building_blocks import dense_head
from keras_laf.models.building_blocks import element_network
from keras_laf.models.building_blocks import renamed_arguments
from keras_laf.models.building_blocks import set_inputs

HEADS = ("pma", "laf")
ENCODERS = ("sab", "isab")


@renamed_arguments(dim="hidden_units", units="laf_units")
def set_transformer(
    input_dim,
    output_dim=1,
    head="pma",
    encoder="sab",
    num_blocks=2,
    hidden_units=64,
    num_heads=4,
    num_inducing=16,
    num_seeds=1,
    laf_units=10,
    laf_preset=None,
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
    PMA with `num_seeds` seed vectors or a sigmoid and LAF with
    `laf_units` units, then dense layers and a linear output.

    The LAF paper's unique-sum models, by arguments:
    `set_transformer(input_dim=784, phi_units=(300, 100, 30), head="pma")`
    (ST-PMA: 2 x SAB(64, 4 heads), PMA(64, 4), Dense(100) ReLU, Dense(1))
    and the same with `head="laf", laf_units=10` (ST-LAF).

    Args:
        input_dim: int. Features of each element.
        output_dim: int. Outputs of the model. Defaults to `1`.
        head: str. `"pma"` or `"laf"`. Defaults to `"pma"`.
        encoder: str. `"sab"` or `"isab"`. Defaults to `"sab"`.
        num_blocks: int. Encoder blocks. Defaults to `2`.
        hidden_units: int. Width of the attention blocks (formerly `dim`).
            Defaults to `64`.
        num_heads: int. Attention heads; must divide `hidden_units`.
            Defaults to `4`.
        num_inducing: int. Inducing points of each ISAB. Defaults to `16`.
        num_seeds: int. Seed vectors of PMA. Defaults to `1`.
        laf_units: int. LAF units of the `"laf"` head (formerly `units`).
            Defaults to `10`.
        laf_preset: str. The `keras_laf.LAF` preset (`"pooling"`,
            `"closed_forms"` or `"paper"`, see `keras_laf.presets`) when
            LAF is used. Defaults to `None`: the layer's default.
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

    >>> model = set_transformer(input_dim=784, head="laf", laf_units=10)
    """
    check_choice("head", head, HEADS)
    check_choice("encoder", encoder, ENCODERS)
    for argument, value in (
        ("input_dim", input_dim),
        ("output_dim", output_dim),
        ("num_blocks", num_blocks),
        ("hidden_units", hidden_units),
        ("num_heads", num_heads),
        ("num_inducing", num_inducing),
        ("num_seeds", num_seeds),
        ("laf_units", laf_units),
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
    if head == "pma":
        pooled = PMA(
            hidden_units,
            num_heads,
            num_seeds,
            layer_norm=layer_norm,
            name="pma",
        )(elements, mask=mask)
        pooled = keras.layers.Flatten(name="flatten")(pooled)
    else:
        elements = element_network(elements, (), None, "sigmoid", "squash")
        pooled = aggregations.get(
            "laf",
            name="laf",
            **aggregations.former_shortcut_kwargs("laf", laf_units, laf_preset),
        )(elements, mask=mask)
    outputs = dense_head(pooled, rho_units, rho_activation, output_dim, "rho")
    return keras.Model(inputs, outputs, name=name)

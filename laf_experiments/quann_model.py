"""The models of QUANN's MNIST benchmark (`keras-laf mnist --protocol
quann`): QUANN's image encoder, trained end to end with a method's pooling
and a dense head, as `MNIST_experiment.py` of QUANN's code builds them.
"""

IMAGE_SHAPE = (28, 28, 1)
FEATURES = 128
ENCODER_FILTERS = (16, 32, 64)
# QUANN's optimiser: torch's Adam with `weight_decay=1e-5`, which adds
# `1e-5 * w` to the gradient of every weight (not AdamW's decoupled decay).
WEIGHT_DECAY = 1e-5
# The hidden widths of each method's head. QUANN gives its own model one
# hidden layer where DeepSets has two, so that both hold about 196,000
# weights, and its Set Transformer (`"st-pma"`: one SAB and a PMA of
# width 128, one head) none.
HEADS = {
    "laf": (256, 256),
    "deepsets_sum": (256, 256),
    "kolmogorov_mean": (256,),
    "genagg": (256, 256),
    "st-pma": (),
}


def weight_penalty(weight_decay):
    """The regularizers of a layer's kernel and bias whose gradient is
    torch's `weight_decay`: L2 of `weight_decay / 2`."""
    import keras

    return {
        "kernel_regularizer": keras.regularizers.L2(weight_decay / 2),
        "bias_regularizer": keras.regularizers.L2(weight_decay / 2),
    }


def image_encoder(weight_decay=WEIGHT_DECAY, output_activation=None):
    """QUANN's `SmallImageEncoder`: a flattened 28x28 image to 128 features.

    Three 3x3 convolutions of 16, 32 and 64 channels, each with a ReLU and
    2x2 max pooling (28 -> 14 -> 7 -> 3), then a dense layer of 128.

    Args:
        weight_decay: the weight decay of every weight (`weight_penalty`).
        output_activation: the activation of the 128 features, None for
            none.

    Returns:
        A `keras.Sequential` from `(batch, 784)` to `(batch, 128)`.
    """
    import keras

    penalty = weight_penalty(weight_decay)
    layers = [keras.layers.Reshape(IMAGE_SHAPE, name="image")]
    for index, filters in enumerate(ENCODER_FILTERS):
        layers += [
            keras.layers.Conv2D(
                filters,
                3,
                padding="same",
                activation="relu",
                name=f"convolution_{index}",
                **penalty,
            ),
            keras.layers.MaxPooling2D(2, name=f"pooling_{index}"),
        ]
    layers += [
        keras.layers.Flatten(name="flatten"),
        keras.layers.Dense(
            FEATURES, activation=output_activation, name="features", **penalty
        ),
    ]
    return keras.Sequential(layers, name="encoder")


def build_model(
    method, laf_preset=None, laf_output_bound=None, weight_decay=WEIGHT_DECAY
):
    """QUANN's model of image sets with a method's pooling.

    Every image through `image_encoder` (its 128 features through a
    sigmoid for an aggregation of `[0, 1]` inputs, LAF's), the method's
    aggregation (`laf_experiments.methods`), then its hidden ReLU layers
    (`HEADS`) and a linear output; `"st-pma"` pools with a SAB and a PMA
    instead. The encoder and the head have QUANN's weight decay; an
    aggregation's own weights have none.

    Args:
        method: a key of `HEADS`.
        laf_preset: the preset of LAF, None for the layer's default.
        laf_output_bound: LAF's `output_bound`, None for the preset's.
        weight_decay: the weight decay (`weight_penalty`).

    Returns:
        An uncompiled `keras.Model` of the inputs `[sets, mask]`, float32
        `(batch, set_size, 784)` and `(batch, set_size)`, and the output
        `(batch, 1)`.

    Example:

    >>> build_model("deepsets_sum").count_params()
    196225
    """
    import keras

    from keras_laf import aggregations
    from keras_laf.layers import PMA
    from keras_laf.layers import SAB
    from keras_laf.layers import PerElement
    from keras_laf.models.building_blocks import set_inputs
    from laf_experiments.methods import METHODS

    if method not in HEADS:
        raise ValueError(
            f"Unknown method {method!r}. Expected one of {list(HEADS)}."
        )
    penalty = weight_penalty(weight_decay)
    inputs, sets, mask = set_inputs((28 * 28,), ragged=False)
    if method == "st-pma":
        encoder = image_encoder(weight_decay)
        # (batch, set_size, 128)
        elements = PerElement(encoder, name="per_image")(sets)
        elements = SAB(FEATURES, 1, name="sab", **penalty)(elements, mask=mask)
        # (batch, 1, 128)
        pooled = PMA(FEATURES, 1, 1, name="pma", **penalty)(elements, mask=mask)
        features = keras.layers.Flatten(name="flatten")(pooled)
    else:
        identifier, kwargs = METHODS[method].spec()
        if identifier == "laf":
            options = {"preset": laf_preset, "output_bound": laf_output_bound}
            kwargs.update({k: v for k, v in options.items() if v is not None})
        aggregation = aggregations.get(identifier, name="aggregation", **kwargs)
        squash = aggregation.input_domain == "unit_interval"
        encoder = image_encoder(weight_decay, "sigmoid" if squash else None)
        elements = PerElement(encoder, name="per_image")(sets)
        features = aggregation(elements, mask=mask)
    for index, width in enumerate(HEADS[method]):
        features = keras.layers.Dense(
            width, activation="relu", name=f"head_{index}", **penalty
        )(features)
    outputs = keras.layers.Dense(1, name="output", **penalty)(features)
    name = f"quann_mnist_{method.replace('-', '_')}"
    return keras.Model(inputs, outputs, name=name)

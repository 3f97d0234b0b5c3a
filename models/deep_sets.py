"""DeepSets models: phi on each element, an aggregation, rho on the result."""

import keras

from keras_laf import compat
from keras_laf.core.validation import check_positive_int
from keras_laf.layers import PerElement
from keras_laf.models.building_blocks import check_widths
from keras_laf.models.building_blocks import dense_head
from keras_laf.models.building_blocks import element_network
from keras_laf.models.building_blocks import set_aggregation
from keras_laf.models.building_blocks import set_inputs


@compat.deprecated_arguments(
    units=compat.aggregation_argument("units"),
    lstm_units=compat.aggregation_argument("units", names=("lstm",)),
)
def deep_sets(
    input_dim=None,
    output_dim=1,
    aggregation="laf",
    aggregation_kwargs=None,
    vocabulary_size=None,
    embedding_dim=10,
    phi_units=(30,),
    phi_activation="tanh",
    phi_output_activation="sigmoid",
    rho_units=(),
    rho_activation="relu",
    ragged=False,
    name="deep_sets",
):
    """Builds a DeepSets model: rho(aggregate(phi(x) for x in set)).

    The architecture of Zaheer et al., "Deep Sets" (NeurIPS 2017), with the
    aggregation as a choice, as in the experiments of the LAF paper. phi is
    an optional embedding then dense layers applied to every element; its
    last activation (sigmoid by default) maps elements into [0, 1] as LAF
    requires. rho is dense layers then a linear output.

    The paper's models, by arguments:

    - integer sets: `deep_sets(vocabulary_size=10, embedding_dim=10,
      phi_units=())`: Embedding(10, 10) -> sigmoid -> LAF(9) -> Dense(1);
    - MNIST-digit sets: `deep_sets(input_dim=784, phi_units=(300, 100,
      30), rho_units=(1000, 100))`: 784-300-100-30 (tanh, tanh, sigmoid) ->
      LAF(9) -> 1000-100-1.

    Args:
        input_dim: int. Features of each element. Give this or
            `vocabulary_size`.
        output_dim: int. Outputs of the model. Defaults to `1`.
        aggregation: an identifier of `keras_laf.aggregations.resolve`:
            `"laf"` (LAF, 9 units unless told), a fixed aggregator such as
            `"sum"`, `"mean"` or `"max"`, `"deepsets"` (3 sum, 3 max and 3
            mean), `"pna"` (mean, max, sum, std, var, skewness, kurtosis),
            `"lstm"` or `"gru"` (a recurrent network over the elements,
            order-dependent), `"softmax"`, `"powermean"`, `"attention"`,
            `"set2set"`, `"gmt"`, or a list of names (fixed aggregators
            make one `FixedAggregation`; a list mixing others, e.g.
            `["laf", "max"]`, a `keras_laf.MultiAggregation` whose members
            all pool phi's output, LAF's squashed once by phi's last
            activation). Defaults to `"laf"`.
        aggregation_kwargs: dict. The arguments of an aggregation given by
            name, e.g. `{"units": 4, "preset": "closed_forms"}` for
            `"laf"`, or `aggregations_kwargs` for a list. Defaults to
            `None`: the name's defaults.
        vocabulary_size: int. For sets of integers in `[0, vocabulary_size)`:
            each element is embedded first. As with `keras.layers.Embedding`,
            an element outside that range is found only when the model runs:
            on a CPU it raises `InvalidArgumentError` ("indices[...] = 12 is
            not in [0, 10)"), on a GPU its embedding is silently zero, so
            check the data first (e.g. `0 <= sets.flat_values < 10`).
            Defaults to `None`.
        embedding_dim: int. Width of the embedding. Defaults to `10`.
        phi_units: widths of phi's dense layers. Defaults to `(30,)`.
        phi_activation: activation of phi's hidden layers. Defaults to
            `"tanh"`.
        phi_output_activation: activation of phi's last layer (or of the
            embedding when `phi_units` is empty). Defaults to `"sigmoid"`.
        rho_units: widths of rho's hidden layers. Defaults to `()`.
        rho_activation: activation of rho's hidden layers. Defaults to
            `"relu"`.
        ragged: bool. If False (the default), on every backend the model
            takes two inputs, `[sets, mask]`: the sets padded to one size,
            float32 `(batch, set_size, input_dim)` (int32
            `(batch, set_size)` with `vocabulary_size`), and a float32 mask
            `(batch, set_size)`, 1 for real elements and 0 for padding
            (`keras_laf.datasets.pad_sets` and
            `keras_laf.datasets.to_padded_batches` make them). If True, on
            the TensorFlow backend only, one `tf.RaggedTensor` `(batch, None,
            input_dim)` (or `(batch, None)` integers) instead.
            Defaults to `False`.
        name: str. Name of the model. Defaults to `"deep_sets"`.

    Returns:
        An uncompiled `keras.Model` with output `(batch, output_dim)`.

    Example:

    >>> model = deep_sets(vocabulary_size=10, phi_units=(), aggregation="laf")
    >>> model.compile(optimizer="adam", loss="mae")
    """
    if (input_dim is None) == (vocabulary_size is None):
        raise ValueError(
            "Give exactly one of `input_dim` (feature vectors) and "
            "`vocabulary_size` (integer elements). Received: "
            f"input_dim={input_dim}, vocabulary_size={vocabulary_size}"
        )
    for argument, value in (
        ("input_dim", input_dim),
        ("vocabulary_size", vocabulary_size),
    ):
        if value is not None:
            check_positive_int(argument, value)
    for argument, value in (
        ("output_dim", output_dim),
        ("embedding_dim", embedding_dim),
    ):
        check_positive_int(argument, value)
    phi_units = check_widths("phi_units", phi_units)
    rho_units = check_widths("rho_units", rho_units)
    aggregate = set_aggregation(aggregation, aggregation_kwargs, "aggregation")

    if vocabulary_size is None:
        inputs, elements, mask = set_inputs((input_dim,), ragged)
    else:
        inputs, elements, mask = set_inputs((), ragged, dtype="int32")
        embedding = keras.layers.Embedding(vocabulary_size, embedding_dim)
        elements = PerElement(embedding, name="embedding")(elements)
    elements = element_network(
        elements, phi_units, phi_activation, phi_output_activation, "phi"
    )
    aggregated = aggregate(elements, mask=mask)
    outputs = dense_head(
        aggregated, rho_units, rho_activation, output_dim, "rho"
    )
    return keras.Model(inputs, outputs, name=name)

"""The methods `keras-laf molecules` compares: the aggregations of each.

Every method is the same network (`keras_laf.models.molecule_network`)
with the method's neighbour and readout aggregations; its label, colour
and marker are those of `laf_experiments.methods`, as in every command.
"""

METHODS = (
    "sum",
    "mean",
    "max",
    "pna",
    "softmax",
    "genagg",
    "laf",
    "laf_closed_forms",
)
# The aggregations that learn nothing; the best of them at 26-40 atoms is
# what LAF is held against.
FIXED_METHODS = ("sum", "mean", "max", "pna")
LAF_METHODS = ("laf", "laf_closed_forms")
# What `keras-laf molecules --help` says of the methods.
METHODS_DESCRIPTION = f"""\
Methods: {", ".join(METHODS)}. Each is the same network
(keras_laf.models.molecule_network: atom and bond one-hot features,
--num-layers message-passing layers with bond features and residual
updates, a sigmoid projection, a readout, a linear output) whose
neighbour and readout aggregations are the method's: pna is mean, max,
min and std with PNA's identity, amplification and attenuation scalers
(the training molecules' degree histogram) and the four as the readout;
softmax learns its temperature; laf is LAF with --laf-preset (the
layer's default, pooling, unless told), laf_closed_forms LAF with
preset="closed_forms". Labels are standardised with the training mean
and standard deviation; Adam on the MAE, the learning rate halved after
--lr-patience epochs without a lower validation loss."""
PNA_AGGREGATORS = ("mean", "max", "min", "std")
PNA_SCALERS = ("identity", "amplification", "attenuation")


def aggregations(method, degree_histogram, laf_preset=None):
    """The neighbour and readout aggregations of a method, with the LAF
    preset of `molecule_network` for the LAF methods.

    Args:
        method: one of `METHODS`.
        degree_histogram: the training molecules' in-degree histogram
            (`keras_laf.degree_histogram`), for PNA's scalers.
        laf_preset: the preset of `"laf"` (`--laf-preset`);
            `"laf_closed_forms"` is always `"closed_forms"`. Defaults to
            `None`: the layer's default.

    Returns:
        A dict of `molecule_network` arguments: `aggregation`,
        `readout_aggregation` and, for LAF, `laf_preset`.
    """
    import keras_laf

    if method == "pna":
        return {
            "aggregation": keras_laf.DegreeScalerAggregation(
                list(PNA_AGGREGATORS),
                list(PNA_SCALERS),
                degree_histogram=degree_histogram,
            ),
            "readout_aggregation": list(PNA_AGGREGATORS),
        }
    if method == "softmax":
        return {
            "aggregation": keras_laf.SoftmaxAggregation(learn=True),
            "readout_aggregation": keras_laf.SoftmaxAggregation(learn=True),
        }
    if method == "genagg":
        return {
            "aggregation": keras_laf.GenAggAggregation(),
            "readout_aggregation": keras_laf.GenAggAggregation(),
        }
    if method in LAF_METHODS:
        preset = "closed_forms" if method == "laf_closed_forms" else laf_preset
        return {
            "aggregation": "laf",
            "readout_aggregation": "laf",
            "laf_preset": preset,
        }
    return {"aggregation": method, "readout_aggregation": method}

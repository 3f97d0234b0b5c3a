"""The methods the experiments compare, in one table.

A method's name means one thing in every command, table and figure: its
label, its colour and marker (matplotlib's tab10 and tab20, and black for
the baseline, with a marker each), and the aggregation it stands for, an
identifier of `keras_laf.aggregations.get` with its `aggregation_kwargs`.
The methods that are no aggregation (a ranking without training, a model
that predicts the training mean) stand for none.

Where a command's model takes another aggregation under the same name
(PNA's four neighbourhood aggregators in the graph and point-cloud
models, `NEIGHBOURHOOD_PNA`, where the set models take the seven of the
LAF paper's PNA), the command says so with `method(name,
aggregation=...)`: the label and the style stay the name's.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Method:
    """A method: its label, its style and its aggregation.

    Args:
        label: str. The name in tables and legends.
        color: str. A matplotlib colour.
        marker: str. A matplotlib marker.
        aggregation: the identifier of `keras_laf.aggregations.get`: a
            name, a tuple of names, or None for a method that is no
            aggregation.
        aggregation_kwargs: tuple of `(argument, value)` pairs, the
            arguments of the aggregation made from `aggregation`.
    """

    label: str
    color: str
    marker: str
    aggregation: object = None
    aggregation_kwargs: tuple = ()

    def spec(self):
        """`(identifier, aggregation_kwargs)` for the builders: a new list
        for several names and a new dict, which the caller may change."""
        identifier = self.aggregation
        if isinstance(identifier, tuple):
            identifier = list(identifier)
        return identifier, dict(self.aggregation_kwargs)


# tab20's light shades, beside tab10's named colours.
_LIGHT_BLUE = "#aec7e8"
_LIGHT_ORANGE = "#ffbb78"
_LIGHT_GREEN = "#98df8a"
_LIGHT_RED = "#ff9896"
_LIGHT_PURPLE = "#c5b0d5"
_LIGHT_BROWN = "#c49c94"
_LIGHT_PINK = "#f7b6d2"
_LIGHT_GREY = "#c7c7c7"
_LIGHT_OLIVE = "#dbdb8d"
_LIGHT_CYAN = "#9edae5"

# Two methods share a colour only where no command runs both; the marker
# tells them apart wherever they are drawn.
METHODS = {
    # LAF and its variants: the reds and pinks.
    "laf": Method("LAF", "tab:red", "o", "laf"),
    "laf-paper": Method(
        "LAF (paper's preset)", "tab:pink", "p", "laf", (("preset", "paper"),)
    ),
    "laf_closed_forms": Method(
        "LAF (closed_forms)",
        _LIGHT_PINK,
        "P",
        "laf",
        (("preset", "closed_forms"),),
    ),
    "laf+max": Method("LAF and max", _LIGHT_RED, "d", ("laf", "max")),
    "st-laf": Method("SetTransformer (LAF)", "tab:red", "p"),
    "st-pma": Method("SetTransformer (PMA)", "tab:purple", "s"),
    # The paper's baselines.
    "deepsets": Method("DeepSets", "tab:blue", "s", "deepsets"),
    "deepsets_sum": Method("DeepSets (sum)", _LIGHT_BLUE, "8", "sum"),
    "pna": Method("PNA", "tab:green", "^", "pna"),
    "pna_star": Method(
        "PNA* (no scalers)", _LIGHT_GREEN, "H", "pna_neighbourhood"
    ),
    "lstm": Method("LSTM", "tab:orange", "D", "lstm"),
    # The learnable aggregations of `keras_laf.aggregations`.
    "gru": Method("GRU", _LIGHT_ORANGE, "P", "gru"),
    "softmax": Method("Softmax", "tab:olive", "X", "softmax"),
    "powermean": Method("Power mean", "tab:cyan", "h", "powermean"),
    "attention": Method("Attention", "tab:gray", "*", "attention"),
    "set2set": Method("Set2Set", "tab:purple", "<", "set2set"),
    "gmt": Method("GMT", "tab:brown", ">", "gmt"),
    "genagg": Method("GenAgg", _LIGHT_BROWN, "p", "genagg"),
    "kolmogorov_mean": Method(
        "Kolmogorov mean", "tab:cyan", "v", "kolmogorov_mean"
    ),
    # Fixed aggregations of message-passing networks.
    "sum": Method("Sum", _LIGHT_BLUE, "v", "sum"),
    "mean": Method("Mean", "tab:orange", "d", "mean"),
    "max": Method("Max", _LIGHT_PURPLE, "<", "max"),
    # Graph convolutions, with the aggregation of their own readout.
    "gin": Method("GIN", _LIGHT_CYAN, "s", "sum"),
    "gcn": Method("GCN", _LIGHT_GREY, "D", "mean"),
    "gat": Method("GAT", _LIGHT_OLIVE, "*", "mean"),
    "baseline": Method("Baseline (training mean)", "black", "_"),
    # Rankings of words without training (`keras-laf expansion`).
    "random": Method("Random", "tab:gray", "x"),
    "w2v_near": Method("w2v Near", _LIGHT_CYAN, "H"),
    "nn_max": Method("NN-max (untrained)", _LIGHT_PURPLE, ">"),
    "nn_sum_con": Method("NN-sum (untrained)", _LIGHT_BLUE, "X"),
}


def method(name, **changes):
    """The method `name` of `METHODS`, with `changes` to its fields.

    Example:

    >>> method("pna", aggregation="pna_neighbourhood").label
    'PNA'
    """
    return dataclasses.replace(METHODS[name], **changes)


# PNA in the graph and point-cloud models: its four neighbourhood
# aggregators, where the LAF paper's set models take seven (`"pna"`).
NEIGHBOURHOOD_PNA = method("pna", aggregation="pna_neighbourhood")

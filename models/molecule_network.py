"""A message-passing network that predicts properties of molecules.

Built from the public graph layers: `keras_laf.AggregationConv` layers
whose messages see both atoms and the bond between them, each followed
by a dense layer and a residual sum, as GIN's update is an MLP of a node
and the aggregate of its neighbours (Xu et al., ICLR 2019), then a
`keras_laf.GraphReadout` and a linear output. The neighbour and readout
aggregations are arguments, which is what `keras-laf molecules` compares.
"""

import keras

from keras_laf.core.validation import check_positive_int
from keras_laf.graphs import AggregationConv
from keras_laf.graphs import GraphReadout
from keras_laf.models.graph_model import GraphModel


def _copy(aggregation):
    # Each layer gets its own weights: a layer passed in is a template,
    # copied from its config; names and lists make new layers anyway.
    if isinstance(aggregation, keras.layers.Layer):
        return aggregation.__class__.from_config(aggregation.get_config())
    return aggregation


def molecule_network(
    num_atom_features,
    num_bond_features=None,
    aggregation="sum",
    aggregation_kwargs=None,
    readout_aggregation="sum",
    readout_aggregation_kwargs=None,
    hidden_units=32,
    message_units=None,
    num_layers=2,
    num_outputs=1,
    name="molecule_network",
):
    """Builds a network that predicts one vector per molecule.

    The atoms' features are embedded into `hidden_units`, then each of
    `num_layers` layers updates every atom as `h + Dense(AggregationConv(
    h, bonds))`: messages `Dense([h_atom, h_neighbour, bond])` (sigmoid
    for LAF, linear otherwise), aggregated with `aggregation`, and the
    atom updated from itself and the aggregate (LeakyReLU), then a linear
    dense layer and the residual sum. A sigmoid dense layer projects the
    atoms into [0, 1] (LAF's domain; the same for every readout, so the
    aggregation is the only difference), `readout_aggregation` pools each
    molecule's atoms, and a linear layer gives the outputs.

    The inputs are the disjoint-union batches of
    `keras_laf.datasets.MoleculeBatches` (or `MoleculeGraphs.batch`):
    with padded batches, the padding's atoms form their own molecule and
    the sample weights keep it out of the loss.

    Args:
        num_atom_features: int. Features per atom, e.g.
            `keras_laf.datasets.molecules.NUM_ATOM_FEATURES`.
        num_bond_features: int. Features per directed edge, e.g.
            `keras_laf.datasets.molecules.NUM_BOND_FEATURES`. Defaults to
            `None`: no bond features (and no `"edge_features"` input).
        aggregation: the neighbour aggregation: a name or list of names of
            `keras_laf.aggregations.resolve` (`"sum"`, `"mean"`, `"max"`,
            `"softmax"`, `"genagg"`, `"laf"`, ...) or an aggregation layer
            (`keras_laf.DegreeScalerAggregation(["mean", "max", "min",
            "std"], [...], degree_histogram=...)` for PNA), which each
            layer gets a copy of. Defaults to `"sum"`.
        aggregation_kwargs: dict. The arguments of an `aggregation` given
            by name, e.g. `{"units": 8}` for `"laf"`. Defaults to `None`:
            the name's defaults.
        readout_aggregation: the aggregation of the atoms of each
            molecule, the same kinds. Defaults to `"sum"`.
        readout_aggregation_kwargs: dict. The arguments of a
            `readout_aggregation` given by name. Defaults to `None`: the
            name's defaults.
        hidden_units: int. Atom state size. Defaults to `32`.
        message_units: int. Features of each message, the width that the
            neighbour aggregation aggregates. Defaults to `None`:
            `hidden_units`.
        num_layers: int. Message-passing layers. Defaults to `2`.
        num_outputs: int. Outputs per molecule. Defaults to `1`.
        name: str. The model's name. Defaults to `"molecule_network"`.

    Returns:
        An uncompiled `keras_laf.models.GraphModel` (whose `predict` gives
        one row per molecule, on a union or on `MoleculeBatches`) with
        inputs `{"node_features": (num_atoms, num_atom_features),
        "edge_source": (num_edges,), "edge_target": (num_edges,),
        "node_graph_ids": (num_atoms,), "nodes_per_graph":
        (num_molecules,)}` (int32 indices and counts)
        and, with bond features, `"edge_features": (num_edges,
        num_bond_features)`; output `{"graph_outputs": (num_molecules,
        num_outputs)}`.

    Example:

    >>> model = molecule_network(
    ...     num_atom_features=3, num_bond_features=2, aggregation="mean"
    ... )
    >>> inputs = keras_laf.datasets.disjoint_union(
    ...     [np.ones((3, 3)), np.ones((1, 3))],
    ...     [np.array([[0, 1], [1, 0]]), np.zeros((0, 2), "int32")],
    ...     edge_features=[np.ones((2, 2)), np.zeros((0, 2))],
    ...     pad=False,
    ... )
    >>> model.predict(inputs, verbose=0)["graph_outputs"].shape
    (2, 1)
    """
    num_atom_features = check_positive_int(
        "num_atom_features", num_atom_features
    )
    if num_bond_features is not None:
        check_positive_int("num_bond_features", num_bond_features)
    hidden_units = check_positive_int("hidden_units", hidden_units)
    num_layers = check_positive_int("num_layers", num_layers)
    num_outputs = check_positive_int("num_outputs", num_outputs)
    inputs = {
        "node_features": keras.Input(
            shape=(num_atom_features,), name="node_features"
        ),
        "edge_source": keras.Input(shape=(), dtype="int32", name="edge_source"),
        "edge_target": keras.Input(shape=(), dtype="int32", name="edge_target"),
        "node_graph_ids": keras.Input(
            shape=(), dtype="int32", name="node_graph_ids"
        ),
        # Its length is the number of molecules of the batch.
        "nodes_per_graph": keras.Input(
            shape=(), dtype="int32", name="nodes_per_graph"
        ),
    }
    bonds = None
    if num_bond_features is not None:
        inputs["edge_features"] = keras.Input(
            shape=(num_bond_features,), name="edge_features"
        )
        bonds = inputs["edge_features"]
    # (num_atoms, hidden_units)
    states = keras.layers.Dense(hidden_units, name="atom_embedding")(
        inputs["node_features"]
    )
    for index in range(num_layers):
        convolution = AggregationConv(
            hidden_units,
            aggregation=_copy(aggregation),
            message_units=message_units,
            aggregation_kwargs=aggregation_kwargs,
            name=f"convolution_{index + 1}",
        )
        updates = convolution(
            states, inputs["edge_source"], inputs["edge_target"], bonds
        )
        updates = keras.layers.Dense(hidden_units, name=f"update_{index + 1}")(
            updates
        )
        states = keras.layers.Add(name=f"residual_{index + 1}")(
            [states, updates]
        )
    # (num_atoms, hidden_units) in [0, 1]
    projected = keras.layers.Dense(
        hidden_units, activation="sigmoid", name="readout_projection"
    )(states)
    # (num_molecules, width)
    pooled = GraphReadout(
        _copy(readout_aggregation),
        aggregation_kwargs=readout_aggregation_kwargs,
        name="readout",
    )(
        projected,
        inputs["node_graph_ids"],
        nodes_per_graph=inputs["nodes_per_graph"],
    )
    outputs = keras.layers.Dense(num_outputs, name="graph_outputs")(pooled)
    return GraphModel(inputs, {"graph_outputs": outputs}, name=name)

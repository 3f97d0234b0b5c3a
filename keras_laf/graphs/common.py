"""What the graph layers share below their base classes: the checks of
their inputs (node features, edge indices, edge features) and dense
sub-layers with the layer's initializers.

The layers take graphs in the disjoint-union form described in
`keras_laf.graphs.message_passing`.
"""

import keras
from keras import ops

from keras_laf.core.sets import checked_indices
from keras_laf.core.validation import check_index_tensor
from keras_laf.core.validation import check_same_length
from keras_laf.core.validation import check_shape
from keras_laf.core.validation import clone_initializer


def check_node_shape(shape, layer, argument="node_features"):
    """Checks that `shape` is `(num_nodes, features)` and returns it."""
    return check_shape(layer, argument, shape, (2,), "(num_nodes, features)")


def check_edge_features_shape(shape, layer):
    """Checks that `shape` is `(num_edges, edge_features)` and returns it."""
    return check_shape(
        layer, "edge_features", shape, (2,), "(num_edges, edge_features)"
    )


def check_edges(
    node_features, edge_source, edge_target, layer, edge_features=None
):
    """Checks the node features, edge indices and optional edge features
    of a graph layer's call."""
    check_node_shape(node_features.shape, layer)
    check_index_tensor(layer, "edge_source", edge_source, "node")
    check_index_tensor(layer, "edge_target", edge_target, "node")
    check_same_length("edge_source", edge_source, "edge_target", edge_target)
    if edge_features is not None:
        check_edge_features_shape(edge_features.shape, layer)
        check_same_length(
            "edge_source", edge_source, "edge_features", edge_features
        )


def prepare_graph(node_features, edge_source, edge_target, dtype):
    """Casts the node features and checks the edge indices against them."""
    node_features = ops.cast(node_features, dtype)
    num_nodes = ops.shape(node_features)[0]
    source = checked_indices(edge_source, num_nodes, "edge_source", "nodes")
    target = checked_indices(edge_target, num_nodes, "edge_target", "nodes")
    return node_features, source, target, num_nodes


def dense_sublayer(layer, units, name, activation=None, use_bias=None):
    """A dense sub-layer with the bias and initializers of `layer`."""
    return keras.layers.Dense(
        units,
        activation=activation,
        use_bias=layer.use_bias if use_bias is None else use_bias,
        kernel_initializer=clone_initializer(layer.kernel_initializer),
        bias_initializer=clone_initializer(layer.bias_initializer),
        name=name,
        dtype=layer.dtype_policy,
    )

"""The message-passing template of the graph convolutions.

Graphs are given in the disjoint-union form: a batch of graphs is one
graph whose nodes are the nodes of all of them, stacked,

- `node_features` `(num_nodes, features)`,
- `edge_source`, `edge_target` int `(num_edges,)`: each directed edge
  sends a message from node `edge_source[i]` to node `edge_target[i]`
  (an undirected edge is two directed ones),
- `edge_features` `(num_edges, edge_features)`, optional: the features
  of each directed edge (a molecule's bonds),
- `node_graph_ids` int `(num_nodes,)`: the graph of each node, for the
  graph-level readout,
- `nodes_per_graph` int `(num_graphs,)`: the number of nodes of each
  graph, whose length gives the readout its number of graphs as a shape.

`keras_laf.datasets.disjoint_union` builds this form from lists of
graphs. Every tensor's leading dimension is its own count (nodes, edges,
graphs), so each may change from batch to batch.

`GraphConvolution` is the base every convolution subclasses, as PyTorch
Geometric's `MessagePassing` is: its call checks the graph and runs the
hooks `edges`, `message`, `aggregate` and `update`, and the edge features
pass through its call, build and output shapes, so a convolution is the
hooks it overrides. The layers compute with segment operations over as
many segments as there are nodes, a shape, so they run under `jax.jit`
and XLA; a compiled model compiles once per batch shape, which
`keras_laf.datasets.pad_graph_batch` keeps to a few buckets.
"""

import keras
from keras import ops

from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_positive_int
from keras_laf.graphs.base import GraphLayer
from keras_laf.graphs.common import check_edge_features_shape
from keras_laf.graphs.common import check_edges
from keras_laf.graphs.common import check_node_shape
from keras_laf.graphs.common import prepare_graph


class GraphConvolution(GraphLayer):
    """The base of the convolutions: node features and edge indices (and
    edge features) in, `output_features(features)` features per node out.

    A convolution is its few lines of difference, as PyTorch Geometric's
    `MessagePassing` subclasses are. The call checks the graph, then runs
    the hooks:

    - `edges(source, target, num_nodes)`: the edges messages travel
      along, the graph's by default (or with self-loops);
    - `message(node_features, source, target, edge_features, training)`:
      what each edge carries, `(num_edges, ...)`; by default its source's
      features;
    - `aggregate(messages, sets, training)`: the messages arriving at
      each node (`sets` groups them by target) aggregated with the
      aggregation held, `(num_nodes, width)`: the contract of
      `keras_laf.SetAggregation.aggregate`, values grouped by sets;
    - `update(aggregates, node_features, training)`: the node's new
      features, `(num_nodes, output_features(features))`.

    Subclasses implement `build_for_features(features, edge_features)`
    (the weights for `features` node features and `edge_features` edge
    features, `None` without them) and `update`, override the other hooks
    where they differ, and set `edge_features_input`: `"none"` (the
    default: edge features given are an error), `"optional"` or
    `"required"`.

    Args:
        units: int. Output features per node.
        aggregation, aggregation_kwargs: as for `GraphLayer`.
        activation: activation of the output.
        use_bias: bool. Whether the dense layers use biases.
        kernel_initializer: initializer of the dense kernels.
        bias_initializer: initializer of the biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        edge_source: int tensor `(num_edges,)`, the sending node of each
            edge, in `[0, num_nodes)`.
        edge_target: int tensor `(num_edges,)`, the receiving node.
        edge_features: float tensor `(num_edges, edge_features)`, for
            the convolutions whose messages take them.
        training: bool, passed to the aggregation and the hooks.
    """

    edge_features_input = "none"

    def __init__(
        self,
        units,
        aggregation="sum",
        aggregation_kwargs=None,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(aggregation, aggregation_kwargs, **kwargs)
        self.units = check_positive_int("units", units)
        self.activation = keras.activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        # LAF takes its elements in [0, 1]: the convolutions squash the
        # messages they give it, as MultiAggregation squashes its elements.
        self.squash_messages = self._aggregation.input_domain == "unit_interval"
        # Edge features per edge once built, None without them.
        self._num_edge_features = None

    def _check_edge_features(self, edge_features_shape):
        """Checks the edge features against `edge_features_input` and
        the build; their number of features, or None."""
        cls = type(self).__name__
        if edge_features_shape is None:
            if self.edge_features_input == "required":
                raise ValueError(
                    f"Layer '{self.name}' ({cls}) needs edge features: pass "
                    "`edge_features` (num_edges, edge_features) after "
                    "`edge_target`. Received: edge_features=None"
                )
            width = None
        elif self.edge_features_input == "none":
            raise ValueError(
                f"Layer '{self.name}' ({cls}) takes no edge features: its "
                "messages are computed from the nodes alone. Use a "
                "convolution whose messages take them (`keras_laf.GINEConv`, "
                "`keras_laf.AggregationConv`). Received: "
                f"edge_features.shape={tuple(edge_features_shape)}"
            )
        else:
            width = check_edge_features_shape(edge_features_shape, self)[-1]
        if self.built and width != self._num_edge_features:
            built = self._num_edge_features
            raise ValueError(
                f"Layer '{self.name}' ({cls}) was built for "
                f"{'no' if built is None else built} edge features per "
                "edge. Received: "
                + (
                    "edge_features=None"
                    if width is None
                    else f"edge_features.shape={tuple(edge_features_shape)}"
                )
            )
        return width

    def _check_inputs(self, node_features, edge_source, edge_target, edges):
        check_edges(node_features, edge_source, edge_target, self, edges)
        self._check_edge_features(None if edges is None else edges.shape)

    def call(
        self,
        node_features,
        edge_source,
        edge_target,
        edge_features=None,
        training=None,
    ):
        node_features = ops.cast(node_features, self.compute_dtype)
        aggregates = self.aggregate_neighbours(
            node_features, edge_source, edge_target, edge_features, training
        )
        return self.update(aggregates, node_features, training)

    def aggregate_neighbours(
        self,
        node_features,
        edge_source,
        edge_target,
        edge_features=None,
        training=None,
    ):
        """The aggregates of the messages arriving at each node, the
        layer's output before the update, from the call's arguments:
        `(num_nodes, ...)`, what `aggregate` gives."""
        self._check_inputs(
            node_features, edge_source, edge_target, edge_features
        )
        node_features, source, target, num_nodes = prepare_graph(
            node_features, edge_source, edge_target, self.compute_dtype
        )
        if edge_features is not None:
            edge_features = ops.cast(edge_features, self.compute_dtype)
        source, target = self.edges(source, target, num_nodes)
        messages = self.message(
            node_features, source, target, edge_features, training
        )
        return self.aggregate(
            messages, SegmentSets(target, num_nodes), training
        )

    def edges(self, source, target, num_nodes):
        """The edges the messages travel along: the graph's own."""
        return source, target

    def message(self, node_features, source, target, edge_features, training):
        """What each edge carries: its source's features, `(num_edges,
        features)`."""
        return ops.take(node_features, source, axis=0)

    def aggregate(self, values, sets, training=None):
        """The messages `(num_edges, features)` aggregated over `sets`,
        those arriving at each node: `(num_nodes, width)`, through
        `squash_inputs` into the aggregation's input domain."""
        if self.squash_messages:
            values = self._aggregating_layer().squash_inputs(values)
        return super().aggregate(values, sets, training)

    def update(self, aggregates, node_features, training):
        """The node's new features from its aggregate and its features
        `(num_nodes, features)`: `(num_nodes, output_features(features))`.
        """
        raise NotImplementedError

    def output_features(self, features):
        """Output features per node for `features` input features."""
        return self.units

    def build(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
        edge_features_shape=None,
    ):
        features = self.build_node_features(node_features_shape)
        edge_features = self._check_edge_features(edge_features_shape)
        self.build_for_features(features, edge_features)
        self._num_edge_features = edge_features

    def build_for_features(self, features, edge_features):
        """Creates the weights and sub-layers for `features` node features
        and `edge_features` edge features (None without them)."""
        raise NotImplementedError

    def compute_output_spec(
        self,
        node_features,
        edge_source,
        edge_target,
        edge_features=None,
        training=None,
    ):
        # Checks dtypes and ranks while a functional model is built.
        self._check_inputs(
            node_features, edge_source, edge_target, edge_features
        )
        return keras.KerasTensor(
            self.compute_output_shape(node_features.shape),
            dtype=self.compute_dtype,
        )

    def compute_output_shape(
        self,
        node_features_shape,
        edge_source_shape=None,
        edge_target_shape=None,
        edge_features_shape=None,
    ):
        shape = check_node_shape(node_features_shape, self)
        return (shape[0], self.output_features(shape[-1]))

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": keras.activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
        }

"""Graph readout: the nodes of each graph of a batch aggregated.

Graphs are given in the disjoint-union form of
`keras_laf.graphs.message_passing`, with `node_graph_ids` (the graph of
each node) and `nodes_per_graph` (whose length is the number of graphs).
"""

import keras
from keras import ops

from keras_laf.core import backend
from keras_laf.core.sets import SegmentSets
from keras_laf.core.sets import checked_indices
from keras_laf.core.sets import count_segments
from keras_laf.core.sets import is_traced
from keras_laf.core.validation import check_index_tensor
from keras_laf.core.validation import check_same_length
from keras_laf.graphs.base import GraphLayer
from keras_laf.graphs.common import check_node_shape


@keras.saving.register_keras_serializable(package="keras_laf")
class GraphReadout(GraphLayer):
    """Aggregates the nodes of each graph of a disjoint-union batch.

    The nodes that `node_graph_ids` assigns to each graph are aggregated by
    `aggregation`, given by name or as a layer (PyTorch Geometric's global
    pooling with an `Aggregation`): a segment aggregation with the graphs
    as segments. LAF takes values in [0, 1] (see `keras_laf.LAF`): put a
    sigmoid before it.

    The number of graphs is the length of `nodes_per_graph` where it is
    given (as `keras_laf.datasets.disjoint_union` gives it, and as the
    sizes of TF-GNN's `GraphTensor` or jraph's `n_node`): a shape, known
    when JAX traces the layer (`jax.jit`, `Model.fit`), so the layer runs
    on JAX in a model whose number of graphs changes from batch to batch.
    Without it the number of graphs is `max(node_graph_ids) + 1`, a value,
    which a JAX trace cannot take.

    Args:
        aggregation: str, list of str, or an aggregation layer. Any
            identifier of `keras_laf.aggregations.resolve`: `"laf"`, names or
            a preset of `FixedAggregation` aggregators, `"softmax"`,
            `"powermean"`, the poolings `"attention"`, `"set2set"`,
            `"gmt"`, `"gru"` and `"lstm"` (which pad the graphs' nodes
            first, on every backend), a user's registered name, or a list
            mixing them (e.g. `["laf", "max"]`); or a
            `keras_laf.SetAggregation` layer with a flat output, used as
            it is (`keras_laf.LAF(4, preset="closed_forms")`,
            `keras_laf.Set2Set(processing_steps=2)`, ...). Defaults to
            `"sum"`.
        aggregation_kwargs: dict. The arguments of an aggregation given
            by name, e.g. `{"units": 8, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults (9 LAF units).
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        node_features: float tensor `(num_nodes, features)`.
        node_graph_ids: int tensor `(num_nodes,)`, the graph of each node,
            in `[0, num_graphs)`; need not be sorted.
        num_graphs: optional int or scalar int tensor, the number of
            graphs. Graphs without nodes get the aggregate of the empty
            set (0 for fixed aggregators).
        nodes_per_graph: optional int tensor `(num_graphs,)`, the number
            of nodes of each graph; only its length is read. Pass it or
            `num_graphs`, not both; with neither, `num_graphs` is
            `max(node_graph_ids) + 1`.
        training: bool, passed to an aggregation that takes it.

        Float ids raise a ValueError; out-of-range ids raise a ValueError
        in eager calls and `tf.errors.InvalidArgumentError` in traced
        TensorFlow calls (JAX cannot check inside `jax.jit`, so check them
        before: `disjoint_union` does).

    Input shape:
        `(num_nodes, features)`, with `node_graph_ids` `(num_nodes,)` and
        `nodes_per_graph` `(num_graphs,)`.

    Output shape:
        `(num_graphs, width)`, the aggregation's width: `features *
        num_aggregates` for those that aggregate each feature alone, the
        aggregates of a feature adjacent.

    Example:

    >>> readout = GraphReadout(["sum", "max"])
    >>> outputs = readout(np.array([[1.0], [2.0], [5.0]]), np.array([0, 0, 1]))
    >>> keras.ops.convert_to_numpy(outputs)
    array([[3., 2.],
           [5., 5.]], dtype=float32)

    In a model, `nodes_per_graph` gives the number of graphs as a shape:

    >>> features = keras.Input((1,))
    >>> graph_ids = keras.Input((), dtype="int32")
    >>> nodes_per_graph = keras.Input((), dtype="int32")
    >>> means = GraphReadout("mean")(
    ...     features, graph_ids, nodes_per_graph=nodes_per_graph
    ... )
    >>> model = keras.Model([features, graph_ids, nodes_per_graph], means)
    >>> keras.ops.convert_to_numpy(
    ...     model([np.array([[1.0], [2.0], [5.0]]), np.array([0, 0, 1]),
    ...            np.array([2, 1])])
    ... )
    array([[1.5],
           [5. ]], dtype=float32)
    """

    def __init__(self, aggregation="sum", aggregation_kwargs=None, **kwargs):
        super().__init__(aggregation, aggregation_kwargs, **kwargs)

    def build(
        self,
        node_features_shape,
        node_graph_ids_shape=None,
        nodes_per_graph_shape=None,
    ):
        self.build_aggregation(self.build_node_features(node_features_shape))

    def _check_inputs(
        self, node_features, node_graph_ids, num_graphs, nodes_per_graph
    ):
        check_node_shape(node_features.shape, self)
        check_index_tensor(self, "node_graph_ids", node_graph_ids, "graph")
        check_same_length(
            "node_graph_ids", node_graph_ids, "node_features", node_features
        )
        if nodes_per_graph is None:
            return
        if num_graphs is not None:
            raise ValueError(
                f"Layer '{self.name}' (GraphReadout) takes the number of "
                "graphs from `num_graphs` or from the length of "
                f"`nodes_per_graph`, not both. Received: num_graphs="
                f"{num_graphs} and nodes_per_graph.shape="
                f"{tuple(nodes_per_graph.shape)}"
            )
        dtype = keras.backend.standardize_dtype(nodes_per_graph.dtype)
        if "int" not in dtype or len(nodes_per_graph.shape) != 1:
            raise ValueError(
                f"Layer '{self.name}' (GraphReadout) expects "
                "`nodes_per_graph` as an int tensor (num_graphs,), the "
                "number of nodes of each graph. Received: "
                f"nodes_per_graph.dtype={dtype}, "
                f"nodes_per_graph.shape={tuple(nodes_per_graph.shape)}"
            )

    def call(
        self,
        node_features,
        node_graph_ids,
        num_graphs=None,
        nodes_per_graph=None,
        training=None,
    ):
        self._check_inputs(
            node_features, node_graph_ids, num_graphs, nodes_per_graph
        )
        if nodes_per_graph is not None:
            # A static shape where JAX traces, a scalar tensor where
            # TensorFlow does with an unknown number of graphs.
            num_graphs = ops.shape(nodes_per_graph)[0]
        elif num_graphs is None:
            if backend.needs_static_shapes() and is_traced(node_graph_ids):
                raise ValueError(
                    f"Layer '{self.name}' (GraphReadout) needs the number of "
                    "graphs as a shape inside a JAX trace (`jax.jit`, "
                    "`Model.fit`): pass `nodes_per_graph` (num_graphs,), as "
                    "`keras_laf.datasets.disjoint_union` gives it, or "
                    "`num_graphs` as an int. Received: num_graphs=None and "
                    "nodes_per_graph=None"
                )
            num_graphs = count_segments(node_graph_ids, "num_graphs")
        graph_ids = checked_indices(
            node_graph_ids, num_graphs, "node_graph_ids", "graphs"
        )
        # (num_graphs, width)
        return self.aggregate(
            ops.cast(node_features, self.compute_dtype),
            SegmentSets(graph_ids, num_graphs),
            training,
        )

    def compute_output_spec(
        self,
        node_features,
        node_graph_ids,
        num_graphs=None,
        nodes_per_graph=None,
        training=None,
    ):
        self._check_inputs(
            node_features, node_graph_ids, num_graphs, nodes_per_graph
        )
        shape = self.compute_output_shape(
            node_features.shape,
            node_graph_ids.shape,
            None if nodes_per_graph is None else nodes_per_graph.shape,
        )
        return keras.KerasTensor(shape, dtype=self.compute_dtype)

    def compute_output_shape(
        self,
        node_features_shape,
        node_graph_ids_shape=None,
        nodes_per_graph_shape=None,
    ):
        node_shape = check_node_shape(node_features_shape, self)
        num_graphs = (
            None if nodes_per_graph_shape is None else nodes_per_graph_shape[0]
        )
        return (num_graphs, self.aggregation_width(node_shape[-1]))

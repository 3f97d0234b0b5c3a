"""`GraphModel`: a functional model of graph batches whose `predict`
gives one row per graph and whose batches are checked against it."""

import warnings

import keras

from keras_laf.core import backend
from keras_laf.datasets.graph_batches import GraphBatches
from keras_laf.datasets.graph_batches import check_graph_model
from keras_laf.datasets.graph_batches import pad_graph_batch


class _OneBatch(keras.utils.PyDataset):
    # One graph batch as the one batch of a data set: `Model.predict`
    # would split a dict of arrays into batches of rows, which the arrays
    # of a union (nodes, edges, graphs) do not share.

    def __init__(self, inputs):
        super().__init__()
        self.inputs = inputs

    def __len__(self):
        return 1

    def __getitem__(self, index):
        return self.inputs


def _first_batch(data):
    # The batch `check_graph_model` checks, or None for data it does not
    # know (a `tf.data.Dataset`, arrays).
    if isinstance(data, GraphBatches):
        return data[0]
    if isinstance(data, dict):
        return data
    return None


def _padded_batches(data):
    # Whether `data` comes in a few padded shapes, compiled once each.
    return isinstance(data, GraphBatches) and bool(data.pad)


@keras.saving.register_keras_serializable(package="keras_laf")
class GraphModel(keras.Model):
    """A functional model of graphs in disjoint-union form.

    Built as `keras.Model(inputs, outputs)` is, from the inputs of
    `keras_laf.datasets.disjoint_union` (`"node_features"`,
    `"edge_source"`, `"edge_target"`, `"node_graph_ids"`,
    `"nodes_per_graph"` and optionally `"edge_features"`) and a dict of
    outputs named `"node_outputs"` and/or `"graph_outputs"`; the graph
    builders of `keras_laf.models` return one. Two things differ from a
    plain model:

    - `predict` takes one union (the dict of `disjoint_union` or
      `keras_laf.datasets.MoleculeGraphs.batch`, or one with PyTorch
      Geometric's `"edge_index"` of shape (2, E) in place of
      `"edge_source"` and `"edge_target"`, as `pad_graph_batch` takes it;
      a plain model's `predict` would cut a union into batches of 32 rows
      of every array) and
      `keras_laf.datasets.GraphBatches` (and `MoleculeBatches`), and gives
      one row per node and per graph, in the graphs' order, without the
      padding's rows. A union is padded to a bucket (`pad_graph_batch`)
      first, so that on JAX unions of similar sizes share a compilation.
    - `fit`, `evaluate` and `predict` check the first graph batch against
      the model (`keras_laf.datasets.check_graph_model`): an input the
      batches hold and the model does not declare, or one it declares and
      they do not hold, and a target the model has no output of, are
      errors that name them.
    - On TensorFlow, `compile(jit_compile="auto")` (the default) compiles
      the steps of `fit`, `evaluate` and `predict` with XLA on a CPU too
      when they get padded batches (`GraphBatches` with its default
      `pad=True`, or a union given to `predict`), where Keras's `"auto"`
      uses XLA on a GPU only. Padded batches come in a few bucket shapes,
      so XLA compiles a few programs; batches of any other kind (a
      `tf.data.Dataset`, `GraphBatches(pad=False)`) and models under a
      `tf.distribute` strategy of several replicas keep Keras's
      choice. A model whose layers do not compile with XLA (the
      aggregations that pad segments into sequences) runs without it;
      `jit_compile=False` turns it off.

    Example:

    >>> inputs = {
    ...     "node_features": keras.Input(shape=(2,), name="node_features"),
    ...     **{
    ...         name: keras.Input(shape=(), dtype="int32", name=name)
    ...         for name in ("edge_source", "edge_target", "node_graph_ids",
    ...                      "nodes_per_graph")
    ...     },
    ... }
    >>> pooled = keras_laf.GraphReadout("sum")(
    ...     inputs["node_features"],
    ...     inputs["node_graph_ids"],
    ...     nodes_per_graph=inputs["nodes_per_graph"],
    ... )
    >>> model = GraphModel(inputs, {"graph_outputs": pooled})
    >>> union = keras_laf.datasets.disjoint_union(
    ...     [np.ones((3, 2)), np.ones((1, 2))],
    ...     [np.array([[0, 1]]), np.zeros((0, 2), "int32")],
    ...     pad=False,
    ... )
    >>> model.predict(union, verbose=0)["graph_outputs"]
    array([[3., 3.],
           [1., 1.]], dtype=float32)
    """

    def compile(self, *args, jit_compile="auto", **kwargs):
        super().compile(*args, jit_compile=jit_compile, **kwargs)
        # Not under a `tf.distribute` strategy of several replicas, where
        # a batch cut between them must meet the graph layers' index
        # checks, which XLA skips.
        self._xla_for_padded_batches = (
            jit_compile == "auto"
            and backend.jit_compile_means_xla()
            and not self.jit_compile
            and self.distribute_strategy.num_replicas_in_sync == 1
        )

    def _compile_for(self, padded, steps):
        # XLA for padded batches on TensorFlow (see the class docstring):
        # the step functions `steps` are built again for the other choice.
        # Only the caller's own: `fit` runs `evaluate` on its validation
        # data between the epochs, with its training step still in use.
        if not getattr(self, "_xla_for_padded_batches", False):
            return
        if padded == self.jit_compile:
            return
        with warnings.catch_warnings():
            warnings.filterwarnings(
                "ignore", message="Model doesn't support `jit_compile=True`"
            )
            self.jit_compile = padded
        if self.jit_compile != padded:
            # A layer that XLA cannot compile: Keras's choice stays.
            self._xla_for_padded_batches = False
            return
        for step in steps:
            setattr(self, step, None)

    def fit(self, x=None, *args, **kwargs):
        if (batch := _first_batch(x)) is not None:
            check_graph_model(self, batch)
        self._compile_for(
            _padded_batches(x), ("train_function", "test_function")
        )
        return super().fit(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        if (batch := _first_batch(x)) is not None:
            check_graph_model(self, batch)
        self._compile_for(_padded_batches(x), ("test_function",))
        return super().evaluate(x, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        batch = _first_batch(x)
        # A union is padded below.
        self._compile_for(
            _padded_batches(x) or isinstance(x, dict), ("predict_function",)
        )
        if batch is None:
            return super().predict(x, *args, **kwargs)
        if isinstance(x, GraphBatches):
            # Only the inputs: predictions need no output for a target.
            check_graph_model(
                self, batch if isinstance(batch, dict) else batch[0]
            )
            return x.unpad(super().predict(x, *args, **kwargs))
        # Padding first: it also turns an `"edge_index"` into the
        # `"edge_source"` and `"edge_target"` that the model declares.
        padded, _, _ = pad_graph_batch(x)
        check_graph_model(self, padded)
        predictions = super().predict(_OneBatch(padded), *args, **kwargs)
        # The padding's nodes and graphs come after the union's own.
        rows = {
            "node_outputs": len(x["node_features"]),
            "graph_outputs": len(x["nodes_per_graph"]),
        }
        return {
            name: value[: rows[name]] for name, value in predictions.items()
        }

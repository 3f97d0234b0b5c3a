"""PNA's degree scalers around any aggregation: `DegreeScalerAggregation`.

The scalers of Corso et al. ("Principal Neighbourhood Aggregation for
Graph Nets", NeurIPS 2020) multiply the aggregate of a set by a function
of its size (a node's in-degree, in a graph), normalised by statistics of
the training data; `degree_histogram` counts those from the training
graphs, as PyTorch Geometric's `PNAConv.get_degree_histogram` does.
"""

import keras
import numpy as np
from keras import ops

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import held_kwargs
from keras_laf.aggregations.registry import resolve
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int

SCALER_NAMES = (
    "identity",
    "amplification",
    "attenuation",
    "linear",
    "inverse_linear",
)
# The scalers normalised by the mean of log(d + 1), and by the mean d.
_LOG_SCALERS = ("amplification", "attenuation")
_LINEAR_SCALERS = ("linear", "inverse_linear")


def degree_histogram(edge_target, num_nodes):
    """Counts the nodes of each in-degree: PNA's degree statistics.

    The statistics of `DegreeScalerAggregation` come from the training
    graphs: pass their disjoint union (`keras_laf.datasets.
    disjoint_union`), whose `edge_target` holds the receiving node of every
    directed edge.

    Args:
        edge_target: int array `(num_edges,)`, the receiving node of each
            edge, in `[0, num_nodes)`.
        num_nodes: int, the number of nodes, those without incoming edges
            included.

    Returns:
        int64 NumPy array `(max_degree + 1,)`: entry d is the number of
        nodes with d incoming edges.

    Example:

    >>> # A path 0 - 1 - 2, each edge in both directions, and a lone node 3.
    >>> degree_histogram(np.array([1, 0, 2, 1]), num_nodes=4)
    array([1, 2, 1])
    """
    num_nodes = check_positive_int("num_nodes", num_nodes)
    targets = np.asarray(keras.ops.convert_to_numpy(edge_target))
    if targets.ndim != 1 or (
        targets.size and not np.issubdtype(targets.dtype, np.integer)
    ):
        raise ValueError(
            "`edge_target` must be a rank-1 integer array, the receiving "
            f"node of each edge. Received: edge_target.dtype={targets.dtype}, "
            f"edge_target.shape={targets.shape}"
        )
    if targets.size and (targets.min() < 0 or targets.max() >= num_nodes):
        raise ValueError(
            f"`edge_target` must hold node indices in [0, {num_nodes}). "
            f"Received indices in [{targets.min()}, {targets.max()}]"
        )
    in_degrees = np.bincount(targets.astype(np.int64), minlength=num_nodes)
    return np.bincount(in_degrees).astype(np.int64)


def _averages(histogram):
    """The mean degree and the mean of log(degree + 1) of a histogram."""
    counts = np.asarray(histogram)
    if (
        counts.ndim != 1
        or counts.size == 0
        or not np.issubdtype(counts.dtype, np.number)
        or np.any(counts < 0)
        or not np.all(np.isfinite(counts))
        or counts.sum() <= 0
    ):
        raise ValueError(
            "`degree_histogram` must be a non-empty rank-1 array of "
            "non-negative node counts, entry d the number of nodes of "
            "in-degree d (`keras_laf.degree_histogram` computes it). "
            f"Received: degree_histogram={histogram!r}"
        )
    degrees = np.arange(counts.size, dtype="float64")
    total = counts.sum()
    return (
        float((degrees * counts).sum() / total),
        float((np.log(degrees + 1.0) * counts).sum() / total),
    )


@keras.saving.register_keras_serializable(package="keras_laf")
class DegreeScalerAggregation(SetPooling):
    """An aggregation whose output is scaled by the size of each set.

    The scalers of PNA (Corso et al., "Principal Neighbourhood Aggregation
    for Graph Nets", NeurIPS 2020) around any aggregation, as PyTorch
    Geometric's `DegreeScalerAggregation`: the aggregate of a set of d
    elements (a node of in-degree d) is multiplied by 1 (`"identity"`),
    `log(d + 1) / delta` (`"amplification"`), `delta / log(d + 1)`
    (`"attenuation"`), `d / average_degree` (`"linear"`) or
    `average_degree / d` (`"inverse_linear"`), with d taken as at least 1,
    and the scaled aggregates are concatenated, one block per scaler.
    `delta` is the mean of `log(d + 1)` over the training nodes and
    `average_degree` their mean degree: both come from `degree_histogram`
    (see `keras_laf.degree_histogram`), or are given.

    Args:
        aggregation: the aggregation scaled: a name or list of names of
            `keras_laf.aggregations.get`, or an aggregation layer with a
            flat output (`keras_laf.LAF(4)`, `SoftmaxAggregation`, ...).
        scalers: str or list of str from `"identity"`, `"amplification"`,
            `"attenuation"`, `"linear"`, `"inverse_linear"`.
        aggregation_kwargs: optional dict, the arguments of an aggregation
            given by name (e.g. `{"units": 4}` for `"laf"`). Defaults to
            `None`: the name's defaults.
        degree_histogram: optional array `(max_degree + 1,)`, the number of
            training nodes of each in-degree. Gives both averages.
        average_log_degree: optional positive float, delta, when no
            histogram is given.
        average_degree: optional positive float, the mean degree of the
            linear scalers, when no histogram is given. Defaults to
            `exp(average_log_degree) - 1`, the degree whose `log(d + 1)` is
            delta.
        train_average_log_degree: bool. Whether delta is a trainable
            weight (stored as `log(delta)`, so it stays positive),
            initialised from the statistics. Defaults to `False`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.
        training: bool, passed to an aggregation that takes it.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, len(scalers) * width)`, `width` that of `aggregation`.

    Example:

    >>> histogram = degree_histogram(np.array([1, 0, 2, 1]), num_nodes=3)
    >>> layer = DegreeScalerAggregation(
    ...     "sum", ["identity", "linear"], degree_histogram=histogram
    ... )
    >>> layer.average_degree
    1.3333333333333333
    >>> outputs = layer(np.array([[[1.0], [3.0]]], "float32"))
    >>> keras.ops.convert_to_numpy(outputs)
    array([[4., 6.]], dtype=float32)
    """

    def __init__(
        self,
        aggregation,
        scalers,
        aggregation_kwargs=None,
        degree_histogram=None,
        average_log_degree=None,
        average_degree=None,
        train_average_log_degree=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # `aggregation` is what was passed (a name, a list or the layer),
        # `_aggregation` the layer in every case.
        self._aggregation = resolve(
            aggregation,
            **held_kwargs(
                aggregation,
                aggregation_kwargs,
                "aggregation",
                self.dtype_policy,
            ),
        )
        self.aggregation = aggregation
        self.aggregation_kwargs = dict(aggregation_kwargs or {})
        if isinstance(scalers, str):
            scalers = [scalers]
        if not isinstance(scalers, (list, tuple)):
            scalers = [scalers]
        scalers = list(scalers)
        if not scalers or any(name not in SCALER_NAMES for name in scalers):
            raise ValueError(
                "`scalers` must be a name or a non-empty list of names from "
                f"{list(SCALER_NAMES)}. Received: scalers={scalers!r}"
            )
        self.scalers = scalers
        if degree_histogram is not None:
            if average_log_degree is not None or average_degree is not None:
                raise ValueError(
                    "Give the degree statistics as `degree_histogram` or as "
                    "`average_log_degree` (and `average_degree`), not both. "
                    f"Received: average_log_degree={average_log_degree!r}, "
                    f"average_degree={average_degree!r} with a histogram"
                )
            average_degree, average_log_degree = _averages(degree_histogram)
            if average_log_degree <= 0:
                raise ValueError(
                    "`degree_histogram` counts only nodes without incoming "
                    "edges, whose mean log(degree + 1) is 0: the scalers "
                    "need training graphs with edges. Received: "
                    f"degree_histogram={degree_histogram!r}"
                )
        elif average_log_degree is not None:
            average_log_degree = check_number(
                "average_log_degree", average_log_degree
            )
            if average_log_degree <= 0:
                raise ValueError(
                    "`average_log_degree` expected a positive number. "
                    f"Received: average_log_degree={average_log_degree!r}"
                )
            if average_degree is None:
                average_degree = float(np.expm1(average_log_degree))
            average_degree = check_number("average_degree", average_degree)
            if average_degree <= 0:
                raise ValueError(
                    "`average_degree` expected a positive number. "
                    f"Received: average_degree={average_degree!r}"
                )
        elif set(scalers) != {"identity"} or average_degree is not None:
            raise ValueError(
                f"The scalers {scalers} need the degree statistics of the "
                "training graphs: pass `degree_histogram=keras_laf."
                "degree_histogram(edge_target, num_nodes)` of their disjoint "
                "union, or `average_log_degree`. Received: "
                f"degree_histogram=None, average_log_degree=None, "
                f"average_degree={average_degree!r}"
            )
        self.average_log_degree = average_log_degree
        self.average_degree = average_degree
        train_average_log_degree = check_bool(
            "train_average_log_degree", train_average_log_degree
        )
        if train_average_log_degree and average_log_degree is None:
            raise ValueError(
                "`train_average_log_degree=True` learns delta from its "
                "initial value: pass `degree_histogram` or "
                "`average_log_degree`."
            )
        self.train_average_log_degree = train_average_log_degree
        self._check_flat_output()

    def _check_flat_output(self):
        shape = self._aggregation.compute_output_shape((None, None, 1))
        if len(shape) != 2:
            raise ValueError(
                "`DegreeScalerAggregation` scales flat aggregates "
                f"(num_sets, width). Received: '{self._aggregation.name}' "
                f"with an output of shape {shape}; create it with "
                "`flatten=True`"
            )

    def aggregation_layer(self):
        """The aggregation layer whose outputs are scaled (a method, as
        `keras_laf.GraphLayer.aggregation_layer`)."""
        return self._aggregation

    @property
    def input_domain(self):
        # The elements go to the aggregation unchanged.
        return self._aggregation.input_domain

    def _width(self, features):
        return self._aggregation.output_width(features)

    def build(self, input_shape):
        super().build(input_shape)
        if not self._aggregation.built:
            self._aggregation.build((None, None, input_shape[-1]))
        if self.train_average_log_degree:
            self.log_average_log_degree = self.add_weight(
                name="log_average_log_degree",
                shape=(),
                initializer=keras.initializers.Constant(
                    np.log(self.average_log_degree)
                ),
            )

    def output_width(self, features):
        return len(self.scalers) * self._width(features)

    def scale(self, aggregates, sizes):
        """Multiplies aggregates by every scaler of their sets' sizes.

        Args:
            aggregates: `(num_sets, width)`.
            sizes: `(num_sets,)`, the number of elements of each set (the
                in-degree of each node).

        Returns:
            `(num_sets, len(scalers) * width)`, one block per scaler.
        """
        # (num_sets, 1); sizes below 1 count as 1, keeping attenuation
        # finite for empty sets (nodes without incoming edges).
        degrees = ops.maximum(ops.cast(sizes, "float32"), 1.0)[:, None]
        log_degrees = ops.log(degrees + 1.0)
        delta = self.average_log_degree
        if self.train_average_log_degree:
            delta = ops.exp(ops.cast(self.log_average_log_degree, "float32"))
        factors = {
            "identity": None,
            "amplification": lambda: log_degrees / delta,
            "attenuation": lambda: delta / log_degrees,
            "linear": lambda: degrees / self.average_degree,
            "inverse_linear": lambda: self.average_degree / degrees,
        }
        blocks = []
        for name in self.scalers:
            if factors[name] is None:
                blocks.append(aggregates)
            else:
                factor = ops.cast(factors[name](), aggregates.dtype)
                blocks.append(aggregates * factor)
        if len(blocks) == 1:
            return blocks[0]
        return ops.concatenate(blocks, axis=-1)

    def pool(self, values, sets, training=None):
        aggregates = self._aggregation.aggregate_sets(
            values, sets, training=training
        )
        aggregates = ops.cast(aggregates, self.compute_dtype)
        return self.scale(aggregates, sets.sizes())

    def get_config(self):
        aggregation = self.aggregation
        if isinstance(aggregation, keras.layers.Layer):
            aggregation = keras.saving.serialize_keras_object(aggregation)
        return {
            **super().get_config(),
            "aggregation": aggregation,
            "aggregation_kwargs": dict(self.aggregation_kwargs),
            "scalers": self.scalers,
            "average_log_degree": self.average_log_degree,
            "average_degree": self.average_degree,
            "train_average_log_degree": self.train_average_log_degree,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config["aggregation"], dict):
            config["aggregation"] = keras.saving.deserialize_keras_object(
                config["aggregation"]
            )
        return cls(**config)

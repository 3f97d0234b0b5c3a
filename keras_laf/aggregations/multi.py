"""Several aggregations of the same sets, combined: `MultiAggregation`."""

import keras
from keras import ops

from keras_laf.aggregations.base import SetAggregation
from keras_laf.aggregations.fixed import FixedAggregation
from keras_laf.aggregations.fixed import fixed_aggregates
from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import held_kwargs
from keras_laf.aggregations.registry import register
from keras_laf.aggregations.registry import resolve
from keras_laf.core.validation import check_positive_int

MODES = ("cat", "proj", "sum", "mean", "max", "min")
_ELEMENTWISE = {"sum": ops.sum, "mean": ops.mean, "max": ops.max}


def _checked_members_kwargs(aggregations_kwargs, num_members):
    """The arguments of each member of a list, one dict each (empty ones
    for None), or a ValueError naming what was received."""
    if aggregations_kwargs is None:
        return [{}] * num_members
    if not (
        isinstance(aggregations_kwargs, (list, tuple))
        and len(aggregations_kwargs) == num_members
        and all(isinstance(kwargs, dict) for kwargs in aggregations_kwargs)
    ):
        raise ValueError(
            "`aggregations_kwargs` must be a list of dicts, one per "
            f"aggregation ({num_members}). Received: "
            f"aggregations_kwargs={aggregations_kwargs!r}"
        )
    return [dict(kwargs) for kwargs in aggregations_kwargs]


def _resolved_members(identifiers, members_kwargs, dtype):
    # Each member through `resolve`, named after its place.
    return [
        resolve(
            identifier,
            **held_kwargs(identifier, kwargs, f"aggregation_{index}", dtype),
        )
        for index, (identifier, kwargs) in enumerate(
            zip(identifiers, members_kwargs, strict=True)
        )
    ]


@register("multi")
class MultiAggregation(SetPooling):
    """Aggregates each set with several aggregations and combines them.

    Each aggregation, given by name (anything `keras_laf.aggregations.get`
    knows, `"laf"` included) or as a layer, aggregates the same sets; the
    outputs are concatenated (`"cat"`), concatenated and projected by a
    `Dense` layer to `units` (`"proj"`), or combined elementwise (`"sum"`,
    `"mean"`, `"max"`, `"min"`; their widths must then agree), as in PyTorch
    Geometric's `MultiAggregation` (Corso et al., "Principal Neighbourhood
    Aggregation for Graph Nets", NeurIPS 2020, combine aggregators so).

    LAF takes its elements in [0, 1] (its `input_domain`): the
    aggregations that do get `laf_activation(x)`, a sigmoid by default, as
    the model builders give LAF, while the others get the elements as they
    are (`keras_laf.SetAggregation.squash_inputs`).

    Args:
        aggregations: a non-empty list of aggregation identifiers of
            `keras_laf.aggregations.get` (e.g. `["laf", "max"]`, a user's
            registered name) or aggregation layers (`keras_laf.
            SetAggregation` subclasses, such as `keras_laf.LAF(4)`).
        aggregations_kwargs: optional list of dicts, one per aggregation:
            the arguments of those given by name, as PyTorch Geometric's
            `aggrs_kwargs` (e.g. `[{"units": 4}, {}]`). Defaults to
            `None`: the names' own defaults.
        mode: str. How the outputs are combined: `"cat"`, `"proj"`,
            `"sum"`, `"mean"`, `"max"` or `"min"`. Defaults to `"cat"`.
        units: int. Width of the projection of `"proj"`; only for that
            mode. Defaults to `None`.
        laf_activation: activation applied to the elements given to the
            aggregations that expect them in [0, 1] (LAF); `None` gives
            them the elements unchanged. Defaults to `"sigmoid"`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.
        training: bool, passed to the aggregations that take it.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, width)`: the sum of the aggregations' widths for
        `"cat"`, `units` for `"proj"`, their common width otherwise.

    Example:

    >>> layer = MultiAggregation(["sum", "max"])
    >>> outputs = layer(np.array([[[1.0], [3.0]]], "float32"))
    >>> keras.ops.convert_to_numpy(outputs)
    array([[4., 3.]], dtype=float32)
    >>> tuple(MultiAggregation(["laf", "max"])(np.random.rand(2, 5, 3)).shape)
    (2, 30)
    """

    def __init__(
        self,
        aggregations,
        aggregations_kwargs=None,
        mode="cat",
        units=None,
        laf_activation="sigmoid",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(aggregations, (str, SetAggregation)) or not (
            isinstance(aggregations, (list, tuple)) and aggregations
        ):
            raise ValueError(
                "`aggregations` must be a non-empty list of aggregation "
                "names or layers, e.g. ['laf', 'max']. Received: "
                f"aggregations={aggregations!r}"
            )
        if mode not in MODES:
            raise ValueError(
                f"`mode` must be one of {list(MODES)}. Received: mode={mode!r}"
            )
        if mode == "proj":
            units = check_positive_int("units", units)
        elif units is not None:
            raise ValueError(
                "`units` is the width of the projection of mode='proj'. "
                f"Received: units={units!r} with mode={mode!r}"
            )
        self.identifiers = list(aggregations)
        self.aggregations_kwargs = _checked_members_kwargs(
            aggregations_kwargs, len(self.identifiers)
        )
        self.members = _resolved_members(
            self.identifiers, self.aggregations_kwargs, self.dtype_policy
        )
        self.mode = mode
        self.units = units
        self.laf_activation = (
            None
            if laf_activation is None
            else keras.activations.get(laf_activation)
        )
        if mode == "proj":
            self.projection = keras.layers.Dense(
                units, name="projection", dtype=self.dtype_policy
            )

    @property
    def input_domain(self):
        # The members' elements are squashed here, unless `laf_activation`
        # is None: then the caller maps them into [0, 1] for all.
        if self.laf_activation is None and any(
            member.input_domain == "unit_interval" for member in self.members
        ):
            return "unit_interval"
        return "real"

    def _widths(self, features):
        shape = (None, None, features)
        widths = []
        for index, member in enumerate(self.members):
            output_shape = member.compute_output_shape(shape)
            if len(output_shape) != 2:
                raise ValueError(
                    f"Layer '{self.name}' (MultiAggregation) needs "
                    "aggregations with flat outputs (num_sets, width). "
                    f"Received: an output of shape {output_shape} from "
                    f"'{member.name}' at index {index}; create it with "
                    "`flatten=True`"
                )
            widths.append(output_shape[-1])
        return widths

    def build(self, input_shape):
        super().build(input_shape)
        for member in self.members:
            if not member.built:
                member.build((None, None, input_shape[-1]))
        widths = self._widths(input_shape[-1])
        if self.mode in ("cat", "proj"):
            if self.mode == "proj":
                self.projection.build((None, sum(widths)))
        elif len(set(widths)) != 1:
            raise ValueError(
                f"Layer '{self.name}' (MultiAggregation) with "
                f"mode={self.mode!r} combines outputs elementwise, so they "
                "must have one width; use mode='cat' or 'proj' otherwise. "
                f"Received widths {widths} for "
                f"{[member.name for member in self.members]}"
            )

    def output_width(self, features):
        widths = self._widths(features)
        if self.mode == "cat":
            return sum(widths)
        if self.mode == "proj":
            return self.units
        return widths[0]

    def _fused_groups(self):
        """The names that the fixed members (`FixedAggregation`) of each
        epsilon and dtype aggregate, together: `{(epsilon, dtype):
        names}`. Each group's aggregates are computed in one pass."""
        groups = {}
        for member in self.members:
            if type(member) is FixedAggregation:
                key = (member.epsilon, member.compute_dtype)
                groups.setdefault(key, set()).update(member.aggregators)
        return groups

    def pool(self, values, sets, training=None):
        groups = self._fused_groups()
        fused = {}
        outputs = []
        for member in self.members:
            inputs = values
            if self.laf_activation is not None:
                inputs = member.squash_inputs(values, self.laf_activation)
            if type(member) is FixedAggregation:
                key = (member.epsilon, member.compute_dtype)
                if key not in fused:
                    fused[key] = fixed_aggregates(
                        ops.cast(inputs, member.compute_dtype),
                        sets,
                        groups[key],
                        member.epsilon,
                    )
                # (num_sets, features * num_aggregates), as the member's.
                output = ops.reshape(
                    member.stack(fused[key]),
                    (-1, values.shape[-1] * member.num_aggregates),
                )
            else:
                output = member.aggregate_sets(inputs, sets, training=training)
            # (num_sets, width)
            outputs.append(ops.cast(output, self.compute_dtype))
        if self.mode in ("cat", "proj"):
            combined = ops.concatenate(outputs, axis=-1)
            if self.mode == "proj":
                combined = self.projection(combined)
            return combined
        stacked = ops.stack(outputs, axis=0)
        if self.mode == "min":
            return -ops.max(-stacked, axis=0)
        return _ELEMENTWISE[self.mode](stacked, axis=0)

    @classmethod
    def from_list(cls, aggregations, aggregations_kwargs=None, **kwargs):
        """The layer `keras_laf.aggregations.resolve` makes of a list: its
        members resolved first and held as layers, as the graph layers'
        and builders' models saved before keep their weights."""
        members_kwargs = _checked_members_kwargs(
            aggregations_kwargs, len(aggregations)
        )
        members = _resolved_members(
            aggregations, members_kwargs, kwargs.get("dtype")
        )
        return cls(members, **kwargs)

    def get_config(self):
        return {
            **super().get_config(),
            "aggregations": [
                keras.saving.serialize_keras_object(member)
                if isinstance(identifier, keras.layers.Layer)
                else identifier
                for identifier, member in zip(
                    self.identifiers, self.members, strict=True
                )
            ],
            "aggregations_kwargs": [
                dict(kwargs) for kwargs in self.aggregations_kwargs
            ],
            "mode": self.mode,
            "units": self.units,
            "laf_activation": (
                None
                if self.laf_activation is None
                else keras.activations.serialize(self.laf_activation)
            ),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["aggregations"] = [
            keras.saving.deserialize_keras_object(identifier)
            if isinstance(identifier, dict)
            else identifier
            for identifier in config["aggregations"]
        ]
        return cls(**config)

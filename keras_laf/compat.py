"""What keras-laf 0.1.0 shipped and 0.2.0 replaced, kept until 0.3.0.

Everything here warns with a `DeprecationWarning` naming its replacement
and the version that removes it (`REMOVAL`); nothing outside this module
keeps a former name or argument. Classes and arguments new in 0.2.0 have
no deprecated forms.

- `MessagePassing`: 0.1.0's graph layer, now `keras_laf.AggregationConv`
  with PNA's scalers as a `keras_laf.DegreeScalerAggregation`; its saved
  models load and predict as they did.
- `deprecated_arguments`: the 0.1.0 arguments of the builders and of
  `GraphReadout` (`laf_units`, `units`, `lstm_units`, `width`, `dim`,
  `pooling`) mapped onto the one aggregation spec, `aggregation` and
  `aggregation_kwargs`.
- `graph_layer_config`: a graph layer's config saved by 0.1.0, with
  `laf_units`, read without a warning (`GraphLayer.from_config` reads
  it through this module, and `GraphReadout` takes 0.1.0's `laf_units`:
  the graph layers themselves keep no former argument).
- `laf_config`: a `LAF` config saved by 0.1.0, which had no presets
  and no output bound, read as the paper's scheme without a bound.
- `MOVED_MODULES`: 0.1.0's module paths `keras_laf.sets` and
  `keras_laf.validation`.
"""

import functools
import inspect
import warnings

import keras

from keras_laf import aggregations
from keras_laf.graphs.aggregation_conv import AggregationConv
from keras_laf.graphs.base import GraphLayer
from keras_laf.graphs.readout import GraphReadout

REMOVAL = "0.3.0"

# 0.1.0's module paths of the modules that moved, and where they are now.
MOVED_MODULES = {
    "keras_laf.sets": "keras_laf.core.sets",
    "keras_laf.validation": "keras_laf.core.validation",
}


def warn(old, new, stacklevel=3):
    """Warns that `old` is deprecated for `new` and goes in `REMOVAL`."""
    warnings.warn(
        f"{old} is deprecated and will be removed in keras-laf {REMOVAL}: "
        f"use {new} instead.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed(new):
    """A translation for `deprecated_arguments`: the argument's new name."""

    def translate(value, arguments):
        return {new: value}

    translate.hint = f"`{new}=...`"
    return translate


def aggregation_argument(key, names=("laf",), aggregation="aggregation"):
    """A translation for `deprecated_arguments`: the value becomes
    `aggregation_kwargs[key]` where the aggregation (the argument
    `aggregation`) is one of `names`, and is ignored otherwise, as 0.1.0
    ignored it."""

    def translate(value, arguments):
        if arguments.get(aggregation) not in names:
            return {}
        return {"aggregation_kwargs": {key: value}}

    translate.hint = f"`aggregation_kwargs={{{key!r}: ...}}`"
    return translate


def deprecated_arguments(**translations):
    """Keeps the 0.1.0 arguments of a builder or a layer working.

    Each old argument given is translated, with a `DeprecationWarning`,
    into new arguments; `aggregation_kwargs` are merged, those given
    winning.

    Args:
        **translations: for each old argument name, a function
            `(value, arguments)` giving the new arguments, `arguments`
            those the call binds (defaults included); `renamed` and
            `aggregation_argument` make them.
    """

    def decorate(function):
        signature = inspect.signature(function)
        caller = function.__qualname__.removesuffix(".__init__")

        def translated(args, kwargs):
            old = {
                key: kwargs.pop(key) for key in translations if key in kwargs
            }
            if not old:
                return kwargs
            bound = signature.bind_partial(*args, **kwargs)
            bound.apply_defaults()
            for key, value in old.items():
                arguments = dict(bound.arguments)
                for new_key, new_value in translations[key](
                    value, arguments
                ).items():
                    if new_key == "aggregation_kwargs":
                        new_value = {**new_value, **(kwargs.get(new_key) or {})}
                    elif new_key in kwargs:
                        raise ValueError(
                            f"`{caller}` got both `{key}` and "
                            f"`{new_key}`; give `{new_key}` only."
                        )
                    kwargs[new_key] = new_value
                    bound.arguments[new_key] = new_value
                warn(
                    f"`{caller}({key}=...)`",
                    translations[key].hint,
                    stacklevel=4,
                )
            return kwargs

        @functools.wraps(function)
        def call(*args, **kwargs):
            return function(*args, **translated(args, kwargs))

        # Keras reads a layer's arguments from its `__init__`'s signature.
        call.__signature__ = signature
        return call

    return decorate


def graph_layer_config(config):
    """A graph layer's config saved by keras-laf 0.1.0, with `laf_units`
    (LAF's units, 16 by default then) and `laf_preset` turned into
    `aggregation_kwargs`, without a warning."""
    config = dict(config)
    former = {
        "units": config.pop("laf_units", None),
        "preset": config.pop("laf_preset", None),
    }
    former = {key: value for key, value in former.items() if value}
    aggregation = config.get("aggregation")
    kwargs = dict(config.get("aggregation_kwargs") or {})
    if aggregation == "laf":
        config["aggregation_kwargs"] = {**former, **kwargs}
    elif isinstance(aggregation, (list, tuple)) and "laf" in aggregation:
        members = kwargs.get("aggregations_kwargs") or [{} for _ in aggregation]
        kwargs["aggregations_kwargs"] = [
            {**former, **member} if name == "laf" else member
            for name, member in zip(aggregation, members, strict=True)
        ]
        config["aggregation_kwargs"] = kwargs
    return config


# 0.1.0's `GraphReadout(laf_units=...)`, and the configs of graph layers
# it saved, read without a warning.
GraphReadout.__init__ = deprecated_arguments(
    laf_units=aggregation_argument("units")
)(GraphReadout.__init__)
_from_config = GraphLayer.from_config.__func__
GraphLayer.from_config = classmethod(
    lambda cls, config: _from_config(cls, graph_layer_config(config))
)


def laf_config(config):
    """A `LAF` config saved by keras-laf 0.1.0: its layers had the paper's
    initialisation and projection (`preset="paper"`) and no output bound;
    a config that names them keeps its own."""
    return {"preset": "paper", "output_bound": float("inf"), **config}


# 0.1.0's LAF layers, read as they were built.
_laf_from_config = aggregations.LAF.from_config.__func__
aggregations.LAF.from_config = classmethod(
    lambda cls, config: _laf_from_config(cls, laf_config(config))
)


class _DegreeScalerOfMessagePassing(aggregations.DegreeScalerAggregation):
    """The scalers of a `MessagePassing` layer.

    Files saved before keep its learned delta among the `MessagePassing`
    layer's own variables, which that layer loads: here an empty store
    loads nothing.
    """

    def load_own_variables(self, store):
        if len(store.keys()):
            super().load_own_variables(store)


@keras.saving.register_keras_serializable(package="keras_laf")
class MessagePassing(AggregationConv):
    """keras-laf 0.1.0's graph layer: `AggregationConv` with its scalers.

    Deprecated, removed in 0.3.0: use `keras_laf.AggregationConv`, and
    PNA's scalers as `aggregation=keras_laf.DegreeScalerAggregation(
    aggregation, scalers, degree_histogram=keras_laf.degree_histogram(...))`.
    Models saved with it load and predict as they did: the weights keep
    the places they had in the files.

    Args:
        units: as for `AggregationConv`.
        aggregation: a name or a list of names, as for `AggregationConv`.
        laf_units: int. The units of a `"laf"` aggregation. Defaults to
            `16`.
        message_units, message_activation, activation, use_bias,
        kernel_initializer, bias_initializer, aggregation_kwargs: as for
            `AggregationConv`.
        scalers: list of str from `"identity"`, `"amplification"`,
            `"attenuation"`, `"linear"`, `"inverse_linear"`. Defaults to
            `("identity",)`.
        average_log_degree: float. PNA's delta. Defaults to `1.5`.
        average_degree: float. Defaults to `None`: `exp(delta) - 1`.
        train_average_log_degree: bool. Defaults to `False`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Example:

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     layer = MessagePassing(4, aggregation="sum", scalers=["linear"])
    >>> type(layer.aggregation_layer()).__name__
    '_DegreeScalerOfMessagePassing'
    """

    def __init__(
        self,
        units,
        aggregation="laf",
        laf_units=16,
        message_units=None,
        scalers=("identity",),
        aggregation_kwargs=None,
        average_log_degree=1.5,
        average_degree=None,
        train_average_log_degree=False,
        message_activation=None,
        activation="leaky_relu",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        laf_preset=None,
        **kwargs,
    ):
        warn(
            "`keras_laf.MessagePassing`",
            "`keras_laf.AggregationConv(units, aggregation=keras_laf."
            "DegreeScalerAggregation(aggregation, scalers, degree_histogram="
            "keras_laf.degree_histogram(edge_target, num_nodes)))`; save the "
            "model again to store the new name",
        )
        config = graph_layer_config(
            {
                "aggregation": aggregation,
                "aggregation_kwargs": aggregation_kwargs,
                "laf_units": 16 if laf_units is None else laf_units,
                "laf_preset": laf_preset,
            }
        )
        if isinstance(scalers, str):
            scalers = [scalers]
        super().__init__(
            units,
            aggregation=aggregation,
            aggregation_kwargs=config.get("aggregation_kwargs"),
            message_units=message_units,
            message_activation=message_activation,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            **kwargs,
        )
        self.average_log_degree = average_log_degree
        self.average_degree = average_degree
        self.train_average_log_degree = train_average_log_degree
        # The old layer held the aggregation as `_aggregation`, where its
        # weights are in saved files; the scalers wrap it.
        self._scaler = _DegreeScalerOfMessagePassing(
            self._aggregation,
            list(scalers),
            average_log_degree=average_log_degree,
            average_degree=average_degree,
            train_average_log_degree=train_average_log_degree,
            name="degree_scaler",
            dtype=self.dtype_policy,
        )

    @property
    def scalers(self):
        return self._scaler.scalers

    @property
    def log_average_log_degree(self):
        return self._scaler.log_average_log_degree

    def _aggregating_layer(self):
        # Before __init__ has wrapped the aggregation, the aggregation.
        scaler = getattr(self, "_scaler", None)
        return self._aggregation if scaler is None else scaler

    def load_own_variables(self, store):
        # Files saved before hold the learned delta as this layer's own.
        if len(store.keys()) == 1 and self._scaler.train_average_log_degree:
            self._scaler.log_average_log_degree.assign(store["0"])
            return
        super().load_own_variables(store)

    def get_config(self):
        return {
            **super().get_config(),
            "scalers": self.scalers,
            "average_log_degree": self.average_log_degree,
            "average_degree": self.average_degree,
            "train_average_log_degree": self.train_average_log_degree,
        }

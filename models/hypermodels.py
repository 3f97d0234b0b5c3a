"""KerasTuner hypermodels of the set models: how many LAF units to use.

The LAF paper (Pellegrini et al., "Learning Aggregation Functions", IJCAI
2021) found that a single LAF unit can learn some targets but is unstable
across restarts, while several units (6 to 9) learn them reliably. The
hypermodels here make the number of units, the learning rate and the
aggregation hyperparameters of `deep_sets` and `set_transformer`, each with
a default and a range that the caller can change:

- `"aggregation"`: `hp.Choice` among `aggregations`, `"laf"` by default;
- `"laf_units"`: `hp.Int` from `min_units` to `max_units` by `units_step`
  (1 to 21 by 1 unless changed), 9 by default, present only when the
  aggregation is `"laf"`; the builders' argument of the same name;
- `"laf_preset"`: the `keras_laf.LAF` preset, `hp.Choice` among
  `laf_presets` (all of `keras_laf.presets.PRESETS` unless changed), the
  layer's default `"pooling"` by default, present only when the
  aggregation is `"laf"`; the builders' argument of the same name;
- `"learning_rate"`: Adam's rate, `hp.Choice` among `learning_rates`
  (1e-2, 1e-3, 1e-4 unless changed), 1e-3 by default.

A hyperparameter is fixed either through the constructor (`min_units=6,
max_units=6`, `learning_rates=(1e-3,)`, `aggregations=("laf",)`,
`laf_presets=("closed_forms",)`) or by
declaring it before `build`, e.g. `hp.Fixed("laf_units", 6)` in the
`HyperParameters` given to `build` or to a tuner. The hyperparameter was
called `"units"` before; a `"units"` declared before `build` still sets the
LAF units, with a `DeprecationWarning`.
"""

import inspect
import math
import numbers
import warnings

import keras

try:
    import keras_tuner
except ImportError:
    raise ImportError(
        "The hypermodels of keras_laf.models need KerasTuner. Install it "
        "with: pip install 'keras-laf[tuner]' (or pip install keras-tuner)."
    ) from None

from keras_laf import aggregations
from keras_laf.aggregations.laf.presets import DEFAULT_PRESET
from keras_laf.aggregations.laf.presets import PRESETS
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import is_int
from keras_laf.core.validation import is_number
from keras_laf.models.deep_sets import deep_sets
from keras_laf.models.set_transformer import HEADS
from keras_laf.models.set_transformer import set_transformer

# The paper's choice, in the middle of the stable range of 6 to 9 units.
DEFAULT_UNITS = 9
DEFAULT_LEARNING_RATE = 1e-3
DEFAULT_AGGREGATION = "laf"
LEARNING_RATES = (1e-2, 1e-3, 1e-4)
# The hyperparameter of the number of LAF units, named like the builders'
# argument; `DEPRECATED_UNITS` is its former name.
UNITS = "laf_units"
DEPRECATED_UNITS = "units"
# The hyperparameter of the LAF preset, named like the builders' argument.
PRESET = "laf_preset"


class SetHyperModel(keras_tuner.HyperModel):
    """The hyperparameters shared by the set hypermodels.

    Subclasses set `AGGREGATIONS` (the allowed choices), `_builder` and
    `_reserved` (the builder arguments the hypermodel sets itself), and
    implement `_build_model(aggregation, units, preset)`.

    Args:
        min_units: int. Fewest LAF units tried. Defaults to `1`.
        max_units: int. Most LAF units tried. Defaults to `21`.
        units_step: int. Step between the unit values tried. Defaults to
            `1`.
        default_units: int. Units of the first trial and of an empty
            `HyperParameters`; one of the values tried. Defaults to `None`:
            9, or the value tried nearest to 9.
        learning_rates: sequence of positive floats. Adam learning rates
            tried; one value fixes it. Defaults to `(1e-2, 1e-3, 1e-4)`.
        default_learning_rate: float. One of `learning_rates`. Defaults to
            `None`: 1e-3, or the rate nearest to it on a log scale.
        aggregations: sequence of str. Aggregations tried, among the
            subclass's `AGGREGATIONS`. Defaults to `("laf",)`.
        default_aggregation: str. One of `aggregations`. Defaults to
            `None`: `"laf"` if tried, else the first.
        laf_presets: sequence of str. `keras_laf.LAF` presets tried (see
            `keras_laf.presets`); one value fixes it. Defaults to `None`:
            every preset, `("pooling", "closed_forms", "paper")`.
        default_laf_preset: str. One of `laf_presets`. Defaults to `None`:
            the layer's default, `"pooling"`, if tried, else the first.
        loss: the Keras loss. Defaults to `"mae"`.
        metrics: Keras metrics. Defaults to `("mae",)`, logged as `mae`
            and `val_mae`.
        compile_kwargs: dict. Further arguments of `Model.compile`, e.g.
            `{"run_eagerly": True}`. Defaults to `None`.
        model_kwargs: dict. Further arguments of the subclass's model
            builder. Defaults to `None`.
        name: str. Name of the hypermodel. Defaults to `None`.
        tunable: bool. Whether the hyperparameters are added to the search
            space. Defaults to `True`.
    """

    AGGREGATIONS = ()
    _builder = None
    _reserved = ()

    def __init__(
        self,
        min_units=1,
        max_units=21,
        units_step=1,
        default_units=None,
        learning_rates=LEARNING_RATES,
        default_learning_rate=None,
        aggregations=(DEFAULT_AGGREGATION,),
        default_aggregation=None,
        laf_presets=None,
        default_laf_preset=None,
        loss="mae",
        metrics=("mae",),
        compile_kwargs=None,
        model_kwargs=None,
        name=None,
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        min_units = check_positive_int("min_units", min_units)
        max_units = check_positive_int("max_units", max_units)
        units_step = check_positive_int("units_step", units_step)
        if min_units > max_units:
            raise ValueError(
                "`min_units` must not be larger than `max_units`. Received: "
                f"min_units={min_units}, max_units={max_units}"
            )
        unit_grid = range(min_units, max_units + 1, units_step)
        if default_units is None:
            # The paper's 9, or the value of the grid nearest to it.
            default_units = min(
                unit_grid, key=lambda value: (abs(value - DEFAULT_UNITS), value)
            )
        elif not is_int(default_units) or default_units not in unit_grid:
            raise ValueError(
                "`default_units` must be one of the unit values "
                f"{min_units}, {min_units + units_step}, ... up to "
                f"{max_units}. Received: default_units={default_units}"
            )

        learning_rates = _check_learning_rates(learning_rates)
        if default_learning_rate is None:
            # 1e-3, or the choice nearest to it on a log scale.
            default_learning_rate = min(
                learning_rates,
                key=lambda rate: abs(
                    math.log10(rate) - math.log10(DEFAULT_LEARNING_RATE)
                ),
            )
        elif default_learning_rate not in learning_rates:
            raise ValueError(
                "`default_learning_rate` must be one of `learning_rates` "
                f"{list(learning_rates)}. Received: "
                f"default_learning_rate={default_learning_rate}"
            )
        else:
            default_learning_rate = float(default_learning_rate)

        aggregations = _check_aggregations(aggregations, self.AGGREGATIONS)
        default_aggregation = _default_choice(
            "aggregation",
            default_aggregation,
            aggregations,
            DEFAULT_AGGREGATION,
        )

        laf_presets = _check_laf_presets(laf_presets)
        default_laf_preset = _default_choice(
            "laf_preset", default_laf_preset, laf_presets, DEFAULT_PRESET
        )

        compile_kwargs = dict(compile_kwargs or {})
        for argument in ("optimizer", "loss", "metrics"):
            if argument in compile_kwargs:
                raise ValueError(
                    f"`compile_kwargs` must not contain {argument!r}: the "
                    "hypermodel sets it (the optimizer is Adam with the "
                    "tuned learning rate; pass `loss` and `metrics` "
                    f"directly). Received: compile_kwargs={compile_kwargs}"
                )
        model_kwargs = dict(model_kwargs or {})
        builder_arguments = inspect.signature(self._builder).parameters
        for argument in model_kwargs:
            if argument in self._reserved or argument not in builder_arguments:
                allowed = sorted(set(builder_arguments) - set(self._reserved))
                raise ValueError(
                    f"`model_kwargs` may only contain arguments of "
                    f"`{self._builder.__name__}` that the hypermodel does "
                    f"not set: {allowed}. Received: {argument}="
                    f"{model_kwargs[argument]!r}"
                )

        self.min_units = min_units
        self.max_units = max_units
        self.units_step = units_step
        self.default_units = default_units
        self.learning_rates = learning_rates
        self.default_learning_rate = default_learning_rate
        self.aggregations = aggregations
        self.default_aggregation = default_aggregation
        self.laf_presets = laf_presets
        self.default_laf_preset = default_laf_preset
        self.loss = loss
        if metrics is None:
            metrics = []
        elif isinstance(metrics, (list, tuple)):
            metrics = list(metrics)
        else:
            metrics = [metrics]
        self.metrics = metrics
        self.compile_kwargs = compile_kwargs
        self.model_kwargs = model_kwargs

    def build(self, hp):
        aggregation = hp.Choice(
            "aggregation",
            list(self.aggregations),
            default=self.default_aggregation,
        )
        units = self._units(hp)
        preset = self._preset(hp)
        learning_rate = hp.Choice(
            "learning_rate",
            list(self.learning_rates),
            default=self.default_learning_rate,
        )
        if units is None:
            # The aggregation is not LAF: the builder ignores `units`.
            units = self.default_units
        model = self._build_model(aggregation, units, preset)
        model.compile(
            optimizer=keras.optimizers.Adam(learning_rate=learning_rate),
            loss=self.loss,
            metrics=self.metrics,
            **self.compile_kwargs,
        )
        return model

    def _units(self, hp):
        declared = {
            hyperparameter.name
            for hyperparameter in hp.space
            if not hyperparameter.conditions
        }
        if DEPRECATED_UNITS in declared and UNITS not in declared:
            warnings.warn(
                f"The hyperparameter {DEPRECATED_UNITS!r} of the keras_laf "
                f"hypermodels is now {UNITS!r}, like the builders' "
                f"argument: declare hp.Fixed({UNITS!r}, ...) instead of "
                f"hp.Fixed({DEPRECATED_UNITS!r}, ...).",
                DeprecationWarning,
                stacklevel=3,
            )
            return hp.Fixed(UNITS, hp.get(DEPRECATED_UNITS))
        # A "laf_units" declared by the caller before `build`, e.g. with
        # `hp.Fixed("laf_units", 6)`, has no condition: its value wins for
        # every aggregation. Registering a conditional "laf_units" beside
        # it would let a tuner sample that one over the fixed value.
        if UNITS in declared:
            return hp.get(UNITS)
        # Otherwise "laf_units" exists only in trials that use LAF: trials
        # of other aggregations carry no unused value that tells them apart.
        with hp.conditional_scope("aggregation", ["laf"]):
            return hp.Int(
                UNITS,
                min_value=self.min_units,
                max_value=self.max_units,
                step=self.units_step,
                default=self.default_units,
            )

    def _preset(self, hp):
        """The LAF preset of this trial, or None where LAF is not used."""
        # As for "laf_units": a "laf_preset" declared before `build` wins
        # for every aggregation, otherwise it exists only in LAF trials.
        if PRESET in {
            hyperparameter.name
            for hyperparameter in hp.space
            if not hyperparameter.conditions
        }:
            return hp.get(PRESET)
        with hp.conditional_scope("aggregation", ["laf"]):
            return hp.Choice(
                PRESET,
                list(self.laf_presets),
                default=self.default_laf_preset,
            )

    def _build_model(self, aggregation, units, preset):
        raise NotImplementedError


class DeepSetsHyperModel(SetHyperModel):
    """A DeepSets hypermodel: the number of LAF units, tuned.

    Builds `keras_laf.models.deep_sets` models compiled with Adam and the
    MAE loss, with three hyperparameters: `"aggregation"` (a choice among
    `aggregations`, `"laf"` by default), `"laf_units"` (the LAF units, an
    integer from `min_units` to `max_units`, 9 by default, present only
    when the aggregation is `"laf"`) and `"learning_rate"` (a choice among
    `learning_rates`, 1e-3 by default). Building with an empty
    `keras_tuner.HyperParameters()` gives the defaults: the paper's model
    with LAF(9).

    The LAF paper found one unit able to learn some targets but unstable
    across restarts, and 6 to 9 units stable.

    Args:
        vocabulary_size: int. For sets of integers in
            `[0, vocabulary_size)`, embedded first. Give this or
            `input_dim`. Defaults to `None`.
        input_dim: int. Features of each element. Defaults to `None`.
        output_dim: int. Outputs of the model. Defaults to `1`.
        **kwargs: the search space and training arguments of
            `SetHyperModel` (`min_units`, `max_units`, `units_step`,
            `default_units`, `learning_rates`, `default_learning_rate`,
            `aggregations` among `keras_laf.aggregations.NAMES`,
            `default_aggregation`, `loss`, `metrics`, `compile_kwargs`,
            `model_kwargs`: further arguments of `deep_sets`, e.g.
            `{"phi_units": (), "embedding_dim": 10}`, `name`, `tunable`).

    Example:

    >>> import tempfile
    >>> import keras_tuner as kt
    >>> hypermodel = DeepSetsHyperModel(
    ...     vocabulary_size=10, model_kwargs={"phi_units": ()}
    ... )
    >>> model = hypermodel.build(kt.HyperParameters())  # LAF(9), Adam(1e-3)
    >>> hp = kt.HyperParameters()
    >>> hp.Fixed("laf_units", 6)  # fixes the units; the rest is searched
    6
    >>> tuner = kt.RandomSearch(
    ...     hypermodel,
    ...     hyperparameters=hp,
    ...     objective="val_loss",
    ...     max_trials=10,
    ...     directory=tempfile.mkdtemp(),  # where the trials are saved
    ... )
    """

    AGGREGATIONS = aggregations.NAMES
    _builder = staticmethod(deep_sets)
    _reserved = (
        "aggregation",
        "aggregation_kwargs",
        "vocabulary_size",
        "input_dim",
        "output_dim",
    )

    def __init__(
        self, vocabulary_size=None, input_dim=None, output_dim=1, **kwargs
    ):
        if (input_dim is None) == (vocabulary_size is None):
            raise ValueError(
                "Give exactly one of `vocabulary_size` (integer elements) "
                "and `input_dim` (feature vectors). Received: "
                f"vocabulary_size={vocabulary_size}, input_dim={input_dim}"
            )
        if vocabulary_size is not None:
            vocabulary_size = check_positive_int(
                "vocabulary_size", vocabulary_size
            )
        if input_dim is not None:
            input_dim = check_positive_int("input_dim", input_dim)
        output_dim = check_positive_int("output_dim", output_dim)
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.input_dim = input_dim
        self.output_dim = output_dim

    def _build_model(self, aggregation, units, preset):
        return deep_sets(
            input_dim=self.input_dim,
            output_dim=self.output_dim,
            aggregation=aggregation,
            aggregation_kwargs=_laf_kwargs(aggregation, units, preset),
            vocabulary_size=self.vocabulary_size,
            **self.model_kwargs,
        )


class SetTransformerHyperModel(SetHyperModel):
    """A Set Transformer hypermodel: the LAF head's units, tuned.

    Builds `keras_laf.models.set_transformer` models compiled with Adam and
    the MAE loss. The hyperparameters are those of `DeepSetsHyperModel`,
    with `"aggregation"` choosing the pooling head of the Set Transformer:
    `"laf"` (a sigmoid and LAF with `"laf_units"` units) or `"pma"`
    (pooling by multi-head attention, where `"laf_units"` is absent).
    Building with an empty `keras_tuner.HyperParameters()` gives a LAF(9)
    head and Adam with learning rate 1e-3.

    Args:
        input_dim: int. Features of each element.
        output_dim: int. Outputs of the model. Defaults to `1`.
        **kwargs: the search space and training arguments of
            `SetHyperModel`, with `aggregations` the pooling heads tried,
            `"laf"` and `"pma"`, and `model_kwargs` further arguments of
            `set_transformer`, e.g. `{"hidden_units": 32, "encoder": "isab"}`.

    Example:

    >>> import keras_tuner as kt
    >>> hypermodel = SetTransformerHyperModel(
    ...     input_dim=784,
    ...     aggregations=("laf", "pma"),
    ...     model_kwargs={"phi_units": (300, 100, 30)},
    ... )
    >>> model = hypermodel.build(kt.HyperParameters())  # a LAF(9) head
    """

    AGGREGATIONS = HEADS
    _builder = staticmethod(set_transformer)
    _reserved = (
        "aggregation",
        "aggregation_kwargs",
        "input_dim",
        "output_dim",
    )

    def __init__(self, input_dim, output_dim=1, **kwargs):
        input_dim = check_positive_int("input_dim", input_dim)
        output_dim = check_positive_int("output_dim", output_dim)
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim

    def _build_model(self, aggregation, units, preset):
        return set_transformer(
            input_dim=self.input_dim,
            output_dim=self.output_dim,
            aggregation=aggregation,
            aggregation_kwargs=_laf_kwargs(aggregation, units, preset),
            **self.model_kwargs,
        )


def _laf_kwargs(aggregation, units, preset):
    # The hyperparameters `laf_units` and `laf_preset` are LAF's arguments.
    if aggregation != "laf":
        return None
    return {
        key: value
        for key, value in (("units", units), ("preset", preset))
        if value is not None
    }


def _check_learning_rates(learning_rates):
    error = ValueError(
        "`learning_rates` must be a non-empty sequence of positive "
        "numbers, e.g. (1e-2, 1e-3, 1e-4), or (1e-3,) to fix it. "
        f"Received: learning_rates={learning_rates!r}"
    )
    if isinstance(learning_rates, (str, numbers.Number)):
        raise error
    try:
        rates = tuple(learning_rates)
    except TypeError:
        raise error from None
    if not rates or not all(
        is_number(rate) and math.isfinite(rate) and rate > 0 for rate in rates
    ):
        raise error
    rates = tuple(float(rate) for rate in rates)
    if len(set(rates)) != len(rates):
        raise ValueError(
            "`learning_rates` must not repeat a value. "
            f"Received: learning_rates={learning_rates!r}"
        )
    # Largest first, as an ordered choice.
    return tuple(sorted(rates, reverse=True))


def _default_choice(name, default, choices, preferred):
    """The default of the `name` hyperparameter among `choices`: `default`
    if given (it must be a choice), else `preferred` if it is one, else the
    first choice."""
    if default is None:
        return preferred if preferred in choices else choices[0]
    if default not in choices:
        raise ValueError(
            f"`default_{name}` must be one of `{name}s` {list(choices)}. "
            f"Received: default_{name}={default!r}"
        )
    return default


def _check_laf_presets(laf_presets):
    if laf_presets is None:
        return tuple(PRESETS)
    error = ValueError(
        f"`laf_presets` must be a non-empty sequence of names among "
        f"{list(PRESETS)}, e.g. ('closed_forms',) to fix it. "
        f"Received: laf_presets={laf_presets!r}"
    )
    if isinstance(laf_presets, str):
        raise error
    try:
        names = tuple(laf_presets)
    except TypeError:
        raise error from None
    if not names or len(set(names)) != len(names):
        raise error
    for name in names:
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(
                f"Unknown LAF preset {name!r}. Expected one of "
                f"{list(PRESETS)}. Received: laf_presets={laf_presets!r}"
            )
    return names


def _check_aggregations(aggregations, allowed):
    error = ValueError(
        f"`aggregations` must be a non-empty sequence of names among "
        f"{list(allowed)}, e.g. ('laf',) or ('laf', {allowed[-1]!r}). "
        f"Received: aggregations={aggregations!r}"
    )
    if isinstance(aggregations, str):
        raise error
    try:
        names = tuple(aggregations)
    except TypeError:
        raise error from None
    if not names:
        raise error
    for name in names:
        if not isinstance(name, str) or name not in allowed:
            raise ValueError(
                f"Unknown aggregation {name!r}. Expected one of "
                f"{list(allowed)}. Received: aggregations={aggregations!r}"
            )
    if len(set(names)) != len(names):
        raise ValueError(
            "`aggregations` must not repeat a name. "
            f"Received: aggregations={aggregations!r}"
        )
    return names

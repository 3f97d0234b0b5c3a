"""The settings of the `keras-laf` subcommands and their arguments.

Comma-separated choices (`--targets sum,max` or `all`), the training
settings with the paper's optimiser defaults, `--quick`, and the seeds of
the data of the set experiments.
"""

import argparse
import os

import numpy as np

# The optimiser settings of the paper: Adam, learning rate 1e-3, batches of
# 64 sets, the learning rate decayed when the validation loss plateaus.
PAPER_BATCH_SIZE = 64
PAPER_LEARNING_RATE = 1e-3
LR_FACTOR = 0.5
LR_PATIENCE = 5

# Seeds of the data of the set experiments: training sets use the run's
# seed, validation sets `VALIDATION_SEED + seed`, and the test sets are the
# same for every run.
VALIDATION_SEED = 10_000
TEST_SEED = 1
PREDICT_BATCH_SIZE = 256
# Batches run per call of the compiled training step on padded sets: the
# steps of the small set models are short enough that Python's per-step
# overhead would otherwise dominate.
STEPS_PER_EXECUTION = 16
# The presets of `keras_laf.LAF` (`keras_laf.presets.PRESETS`, named here
# so that `--help` needs no Keras) and the layer's default.
LAF_PRESETS = ("pooling", "closed_forms", "paper")
DEFAULT_LAF_PRESET = "pooling"
# `--laf-preset by_target`, the default of the commands whose runs each
# learn one target (`scalars`, `mnist`): the preset the README recommends
# for each target. The count, the sum and the mean are closed forms that
# must hold on sets larger than any in training, which the closed forms'
# route (the preset, the snap, the head refitted by least squares) makes
# exact; every other target is pooled.
BY_TARGET = "by_target"
CLOSED_FORM_TARGETS = ("count", "sum", "mean")


# With `BY_TARGET`, the bound of every LAF unit's output for the targets
# that are no closed form, as the README recommends for targets that do
# not grow with the set.
INTENSIVE_OUTPUT_BOUND = 10.0


def laf_preset_for(laf_preset, target):
    """The LAF preset of a run: `laf_preset`, or with `BY_TARGET` the
    preset of `target`'s purpose.

    >>> laf_preset_for("by_target", "count"), laf_preset_for("paper", "count")
    ('closed_forms', 'paper')
    """
    if laf_preset != BY_TARGET:
        return laf_preset
    return "closed_forms" if target in CLOSED_FORM_TARGETS else "pooling"


def laf_options_for(laf_preset, target):
    """The keyword arguments of a run's `build_model` for its LAF layers:
    `laf_preset` (`laf_preset_for`), and with `BY_TARGET` for a target
    that is no closed form, `laf_output_bound`.

    >>> laf_options_for("by_target", "kurtosis")
    {'laf_preset': 'pooling', 'laf_output_bound': 10.0}
    >>> laf_options_for("pooling", "kurtosis")
    {'laf_preset': 'pooling'}
    """
    options = {"laf_preset": laf_preset_for(laf_preset, target)}
    if laf_preset == BY_TARGET and target not in CLOSED_FORM_TARGETS:
        options["laf_output_bound"] = INTENSIVE_OUTPUT_BOUND
    return options


# (attribute, flag, type, help) of the settings every subcommand takes; the
# experiment gives their default and `--quick` values.
_SETTING_FLAGS = (
    ("train_size", "--train-size", "positive_int", "training sets"),
    ("val_size", "--val-size", "positive_int", "validation sets"),
    ("test_size", "--test-size", "positive_int", "test sets (per size)"),
    ("epochs", "--epochs", "positive_int", "training epochs"),
    ("batch_size", "--batch-size", "positive_int", "sets per batch"),
    ("learning_rate", "--learning-rate", "positive_float", "Adam's rate"),
    (
        "lr_factor",
        "--lr-factor",
        "fraction",
        "factor of the learning-rate decay on a validation plateau",
    ),
    (
        "lr_patience",
        "--lr-patience",
        "positive_int",
        "epochs without validation improvement before the decay",
    ),
)
# What the records and figures of a `--quick` run say of themselves.
QUICK_MARK = "--quick: not a result"

# The sizes of `--quick` runs of the set experiments: a smoke test.
QUICK_SIZES = {
    "train_size": 128,
    "val_size": 32,
    "test_size": 32,
    "epochs": 1,
    "seeds": 1,
}
OPTIMIZER_DEFAULTS = {
    "batch_size": PAPER_BATCH_SIZE,
    "learning_rate": PAPER_LEARNING_RATE,
    "lr_factor": LR_FACTOR,
    "lr_patience": LR_PATIENCE,
}


# Argument types: each raises `argparse.ArgumentTypeError`, which argparse
# reports as `keras-laf <command>: error: argument --flag: <message>` with
# exit status 2.


def positive_int(text):
    """Parses a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, received {text!r}"
        )
    return value


def positive_float(text):
    """Parses a positive float."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or not np.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"expected a positive number, received {text!r}"
        )
    return value


def fraction(text):
    """Parses a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1, received {text!r}"
        )
    return value


def seed_ranges(text):
    """Parses seeds and ranges of seeds, e.g. `5-9` or `0-4,100-104`."""
    seeds = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        try:
            seeds.extend(range(int(low), int(high or low) + 1))
        except ValueError:
            seeds = []
            break
    if not seeds or min(seeds) < 0:
        raise argparse.ArgumentTypeError(
            "expected seeds and ranges of seeds like 5-9 or 0-4,100-104, "
            f"received {text!r}"
        )
    return tuple(sorted(set(seeds)))


def seed_choice(text):
    """Parses `--seeds`: a number N (the seeds 0..N-1), or seeds and
    ranges of seeds (`5-9`, `0,3,7`)."""
    if text.strip().isdigit():
        return tuple(range(positive_int(text)))
    return seed_ranges(text)


def positive_int_list(text):
    """Parses comma-separated positive integers, e.g. `5,10,20`."""
    values = [item.strip() for item in text.split(",") if item.strip()]
    if not values:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers, received {text!r}"
        )
    return tuple(sorted({positive_int(value) for value in values}))


def set_size_list(text):
    """Parses comma-separated maximum set sizes (integers of at least 2)."""
    values = [item.strip() for item in text.split(",") if item.strip()]
    sizes = []
    for value in values:
        try:
            sizes.append(int(value))
        except ValueError:
            sizes.append(0)
    if not sizes or min(sizes) < 2:
        raise argparse.ArgumentTypeError(
            "expected comma-separated set sizes of at least 2, received "
            f"{text!r}"
        )
    return tuple(sorted(set(sizes)))


def choice_list(choices, what):
    """An argument type for a comma-separated subset of `choices`.

    Args:
        choices: the allowed names, in their canonical order.
        what: the singular noun used in error messages, e.g. `"target"`.

    Returns:
        A function parsing `"a,b"` (or `"all"`) into a tuple of names in
        the order given.
    """

    def parse(text):
        names = [name.strip() for name in text.split(",") if name.strip()]
        if names == ["all"]:
            return tuple(choices)
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            received = unknown[0] if unknown else text
            raise argparse.ArgumentTypeError(
                f"unknown {what} {received!r}; expected 'all' or a "
                f"comma-separated list of: {', '.join(choices)}"
            )
        return tuple(dict.fromkeys(names))

    return parse


_TYPES = {
    "positive_int": positive_int,
    "positive_float": positive_float,
    "fraction": fraction,
}


def add_setting_flags(group, flags, types, defaults, quick):
    """Adds a flag per `(name, flag, kind, help)` of `flags` to `group`.

    Each flag is parsed by `types[kind]`, defaults to None (resolved by
    `resolve_settings`) and names its default and `--quick` values.
    """
    for name, flag, kind, text in flags:
        group.add_argument(
            flag,
            type=types[kind],
            metavar="N" if kind == "positive_int" else "X",
            help=f"{text} (default: {defaults[name]}; --quick: {quick[name]})",
        )


def add_common_arguments(
    parser, experiment, defaults, quick, laf_preset_by_target=False
):
    """Adds the flags every experiment takes.

    The settings flags default to None and are resolved by
    `resolve_settings`: an explicit flag wins, else the `--quick` value
    with `--quick`, else the default.

    Args:
        parser: the subcommand's `argparse.ArgumentParser`.
        experiment: the subcommand's name, for the default output folder.
        defaults: dict of the default settings: `train_size`, `val_size`,
            `test_size`, `epochs`, `seeds`, and optionally the optimiser
            settings of `OPTIMIZER_DEFAULTS`.
        quick: dict of the same keys, the values of `--quick`.
        laf_preset_by_target: whether `--laf-preset` takes `BY_TARGET`, and
            defaults to it (for experiments whose runs learn one target
            each).
    """
    defaults = {**OPTIMIZER_DEFAULTS, **defaults}
    quick = {**OPTIMIZER_DEFAULTS, **quick}
    group = parser.add_argument_group("output and progress")
    group.add_argument(
        "--output",
        metavar="DIR",
        help=(
            "output directory; re-running with the same directory skips "
            "the runs recorded there and resumes an interrupted one "
            f"(default: experiments_output/{experiment}, or "
            f"experiments_output/{experiment}-quick with --quick)"
        ),
    )
    group.add_argument(
        "--overwrite",
        action="store_true",
        help="discard the results and backups already in the output "
        "directory instead of resuming",
    )
    group.add_argument(
        "--quick",
        action="store_true",
        help="tiny sizes and one epoch: a smoke test that takes seconds",
    )
    group.add_argument(
        "--verbose",
        type=int,
        choices=(0, 1, 2, 3),
        default=1,
        help="0 silent, 1 progress bars (one line per epoch when the "
        "output is not a terminal), 2 one line per epoch, 3 the same and "
        "TensorFlow's start-up logging (default: 1)",
    )
    group = parser.add_argument_group("training")
    add_setting_flags(group, _SETTING_FLAGS, _TYPES, defaults, quick)
    presets, default_preset, by_target = LAF_PRESETS, DEFAULT_LAF_PRESET, ""
    if laf_preset_by_target:
        presets, default_preset = (*LAF_PRESETS, BY_TARGET), BY_TARGET
        by_target = (
            f"'{BY_TARGET}' (closed_forms and its route for the closed "
            f"forms {', '.join(CLOSED_FORM_TARGETS)}; pooling with "
            f"output_bound={INTENSIVE_OUTPUT_BOUND:g} for the others), "
        )
    group.add_argument(
        "--laf-preset",
        choices=presets,
        default=default_preset,
        help=f"the preset of every LAF layer trained: {by_target}'pooling' "
        "(the layer's default), 'closed_forms' (pulls the units onto "
        "closed forms that extrapolate) or 'paper' (the paper's "
        f"initialisation; default: {default_preset})",
    )
    group.add_argument(
        "--seeds",
        type=seed_choice,
        metavar="N|SEEDS",
        help="repetitions: a number N for the seeds 0..N-1, or the seeds "
        "themselves, e.g. 5-9 for a second set of five (default: "
        f"{defaults['seeds']}; --quick: {quick['seeds']})",
    )
    parser.set_defaults(
        experiment=experiment, setting_defaults=defaults, quick_settings=quick
    )


def resolve_settings(args, extra_names=()):
    """Fills the unset settings flags of `args` and returns the settings.

    Args:
        args: the parsed arguments of a subcommand set up with
            `add_common_arguments`.
        extra_names: further attributes of `args` to resolve the same way
            (their default and `--quick` values must be in the dicts given
            to `add_common_arguments`).

    Returns:
        Dict of the settings that determine the results (everything but
        the choice of methods, targets and seeds, with the LAF preset), as
        recorded in `results.json`; a `--quick` run's also holds
        `"run": QUICK_MARK`.
    """
    chosen = args.quick_settings if args.quick else args.setting_defaults
    names = [name for name, *_ in _SETTING_FLAGS] + ["seeds", *extra_names]
    for name in names:
        if getattr(args, name, None) is None:
            setattr(args, name, chosen[name])
    if args.output is None:
        suffix = "-quick" if args.quick else ""
        args.output = os.path.join(
            "experiments_output", f"{args.experiment}{suffix}"
        )
    if isinstance(args.seeds, int):
        args.seeds = tuple(range(args.seeds))
    settings = {name: getattr(args, name) for name in names}
    del settings["seeds"]
    settings["laf_preset"] = args.laf_preset
    if args.quick:
        settings["run"] = QUICK_MARK
    return settings


def add_methods_and_sizes_arguments(
    group, methods, defaults, quick, paper_sizes=None, optional_methods=()
):
    """Adds `--methods` and `--max-sizes`, shared by the set experiments.

    `methods` run by default; `optional_methods` only when named.
    """

    def sizes(values):
        return ",".join(map(str, values))

    optional = (
        f"; also: {','.join(optional_methods)}" if optional_methods else ""
    )
    group.add_argument(
        "--methods",
        type=choice_list((*methods, *optional_methods), "method"),
        default=methods,
        help=f"comma-separated methods (default: {','.join(methods)}"
        f"{optional})",
    )
    paper = f"; paper: {sizes(paper_sizes)}" if paper_sizes else ""
    group.add_argument(
        "--max-sizes",
        type=set_size_list,
        metavar="M1,M2,...",
        help=f"maximum sizes of the test sets (default: "
        f"{sizes(defaults['max_sizes'])}; --quick: "
        f"{sizes(quick['max_sizes'])}{paper})",
    )

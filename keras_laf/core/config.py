"""Configuration of keras-laf: how many values LAF computes at once.

LAF sums one exponential per element, feature, unit and term over each
set. The set axis is cut into chunks, and only one chunk's exponentials
exist at a time. The chunk budget is how many of those values a chunk may
hold, all sets of a batch together. Where a batch of padded sets is known,
when traced, to fit one chunk (small sets; not in TensorFlow's XLA
programs, traced for any batch size), its exponentials are kept for the
gradient, which then computes none. On a CPU a chunk that fits the
processor's cache is fastest: its exponentials are summed twice (the power
sums and their derivatives) while they are still in the cache. A smaller
budget uses less memory.

The budget is read when LAF is traced: set it before building, compiling
or calling a model (a function already traced keeps the budget it was
traced with). Set sizes known only at run time (ragged sets) are cut into
chunks too, their number then a run-time value.
"""

from keras_laf.core import devices
from keras_laf.core.validation import describe_received
from keras_laf.core.validation import is_int

AUTO = "auto"
LAYOUTS = ("padded", "segments")
# Padded sets on a GPU are one chunk: XLA's GPU compiler fuses the
# exponentials into their sums and stores none of them; its CPU compiler
# stores each chunk's, best in the cache (2**19 float32 values: 2 MiB).
DEFAULT_CHUNK_BUDGETS = {
    "padded": {"cpu": 2**19, "gpu": None},
    "segments": {"cpu": 2**21, "gpu": 2**21},
}

_chunk_budgets = {"padded": AUTO, "segments": AUTO}


def _checked_budget(name, value):
    if value is None or value == AUTO:
        return value
    if not is_int(value) or value < 1:
        raise ValueError(
            f"`{name}` expected a positive integer (values per chunk), None "
            f"(every set is one chunk) or {AUTO!r} (the default for the "
            f"device). Received: {describe_received(name, value)}"
        )
    return int(value)


def set_chunk_budget(padded=AUTO, segments=AUTO):
    """Sets how many values LAF computes at once per chunk of the set axis.

    Args:
        padded: int, None or `"auto"`. Values per chunk of padded (and
            ragged) sets, all sets of the batch together: a chunk holds
            `padded / (sets * features * 4 * units)` elements of every set,
            rounded down to a power of 2, at least 1. None makes every set
            one chunk. `"auto"` picks by device: `2**19` on a CPU, None on a
            GPU. Defaults to `"auto"`.
        segments: int, None or `"auto"`. Values per chunk of flat elements
            (segment ids), all sets together; `"auto"` is `2**21`.
            Defaults to `"auto"`.

    Example:

    >>> keras_laf.config.set_chunk_budget(padded=2**15)
    >>> keras_laf.config.chunk_budget("padded")
    32768
    >>> keras_laf.config.set_chunk_budget()  # back to the defaults
    """
    budgets = {
        "padded": _checked_budget("padded", padded),
        "segments": _checked_budget("segments", segments),
    }
    _chunk_budgets.update(budgets)


def chunk_budget(layout="padded"):
    """The chunk budget in effect for a layout (see `set_chunk_budget`).

    Args:
        layout: `"padded"` or `"segments"`. Defaults to `"padded"`.

    Returns:
        The values per chunk, an int, or None when every set is one chunk.
    """
    if layout not in LAYOUTS:
        raise ValueError(
            f"`layout` expected one of {LAYOUTS}. Received: layout={layout!r}"
        )
    budget = _chunk_budgets[layout]
    if budget != AUTO:
        return budget
    return DEFAULT_CHUNK_BUDGETS[layout][devices.platform()]

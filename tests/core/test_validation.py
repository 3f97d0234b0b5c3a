"""The argument checks of keras_laf.core.validation: what each accepts, what it
rejects, and that its message names the argument and the received value."""

import math
import re

import numpy as np
import pytest

from keras_laf.core import validation

pytestmark = pytest.mark.multi_backend

INF = float("inf")
NAN = float("nan")


def rejects(check, value, *args, **kwargs):
    """Asserts `check("arg", value, ...)` raises, naming `arg` and `value`."""
    with pytest.raises(ValueError) as error:
        check("arg", value, *args, **kwargs)
    message = str(error.value)
    assert message.startswith("`arg` expected ")
    received = validation.describe_received("arg", value)
    assert message.endswith(f"Received: {received}")
    assert re.search(rf"arg={re.escape(repr(value))}", message)
    return message


@pytest.mark.parametrize(
    "check",
    [
        validation.check_number,
        validation.check_positive_number,
        validation.check_open_unit_interval,
        validation.check_int,
        validation.check_positive_int,
        validation.check_non_negative_int,
        validation.check_seed,
        validation.check_bool,
    ],
)
@pytest.mark.parametrize("value", ["3", [1], object()])
def test_every_check_rejects_non_numbers(check, value):
    rejects(check, value)


@pytest.mark.parametrize(
    "check",
    [
        validation.check_number,
        validation.check_positive_number,
        validation.check_open_unit_interval,
        validation.check_int,
        validation.check_positive_int,
        validation.check_non_negative_int,
        validation.check_seed,
    ],
)
@pytest.mark.parametrize("value", [True, False])
def test_numeric_checks_reject_bools(check, value):
    message = rejects(check, value)
    assert "(of type bool)" in message


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"allow_inf": True}, {"minimum": 0}, {"above": 0, "below": 1}],
)
def test_check_number_rejects_nan(kwargs):
    rejects(validation.check_number, NAN, **kwargs)


def test_check_number_accepts_python_and_numpy_numbers():
    for value in (2, 2.0, np.float32(2.0), np.int64(2), np.float64(2.0)):
        result = validation.check_number("arg", value)
        assert result == 2.0 and type(result) is float


@pytest.mark.parametrize(
    "kwargs, accepted, rejected, words",
    [
        ({"minimum": 0, "below": 1}, [0, 0.5, 0.999], [-0.1, 1], "in [0, 1)"),
        ({"minimum": 0, "maximum": 1}, [0, 0.5, 1], [-1e-9, 1.5], "in [0, 1]"),
        ({"above": 0, "below": 1}, [1e-9, 0.5], [0, 1.0], "in (0, 1)"),
        ({"above": 1}, [1.5, 100], [1, 0.5], "above 1"),
        ({"minimum": 0}, [0, 3.0], [-1], "of at least 0"),
    ],
)
def test_check_number_bounds(kwargs, accepted, rejected, words):
    for value in accepted:
        assert validation.check_number("arg", value, **kwargs) == value
    for value in rejected:
        assert words in rejects(validation.check_number, value, **kwargs)


def test_check_number_infinity_only_where_allowed():
    for value in (INF, -INF):
        assert "finite" in rejects(validation.check_number, value)
    assert validation.check_number("arg", INF, allow_inf=True) == INF
    assert validation.check_number("arg", -INF, allow_inf=True) == -INF
    # The bounds still hold for infinities.
    rejects(validation.check_number, -INF, minimum=0, allow_inf=True)
    assert validation.check_number("arg", INF, minimum=0, allow_inf=True)


def test_check_positive_number():
    assert validation.check_positive_number("arg", 1e-12) == 1e-12
    assert validation.check_positive_number("arg", np.float32(3)) == 3.0
    assert validation.check_positive_number("arg", INF, allow_inf=True) == INF
    for value in (0, -1.0, INF, NAN):
        rejects(validation.check_positive_number, value)
    for value in (0, -INF, NAN):
        message = rejects(
            validation.check_positive_number, value, allow_inf=True
        )
        assert "above 0 (inf included)" in message


def test_check_open_unit_interval():
    assert validation.check_open_unit_interval("arg", 0.25) == 0.25
    for value in (0, 1, -0.5, 1.5, NAN, INF):
        assert "in (0, 1)" in rejects(
            validation.check_open_unit_interval, value
        )


def test_integer_checks():
    assert validation.check_int("arg", -3) == -3
    assert validation.check_int("arg", 7, minimum=5) == 7
    assert "an integer of at least 5" in rejects(
        validation.check_int, 4, minimum=5
    )
    assert validation.check_positive_int("arg", np.int32(4)) == 4
    assert "a positive integer" in rejects(validation.check_positive_int, 0)
    assert validation.check_non_negative_int("arg", 0) == 0
    assert type(validation.check_non_negative_int("arg", np.int64(2))) is int
    assert "a non-negative integer" in rejects(
        validation.check_non_negative_int, -1
    )
    for check in (
        validation.check_int,
        validation.check_positive_int,
        validation.check_non_negative_int,
    ):
        # Floats are rejected, even integral ones.
        rejects(check, 3.0)
        rejects(check, NAN)


def test_check_seed():
    assert validation.check_seed("arg", None) is None
    assert validation.check_seed("arg", 0) == 0
    assert validation.check_seed("arg", np.int64(-5)) == -5
    for value in (1.0, NAN, "0"):
        assert "an integer or None" in rejects(validation.check_seed, value)


def test_check_bool():
    assert validation.check_bool("arg", True) is True
    assert validation.check_bool("arg", np.bool_(False)) is False
    for value in (0, 1, 1.0, NAN, None, "True"):
        assert "a bool" in rejects(validation.check_bool, value)


def test_predicates():
    assert validation.is_int(3) and validation.is_int(np.int8(3))
    assert not validation.is_int(True) and not validation.is_int(3.0)
    assert validation.is_number(3) and validation.is_number(np.float16(3))
    assert validation.is_number(NAN) and not math.isfinite(NAN)
    assert not validation.is_number(False) and not validation.is_number("3")

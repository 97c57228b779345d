"""How a setting's value is checked and converted, whether typed on the command line, read from an
ini file (a string) or given natively by TOML (a number or a boolean).

The rules and the words are those users have seen since the settings were a pydantic model (so
`--parity-tail=-1` still says `input should be greater than or equal to 0`); plain functions, so a
gate run imports no validation library for a dozen options.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Optional, TypeVar

T = TypeVar("T")
Check = Callable[[Any], T]

#: an integer as a string: digits (underscores between them), a sign, a fraction of zeros only
_INTEGER = re.compile(r"[+-]?\d+(?:_\d+)*(?:\.0+)?")
_TRUE = frozenset(("1", "on", "t", "true", "y", "yes"))
_FALSE = frozenset(("0", "off", "f", "false", "n", "no"))
#: the largest integer read as a boolean's 0 or 1 at all (beyond it: not a boolean)
_INT64 = 2**63 - 1


class SettingError(ValueError):
    """A setting's value is unusable: ``message`` says why, ``field_name`` which setting."""

    def __init__(self, message: str, field_name: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field_name = field_name


def checked_as(field_name: str, check: Check[T], value: Any) -> T:
    """``check(value)``, its error naming ``field_name``."""
    try:
        return check(value)
    except SettingError as exc:
        raise SettingError(exc.message, field_name) from None


def as_int(value: Any) -> int:
    """An integer: an int, a float without a fraction, or a string of one."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SettingError("Input should be a finite number")
        if not value.is_integer():
            raise SettingError("Input should be a valid integer, got a number with a fractional part")
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if not _INTEGER.fullmatch(text):
            raise SettingError("Input should be a valid integer, unable to parse string as an integer")
        return int(text.partition(".")[0].replace("_", ""))
    raise SettingError("Input should be a valid integer")


def as_float(value: Any) -> float:
    """A number: an int, a float, or a string of one."""
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise SettingError("Input should be a valid number, unable to parse string as a number") from None
    raise SettingError("Input should be a valid number")


def as_bool(value: Any) -> bool:
    """A boolean: True/False, 0/1, or a word for one (`yes`, `off`, `t`, ...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) <= _INT64:
        if value in (0, 1):
            return bool(value)
        raise SettingError("Input should be a valid boolean, unable to interpret input")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if value in (0.0, 1.0):
            return bool(value)
        raise SettingError("Input should be a valid boolean, unable to interpret input")
    if isinstance(value, str):
        word = value.lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise SettingError("Input should be a valid boolean, unable to interpret input")
    raise SettingError("Input should be a valid boolean")


def finite(convert: Check[float]) -> Check[float]:
    """``convert``, then refuse NaN and infinities."""

    def check(value: Any) -> float:
        number = convert(value)
        if not math.isfinite(number):
            raise SettingError("Input should be a finite number")
        return number

    return check


def at_least(bound: int, convert: Check[Any]) -> Check[Any]:
    """``convert``, then refuse a value below ``bound``."""

    def check(value: Any) -> Any:
        number = convert(value)
        if not number >= bound:
            raise SettingError(f"Input should be greater than or equal to {bound}")
        return number

    return check


def below(bound: int, *, above: int, convert: Check[float]) -> Check[float]:
    """``convert``, then refuse a value outside the open interval (``above``, ``bound``)."""

    def check(value: Any) -> float:
        number = convert(value)
        if not number < bound:
            raise SettingError(f"Input should be less than {bound}")
        if not number > above:
            raise SettingError(f"Input should be greater than {above}")
        return number

    return check


def not_blank(message: str) -> Check[str]:
    """A string with something in it besides whitespace (else ``message``)."""

    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise SettingError("Input should be a valid string")
        if not value.strip():
            raise SettingError(message)
        return value

    return check


def optional(check: Check[T]) -> Check[Optional[T]]:
    """None as it is, anything else through ``check``."""

    def checked(value: Any) -> Optional[T]:
        return None if value is None else check(value)

    return checked

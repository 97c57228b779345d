"""The settings' checks say what the pydantic model they replace said, value for value.

pydantic is installed with the plugin (its core parses rows), so the old model is rebuilt here and
each value a command line, an ini file or TOML can give is checked by both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import VERSION, BaseModel, Field, ValidationError, field_validator

from pytest_rollout_parity.plugin.setting_values import SettingError
from pytest_rollout_parity.plugin.settings import ParitySettings


class _PydanticSettings(BaseModel):
    """The checked fields as the pydantic model declared them."""

    key: Optional[str] = None
    tail: int = Field(15, ge=0)
    strict: bool = False
    margin: Optional[float] = Field(None, ge=0, allow_inf_nan=False)
    alpha: float = Field(0.05, gt=0, lt=1)

    @field_validator("key")
    @classmethod
    def _key_not_blank(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not value.strip():
            raise ValueError("must name a field")
        return value


VALUES: list[Any] = [
    *("-1", "abc", "1.5", "", " 3 ", "15", "0", "1", "1.0", "1.", "2", "+3", "01", "1_000", "1 000", " ", "\t"),
    *("true", "TRUE", " yes ", "no", "off", "on", "maybe", "t", "f", "y", "n", "0x10", "1e3", ".5", "5."),
    *("nan", "inf", "-inf", "infinity", "0.05", "1e-3", "-0.0", "3%"),
    *(0, 1, 2, -1, 1.5, 0.0, 1.0, 2.0, True, False, float("nan"), float("inf"), 10**30, None, [], ["a"]),
]


def _pydantic(field: str, value: Any) -> tuple[str, Any]:
    try:
        return "ok", getattr(_PydanticSettings(**{field: value}), field)
    except ValidationError as exc:
        return "error", exc.errors()[0]["msg"].removeprefix("Value error, ")


def _ours(field: str, value: Any) -> tuple[str, Any]:
    try:
        return "ok", getattr(ParitySettings(Path("old.jsonl"), Path("new.jsonl"), **{field: value}), field)
    except SettingError as exc:
        assert exc.field_name == field
        return "error", exc.message


#: the pydantic release whose checks and words the settings copy; older releases parse some strings
#: otherwise (2.5 refuses `" 3 "` as an integer), so the comparison is made against this one or newer
REFERENCE = (2, 14)


@pytest.mark.skipif(
    tuple(int(part) for part in VERSION.split(".")[:2]) < REFERENCE,
    reason=f"the settings copy pydantic {REFERENCE[0]}.{REFERENCE[1]}'s checks; this is pydantic {VERSION}",
)
@pytest.mark.parametrize("field", ["key", "tail", "strict", "margin", "alpha"])
def test_each_value_is_taken_or_refused_as_the_pydantic_model_did(field: str) -> None:
    for value in VALUES:
        expected, got = _pydantic(field, value), _ours(field, value)
        assert got == expected, value
        assert type(got[1]) is type(expected[1]), value


def test_the_first_unusable_setting_in_field_order_is_named() -> None:
    with pytest.raises(SettingError) as caught:
        ParitySettings(Path("old.jsonl"), Path("new.jsonl"), tail="-1", alpha="2")
    assert (caught.value.field_name, caught.value.message) == ("tail", "Input should be greater than or equal to 0")

"""Each setting's check: a value as a command line, an ini file (a string) or TOML (a number or a
boolean) gives it is converted, or refused with what the setting must be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.core import parse_limit
from pytest_rollout_parity.plugin.options import OPTION, ParitySettings

REFUSED = object()

CASES: list[tuple[str, Any, Any]] = [
    *(("tail", given, 3) for given in ("3", " 3 ", "+3", 3)),
    *(("tail", given, 0) for given in ("0", "-0", 0)),
    *(("tail", given, REFUSED) for given in ("-1", "1.5", "", "abc", "1e3", "³", True, 2.0, None)),
    *(("margin", given, 0.02) for given in ("0.02", " 0.02 ", 0.02)),
    ("margin", 0, 0.0),
    ("margin", None, None),
    *(("margin", given, REFUSED) for given in ("-0.1", "nan", "inf", "abc", "", float("inf"), False)),
    *(("alpha", given, 0.001) for given in ("1e-3", 0.001)),
    *(("alpha", given, REFUSED) for given in ("0", 1, "1", "-0.5", "nan", "x")),
    *(("strict", given, True) for given in ("yes", "TRUE", " on ", "t", "1", 1, True)),
    *(("strict", given, False) for given in ("no", "Off", "f", "0", 0, False)),
    *(("strict", given, REFUSED) for given in ("maybe", 2, "2", 1.0, None)),
    ("key", "task_id", "task_id"),
    ("key", None, None),
    *(("key", given, REFUSED) for given in ("", " ", "\t", 3)),
    ("max_missing", "10%", parse_limit("10%")),
    ("max_missing", 3, parse_limit("3")),
    ("max_missing", "off", parse_limit("off")),
    *(("max_missing", given, REFUSED) for given in ("-1", "101%", "many", 1.5, True)),
]


@pytest.mark.parametrize(("field", "given", "expected"), CASES)
def test_a_value_is_taken_or_refused(field: str, given: Any, expected: Any) -> None:
    if expected is REFUSED:
        with pytest.raises(pytest.UsageError) as caught:
            ParitySettings(Path("old.jsonl"), Path("new.jsonl"), **{field: given})
        assert str(caught.value).startswith(f"{OPTION[field].flag}: must ")
    else:
        taken = getattr(ParitySettings(Path("old.jsonl"), Path("new.jsonl"), **{field: given}), field)
        assert (taken, type(taken)) == (expected, type(expected))


def test_the_defaults_are_checked_values() -> None:
    settings = ParitySettings(Path("old.jsonl"), Path("new.jsonl"))
    assert (settings.tail, settings.alpha, settings.margin, settings.strict) == (15, 0.05, None, False)
    assert settings.max_uncompared == parse_limit("20%")


def test_the_first_unusable_setting_in_field_order_is_named() -> None:
    with pytest.raises(pytest.UsageError) as caught:
        ParitySettings(Path("old.jsonl"), Path("new.jsonl"), tail="-1", alpha="2")
    assert str(caught.value) == "--parity-tail: must be a whole number, 0 or more, got '-1'"

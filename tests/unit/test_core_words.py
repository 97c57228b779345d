"""The core words no surface's settings and no pytest outcome: its messages hold slots, which the
plugin and the Python API each fill with their own names (`--parity-key`, `key=`).

The check reads every string literal of the core, docstrings included, and every comment: the
core's own documentation speaks of the settings and of expected failures in its own terms.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

import pytest_rollout_parity.core as core
from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core import API_NAMES, CompareInputError, OptionNames
from pytest_rollout_parity.core.reading.agents import HOW_TO_CHOOSE
from pytest_rollout_parity.core.vocabulary import SLOTS, has_slot
from pytest_rollout_parity.plugin.option_names import PLUGIN_NAMES
from pytest_rollout_parity.plugin.options import OPTIONS

CORE = Path(core.__file__).parent
#: a plugin option (`--parity-key`) or a pytest outcome (`xfail`, `xfails`, `xfailed`)
FORBIDDEN = re.compile(r"--parity-|xfail", re.IGNORECASE)
#: the one literal allowed: the outcome a `pytest_parity_verdict` hook returns, documented data of
#: the JSON summary (`hook_verdict.outcome`), kept as the hook's users write it
ALLOWED = {("judging/hook_verdict.py", '"xfail"')}
TEXT_TOKENS = {tokenize.STRING, tokenize.COMMENT} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def forbidden_words(source: str) -> list[str]:
    """Every string literal (docstrings included) and comment of ``source`` that names a plugin option
    or a pytest outcome."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [token.string for token in tokens if token.type in TEXT_TOKENS and FORBIDDEN.search(token.string)]


def test_no_core_module_names_a_plugin_option_or_a_pytest_outcome() -> None:
    found = [
        (path.relative_to(CORE).as_posix(), text)
        for path in sorted(CORE.rglob("*.py"))
        for text in forbidden_words(path.read_text(encoding="utf-8"))
    ]
    assert [hit for hit in found if hit not in ALLOWED] == []
    assert set(found) == ALLOWED  # the one exception is still there to be allowed


@pytest.mark.parametrize(
    "source",
    [
        'NOTE = "see --parity-json"\n',
        'def f():\n    """Xfails with a reason."""\n',
        "x = 1  # mapped to pytest.xfail\n",
        'x = f"use --parity-key {name}"\n',
    ],
)
def test_the_check_finds_a_word_that_comes_back(source: str) -> None:
    assert forbidden_words(source) != []


def test_each_setting_the_core_names_is_a_slot_some_core_message_uses() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in CORE.rglob("*.py"))
    unused = [name for name in OptionNames.__dataclass_fields__ if f"SLOTS.{name}" not in text]
    assert unused == []


def test_the_plugin_words_each_setting_as_its_command_line_option() -> None:
    flags = {option.flag for option in OPTIONS}
    words = [getattr(PLUGIN_NAMES, name) for name in OptionNames.__dataclass_fields__]
    assert all(word in flags for word in words), words
    assert PLUGIN_NAMES.word(HOW_TO_CHOOSE) == (
        "choose one with --parity-agent NAME (both sides) or --parity-old-agent / --parity-new-agent NAME"
    )


def test_the_api_words_each_setting_its_own_way() -> None:
    assert API_NAMES.word(HOW_TO_CHOOSE) == "choose one with agent= NAME (both sides) or old_agent= / new_agent= NAME"
    assert not any(getattr(API_NAMES, name).startswith("--") for name in OptionNames.__dataclass_fields__)


def test_word_fills_every_slot_and_leaves_other_text_alone() -> None:
    text = f"use {SLOTS.key} or {SLOTS.agent}; {{key}} and key stay"
    assert has_slot(text)
    worded = PLUGIN_NAMES.word(text)
    assert worded == "use --parity-key or --parity-agent; {key} and key stay" and not has_slot(worded)
    assert PLUGIN_NAMES.word("no slot here") == "no slot here"
    assert PLUGIN_NAMES.word_data({"a": [f"x {SLOTS.json}", 1, None]}) == {"a": ["x --parity-json", 1, None]}


def test_an_api_error_is_in_the_apis_words() -> None:
    rows = [{"_ng_task_id": "a", "reward": 1.0, "agent_ref": {"name": name}} for name in ("x", "y")]
    with pytest.raises(CompareInputError) as info:
        compare_rollouts(rows, rows)
    message = str(info.value)
    assert message.endswith("choose one with agent= NAME (both sides) or old_agent= / new_agent= NAME")
    assert not has_slot(message) and not has_slot(info.value.reason)


def test_an_api_result_is_in_the_apis_words() -> None:
    names = [f"task-{n:03d}" for n in range(12)]
    old = [{"_ng_task_id": name, "reward": 1.0} for name in names for _ in range(2)]
    new = [{"_ng_task_id": name, "reward": 1.0} for name in names]
    notes = compare_rollouts(old, new).notes
    assert any(note.endswith(" and 2 more (see summary_dict())") for note in notes), notes
    assert not any(has_slot(note) for note in notes)

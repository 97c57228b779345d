"""The settings the core's messages name, as slots each surface fills with its own words.

The core is driven from two surfaces that spell the same setting differently: the pytest plugin
(its command-line options) and the Python API (its keyword arguments, `key=`). A core message that points at a setting writes the
slot of :data:`SLOTS` (``f"use {SLOTS.key}"``); the surface that shows the message words it with
its own :class:`OptionNames` (:meth:`OptionNames.word`). Renderers take the names as an argument,
and the errors the core raises are worded where they reach the user, so the core holds no
surface's spelling of any setting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, TypeVar

T = TypeVar("T")

#: what opens and closes a slot: private-use characters, which no report escapes or writes itself
_OPEN, _CLOSE = "\ue000", "\ue001"
_SLOT = re.compile(f"{_OPEN}([a-z_]+){_CLOSE}")


@dataclass(frozen=True)
class OptionNames:
    """One surface's name for each setting a core message may name (a field a setting)."""

    #: the machine-readable summary file
    json: str
    #: the join field of both sides
    key: str
    #: the agent kept on both sides, and on one side
    agent: str
    old_agent: str
    new_agent: str
    #: the reviewed list of accepted flips
    known_flips: str
    #: the equivalence margin
    margin: str
    #: the self-contained HTML report
    html: str

    def word(self, text: str) -> str:
        """``text`` with each slot it holds replaced by this surface's name for the setting."""
        if _OPEN not in text:
            return text
        return _SLOT.sub(lambda match: str(getattr(self, match.group(1), match.group())), text)

    def word_data(self, data: T) -> T:
        """``data`` (JSON-shaped: dicts, lists, strings, numbers) with every string worded."""
        return _worded(data, self)  # type: ignore[no-any-return]


def _worded(data: Any, names: OptionNames) -> Any:
    if isinstance(data, str):
        return names.word(data)
    if isinstance(data, dict):
        return {key: _worded(value, names) for key, value in data.items()}
    if isinstance(data, list):
        return [_worded(value, names) for value in data]
    return data


#: the slot of each setting, for the core's messages to hold until a surface words them
SLOTS = OptionNames(**{field.name: f"{_OPEN}{field.name}{_CLOSE}" for field in fields(OptionNames)})


def has_slot(text: str) -> bool:
    """Whether ``text`` still holds a slot no surface has worded."""
    return _OPEN in text

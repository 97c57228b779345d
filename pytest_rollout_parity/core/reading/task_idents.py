"""A task's ident: a join value as (taskset, task id), a row's task named in messages, label order.

Every join value a row gives (an id, an index, a prompt's label, a `{taskset, task_id}` object) is
reduced to one :data:`TaskIdent` as the row is read; the join (:mod:`..identity.join`) labels them.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Union

from .fields import KEY_CANDIDATES, PROMPT
from .prompt_labels import canonical_json, prompt_label
from .row_facts import lookup

#: (taskset or None, task id)
TaskIdent = tuple[Optional[str], str]

_DIGITS = re.compile(r"(\d+)")

#: A label cut into text and numbers; a number compares by its magnitude (length, then digits).
NaturalKey = tuple[tuple[Union[str, tuple[int, str]], ...], str]


def ident_of(value: Any) -> TaskIdent:
    """A join value as (taskset, task id): `{taskset, task_id|id}` objects, else a canonical string."""
    if isinstance(value, dict):
        task_id = value.get("task_id")
        if task_id is None:
            task_id = value.get("id")
        if task_id is not None:
            taskset = value.get("taskset")
            return (None if taskset is None else _text(taskset), _text(task_id))
    return (None, _text(value))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return canonical_json(value) if isinstance(value, (dict, list)) else str(value)


def describe_row_task(row: dict[str, Any], key: Optional[str]) -> Optional[str]:
    """The row's task as `taskset/task_id` or the plain id, for error messages; None when unnamed."""
    for name in (key,) if key else KEY_CANDIDATES:
        value = prompt_label(lookup(row, name)) if name == PROMPT else lookup(row, name)
        if value is not None:
            return full_label(ident_of(value))
    return None


def full_label(ident: TaskIdent) -> str:
    """`taskset/task_id`, or the task id alone for an ident without a taskset."""
    taskset, task_id = ident
    return f"{taskset}/{task_id}" if taskset is not None else task_id


def natural_key(label: str) -> NaturalKey:
    """Sort key putting `task-2` before `task-10` (and `7` before `10`); ties fall back to the label."""
    parts = _DIGITS.split(label)
    key: list[Union[str, tuple[int, str]]] = []
    for index, part in enumerate(parts):
        if index % 2:
            digits = part.lstrip("0") or "0"
            key.append((len(digits), digits))
        else:
            key.append(part)
    return tuple(key), label

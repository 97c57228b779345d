"""A task's ident: each join value a row gives (an id, an index, a prompt's label, a `{taskset,
task_id}` object) as one :data:`TaskIdent`. Prompts run to many kilobytes, so a row keeps only its
label, the same in every run and on every machine; different prompts share one by chance with odds
of about n²/2⁴⁹ for n distinct prompts."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Optional, Union

from .fields import KEY_CANDIDATES, PROMPT
from .row_facts import lookup

PREFIX_MAX_CHARS = 32
HASH_HEX_DIGITS = 12

_WORD = re.compile(r"\w+")


def canonical_json(value: Any) -> str:
    """One spelling per JSON value: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def prompt_hash(value: Any) -> str:
    """A stable hash of the prompt's canonical JSON (blake2b, 16 bytes), as hex."""
    data = canonical_json(value).encode("utf-8", "surrogatepass")
    import hashlib  # here: it loads OpenSSL, which the reader child does not otherwise need

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def content_text(content: Any, separator: str = " ") -> str:
    """The text of a message's content: a string, or the `text` of each part, joined by ``separator``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return separator.join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def last_user_text(prompt: Any) -> str:
    """The text of the prompt's last user message (a plain string prompt is one)."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        for message in reversed(prompt):
            if isinstance(message, dict) and message.get("role") == "user":
                text = content_text(message.get("content"))
                if text.strip():
                    return text
    return ""


def common_start(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items (messages, characters) ``a`` and ``b`` share."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def is_prompt(value: Any) -> bool:
    """A prompt that can tell a task apart: not null, `""`, `[]` or `{}`."""
    return value is not None and not (isinstance(value, (str, list, dict)) and not value)


def prompt_label(prompt: Any) -> Optional[str]:
    """A prompt's task label, e.g. `could-we-set-the-performance-3fa2b1c0d4e5` (the first words of
    its last user message, then its hash); None when empty."""
    if not is_prompt(prompt):
        return None
    slug = ""
    for word in _WORD.findall(last_user_text(prompt).lower()):
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > PREFIX_MAX_CHARS:
            slug = slug or word[:PREFIX_MAX_CHARS]
            break
        slug = candidate
    return f"{slug or 'prompt'}-{prompt_hash(prompt)[:HASH_HEX_DIGITS]}"


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
    key: list[Union[str, tuple[int, str]]] = list(parts)
    for index in range(1, len(parts), 2):  # the numbers: every other part
        digits = parts[index].lstrip("0") or "0"
        key[index] = (len(digits), digits)
    return tuple(key), label

"""An id field inferred from both sides' rows, and how a side's prompts name its tasks.

A side's vote keeps, beside the known id fields, the fields its rows show that may name a task
(:func:`fields.inferred_candidates`) and that hold one task a value on that side. Which of them
names the same tasks on both sides is seen only with both: the one sharing the most values wins
(ties: top level before nested, then by name). The rules are in docs/semantics.md, "Inferred id
fields" and "Prompts and the task index".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..reading.prompt_labels import canonical_json, decoded, is_prompt, prompt_label
from ..reading.task_idents import TaskIdent

Column = Sequence[Optional[TaskIdent]]


@dataclass(frozen=True)
class Ranked:
    """An inferred field and how many tasks of each side it joins."""

    name: str
    joined: int
    old_tasks: int
    new_tasks: int

    @property
    def order(self) -> tuple[int, bool, str]:
        """Most joined first; then top-level fields before nested ones, then by name."""
        return (-self.joined, "." in self.name, self.name)


def _tasks(column: Column) -> set[str]:
    return {ident[1] for ident in column if ident is not None}


def rank_inferred(old: Mapping[str, Column], new: Mapping[str, Column]) -> list[Ranked]:
    """The fields both sides hold that share at least one value, best first."""
    ranked = []
    for name in old.keys() & new.keys():
        old_tasks, new_tasks = _tasks(old[name]), _tasks(new[name])
        joined = len(old_tasks & new_tasks)
        if joined:
            ranked.append(Ranked(name, joined, len(old_tasks), len(new_tasks)))
    return sorted(ranked, key=lambda r: r.order)


def shared_count(old: Column, new: Column) -> int:
    """How many task values both columns hold."""
    return len(_tasks(old) & _tasks(new))


def runners_up(ranked: Sequence[Ranked], limit: int = 3) -> str:
    """`a (joins 4), b (joins 2)` for the fields after the first, or ``""``."""
    shown = [f"{r.name} (joins {r.joined})" for r in ranked[1 : 1 + limit]]
    more = len(ranked) - 1 - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


# --- the prompt of a task on one side ------------------------------------------------------


@dataclass(frozen=True)
class TaskPrompt:
    """What a side asked for one task: its rows' one prompt, or (rows whose prompts differ, as a
    rollout's own state in its prompt makes them) the messages every row begins with."""

    label: str
    #: the messages (or the whole prompt) as canonical JSON each; None when the prompt is not read
    messages: Optional[tuple[str, ...]]
    per_rollout: bool = False

    def agrees(self, other: TaskPrompt) -> bool:
        """The same prompt; or, where a side's prompts vary per rollout, one begins with the other."""
        if self.label == other.label:
            return True
        if not (self.per_rollout or other.per_rollout) or self.messages is None or other.messages is None:
            return False
        short, long = sorted((self.messages, other.messages), key=len)
        return bool(short) and long[: len(short)] == short


def _messages(prompt: Any) -> tuple[str, ...]:
    value = decoded(prompt)
    if isinstance(value, list):
        return tuple(canonical_json(message) for message in value)
    return (canonical_json(value),)


def prompt_on_side(
    labels: Sequence[Optional[TaskIdent]], rows: Sequence[int], prompt_at: Callable[[int], Any]
) -> Optional[TaskPrompt]:
    """A side's prompt for the task of ``rows``; None when none of them has one.

    ``prompt_at(row)`` reads a row's prompt again, only when the rows' prompts differ.
    """
    distinct = {label for i in rows if (label := labels[i]) is not None}
    if not distinct:
        return None
    if len(distinct) == 1:
        only = next(iter(distinct))
        return TaskPrompt(only[1], None)
    common: Optional[tuple[str, ...]] = None
    for i in rows:
        prompt = prompt_at(i)
        if not is_prompt(prompt):
            continue
        messages = _messages(prompt)
        if common is None:
            common = messages
            continue
        length = 0
        for a, b in zip(common, messages):
            if a != b:
                break
            length += 1
        common = common[:length]
    common = common or ()
    leading = prompt_label([json.loads(message) for message in common]) if common else None
    return TaskPrompt(
        f"{len(distinct)} prompts beginning {leading}" if leading else f"{len(distinct)} prompts",
        common,
        per_rollout=True,
    )


def with_messages(prompt: TaskPrompt, rows: Sequence[int], prompt_at: Callable[[int], Any]) -> TaskPrompt:
    """The prompt with its messages read (for a one-prompt side facing a per-rollout one)."""
    if prompt.messages is not None:
        return prompt
    for i in rows:
        value = prompt_at(i)
        if is_prompt(value):
            return TaskPrompt(prompt.label, _messages(value), prompt.per_rollout)
    return prompt

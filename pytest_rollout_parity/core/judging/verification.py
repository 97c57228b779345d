"""How each side was run: a copy, a side never verified or verified again by force, and the
conditions each ran under (docs/semantics.md, "Copies", "Unverified sides", "The same conditions").
Every real migration pair in the public repository was a byte-identical copy: "no difference"
alone cannot tell a new server that reproduces the old from one never run. `+skip_verification`
and `gym eval reverify --force` leave no error (a constant side can be real): each is a note.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Optional

from ..model import CompareResult, Side, TaskSide
from ..reading.fields import CONDITIONS
from ..reading.row_facts import embedded_output, logs_dir_of
from .row_context import row_evidence

COPY_NAME = "parity-copy"
"""The item name of the copies check in strict mode."""


def _canonical(side: Optional[TaskSide]) -> Optional[list[str]]:
    """The side's rows as canonical JSON (sorted keys, no spaces), sorted; None without the side, or
    when a row given in memory has keys that do not sort (an int beside a str): not shown a copy."""
    if side is None:
        return None
    try:
        return sorted(json.dumps(row, sort_keys=True, separators=(",", ":"), default=str) for row in side.rows)
    except TypeError:
        return None


def copies_note(
    result: CompareResult,
    old: Optional[str] = None,
    new: Optional[str] = None,
    agents: tuple[Optional[str], Optional[str]] = (None, None),
) -> Optional[str]:
    """The note for two sides that hold the same rows, or None. A flip or a one-sided task is no copy
    whatever the content digests ``old`` and ``new`` (CRC-32s: :mod:`..reading.jsonl_lines`; one can
    be made to collide); equal digests of the same ``agents``' rows need no row read again, else
    every task's rows are compared whole and canonically, the first that differs ending the check
    (a real rerun's differ at once: ids, times)."""
    if not result.tasks or any(t.category not in ("identical", "masked") for t in result.tasks):
        return None
    if old is not None and old == new and agents[0] == agents[1]:
        return "the new file's rows are identical to the old file's (the same bytes): was the new server run?"
    if any(_canonical(t.old) != _canonical(t.new) for t in result.tasks):  # a task has at least one side
        return None
    return "the new file's rows are identical to the old file's (every task has the same rows): was the new server run?"


#: tasks whose first row is read again, per side, to see whether a verifier ran
SAMPLE_TASKS = 200


def _verified(result: CompareResult, side: Side) -> Optional[bool]:
    """Whether a sampled row of the side (the first of each of the first :data:`SAMPLE_TASKS` tasks
    that reports no agent error: such a row never reached a verifier, and its error text is no sign
    of one) shows a verifier ran, by the rule a flip's message shows evidence by: verifier logs,
    embedded output, or the row's own evidence (:func:`.row_evidence`); None when no row could be read."""
    seen = False
    sampled = []
    for task in result.tasks[:SAMPLE_TASKS]:
        half = task.side(side)
        first = next((facts for facts in half.facts if facts.agent_error is None), None) if half else None
        if half is not None and first is not None:
            sampled.append((first.place, half, first))
    for _, half, first in sorted(sampled, key=lambda each: each[0]):  # in file order: one pass
        try:
            row = half.read_row(first)
        except (LookupError, OSError, ValueError):
            continue
        seen = True
        if logs_dir_of(row) or embedded_output(row) or row_evidence(row, 1):
            return True
    return False if seen else None


def verification_notes(result: CompareResult, names: Optional[Sequence[str]] = None) -> list[str]:
    """Notes naming `skip_verification` for a constant or verifier-less side, and `unsafe_` files
    (``names``: every shard's file as shown)."""
    notes: list[str] = []
    rewards = {
        side: [r for task in result.tasks if (half := task.side(side)) for r in half.rewards] for side in ("old", "new")
    }
    verified = {side: _verified(result, side) for side in ("old", "new")}
    for side, other in (("old", "new"), ("new", "old")):
        own, theirs = rewards[side], rewards[other]
        if len(own) >= 2 and len(set(own)) == 1 and len(set(theirs)) >= 2 and not verified[side]:
            notes.append(
                f"the {side} side's reward is {own[0]:g} on every one of its {len(own)} scored rows while the "
                f"{other} side's vary: was it run with +skip_verification (NeMo Gym then writes one "
                "skip_verification_reward, 0.0 by default, on every row, unverified)?"
            )
        elif result.copies is None and verified[side] is False and verified[other] is True:
            notes.append(
                f"the {side} side's rows carry no verifier output where the {other} side's do: was it run "
                "with +skip_verification?"
            )
    for name in names or ():
        if os.path.basename(name).startswith("unsafe_"):
            notes.append(
                f"{name} is named with an unsafe_ prefix, as `gym eval reverify --force` names its outputs: "
                "its rewards were verified again by force, perhaps by another verifier than the other side's"
            )
    return notes


def _values(conditions: Sequence[str]) -> list[set[str]]:
    """Each condition's distinct values over a side's recorded conditions (unrecorded ones left out)."""
    found: list[set[str]] = [set() for _ in CONDITIONS]
    for shown in conditions:
        for values, value in zip(found, json.loads(shown)):
            if value is not None:
                values.add(value if isinstance(value, str) else json.dumps(value))
    return found


def _rollouts(result: CompareResult, side: Side) -> Optional[int]:
    """The side's rollouts a task: how many rows most of its tasks hold (a task retried or partly
    lost holds another count); None without tasks."""
    counts = Counter(len(half.facts) for task in result.tasks if (half := task.side(side)) is not None)
    return max(counts, key=lambda count: (counts[count], -count)) if counts else None


def _counted(values: set[Any], name: str) -> str:
    return ", ".join(sorted(str(value) for value in values)) if len(values) < 4 else f"{len(values)} {name}s"


def with_conditions(result: CompareResult, old: Sequence[str], new: Sequence[str]) -> CompareResult:
    """The result with each side's model, sampling parameters and rollouts a task as its rows record
    them (``old``, ``new``), and a note naming each that differs between the sides."""
    values = {"old": _values(old), "new": _values(new)}
    rollouts = {side: _rollouts(result, side) for side in ("old", "new")}
    shown = []
    for side in ("old", "new"):
        parts = [f"{name} {_counted(found, name)}" for name, found in zip(CONDITIONS, values[side]) if found]
        if rollouts[side] is not None and set(rollouts.values()) != {1}:  # one a task on both: nothing to say
            parts.append(f"{rollouts[side]} rollout(s) a task")
        shown.append(", ".join(parts))
    differ = [
        f"{name} {_counted(o, name)} against {_counted(n, name)}"
        for name, o, n in zip(CONDITIONS, values["old"], values["new"])
        if o and n and o != n
    ]
    if None not in (rollouts["old"], rollouts["new"]) and rollouts["old"] != rollouts["new"]:
        differ.append(f"rollouts a task {rollouts['old']} against {rollouts['new']}")
    models = ("", "")
    if values["old"][0] and values["new"][0] and values["old"][0] != values["new"][0]:
        models = (_counted(values["old"][0], "model"), _counted(values["new"][0], "model"))
    note = "the sides ran under different conditions (old against new): " + "; ".join(differ)
    notes = [*result.notes, note] if differ else result.notes
    return replace(result, conditions=(shown[0], shown[1]), models=models, notes=notes)

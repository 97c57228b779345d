"""Notes for a side that may never have been verified, or was verified again by force.

NeMo Gym's `+skip_verification` writes one constant `skip_verification_reward` (0.0 by default) on
every row and leaves no marker; `gym eval reverify --force` writes its outputs under an `unsafe_`
prefix. Neither is an error (a constant side can be real), so each is a note that names it. The
rules are in docs/semantics.md, "Unverified sides".
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any, Optional

from ..model import CompareResult, Side, TaskSide

#: tasks whose first row is read again, per side, to look for verifier output
SAMPLE_TASKS = 20
#: tasks whose first row is read again, per side, before a constant side is named as maybe unverified
EVIDENCE_SAMPLE_TASKS = 200
#: fields that hold a verifier's output besides its reward
VERIFIER_FIELDS = ("verifier_logs_dir", "test_output", "verifier_stdout", "verifier_output")
#: fields that show a verifier ran, besides its output: a judge's evaluations, a library's own reward
#: (a local list; any field named like `*verifier*` or `*judge*` counts too)
EVIDENCE_FIELDS = (*VERIFIER_FIELDS, "judge_evaluations", "library_reward")


def _scored(result: CompareResult, side: Side) -> list[float]:
    rewards = []
    for task in result.tasks:
        half = task.side(side)
        for facts in half.facts if half is not None else ():
            if facts.mask is None and facts.reward is not None and math.isfinite(facts.reward):
                rewards.append(facts.reward)
    return rewards


def _has_evidence(row: dict[str, Any]) -> bool:
    """The row shows a verifier ran: verifier output, a judge's evaluations or a library's reward."""
    return any(row.get(name) not in (None, "", [], {}) for name in EVIDENCE_FIELDS) or any(
        isinstance(name, str) and ("verifier" in name.lower() or "judge" in name.lower()) for name in row
    )


def _sampled(result: CompareResult, side: Side, tasks: int = SAMPLE_TASKS) -> Optional[bool]:
    """Whether the side's sampled rows (the first of each of the first ``tasks`` tasks) show a
    verifier ran (:func:`_has_evidence`); None when no row could be read."""
    seen = False
    for task in result.tasks[:tasks]:
        half: Optional[TaskSide] = task.side(side)
        if half is None or not half.facts:
            continue
        try:
            row = half.read_row(half.facts[0])
        except (LookupError, OSError, ValueError):
            continue
        seen = True
        if _has_evidence(row):
            return True
    return False if seen else None


def verification_notes(result: CompareResult, names: Optional[Sequence[str]] = None) -> list[str]:
    """Notes naming `skip_verification` for a constant or verifier-less side, and `unsafe_` files.

    ``names`` are the sides' files as shown (every shard's), when the sides were read from files.
    """
    notes: list[str] = []
    rewards = {side: _scored(result, side) for side in ("old", "new")}
    pairs: tuple[tuple[Side, Side], ...] = (("old", "new"), ("new", "old"))
    for side, other in pairs:
        own, theirs = rewards[side], rewards[other]
        if (
            len(own) >= 2
            and len(set(own)) == 1
            and len(set(theirs)) >= 2
            and not _sampled(result, side, EVIDENCE_SAMPLE_TASKS)
        ):
            notes.append(
                f"the {side} side's reward is {own[0]:g} on every one of its {len(own)} scored rows while the "
                f"{other} side's vary: was it run with +skip_verification (NeMo Gym then writes one "
                "skip_verification_reward, 0.0 by default, on every row, unverified)?"
            )
    if result.copies is None:
        carries = {side: _sampled(result, side) for side in ("old", "new")}
        for side, other in (("old", "new"), ("new", "old")):
            if carries[side] is False and carries[other] is True:
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

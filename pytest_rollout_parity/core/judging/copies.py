"""Copies named: two sides that hold the same rows say nothing about the new server.

Every real migration pair in the public repository was a byte-identical copy: a gate that says
only "no difference" cannot tell "the new server reproduces the old" from "the new server was
never run". The rule is in docs/semantics.md, "Copies".
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..model import CompareResult, TaskSide

COPY_NAME = "parity-copy"
"""The item name of the copies check in strict mode."""


def _canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(
        json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str) for row in rows
    )


def _same_side(old: Optional[TaskSide], new: Optional[TaskSide]) -> bool:
    if old is None or new is None or len(old.facts) != len(new.facts):
        return False
    return _canonical(old.rows) == _canonical(new.rows)


def same_rows(result: CompareResult) -> bool:
    """Every task is on both sides with the same rows, compared whole and canonically.

    Cheap checks first: a flip or a task on one side only is no copy, and the first task whose
    rows differ ends the check (the rows of a real rerun differ at once: response ids, times).
    """
    if not result.tasks or any(t.category not in ("identical", "masked") for t in result.tasks):
        return False
    return all(_same_side(t.old, t.new) for t in result.tasks)


def copies_note(result: CompareResult, old: Optional[str] = None, new: Optional[str] = None) -> Optional[str]:
    """The note for two sides that hold the same rows, or None.

    ``old`` and ``new`` are the sides' content digests, when they were read from files (each file's SHA-256
    as read, sidecars included: :mod:`..reading.digest`): the same bytes are then found without
    reading a row again.
    """
    if old is not None and old == new:
        return "the new file's rows are identical to the old file's (the same bytes): was the new server run?"
    if same_rows(result):
        return (
            "the new file's rows are identical to the old file's (every task has the same rows): "
            "was the new server run?"
        )
    return None

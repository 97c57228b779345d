"""The Python API: compare rows in memory (like `gym dev compare`) or two files by streaming."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Optional

from .classify import SideInput, compare_sides
from .errors import CompareInputError
from .loading import LoadedSide, load_side
from .identity import REASON_BORROWED, KeyChoice
from .model import CompareResult, RowFacts, RowReader
from .sides import SideBuilder


def _side_from_rows(rows: Iterable[dict[str, Any]], key: Optional[str], name: str) -> SideInput:
    builder = SideBuilder(key)
    for index, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise CompareInputError(f"{name} rows: row {index}: expected a dict, got {type(row).__name__}")
        builder.add_row(row, f"{name} rows: row {index}", index, -1, keep=True)
    return _input(builder.facts, builder.finish(f"{name} rows"), f"{name} rows")


def _input(facts: list[RowFacts], choice: KeyChoice, name: str, reader: Optional[RowReader] = None) -> SideInput:
    return SideInput(
        facts=facts, values=choice.values, key=choice.key or "", reader=reader,
        reason=choice.reason, notes=choice.notes, prompts=choice.prompts, name=name,
    )


def _borrow_keys(old: SideInput, new: SideInput, key: Optional[str]) -> None:
    """A side with no task-naming rows takes the other side's field."""
    shared = old.key or new.key or key or "_ng_task_id"
    for side in (old, new):
        if not side.key:
            side.key, side.reason = shared, REASON_BORROWED


def compare_rollouts(
    old_rows: Iterable[dict[str, Any]], new_rows: Iterable[dict[str, Any]], key: Optional[str] = None
) -> CompareResult:
    """Compare two sides given as row dicts (from :func:`load_rollouts` or built in memory)."""
    old = _side_from_rows(old_rows, key, "old")
    new = _side_from_rows(new_rows, key, "new")
    if not old.facts and not new.facts:
        raise CompareInputError("no rows on either side: nothing to compare")
    _borrow_keys(old, new, key)
    return compare_sides(old, new)


def _side_input(side: LoadedSide) -> SideInput:
    return _input(side.facts, side.choice, side.display, side.read_row)


def load_pair(
    old_path: str | os.PathLike[str], new_path: str | os.PathLike[str], key: Optional[str] = None
) -> tuple[LoadedSide, LoadedSide]:
    """Stream both files (each with its sidecar) into row facts."""
    return load_side(Path(old_path), key), load_side(Path(new_path), key)


def compare_loaded(old: LoadedSide, new: LoadedSide, key: Optional[str] = None) -> CompareResult:
    """Classify two streamed sides; a side whose rows name no task borrows the other's key."""
    old_input, new_input = _side_input(old), _side_input(new)
    _borrow_keys(old_input, new_input, key)
    return compare_sides(old_input, new_input)


def compare_files(
    old_path: str | os.PathLike[str], new_path: str | os.PathLike[str], key: Optional[str] = None
) -> CompareResult:
    """Compare two rollouts files by streaming them; rows are re-read from disk only on demand."""
    return compare_loaded(*load_pair(old_path, new_path, key), key=key)

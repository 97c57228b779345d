"""The comparison of two cached sides, kept beside them: a rerun and each xdist worker classify nothing again.

A comparison is a function of the two loaded sides and the keys they were joined on, so it is stored
under the keys of both sides' entries (:mod:`.rerun_cache`), which already hold every input's state,
the options that change what is read and the core's code: when both entries are current, so is the
comparison. It is kept as plain values (each task's category and figures, its rows as indices into
its side's row facts) in the same tagged frame as a side (HMAC-SHA256 under the same secret, checked
before anything is decoded), and rebuilt onto the sides this process holds, so every task's rows are
the very row facts (and read from the very files) the sides have.
"""

from __future__ import annotations

from dataclasses import astuple
from hashlib import sha256
from pathlib import Path
from typing import Any, Optional

from ..core import (
    CompareResult,
    Join,
    LoadedSide,
    RowCounts,
    TaskComparison,
    TaskSide,
    frame_plain,
    read_capped,
    unframe_plain,
)
from .rerun_cache import code_state, entry_cap, write_atomically

#: the shape of a stored comparison; another shape is never read
RESULT_SCHEMA = 3
#: the result's fields stored as they are (the tasks are stored apart, the join and the row counts
#: as their fields' values), in this order
_PLAIN_FIELDS = ("notes", "copies", "unjoined")


class NotStored(ValueError):
    """A comparison that cannot be stored as plain values (a row not among its side's facts)."""


def result_key(
    side_keys: list[tuple[Any, ...]], old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]
) -> tuple[Any, ...]:
    """What a stored comparison must have been written under to be used now: its sides' entry keys
    (inputs, options, code), the join keys the comparison was asked for, and each side's path and
    name as shown (its notes name them; one file read once serves two names)."""
    shown = (str(old.path), old.display, str(new.path), new.display)
    return ("comparison", RESULT_SCHEMA, code_state(), tuple(side_keys), old_key, new_key, shown)


def result_path(directory: Path, side_paths: list[Path]) -> Path:
    """One comparison per pair of side entries."""
    name = sha256(repr([str(path) for path in side_paths]).encode()).hexdigest()[:24]
    return directory / f"comparison-{name}.bin"


def _side_plain(side: Optional[TaskSide], index: dict[int, int]) -> Optional[tuple[Any, ...]]:
    if side is None:
        return None
    try:
        rows = tuple(index[id(facts)] for facts in side.facts)
    except KeyError:
        raise NotStored("a task's row is not among its side's row facts") from None
    return (rows, side.reward, side.masked, side.agent_error, side.failure_kind, side.reward_rows)


def to_plain(result: CompareResult, old: LoadedSide, new: LoadedSide) -> tuple[Any, ...]:
    """The comparison as plain values, each task's rows as indices into its side's facts."""
    old_index = {id(facts): i for i, facts in enumerate(old.facts)}
    new_index = old_index if new.facts is old.facts else {id(facts): i for i, facts in enumerate(new.facts)}
    tasks = [
        (
            task.task,
            task.category,
            task.winner,
            task.taskset,
            task.disagreements,
            _side_plain(task.old, old_index),
            _side_plain(task.new, new_index),
        )
        for task in result.tasks
    ]
    fields = tuple(getattr(result, name) for name in _PLAIN_FIELDS)
    return (RESULT_SCHEMA, tasks, astuple(result.join), astuple(result.rows), fields)


def _side_from(plain: Optional[tuple[Any, ...]], side: LoadedSide) -> Optional[TaskSide]:
    if plain is None:
        return None
    rows, reward, masked, agent_error, failure_kind, reward_rows = plain
    facts = side.facts
    return TaskSide([facts[i] for i in rows], reward, masked, agent_error, failure_kind, reward_rows, side.read_row)


def from_plain(plain: Any, old: LoadedSide, new: LoadedSide) -> CompareResult:
    """The comparison :func:`to_plain` was given, rebuilt onto ``old`` and ``new`` (raises on a foreign shape)."""
    schema, tasks, join, rows, fields = plain
    if schema != RESULT_SCHEMA or len(fields) != len(_PLAIN_FIELDS):
        raise ValueError("another shape of stored comparison")
    values = dict(zip(_PLAIN_FIELDS, fields))
    values["notes"] = list(values["notes"])
    rebuilt = [
        TaskComparison(label, category, _side_from(o, old), _side_from(n, new), winner, taskset, disagreements)
        for label, category, winner, taskset, disagreements, o, n in tasks
    ]
    return CompareResult(tasks=rebuilt, join=Join(*join), rows=RowCounts(*rows), **values)


def read_result(
    path: Path, key: tuple[Any, ...], secret: bytes, old: LoadedSide, new: LoadedSide
) -> Optional[CompareResult]:
    """The comparison stored under ``key`` at ``path`` (tagged with ``secret``), rebuilt onto the
    sides; None when absent or unusable. Read as a side's entry is: a regular file, capped by its
    inputs' sizes, its tag checked before its body is decoded."""
    try:
        data = read_capped(path, sum(entry_cap(side_key) for side_key in key[3]), follow=False)
    except OSError:
        return None
    plain = unframe_plain(data, key, secret)
    if plain is None:
        return None
    try:
        return from_plain(plain, old, new)
    except (ValueError, TypeError, IndexError, KeyError):
        return None


def write_result(
    path: Path, key: tuple[Any, ...], secret: bytes, result: CompareResult, old: LoadedSide, new: LoadedSide
) -> bool:
    """Store a comparison atomically (temp file, rename); False when it cannot be stored."""
    try:
        data = frame_plain(key, to_plain(result, old, new), secret)
    except ValueError:
        return False
    return write_atomically(path, data)

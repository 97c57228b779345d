"""The failures sidecar (the collector's `<stem>_failures.jsonl` of failed attempts), and the newest
attempt of a logical rollout.

The newest NeMo Gym collector keeps append-only files: a late result of an older execution stays
but no longer counts (docs/semantics.md, "Reading a side and its sidecar"; a side whose rows never
carry the stamp keeps every main-file row). The side is read once: :class:`Attempts` remembers each
logical rollout's best execution so far; one a later one outranks is *displaced*, and taken out
(:meth:`.side_builder.SideBuilder.drop`) once the side turns out to carry the stamp.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional, TypeVar

from ..errors import CompareInputError
from .fields import ATTEMPT_INDEX, FAILURE_MARKERS, ROLLOUT_ID, ROLLOUT_INDEX, RUN_ID, TASK_INDEX
from .files import check_home, companion, plain_name
from .jsonl_lines import iter_objects, skeleton_decoder

SIDECAR_SUFFIX = "_failures.jsonl"

#: (run id, task index, rollout index), or (run id, "_ng_rollout_id", its value): one logical
#: rollout of a side (one agent's rows).
LogicalKey = tuple[Any, Any, Any]
#: (attempt, 1 for a main-file row and 0 for a sidecar record, line): the highest stands.
Rank = tuple[float, int, int]
#: What ranks a sidecar record: its logical rollout (None: it names none) and its rank.
Execution = tuple[Optional[LogicalKey], Rank]
T = TypeVar("T")


def _hashable(value: Any) -> Any:
    if value is None or isinstance(value, (int, float, str)):
        return value
    return json.dumps(value, sort_keys=True)


def index_pair(row: dict[str, Any]) -> Optional[tuple[Any, Any]]:
    """(task index, rollout index) as a hashable pair, or None when either is missing."""
    task_index, rollout_index = row.get(TASK_INDEX), row.get(ROLLOUT_INDEX)
    if task_index is None or rollout_index is None:
        return None
    return (_hashable(task_index), _hashable(rollout_index))


def logical_key(row: dict[str, Any], pair: Optional[tuple[Any, Any]]) -> Optional[LogicalKey]:
    """The logical rollout a row is an execution of: its `_ng_rollout_id` (NeMo Gym's, when dispatches
    reuse task and rollout indices), else its :func:`index_pair`; None without either."""
    run = _hashable(row.get(RUN_ID))
    explicit = row.get(ROLLOUT_ID)
    if explicit is not None:
        return (run, ROLLOUT_ID, _hashable(explicit))
    if pair is None:
        return None
    return (run, *pair)


def attempt_of(row: dict[str, Any]) -> float:
    """The row's attempt number: its stamp when that is a number, else 0."""
    value = row.get(ATTEMPT_INDEX)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value


class Attempts:
    """The standing execution of every logical rollout of one file and its sidecar. Until a row carries
    the stamp, only the sidecar's pairs (``record_pairs``) are ranked, so a side that never carries it
    keeps nothing; :meth:`unranked_line` says which lines to see again should the stamp come later."""

    def __init__(self, record_pairs: Optional[frozenset[tuple[Any, Any]]]) -> None:
        #: the pairs ranked before the stamp is seen (None: every pair)
        self.record_pairs = record_pairs
        #: each logical rollout's best main-file row so far: its rank and its place among the side's rows
        self.best: dict[LogicalKey, tuple[Rank, int]] = {}
        #: places of main-file rows another execution outranks
        self.displaced: list[int] = []
        #: whether any row or record seen carries the stamp (then the rule applies)
        self.stamped = False
        #: the first main-file line carrying the stamp (None: none did)
        self.stamped_at: Optional[int] = None
        #: whether a main-file row with a logical rollout went unranked
        self.unranked = False
        self.superseded_records = 0

    def see_row(self, row: dict[str, Any], place: int, line: int, pair: Optional[tuple[Any, Any]]) -> None:
        """A main-file row that joined the side at ``place``; ``pair`` its (task, rollout) pair. A row
        left unranked is seen again once the side turned out to carry the stamp: it is ranked then."""
        if not self.stamped and ATTEMPT_INDEX in row:
            self.stamped, self.stamped_at = True, line
        key = logical_key(row, pair)
        if key is not None and not self.stamped and self.record_pairs is not None and pair not in self.record_pairs:
            self.unranked = True
        elif key is not None:
            rank, known = (attempt_of(row), 1, line), self.best.get(key)
            if known is not None and rank <= known[0]:
                self.displaced.append(place)
                return
            if known is not None:
                self.displaced.append(known[1])
            self.best[key] = (rank, place)

    def see_record(self, record: dict[str, Any], line: int) -> Execution:
        """A sidecar record's execution (:meth:`standing_records` ranks it); its stamp marks the side."""
        self.stamped = self.stamped or ATTEMPT_INDEX in record
        return logical_key(record, index_pair(record)), (attempt_of(record), 0, line)

    def unranked_line(self, line: int, pair: Optional[tuple[Any, Any]]) -> bool:
        """Whether a main-file line read again is one :meth:`see_row` left unranked (a row naming its
        rollout by `_ng_rollout_id` alone has no pair, and is one)."""
        before_stamp = self.stamped_at is None or line < self.stamped_at
        return before_stamp and self.record_pairs is not None and pair not in self.record_pairs

    def standing_records(self, records: Sequence[tuple[Execution, T]]) -> list[T]:
        """Of a side's sidecar records, those that stand; a main-file row a record outranks is
        displaced. Without the stamp every record is attempt 0: the last of its rollout stands when
        no main-file row is of it (docs/semantics.md, "Reading a side and its sidecar")."""
        top: dict[LogicalKey, Rank] = {}
        for (key, rank), _ in records:
            if key is not None and (key not in top or rank > top[key]):
                top[key] = rank
        standing = []
        for (key, rank), prepared in records:
            main = self.best.get(key) if key is not None else None
            if key is None or (rank == top[key] and (main is None or rank > main[0])):
                standing.append(prepared)
            else:
                self.superseded_records += 1
        for key, rank in top.items():
            main = self.best.get(key)
            if main is not None and rank > main[0]:
                self.displaced.append(main[1])
        return standing


def is_failure_record(row: dict[str, Any]) -> bool:
    """A failure record of the collector, wherever it ended up (sidecar, or a merged main file)."""
    return any(marker in row for marker in FAILURE_MARKERS)


def _sidecar_name(path: Path) -> Path:
    return path.with_name(Path(plain_name(path.name)).stem + SIDECAR_SUFFIX)


def sidecar_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_failures.jsonl` beside it (the collector's `failures_path_for`), also
    for `<stem>.jsonl.gz`; beside a symlink's target when none is beside the link."""
    return companion(path, _sidecar_name)


def sidecar_places(path: Path) -> tuple[Path, Path]:
    """Both places a side's sidecar may be: beside the path as given, beside the file it resolves to."""
    return _sidecar_name(path), _sidecar_name(Path(os.path.realpath(path)))


def sidecar_display(display: str, main: Path) -> str:
    """The sidecar's name in messages: in the same form as the main file's (as the user named it),
    or its real path when it was found beside a symlink's target, where no such name exists."""
    sidecar = sidecar_path(main)
    if sidecar != _sidecar_name(main):
        return str(sidecar)
    return str(_sidecar_name(Path(display)))


def existing_sidecar(main: Path, display: str) -> Optional[Path]:
    """The side's sidecar when there is one; one linked out of the side's directory is an input error."""
    sidecar = sidecar_path(main)
    if sidecar == main:
        return None
    check_home(sidecar, main, sidecar_display(display, main))
    return sidecar if sidecar.exists() else None


def sidecar_pairs(sidecar: Optional[Path], shown: str) -> Optional[frozenset[tuple[Any, Any]]]:
    """The (task, rollout) pairs a sidecar names (empty without one; None when unreadable): only those
    rows' pairs need keeping, as a pair held for every row of a large side leaves scattered free memory."""
    if sidecar is None:
        return frozenset()
    try:
        return frozenset(
            pair
            for _, _, record in iter_objects(sidecar, shown, skeleton_decoder(None))
            if (pair := index_pair(record)) is not None
        )
    except Exception:  # whatever it is, it is reported when the sidecar is read after the main file
        return None


def check_not_a_sidecar(path: Path, display: str, row: dict[str, Any]) -> None:
    """A `<stem>_failures.jsonl` of failure records given as a side is named, with its main file."""
    name = plain_name(path.name)
    if name.endswith(SIDECAR_SUFFIX) and is_failure_record(row):
        shown = os.path.join(os.path.dirname(display), name[: -len(SIDECAR_SUFFIX)] + ".jsonl")
        raise CompareInputError(
            display,
            "a failures sidecar (records of rollouts that failed), not a rollouts file: "
            f"give its main file {shown}; the sidecar beside it is read with it",
        )

"""The newest attempt of a logical rollout stands; older executions of it are superseded.

The newest NeMo Gym collector keeps append-only files: every execution of one logical rollout
(run id, task index, rollout index) gets a larger `_ng_attempt_index`, and a late result of an
older execution stays in the file but no longer counts. Within a side (main file and sidecar
together) the row with the highest attempt stands; at the same attempt a main-file row beats a
sidecar record, then the later line wins; a row without the stamp is attempt 0. A side none of
whose files carries the stamp is read line by line as before (legacy append and reverify files).
The rule is in docs/semantics.md, "Reading a side and its sidecar".
"""

from __future__ import annotations

import lzma
import zlib
from pathlib import Path
from typing import Any, Optional

from ..errors import CompareInputError
from .fields import ATTEMPT_INDEX, ROLLOUT_INDEX, RUN_ID, TASK_INDEX
from .files import decompressed, open_regular

#: The stamp as it appears in a file's bytes (a file without it is read line by line, as legacy files are).
STAMP = f'"{ATTEMPT_INDEX}"'.encode()
_CHUNK = 1 << 20

#: (run id, task index, rollout index): one logical rollout of a side (one agent's rows).
LogicalKey = tuple[Any, Any, Any]
#: (attempt, 1 for a main-file row and 0 for a sidecar record, line): the highest stands.
Rank = tuple[float, int, int]


def carries_stamp(path: Optional[Path]) -> bool:
    """Whether the file's (decompressed) bytes hold the attempt stamp anywhere.

    A file that cannot be read here says False: reading it in turn words its error.
    """
    if path is None:
        return False
    try:
        with open_regular(path, str(path)) as raw, decompressed(raw, str(path)) as handle:
            tail = b""
            while chunk := handle.read(_CHUNK):
                if STAMP in tail + chunk:
                    return True
                tail = chunk[-len(STAMP):]
    except (CompareInputError, OSError, EOFError, zlib.error, lzma.LZMAError):
        return False
    return False


def _hashable(value: Any) -> Any:
    return value if value is None or isinstance(value, (int, float, str)) else repr(value)


def logical_key(row: dict[str, Any]) -> Optional[LogicalKey]:
    """The logical rollout a row is an execution of; None without both indices."""
    task_index, rollout_index = row.get(TASK_INDEX), row.get(ROLLOUT_INDEX)
    if task_index is None or rollout_index is None:
        return None
    return (_hashable(row.get(RUN_ID)), _hashable(task_index), _hashable(rollout_index))


def attempt_of(row: dict[str, Any]) -> float:
    """The row's attempt number: its stamp when that is a number, else 0."""
    value = row.get(ATTEMPT_INDEX)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value


class Attempts:
    """The standing execution of every logical rollout of one side, found before the side is read."""

    def __init__(self) -> None:
        self.best: dict[LogicalKey, Rank] = {}
        #: rows found superseded while the side was read
        self.superseded = 0

    def see(self, row: dict[str, Any], *, main: bool, line: int) -> None:
        """Take one row (or sidecar record) into account."""
        key = logical_key(row)
        if key is None:
            return
        rank = (attempt_of(row), int(main), line)
        best = self.best.get(key)
        if best is None or rank > best:
            self.best[key] = rank

    def stands(self, row: dict[str, Any], *, main: bool, line: int) -> bool:
        """Whether the row is its logical rollout's standing execution (counting those that are not)."""
        key = logical_key(row)
        best = None if key is None else self.best.get(key)
        if best is None or best == (attempt_of(row), int(main), line):
            return True
        self.superseded += 1
        return False



def superseded_note(count: int) -> str:
    """The side's note naming how many executions were superseded."""
    return (
        f"{count} superseded attempt(s) left out: executions of a logical rollout "
        f"({RUN_ID}, {TASK_INDEX}, {ROLLOUT_INDEX}) that a newer {ATTEMPT_INDEX} replaced"
    )

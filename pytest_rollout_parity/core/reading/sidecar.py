"""The failures sidecar: where a side's `<stem>_failures.jsonl` is, how it is named, its records.

The collector writes one record per failed attempt beside the rollouts file; which of them stand
is the newest-attempt rule's (:mod:`.attempts`). A sidecar given as a side is named so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

from ..errors import CompareInputError
from .attempts import Attempts, Execution, attempt_of, index_pair, logical_key
from .digest import ContentDigest
from .fields import ATTEMPT_INDEX
from .files import check_home, companion, main_file_of, plain_name
from .jsonl_lines import iter_objects
from .side_builder import is_failure_record
from .skeleton import skeleton_decoder

T = TypeVar("T")


def _sidecar_name(path: Path) -> Path:
    return path.with_name(Path(plain_name(path.name)).stem + "_failures.jsonl")


def sidecar_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_failures.jsonl` beside it (the collector's `failures_path_for`).

    A compressed main file (`<stem>.jsonl.gz`) has its sidecar under the plain name; a symlinked
    main file without one beside the link has the one beside its target.
    """
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
    """The (task, rollout) pairs a sidecar names: only those rows' pairs need keeping (a pair held
    for every row of a large side leaves scattered free memory behind). Empty without a sidecar;
    None when the sidecar cannot be read here (its error is worded when it is read in turn, after
    the main file)."""
    if sidecar is None:
        return frozenset()
    try:
        return frozenset(
            pair
            for _, _, record in iter_objects(sidecar, shown, skeleton_decoder(None))
            if (pair := index_pair(record)) is not None
        )
    except Exception:  # whatever it is, it is reported when the sidecar is read in turn
        return None


def sidecar_records(
    sidecar: Optional[Path],
    shown: str,
    prepare: Callable[[int, int, dict[str, Any]], T],
    attempts: Attempts,
    keep: Callable[[dict[str, Any]], bool],
    digest: Optional[ContentDigest] = None,
) -> list[tuple[Execution, T]]:
    """A sidecar's records (none without one), each through ``prepare``, with the execution that
    decides whether it stands (:meth:`.attempts.Attempts.standing_records`). Those ``keep`` rejects
    (another agent's) are dropped first; a record carrying the stamp marks the side as stamped."""
    if sidecar is None:
        return []
    records = []
    for line_no, offset, record in iter_objects(sidecar, shown, digest=digest):
        if not keep(record):
            continue
        if not attempts.stamped and ATTEMPT_INDEX in record:
            attempts.stamped = True
        execution = (logical_key(record, index_pair(record)), (attempt_of(record), 0, line_no))
        records.append((execution, prepare(line_no, offset, record)))
    return records


def check_not_a_sidecar(path: Path, display: str, row: dict[str, Any]) -> None:
    """A `<stem>_failures.jsonl` of failure records given as a side is named, with its main file."""
    main = main_file_of(path)
    if main is not None and is_failure_record(row):
        shown = os.path.join(os.path.dirname(display), main.name)
        raise CompareInputError(
            display,
            "a failures sidecar (records of rollouts that failed), not a rollouts file: "
            f"give its main file {shown}; the sidecar beside it is read with it",
        )

"""Who besides a task's category decides its item's outcome: a conftest's `pytest_parity_verdict`
hook (its :class:`Verdict`), or the known-flips list under review, one `<task>  # <why it is
accepted>` a line, no conftest needed. A listed task that flipped passes, its reason audited like
a hook's. The file is the user's own, but it is read as carefully as the rollouts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional, get_args

from ..errors import CompareInputError
from ..identity.item_names import clipped, listed
from ..model import TaskComparison
from ..reading.bounded import SmallFileError, read_small

Outcome = Literal["passed", "failed", "xfail"]
#: Who decided an outcome: a conftest's `pytest_parity_verdict` hook, the reviewed known-flips list,
#: or the task's category itself (the default outcome).
Source = Literal["hook", "known_flips", "category"]


@dataclass(frozen=True)
class Verdict:
    """An item outcome decided by a conftest hook; the task's category stays what the data says."""

    outcome: Outcome
    text: str = field(default="", metadata={"alias": "reason"})
    #: who decided it; a report naming who changed an item's outcome reads it
    source: Source = "hook"

    @classmethod
    def read(cls, outcome: object, text: object, source: object) -> Optional[Verdict]:
        """The verdict a report or a JSON summary recorded (its outcome, text and source as written
        there), or None when they are not a verdict's; a source other than the list's is a hook."""
        if outcome not in get_args(Outcome) or not isinstance(text, str):
            return None
        return cls(outcome, text, "known_flips" if source == "known_flips" else "hook")  # type: ignore[arg-type]

    @classmethod
    def passed(cls, reason: str = "") -> Verdict:
        """The item passes; ``reason`` goes into its JUnit properties."""
        return cls("passed", reason)

    @classmethod
    def failed(cls, message: str) -> Verdict:
        """The item fails with ``message`` as its report (its first line is the crash line)."""
        return cls("failed", message)

    @classmethod
    def xfail(cls, reason: str) -> Verdict:
        """The item is an expected failure, for ``reason``."""
        return cls("xfail", reason)


#: a list of reviewed flips is short; a larger file is surely not one
MAX_BYTES = 4 * 1024 * 1024
_ENTRY = re.compile(r"^(?P<task>\S(?:.*?\S)?)\s+#\s*(?P<reason>.*?)\s*$")


@dataclass(frozen=True, slots=True)
class KnownFlip:
    """One accepted flip: the task label, why it is accepted, and the line that says so."""

    task: str
    reason: str
    line: int


@dataclass(frozen=True)
class KnownFlips:
    """The file's entries by task label, and the file as messages name it."""

    shown: str
    entries: Mapping[str, KnownFlip]
    #: the SHA-256 (hex) of the file's bytes as read: a report names which list decided
    sha256: str = ""

    def verdict(self, comparison: TaskComparison) -> Optional[Verdict]:
        """Passed with the file's reason for a listed task that flipped; None otherwise."""
        entry = self.entries.get(comparison.task)
        if entry is None or comparison.category != "flipped":
            return None
        what = "known flip"
        if comparison.disagreements:  # the list accepts the new verifier's scoring of the same trajectories
            what = f"known verifier disagreement ({comparison.disagreements} rollout(s) of the same trajectories)"
        return Verdict("passed", f"{what} ({self.shown}:{entry.line}): {entry.reason}", "known_flips")

    def notes(self, tasks: Sequence[TaskComparison]) -> list[str]:
        """Stale entries: listed tasks that no longer flip, and lines naming no task of the run."""
        categories = {task.task: task.category for task in tasks}
        stale = [e for e in self.entries.values() if e.task in categories and categories[e.task] != "flipped"]
        unknown = [e for e in self.entries.values() if e.task not in categories]
        notes = []
        if stale:
            notes.append(
                f"{len(stale)} task(s) listed in {self.shown} no longer flip (the list is stale): "
                + listed([f"{e.task} ({categories[e.task]}, line {e.line})" for e in stale])
            )
        if unknown:
            notes.append(
                f"{len(unknown)} line(s) of {self.shown} name no task of this run: "
                + listed([f"{e.task} (line {e.line})" for e in unknown])
            )
        return notes


def read_known_flips(path: Path, shown: str) -> KnownFlips:
    """The entries of ``path``; a CompareInputError names the file (and line) of anything unusable."""
    try:
        data = read_small(path, MAX_BYTES)
        text = data.decode("utf-8-sig")
    except SmallFileError as exc:
        raise CompareInputError(shown, f"{exc} (a list of known flips is a small text file)") from None
    except UnicodeDecodeError as exc:
        at = data[: exc.start].count(b"\n") + 1
        raise CompareInputError(shown, "not UTF-8 text (a list of known flips is a text file)", at) from None
    entries: dict[str, KnownFlip] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is None or not match["reason"]:
            raise CompareInputError(
                shown,
                "a known flip needs a reason after the task label "
                f"(`<task>  # <why it is accepted>`), got {clipped(line, 80, '...')!r}",
                number,
            )
        task = match["task"]
        if task in entries:
            raise CompareInputError(
                shown, f"task {clipped(task, 80, '...')!r} is listed twice (first on line {entries[task].line})", number
            )
        entries[task] = KnownFlip(task, match["reason"], number)
    return KnownFlips(shown, entries, hashlib.sha256(data).hexdigest())

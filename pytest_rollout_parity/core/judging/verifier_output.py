"""The losing side's verifier output, read only for a flip that is shown and only its end (one read
of at most :data:`TAIL_BYTES`), so a multi-gigabyte `test-stdout.txt` costs a few blocks. Only a
regular `test-stdout.txt` inside a row's `verifier_logs_dir` is read, a link only when it leads to
another `test-stdout.txt` under the log roots or the logs dir, so no row can make another
file's bytes appear in a report (a link to the run directory's `.git/config` is refused).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..model import RowFacts, Side, TaskSide
from ..reading.bounded import NotRegular, open_regular, read_end
from ..reading.files import inside
from ..reading.row_facts import embedded_output, logs_dir_of

LOG_FILE_NAME = "test-stdout.txt"
#: bytes read from the end of a log, at most: one bounded read, whatever the log's size
TAIL_BYTES = 64 * 1024
NO_OUTPUT = "row has no verifier_logs_dir and no embedded verifier output"
#: characters kept of one line of output; the rest is cut with a visible marker
LINE_CHARS = 500


@dataclass(frozen=True)
class LogRoots:
    """Where a relative `verifier_logs_dir` is looked up, in order, for each side."""

    invocation_dir: Path
    old_dir: Path
    new_dir: Path
    extra: tuple[Path, ...] = ()

    def for_side(self, side: Side) -> list[Path]:
        """The lookup roots for one side: invocation dir, that side's file dir, extra roots."""
        return list(dict.fromkeys((self.invocation_dir, self.old_dir if side == "old" else self.new_dir, *self.extra)))


@dataclass(frozen=True)
class VerifierOutput:
    """The last lines of the losing row's output and where they came from, or why there are none."""

    lines: Optional[list[str]]
    source: str  # a file path, `row field '<name>'`, or the reason it is unavailable


def cut_line(line: str, chars: int = LINE_CHARS) -> str:
    """A line of at most ``chars`` characters; a longer one ends with a marker saying how much was cut."""
    return line if len(line) <= chars else f"{line[:chars]} [... {len(line) - chars} more characters cut]"


def tail_lines(text: str, count: int, cut_before: bool = False) -> list[str]:
    """The last ``count`` lines of ``text`` (trailing newlines dropped first), each cut; ``cut_before``:
    ``text`` is the end of something longer, so its first line is only the end of one."""
    if count <= 0:
        return []
    if len(text) > TAIL_BYTES:
        text, cut_before = text[-TAIL_BYTES:], True
    stripped = text.rstrip("\r\n")
    if not stripped:
        return []
    lines = stripped.split("\n")
    partial = cut_before and len(lines) <= count
    lines = [cut_line(line[:-1] if line.endswith("\r") else line) for line in lines[-count:]]
    if partial:
        lines[0] = f"[... cut] {lines[0]}"
    return lines


def _log_file(candidate: Path, roots: Sequence[Path]) -> tuple[Optional[Path], Optional[str]]:
    """(the `test-stdout.txt` to read, None) for a usable logs dir (the module's rule), else (None,
    why not; None when absent)."""
    try:
        mode = os.stat(candidate).st_mode
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None, (f"{candidate} is a dangling symlink" if os.path.islink(candidate) else None)
    if not stat.S_ISDIR(mode):
        return None, f"{candidate} is not a directory (only a {LOG_FILE_NAME} inside it is read)"
    inner = candidate / LOG_FILE_NAME
    try:
        inner_mode = os.lstat(inner).st_mode
    except OSError:
        return None, f"{candidate} has no {LOG_FILE_NAME}"
    if stat.S_ISLNK(inner_mode):
        target = os.path.realpath(inner)
        if not any(inside(target, home) for home in (candidate, *roots)):
            return None, f"{inner} is a symlink leading outside the log roots"
        if os.path.basename(target) != LOG_FILE_NAME:  # a checkout's .git/config lies under a root
            return None, f"{inner} is a symlink to a file not named {LOG_FILE_NAME}"
        return Path(target), None
    if not stat.S_ISREG(inner_mode):
        return None, f"{inner} is not a regular file"
    return inner, None


def scored_row(side: TaskSide, highest: bool = False) -> RowFacts:
    """The side's first scored row of the lowest reward (a loser's) or the ``highest``; else its first."""
    pick = max if highest else min
    return pick((f for f in side.facts if f.scored), key=lambda f: f.reward or 0.0, default=side.facts[0])


def verifier_output(row: dict[str, Any], roots: Sequence[Path], count: int) -> VerifierOutput:
    """Find a row's verifier output: its logs dir under the roots, else an embedded field."""
    problems: list[str] = []
    logs_dir_text = logs_dir_of(row)
    if logs_dir_text:
        logs_dir = Path(logs_dir_text)
        for candidate in [logs_dir] if logs_dir.is_absolute() else [root / logs_dir for root in roots]:
            target, problem = _log_file(candidate, roots)
            problems += [problem] if problem else []
            if target is not None:
                try:
                    with open_regular(target) as handle:
                        data, cut_before = read_end(handle, TAIL_BYTES)
                    return VerifierOutput(tail_lines(data.decode("utf-8", "replace"), count, cut_before), str(target))
                except NotRegular:
                    return VerifierOutput(None, f"unavailable: {target} is not a regular file")
                except OSError as exc:
                    return VerifierOutput(None, f"unavailable: cannot read {target}: {exc.strerror or exc}")
    if (embedded := embedded_output(row)) is not None:
        return VerifierOutput(tail_lines(embedded[1], count), f"row field '{embedded[0]}'")
    if not logs_dir_text:
        return VerifierOutput(None, f"unavailable: {NO_OUTPUT}")
    if problems:
        return VerifierOutput(None, f"unavailable: {'; '.join(problems)}")
    under = "" if Path(logs_dir_text).is_absolute() else f" under {', '.join(str(root) for root in roots)}"
    return VerifierOutput(None, f"unavailable: {logs_dir_text} not found{under}")

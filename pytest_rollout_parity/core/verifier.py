"""The losing side's verifier output: where it lives, and its last lines, read from the end.

Logs are read only for a flip that is shown, never at load time, and only their tail is read, so a
multi-gigabyte `test-stdout.txt` costs a few blocks. Anything that is not a regular file (a FIFO,
a device, a dangling link) is never opened.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .model import RowFacts, Side, TaskSide
from .rows import embedded_output, logs_dir_of

LOG_FILE_NAME = "test-stdout.txt"
_BLOCK = 64 * 1024
_MAX_TAIL_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class LogRoots:
    """Where a relative `verifier_logs_dir` is looked up, in order, for each side."""

    invocation_dir: Path
    old_dir: Path
    new_dir: Path
    extra: tuple[Path, ...] = ()

    def for_side(self, side: Side) -> list[Path]:
        """The lookup roots for one side: invocation dir, that side's file dir, extra roots."""
        own = self.old_dir if side == "old" else self.new_dir
        roots: list[Path] = []
        for root in (self.invocation_dir, own, *self.extra):
            if root not in roots:
                roots.append(root)
        return roots


@dataclass(frozen=True)
class VerifierOutput:
    """The last lines of the losing row's output and where they came from, or why there are none."""

    lines: Optional[list[str]]
    source: str  # a file path, `row field '<name>'`, or the reason it is unavailable


def tail_lines(text: str, count: int) -> list[str]:
    """The last ``count`` lines of ``text`` (trailing newlines dropped first); none for 0."""
    if count <= 0:
        return []
    stripped = text.rstrip("\r\n")
    if not stripped:
        return []
    return [line[:-1] if line.endswith("\r") else line for line in stripped.split("\n")[-count:]]


def tail_file(path: Path, count: int) -> list[str]:
    """The last ``count`` lines of a file, reading blocks backwards from its end."""
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        position = handle.tell()
        data = b""
        while position > 0 and len(data) < _MAX_TAIL_BYTES:
            step = min(_BLOCK, position)
            position -= step
            handle.seek(position)
            data = handle.read(step) + data
            if data.rstrip(b"\r\n").count(b"\n") >= count:
                break
    return tail_lines(data.decode("utf-8", "replace"), count)


def _log_file(candidate: Path) -> tuple[Optional[Path], Optional[str]]:
    """(the file to read, None) for a usable candidate, else (None, why not)."""
    try:
        mode = os.stat(candidate).st_mode
    except OSError:
        if os.path.islink(candidate):
            return None, f"{candidate} is a dangling symlink"
        return None, None
    if stat.S_ISDIR(mode):
        inner = candidate / LOG_FILE_NAME
        try:
            inner_mode = os.stat(inner).st_mode
        except OSError:
            return None, f"{candidate} has no {LOG_FILE_NAME}"
        if not stat.S_ISREG(inner_mode):
            return None, f"{inner} is not a regular file"
        return inner, None
    if not stat.S_ISREG(mode):
        return None, f"{candidate} is not a regular file"
    return candidate, None


def losing_row(side: TaskSide) -> RowFacts:
    """The loser's row with the lowest finite reward (the first of equals)."""
    best: Optional[RowFacts] = None
    for facts in side.facts:
        if facts.reward is not None and math.isfinite(facts.reward):
            if best is None or facts.reward < best.reward:  # type: ignore[operator]
                best = facts
    return best if best is not None else side.facts[0]


def verifier_output(
    facts: RowFacts, read_row: Callable[[RowFacts], dict[str, Any]], roots: Sequence[Path], count: int
) -> VerifierOutput:
    """Find a row's verifier output: its logs dir under the roots, else an embedded field."""
    problems: list[str] = []
    row = read_row(facts)
    logs_dir_text = logs_dir_of(row)
    if logs_dir_text:
        logs_dir = Path(logs_dir_text)
        candidates = [logs_dir] if logs_dir.is_absolute() else [root / logs_dir for root in roots]
        for candidate in candidates:
            target, problem = _log_file(candidate)
            if problem:
                problems.append(problem)
            if target is not None:
                try:
                    return VerifierOutput(tail_file(target, count), str(target))
                except OSError as exc:
                    return VerifierOutput(None, f"unavailable: cannot read {target}: {exc.strerror or exc}")
    embedded = embedded_output(row)
    if embedded is not None:
        name, text = embedded
        return VerifierOutput(tail_lines(text, count), f"row field '{name}'")
    if logs_dir_text:
        if problems:
            return VerifierOutput(None, f"unavailable: {'; '.join(problems)}")
        if Path(logs_dir_text).is_absolute():
            return VerifierOutput(None, f"unavailable: {logs_dir_text} not found")
        return VerifierOutput(
            None, f"unavailable: {logs_dir_text} not found under {', '.join(str(root) for root in roots)}"
        )
    return VerifierOutput(None, "unavailable: row has no verifier_logs_dir and no embedded verifier output")

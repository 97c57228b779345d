"""Progress while a large side loads: bytes read of the file's size, updated in place, then the time.

Both sides are read in ``pytest_configure``, before pytest's terminal reporter writes anything, so
the progress goes straight to ``sys.stderr``, and only when a person watches it: stderr is a terminal
(:func:`stderr_is_tty`, the seam tests replace), the run is not ``-q`` and this process is not an
xdist worker. A CI log (not a terminal) never sees it. Sides below :data:`SHOW_FROM` bytes load too
fast to need it and print nothing at all.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Optional, TextIO

import pytest

from ..core import Progress

SHOW_FROM = 100 * 1000 * 1000  # bytes: a side this large shows progress
INTERVAL = 0.25  # seconds between two updates of the progress line


def stderr_is_tty() -> bool:
    """Whether stderr is a terminal (a person watching), not a CI log or a pipe."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress_for(config: pytest.Config) -> Optional[LoadProgress]:
    """The run's progress display, or None when nobody would see it: progress is for a person at a
    terminal, not on an xdist worker, not under -q, not in a log."""
    if hasattr(config, "workerinput") or config.getoption("verbose", 0) < 0 or not stderr_is_tty():
        return None
    return LoadProgress(sys.stderr, show_from=SHOW_FROM)


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"


class LoadProgress:
    """One progress line for the side being read. The sides are read one after the other in this
    process; a side a reader child reads reports its size only once it is in (no bytes between)."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        show_from: int = SHOW_FROM,
        interval: float = INTERVAL,
    ) -> None:
        self.stream, self.clock, self.show_from, self.interval = stream, clock, show_from, interval
        #: the side on the line, its size and when it started, while a large one is read
        self.reading: Optional[tuple[str, int]] = None
        self.started: dict[str, float] = {}
        self.last_write = float("-inf")
        self.width = 0

    def side(self, name: str) -> Progress:
        """The callback for one side's main file (``name``: how messages name it)."""
        self.started[name] = self.clock()

        def report(done: int, total: int) -> None:
            if total < self.show_from:
                return
            self.reading, now = (name, total), self.clock()
            if now - self.last_write >= self.interval or done >= total:
                self.last_write = now
                self._write(f"reading {name}: {_size(done)} of {_size(total)} ({100 * done // max(total, 1)}%)")

        return report

    def finished(self, name: str) -> None:
        """The side is read: replace the progress line by the time it took (large sides only)."""
        if self.reading is not None and self.reading[0] == name:
            seconds = self.clock() - self.started[name]
            self._write(f"{name}: read {_size(self.reading[1])} in {seconds:.1f} s", end="\n")
            self.reading = None

    def close(self) -> None:
        """End a progress line left in place (a load stopped by an input error)."""
        if self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0
        self.reading = None

    def _write(self, line: str, end: str = "") -> None:
        padding = " " * max(self.width - len(line), 0)  # clear what a longer line left behind
        self.stream.write("\r" + line + padding + end)
        self.stream.flush()
        self.width = 0 if end else len(line)

"""Progress while a large side loads: bytes read of the file's size, updated in place, then the time.

Both sides are read in ``pytest_configure``, before pytest's terminal reporter writes anything, so
the progress goes straight to ``sys.stderr``, and only when a person watches it: stderr is a terminal
(:func:`stderr_is_tty`, the seam tests replace), the run is not ``-q`` and this process is not an
xdist worker. A CI log (not a terminal) never sees it. Sides below :data:`SHOW_FROM` bytes load too
fast to need it and print nothing at all.
"""

from __future__ import annotations

import sys
import threading
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
    """One progress line for the sides being read (both at once when they load in parallel)."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        show_from: int = SHOW_FROM,
        interval: float = INTERVAL,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.show_from = show_from
        self.interval = interval
        self.reading: dict[str, tuple[int, int]] = {}
        self.started: dict[str, float] = {}
        self.last_write = float("-inf")
        self.width = 0
        self.lock = threading.Lock()

    def side(self, name: str) -> Progress:
        """The callback for one side's main file (``name``: how messages name it)."""
        self.started[name] = self.clock()

        def report(done: int, total: int) -> None:
            if total < self.show_from:
                return
            with self.lock:
                self.reading[name] = (done, total)
                now = self.clock()
                if now - self.last_write >= self.interval or done >= total:
                    self.last_write = now
                    self._write(self._line())

        return report

    def finished(self, name: str) -> None:
        """The side is read: replace the progress line by the time it took (large sides only)."""
        with self.lock:
            state = self.reading.pop(name, None)
            if state is None:
                return
            seconds = self.clock() - self.started.get(name, self.clock())
            self._write(f"{name}: read {_size(state[1])} in {seconds:.1f} s", end="\n")
            if self.reading:
                self._write(self._line())

    def close(self) -> None:
        """End a progress line left in place (a load stopped by an input error)."""
        with self.lock:
            if self.width:
                self.stream.write("\n")
                self.stream.flush()
                self.width = 0
            self.reading.clear()

    def _line(self) -> str:
        parts = [
            f"{name}: {_size(done)} of {_size(total)} ({100 * done // max(total, 1)}%)"
            for name, (done, total) in self.reading.items()
        ]
        return "reading " + "; ".join(parts)

    def _write(self, line: str, end: str = "") -> None:
        padding = " " * max(self.width - len(line), 0)  # clear what a longer line left behind
        self.stream.write("\r" + line + padding + end)
        self.stream.flush()
        self.width = 0 if end else len(line)

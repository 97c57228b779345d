"""Reading the two sides at once: the old side in a small child process, the new one here.

Parsing is CPU-bound and holds the GIL, so threads would not help; a forked pytest process would
copy the parent's memory and imports. Instead a fresh interpreter runs :mod:`.child`, which
imports only the core, reads its side and streams each prepared row (:mod:`.child_stream`) to a
temporary file, which this process replays once it has read the new side.

The child is used only when it can pay off and never changes the answer: with one usable CPU, or
when the old side is smaller than :data:`MIN_CHILD_BYTES` (below which starting an interpreter
costs more than it saves), both sides are read here one after the other. A child that fails in any way other than
reporting an input error (cannot start, crashes, sends a truncated answer) is ignored and its side
read here. Input errors are raised in the serial order: the old side's first.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Optional, Protocol

from ..errors import CompareInputError
from . import loading
from .child_stream import replay
from .jsonl_lines import Progress
from .loaded_side import LoadedSide
from .side_request import SideRequest
from .sidecar import sidecar_display

#: Below this many bytes in the old file, the child's start costs more than it saves.
MIN_CHILD_BYTES = 32 << 20
CHILD_MODULE = "pytest_rollout_parity.core.reading.child"


class SideProgress(Protocol):
    """What is told while sides load: a side's reporter before it starts, and when it is read."""

    def start(self, index: int) -> Optional[Progress]:
        """The reporter of side ``index`` (0: old, 1: new), which is about to be read here."""

    def done(self, index: int) -> None:
        """Side ``index`` is read."""


def _load_here(request: SideRequest, index: int, progress: Optional[SideProgress]) -> LoadedSide:
    side = loading.load_side(request, progress.start(index) if progress is not None else None)
    if progress is not None:
        progress.done(index)
    return side


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def worth_a_child(request: SideRequest, min_bytes: int = MIN_CHILD_BYTES) -> bool:
    """Two CPUs or more and a file (a sharded side's files together) large enough to repay an
    interpreter's start."""
    try:
        size = sum(os.stat(path).st_size for path in request.files())
    except OSError:
        return False  # the serial read words the error
    return size >= min_bytes and usable_cpus() > 1


def load_two(
    old: SideRequest, new: SideRequest, min_bytes: int = MIN_CHILD_BYTES, progress: Optional[SideProgress] = None
) -> tuple[LoadedSide, LoadedSide]:
    """Both sides, the old one in a child when :func:`worth_a_child`; the same result as serially.

    ``progress`` sees the child's side start with it and end when its answer is in (no bytes between).
    """
    child = _Child.start(old) if worth_a_child(old, min_bytes) else None
    if child is None:
        return _load_here(old, 0, progress), _load_here(new, 1, progress)
    old_report = progress.start(0) if progress is not None else None  # the child reports no bytes: only its end
    with child:
        try:
            new_side: Optional[LoadedSide] = _load_here(new, 1, progress)
            new_error: Optional[CompareInputError] = None
        except CompareInputError as exc:
            new_side, new_error = None, exc
        old_side = child.side(old)
    if old_side is None:
        old_side = _load_here(old, 0, progress)  # the child failed: read it here (raises its input error)
    elif progress is not None:
        _report_whole(old, old_report)
        progress.done(0)
    if new_error is not None:
        raise new_error
    assert new_side is not None
    return old_side, new_side


class _Child:
    """The reader child and the anonymous temporary file its stream goes to.

    A file rather than a pipe: the child writes as it reads and nothing here has to drain it
    meanwhile (a thread would, and its memory arena would count in this process's peak).
    """

    def __init__(self, process: subprocess.Popen[bytes], stream: BinaryIO) -> None:
        self.process = process
        self.stream = stream

    @classmethod
    def start(cls, request: SideRequest) -> Optional[_Child]:
        """The child, reading ``request``'s side; None when it cannot be started."""
        command, env = child_command()
        try:
            stream = tempfile.TemporaryFile(prefix="rollout-parity-")  # noqa: SIM115 - closed by __exit__
        except OSError:  # no writable temporary directory: read here
            return None
        try:
            process = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.PIPE,
                stdout=stream,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            stream.close()
            return None
        child = cls(process, stream)
        try:
            assert process.stdin is not None
            process.stdin.write(marshal.dumps(request.plain()))
            process.stdin.close()
        except OSError:
            child.__exit__()
            return None
        return child

    def __enter__(self) -> _Child:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stream.close()

    def side(self, request: SideRequest) -> Optional[LoadedSide]:
        """The child's side once it is done; raises its input error; None when it failed otherwise."""
        if self.process.wait() != 0:
            return None
        self.stream.seek(0)
        data = self.stream.read()
        display = request.shown
        path = Path(request.path)
        builder = loading.side_builder(request)
        files = [(Path(file), shown) for file, shown in request.shards]
        names = tuple((shown, sidecar_display(shown, file)) for file, shown in files)
        end = replay(data, builder, display, sidecar_display(display, path), names)
        del data
        if end is None:
            return None
        if files:
            if len(end.sidecars) != len(files):
                return None
            return loading.finish_side(request, builder, end.sidecars, end.agent, end.agent_rows)
        return loading.finish_side(request, builder, (end.sidecar,), end.agent, end.agent_rows)


def _report_whole(request: SideRequest, report: Optional[Progress]) -> None:
    """Tell ``report`` the whole file is read (as the child's side is), so its time can be shown."""
    if report is None:
        return
    try:
        size = sum(os.stat(path).st_size for path in request.files())
    except OSError:
        return
    report(size, size)


#: What the child imports from outside the standard library (the package itself comes first).
CHILD_IMPORTS = ("msgspec", "pydantic_core", "typing_extensions")


#: The child's whole program: the working directory ('') off its import path, the directories it
#: is given first (see :func:`child_command`). The core's entrance (``core/__init__``) imports every
#: stage; the child needs the reading stage only, so the core package is set up bare, without it.
CHILD_BOOT = (
    "import sys, types; sys.path[:] = [*sys.argv[1:], *(p for p in sys.path if p)]; "
    "import pytest_rollout_parity as top; core = types.ModuleType(top.__name__ + '.core'); "
    "core.__path__ = [top.__path__[0] + '/core']; sys.modules[core.__name__] = core; "
    "from {module} import main; sys.exit(main())"
)


def child_command() -> tuple[list[str], dict[str, str]]:
    """The child's command line and environment: without ``site`` (``-S``: less to import and hold)
    and without the working directory on its import path, its imports found where this process
    found them. Only those directories go first, not this process's whole ``sys.path``, where a
    test directory pytest put first could shadow the standard library."""
    root = Path(__file__).resolve().parents[3]
    paths = [str(root)]
    for name in CHILD_IMPORTS:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        location = Path(spec.origin).parent  # a package's directory, or a module's
        where = str(location.parent if spec.submodule_search_locations else location)
        if where not in paths:
            paths.append(where)
    return [sys.executable, "-S", "-c", CHILD_BOOT.format(module=CHILD_MODULE), *paths], dict(os.environ)

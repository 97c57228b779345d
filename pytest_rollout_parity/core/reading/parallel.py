"""Reading the sides: the old one in a small child interpreter while this process reads the new one.

Parsing holds the GIL, so threads would not help; a forked pytest process would copy the parent's
memory. The child imports the reading stage only and answers by ``marshal``: the same interpreter
(``sys.executable``) reads what it wrote, in half the bytes JSON takes, and its own pipe is no
untrusted input. The facts travel in chunks each process lets go as they pass: the child's peak
counts in the floor. It never changes the answer: a child that fails other than by an input error is
ignored and its side read here, and input errors are raised in the serial order, the old side's first.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Optional, Protocol

from ..errors import CompareInputError
from ..model import RowFacts
from . import loading
from .jsonl_lines import Progress
from .loaded_side import LoadedSide, SideRequest, facts_from_plain, plain_facts, side_from_plain, side_to_plain

if TYPE_CHECKING:  # the child, which runs this module, never starts one
    import subprocess

#: Below this many bytes in the old file, the child's start costs more than it saves.
MIN_CHILD_BYTES = 32 << 20
CHILD_MODULE = "pytest_rollout_parity.core.reading.parallel"
CHUNK = 2000  # rows' facts per message of the child's answer: a whole side at once is held twice


class SideProgress(Protocol):
    """What is told while sides load, each by its name ("old", "new"): :meth:`side` gives the
    reporter of a side about to be read here, :meth:`finished` hears that it is read."""

    def side(self, name: str) -> Optional[Progress]: ...

    def finished(self, name: str) -> None: ...


def _load_here(request: SideRequest, name: str, progress: Optional[SideProgress]) -> LoadedSide:
    side = loading.load_side(request, progress.side(name) if progress is not None else None)
    if progress is not None:
        progress.finished(name)
    return side


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, e.g. under ``taskset``)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


def _size(request: SideRequest) -> Optional[int]:
    try:
        return sum(os.stat(path).st_size for path in request.files())
    except OSError:
        return None  # the serial read words the error


def worth_a_child(request: SideRequest, min_bytes: int = MIN_CHILD_BYTES) -> bool:
    """Two CPUs or more and a side's files large enough together to repay an interpreter's start."""
    size = _size(request)
    return size is not None and size >= min_bytes and usable_cpus() > 1


def load_sides(
    requests: Sequence[SideRequest], progress: Optional[SideProgress] = None, min_bytes: int = MIN_CHILD_BYTES
) -> list[LoadedSide]:
    """The sides asked for (one, or old and new), the old one in a child when :func:`worth_a_child`;
    ``progress`` sees the child's side start with it and end when its answer is in (no bytes between)."""
    child = start_child(requests[0]) if len(requests) == 2 and worth_a_child(requests[0], min_bytes) else None
    if child is None:
        return [_load_here(request, name, progress) for request, name in zip(requests, ("old", "new"))]
    old, new = requests
    old_report = progress.side("old") if progress is not None else None  # the child reports no bytes: only its end
    assert child.stdout is not None  # Popen was asked for a pipe
    try:
        new_side: LoadedSide | CompareInputError  # its input error waits for the old side's
        try:
            new_side = _load_here(new, "new", progress)
        except CompareInputError as exc:
            new_side = exc
        old_side = read_answer(child.stdout)
        old_side = old_side if old_side is not None and child.wait() == 0 else None  # else killed below
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    if old_side is None:
        old_side = _load_here(old, "old", progress)  # the child failed: read it here (raises its input error)
    elif progress is not None:
        size = _size(old)
        if old_report is not None and size is not None:
            old_report(size, size)  # the whole file is read, so its time can be shown
        progress.finished("old")
    if isinstance(new_side, CompareInputError):
        raise new_side
    return [old_side, new_side]


def start_child(request: SideRequest) -> Optional[subprocess.Popen[bytes]]:
    """The reader child, given ``request`` on its stdin; None when it cannot be started. It waits on
    the full pipe until this process, done with the new side, reads its answer through."""
    import subprocess

    try:
        child = subprocess.Popen(
            child_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:
        return None
    try:
        assert child.stdin is not None
        with child.stdin:
            child.stdin.write(marshal.dumps(request.plain()))
    except OSError:
        child.kill()
        child.wait()
        return None
    return child


def read_answer(stream: IO[bytes]) -> Optional[LoadedSide]:
    """The child's side, read from ``stream``; raises its input error; None for any other answer."""
    try:
        kind, value, *rows = _message(stream)
        if kind == "input-error":
            error = CompareInputError(*value)
        else:
            side = side_from_plain({**value, "facts": []}) if kind == "side" else None
            while side is not None and len(side.facts) < rows[0]:
                side.facts.extend(map(facts_from_plain, _message(stream)))
            return side
    except (ValueError, TypeError, KeyError, IndexError, EOFError):
        return None
    raise error


def _message(stream: IO[bytes]) -> Any:
    """One message of the answer: marshal's bytes of it, themselves marshalled (read in one piece)."""
    return marshal.loads(marshal.load(stream))


def main() -> int:
    """The child's program: one request from stdin; its side, or its input error, to stdout."""
    request = SideRequest(*marshal.loads(sys.stdin.buffer.read()))
    facts: deque[RowFacts] = deque()
    try:
        side = loading.load_side(request)
        facts, side.facts = deque(side.facts), []
        answer = ["side", side_to_plain(side), len(facts)]
    except CompareInputError as exc:
        answer = ["input-error", list(exc.args)]
    marshal.dump(marshal.dumps(answer), sys.stdout.buffer)
    while facts:  # each row's facts let go once sent
        chunk = [plain_facts(facts.popleft()) for _ in range(min(CHUNK, len(facts)))]
        marshal.dump(marshal.dumps(chunk), sys.stdout.buffer)
    sys.stdout.buffer.flush()
    return 0


#: The child's whole program: the working directory ('') off its import path, the directories it
#: is given first (see :func:`child_command`). The core's entrance (``core/__init__``) imports every
#: stage; the child needs the reading stage only, so the core package is set up bare, without it.
CHILD_BOOT = (
    "import sys, types; sys.path[:] = [*sys.argv[1:], *(p for p in sys.path if p)]; "
    "import pytest_rollout_parity as top; core = types.ModuleType(top.__name__ + '.core'); "
    "core.__path__ = [top.__path__[0] + '/core']; sys.modules[core.__name__] = core; "
    "from {module} import main; sys.exit(main())"
)


def child_command() -> list[str]:
    """The child's command line: ``-S`` (less to import and hold), its imports found where this
    process found them. Only their directories go first, not the whole ``sys.path``, where a test
    directory pytest put first could shadow the standard library."""
    paths = [str(Path(__file__).resolve().parents[3])]  # the package itself first
    for name in ("pydantic_core", "typing_extensions"):  # what it imports from outside the stdlib
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        location = Path(spec.origin).parent  # a package's directory, or a module's
        where = str(location.parent if spec.submodule_search_locations else location)
        if where not in paths:
            paths.append(where)
    return [sys.executable, "-S", "-c", CHILD_BOOT.format(module=CHILD_MODULE), *paths]

"""Reruns read nothing twice: each loaded side is kept in pytest's cache, keyed by its inputs' state.

What is kept: each side's row facts and join values (:class:`LoadedSide`), the most expensive part
of a run (reading and parsing every row), and beside them the comparison of the two
(:mod:`.result_cache`), which a one-task rerun would otherwise redo for every task. The paired
statistics and the margin judgements are made again on every run: they depend on options (margin,
alpha, strict) that change neither what is read nor how the tasks compare.

Where: one file per side under ``config.cache.mkdir("rollout-parity")`` (pytest's cache directory,
never beside the inputs), written to a temporary name and renamed into place, in the format of
:mod:`..core.reading.snapshot`. ``--cache-clear`` empties it; ``-p no:cacheprovider`` runs without it.

When an entry is used: only when its key equals the current one, which holds

* for the rollouts file, its failures sidecar and its aggregate-metrics file: the real path,
  device, inode, size, mtime and ctime in nanoseconds (a missing file as missing). An edit in
  place that restores the size and the mtime (``os.utime``) still moves the ctime, which no user
  call can set back; replacing the file changes the inode. This costs three ``stat`` calls a side:
  no input byte is read to decide;
* every option that changes what is loaded (key, agent, and the option names errors would cite,
  and the name the file is shown by) and which reader parses rows (the `fast` extra or not);
* the plugin's version, a fingerprint (size, mtime) of the core's source files, and the
  encoding's schema, so an upgraded or edited plugin never reads an older entry.

A side is stored only when its files' state after reading equals the state before, so a file
being written during the run is not cached. Any entry that is missing, foreign, truncated, stale
or unreadable is ignored and rebuilt; failing to write one only costs the next run a read.

Why an entry can be trusted: the cache directory can be committed with a pull request, and an
entry's name and key are computable from the repository. So each entry is tagged (HMAC-SHA256)
with a per-user secret kept outside it (:func:`user_secret`), and the tag is checked before the body
is decoded: a planted entry is one HMAC over its bytes, then ignored and rebuilt.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
import tempfile
from functools import lru_cache
from hashlib import sha256
from pathlib import Path
from typing import Any, Optional

import pytest

from .. import core
from ..core import (
    LoadedSide,
    SideProgress,
    SideRequest,
    frame_side,
    load_two,
    metrics_path,
    read_capped,
    reader_name,
    sidecar_path,
    snapshot_schema,
    unframe_side,
)

CACHE_DIR = "rollout-parity"
#: the per-user secret entries are tagged with, under ``$XDG_CACHE_HOME`` (else ``~/.cache``)
SECRET_DIR = "pytest-rollout-parity"
SECRET_FILE = "cache-key"
SECRET_BYTES = 32


def secret_path() -> Path:
    """Where the per-user secret lives: the user's own cache directory, not the project's."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / SECRET_DIR / SECRET_FILE


_PROCESS_SECRET = secrets.token_bytes(SECRET_BYTES)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _own_secret(path: Path) -> Optional[bytes]:
    """The secret at ``path`` when it is the user's own: a regular file (no link) of 32 bytes, owned
    by this user and readable by nobody else (a file checked out of a repository is not: Git
    writes files with the group and others' bits of the umask)."""
    try:
        data = read_capped(path, SECRET_BYTES, follow=False)
        st = os.lstat(path)
    except OSError:
        return None
    owner = getattr(os, "getuid", lambda: st.st_uid)()
    if st.st_uid != owner or stat.S_IMODE(st.st_mode) & 0o077 or len(data) != SECRET_BYTES:
        return None
    return data


def user_secret(project_roots: tuple[Path, ...] = ()) -> bytes:
    """The secret every entry is tagged with: the per-user one (made on first use, mode 0600), or
    one for this process only when there is none usable (entries then last one process).

    A secret file inside one of ``project_roots`` (the rootdir, the cache directory: a home
    directory that is the checkout) is never used, whatever its mode.
    """
    path = secret_path()
    if any(_inside(path.parent, root) for root in project_roots):
        return _PROCESS_SECRET
    found = _own_secret(path)
    if found is not None:
        return found
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        if exc.errno != errno.EEXIST:
            return _PROCESS_SECRET
    else:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(SECRET_BYTES))
    return _own_secret(path) or _PROCESS_SECRET


def file_state(role: str, path: Path) -> tuple[Any, ...]:
    """(role, real path, device, inode, size, mtime ns, ctime ns), or (role, real path) when absent."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return (role, real)
    return (role, real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def inputs_state(request: SideRequest) -> tuple[Any, ...]:
    """The state of every file a side is read from (three ``stat`` calls a file, no reading):
    its one file, or each of its shards, each with its sidecar and metrics file."""
    return tuple(
        state
        for main in map(Path, request.files())
        for state in (
            file_state("rows", main),
            file_state("sidecar", sidecar_path(main)),
            file_state("aggregate", metrics_path(main)),
        )
    )


def release() -> str:
    """The plugin's installed version (`unknown` when it is run from a tree that was never installed)."""
    try:
        from importlib.metadata import version

        return version("pytest-rollout-parity")
    except Exception:
        return "unknown"


@lru_cache(maxsize=1)
def code_state() -> tuple[Any, ...]:
    """The plugin's version and the (name, size, mtime) of each core module: edits invalidate entries."""
    core = Path(__file__).parents[1] / "core"
    modules = []
    for entry in sorted(core.rglob("*.py")):
        st = entry.stat()
        modules.append((entry.relative_to(core).as_posix(), st.st_size, st.st_mtime_ns))
    return (release(), tuple(modules), snapshot_schema())


def entry_key(request: SideRequest, state: tuple[Any, ...]) -> tuple[Any, ...]:
    """What an entry must have been written under to be used for ``request`` now."""
    reader = reader_name()
    return (code_state(), reader, request.plain(), state)


def entry_path(directory: Path, request: SideRequest) -> Path:
    """One entry per (real file, request): another key for the same file replaces it."""
    name = sha256(repr((os.path.realpath(request.path), request.plain())).encode()).hexdigest()[:24]
    return directory / f"side-{name}.bin"


#: an entry holds a side's row facts: never more than this many times its input files' bytes, plus the slack
ENTRY_FACTOR = 16
ENTRY_SLACK = 64 << 20


def entry_cap(key: tuple[Any, ...]) -> int:
    """The largest entry read for ``key``: a multiple of its input files' sizes (in its state), plus a slack.

    A key without the inputs' state (the xdist hand-over's, in a directory the controller just made
    for itself) is not capped.
    """
    state = key[-1] if key else None
    if not isinstance(state, tuple):
        return sys.maxsize
    sizes = [item[4] for item in state if isinstance(item, tuple) and len(item) == 7 and isinstance(item[4], int)]
    return ENTRY_FACTOR * sum(sizes) + ENTRY_SLACK


def read_entry(path: Path, key: tuple[Any, ...], secret: bytes) -> Optional[LoadedSide]:
    """The side stored under ``key`` at ``path`` and tagged with ``secret``; None when absent or unusable.

    The cache directory can be planted (a results directory run as the rootdir holds its own
    `.pytest_cache`): an entry is read only when it is a regular file, not a link, no larger than
    :func:`entry_cap` (a FIFO is never waited on, `/dev/zero` never read), and its body is decoded
    only once its tag holds for ``secret`` and ``key``.
    """
    try:
        data = read_capped(path, entry_cap(key), follow=False)
    except OSError:
        return None
    try:
        return unframe_side(data, key, secret)
    except Exception:  # an entry this secret tagged that no longer fits the code: rebuilt
        return None


def write_entry(path: Path, key: tuple[Any, ...], side: LoadedSide, secret: bytes) -> bool:
    """Store a side atomically (temp file, rename); False when it cannot be stored."""
    try:
        data = frame_side(key, side, secret)
    except ValueError:
        return False
    return write_atomically(path, data)


def write_atomically(path: Path, data: bytes) -> bool:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place; False on an OSError."""
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return False
    return True


def config_secret(config: pytest.Config, directory: Optional[Path]) -> bytes:
    """The secret for this run's entries: never one kept under the rootdir or the cache directory."""
    roots = (Path(config.rootpath),) + ((directory.parents[1],) if directory is not None else ())
    return user_secret(roots)


def cache_dir(config: pytest.Config) -> Optional[Path]:
    """The plugin's directory in pytest's cache; None without the cacheprovider plugin."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return None
    try:
        return Path(cache.mkdir(CACHE_DIR))
    except OSError:
        return None


class SideStore:
    """Loads sides through the cache: each side from its entry when current, else read (and stored)."""

    def __init__(self, directory: Optional[Path], secret: bytes, progress: Optional[SideProgress] = None) -> None:
        self.directory = directory
        #: what entries are tagged with (the xdist hand-over gives it to the workers)
        self.secret = secret
        self.progress = progress
        #: each side's entry path and key when it is in the cache now (the xdist hand-over reuses them)
        self.entries: list[tuple[Path, tuple[Any, ...]]] = []
        #: how many sides the last load was asked for
        self.asked = 0

    def load(self, requests: list[SideRequest]) -> list[LoadedSide]:
        """The sides asked for, in order; those not cached are read (the old one in a child)."""
        self.asked = len(requests)
        states = [inputs_state(r) for r in requests]
        keys = [entry_key(r, s) for r, s in zip(requests, states)]
        paths = [entry_path(self.directory, r) if self.directory else None for r in requests]
        found = [read_entry(p, k, self.secret) if p is not None else None for p, k in zip(paths, keys)]
        missing = [i for i, side in enumerate(found) if side is None]
        if len(missing) == 2:
            found[0], found[1] = load_two(requests[0], requests[1], progress=self.progress)
        else:
            for i in missing:
                found[i] = core.load_side(requests[i], self.progress.start(i) if self.progress else None)
                if self.progress:
                    self.progress.done(i)
        sides = [side for side in found if side is not None]
        stored = [paths[i] is not None and i not in missing for i in range(len(requests))]
        for i in missing:
            path = paths[i]
            if path is not None and inputs_state(requests[i]) == states[i]:
                stored[i] = write_entry(path, keys[i], sides[i], self.secret)
        self.entries = [(p, k) for p, k, ok in zip(paths, keys, stored) if p is not None and ok]
        return sides

"""Writing the reports where CI asks for them, by one rule for the gate and the merge command.

An output (a report file, `$GITHUB_STEP_SUMMARY`, `$GITHUB_OUTPUT`) is written only to a regular
file or a new one. A symbolic link, a FIFO or a device is skipped with one warning line and the
verdict stands: nothing is written through a link, and no write waits for a reader. An output that
names an input, or cannot be written at all, is a usage error before anything is read, which each
surface raises itself (:func:`refused_output` says why).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Optional

from .json_file import write_text

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NOT_REGULAR = "not a regular file (a FIFO or a device): writing there could wait forever"


def write_output(path: Path, text: str, *, append: bool = False) -> Optional[str]:
    """Write (or ``append``) ``text`` to ``path``, or return why it was skipped. Replacing goes
    through a temporary file beside ``path``; appending checks with ``lstat`` first, then opens with
    ``O_NOFOLLOW`` and ``O_NONBLOCK`` and checks again. Raises OSError when it cannot write."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = None  # not there yet (or not reachable: the write names that)
    if mode is not None and stat.S_ISLNK(mode):
        return "a symbolic link: a report is never written through a link"
    if mode is not None and not stat.S_ISREG(mode):
        return _NOT_REGULAR
    if not append:
        write_text(path, text)
        return None
    fd = os.open(path, _APPEND, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # it changed since the check
            return _NOT_REGULAR
        os.set_blocking(fd, True)
        with os.fdopen(fd, "a", encoding="utf-8", closefd=False) as handle:
            handle.write(text)
    finally:
        os.close(fd)
    return None


def ci_files() -> list[tuple[str, Path]]:
    """The files GitHub Actions has this step append to, where set: (the variable's name, its path)."""
    return [
        (f"${name}", Path(value))
        for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")
        if (value := os.environ.get(name))
    ]


def publish_to_ci(markdown: str, verdict: str) -> list[str]:
    """Append ``markdown`` to `$GITHUB_STEP_SUMMARY` and `verdict=<verdict>` to `$GITHUB_OUTPUT`, where
    set; returns one warning line for each that was skipped or could not be written (the verdict stands)."""
    texts = {"$GITHUB_STEP_SUMMARY": markdown, "$GITHUB_OUTPUT": f"verdict={verdict}\n"}
    warnings = []
    for name, path in ci_files():
        try:
            if (reason := write_output(path, texts[name], append=True)) is not None:
                warnings.append(skipped_line(name, path, reason))
        except OSError as exc:
            warnings.append(f"WARNING: {name}: cannot append to {path}: {exc.strerror or exc}")
    return warnings


def skipped_line(option: str, path: Path, reason: str) -> str:
    """`WARNING: <option>: <path> skipped: <why>; the verdict stands`."""
    return f"WARNING: {option}: {path} skipped: {reason}; the verdict stands"


def _identity(path: Path) -> tuple[str, Optional[tuple[int, int]]]:
    """A path's real path, and its (device, inode) when it exists: links and hard links compare equal."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return real, None
    return real, (st.st_dev, st.st_ino)


def named_input(target: Path, inputs: Iterable[tuple[str, Path]]) -> Optional[str]:
    """What of ``inputs`` (each: what it is, its path) ``target`` names by any path, link or hard link; None: none."""
    real, inode = _identity(target)
    for what, path in inputs:
        other_real, other_inode = _identity(path)
        if real == other_real or (inode is not None and inode == other_inode):
            return what
    return None


def refused_output(outputs: Sequence[tuple[str, Optional[Path]]], inputs: Iterable[tuple[str, Path]]) -> Optional[str]:
    """`<option>: <why>` for the first of ``outputs`` that stops the run before anything is read, or
    None. A report file (not a CI file: GitHub makes those) must be writable where it is: a
    temporary file is made and removed in its directory, as the report will be written through one
    (so an existing report is never truncated); no directory is ever made."""
    given = list(inputs)
    for option, target in outputs:
        if target is None:
            continue
        why = None if option.startswith("$") else _unwritable(target)
        if why is None and (what := named_input(target, given)) is not None:
            why = f"{target} is {what}: an output never overwrites an input"
        if why is not None:
            return f"{option}: {why}"
    return None


def _unwritable(target: Path) -> Optional[str]:
    """Why a report cannot be written at ``target``, or None."""
    if target.is_dir():
        return f"{target} is a directory, not a file"
    parent = target.parent
    if not parent.is_dir():
        # the nearest ancestor that exists says what is wrong: a file in the way, or a missing directory
        chain = (parent, *parent.parents)
        found = next((path for path in chain if path.exists()), None)  # None: not even a root (a lost drive)
        if found is not None and not found.is_dir():
            return f"cannot write {target}: {found} is a file, not a directory"
        missing = next((path for path in chain if path.parent == found), chain[-1])
        return f"cannot write {target}: directory {missing} does not exist"
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        return f"cannot write {target}: {exc.strerror or exc}"
    os.close(fd)
    os.unlink(probe)
    if target.exists() and not os.access(target, os.W_OK):
        return f"cannot write {target}: permission denied"
    return None

"""Opening a file the gate did not write (a side's file, a verifier log, a cache entry): never waited on.

Each open is non-blocking, so a FIFO in place of the file returns at once instead of waiting for a
writer, and the descriptor itself must be a regular file (``fstat``: a file swapped after a check is
still caught). Reads are capped: a larger file is refused whole, or (a log) only its end is read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """The path names something other than a regular file (a FIFO, a device, a directory, a link)."""


class TooLarge(OSError):
    """The file is larger than the cap the reader allows for it."""


def open_regular(path: Path, *, follow: bool = True, buffering: int = 0) -> BinaryIO:
    """``path`` opened for binary reading when it is a regular file, else :class:`NotRegular`;
    ``follow=False`` refuses a symbolic link as the last part of the path."""
    flags = _FLAGS | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        handle = open(  # noqa: SIM115 - returned to the caller
            path, "rb", buffering=buffering, opener=lambda name, _: os.open(name, flags)
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegular(errno.ELOOP, "is a symbolic link", str(path)) from None
        raise
    if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        handle.close()
        raise NotRegular(errno.EINVAL, "is not a regular file", str(path))
    return handle


def read_capped(path: Path, cap: int, *, follow: bool = True) -> bytes:
    """A regular file's whole content, at most ``cap`` bytes; a larger file raises :class:`TooLarge`."""
    with open_regular(path, follow=follow) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > cap:
            raise TooLarge(errno.EFBIG, f"larger than {cap} bytes", str(path))
        data = handle.read(size + 1)
    if len(data) > size:
        raise TooLarge(errno.EFBIG, "grew while being read", str(path))
    return data


def read_end(handle: BinaryIO, cap: int) -> tuple[bytes, bool]:
    """The last ``cap`` bytes of an open file (one bounded read), and whether anything came before them."""
    size = os.fstat(handle.fileno()).st_size
    start = max(0, size - cap)
    handle.seek(start)
    return handle.read(cap), start > 0


class SmallFileError(ValueError):
    """The file could not be used; the message says why, without naming the file."""


def refusal(exc: OSError, cap: int = 0) -> str:
    """Why a file could not be read, in the words of a message that names the file apart."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, NotRegular):
        return "not a regular file"
    if isinstance(exc, TooLarge):
        return f"larger than {cap >> 20} MiB" if cap >= 1 << 20 else f"larger than {cap >> 10} KiB"
    return f"cannot read: {exc.strerror or exc}"


def read_small(path: Path, limit: int) -> bytes:
    """The file's bytes; SmallFileError when it is missing, not a regular file, unreadable or over ``limit``."""
    try:
        return read_capped(path, limit)
    except OSError as exc:
        raise SmallFileError(refusal(exc, limit)) from None

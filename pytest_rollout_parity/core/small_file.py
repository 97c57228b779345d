"""Reading a small file kept beside the rollouts (a coverage inventory, a known-flips list) safely.

Such a file may come with rollouts from someone else: it is opened without blocking (a FIFO in its
place is refused, never waited on), must be a regular file, and is read only up to a cap, so a
sparse or endless file costs no memory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SmallFileError(ValueError):
    """The file could not be used; the message says why, without naming the file."""


def read_small(path: Path, limit: int) -> bytes:
    """The file's bytes; SmallFileError when it is missing, not a regular file, unreadable or over ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SmallFileError("no such file") from None
    except IsADirectoryError:
        raise SmallFileError("is a directory") from None
    except OSError as exc:
        raise SmallFileError(f"cannot read it: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SmallFileError("is a directory" if stat.S_ISDIR(mode) else "not a regular file")
    with open(fd, "rb") as handle:
        try:
            data = handle.read(limit + 1)
        except OSError as exc:
            raise SmallFileError(f"cannot read it: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise SmallFileError(f"larger than {_size(limit)}")
    return data


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"

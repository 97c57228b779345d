"""Reading a small file kept beside the rollouts (a coverage inventory, a known-flips list) safely.

The bounded read is :func:`.bounded.read_capped` (non-blocking, regular files only, capped); this
module only words its refusals for a note or an input error that names the file itself.
"""

from __future__ import annotations

from pathlib import Path

from .bounded import NotRegular, TooLarge, read_capped


class SmallFileError(ValueError):
    """The file could not be used; the message says why, without naming the file."""


def read_small(path: Path, limit: int) -> bytes:
    """The file's bytes; SmallFileError when it is missing, not a regular file, unreadable or over ``limit``."""
    try:
        return read_capped(path, limit)
    except FileNotFoundError:
        raise SmallFileError("no such file") from None
    except IsADirectoryError:
        raise SmallFileError("is a directory") from None
    except NotRegular:
        raise SmallFileError("not a regular file") from None
    except TooLarge:
        raise SmallFileError(f"larger than {_size(limit)}") from None
    except OSError as exc:
        raise SmallFileError(f"cannot read it: {exc.strerror or exc}") from None


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"

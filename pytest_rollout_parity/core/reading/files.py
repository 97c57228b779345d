"""Opening a side's file: compressed files read through the stdlib, other wrong files named early.

gzip, bz2 and xz files are decompressed as they stream, so nothing grows with the file's size.
Row offsets are then offsets in the *decompressed* stream: re-reading one row (a flip's verifier
output, ``TaskSide.rows``, deferred prompt labels) decompresses from the start up to that offset.
:class:`RowAt` keeps one stream open while the reads move forward, so reading rows in file order
costs one pass; a read behind the stream's position, or a fresh ``read_object_at``, starts over.
zstd has no stdlib module before Python 3.14, so such a file is named with the command to run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Optional

from ..errors import CompareInputError, Place

#: magic bytes -> compression read through the stdlib
COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
ZSTD = b"\x28\xb5\x2f\xfd"
SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
SIDECAR_SUFFIX = "_failures.jsonl"
#: Rows run to tens of kilobytes: a 256 KiB buffer reads a line in one piece (the default 8 KiB
#: buffer assembles it from several reads and copies); a larger one reads no faster and costs
#: memory in each reading process (docs/performance.md has the measurements).
READ_BUFFER = 256 << 10


def compression(head: bytes) -> Optional[str]:
    """ "gzip", "bz2" or "xz" when ``head`` (a file's first bytes) starts with that magic, else None."""
    for magic, kind in COMPRESSED.items():
        if head.startswith(magic):
            return kind
    return None


def open_side_file(path: Path, display: str) -> BinaryIO:
    """A side's file opened for reading (buffered for long lines); not there, a directory, a device or unreadable: an input error."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise CompareInputError(display, "no such file") from None
    except OSError as exc:
        raise CompareInputError(display, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise CompareInputError(display, "is a directory, not a rollouts JSONL file")
    if not stat.S_ISREG(mode):
        raise CompareInputError(display, "is not a regular file")
    try:
        return open(path, "rb", buffering=READ_BUFFER)
    except OSError as exc:
        raise CompareInputError(display, f"cannot read: {exc.strerror or exc}") from None


def _peek(raw: BinaryIO) -> bytes:
    head = raw.read(6)
    raw.seek(0)
    return head


def decompressed(raw: BinaryIO, display: str) -> BinaryIO:
    """``raw`` itself, or a stream decompressing it; zstd is an input error naming the command."""
    head = _peek(raw)
    if head.startswith(ZSTD):
        raw.close()
        raise CompareInputError(
            display,
            "a zstd-compressed file, which Python cannot read before 3.14: "
            f"decompress it first (zstd -d {display}) and pass the .jsonl",
        )
    kind = compression(head)
    # the decompressors are imported for the files that need them, not by every reading process
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(raw)  # type: ignore[return-value]
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(raw)  # type: ignore[return-value]
    return raw


def check_first_line(stripped: bytes, place: Place) -> None:
    """A JSON array or pretty-printed JSON is named as such (``place``: the file's first line)."""
    if stripped.startswith(b"["):
        raise place.error("a JSON array, not JSON Lines (one object per line): convert it with jq -c '.[]'")
    if stripped == b"{":
        raise place.error("pretty-printed JSON, not JSON Lines (one object per line): convert it with jq -c .")


def main_file_of(path: Path) -> Optional[Path]:
    """The main rollouts file a `<stem>_failures.jsonl` sidecar belongs to (None: not a sidecar name)."""
    name = plain_name(path.name)
    if not name.endswith(SIDECAR_SUFFIX):
        return None
    return path.with_name(name[: -len(SIDECAR_SUFFIX)] + ".jsonl")


def companion(path: Path, name_for: Callable[[Path], Path]) -> Path:
    """A file kept beside ``path`` (``name_for`` names it): next to the path as given first;
    when none is there and the path is a symlink, next to the file it resolves to.

    So both a link to a file and a farm of links (each companion linked too) find theirs.
    """
    given = name_for(path)
    if given.exists() or not path.is_symlink():
        return given
    target = name_for(Path(os.path.realpath(path)))
    return target if target.exists() else given


#: why a file found beside a side is refused
LEADS_OUT = "a link leading out of its side's directory: files the gate finds beside a side must resolve there"


def inside(path: str | os.PathLike[str], directory: str | os.PathLike[str]) -> bool:
    """Whether ``path`` resolves to ``directory`` or below it (both resolved)."""
    real, home = os.path.realpath(path), os.path.realpath(directory)
    return real == home or real.startswith(home.rstrip(os.sep) + os.sep)


def homes(main: Path, roots: Sequence[Path] = ()) -> list[Path]:
    """Where a file found beside ``main`` may resolve: the directory of the path as given, that of
    the file it resolves to, and each of ``roots``."""
    return [main.parent, Path(os.path.realpath(main)).parent, *roots]


def leads_out(found: Path, main: Path, roots: Sequence[Path] = ()) -> bool:
    """Whether ``found`` (a file beside ``main``) is there and resolves outside :func:`homes` of ``main``."""
    if not (found.exists() or found.is_symlink()):
        return False
    return not any(inside(found, home) for home in homes(main, roots))


def check_home(found: Path, main: Path, shown: str, roots: Sequence[Path] = ()) -> None:
    """A companion the gate found by itself (a sidecar, a coverage or metrics file) stays home: when
    it exists, it resolves inside :func:`homes` of ``main``; a link leading elsewhere is an input
    error naming the link (``shown``), raised before the file is opened."""
    if leads_out(found, main, roots):
        raise CompareInputError(shown, f"{LEADS_OUT} (copy the file in, or name the side by the link's target)")


def plain_name(name: str) -> str:
    """A file name without its compression suffix."""
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


class RowAt:
    """Reads the line at a byte offset of the (decompressed) file; forward reads share one stream."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.raw: Optional[BinaryIO] = None
        self.stream: Optional[BinaryIO] = None

    def line(self, offset: int) -> bytes:
        """The raw line starting at ``offset``."""
        stream = self.stream
        if stream is None or (stream is not self.raw and stream.tell() > offset):
            self.close()
            self.raw = open(self.path, "rb")  # noqa: SIM115 - closed by close()
            stream = self.stream = decompressed(self.raw, str(self.path))
        stream.seek(offset)  # a decompressing stream seeks forward by reading
        return stream.readline()

    def close(self) -> None:
        """Close the stream and the file under it."""
        for handle in (self.stream, self.raw):
            if handle is not None:
                handle.close()
        self.raw = self.stream = None

    def __enter__(self) -> RowAt:
        return self

    def __exit__(
        self, kind: Optional[type[BaseException]], value: Optional[BaseException], traceback: Optional[TracebackType]
    ) -> None:
        self.close()


#: Files written beside the rollouts that are never rollouts, by what each is: `gym eval
#: health-check`'s two (NeMo Gym PR 2705), and the `--prompt` task and `--echo` items of other producers.
HEALTH_CHECK_FILES = {
    "rollout_verdicts.jsonl": "the health check's per-rollout verdicts (gym eval health-check)",
    "quality_summary.json": "the health check's quality summary (gym eval health-check)",
}
WRITTEN_BESIDE = {
    "_items.jsonl": "the --echo output (Responses API items, <stem>_items.jsonl)",
    "_task.jsonl": "the task written for --prompt (<stem>_task.jsonl)",
}


def written_beside(name: str) -> str:
    """What a file written beside the rollouts is, by its name (`""`: none of those)."""
    plain = plain_name(os.path.basename(name))
    if plain in HEALTH_CHECK_FILES:
        return HEALTH_CHECK_FILES[plain]
    return next((what for suffix, what in WRITTEN_BESIDE.items() if plain.endswith(suffix)), "")

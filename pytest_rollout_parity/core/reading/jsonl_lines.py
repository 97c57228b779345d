"""JSONL lines to objects: a side's file read line by line, each line one JSON object, `path:line` errors.

Lines are parsed by the skeleton reader when one is given, else by ``pydantic_core.from_json``;
the stdlib words what neither takes. A compressed file is read decompressed, its offsets those of
the decompressed stream. A row is read again from its offset (:func:`read_object_at`).
"""

from __future__ import annotations

import json
import lzma
import os
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Optional

from ..errors import CompareInputError, Place
from .digest import ContentDigest
from .files import RowAt, check_first_line, decompressed, open_side_file
from .skeleton import DecodeError as SKELETON_ERRORS
from .skeleton import Decoder

BOM = b"\xef\xbb\xbf"
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
#: called while a side streams: (bytes of the file read, the file's size in bytes)
Progress = Callable[[int, int], None]
PROGRESS_STEP = 1 << 20  # report at most once per MiB of rows read


def _fast_from_json() -> Callable[[bytes], Any]:
    """``from_json`` without its string cache where pydantic-core has the switch (2.16 and later).

    Rows hold thousands of distinct strings: looking each up in the cache costs more than it saves.
    Imported on first use: the reader child with the skeleton reader may never need it.
    """
    from pydantic_core import from_json

    try:
        from_json(b'{"a": "b"}', cache_strings=False)
    except TypeError:  # an older pydantic-core
        return from_json
    return partial(from_json, cache_strings=False)


_parsers: list[Callable[[bytes], Any]] = []


def _from_json(raw: bytes) -> Any:
    if not _parsers:
        _parsers.append(_fast_from_json())
    return _parsers[0](raw)


def parse_line(raw: bytes, place: Place, *, last_without_newline: bool = False) -> Any:
    """One JSON value from one line; the fast parser first, the stdlib for leniency and messages."""
    try:
        return _from_json(raw)
    except ValueError:
        pass
    text = raw.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        if last_without_newline:
            raise place.error(
                "the last line is not complete JSON and has no newline: it looks truncated, "
                "as a hard kill leaves a file (remove the partial line or rerun that rollout)"
            ) from None
        if isinstance(exc, RecursionError):
            raise place.error("JSON nested too deeply to read") from None
        if exc.pos >= len(text.rstrip()):
            raise place.error(
                "invalid JSON: the line ends before its object does (cut short by a crashed writer?)"
            ) from None
        message = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
        raise place.error(f"invalid JSON: {message} (column {exc.colno})") from None


#: The longest line read, the same for a plain file and a compressed one (counted after
#: decompression, where a small file can hold a huge line): rows run to tens of kilobytes.
MAX_LINE = 64 << 20


def iter_objects(
    path: Path,
    display: str,
    decode: Optional[Decoder] = None,
    progress: Optional[Progress] = None,
    digest: Optional[ContentDigest] = None,
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset, object) for every non-blank line; errors name `<file>:<line>`.

    ``decode``, when given, is tried first (the skeleton reader); a line it cannot take is parsed
    in full, which also words any error. A gzip, bz2 or xz file is read decompressed (offsets are
    then in the decompressed stream). ``progress`` is told the bytes of the file read so far;
    ``digest``, when given, takes every line's bytes as read (decompressed).
    """
    raw_file = open_side_file(path, display)
    with raw_file:
        try:
            total = os.fstat(raw_file.fileno()).st_size
            handle = decompressed(raw_file, display)
        except OSError as exc:
            raise CompareInputError(display, f"cannot read: {exc.strerror or exc}") from None
        with handle:
            yield from _objects(handle, display, decode, _reporter(raw_file, total, progress), digest)


def _reporter(raw_file: BinaryIO, total: int, progress: Optional[Progress]) -> Optional[Callable[[], None]]:
    if progress is None:
        return None
    return lambda: progress(min(raw_file.tell(), total), total)


def _objects(
    handle: BinaryIO,
    display: str,
    decode: Optional[Decoder],
    report: Optional[Callable[[], None]],
    digest: Optional[ContentDigest] = None,
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    offset = 0
    line_no = 0
    next_report = PROGRESS_STEP
    first = True
    try:
        while raw := handle.readline(MAX_LINE + 1):
            if len(raw) > MAX_LINE:
                raise CompareInputError(
                    display,
                    f"a line longer than {MAX_LINE >> 20} MiB (counted decompressed): no rollout row is "
                    "that large; a damaged file, or one built to exhaust memory?",
                    line_no + 1,
                )
            line_no += 1
            start = offset
            offset += len(raw)
            if digest is not None:
                digest.update(raw)
            if report is not None and offset >= next_report:
                report()
                next_report = offset + PROGRESS_STEP
            if line_no == 1 and raw.startswith(BOM):
                raw = raw[3:]
                start += 3
            if line_no == 1 and raw.startswith(LFS_POINTER):
                raise CompareInputError(display, "a Git LFS pointer, not the file: run git lfs pull")
            if not raw or raw.isspace() or _unicode_blank(raw):
                continue
            if first:
                check_first_line(raw.strip(), Place(display, line_no))
                first = False
            obj: Any = None
            if decode is not None:
                try:
                    obj = decode(raw)
                except SKELETON_ERRORS:
                    obj = None
            if obj is None:
                obj = parse_line(raw, Place(display, line_no), last_without_newline=not raw.endswith(b"\n"))
            if not isinstance(obj, dict):
                raise CompareInputError(display, f"expected a JSON object per line, got {_kind(obj)}", line_no)
            yield line_no, start, obj
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:  # a compressed stream cut short or corrupt
        reason = getattr(exc, "strerror", None) or exc
        raise CompareInputError(display, f"cannot read: {reason}") from None
    if digest is not None:
        digest.end_file()
    if report is not None:
        report()


def _unicode_blank(raw: bytes) -> bool:
    """A line of whitespace beyond ASCII only (U+00A0, U+2028, U+3000...): blank, like an empty one.

    A JSON object line starts with ``{`` once ASCII whitespace is stripped, so only a line whose
    first other byte is not ASCII is decoded to check.
    """
    stripped = raw.lstrip()
    return stripped[0] >= 0x80 and raw.decode("utf-8", "replace").isspace()


def read_object_at(path: Path, offset: int, reader: Optional[RowAt] = None) -> dict[str, Any]:
    """The row whose line starts at ``offset`` (for ``TaskSide.rows``).

    ``reader`` keeps a compressed file's stream open across reads that move forward.
    """
    if reader is not None:
        raw = reader.line(offset)
    else:
        with RowAt(path) as once:
            raw = once.line(offset)
    value = parse_line(raw, Place(str(path), None, f"{path}@{offset}"))
    if not isinstance(value, dict):
        raise CompareInputError(str(path), f"the row at byte {offset} changed since it was read")
    return value


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"

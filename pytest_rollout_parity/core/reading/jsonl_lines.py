"""A side's file read line by line, each line one JSON object; errors name `path:line`.

gzip, bz2 and xz stream decompressed, so nothing grows with the file's size; a row's offset is in
the decompressed stream, so reading one row again decompresses up to it (:class:`RowAt`). zstd has
no stdlib module before Python 3.14: such a file is named with the command to run.

The skeleton reader decodes only the fields loading reads (:func:`.fields.load_paths`) with
pydantic-core, which skips the large `response.output` trajectory in Rust; its dict goes through the
same :func:`.row_facts.reduce_row`, so every reader classifies alike. A line it cannot take falls
back to the full parse, which also words the errors; ``PARITY_PARSER=full`` turns it off.
"""

from __future__ import annotations

import importlib
import json
import lzma
import os
import zlib
from collections.abc import Callable, Iterator
from functools import cache, lru_cache, partial
from pathlib import Path
from typing import Any, BinaryIO, Optional

from ..errors import CompareInputError, Place
from .bounded import open_regular, refusal
from .fields import load_paths
from .row_facts import json_kind

BOM = b"\xef\xbb\xbf"
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
#: Rows run to tens of kilobytes: a 256 KiB buffer reads a line in one piece (the default 8 KiB
#: buffer assembles it from several reads and copies); a larger one reads no faster and costs
#: memory in each reading process (docs/performance.md has the measurements).
READ_BUFFER = 256 << 10
#: The longest line read, the same for a plain file and a compressed one (counted after
#: decompression, where a small file can hold a huge line): rows run to tens of kilobytes.
MAX_LINE = 64 << 20
#: called while a side streams: (bytes of the file read, the file's size in bytes)
Progress = Callable[[int, int], None]
PROGRESS_STEP = 1 << 20  # report at most once per MiB of rows read
#: Each compression's magic bytes and module, imported for the files that need it.
COMPRESSIONS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "lzma"))
#: A line's fields as a dict; None leaves the line to the full parse.
Decoder = Callable[[bytes], Optional[dict[str, Any]]]


def reader_name() -> str:
    """``full`` when ``PARITY_PARSER`` asks for it, else the skeleton over pydantic-core."""
    return "full" if os.environ.get("PARITY_PARSER", "").strip().lower() == "full" else "pydantic-core"


def skeleton_decoder(key: Optional[str], inferred: tuple[str, ...] = ()) -> Optional[Decoder]:
    """Rows keyed by ``key`` (None: detection) and the ids ``inferred`` decoded; None for the full reader."""
    return None if reader_name() == "full" else _core_decoder(load_paths(key, inferred))


@lru_cache(maxsize=16)
def _core_decoder(paths: tuple[str, ...]) -> Decoder:
    """pydantic-core's validator of the paths (built once per set of paths: a side, its sidecar and
    each shard ask for the same ones), each dotted path also as the literal top-level key it may be."""
    from pydantic_core import SchemaValidator

    split = [parts for path in paths for parts in ([path], path.split("."))]
    return SchemaValidator(_core_schema(split)).validate_json


def _core_schema(paths: list[list[str]]) -> dict[str, Any]:
    """A typed dict of optional fields, extra keys ignored; a field a longer path reads inside is that
    typed dict for an object and whole otherwise (as the full parse has it), as when a path takes it whole."""
    inside: dict[str, list[list[str]]] = {}
    for head, *rest in paths:
        inside.setdefault(head, []).append(rest)
    fields = {}
    for name, rests in inside.items():
        schema: dict[str, Any] = {"type": "any"}
        if all(rests):
            schema = {"type": "union", "choices": [_core_schema(rests), schema], "mode": "left_to_right"}
        fields[name] = {"type": "typed-dict-field", "schema": schema, "required": False}
    return {"type": "typed-dict", "fields": fields, "total": False, "extra_behavior": "ignore"}


#: What the skeleton may raise on a line it cannot take; the full parse then reads (or rejects) it.
#: pydantic-core's errors are ValueErrors (naming them would import pydantic-core here).
DecodeError: tuple[type[BaseException], ...] = (ValueError, RecursionError)


class FirstRowInFull:
    """Leaves rows to the full parse (returns None) until :meth:`ready` is told the side's inferred id
    candidates: its first voting row is parsed in full so that every field shows (and what a file of
    no rollouts is); the skeleton reads with them from then on."""

    def __init__(self, key: Optional[str]) -> None:
        self.key = key
        self.inner: Optional[Decoder] = None

    def ready(self, inferred: tuple[str, ...]) -> None:
        self.inner = skeleton_decoder(self.key, inferred)

    def __call__(self, raw: bytes) -> Optional[dict[str, Any]]:
        inner = self.inner
        return inner(raw) if inner is not None else None


class ContentDigest:
    """What a side's files held, as one short digest computed while they are read. Parts of a run
    split over CI jobs are joined only when every part read the same inputs. Each file (the rollouts
    file, then its sidecar; shard after shard) gets its own CRC-32 and byte count, one C call a line
    and no second pass; the digest is the CRC-32 of those records, so a row moved from the rollouts
    file to its sidecar changes it too. A check of accidents, not of forgery (whoever forges a part's
    JSON can forge its outcomes too): CRC-32 takes a third of SHA-256's time on every byte."""

    __slots__ = ("files", "_crc", "_size")

    def __init__(self) -> None:
        #: each file read to its end: `<bytes>:<crc32 hex>`, in reading order
        self.files: list[str] = []
        self._crc = 0
        self._size = 0

    def update(self, raw: bytes) -> None:
        """Add one line's bytes, as read (before anything is stripped)."""
        self._crc = zlib.crc32(raw, self._crc)
        self._size += len(raw)

    def end_file(self) -> None:
        """The file being read ended: record it, and start the next one."""
        self.files.append(f"{self._size}:{self._crc:08x}")
        self._crc = 0
        self._size = 0

    def text(self) -> str:
        """`crc32:<hex of the per-file records>:<bytes>:<files>`: the form the JSON summary and the merge compare."""
        combined = zlib.crc32("\n".join(self.files).encode("ascii"))
        size = sum(int(record.split(":", 1)[0]) for record in self.files)
        return f"crc32:{combined:08x}:{size}:{len(self.files)}"


@cache
def _from_json() -> Callable[[bytes], Any]:
    """``from_json`` without its string cache where pydantic-core has the switch (2.16+): rows hold
    thousands of distinct strings, whose lookups cost more than they save. Imported on first use: the
    reader child with the skeleton reader may never need it."""
    from pydantic_core import from_json

    try:
        from_json(b'{"a": "b"}', cache_strings=False)
    except TypeError:  # an older pydantic-core
        return from_json
    return partial(from_json, cache_strings=False)


def parse_line(raw: bytes, place: Place, *, last_without_newline: bool = False) -> Any:
    """One JSON value from one line; the fast parser first, the stdlib for leniency and messages."""
    try:
        return _from_json()(raw)
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


def decompressed(raw: BinaryIO, display: str) -> BinaryIO:
    """``raw`` itself, or a stream decompressing it; zstd is an input error naming the command."""
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        raw.close()
        raise CompareInputError(
            display,
            "a zstd-compressed file, which Python cannot read before 3.14: "
            f"decompress it first (zstd -d {display}) and pass the .jsonl",
        )
    for magic, module in COMPRESSIONS:
        if head.startswith(magic):
            stream: BinaryIO = importlib.import_module(module).open(raw)
            return stream
    return raw


def iter_objects(
    path: Path,
    display: str,
    decode: Optional[Decoder] = None,
    progress: Optional[Progress] = None,
    digest: Optional[ContentDigest] = None,
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, byte offset, object) for every non-blank line; ``decode`` is tried first, a line
    it cannot take parsed in full; ``digest`` takes every line's bytes as read (decompressed)."""
    try:
        raw_file = open_regular(path, buffering=READ_BUFFER)
    except IsADirectoryError as exc:
        raise CompareInputError(display, f"{refusal(exc)}, not a rollouts JSONL file") from None
    except OSError as exc:
        raise CompareInputError(display, refusal(exc)) from None
    with raw_file:
        try:
            total = os.fstat(raw_file.fileno()).st_size
            handle = decompressed(raw_file, display)
        except OSError as exc:
            raise CompareInputError(display, refusal(exc)) from None
        offset = line_no = 0
        next_report = PROGRESS_STEP
        first = True
        try:
            with handle:
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
                    if progress is not None and offset >= next_report:
                        progress(min(raw_file.tell(), total), total)
                        next_report = offset + PROGRESS_STEP
                    if line_no == 1 and raw.startswith(BOM):
                        raw = raw[3:]
                        start += 3
                    if line_no == 1 and raw.startswith(LFS_POINTER):
                        raise CompareInputError(display, "a Git LFS pointer, not the file: run git lfs pull")
                    # blank as an empty line: whitespace beyond ASCII only (U+00A0, U+2028...); an object's
                    # line starts with "{" once ASCII whitespace goes, so only a non-ASCII start is decoded
                    blank = not raw or raw.isspace()
                    if blank or (raw.lstrip()[0] >= 0x80 and raw.decode("utf-8", "replace").isspace()):
                        continue
                    if first:  # a JSON array or pretty-printed JSON is named as such
                        first = False
                        stripped = raw.strip()
                        if stripped.startswith(b"["):
                            raise Place(display, line_no).error(
                                "a JSON array, not JSON Lines (one object per line): convert it with jq -c '.[]'"
                            )
                        if stripped == b"{":
                            raise Place(display, line_no).error(
                                "pretty-printed JSON, not JSON Lines (one object per line): convert it with jq -c ."
                            )
                    obj: Any = None
                    if decode is not None:
                        try:
                            obj = decode(raw)
                        except DecodeError:
                            obj = None
                    if obj is None:
                        obj = parse_line(raw, Place(display, line_no), last_without_newline=not raw.endswith(b"\n"))
                    if not isinstance(obj, dict):
                        raise CompareInputError(
                            display, f"expected a JSON object per line, got {json_kind(obj)}", line_no
                        )
                    yield line_no, start, obj
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:  # a compressed stream cut short or corrupt
            reason = getattr(exc, "strerror", None) or exc
            raise CompareInputError(display, f"cannot read: {reason}") from None
        if digest is not None:
            digest.end_file()
        if progress is not None:
            progress(total, total)  # read to its end


class RowAt:
    """Reads the line at a byte offset of a (decompressed) file; forward reads of a file share one
    stream. At most two files are open at a time (a shard and its sidecar: a side may have
    thousands of shards); reading another, or going back in a compressed one, closes them."""

    def __init__(self) -> None:
        #: each file open: its stream (decompressing, or the file itself) and the file
        self.open: dict[str | Path, tuple[BinaryIO, BinaryIO]] = {}

    def line(self, path: str | Path, offset: int) -> bytes:
        stream, raw = self.open.get(path) or (None, None)
        if stream is None or (stream is not raw and stream.tell() > offset):
            if stream is not None or len(self.open) > 1:
                self.close()
            raw = open(path, "rb")  # noqa: SIM115 - closed by close()
            stream = decompressed(raw, str(path))
            self.open[path] = (stream, raw)
        stream.seek(offset)  # a decompressing stream seeks forward by reading
        return stream.readline()

    def close(self) -> None:
        for handles in self.open.values():
            for handle in handles:
                handle.close()
        self.open.clear()

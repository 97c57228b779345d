"""Streaming a side: JSONL lines to row facts, the failures sidecar folded in, `path:line` errors.

A side is read line by line; each row is reduced as it is read (:func:`rows.reduce_row`) and only
its facts and its join value are kept, with the byte offset that lets ``TaskSide.rows`` read the
full row again. Memory grows with the number of rows, never with their size.
"""

from __future__ import annotations

import json
import lzma
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Optional, TypeVar

from ..errors import CompareInputError, Place
from ..model import RowFacts, RowOrigin
from .agents import AgentFilter, agent_of
from .attempts import Attempts, Execution, attempt_of, index_pair, logical_key
from .digest import ContentDigest
from .fields import ATTEMPT_INDEX
from .files import RowAt, check_first_line, check_home, companion, decompressed, main_file_of, open_regular, plain_name
from .key_vote import KeyChoice
from .row_facts import fold_failure_record
from .side_builder import PendingRow, RowSource, SideBuilder, is_failure_record
from .skeleton import DecodeError as SKELETON_ERRORS
from .skeleton import Decoder, FirstRowInFull, skeleton_decoder
from .task_idents import TaskIdent

if TYPE_CHECKING:
    from .side_request import SideRequest

BOM = b"\xef\xbb\xbf"
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
T = TypeVar("T")
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


def _sidecar_name(path: Path) -> Path:
    return path.with_name(Path(plain_name(path.name)).stem + "_failures.jsonl")


def sidecar_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_failures.jsonl` beside it (the collector's `failures_path_for`).

    A compressed main file (`<stem>.jsonl.gz`) has its sidecar under the plain name; a symlinked
    main file without one beside the link has the one beside its target.
    """
    return companion(path, _sidecar_name)


def sidecar_places(path: Path) -> tuple[Path, Path]:
    """Both places a side's sidecar may be: beside the path as given, beside the file it resolves to."""
    return _sidecar_name(path), _sidecar_name(Path(os.path.realpath(path)))


def sidecar_display(display: str, main: Path) -> str:
    """The sidecar's name in messages: in the same form as the main file's (as the user named it),
    or its real path when it was found beside a symlink's target, where no such name exists."""
    sidecar = sidecar_path(main)
    if sidecar != _sidecar_name(main):
        return str(sidecar)
    return str(_sidecar_name(Path(display)))


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
    raw_file = open_regular(path, display)
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


@dataclass
class LoadedSide:
    """One side streamed: its row facts in file order (sidecar last) and how its rows are keyed."""

    path: Path
    display: str
    sidecar: Optional[Path]
    choice: KeyChoice
    facts: list[RowFacts] = field(default_factory=list)
    #: the agent (`agent_ref.name`) whose rows the side holds, and each agent's rows in the file
    agent: Optional[str] = None
    agent_rows: dict[str, int] = field(default_factory=dict)
    #: a sharded side's files in order, each (path, name shown, its sidecar's path or None); empty
    #: for a side of one file (``path``, ``display`` and ``sidecar`` are then the whole side)
    shards: tuple[tuple[str, str, Optional[str]], ...] = ()
    #: what the side's files held, as read (:mod:`.digest`); None for rows given in memory
    digest: Optional[str] = None

    @property
    def key(self) -> Optional[str]:
        """The side's join field; None when no row names a task."""
        return self.choice.key

    @property
    def values(self) -> list[Optional[TaskIdent]]:
        """Each row's join value (None: anonymous)."""
        return self.choice.values

    def read_row(self, facts: RowFacts) -> dict[str, Any]:
        """Re-read one row's full dict from its file (its own shard's, on a sharded side)."""
        if self.shards:
            path, _, sidecar = self.shards[facts.shard]
            return read_row_at(Path(path), Path(sidecar) if sidecar else None, facts)
        return read_row_at(self.path, self.sidecar, facts)

    @property
    def files(self) -> list[tuple[Path, str, Optional[Path]]]:
        """Each file of the side as (path, name shown, sidecar or None): one, or each shard's."""
        if not self.shards:
            return [(self.path, self.display, self.sidecar)]
        return [(Path(path), shown, Path(sidecar) if sidecar else None) for path, shown, sidecar in self.shards]

    def shard_facts(self, index: int) -> list[RowFacts]:
        """The rows read from file ``index`` of the side (:attr:`files`) and its sidecar."""
        if not self.shards:
            return self.facts
        return [facts for facts in self.facts if facts.shard == index]


def read_row_at(
    path: Path,
    sidecar: Optional[Path],
    facts: RowFacts,
    main_at: Optional[RowAt] = None,
    sidecar_at: Optional[RowAt] = None,
) -> dict[str, Any]:
    """A row's full dict (a sidecar record folded), kept in memory or read again from its file.

    ``main_at`` and ``sidecar_at`` keep each file's stream open across reads that move forward.
    """
    if facts.row is not None:
        return facts.row
    if facts.offset is None:
        raise LookupError("a row that was neither kept nor read from a file")
    if facts.origin is RowOrigin.MAIN:
        return read_object_at(path, facts.offset, main_at)
    if sidecar is None:
        raise LookupError("a sidecar row without a sidecar file")
    return fold_failure_record(read_object_at(sidecar, facts.offset, sidecar_at))


def standing_failures(records: list[tuple[Optional[tuple[Any, Any]], T]], scored: set[tuple[Any, Any]]) -> list[T]:
    """The sidecar records that still stand, in file order.

    One record per attempt is written: only the last per (task index, rollout index) counts, none
    whose rollout was scored in the main file after all, and every record lacking an index (the
    rule in docs/semantics.md, "Reading a side and its sidecar").
    """
    last: dict[tuple[Any, Any], int] = {}
    for position, (pair, _) in enumerate(records):
        if pair is not None:
            last[pair] = position
    return [
        record
        for position, (pair, record) in enumerate(records)
        if pair is None or (last[pair] == position and pair not in scored)
    ]


def _existing_sidecar(main: Path, display: str) -> Optional[Path]:
    """The side's sidecar when there is one; one linked out of the side's directory is an input error."""
    sidecar = sidecar_path(main)
    if sidecar == main:
        return None
    check_home(sidecar, main, sidecar_display(display, main))
    return sidecar if sidecar.exists() else None


def _sidecar_pairs(sidecar: Optional[Path], shown: str) -> Optional[frozenset[tuple[Any, Any]]]:
    """The (task, rollout) pairs a sidecar names: only those rows' pairs need keeping (a pair held
    for every row of a large side leaves scattered free memory behind). Empty without a sidecar;
    None when the sidecar cannot be read here (its error is worded when it is read in turn, after
    the main file)."""
    if sidecar is None:
        return frozenset()
    try:
        return frozenset(
            pair
            for _, _, record in iter_objects(sidecar, shown, skeleton_decoder(None))
            if (pair := index_pair(record)) is not None
        )
    except Exception:  # whatever it is, it is reported when the sidecar is read in turn
        return None


def _sidecar_records(
    sidecar: Optional[Path],
    shown: str,
    prepare: Callable[[int, int, dict[str, Any]], T],
    attempts: Attempts,
    keep: Callable[[dict[str, Any]], bool],
    digest: Optional[ContentDigest] = None,
) -> list[tuple[Optional[tuple[Any, Any]], Execution, T]]:
    """A sidecar's records (none without one), each through ``prepare``, with what decides whether
    it stands: its (task, rollout) pair and its execution. Those ``keep`` rejects (another agent's)
    are dropped first; a record carrying the stamp marks the side as stamped."""
    if sidecar is None:
        return []
    records = []
    for line_no, offset, record in iter_objects(sidecar, shown, digest=digest):
        if not keep(record):
            continue
        if not attempts.stamped and ATTEMPT_INDEX in record:
            attempts.stamped = True
        pair = index_pair(record)
        records.append(
            (pair, Execution(logical_key(record, pair), attempt_of(record), line_no), prepare(line_no, offset, record))
        )
    return records


def _rank_unranked_rows(
    path: Path,
    display: str,
    decode: Optional[Decoder],
    agents: Optional[AgentFilter],
    attempts: Attempts,
    first_place: int,
) -> None:
    """Read the main file again to rank the rows :class:`Attempts` left unranked before the side
    turned out to carry the stamp (only when the stamp first appears after such rows)."""
    wanted = agents.wanted if agents is not None else None
    place = first_place
    for line_no, _, row in iter_objects(path, display, decode):
        if wanted is not None and agent_of(row) != wanted:
            continue
        pair = index_pair(row)
        if attempts.unranked_line(line_no, pair):
            attempts.see_again(row, place, line_no, pair)
        place += 1
    attempts.unranked = False


def read_side(
    path: Path,
    display: str,
    builder: SideBuilder,
    *,
    keep: bool,
    agents: Optional[AgentFilter] = None,
    progress: Optional[Progress] = None,
    check_first: Optional[Callable[[dict[str, Any]], None]] = None,
) -> Optional[Path]:
    """Feed a rollouts file and its standing sidecar records through ``builder``; the sidecar's path.

    ``keep`` holds every row in memory (the full parse); otherwise rows are reduced as they are
    read, through the skeleton reader when it is available, and read again on demand. ``agents``
    keeps one agent's rows (others are dropped before keying) and stops a side that mixes agents.
    ``progress`` is told the bytes of the main file read so far; ``check_first`` sees each row
    before anything else does, until one has joined the side.
    """
    decode = None if keep else FirstRowInFull(builder.key)
    if decode is not None and builder.rows and builder.vote.inferred is not None:
        decode.ready(builder.vote.inferred)  # a later shard: the first one's row showed them
    sidecar, shown = _existing_sidecar(path, display), sidecar_display(display, path)
    scored: set[tuple[Any, Any]] = set()  # (task, rollout) pairs of the sidecar's records scored here
    wanted = _sidecar_pairs(sidecar, shown)  # None: every pair (the sidecar's are not known)
    attempts = Attempts(wanted)
    main = RowOrigin.MAIN
    rows_before = builder.rows
    for line_no, offset, row in iter_objects(path, display, decode, progress, builder.digest):
        if check_first is not None and builder.rows == rows_before:
            check_first(row)
        if agents is not None and not agents.keep(row):
            continue
        pair = index_pair(row)
        attempts.see_row(row, builder.rows, line_no, pair)
        builder.add_row(row, RowSource(Place(display, line_no), main, offset), keep=keep)
        if decode is not None and not decode.settled and builder.vote.inferred is not None:
            decode.ready(builder.vote.inferred)
        if pair is not None and (wanted is None or pair in wanted):
            scored.add(pair)
    if agents is not None:
        agents.check(display)

    def prepare(line_no: int, offset: int, record: dict[str, Any]) -> PendingRow:
        return builder.prepare(record, RowSource(Place(shown, line_no), RowOrigin.SIDECAR, offset), keep=keep)

    keep_record = agents.keep_record if agents is not None else lambda record: True
    records = _sidecar_records(sidecar, shown, prepare, attempts, keep_record, builder.digest)
    if attempts.stamped:
        if attempts.unranked:
            _rank_unranked_rows(path, display, decode, agents, attempts, rows_before)
        standing = attempts.standing_records([(execution, prepared) for _, execution, prepared in records])
        builder.drop(attempts.displaced)
        builder.superseded += attempts.superseded
    else:
        standing = standing_failures([(pair, prepared) for pair, _, prepared in records], scored)
    for pending in standing:
        builder.add(pending)
    if builder.rows == rows_before:
        raise CompareInputError(display, "no rows at all: the file holds no JSON object")
    return sidecar


def load_side(request: SideRequest, progress: Optional[Progress] = None) -> LoadedSide:
    """Stream the side ``request`` names (its one file and sidecar, or its shards) into row facts
    and join values.

    ``request.agent`` keeps one agent's rows (others are dropped before keying); without it a file
    holding several agents is an input error. ``progress`` is told the bytes of the side's files
    read so far (see :func:`iter_objects`).
    """
    if request.shards:
        return load_shards(request, progress)
    path = Path(request.path)
    builder = SideBuilder(request.key, request.key_option)
    sidecar, agents = read_rollouts(path, request.shown, builder, request.agent, request.agent_option, progress)
    return finish_side(path, request.shown, builder, sidecar, agents.compared, dict(agents.counts))


def load_shards(request: SideRequest, progress: Optional[Progress] = None) -> LoadedSide:
    """A side of several shard files (``request.shards``), each read with its own sidecar and its
    own attempts (:mod:`.attempts`), in the order given, into one side keyed as a whole.

    `_ng_task_index` restarts in every shard's run, so each shard's indices are its own
    (:meth:`SideBuilder.start_shard`). ``request.display`` names the side as a whole (the pattern).
    """
    files = [(Path(path), shown) for path, shown in request.shards]
    builder = SideBuilder(request.key, request.key_option, sharded=True)
    sidecars, agents = read_shards(files, builder, request.agent, request.agent_option, progress)
    return finish_shards(files, request.shown, builder, sidecars, agents.compared, dict(agents.counts))


def read_shards(
    files: Sequence[tuple[Path, str]],
    builder: SideBuilder,
    agent: Optional[str] = None,
    agent_option: str = "--parity-agent",
    progress: Optional[Progress] = None,
) -> tuple[list[Optional[Path]], AgentFilter]:
    """Feed each shard's rows through ``builder`` (made with ``sharded=True``): each shard's sidecar,
    and the agent filter that counted them all."""
    agents = AgentFilter(agent, agent_option)
    sidecars: list[Optional[Path]] = []
    reporters = _shard_progress([path for path, _ in files], progress)
    for index, (path, shown) in enumerate(files):
        builder.start_shard(index)
        sidecar, _ = read_rollouts(path, shown, builder, agent, agent_option, reporters[index], agents=agents)
        sidecars.append(sidecar)
    return sidecars, agents


def finish_shards(
    files: Sequence[tuple[Path, str]],
    display: str,
    builder: SideBuilder,
    sidecars: Sequence[Optional[Path]],
    agent: Optional[str],
    agent_rows: dict[str, int],
) -> LoadedSide:
    """The sharded side whose rows ``builder`` holds: its key chosen, deferred prompts read from each
    row's own shard."""
    shards = tuple(
        (str(path), shown, str(sidecar) if sidecar is not None else None)
        for (path, shown), sidecar in zip(files, sidecars)
    )
    side = LoadedSide(
        path=files[0][0],
        display=display,
        sidecar=sidecars[0],
        choice=KeyChoice(None, []),
        facts=builder.facts,
        agent=agent,
        agent_rows=agent_rows,
        shards=shards,
        digest=builder.digest.text(),
    )
    side.choice = builder.finish(display, side.read_row)
    return side


def _shard_progress(paths: Sequence[Path], progress: Optional[Progress]) -> list[Optional[Progress]]:
    """Each shard's reporter, telling ``progress`` the bytes read of all the shards together."""
    if progress is None:
        return [None] * len(paths)
    sizes = []
    for path in paths:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)

    def reporter(before: int) -> Progress:
        return lambda done, _size: progress(before + done, total)

    return [reporter(sum(sizes[:index])) for index in range(len(paths))]


def read_rollouts(
    path: Path,
    display: str,
    builder: SideBuilder,
    agent: Optional[str] = None,
    agent_option: str = "--parity-agent",
    progress: Optional[Progress] = None,
    agents: Optional[AgentFilter] = None,
) -> tuple[Optional[Path], AgentFilter]:
    """Feed a side's rows (one agent's, see :func:`load_side`) through ``builder``: its sidecar
    (None when absent) and the agent filter, which knows each agent's rows (``agents``: one
    already counting the side's other shards)."""
    agents = agents if agents is not None else AgentFilter(agent, agent_option)
    sidecar = read_side(
        path,
        display,
        builder,
        keep=False,
        agents=agents,
        progress=progress,
        check_first=lambda row: _not_a_sidecar(path, display, row),
    )
    return sidecar, agents


def finish_side(
    path: Path,
    display: str,
    builder: SideBuilder,
    sidecar: Optional[Path],
    agent: Optional[str],
    agent_rows: dict[str, int],
) -> LoadedSide:
    """The side whose rows ``builder`` holds: its key chosen, deferred prompts read from the files."""
    with RowAt(path) as main_at, RowAt(sidecar or path) as sidecar_at:
        choice = builder.finish(display, lambda facts: read_row_at(path, sidecar, facts, main_at, sidecar_at))
    return LoadedSide(
        path=path,
        display=display,
        sidecar=sidecar,
        choice=choice,
        facts=builder.facts,
        agent=agent,
        agent_rows=agent_rows,
        digest=builder.digest.text(),
    )


def _not_a_sidecar(path: Path, display: str, row: dict[str, Any]) -> None:
    """A `<stem>_failures.jsonl` of failure records given as a side is named, with its main file."""
    main = main_file_of(path)
    if main is not None and is_failure_record(row):
        shown = os.path.join(os.path.dirname(display), main.name)
        raise CompareInputError(
            display,
            "a failures sidecar (records of rollouts that failed), not a rollouts file: "
            f"give its main file {shown}; the sidecar beside it is read with it",
        )


def load_rollouts(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a rollouts JSONL plus, when present, its sibling `<stem>_failures.jsonl`, as row dicts.

    Standing failure records join as masked rows: no reward, `mask_sample` true, and their failure
    kind. This keeps every row in memory; the pytest plugin streams instead. The join field is not
    chosen here: :func:`api.compare_rollouts` chooses it from these rows.
    """
    builder = SideBuilder(None)
    read_side(Path(path), str(path), builder, keep=True)
    return [facts.row for facts in builder.facts if facts.row is not None]

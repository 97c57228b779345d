"""Feeding a side's files through its builder: each file's rows, its standing sidecar records, shards in turn.

Every row enters its side's :class:`.side_builder.SideBuilder` here, in this process or in the
reader child (whose builder forwards each row to the parent). Superseded attempts are left out as
the rows pass (:mod:`.attempts`); a side whose files carry the attempt stamp only after rows that
lack it is read a second time to rank those rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ..errors import CompareInputError, Place
from ..model import RowOrigin
from .agents import AgentFilter, agent_of
from .attempts import Attempts, index_pair
from .files import HEALTH_CHECK_FILES, plain_name, written_beside
from .jsonl_lines import Progress, iter_objects
from .side_builder import PendingRow, RowSource, SideBuilder
from .side_request import SideRequest
from .sidecar import (
    check_not_a_sidecar,
    existing_sidecar,
    sidecar_display,
    sidecar_pairs,
    sidecar_records,
)
from .skeleton import Decoder, FirstRowInFull


class FedSide(NamedTuple):
    """What feeding a side left beside its rows: each file's sidecar (None where there is none), and
    the agent filter that counted the rows of every file."""

    sidecars: tuple[Optional[Path], ...]
    agents: AgentFilter


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
            attempts.see_row(row, place, line_no, pair)
        place += 1
    attempts.unranked = False


def feed_file(
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
    sidecar, shown = existing_sidecar(path, display), sidecar_display(display, path)
    wanted = sidecar_pairs(sidecar, shown)  # None: every pair (the sidecar's are not known)
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
    if agents is not None:
        agents.check(display)

    def prepare(line_no: int, offset: int, record: dict[str, Any]) -> PendingRow:
        return builder.prepare(record, RowSource(Place(shown, line_no), RowOrigin.SIDECAR, offset), keep=keep)

    keep_record = agents.keep_record if agents is not None else lambda record: True
    records = sidecar_records(sidecar, shown, prepare, attempts, keep_record, builder.digest)
    if attempts.stamped and attempts.unranked:
        _rank_unranked_rows(path, display, decode, agents, attempts, rows_before)
    standing = attempts.standing_records(records)
    if attempts.stamped:  # without the stamp every main-file row stands, as legacy append files have it
        builder.drop(attempts.displaced)
        builder.superseded += attempts.superseded
    for pending in standing:
        builder.add(pending)
    if builder.rows == rows_before:
        raise CompareInputError(display, "no rows at all: the file holds no JSON object")
    return sidecar


def feed_side(request: SideRequest, builder: SideBuilder, progress: Optional[Progress] = None) -> FedSide:
    """Feed the side ``request`` names through ``builder`` (made with ``sharded=bool(request.shards)``):
    its one file, or each shard in the order given with its own sidecar and attempts. Only the
    compared agent's rows are kept (``request.agent``, see :func:`.loading.load_side`); ``progress``
    is told the bytes of the side's files read so far."""
    agents = AgentFilter(request.agent, request.agent_option)
    if not request.shards:
        return FedSide((_feed_rollouts(Path(request.path), request.shown, builder, agents, progress),), agents)
    files = [Path(path) for path, _ in request.shards]
    reporters = _shard_progress(files, progress)
    sidecars = []
    for index, (path, (_, shown)) in enumerate(zip(files, request.shards)):
        builder.start_shard(index)
        sidecars.append(_feed_rollouts(path, shown, builder, agents, reporters[index]))
    return FedSide(tuple(sidecars), agents)


def _feed_rollouts(
    path: Path, display: str, builder: SideBuilder, agents: AgentFilter, progress: Optional[Progress]
) -> Optional[Path]:
    """Feed one rollouts file of a side (and its sidecar) through ``builder``: the sidecar's path.

    A file the health check writes beside the rollouts is named as such before it is read."""
    if plain_name(path.name) in HEALTH_CHECK_FILES:
        raise CompareInputError(display, f"{written_beside(path.name)}, not rollouts: give the rollouts file beside it")
    return feed_file(
        path,
        display,
        builder,
        keep=False,
        agents=agents,
        progress=progress,
        check_first=lambda row: check_not_a_sidecar(path, display, row),
    )


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

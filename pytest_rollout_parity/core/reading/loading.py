"""Loading a side, or the rows of one file as dicts for the Python API.

Each row is reduced as it streams by: only its facts, join value and byte offset are kept, so memory
grows with the number of rows, never with their size. Superseded attempts are left out as the rows
pass (:class:`.sidecar.Attempts`); a file whose attempt stamp first appears after rows that lack it
is read a second time to rank those rows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, Optional

from ..errors import CompareInputError, Place
from ..model import RowOrigin
from .files import HEALTH_CHECK_FILES, plain_name, written_beside
from .jsonl_lines import FirstRowInFull, Progress, iter_objects, reader_name
from .key_vote import KeyChoice
from .loaded_side import LoadedSide, SideRequest
from .side_builder import AgentFilter, PendingRow, SideBuilder, agent_of
from .sidecar import (
    Attempts,
    Execution,
    check_not_a_sidecar,
    existing_sidecar,
    index_pair,
    sidecar_display,
    sidecar_pairs,
)


def load_side(request: SideRequest, progress: Optional[Progress] = None) -> LoadedSide:
    """Stream a side (its file and sidecar, or each shard with its own, keyed as a whole). Every read of
    a side comes through here, looked up at call time, so a test that replaces it sees them all."""
    builder = SideBuilder(request.key, request.key_option, sharded=bool(request.shards))
    agents = AgentFilter(request.agent, request.agent_option)
    files = [(Path(path), shown) for path, shown in request.shards] or [(Path(request.path), request.shown)]
    reporters = _shard_progress([path for path, _ in files], progress)
    sidecars: list[Optional[Path]] = []
    for index, (path, shown) in enumerate(files):
        builder.shard = index + 1 if request.shards else None
        if plain_name(path.name) in HEALTH_CHECK_FILES:
            raise CompareInputError(
                shown, f"{written_beside(path.name)}, not rollouts: give the rollouts file beside it"
            )
        sidecars.append(feed_file(path, shown, builder, keep=False, agents=agents, progress=reporters[index]))
    shards = tuple(
        (str(path), shown, None if sidecar is None else str(sidecar)) for (path, shown), sidecar in zip(files, sidecars)
    )
    side = LoadedSide(
        path=files[0][0],
        display=request.shown,
        sidecar=sidecars[0],
        choice=KeyChoice(None, []),
        facts=builder.facts,
        agent=agents.compared,
        shards=shards if request.shards else (),
        digest=builder.digest.text(),
        conditions=tuple(builder.conditions),
    )
    with side.kept_open() as read:
        side.choice = builder.finish(side.display, read)
    return side


def feed_file(
    path: Path,
    display: str,
    builder: SideBuilder,
    *,
    keep: bool,
    agents: Optional[AgentFilter] = None,
    progress: Optional[Progress] = None,
) -> Optional[Path]:
    """Feed a rollouts file and its standing sidecar records through ``builder``; the sidecar's path.
    ``keep`` holds every row in memory (the full parse), else rows go through the skeleton, are read
    again on demand, and a sidecar given as the file is named; ``agents`` drops other agents' rows before keying."""
    decode = None if keep or reader_name() == "full" else FirstRowInFull(builder.key)
    sidecar, shown = existing_sidecar(path, display), sidecar_display(display, path)
    attempts = Attempts(sidecar_pairs(sidecar, shown))
    rows_before = len(builder.facts)
    for line_no, offset, row in iter_objects(path, display, decode, progress, builder.digest):
        if not keep and len(builder.facts) == rows_before:
            check_not_a_sidecar(path, display, row)
        if agents is not None and not agents.keep(row):
            continue
        pair = index_pair(row)
        attempts.see_row(row, len(builder.facts), line_no, pair)
        builder.add_row(row, Place(display, line_no), offset, keep=keep)
        if decode is not None and decode.inner is None and builder.vote.inferred is not None:
            decode.ready(builder.vote.inferred)
    if agents is not None:
        agents.check(display)

    records: list[tuple[Execution, PendingRow]] = []  # another agent's records are dropped first
    for line_no, offset, record in iter_objects(sidecar, shown, digest=builder.digest) if sidecar else ():
        if agents is None or agents.keep_record(record):
            pending = builder.prepare(record, Place(shown, line_no), RowOrigin.SIDECAR, offset, keep=keep)
            records.append((attempts.see_record(record, line_no), pending))
    if attempts.stamped and attempts.unranked:
        # The stamp first appeared after rows that lack it: read the main file again to rank them.
        agent = agents.wanted if agents is not None else None
        place = rows_before
        for line_no, _, row in iter_objects(path, display, decode):
            if agent is not None and agent_of(row) != agent:
                continue
            pair = index_pair(row)
            if attempts.unranked_line(line_no, pair):
                attempts.see_row(row, place, line_no, pair)
            place += 1
    standing = attempts.standing_records(records)
    if attempts.stamped:  # without the stamp every main-file row stands, as legacy append files have it
        builder.drop(attempts.displaced)
        builder.superseded += len(attempts.displaced) + attempts.superseded_records
    for pending in standing:
        builder.add(pending)
    if len(builder.facts) == rows_before:
        raise CompareInputError(display, "no rows at all: the file holds no JSON object")
    return sidecar


def _shard_progress(paths: Sequence[Path], progress: Optional[Progress]) -> list[Optional[Progress]]:
    """Each file's reporter, telling ``progress`` the bytes read of all the side's files together."""
    if progress is None or len(paths) == 1:
        return [progress] * len(paths)
    sizes = [path.stat().st_size if path.is_file() else 0 for path in paths]  # a missing one fails when read
    total = sum(sizes)

    def reporter(before: int) -> Progress:
        return lambda done, _size: progress(before + done, total)

    return [reporter(before) for before in accumulate([0, *sizes[:-1]])]


def load_rollouts(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a rollouts JSONL plus, when present, its sibling `<stem>_failures.jsonl`, as row dicts.
    Standing failure records join as masked rows: no reward, `mask_sample` true, and their failure
    kind. Every row is held in memory (the plugin streams); :func:`api.compare_rollouts` chooses
    the join field from these rows."""
    builder = SideBuilder(None)
    feed_file(Path(path), str(path), builder, keep=True)
    return [facts.row for facts in builder.facts if facts.row is not None]

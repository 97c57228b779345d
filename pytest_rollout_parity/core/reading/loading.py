"""Loading a side: its request read into a :class:`.loaded_side.LoadedSide`, in this process; or the
rows of one file as dicts, for the Python API.

A side is streamed line by line (:mod:`.jsonl_lines`); each row is reduced as it is read
(:func:`.row_facts.reduce_row`) and only its facts and its join value are kept, with the byte
offset that lets ``TaskSide.rows`` read the full row again. Memory grows with the number of rows,
never with their size. The reader child (:mod:`.child`) feeds its side the same way
(:mod:`.feeding`); the parent then finishes it here too (:func:`finish_side`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from .feeding import feed_file, feed_side
from .files import RowAt
from .jsonl_lines import Progress
from .key_vote import KeyChoice
from .loaded_side import LoadedSide, read_row_at
from .side_builder import SideBuilder
from .side_request import SideRequest


def side_builder(request: SideRequest) -> SideBuilder:
    """The builder a side's rows are fed through (a sharded side's task indices are its shards' own)."""
    return SideBuilder(request.key, request.key_option, sharded=bool(request.shards))


def load_side(request: SideRequest, progress: Optional[Progress] = None) -> LoadedSide:
    """Stream the side ``request`` names (its one file and sidecar, or its shards, each with its own
    sidecar and attempts, into one side keyed as a whole) into row facts and join values.

    ``request.agent`` keeps one agent's rows (others are dropped before keying); without it a file
    holding several agents is an input error. ``progress`` is told the bytes of the side's files
    read so far (see :func:`.jsonl_lines.iter_objects`).

    Every read of a side in this process goes through here, looked up at call time
    (``loading.load_side``, the entrance's ``core.load_side``), so a test that replaces it sees them all.
    """
    builder = side_builder(request)
    fed = feed_side(request, builder, progress)
    return finish_side(request, builder, fed.sidecars, fed.agents.compared, dict(fed.agents.counts))


def finish_side(
    request: SideRequest,
    builder: SideBuilder,
    sidecars: Sequence[Optional[Path]],
    agent: Optional[str],
    agent_rows: dict[str, int],
) -> LoadedSide:
    """The side whose rows ``builder`` holds: its key chosen, deferred prompts read from the files
    (a sharded side's from each row's own shard). ``sidecars``: each file's sidecar or None."""
    if request.shards:
        return _finish_shards(request, builder, sidecars, agent, agent_rows)
    path, display, sidecar = Path(request.path), request.shown, sidecars[0]
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
        conditions=tuple(builder.conditions),
    )


def _finish_shards(
    request: SideRequest,
    builder: SideBuilder,
    sidecars: Sequence[Optional[Path]],
    agent: Optional[str],
    agent_rows: dict[str, int],
) -> LoadedSide:
    """The sharded side whose rows ``builder`` holds: its key chosen, deferred prompts read from each
    row's own shard."""
    files = [(Path(path), shown) for path, shown in request.shards]
    display = request.shown
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
        conditions=tuple(builder.conditions),
    )
    side.choice = builder.finish(display, side.read_row)
    return side


def load_rollouts(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a rollouts JSONL plus, when present, its sibling `<stem>_failures.jsonl`, as row dicts.

    Standing failure records join as masked rows: no reward, `mask_sample` true, and their failure
    kind. This keeps every row in memory; the pytest plugin streams instead. The join field is not
    chosen here: :func:`api.compare_rollouts` chooses it from these rows.
    """
    builder = SideBuilder(None)
    feed_file(Path(path), str(path), builder, keep=True)
    return [facts.row for facts in builder.facts if facts.row is not None]

"""The reader child's answer, streamed: its side's prepared rows in batches, then how it ended.

The child (:mod:`.child`) reads its side through a :class:`ForwardingBuilder`. It votes on
the key as the parent would, so an input error is found at the same row with the same words, but
it keeps no row: each prepared row leaves in a batch as soon as :data:`BATCH` are waiting. The
parent replays the rows through its own :class:`.side_builder.SideBuilder` (:func:`replay`), so it
ends with the side it would have read itself, while the child never holds more than one batch:
its memory does not grow with its side.

Each frame is a 4-byte big-endian length, then ``marshal`` of one of::

    ("rows", [row, ...])          row: (facts, candidate values, anonymous, has a reward field)
    ("end", sidecar path or None, compared agent or None, {agent: rows}, superseded attempts,
            places of the sent rows a newer attempt superseded, each file read (its bytes and SHA-256)
            [, each shard's sidecar path or None, for a sharded side])
    ("input-error", path, reason, line, where as shown, setting)
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ..errors import CompareInputError, Place
from ..model import RowOrigin
from .digest import ContentDigest
from .key_vote import DEFERRED
from .side_builder import PendingRow, SideBuilder
from .snapshot import FACT_FIELDS, facts_from_plain, plain_facts

#: Rows per frame: a frame stays small beside the child's imports, and frames stay few.
BATCH = 512
_LENGTH = 4
_LINE = FACT_FIELDS.index("line")
_ORIGIN = FACT_FIELDS.index("origin")
_SHARD = FACT_FIELDS.index("shard")
_SIDECAR = RowOrigin.SIDECAR.value

Write = Callable[[bytes], Any]


def send(write: Write, message: tuple[Any, ...]) -> None:
    """Write one frame."""
    body = marshal.dumps(message)
    write(len(body).to_bytes(_LENGTH, "big") + body)


def frames(data: bytes) -> Iterator[Any]:
    """The messages in a stream; stops at a torn or truncated frame (the caller sees no "end")."""
    view = memoryview(data)
    at = 0
    while at + _LENGTH <= len(data):
        size = int.from_bytes(view[at : at + _LENGTH], "big")
        start, at = at + _LENGTH, at + _LENGTH + size
        if at > len(data):
            return
        try:
            yield marshal.loads(view[start:at])
        except (ValueError, EOFError, TypeError):
            return


class ForwardingBuilder(SideBuilder):
    """A side builder that votes, counts and sends each row on instead of keeping it."""

    def __init__(self, key: Optional[str], key_option: str, write: Write, *, sharded: bool = False) -> None:
        super().__init__(key, key_option, keep_cells=False, sharded=sharded)  # the parent's vote keeps the values
        self.write = write
        self.batch: list[tuple[Any, ...]] = []
        self.count = 0
        #: places (in the order sent) of rows a newer attempt superseded
        self.dropped: list[int] = []

    @property
    def rows(self) -> int:
        return self.count

    def add(self, pending: PendingRow) -> None:
        super().add(pending)  # the vote, and its errors, as in the parent
        self.facts.pop()  # the parent keeps the row
        self.count += 1
        names = pending.names  # DEFERRED is a tuple: marshal keeps it one (JSON values never are)
        self.batch.append((plain_facts(pending.facts), names, pending.anonymous, pending.has_reward_field))
        if len(self.batch) >= BATCH:
            self.flush()

    def drop(self, places: Sequence[int]) -> None:
        """Rows already sent are taken out by the parent: their places go with the end."""
        self.dropped.extend(places)

    def flush(self) -> None:
        """Send the waiting rows."""
        if self.batch:
            send(self.write, ("rows", self.batch))
            self.batch = []


class StreamEnd(NamedTuple):
    """What the child said once every row was sent."""

    sidecar: Optional[Path]
    agent: Optional[str]
    agent_rows: dict[str, int]
    #: each shard's sidecar (or None) on a sharded side; empty for one file
    sidecars: tuple[Optional[Path], ...] = ()


def replay(
    data: bytes, builder: SideBuilder, display: str, sidecar_display: str, shard_names: tuple[tuple[str, str], ...] = ()
) -> Optional[StreamEnd]:
    """Join the streamed rows to ``builder``, each at its place in messages; None for a stream cut
    short. Raises the child's input error. ``shard_names``: each shard's file and sidecar as shown."""
    names_of = shard_names or ((display, sidecar_display),)
    for message in frames(data):
        kind = message[0]
        if kind == "rows":
            for facts, names, anonymous, has_reward in message[1]:
                shard = names_of[facts[_SHARD]] if shard_names else names_of[0]
                shown = shard[1] if facts[_ORIGIN] == _SIDECAR else shard[0]
                if any(type(value) is tuple for value in names.values()):
                    names = {name: DEFERRED if type(value) is tuple else value for name, value in names.items()}
                builder.add(
                    PendingRow(Place(shown, facts[_LINE]), facts_from_plain(facts), names, anonymous, has_reward)
                )
        elif kind == "end":
            _, sidecar, agent, agent_rows, builder.superseded, dropped, files, *shards = message
            builder.drop(dropped)
            builder.digest = ContentDigest(files)
            sidecars = tuple(Path(s) if s is not None else None for s in shards[0]) if shards else ()
            return StreamEnd(Path(sidecar) if sidecar is not None else None, agent, agent_rows, sidecars)
        elif kind == "input-error":
            raise CompareInputError(*message[1:])
        else:
            return None
    return None

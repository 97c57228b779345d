"""A side: what is read for it (:class:`SideRequest`) and what was (:class:`LoadedSide`).

A request is handed on unchanged (to the loader, the reader child, the rerun cache's key), so it
holds only strings and tuples of strings: hashable, carried by ``marshal`` and JSON alike. A loaded
side keeps only its rows' facts (a row is read again from its file when a report needs it), and
travels as plain values (:func:`side_to_plain`) into the rerun cache and from the reader child.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import closing, contextmanager, nullcontext
from dataclasses import astuple, dataclass, field, fields
from pathlib import Path
from typing import Any, Optional

from ..errors import CompareInputError, Place
from ..model import RowFacts, RowOrigin, RowReader
from .jsonl_lines import RowAt, parse_line
from .key_vote import KeyChoice
from .row_facts import fold_failure_record
from .task_idents import TaskIdent


@dataclass(frozen=True)
class SideRequest:
    """What is read for one side, and the names its errors give for where the key and agent came from."""

    #: the side's file (a sharded side's first file)
    path: str
    #: the join field asked for; None lets the side's rows choose it
    key: Optional[str] = None
    #: the side's name in messages (as the user gave it); None shows ``path``
    display: Optional[str] = None
    #: the agent (`agent_ref.name`) whose rows are kept; None keeps a side of one agent whole
    agent: Optional[str] = None
    #: where ``key`` and ``agent`` were given (an option, an ini key or an API argument), for messages
    key_option: str = "key"
    agent_option: str = "agent"
    #: a sharded side's files, each (path, name shown), ``path`` the first; empty for one file
    shards: tuple[tuple[str, str], ...] = ()

    @property
    def shown(self) -> str:
        return self.display or (self.shards[0][1] if self.shards else self.path)

    def files(self) -> list[str]:
        """Every file the side is read from: its shards, or its one file."""
        return [path for path, _ in self.shards] or [self.path]

    def plain(self) -> tuple[Any, ...]:
        """The fields in order: ``SideRequest(*plain)`` is the request again (``marshal`` keeps tuples)."""
        return astuple(self)


@dataclass
class LoadedSide:
    """One side streamed: its row facts in file order (sidecar last) and how its rows are keyed."""

    path: Path
    display: str
    sidecar: Optional[Path]
    choice: KeyChoice
    facts: list[RowFacts] = field(default_factory=list)
    #: the agent (`agent_ref.name`) whose rows the side holds
    agent: Optional[str] = None
    #: a sharded side's files in order, each (path, name shown, its sidecar's path or None); empty
    #: for a side of one file (``path``, ``display`` and ``sidecar`` are then the whole side)
    shards: tuple[tuple[str, str, Optional[str]], ...] = ()
    #: what the side's files held, as read (:class:`.jsonl_lines.ContentDigest`); None for rows given in memory
    digest: Optional[str] = None
    #: each distinct [model, temperature, top_p, max_output_tokens] its rows were run with, as JSON
    conditions: tuple[str, ...] = ()

    def read_row(self, facts: RowFacts, at: Optional[RowAt] = None) -> dict[str, Any]:
        """Re-read one row's full dict (a sidecar record folded) from its file, its own shard's on a
        sharded side; ``at`` keeps the files open across reads that move forward (:meth:`kept_open`)."""
        if facts.row is not None:
            return facts.row
        main = facts.origin is RowOrigin.MAIN
        files = self.shards[facts.shard] if self.shards else (self.path, self.display, self.sidecar)
        file = files[0] if main else files[2]
        if facts.offset is None or file is None:
            raise LookupError("a row that was neither kept nor read from a file")
        with closing(RowAt()) if at is None else nullcontext(at) as reader:
            line = reader.line(file, facts.offset)
        value = parse_line(line, Place(str(file), None, f"{file}@{facts.offset}"))
        if not isinstance(value, dict):
            raise CompareInputError(str(file), f"the row at byte {facts.offset} changed since it was read")
        return value if main else fold_failure_record(value)

    @contextmanager
    def kept_open(self) -> Iterator[RowReader]:
        """A reader of the side's rows that keeps its files open while the context lasts, so rows read
        in file order cost one pass over a compressed file; after the context it reads as :meth:`read_row`."""
        at = RowAt()
        done = False

        def read(facts: RowFacts) -> dict[str, Any]:
            return self.read_row(facts, None if done else at)

        try:
            yield read
        finally:
            done = True
            at.close()

    @property
    def files(self) -> list[tuple[Path, str, Optional[Path]]]:
        """Each file of the side as (path, name shown, sidecar or None): one, or each shard's."""
        if not self.shards:
            return [(self.path, self.display, self.sidecar)]
        return [(Path(path), shown, Path(sidecar) if sidecar else None) for path, shown, sidecar in self.shards]

    def shard_facts(self, index: int) -> list[RowFacts]:
        """The rows read from file ``index`` of the side (:attr:`files`) and its sidecar."""
        return [facts for facts in self.facts if facts.shard == index]


#: A row's facts travel as a list of these fields' values (rows are many: no object naming each
#: field again), in RowFacts' slot order, which its constructor takes too (a unit test holds both).
FACT_FIELDS: tuple[str, ...] = RowFacts.__slots__
_ORIGIN, _OFFSET = FACT_FIELDS.index("origin"), FACT_FIELDS.index("offset")
_ORIGINS = {origin.value: origin for origin in RowOrigin}
_VALUE_OF = {origin: origin.value for origin in RowOrigin}
_FIELDS_OF = operator.attrgetter(*FACT_FIELDS)
#: the kinds of value each field holds as JSON gives it back (a planted or damaged entry holds others)
_NONE = type(None)
_KINDS = {
    **dict.fromkeys(("line", "shard"), (int,)),
    **dict.fromkeys(("offset", "rollout", "response"), (int, _NONE)),
    "origin": (str,),
    "reward": (float, int, _NONE),
    **dict.fromkeys(("mask", "agent_error", "failure_kind"), (str, _NONE)),
    "row": (dict, _NONE),
}
_ROW_KINDS = tuple(_KINDS[name] for name in FACT_FIELDS)


def plain_facts(facts: RowFacts) -> tuple[Any, ...]:
    """One row's facts as a tuple of built-in values (its origin as the member's value)."""
    values = _FIELDS_OF(facts)  # one C call: this runs once per row of every side stored
    return (*values[:_ORIGIN], _VALUE_OF[values[_ORIGIN]], *values[_ORIGIN + 1 :])


def facts_from_plain(row: Any) -> RowFacts:
    """One row's facts rebuilt from :func:`plain_facts` (once per row loaded)."""
    values = list(row)
    values[_ORIGIN] = _ORIGINS[values[_ORIGIN]]
    return RowFacts(*values)


def _checked(rows: list[Any]) -> list[Any]:
    """The rows' facts, when each value is of its field's kind and each offset one a file can have;
    else ValueError. Checked by the few distinct shapes the rows have, not value by value."""
    for kinds in {tuple(map(type, row)) for row in rows}:
        if len(kinds) != len(_ROW_KINDS) or not all(kind in allowed for kind, allowed in zip(kinds, _ROW_KINDS)):
            raise ValueError("row facts of another shape")
    offsets = [row[_OFFSET] for row in rows if row[_OFFSET] is not None]
    if offsets and not 0 <= min(offsets) <= max(offsets) < 1 << 63:
        raise ValueError("a row offset no file has")
    return rows


def by_field(value: Any) -> dict[str, Any]:
    """A dataclass's field values by name, not copied (``dataclasses.asdict`` copies them deep)."""
    return {each.name: getattr(value, each.name) for each in fields(value)}


def side_to_plain(side: LoadedSide) -> dict[str, Any]:
    """The side as JSON's values: its fields and its key choice's by name, each row's facts as a list."""
    return {
        **by_field(side),
        "path": str(side.path),
        "sidecar": None if side.sidecar is None else str(side.sidecar),
        "choice": by_field(side.choice),
        "facts": [plain_facts(facts) for facts in side.facts],
    }


def _idents(values: Any) -> list[Optional[TaskIdent]]:
    return [None if value is None else _ident(*value) for value in values]


def _ident(taskset: Optional[str], task_id: str) -> TaskIdent:
    return (taskset, task_id)  # a pair, or the call raises


def side_from_plain(plain: Any) -> LoadedSide:
    """The side :func:`side_to_plain` was given, rebuilt; ValueError, TypeError, KeyError or
    IndexError on any other shape (the cache then reads the files again)."""
    values = dict(plain)
    choice = dict(values["choice"])
    prompts = choice["prompts"]
    choice.update(
        values=_idents(choice["values"]),
        prompts=None if prompts is None else _idents(prompts),
        inferred={str(name): _idents(named) for name, named in choice["inferred"].items()},
        notes=[str(note) for note in choice["notes"]],
        categories=[str(category) for category in choice["categories"]],
    )
    values.update(
        path=Path(values["path"]),
        sidecar=None if values["sidecar"] is None else Path(values["sidecar"]),
        choice=KeyChoice(**choice),
        facts=[facts_from_plain(row) for row in _checked(values["facts"])],
        shards=tuple((file, shown, own_sidecar) for file, shown, own_sidecar in values["shards"]),
        conditions=tuple(str(condition) for condition in values["conditions"]),
    )
    return LoadedSide(**values)

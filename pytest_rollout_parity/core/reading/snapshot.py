"""A loaded side as plain values and back: the rerun cache stores sides so (as JSON), and the reader
child's stream (:mod:`.child_stream`) sends each row's facts in the same per-row form.

Plain values are what JSON carries: lists, strings, numbers, None and dicts keyed by strings. A
row's facts travel as the list of its fields' values (:data:`FACT_FIELDS`), a task's ident as its
(taskset, task id) pair. :func:`side_from_plain` rebuilds exactly the side :func:`side_to_plain` was
given, and raises ValueError, TypeError, KeyError or IndexError on any other shape: the cache then
reads the files again.
"""

from __future__ import annotations

import dataclasses
import operator
from pathlib import Path
from typing import Any, Optional

from ..model import RowFacts, RowOrigin
from .key_vote import KeyChoice
from .loaded_side import LoadedSide
from .task_idents import TaskIdent

#: A row's facts travel as these fields' values, in this order: the order of RowFacts' slots, which is
#: also the order its constructor takes them in (a unit test holds both to it).
FACT_FIELDS: tuple[str, ...] = RowFacts.__slots__
#: Which file of its side a row came from is an enum member: it travels as the member's value.
_ORIGIN = FACT_FIELDS.index("origin")
_ORIGINS = {origin.value: origin for origin in RowOrigin}


_FIELDS_OF = operator.attrgetter(*FACT_FIELDS)
_VALUE_OF = {origin: origin.value for origin in RowOrigin}


def plain_facts(facts: RowFacts) -> tuple[Any, ...]:
    """One row's facts as a tuple of built-in values (its origin as the member's value)."""
    values = _FIELDS_OF(facts)  # one C call: this runs once per row of every side stored
    return (*values[:_ORIGIN], _VALUE_OF[values[_ORIGIN]], *values[_ORIGIN + 1 :])


def facts_from_plain(row: Any) -> RowFacts:
    """One row's facts rebuilt from :func:`plain_facts` (once per row replayed or loaded)."""
    values = list(row)
    values[_ORIGIN] = _ORIGINS[values[_ORIGIN]]
    return RowFacts(*values)


def snapshot_schema() -> tuple[Any, ...]:
    """What the plain form depends on besides the inputs: the fields it is made of."""
    return (
        FACT_FIELDS,
        tuple(f.name for f in dataclasses.fields(LoadedSide)),
        tuple(f.name for f in dataclasses.fields(KeyChoice)),
    )


class NotPlain(ValueError):
    """The side holds a row kept in memory (rows given to the API): it is not stored."""


def side_to_plain(side: LoadedSide) -> list[Any]:
    """The side as plain values, its fields in :class:`LoadedSide`'s order."""
    if any(facts.row is not None for facts in side.facts):
        raise NotPlain("a row kept in memory")
    choice = side.choice
    return [
        str(side.path),
        side.display,
        None if side.sidecar is None else str(side.sidecar),
        [choice.key, choice.values, choice.reason, choice.notes, choice.prompts, choice.inferred, choice.categories],
        [plain_facts(facts) for facts in side.facts],
        side.agent,
        side.agent_rows,
        side.shards,
        side.digest,
        list(side.conditions),
    ]


def _ident(value: Any) -> TaskIdent:
    taskset, task_id = value  # a pair, or raises
    return (taskset, task_id)


def _idents(values: Any) -> list[Optional[TaskIdent]]:
    return [None if value is None else _ident(value) for value in values]


def side_from_plain(plain: Any) -> LoadedSide:
    """The side :func:`side_to_plain` was given, rebuilt (raises on another shape)."""
    path, display, sidecar, choice, facts, agent, agent_rows, shards, digest, conditions = plain
    key, values, reason, notes, prompts, inferred, categories = choice
    return LoadedSide(
        Path(path),
        display,
        None if sidecar is None else Path(sidecar),
        KeyChoice(
            key,
            _idents(values),
            reason,
            list(notes),
            None if prompts is None else _idents(prompts),
            {name: _idents(named) for name, named in inferred.items()},
            [str(category) for category in categories],
        ),
        [facts_from_plain(row) for row in facts],
        agent,
        dict(agent_rows),
        tuple((file, shown, own_sidecar) for file, shown, own_sidecar in shards),
        digest,
        tuple(str(condition) for condition in conditions),
    )

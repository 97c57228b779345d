"""A loaded side as bytes and back: the rerun cache and the xdist hand-over store sides so, and the
reader child's stream (:mod:`.child_stream`) sends each row's facts in the same per-row form.

The bytes are ``marshal`` of plain tuples, lists, strings and numbers, framed as::

    MAGIC | format version (2 bytes) | SHA-256 of the body (32 bytes) | body = marshal((key, side))

``marshal`` rather than ``pickle``: loading marshal data builds only built-in values (it has no
way to name a class or call a function), so a planted or corrupted cache file cannot run code; it
is also the fastest serializer in the standard library for this shape (tens of thousands of small
tuples). It is not stable across Python versions, so the Python version is part of :func:`schema`.

:func:`unframe` returns None for anything that is not exactly what :func:`frame` wrote for the
same ``key``: another magic or version (a foreign or older file), a body whose checksum differs
(truncated, torn or edited), a body marshal rejects, or another key (stale: the inputs or the
options changed). Callers then read the inputs again; an entry is never trusted on its length alone.
"""

from __future__ import annotations

import dataclasses
import marshal
import operator
import sys
from pathlib import Path
from typing import Any, Optional

from ..identity.join import KeyChoice
from ..model import RowFacts, RowOrigin
from .loading import LoadedSide

MAGIC = b"rollout-parity side\n"
VERSION = 1
_HEADER = len(MAGIC) + 2 + 32


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
    values = _FIELDS_OF(facts)  # one C call: this runs once per row of every side written
    return (*values[:_ORIGIN], _VALUE_OF[values[_ORIGIN]], *values[_ORIGIN + 1 :])


def _fact_values(row: tuple[Any, ...]) -> list[Any]:
    values = list(row)
    values[_ORIGIN] = _ORIGINS[values[_ORIGIN]]
    return values


def snapshot_schema() -> tuple[Any, ...]:
    """What the encoding depends on besides the inputs: field names, marshal and Python versions."""
    return (
        VERSION,
        marshal.version,
        sys.version_info[:2],
        FACT_FIELDS,
        tuple(f.name for f in dataclasses.fields(LoadedSide)),
        tuple(f.name for f in dataclasses.fields(KeyChoice)),
    )


class NotPlain(ValueError):
    """The side holds something marshal cannot carry (a row kept in memory): it is not snapshotted."""


def to_plain(side: LoadedSide) -> tuple[Any, ...]:
    """The side as (field name, was a Path, value) triples of built-in values."""
    out: list[tuple[str, bool, Any]] = []
    for f in dataclasses.fields(side):
        value = getattr(side, f.name)
        if f.name == "facts":
            if any(facts.row is not None for facts in value):
                raise NotPlain("a row kept in memory")
            value = [plain_facts(facts) for facts in value]
        elif isinstance(value, KeyChoice):
            value = tuple(getattr(value, g.name) for g in dataclasses.fields(value))
        out.append((f.name, isinstance(value, Path), str(value) if isinstance(value, Path) else value))
    return tuple(out)


def facts_from_plain(row: tuple[Any, ...]) -> RowFacts:
    """One row's facts rebuilt from :func:`plain_facts` (once per row replayed or loaded)."""
    return RowFacts(*_fact_values(row))


def _facts(rows: list[tuple[Any, ...]]) -> list[RowFacts]:
    return [facts_from_plain(row) for row in rows]


def from_plain(plain: tuple[Any, ...]) -> LoadedSide:
    """The side :func:`to_plain` was given, rebuilt."""
    values: dict[str, Any] = {}
    for name, was_path, value in plain:
        if was_path:
            value = Path(value)
        elif name == "facts":
            value = _facts(value)
        elif name == "choice":
            value = KeyChoice(*value)
        values[name] = value
    return LoadedSide(**values)


def _sha256(body: bytes | memoryview) -> bytes:
    import hashlib  # here: it loads OpenSSL, which the reader child does not need

    return hashlib.sha256(body).digest()


def frame_side(key: Any, side: LoadedSide) -> bytes:
    """The framed bytes of one side under ``key`` (raises :class:`NotPlain` or ValueError if it cannot be)."""
    body = marshal.dumps((key, to_plain(side)))
    return MAGIC + VERSION.to_bytes(2, "big") + _sha256(body) + body


def unframe_side(data: bytes, key: Any) -> Optional[LoadedSide]:
    """The side framed under ``key``; None for anything else (foreign, older, truncated, stale)."""
    if len(data) <= _HEADER or not data.startswith(MAGIC):
        return None
    if int.from_bytes(data[len(MAGIC) : len(MAGIC) + 2], "big") != VERSION:
        return None
    body = memoryview(data)[_HEADER:]
    if _sha256(body) != data[len(MAGIC) + 2 : _HEADER]:
        return None
    try:
        stored_key, plain = marshal.loads(body)
        if stored_key != key:
            return None
        return from_plain(plain)
    except (ValueError, EOFError, TypeError, KeyError):
        return None

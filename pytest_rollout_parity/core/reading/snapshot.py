"""A loaded side as bytes and back: the rerun cache and the xdist hand-over store sides so, and the
reader child's stream (:mod:`.child_stream`) sends each row's facts in the same per-row form.

The bytes are ``marshal`` of plain tuples, lists, strings and numbers, framed as::

    MAGIC | format version (2 bytes) | tag (32 bytes) | body = marshal(side)
    tag = HMAC-SHA256(secret, len(key) | key | body), key = repr of the entry's key

``marshal`` is the fastest serializer in the standard library for this shape (tens of thousands of
small tuples), and builds only built-in values; but it is no parser for hostile bytes: a crafted
body crashes the interpreter or allocates without bound. So nothing is decoded before its tag
holds: the tag is keyed with a secret the caller keeps outside anything a pull request can write
(the plugin's per-user key, or one its xdist workers are handed), and covers the entry's key, so
an entry of other inputs or options fails the same check. A planted, truncated, edited or stale
entry costs one HMAC over its bytes, linear in its size, and is never given to ``marshal``.
marshal is not stable across Python versions, so the Python version is part of :func:`snapshot_schema`.

:func:`unframe_side` returns None for anything that is not exactly what :func:`frame_side` wrote
for the same ``key`` and ``secret``. Callers then read the inputs again.
"""

from __future__ import annotations

import dataclasses
import marshal
import operator
import sys
from pathlib import Path
from typing import Any, Optional

from ..model import RowFacts, RowOrigin
from .key_vote import KeyChoice
from .loaded_side import LoadedSide

MAGIC = b"rollout-parity side\n"
VERSION = 2
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


#: the shortest secret an entry is tagged with (HMAC-SHA256's own block of output)
SECRET_BYTES = 32


def _tag(secret: bytes, key: Any, body: bytes | memoryview) -> bytes:
    import hashlib  # here: it loads OpenSSL, which the reader child does not need
    import hmac

    if len(secret) < SECRET_BYTES:
        raise ValueError("a cache secret is at least 32 bytes")
    named = repr(key).encode("utf-8", "surrogatepass")
    mac = hmac.new(secret, len(named).to_bytes(8, "big") + named, hashlib.sha256)
    mac.update(body)
    return mac.digest()


def frame_plain(key: Any, plain: Any, secret: bytes) -> bytes:
    """The framed bytes of any plain value (built-in tuples, lists, strings, numbers) under ``key``,
    tagged with ``secret``: the rerun cache keeps a comparison so, beside its sides."""
    body = marshal.dumps(plain)
    return MAGIC + VERSION.to_bytes(2, "big") + _tag(secret, key, body) + body


def unframe_plain(data: bytes, key: Any, secret: bytes) -> Optional[Any]:
    """The plain value framed under ``key`` with ``secret``; None for anything else (foreign, older,
    truncated, stale, planted): the tag is checked before a byte of the body is decoded."""
    import hmac

    if len(data) <= _HEADER or not data.startswith(MAGIC):
        return None
    if int.from_bytes(data[len(MAGIC) : len(MAGIC) + 2], "big") != VERSION:
        return None
    body = memoryview(data)[_HEADER:]
    if not hmac.compare_digest(_tag(secret, key, body), data[len(MAGIC) + 2 : _HEADER]):
        return None
    try:  # the body is one this process's secret tagged: written by the gate itself
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None


def frame_side(key: Any, side: LoadedSide, secret: bytes) -> bytes:
    """The framed bytes of one side under ``key``, tagged with ``secret`` (raises :class:`NotPlain`
    or ValueError if it cannot be)."""
    return frame_plain(key, to_plain(side), secret)


def unframe_side(data: bytes, key: Any, secret: bytes) -> Optional[LoadedSide]:
    """The side framed under ``key`` with ``secret``; None for anything else (:func:`unframe_plain`)."""
    plain = unframe_plain(data, key, secret)
    if plain is None:
        return None
    try:
        return from_plain(plain)
    except (ValueError, EOFError, TypeError, KeyError):
        return None

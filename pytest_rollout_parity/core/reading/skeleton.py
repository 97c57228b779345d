"""The skeleton reader: decode only the fields the classification needs.

Each rollouts-file row is decoded into a skeleton that declares just the fields loading reads
(:func:`fields.load_paths`), so the large `response.output` trajectory builds no Python objects:
pydantic-core's validator of optional typed-dict fields, over the same parser as the full reader
(jiter), skips in Rust what it does not declare. A dotted path is decoded both ways a row may hold
it: nested, and as a literal top-level key spelled with the dots; a field that is not an object
where a path descends is kept whole, as the full parse has it. The skeleton becomes a plain dict of
the fields that were present, which the same :func:`rows.reduce_row` then reduces: every reader
classifies identically.

Any line the skeleton cannot take (invalid JSON above all, NaN tokens, odd shapes) falls back to
the full parse, which also words the errors. ``PARITY_PARSER=full`` turns the skeleton off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Optional

from .fields import load_paths

#: A line's fields as a dict; None leaves the line to the full parse.
Decoder = Callable[[bytes], Optional[dict[str, Any]]]


def reader_name() -> str:
    """The reader rows are decoded with: ``full`` when ``PARITY_PARSER`` asks for it, else the
    skeleton over pydantic-core."""
    return "full" if os.environ.get("PARITY_PARSER", "").strip().lower() == "full" else "pydantic-core"


def skeleton_decoder(key: Optional[str], inferred: tuple[str, ...] = ()) -> Optional[Decoder]:
    """A bytes -> skeleton-dict decoder for rows keyed by ``key`` (None: detection) that also reads
    the id candidates ``inferred`` from a side's first row (:class:`FirstRowInFull`); None when the
    full parser is asked for. A line it cannot take raises :data:`DecodeError`.
    """
    return None if reader_name() == "full" else _core_decoder(load_paths(key, inferred))


@lru_cache(maxsize=16)
def _core_decoder(paths: tuple[str, ...]) -> Decoder:
    """pydantic-core's validator of the paths (built once per set of paths: a side, its sidecar and
    each shard ask for the same ones), each dotted path also as the literal top-level key it may be."""
    from pydantic_core import SchemaValidator

    return SchemaValidator(_core_schema([parts for path in paths for parts in ([path], path.split("."))])).validate_json


def _core_schema(paths: list[list[str]]) -> dict[str, Any]:
    """A typed dict of optional fields, extra keys ignored; a field a longer path reads inside is
    that typed dict when the value is an object and the value whole otherwise (as the full parse
    has it), and a field some path takes whole is taken whole."""
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
    """A decoder that leaves rows to the full parse until :meth:`ready` is told the side's inferred
    id candidates (seen on its first voting row, parsed in full so that every field shows, and
    what a file that holds no rollouts is); from then on the skeleton reads with them. Returns None
    for a line it leaves to the full parse."""

    def __init__(self, key: Optional[str]) -> None:
        self.key = key
        self.settled = False
        self.inner: Optional[Decoder] = None

    def ready(self, inferred: tuple[str, ...]) -> None:
        self.settled = True
        self.inner = skeleton_decoder(self.key, inferred)

    def __call__(self, raw: bytes) -> Optional[dict[str, Any]]:
        inner = self.inner
        return inner(raw) if inner is not None else None

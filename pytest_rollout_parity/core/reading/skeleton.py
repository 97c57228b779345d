"""The skeleton reader: decode only the fields the classification needs.

Each rollouts-file row is decoded into a skeleton that declares just the fields loading reads
(:func:`fields.load_paths`), so the large `response.output` trajectory builds no Python objects.
A dotted path is decoded both ways a row may hold it: nested, and as a literal top-level key
spelled with the dots. The skeleton becomes a plain dict of the fields that were present, which
the same :func:`rows.reduce_row` then reduces: every reader classifies identically.

Two backends, chosen by :func:`reader_name`:

- msgspec (the `fast` extra): a typed struct; the prompt (:data:`fields.ENCODED_FIELDS`) is kept
  as its JSON text and hashed only on the rows that need it, after the full reader's own parser
  has decoded it.
- pydantic-core (every install: pydantic depends on it): a validator of optional typed-dict
  fields over the same parser as the full reader (jiter), which skips what it does not declare
  in Rust; a field that is not an object where a path descends is kept whole, as the full parse
  has it. The prompt is decoded whole.

Any line the skeleton cannot take (invalid JSON above all, NaN tokens, odd shapes) falls back to
the full parse, which also words the errors. ``PARITY_PARSER=full`` turns the skeleton off;
``PARITY_PARSER=pydantic-core`` reads as an install without msgspec does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Optional

from .fields import ENCODED_FIELDS, load_paths

try:  # pragma: no cover - exercised when the extra is installed
    import msgspec
except ImportError:  # pragma: no cover - exercised when it is not
    msgspec = None  # type: ignore[assignment]

#: A line's fields as a dict; None leaves the line to the full parse.
Decoder = Callable[[bytes], Optional[dict[str, Any]]]


class _NeverEncoded:
    """Stands in for msgspec.Raw without msgspec: no value is ever one."""


#: The type of a field the skeleton kept as its encoded JSON text (:data:`fields.ENCODED_FIELDS`).
#: It holds the text's bytes (``bytes(value)``); :mod:`.task_idents` decodes it when a label is needed.
EncodedJSON: type = msgspec.Raw if msgspec is not None else _NeverEncoded

#: A field decoded whole (a Python value), kept encoded (:data:`EncodedJSON`), or an object of fields.
_Leaf = object
_Tree = dict[str, "_Leaf | _Tree"]
_WHOLE: _Leaf = Any


def reader_name() -> str:
    """The reader rows are decoded with: ``PARITY_PARSER`` when it names one that is installed,
    else (``auto``, the default) msgspec where installed, else pydantic-core."""
    asked = os.environ.get("PARITY_PARSER", "auto").strip().lower()
    if asked in ("msgspec", "pydantic-core", "full") and (asked != "msgspec" or msgspec is not None):
        return asked
    return "msgspec" if msgspec is not None else "pydantic-core"


def _tree(paths: Sequence[str], encoded: Sequence[str] = ()) -> _Tree:
    """The paths as nested fields; each dotted path also as the literal top-level key it may be.

    A path in ``encoded`` is kept as its JSON text, unless another path reads inside it or wants
    it whole at the same place: then it is decoded whole.
    """
    root: _Tree = {}
    for path in paths:
        kind = EncodedJSON if path in encoded else _WHOLE
        if "." in path:
            _place(root, [path], kind)
        _place(root, path.split("."), kind)
    return root


def _place(node: _Tree, parts: list[str], kind: _Leaf) -> None:
    """Put one path's leaf into the tree; a leaf takes the whole value, whatever a longer path wanted."""
    head, rest = parts[0], parts[1:]
    here = node.get(head)
    if not rest:
        node[head] = kind if here is None or here is kind else _WHOLE
        return
    if here is None:
        here = node[head] = {}
    if isinstance(here, dict):
        _place(here, rest, kind)
    else:
        node[head] = _WHOLE  # a path reads inside a leaf: the leaf is decoded whole


def _struct(name: str, tree: _Tree) -> Any:
    """A struct type for the tree: every field optional (UNSET when absent), objects nested."""
    fields = []
    for index, (json_name, subtree) in enumerate(sorted(tree.items())):
        kind: Any = Optional[_struct(f"{name}_{index}", subtree)] if isinstance(subtree, dict) else subtree
        fields.append((f"f{index}", kind, msgspec.field(default=msgspec.UNSET, name=json_name)))
    return msgspec.defstruct(name, fields)


def skeleton_decoder(key: Optional[str], inferred: tuple[str, ...] = ()) -> Optional[Decoder]:
    """A bytes -> skeleton-dict decoder for rows keyed by ``key`` (None: detection) that also reads
    the id candidates ``inferred`` from a side's first row (:class:`FirstRowInFull`); None when the
    full parser is asked for. A line it cannot take raises :data:`DecodeError`.
    """
    reader = reader_name()
    if reader == "full":
        return None
    paths = load_paths(key, inferred)
    if reader == "pydantic-core":
        return _core_decoder(paths)
    tree = _tree(paths, ENCODED_FIELDS)
    decode_struct = msgspec.json.Decoder(_struct("RowSkeleton", tree)).decode
    to_builtins = msgspec.to_builtins
    keep_encoded = (EncodedJSON,)

    def decode(raw: bytes) -> dict[str, Any]:
        return to_builtins(decode_struct(raw), builtin_types=keep_encoded)  # type: ignore[no-any-return]

    return decode


@lru_cache(maxsize=16)
def _core_decoder(paths: tuple[str, ...]) -> Decoder:
    """pydantic-core's validator of the paths' tree (built once per set of paths: a side, its
    sidecar and each shard ask for the same ones)."""
    from pydantic_core import SchemaValidator

    return SchemaValidator(_core_schema(_tree(paths))).validate_json


def _core_schema(tree: _Tree) -> dict[str, Any]:
    """A typed dict of optional fields, extra keys ignored; a subtree is that typed dict when the
    value is an object and the value whole otherwise (as the full parse has it)."""
    fields = {}
    for name, subtree in tree.items():
        schema: dict[str, Any] = {"type": "any"}
        if isinstance(subtree, dict):
            schema = {"type": "union", "choices": [_core_schema(subtree), schema], "mode": "left_to_right"}
        fields[name] = {"type": "typed-dict-field", "schema": schema, "required": False}
    return {"type": "typed-dict", "fields": fields, "total": False, "extra_behavior": "ignore"}


def decode_encoded(value: Any) -> Any:
    """The JSON value of a field the skeleton kept encoded; raises :data:`DecodeError` when msgspec
    refuses it (a number out of float range, a lone surrogate escape)."""
    return msgspec.json.decode(value)


#: What the skeleton may raise on a line it cannot take; the full parse then reads (or rejects) it.
#: pydantic-core's errors are ValueErrors (naming them would import pydantic-core here); msgspec's
#: are ValueErrors only from 0.19 on.
DecodeError: tuple[type[BaseException], ...] = (ValueError, RecursionError) + (
    (msgspec.DecodeError, msgspec.ValidationError) if msgspec is not None else ()
)


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

"""An optional faster reader: decode only the fields the classification needs (msgspec).

With the `fast` extra installed, each rollouts-file row is decoded into a typed skeleton that
declares just the fields loading reads (:func:`fields.load_paths`), so the large
`response.output` trajectory is skipped without building Python objects. A dotted path is decoded
both ways a row may hold it: nested, and as a literal top-level key spelled with the dots. The
prompt (:data:`fields.ENCODED_FIELDS`) is kept as its JSON text: it is hashed only on the rows
that need it, after the full reader's own parser has decoded it. The skeleton becomes a plain dict of the fields that were present, which the same
:func:`rows.reduce_row` then reduces: both readers classify identically. Any line the skeleton
cannot take (NaN tokens, odd shapes, invalid JSON) falls back to the full parse, which also words
the errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
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
#: It holds the text's bytes (``bytes(value)``); :mod:`.prompt_labels` decodes it when a label is needed.
EncodedJSON: type = msgspec.Raw if msgspec is not None else _NeverEncoded

#: A field decoded whole (a Python value), kept encoded (:data:`EncodedJSON`), or an object of fields.
_Leaf = object
_Tree = dict[str, "_Leaf | _Tree"]
_WHOLE: _Leaf = Any


def skeleton_available() -> bool:
    """True when msgspec is installed and PARITY_PARSER does not ask for the full parser."""
    return msgspec is not None and os.environ.get("PARITY_PARSER", "auto").lower() != "full"


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
    """A bytes -> skeleton-dict decoder for rows keyed by ``key`` (None: detection), or None.

    ``inferred`` adds the id candidates a side's first row showed (read in full, see
    :class:`FirstRowInFull`), so that every later row is decoded with them.

    The dict holds the fields that were present, under their JSON names (absent ones are UNSET,
    which :func:`msgspec.to_builtins` leaves out); an encoded field stays an :data:`EncodedJSON`.
    """
    if not skeleton_available():
        return None
    tree = _tree(load_paths(key, inferred), ENCODED_FIELDS)
    decode_struct = msgspec.json.Decoder(_struct("RowSkeleton", tree)).decode
    to_builtins = msgspec.to_builtins
    keep_encoded = (EncodedJSON,)

    def decode(raw: bytes) -> dict[str, Any]:
        return to_builtins(decode_struct(raw), builtin_types=keep_encoded)  # type: ignore[no-any-return]

    return decode


def decode_encoded(value: Any) -> Any:
    """The JSON value of a field the skeleton kept encoded; raises :data:`DecodeError` when msgspec
    refuses it (a number out of float range, a lone surrogate escape)."""
    return msgspec.json.decode(value)


#: What the skeleton may raise on a line it cannot take; the full parse then reads (or rejects) it.
DecodeError: tuple[type[BaseException], ...] = (
    (msgspec.DecodeError, msgspec.ValidationError, RecursionError) if msgspec is not None else ()
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
        """The candidates are known: decode with the skeleton from now on."""
        if not self.settled:
            self.settled = True
            self.inner = skeleton_decoder(self.key, inferred)

    def __call__(self, raw: bytes) -> Optional[dict[str, Any]]:
        inner = self.inner
        return inner(raw) if inner is not None else None

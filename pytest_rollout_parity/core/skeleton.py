"""An optional faster reader: decode only the fields the classification needs (msgspec).

With the `fast` extra installed, each rollouts-file row is decoded into a typed skeleton that
declares just the fields loading reads (:func:`fields.load_paths`), so the large
`response.output` trajectory is skipped without building Python objects. A dotted path is decoded
both ways a row may hold it: nested, and as a literal top-level key spelled with the dots. The
skeleton becomes a plain dict of the fields that were present, which the same
:func:`rows.reduce_row` then reduces: both readers classify identically. Any line the skeleton
cannot take (NaN tokens, odd shapes, invalid JSON) falls back to the full parse, which also words
the errors.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence

from .fields import load_paths

try:  # pragma: no cover - exercised when the extra is installed
    import msgspec
except ImportError:  # pragma: no cover - exercised when it is not
    msgspec = None  # type: ignore[assignment]

Decoder = Callable[[bytes], dict[str, Any]]
_Tree = dict[str, "Optional[_Tree]"]


def available() -> bool:
    """True when msgspec is installed and PARITY_PARSER does not ask for the full parser."""
    return msgspec is not None and os.environ.get("PARITY_PARSER", "auto").lower() != "full"


def _tree(paths: Sequence[str]) -> _Tree:
    """The paths as nested fields; each dotted path also as the literal top-level key it may be."""
    root: _Tree = {path: None for path in paths if "." in path}
    for path in paths:
        node = root
        parts = path.split(".")
        for depth, part in enumerate(parts):
            leaf = depth == len(parts) - 1
            if leaf or node.get(part, {}) is None:
                node[part] = None  # a leaf takes the whole value, whatever a longer path wanted
                break
            node = node.setdefault(part, {})  # type: ignore[assignment]
    return root


def _struct(name: str, tree: _Tree) -> Any:
    """A struct type for the tree: every field optional (UNSET when absent), objects nested."""
    fields = []
    for index, (json_name, subtree) in enumerate(sorted(tree.items())):
        kind: Any = Any if subtree is None else Optional[_struct(f"{name}_{index}", subtree)]
        fields.append((f"f{index}", kind, msgspec.field(default=msgspec.UNSET, name=json_name)))
    return msgspec.defstruct(name, fields)


def skeleton_decoder(key: Optional[str]) -> Optional[Decoder]:
    """A bytes -> skeleton-dict decoder for rows keyed by ``key`` (None: detection), or None.

    The dict holds the fields that were present, under their JSON names (absent ones are UNSET,
    which :func:`msgspec.to_builtins` leaves out).
    """
    if not available():
        return None
    decode_struct = msgspec.json.Decoder(_struct("RowSkeleton", _tree(load_paths(key)))).decode
    to_builtins = msgspec.to_builtins

    def decode(raw: bytes) -> dict[str, Any]:
        return to_builtins(decode_struct(raw))  # type: ignore[no-any-return]

    return decode


#: What the skeleton may raise on a line it cannot take; the full parse then reads (or rejects) it.
DecodeError: tuple[type[BaseException], ...] = (
    (msgspec.DecodeError, msgspec.ValidationError, RecursionError) if msgspec is not None else ()
)

"""An optional faster reader: decode only the fields the classification needs (msgspec).

With the `fast` extra installed, each rollouts-file row is decoded into a typed skeleton that
declares just the small fields (reward, mask, agent error, failure kind, task keys, indices), so
the large `response.output` trajectory is skipped without building Python objects. The skeleton
becomes a plain dict of the fields that were present, which the same :func:`rows.reduce_row` then
reduces: both readers classify identically. Any line the skeleton cannot take (NaN tokens, odd
shapes, invalid JSON) falls back to the full parse, which also words the errors.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence

from .rows import AGENT_ERROR_FIELDS, IDENTITY_FALLBACKS, KEY_CANDIDATES

try:  # pragma: no cover - exercised when the extra is installed
    import msgspec
except ImportError:  # pragma: no cover - exercised when it is not
    msgspec = None  # type: ignore[assignment]

#: Dotted paths every row is reduced from (besides the task key fields).
NEEDED_PATHS: tuple[str, ...] = (
    "reward",
    "mask_sample",
    "failure_kind",
    *AGENT_ERROR_FIELDS,
    "response.metadata",
    "agent_ref.name",
    "_ng_task_index",
    "_ng_rollout_index",
    "_ng_failure_class",  # a failure record, e.g. in a merged main file
    "_ng_failure_record",
)

Decoder = Callable[[bytes], dict[str, Any]]
_Tree = dict[str, "Optional[_Tree]"]


def available() -> bool:
    """True when msgspec is installed and PARITY_PARSER does not ask for the full parser."""
    return msgspec is not None and os.environ.get("PARITY_PARSER", "auto").lower() != "full"


def _tree(paths: Sequence[str]) -> _Tree:
    root: _Tree = {}
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


def _struct(name: str, tree: _Tree) -> tuple[Any, Callable[[Any], dict[str, Any]]]:
    """A struct type for the tree, and a function turning a decoded one into a dict of set fields."""
    fields = []
    children: list[tuple[str, str, Optional[Callable[[Any], dict[str, Any]]]]] = []
    for index, (json_name, subtree) in enumerate(sorted(tree.items())):
        attribute = f"f{index}"
        if subtree is None:
            kind: Any = Any
            convert = None
        else:
            sub_type, convert = _struct(f"{name}_{index}", subtree)
            kind = Optional[sub_type]
        fields.append((attribute, kind, msgspec.field(default=msgspec.UNSET, name=json_name)))
        children.append((attribute, json_name, convert))
    unset = msgspec.UNSET

    def to_dict(value: Any) -> dict[str, Any]:
        result = {}
        for attribute, json_name, convert in children:
            item = getattr(value, attribute)
            if item is not unset:
                result[json_name] = convert(item) if convert is not None and item is not None else item
        return result

    return msgspec.defstruct(name, fields), to_dict


def skeleton_decoder(key: Optional[str]) -> Optional[Decoder]:
    """A bytes -> skeleton-dict decoder for rows keyed by ``key`` (None: detection), or None."""
    if not available():
        return None
    paths = list(NEEDED_PATHS) + ([key] if key else list(KEY_CANDIDATES + IDENTITY_FALLBACKS))
    tree = _tree(paths)
    if key and "." in key:
        tree.setdefault(key, None)  # a literal top-level key holding the dots
    struct_type, to_dict = _struct("RowSkeleton", tree)
    decode_struct = msgspec.json.Decoder(struct_type).decode

    def decode(raw: bytes) -> dict[str, Any]:
        return to_dict(decode_struct(raw))

    return decode


#: What the skeleton may raise on a line it cannot take; the full parse then reads (or rejects) it.
DecodeError: tuple[type[BaseException], ...] = (
    (msgspec.DecodeError, msgspec.ValidationError, RecursionError) if msgspec is not None else ()
)

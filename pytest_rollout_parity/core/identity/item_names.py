"""Item names: a task label made safe for node ids, `-k` and `--lf` (docs/semantics.md, "Task
identity and the join", Item names)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_UNSAFE = re.compile(r"[^\w.\-/]+")


def label_hash(label: str) -> str:
    """A short hash of the raw label, stable across runs and machines."""
    import hashlib  # here: it loads OpenSSL, which the reader child does not otherwise need

    return hashlib.sha1(label.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def item_names(labels: Sequence[str], reserved: Sequence[str] = ()) -> list[str]:
    """One distinct, safe name per label (each run of characters other than word characters, `.`, `-`
    and `/` made one `_`); a name that collides with another or with a ``reserved`` item of the
    gate's own (such as the aggregate) gets `-<hash of its raw label>`."""
    names = [_UNSAFE.sub("_", label).strip("_") for label in labels]
    owners: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        owners.setdefault(name, []).append(index)
    for name, indexes in owners.items():
        if name and len(indexes) == 1 and name not in reserved:
            continue
        for index in indexes:
            label = labels[index]
            if name and label == name and name not in reserved:
                continue  # the one label that was already safe keeps its name
            names[index] = f"{name}-{label_hash(label)}" if name else label_hash(label)
    return names


def listed(names: Sequence[str], cap: int = 10, where: str = " (see --parity-json)") -> str:
    """`a, b, c` or, past ``cap`` names, `a, b, ... and 290 more` and ``where`` the rest are: never cut mid-name."""
    rest = len(names) - cap
    return ", ".join(names[:cap]) + (f" and {rest} more{where}" if rest > 0 else "")


def clipped(text: str, cap: int, more: str = " ... (see --parity-json)") -> str:
    """``text`` cut to about ``cap`` characters at a word boundary, then ``more``."""
    if len(text) <= cap:
        return text
    cut = text.rfind(" ", 0, cap)
    return text[: cut if cut > cap // 2 else cap].rstrip(" ,.;:") + more

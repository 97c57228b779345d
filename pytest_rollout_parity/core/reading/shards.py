"""A side given as shards: a glob or comma-separated globs, expanded as NeMo Gym's `input_glob` is.

`gym eval run --no-serve +disable_aggregation=true` writes a run as several shard files, and
`gym eval aggregate +input_glob='a/*.jsonl,b/*.jsonl'` reads them as the sorted, deduplicated
list of the files its globs match. A side is given the same way. Files a broad glob also matches
that are no rollouts (a shard's sidecar, its inputs, its attempt log, any `.json`) are left out:
each shard's own sidecar is read with it. A value naming a file that exists is that file, as
given, so a name holding `,`, `*` or `[` still works. The rules are in docs/semantics.md,
"Sharded sides".
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from .files import plain_name

#: Artifacts of a run that are never rollouts, whatever a glob matches (a compression suffix aside).
NOT_SHARDS = (
    "_failures.jsonl",
    "_materialized_inputs.jsonl",
    "_attempts.jsonl",
    "_reward_profiling.jsonl",
)


class ShardPatternError(ValueError):
    """A pattern that matches no rollouts file (the message names it)."""


def is_artifact(name: str) -> bool:
    """A file name a glob may match that is no rollouts file: a sidecar, inputs, attempts, any `.json`."""
    plain = plain_name(name)
    return plain.endswith(NOT_SHARDS) or plain.endswith(".json")


def is_pattern(value: str) -> bool:
    """Whether ``value`` is more than a plain path: it holds a glob character or a comma."""
    return "," in value or glob.has_magic(value)


def expand(value: str, base: Path) -> list[tuple[Path, str]]:
    """The files ``value`` names, as (path, name shown in messages), sorted and deduplicated.

    A value that names an existing file, or that holds no glob character and no comma, is that one
    file (a missing one is reported when it is read). Otherwise each comma-separated part is a glob
    (relative ones against ``base``; the shown names keep the form they were given in) or, when
    it names an existing file, that file. Raises :class:`ShardPatternError` for a part that matches
    no rollouts file.
    """
    literal = _resolve(value, base)
    if os.path.isfile(literal) or not is_pattern(value):
        return [(literal, value)]
    found: dict[str, tuple[Path, str]] = {}  # one entry per file, however many parts match it
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        resolved = _resolve(part, base)
        if os.path.isfile(resolved):
            if is_artifact(os.path.basename(part)):
                raise ShardPatternError(f"{part!r} is no rollouts file (a shard's sidecar is read with its shard)")
            found.setdefault(os.path.normpath(resolved), (resolved, part))
            continue
        matches = _matches(part, base)
        if not matches:
            skipped = _matches(part, base, artifacts=True)
            why = f" (only files that are no rollouts: {', '.join(sorted(skipped)[:3])})" if skipped else ""
            raise ShardPatternError(f"{part!r} matches no rollouts file{why}")
        for shown in matches:
            path = _resolve(shown, base)
            found.setdefault(os.path.normpath(path), (path, shown))
    if not found:
        raise ShardPatternError(f"{value!r} names no file")
    return sorted(found.values(), key=lambda file: file[1])


def _resolve(value: str, base: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def _matches(part: str, base: Path, *, artifacts: bool = False) -> list[str]:
    """The regular files ``part`` matches, in the form it was given (relative to ``base`` or not)."""
    pattern = os.path.expanduser(part)
    if os.path.isabs(pattern):
        names = glob.glob(pattern, recursive=True)
    else:
        names = glob.glob(pattern, root_dir=base, recursive=True)
    return [
        name for name in names
        if os.path.isfile(_resolve(name, base)) and is_artifact(os.path.basename(name)) == artifacts
    ]

"""A side given as shards: a glob or comma-separated globs, expanded as NeMo Gym's `input_glob` is
to the sorted, deduplicated files they match (docs/semantics.md, "Sharded sides").

Files a glob matches that are no rollouts are left out (each shard's sidecar is read with it); a
value naming an existing file is that file, so a name holding `,`, `*` or `[` still works. Files a
glob finds were not named by the user, so they are held to more (docs/untrusted-input.md): the walk
never enters a symlinked directory (a `**` over `a -> .` ends), and each match is a regular file
resolving inside the pattern's own directory, its name free of control or invisible characters.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from ..escaping import has_invisible, visible
from .files import inside, plain_name, written_beside
from .sidecar import SIDECAR_SUFFIX

#: the most files one pattern may match: a large sharded run has hundreds to a few thousand shards
MAX_MATCHES = 10_000

#: Artifacts of a run that are never rollouts, whatever a glob matches (a compression suffix aside).
NOT_SHARDS = (SIDECAR_SUFFIX, "_materialized_inputs.jsonl", "_attempts.jsonl", "_reward_profiling.jsonl")


class ShardPatternError(ValueError):
    """A pattern that matches no rollouts file (the message names it)."""


def is_artifact(name: str) -> bool:
    """A file name a glob may match that is no rollouts file: a sidecar, inputs, attempts, any `.json`."""
    plain = plain_name(name)
    return plain.endswith(NOT_SHARDS) or plain.endswith(".json") or bool(written_beside(plain))


def expand(value: str, base: Path, left_out: Optional[list[tuple[str, str]]] = None) -> list[tuple[Path, str]]:
    """The files ``value`` names as (path, name shown: as given); relative globs against ``base``. A
    value without a glob character or a comma is one file (a missing one is reported when read).
    ``left_out`` receives the files written beside the rollouts a glob matched, with what each is."""
    literal = _resolve(value, base)
    if os.path.isfile(literal) or not ("," in value or glob.has_magic(value)):
        return [(literal, value)]
    found: dict[str, tuple[Path, str]] = {}  # one entry per file, however many parts match it
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        if not os.path.isfile(_resolve(part, base)):
            matches, skipped = _matches(part, base)
        elif is_artifact(os.path.basename(part)):
            what = written_beside(part) or "a shard's sidecar is read with its shard"
            raise ShardPatternError(f"{part!r} is no rollouts file ({what})")
        else:
            matches, skipped = [part], []
        if not matches:
            others = ", ".join(visible(name) for name in sorted(skipped)[:3])
            why = f" (only files that are no rollouts: {others})" if skipped else ""
            raise ShardPatternError(f"{part!r} matches no rollouts file{why}")
        for shown in matches:
            path = _resolve(shown, base)
            found.setdefault(os.path.normpath(path), (path, shown))
        if left_out is not None:
            left_out.extend(
                (name, what) for name in skipped if (what := written_beside(name)) and (name, what) not in left_out
            )
    if not found:
        raise ShardPatternError(f"{value!r} names no file")
    return sorted(found.values(), key=lambda file: file[1])


def _resolve(value: str, base: Path) -> Path:
    return base / os.path.expanduser(value)  # an absolute path stays itself


def _home(pattern: str) -> tuple[str, list[str]]:
    """The pattern's directory as given (its segments before the first glob character; "" for the
    base) and the segments from there on."""
    parts = pattern.split(os.sep)
    for index, part in enumerate(parts):
        if glob.has_magic(part):
            prefix = os.sep.join(parts[:index])
            # `**/**` is one `**`: each more would multiply the ways a path splits between them
            rest: list[str] = []
            for segment in parts[index:]:
                if not (segment == "**" and rest[-1:] == ["**"]):
                    rest.append(segment)
            return (prefix or os.sep if pattern.startswith(os.sep) else prefix), rest
    return os.path.dirname(pattern), [os.path.basename(pattern)]


def _walk(directory: str, shown: str, segments: list[str]) -> Iterator[str]:
    """Each entry below ``directory`` matching ``segments`` (as ``shown`` joined with its names),
    without ever entering a symlinked directory; names starting with `.` only for a pattern that does."""
    segment, rest = segments[0], segments[1:]
    if segment == "**":
        yield from _walk(directory, shown, rest or ["*"])
        for entry in _entries(directory):
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                yield from _walk(entry.path, os.path.join(shown, entry.name), segments)
        return
    if not glob.has_magic(segment):
        path = os.path.join(directory, segment)
        if not rest:
            if os.path.lexists(path):
                yield os.path.join(shown, segment)
        elif os.path.isdir(path) and not os.path.islink(path):
            yield from _walk(path, os.path.join(shown, segment), rest)
        return
    for entry in _entries(directory):
        hidden = entry.name.startswith(".") and not segment.startswith(".")
        if hidden or not fnmatch.fnmatchcase(entry.name, segment):
            continue
        if not rest:
            yield os.path.join(shown, entry.name)
        elif entry.is_dir(follow_symlinks=False):
            yield from _walk(entry.path, os.path.join(shown, entry.name), rest)


def _entries(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except OSError:
        return []


def _matches(part: str, base: Path) -> tuple[list[str], list[str]]:
    """The rollouts files ``part`` matches and the other files, in the form it was given; raises
    :class:`ShardPatternError` for a match that may not be read."""
    pattern = os.path.expanduser(part)
    prefix, segments = _home(pattern)
    home = _resolve(prefix, base) if prefix else base
    rollouts: list[str] = []
    others: list[str] = []
    for shown in _walk(str(home), prefix, segments):
        path = _resolve(shown, base)
        if not os.path.isfile(path):
            continue
        if len(rollouts) + len(others) == MAX_MATCHES:
            raise ShardPatternError(
                f"{part!r} matches more than {MAX_MATCHES} files: name the shards by a narrower pattern"
            )
        if is_artifact(os.path.basename(shown)):
            others.append(shown)
            continue
        if has_invisible(shown[len(prefix) :]):  # the name matched, not the directory the user typed
            raise ShardPatternError(
                f"{part!r} matches {shown!r}, a name holding a control or invisible character: "
                "rename the file (a name is shown in every report)"
            )
        if not inside(path, home):
            raise ShardPatternError(
                f"{part!r} matches {shown!r}, a link leading out of {prefix or str(base)!r}: "
                "files a pattern finds must resolve inside its directory (name a linked file by its own path)"
            )
        rollouts.append(shown)
    return rollouts, others

"""The run's own inventory beside the gate's counts: `<stem>_coverage.json` next to a side's file.

NeMo Gym's newest collector writes it with eight counts of logical rollouts: `expected` is the sum
of `measured`, `masked`, `unscored`, `failed`, `intentionally_omitted` and `unknown`, and
`successful` is `measured + masked + unscored`. `unknown` or `failed` above 0 means the run did not
finish. The gate shows the inventory next to what it counted, and notes where they part; a file that
cannot be used is a note too, never an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..model import RowFacts, RowOrigin
from ..reading.bounded import SmallFileError, read_small
from ..reading.files import LEADS_OUT, check_home, companion, leads_out, plain_name
from ..reading.sidecar import sidecar_display, sidecar_path
from .metrics_file import metrics_path, metrics_places

#: the counts, in the order the summary shows them
FIELDS = ("expected", "successful", "measured", "masked", "unscored", "failed", "intentionally_omitted", "unknown")
#: an inventory is a handful of numbers; anything larger is not one
MAX_BYTES = 64 * 1024
#: the largest count taken: far above any run's rollouts, small enough for every sum and ratio shown
MAX_COUNT = 10**12


def _coverage_name(path: Path) -> Path:
    stem = plain_name(path.name).removesuffix(".jsonl")
    return path.with_name(stem + "_coverage.json")


def coverage_places(path: Path) -> tuple[Path, Path]:
    """Both places a side's coverage file may be: beside the path as given, beside the file it resolves to."""
    return _coverage_name(path), _coverage_name(Path(os.path.realpath(path)))


def coverage_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_coverage.json` beside it (or beside a symlink's target)."""
    return companion(path, _coverage_name)


@dataclass(frozen=True)
class Inventory:
    """One side's inventory (summed over its files) and the scored rows the gate counted there."""

    #: the coverage file(s) as messages name them
    files: tuple[str, ...]
    counts: dict[str, int]
    #: the side's main-file rows with a reward that no mask set aside: what `measured` should equal
    gate_measured: int

    @property
    def unfinished(self) -> bool:
        """The run did not finish: rollouts failed or never reported."""
        return self.counts["unknown"] > 0 or self.counts["failed"] > 0

    def notes(self, side: str) -> list[str]:
        """The run did not finish; the inventory and the rows disagree."""
        notes = []
        shown = ", ".join(self.files)
        if self.unfinished:
            notes.append(
                f"{side} side: {shown} counts {self.counts['failed']} failed and {self.counts['unknown']} unknown "
                f"of {self.counts['expected']} expected rollouts: the {side} run did not finish"
            )
        if self.counts["measured"] != self.gate_measured:
            notes.append(
                f"{side} side: {shown} counts {self.counts['measured']} measured rollouts, the gate scored "
                f"{self.gate_measured} row(s): a partial or filtered file, or a stale coverage file?"
            )
        return notes


@dataclass(frozen=True)
class InventoryRead:
    """What reading a side's coverage gave: the inventory, or the note saying why there is none."""

    inventory: Optional[Inventory]
    note: Optional[str] = None


def read_inventory(
    paths: Sequence[Path], displays: Sequence[str], facts: Sequence[RowFacts], side: str
) -> Optional[InventoryRead]:
    """The side's coverage summed over its files (None when none of them has a coverage file)."""
    found = [(coverage_path(p), str(_coverage_name(Path(d))), p) for p, d in zip(paths, displays)]
    found = [(path, shown, main) for path, shown, main in found if path.exists() or path.is_symlink()]
    if not found:
        return None
    totals = dict.fromkeys(FIELDS, 0)
    for path, shown, main in found:
        if leads_out(path, main):
            return InventoryRead(None, f"{side} side: {shown} ignored: {LEADS_OUT}")
        try:
            counts = _counts(read_small(path, MAX_BYTES))
        except (SmallFileError, ValueError) as exc:
            return InventoryRead(None, f"{side} side: {shown} ignored: {str(exc)[:200]}")
        for name in FIELDS:
            totals[name] += counts[name]
    measured = sum(1 for f in facts if f.origin is RowOrigin.MAIN and f.reward is not None and f.mask is None)
    return InventoryRead(Inventory(tuple(shown for _, shown, _ in found), totals, measured))


def _counts(data: bytes) -> dict[str, int]:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as exc:  # an int of over 4300 digits is a ValueError too
        raise ValueError(f"not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object of counts")
    counts: dict[str, int] = {}
    for name in FIELDS:
        count = value.get(name)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"`{name}` is not a count (got {_shown(count)})")
        if count > MAX_COUNT:
            raise ValueError(f"`{name}` is out of range (got {_shown(count)}, at most {MAX_COUNT})")
        counts[name] = count
    parts = sum(counts[name] for name in FIELDS[2:])  # `measured` to `unknown`
    if counts["expected"] != parts:
        raise ValueError(f"`expected` ({counts['expected']}) is not the sum of its parts ({parts})")
    return counts


def _shown(value: object) -> str:
    """A value as a note quotes it: a huge number by its size, anything else clipped."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_COUNT:
        return f"a number of {len(str(abs(value)))} digits"
    return json.dumps(value)[:40]


def check_companions(path: Path, shown: str) -> None:
    """Raise CompareInputError naming the first companion of ``path`` (shown as ``shown``) that
    leads out of its side's directory: a side's sidecar, aggregate-metrics and coverage files are
    found by name, not given by the user, so a pull request could commit one as a link to any file
    the runner can read, whose content the reports would then publish. Each one that is there must
    resolve beside the side's file, as given or as resolved (a side named by a link finds its
    companions beside the link's target too)."""
    check_home(sidecar_path(path), path, sidecar_display(shown, path))
    for found, places in ((metrics_path(path), metrics_places(path)), (coverage_path(path), coverage_places(path))):
        # named beside the side as the user named it, else (beside a link's target) by its own path
        check_home(found, path, str(Path(shown).with_name(found.name)) if found == places[0] else str(found))

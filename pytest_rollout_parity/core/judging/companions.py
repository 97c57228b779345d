"""The run's own files beside a side: NeMo Gym's `<stem>_aggregate_metrics.json` (one entry per agent,
or per environment server, whose `agent_metrics` hold `mean/reward` over its rows) and its newest
collector's `<stem>_coverage.json` (eight counts of logical rollouts; `expected` is the sum of
`measured` to `unknown`). Each is shown next to what the gate counted, and a disagreement (a
partial file, a filter, a stale file) is noted. Either is only ever a note: a bad one never stops
the gate, and one that is not a regular file or is larger than its cap is ignored unread.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..model import RowFacts, RowOrigin
from ..reading.bounded import SmallFileError, read_capped, read_small
from ..reading.files import LEADS_OUT, check_home, companion, leads_out, plain_name
from ..reading.side_builder import NO_AGENT
from ..reading.sidecar import sidecar_display, sidecar_path
from .classify import mean_reward

TOLERANCE = 1e-6
#: a metrics file holds one small entry per agent; a larger one is ignored unread
METRICS_CAP = 8 << 20
MEAN_FIELD = "mean/reward"
#: the largest recorded mean taken as a number (an integer beyond it would not convert to a float)
MAX_MEAN = 10**15
#: the counts of a coverage file, in the order the summary shows them
FIELDS = ("expected", "successful", "measured", "masked", "unscored", "failed", "intentionally_omitted", "unknown")
#: an inventory is a handful of numbers; anything larger is not one
MAX_BYTES = 64 * 1024
#: the largest count taken: far above any run's rollouts, small enough for every sum and ratio shown
MAX_COUNT = 10**12


def _metrics_name(path: Path) -> Path:
    return path.with_name(path.stem + "_aggregate_metrics.json")


def _coverage_name(path: Path) -> Path:
    stem = plain_name(path.name).removesuffix(".jsonl")
    return path.with_name(stem + "_coverage.json")


#: the files found beside a side besides its sidecar: what each is, and its name beside a path
_BESIDE = (("aggregate metrics file", _metrics_name), ("coverage file", _coverage_name))


def metrics_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_aggregate_metrics.json` beside it (or beside a symlink's target)."""
    return companion(path, _metrics_name)


def companion_places(path: Path) -> list[tuple[str, Path]]:
    """Each place a side's metrics and coverage files may be, with what it is: beside the path as
    given, beside the file it resolves to."""
    real = Path(os.path.realpath(path))
    return [(what, name_for(place)) for what, name_for in _BESIDE for place in (path, real)]


def _ignored(side: str, shown: str, reason: str) -> str:
    return f"{side} side: {shown} ignored: {reason[:200]}"


@dataclass(frozen=True)
class AggregateCheck:
    """One side's recorded mean reward next to the one computed from its rows."""

    file: str
    agent: Optional[str]
    recorded_mean: Optional[float]
    computed_mean: Optional[float]
    rows: int
    note: Optional[str] = None


def _agent_name(entry: dict[str, Any]) -> Optional[str]:
    ref = entry.get("agent_ref")
    name = ref.get("name") if isinstance(ref, dict) else None
    return name if isinstance(name, str) else None


def _recorded(data: Any, agent: Optional[str]) -> float:
    """The recorded mean of the compared agent's entry (the only entry when the rows name no agent)."""
    entries = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        raise ValueError("expected a JSON array of objects")
    named = [entry for entry in entries if agent is not None and _agent_name(entry) == agent]
    if not named and len(entries) == 1 and (agent in (None, NO_AGENT) or _agent_name(entries[0]) is None):
        named = entries
    if len(named) != 1:
        present = ", ".join(sorted({_agent_name(e) or "?" for e in entries})) or "none"
        raise ValueError(f"no single entry for agent {agent or NO_AGENT} (entries: {present})")
    for section in ("agent_metrics", "key_metrics"):
        metrics = named[0].get(section)
        value = metrics.get(MEAN_FIELD) if isinstance(metrics, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, int) and abs(value) > MAX_MEAN:
                raise ValueError(f"its {MEAN_FIELD} is out of range (a number of {len(str(abs(value)))} digits)")
            return float(value)
    raise ValueError(f"its entry has no numeric {MEAN_FIELD}")


def check_side(
    path: Path, display: str, agent: Optional[str], facts: Sequence[RowFacts], side: str
) -> Optional[AggregateCheck]:
    """Compare a side's metrics file (None when there is none) with its rows."""
    metrics = metrics_path(path)
    if not metrics.is_file():
        return None
    shown = str(_metrics_name(Path(display)))
    # the mean over the rollouts file's rows with a finite reward, as NeMo Gym averages
    rewards = [f.reward for f in facts if f.origin is RowOrigin.MAIN and f.reward is not None]
    rewards = [reward for reward in rewards if math.isfinite(reward)]
    mean, rows = (mean_reward(rewards) if rewards else None), len(rewards)
    if leads_out(metrics, path):
        return AggregateCheck(shown, agent, None, mean, rows, _ignored(side, shown, LEADS_OUT))
    try:
        recorded = _recorded(json.loads(read_capped(metrics, METRICS_CAP)), agent)
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).split("\n")[0]
        return AggregateCheck(shown, agent, None, mean, rows, _ignored(side, shown, reason))
    note: Optional[str] = None
    if mean is None or not math.isfinite(recorded) or abs(recorded - mean) > TOLERANCE:
        # both means as every reward is shown (to 4 places), in full where 4 places would hide the gap
        given, got = repr(round(recorded, 4)), "none" if mean is None else repr(round(mean, 4))
        if given == got:
            given, got = repr(recorded), repr(mean)
        note = (
            f"{side} side: {shown} records a mean reward of {given}, the rows give {got} over {rows} row(s): "
            "a partial file, a filter, or a stale metrics file?"
        )
    return AggregateCheck(shown, agent, recorded, mean, rows, note)


def combined_check(checks: Sequence[AggregateCheck]) -> Optional[AggregateCheck]:
    """A sharded side's checks as one: the means weighted by each shard's rows with a reward, each
    shard's own disagreement a note naming its file; None when no shard has the file."""
    if len(checks) <= 1:
        return checks[0] if checks else None
    rows = sum(check.rows for check in checks)

    def weighted(means: list[Optional[float]]) -> Optional[float]:
        if rows == 0 or any(mean is None for mean in means):
            return None
        return math.fsum((mean or 0.0) * check.rows for mean, check in zip(means, checks)) / rows

    return AggregateCheck(
        ", ".join(check.file for check in checks),
        checks[0].agent,
        weighted([check.recorded_mean for check in checks]),
        weighted([check.computed_mean for check in checks]),
        rows,
        "; ".join(check.note for check in checks if check.note) or None,
    )


@dataclass(frozen=True)
class Inventory:
    """One side's inventory (summed over its files) and the scored rows the gate counted there."""

    #: the coverage file(s) as messages name them
    files: tuple[str, ...]
    counts: dict[str, int]
    #: the side's main-file rows with a reward that no mask set aside: what `measured` should equal
    gate_measured: int

    def notes(self, side: str) -> list[str]:
        """The run did not finish (rollouts failed or never reported); the inventory and the rows disagree."""
        notes = []
        shown = ", ".join(self.files)
        if self.counts["unknown"] > 0 or self.counts["failed"] > 0:
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
    found = [(companion(p, _coverage_name), str(_coverage_name(Path(d))), p) for p, d in zip(paths, displays)]
    found = [(path, shown, main) for path, shown, main in found if path.exists() or path.is_symlink()]
    if not found:
        return None
    totals = dict.fromkeys(FIELDS, 0)
    for path, shown, main in found:
        if leads_out(path, main):
            return InventoryRead(None, _ignored(side, shown, LEADS_OUT))
        try:
            counts = _counts(read_small(path, MAX_BYTES))
        except (SmallFileError, ValueError) as exc:
            return InventoryRead(None, _ignored(side, shown, str(exc)))
        totals = {name: totals[name] + counts[name] for name in FIELDS}
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
    """Raise CompareInputError naming the first companion of ``path`` that leads out of its side's
    directory: a sidecar, metrics or coverage file is found by name, not given by the user, so a pull
    request could commit one as a link to any file the runner can read, whose content the reports
    would publish. Each must resolve beside the side's file, as given or as resolved."""
    check_home(sidecar_path(path), path, sidecar_display(shown, path))
    for _, name_for in _BESIDE:
        found = companion(path, name_for)
        # named beside the side as the user named it, else (beside a link's target) by its own path
        check_home(found, path, str(Path(shown).with_name(found.name)) if found == name_for(path) else str(found))

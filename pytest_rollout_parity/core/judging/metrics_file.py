"""The run's own aggregate metrics beside ours: `<stem>_aggregate_metrics.json` next to a side's file.

NeMo Gym writes that file from the main rollouts file after collection: a JSON array with one
entry per agent (newer: per environment server), whose `agent_metrics` map holds `mean/reward`,
the mean reward over the agent's rollouts (rows). The gate shows it next to the same mean
computed from the rows it read, and notes a disagreement (a partial file, a filter, a stale
metrics file). The metrics file is only ever a note: a bad one never stops the gate, and one that is
not a regular file or is larger than :data:`METRICS_CAP` is ignored without being read.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..model import CLOSED, RowFacts, RowOrigin
from ..reading.agents import NO_AGENT
from ..reading.bounded import read_capped
from ..reading.files import LEADS_OUT, companion, leads_out
from .classify import mean_reward

TOLERANCE = 1e-6
#: a metrics file holds one small entry per agent; a larger one is ignored unread
METRICS_CAP = 8 << 20
MEAN_FIELD = "mean/reward"
#: the largest recorded mean taken as a number (an integer beyond it would not convert to a float)
MAX_MEAN = 10**15


def _metrics_name(path: Path) -> Path:
    return path.with_name(path.stem + "_aggregate_metrics.json")


def metrics_path(path: Path) -> Path:
    """`<stem>.jsonl` -> `<stem>_aggregate_metrics.json` beside it (or beside a symlink's target)."""
    return companion(path, _metrics_name)


def metrics_places(path: Path) -> tuple[Path, Path]:
    """Both places a side's metrics file may be: beside the path as given, beside the file it resolves to."""
    return _metrics_name(path), _metrics_name(Path(os.path.realpath(path)))


@dataclass(frozen=True)
class AggregateCheck:
    """One side's recorded mean reward next to the one computed from its rows."""

    __pydantic_config__ = CLOSED

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
        return AggregateCheck(shown, agent, None, mean, rows, f"{side} side: {shown} ignored: {LEADS_OUT}")
    try:
        recorded = _recorded(json.loads(read_capped(metrics, METRICS_CAP)), agent)
    except (OSError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).split("\n")[0]
        return AggregateCheck(shown, agent, None, mean, rows, f"{side} side: {shown} ignored: {reason[:200]}")
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
    """A sharded side's checks (each shard's metrics file against that shard's rows) as one.

    The means are weighted by each shard's rows with a reward, as one mean over all its rows;
    each shard's own disagreement stays a note naming its file. None when no shard has the file.
    """
    if len(checks) <= 1:
        return checks[0] if checks else None
    rows = sum(check.rows for check in checks)

    def weighted(means: list[Optional[float]]) -> Optional[float]:
        if rows == 0 or any(mean is None for mean in means):
            return None
        return math.fsum((mean or 0.0) * check.rows for mean, check in zip(means, checks)) / rows

    notes = [check.note for check in checks if check.note]
    return AggregateCheck(
        ", ".join(check.file for check in checks),
        checks[0].agent,
        weighted([check.recorded_mean for check in checks]),
        weighted([check.computed_mean for check in checks]),
        rows,
        "; ".join(notes) if notes else None,
    )

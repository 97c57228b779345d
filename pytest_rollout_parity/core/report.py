"""The summary as data, and its renderings: the terminal section and the JSON file.

Both are pure functions of one :class:`CompareResult` (plus what the run adds: files, hook
verdicts, selection), so the items, the terminal and the JSON can never disagree.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from tabulate import tabulate

from .aggregate import AggregateCheck
from .margin import equivalence
from .model import CompareResult, TaskComparison, TaskSide
from .paired import PairedSection, paired_section
from .paired_report import aggregate_dict, paired_dict, paired_lines

LIST_CAP = 10


@dataclass(frozen=True)
class RunInfo:
    """What the pytest run adds to the classification: the files and the items' fate."""

    old_file: str
    new_file: str
    old_sidecar: Optional[str] = None
    new_sidecar: Optional[str] = None
    same_file: bool = False
    selected: Optional[int] = None
    verdicts_changed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    #: each side's `<stem>_aggregate_metrics.json` checked against its rows, when the file exists
    aggregate: dict[str, AggregateCheck] = field(default_factory=dict)


def _side_dict(side: Optional[TaskSide]) -> Optional[dict[str, Any]]:
    if side is None:
        return None
    return {
        "reward": side.reward,
        "rows": len(side.facts),
        "reward_rows": side.reward_rows,
        "masked": side.masked,
        "agent_error": side.agent_error,
        "failure_kind": side.failure_kind,
    }


def _task_dict(task: TaskComparison, p_value: Optional[float]) -> dict[str, Any]:
    return {
        "task": task.task,
        "category": task.category,
        "winner": task.winner,
        "old": _side_dict(task.old),
        "new": _side_dict(task.new),
        "p_value": p_value,
    }


def nothing_compared(result: CompareResult) -> Optional[str]:
    """Why no task has a counted reward on both sides, or None when at least one has."""
    if result.compared:
        return None
    shared = [t for t in result.tasks if t.old is not None and t.new is not None]
    if not shared:
        old_only = sum(1 for t in result.tasks if t.new is None)
        new_only = sum(1 for t in result.tasks if t.old is None)
        return (
            f"no task was compared: the files share no task ({old_only} only in old, {new_only} only in new); "
            "wrong file, another benchmark, or a key that differs between the sides?"
        )
    masked_old = sum(1 for t in shared if t.old is not None and t.old.masked)
    masked_new = sum(1 for t in shared if t.new is not None and t.new.masked)
    return (
        f"no task was compared: every one of the {len(shared)} shared task(s) is masked "
        f"({masked_old} on the old side, {masked_new} on the new side); was the infrastructure down?"
    )


def summary_dict(
    result: CompareResult,
    run: Optional[RunInfo] = None,
    *,
    paired: Optional[PairedSection] = None,
    margin: Optional[float] = None,
) -> dict[str, Any]:
    """The JSON summary (CONTRACT.md), from the result and, in a pytest run, the run's extras.

    ``paired`` is the result's paired section when the caller already has it (else computed);
    with a ``margin`` the summary also holds the aggregate equivalence decision.
    """
    section = paired if paired is not None else paired_section(result)
    notes = list(result.notes)
    if run is not None and run.same_file:
        notes.append("both sides are the same file")
    if run is not None:
        notes.extend(check.note for check in run.aggregate.values() if check.note)
    summary: dict[str, Any] = {
        "counts": result.counts(),
        "join": {
            "old_key": result.old_key,
            "new_key": result.new_key,
            "old_key_reason": result.old_key_reason,
            "new_key_reason": result.new_key_reason,
            "old_prefix_stripped": result.old_prefix_stripped,
            "new_prefix_stripped": result.new_prefix_stripped,
            "keyed_by_taskset": result.keyed_by_taskset,
        },
        "rows": {
            "old": result.old_rows,
            "new": result.new_rows,
            "old_masked": result.old_masked_rows,
            "new_masked": result.new_masked_rows,
        },
        "compared": result.compared,
        "nothing_compared": nothing_compared(result),
        "notes": notes,
        "paired": paired_dict(section),
        "tasks": [_task_dict(t, p) for t, p in zip(result.tasks, section.p_values)],
    }
    if margin is not None:
        summary["aggregate"] = aggregate_dict(equivalence(section.stats, margin))
    if run is not None:
        summary["files"] = {
            "old": run.old_file,
            "new": run.new_file,
            "old_sidecar": run.old_sidecar,
            "new_sidecar": run.new_sidecar,
        }
        summary["aggregate_metrics"] = {
            side: check.as_dict() if (check := run.aggregate.get(side)) else None for side in ("old", "new")
        }
        summary["run"] = {
            "selected": run.selected,
            "verdicts_changed_by_hook": run.verdicts_changed,
            "outcomes": dict(run.outcomes),
        }
    return summary


def _capped(labels: list[str], cap: int = LIST_CAP) -> str:
    shown = ", ".join(labels[:cap])
    if len(labels) > cap:
        shown += f", ... and {len(labels) - cap} more (see --parity-json)"
    return shown


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _side_line(name: str, summary: dict[str, Any]) -> str:
    files = summary.get("files") or {}
    line = f"{name}: {files.get(name, name)}"
    if files.get(f"{name}_sidecar"):
        line += f" (+ sidecar {os.path.basename(files[f'{name}_sidecar'])})"
    tasks = sum(1 for task in summary["tasks"] if task[name] is not None)
    rows, masked = summary["rows"][name], summary["rows"][f"{name}_masked"]
    line += f": {_plural(tasks, 'task')}, {_plural(rows, 'row')} ({masked} masked), key {summary['join'][f'{name}_key']}"
    reason = summary["join"].get(f"{name}_key_reason")
    if reason:
        line += f" ({reason})"
    prefix = summary["join"][f"{name}_prefix_stripped"]
    if prefix:
        line += f", prefix '{prefix}' stripped"
    return line


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The `rollout parity` terminal section, line by line, rendered from :func:`summary_dict`."""
    counts = summary["counts"]
    lines = [_side_line("old", summary), _side_line("new", summary)]
    for name, check in (summary.get("aggregate_metrics") or {}).items():
        if check and check["recorded_mean"] is not None:
            lines.append(
                f"{name} aggregate metrics: mean reward {check['recorded_mean']!r} recorded, "
                f"{check['computed_mean']!r} from {_plural(check['rows'], 'row')}"
                + (f" (agent {check['agent']})" if check["agent"] else "")
            )
    for note in summary["notes"]:
        lines.append(f"note: {note if len(note) <= 400 else note[:400] + ' ... (see --parity-json)'}")
    table = [
        ["identical", counts["identical"], ""],
        ["flipped", counts["flipped"], f"old wins {counts['flipped_old_win']}, new wins {counts['flipped_new_win']}"],
        ["flipped_agent_error", counts["flipped_agent_error"], "rerun candidates"],
        ["masked", counts["masked"], f"old side {counts['masked_old']}, new side {counts['masked_new']}"],
        ["missing", counts["missing"], f"old only {counts['missing_old_only']}, new only {counts['missing_new_only']}"],
        ["tasks", counts["tasks"], ""],
    ]
    lines.append("")
    lines.extend(tabulate(table, headers=["category", "tasks", "breakdown"], tablefmt="simple").splitlines())
    lines.append("")
    for category in ("flipped", "flipped_agent_error", "masked", "missing"):
        labels = [task["task"] for task in summary["tasks"] if task["category"] == category]
        if labels:
            lines.append(f"{category}: {_capped(labels)}")
    tested = sum(1 for task in summary["tasks"] if task.get("p_value") is not None)
    lines.extend(paired_lines(summary["paired"], summary.get("aggregate"), tested))
    run = summary.get("run") or {}
    if run.get("selected") is not None and run["selected"] != counts["tasks"]:
        lines.append(f"selected: {run['selected']} of {counts['tasks']} parity items ran")
    if run.get("verdicts_changed_by_hook"):
        lines.append(f"pytest_parity_verdict hooks changed {run['verdicts_changed_by_hook']} verdict(s)")
    if summary["nothing_compared"]:
        lines.append(f"NOTHING COMPARED: {summary['nothing_compared']}")
    return lines


def _mode_for(path: Path) -> int:
    """The permissions a plain `open(path, "w")` would give: the existing file's, else 0666 & ~umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(data: dict[str, Any]) -> str:
    """The summary as UTF-8-safe JSON: raw text, but a lone surrogate (no UTF-8 form) as its escape.

    A lone surrogate can only sit inside a JSON string, where `\\udXXXX` reads back as the same text.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write the summary through a temporary file beside it, so a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json_text(data))
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

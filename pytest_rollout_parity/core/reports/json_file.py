"""The JSON rendering of the summary (the machine-readable summary file), and writing it atomically.

The keys are the file's documented layout; the API's :func:`~..api.summary_dict` is the public way
to get the same dict from a result in memory.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

from ..escaping import utf8_safe
from ..judging.coverage_file import Inventory
from ..judging.hook_verdict import Verdict
from ..judging.metrics_file import AggregateCheck
from ..statistics.left_out import LeftOut
from ..statistics.plan import Plan
from .summary import Paired, Part, SideSummary, Summary, TaskSummary


def _side(side: Optional[SideSummary]) -> Optional[dict[str, Any]]:
    if side is None:
        return None
    data = asdict(side)
    data["reward_range"] = list(side.reward_range) if side.reward_range is not None else None
    return data


def verdict_dict(verdict: Optional[Verdict]) -> Optional[dict[str, str]]:
    """`"hook_verdict"`: the outcome a hook or the known-flips list gave a task, why, and who gave it."""
    return None if verdict is None else {"outcome": verdict.outcome, "reason": verdict.text, "source": verdict.source}


def _task(task: TaskSummary, in_run: bool) -> dict[str, Any]:
    return {
        "task": task.task,
        "category": task.category,
        "winner": task.winner,
        "old": _side(task.old),
        "new": _side(task.new),
        "p_value": task.p_value,
        "adjusted_p": task.adjusted_p,
        "outcome": task.outcome,
        "hook_verdict": verdict_dict(task.hook_verdict),
        "ran_here": (task.item_outcome is not None) if in_run else None,
        "item_outcome": task.item_outcome,
        "evidence": task.evidence,
        "verifier_disagreements": task.verifier_disagreements,
    }


def _part(part: Optional[Part]) -> Optional[dict[str, Any]]:
    """`"part"`: what of the whole file ran here, tasks and gate-level items apart; None: --collect-only."""
    if part is None:
        return None
    return {
        "partial": part.partial,
        "items": part.items,
        "items_ran": part.items_ran,
        "tasks": part.tasks,
        "tasks_ran": part.tasks_ran,
        "gate_items_ran": list(part.gate_ran),
        "group": asdict(part.group) if part.group is not None else None,
        "checks": part.checks,
        "checks_ran": part.checks_ran,
    }


def _left_out(left: LeftOut) -> dict[str, Any]:
    return {
        "tasks": left.tasks,
        "old": left.old,
        "new": left.new,
        "old_share": left.share("old"),
        "new_share": left.share("new"),
        "range_tasks": left.range_tasks,
        "reward_range": list(left.reward_range),
        "delta_range": list(left.delta_range) if left.delta_range is not None else None,
        "old_rows": left.old_rows,
        "new_rows": left.new_rows,
    }


def _paired(paired: Paired) -> dict[str, Any]:
    """`"paired"`: n, means, delta, its 95% interval and degrees of freedom, the clustering, the sign
    test, the 2x2 table, what the figures leave out."""
    return {
        "n": paired.n,
        "old_mean": paired.old_mean,
        "new_mean": paired.new_mean,
        "delta": paired.delta,
        "ci95": list(paired.ci95) if paired.ci95 is not None else None,
        "df": paired.df,
        "clustered_by": paired.clustered_by,
        "sign_test": asdict(paired.sign_test) if paired.sign_test is not None else None,
        "table": asdict(paired.table) if paired.table is not None else None,
        "absent": paired.absent,
        "left_out": _left_out(paired.left_out),
    }


def _plan(plan: Optional[Plan]) -> Optional[dict[str, Any]]:
    """`"plan"`: what would decide the run (null when the run was decided and no plan was asked for)."""
    return None if plan is None else asdict(plan)


def _check(check: Optional[AggregateCheck]) -> Optional[dict[str, Any]]:
    return None if check is None else asdict(check)


def _inventory(inventory: Optional[Inventory]) -> Optional[dict[str, Any]]:
    if inventory is None:
        return None
    return {
        "files": list(inventory.files),
        **inventory.counts,
        "gate_measured": inventory.gate_measured,
        "unfinished": inventory.unfinished,
    }


def json_dict(summary: Summary) -> dict[str, Any]:
    """The summary as the JSON file holds it."""
    data: dict[str, Any] = {
        "verdict": summary.verdict,
        "decided_by": [asdict(decider) for decider in summary.decision.decided_by],
        "task_outcomes": summary.outcome_counts(),
        "accepted_flips": [asdict(accepted) for accepted in summary.accepted],
        "counts": asdict(summary.counts),
        "join": asdict(summary.join),
        "rows": asdict(summary.rows),
        "conditions": {"old": summary.conditions[0], "new": summary.conditions[1]},
        "compared": summary.compared,
        "nothing_compared": summary.nothing_compared,
        "notes": list(summary.notes),
        "copies": summary.copies,
        "paired": _paired(summary.paired),
        "tasks": [_task(task, summary.run is not None) for task in summary.tasks],
        "plan": _plan(summary.plan),
    }
    if summary.equivalence is not None:
        decision = summary.equivalence
        data["aggregate"] = {
            "margin": decision.margin,
            "lower_bound": decision.lower_bound,
            "upper_bound": decision.upper_bound,
            "passed": decision.passed,
        }
    if summary.coverage is not None:
        data["coverage"] = asdict(summary.coverage)
    if summary.flip_tests is not None:
        data["flip_tests"] = asdict(summary.flip_tests)
        data["failing_flips"] = summary.failing_flips
    if summary.files is not None:
        data["files"] = asdict(summary.files)
    if summary.aggregate_metrics is not None:
        metrics = summary.aggregate_metrics
        data["aggregate_metrics"] = {"old": _check(metrics.old), "new": _check(metrics.new)}
    if summary.inventory is not None:
        data["inventory"] = {side: _inventory(summary.inventory.side(side)) for side in ("old", "new")}
    if summary.run is not None:
        data["run"] = {
            "selected": summary.run.selected,
            "verdicts_changed_by_hook": summary.run.verdicts_changed_by_hook,
            "outcomes": dict(summary.run.outcomes),
            "known_flips": summary.run.known_flips,
            "gate_items": list(summary.run.gate_items),
            "part": _part(summary.run.part),
            "gate": [
                {"item": name, "ran_here": outcome is not None, "item_outcome": outcome}
                for name, outcome in summary.run.gate_outcomes
            ],
            "inputs": dict(summary.run.inputs),
            "options": dict(summary.run.options),
            "checks": [asdict(check) for check in summary.checks],
        }
    return data


def _mode_for(path: Path) -> int:
    """The permissions a plain `open(path, "w")` would give: the existing file's, else 0666 & ~umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def json_text(data: dict[str, Any]) -> str:
    """The summary as UTF-8-safe JSON: raw text, but a lone surrogate (no UTF-8 form) as its escape.

    A lone surrogate can only sit inside a JSON string, where `\\udXXXX` reads back as the same text.
    """
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return utf8_safe(text)


def write_json(path: Path, summary: Summary) -> None:
    """Write the summary through a temporary file beside it, so a reader never sees half a file."""
    write_text(path, json_text(json_dict(summary)) + "\n")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` through a temporary file beside ``path``, so a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

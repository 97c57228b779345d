"""The `rollout parity` terminal section: lines rendered from the :class:`Summary`."""

from __future__ import annotations

import os

from tabulate import tabulate

from .model import Category, Side
from .paired_report import paired_lines
from .summary import Summary

LIST_CAP = 10  # task labels listed per category; the JSON file has them all
NOTE_CAP = 400  # characters of a note shown


def _capped(labels: list[str], cap: int = LIST_CAP) -> str:
    shown = ", ".join(labels[:cap])
    if len(labels) > cap:
        shown += f", ... and {len(labels) - cap} more (see --parity-json)"
    return shown


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _side_line(side: Side, summary: Summary) -> str:
    files = summary.files
    line = f"{side}: {files.file(side) if files else side}"
    sidecar = files.sidecar(side) if files else None
    if sidecar:
        line += f" (+ sidecar {os.path.basename(sidecar)})"
    rows = summary.rows
    line += (f": {_plural(summary.side_tasks(side), 'task')}, {_plural(rows.total(side), 'row')} "
             f"({rows.masked(side)} masked), key {summary.join.key(side)}")
    reason = summary.join.key_reason(side)
    if reason:
        line += f" ({reason})"
    prefix = summary.join.prefix_stripped(side)
    if prefix:
        line += f", prefix '{prefix}' stripped"
    return line


def _aggregate_metrics_lines(summary: Summary) -> list[str]:
    """Each side's recorded mean reward beside the one from its rows, when the run recorded one."""
    metrics = summary.aggregate_metrics
    lines = []
    sides: tuple[Side, ...] = ("old", "new")
    for side in sides:
        check = metrics.side(side) if metrics is not None else None
        if check is not None and check.recorded_mean is not None:
            lines.append(
                f"{side} aggregate metrics: mean reward {check.recorded_mean!r} recorded, "
                f"{check.computed_mean!r} from {_plural(check.rows, 'row')}"
                + (f" (agent {check.agent})" if check.agent else "")
            )
    return lines


def _hook_verdict_lines(summary: Summary) -> list[str]:
    """Each verdict a hook changed: task, category, the outcome it was given, the reason's first line."""
    changed = summary.hook_verdicts()
    run = summary.run
    count = max(len(changed), run.verdicts_changed_by_hook if run is not None else 0)
    if not count:
        return []
    lines = [f"pytest_parity_verdict hooks changed {count} verdict(s):"]
    for task in changed[:LIST_CAP]:
        verdict = task.hook_verdict
        if verdict is not None:
            reason = verdict.reason.split("\n", 1)[0] or "(no reason given)"
            lines.append(f"    {task.task} ({task.category}): {verdict.outcome}: {reason}")
    if len(changed) > LIST_CAP:
        lines.append(f"    ... and {len(changed) - LIST_CAP} more (see --parity-json)")
    return lines


def verdict_line(summary: Summary) -> str:
    """The one line a reviewer acts on: what regressed, improved, needs a rerun, was not compared.

    `regressed` and `improved` are the new side's view (a flip the old side wins is a regression).
    """
    counts = summary.counts
    if summary.nothing_compared is not None:
        return (f"parity: nothing compared in {_plural(counts.tasks, 'task')} "
                f"({counts.masked} masked, {counts.missing} missing; see below)")
    differs = counts.flipped or counts.flipped_agent_error or counts.masked or counts.missing
    if not differs:
        line = f"parity: no difference in {summary.compared} compared tasks"
    else:
        parts = [f"{_plural(counts.flipped_old_win, 'task')} regressed", f"{counts.flipped_new_win} improved"]
        if counts.flipped_agent_error:
            parts.append(f"{_plural(counts.flipped_agent_error, 'rerun candidate')} (agent errors)")
        if counts.masked:
            parts.append(f"{counts.masked} masked")
        if counts.missing:
            parts.append(f"{counts.missing} missing")
        line = "parity: " + ", ".join(parts) + f"; {counts.identical} identical"
    decision = summary.aggregate
    if decision is not None and decision.lower_bound is not None:
        shown = "within" if decision.passed else "NOT shown within"
        line += f"; mean difference {shown} the margin {decision.margin:g}"
    return line


def _uncompared_lines(summary: Summary, category: Category) -> list[str]:
    """Each masked or missing task with its side and reason, capped; the JSON has them all."""
    tasks = [task for task in summary.tasks if task.category == category]
    if not tasks:
        return []
    lines = [f"{category} ({len(tasks)}):"]
    for task in tasks[:LIST_CAP]:
        if category == "missing":
            present = "old" if task.new is None else "new"
            lines.append(f"    {task.task}: only in the {present} file")
            continue
        reasons = [f"{side} side: {side_summary.masked}" for side in ("old", "new")
                   if (side_summary := task.side(side)) is not None and side_summary.masked]
        lines.append(f"    {task.task}: {'; '.join(reasons)}")
    if len(tasks) > LIST_CAP:
        lines.append(f"    ... and {len(tasks) - LIST_CAP} more (see --parity-json)")
    return lines


LISTED: tuple[Category, ...] = ("flipped", "flipped_agent_error")


def summary_lines(summary: Summary) -> list[str]:
    """The section, line by line: the verdict, files, notes, the category table, labels, run figures."""
    counts = summary.counts
    lines = [verdict_line(summary), _side_line("old", summary), _side_line("new", summary)]
    lines.extend(_aggregate_metrics_lines(summary))
    for note in summary.notes:
        lines.append(f"note: {note if len(note) <= NOTE_CAP else note[:NOTE_CAP] + ' ... (see --parity-json)'}")
    table = [
        ["identical", counts.identical, ""],
        ["flipped", counts.flipped,
         f"new regressed {counts.flipped_old_win}, new improved {counts.flipped_new_win}"],
        ["flipped_agent_error", counts.flipped_agent_error, "rerun candidates"],
        ["masked", counts.masked, f"old side {counts.masked_old}, new side {counts.masked_new}"],
        ["missing", counts.missing, f"old only {counts.missing_old_only}, new only {counts.missing_new_only}"],
        ["tasks", counts.tasks, ""],
    ]
    lines.append("")
    lines.extend(tabulate(table, headers=["category", "tasks", "breakdown"], tablefmt="simple").splitlines())
    lines.append("")
    for category in LISTED:
        labels = summary.labels(category)
        if labels:
            lines.append(f"{category}: {_capped(labels)}")
    lines.extend(_uncompared_lines(summary, "masked"))
    lines.extend(_uncompared_lines(summary, "missing"))
    lines.extend(paired_lines(summary.paired, summary.aggregate))
    run = summary.run
    if run is not None and run.selected is not None and run.selected != counts.tasks:
        lines.append(f"selected: {run.selected} of {counts.tasks} parity items ran")
    lines.extend(_hook_verdict_lines(summary))
    if summary.nothing_compared:
        lines.append(f"NOTHING COMPARED: {summary.nothing_compared}")
    return lines

"""The `rollout parity` terminal section: lines rendered from the :class:`Summary`."""

from __future__ import annotations

import os

from tabulate import tabulate

from .display import terminal_line
from .model import Category, Side
from .paired_report import paired_lines
from .summary import Summary
from .verdict_words import category_rows, hook_changes, hook_heading, plural, verdict_words

LIST_CAP = 10  # task labels listed per category; the JSON file has them all
NOTE_CAP = 400  # characters of a note shown


def _capped(labels: list[str], cap: int = LIST_CAP) -> str:
    shown = ", ".join(labels[:cap])
    if len(labels) > cap:
        shown += f", ... and {len(labels) - cap} more (see --parity-json)"
    return shown


def _side_line(side: Side, summary: Summary) -> str:
    files = summary.files
    line = f"{side}: {files.file(side) if files else side}"
    sidecar = files.sidecar(side) if files else None
    if sidecar:
        line += f" (+ sidecar {os.path.basename(sidecar)})"
    rows = summary.rows
    line += (f": {plural(summary.side_tasks(side), 'task')}, {plural(rows.total(side), 'row')} "
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
                f"{check.computed_mean!r} from {plural(check.rows, 'row')}"
                + (f" (agent {check.agent})" if check.agent else "")
            )
    return lines


def _hook_verdict_lines(summary: Summary) -> list[str]:
    """Each verdict a hook changed: task, category, the outcome it was given, the reason's first line."""
    count, changes = hook_changes(summary)
    if not count:
        return []
    lines = [f"{hook_heading(count)}:"]
    lines.extend(f"    {change.task} ({change.category}): {change.outcome}: {change.reason}"
                 for change in changes[:LIST_CAP])
    if len(changes) > LIST_CAP:
        lines.append(f"    ... and {len(changes) - LIST_CAP} more (see --parity-json)")
    return lines


def verdict_line(summary: Summary) -> str:
    """The one line a reviewer acts on: what regressed, improved, needs a rerun, was not compared."""
    return f"parity: {verdict_words(summary)}"


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
    table = category_rows(summary)
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
    # labels, reasons and notes come from the rows: each line stays one line, and none is a workflow command
    return [terminal_line(line) for line in lines]

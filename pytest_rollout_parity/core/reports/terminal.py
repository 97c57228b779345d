"""The `rollout parity` terminal section: lines rendered from the :class:`Summary`."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Optional

from tabulate import tabulate

from ..escaping import terminal_line
from ..identity.item_names import clipped
from ..model import Category, Side
from .paired_lines import paired_lines
from .summary import Summary
from .wording import (
    accepted_words,
    capped,
    category_rows,
    coverage_line,
    hook_changes,
    hook_heading,
    part_of,
    part_outcome,
    partial_words,
    plural,
    side_line,
    uncompared,
    verdict_head,
    verdict_words,
)

LIST_CAP = 10  # task labels listed per category; the JSON file has them all
MORE = "    ... and {} more (see --parity-json)"
NOTE_CAP = 400  # characters of a note shown


def _capped(labels: list[str], cap: int = LIST_CAP) -> str:
    shown = ", ".join(labels[:cap])
    if len(labels) > cap:
        shown += f", ... and {len(labels) - cap} more (see --parity-json)"
    return shown


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
    lines = [f"{hook_heading(summary, count)}:"]
    lines.extend(
        capped(
            changes,
            LIST_CAP,
            lambda change: f"    {change.task} ({change.category}): {change.outcome}: {change.reason}",
            MORE,
        )
    )
    return lines


def verdict_line(summary: Summary) -> str:
    """The one line a reviewer acts on: the verdict, then what regressed, improved, needs a rerun, was not compared.

    A part of the whole file (a selection, a splitter group) opens `partial:` with its own outcome,
    then gives the whole file's verdict as the file's.
    """
    part = part_of(summary)
    if part is not None:
        return f"partial: {part_outcome(summary, part)}; {partial_words(summary, part)}{accepted_words(summary)}"
    return f"parity: {verdict_head(summary)}: {verdict_words(summary)}{accepted_words(summary)}"


def _uncompared_lines(summary: Summary, category: Category) -> list[str]:
    """Each masked or missing task with its side and reason, capped; the JSON has them all."""
    reasons = uncompared(summary, category)
    if not reasons:
        return []
    return [f"{category} ({len(reasons)}):", *capped(reasons, LIST_CAP, lambda item: f"    {item[0]}: {item[1]}", MORE)]


LISTED: tuple[Category, ...] = ("flipped", "flipped_agent_error")


def summary_lines(summary: Summary) -> list[str]:
    """The section, line by line: the verdict, files, notes, the category table, labels, run figures."""
    counts = summary.counts
    lines = [verdict_line(summary), side_line(summary, "old"), side_line(summary, "new")]
    lines.extend(_aggregate_metrics_lines(summary))
    lines.extend(line for side in ("old", "new") if (line := coverage_line(summary, side)) is not None)
    for note in summary.notes:
        lines.append(f"note: {clipped(note, NOTE_CAP)}")
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
    lines.extend(paired_lines(summary.paired, summary.equivalence, summary.flip_tests))
    run = summary.run
    if run is not None and run.selected is not None and run.selected != run.items(counts.tasks):
        lines.append(f"selected: {run.selected} of {run.items(counts.tasks)} parity items ran")
    lines.extend(_hook_verdict_lines(summary))
    failed_checks = [check.nodeid for check in summary.checks if check.outcome == "failed"]
    if failed_checks:
        lines.append(f"your checks failed ({len(failed_checks)}): {_capped(failed_checks)}")
    if summary.nothing_compared:
        lines.append(f"NOTHING COMPARED: {summary.nothing_compared}")
    if summary.plan is not None:
        lines.extend(summary.plan.lines())
    # labels, reasons and notes come from the rows: each line stays one line, and none is a workflow command
    return [terminal_line(line) for line in lines]


#: how much further a wrapped line's continuation is indented than the line
CONTINUED = "    "


def fit(lines: Iterable[str], width: Optional[int]) -> list[str]:
    """``lines`` as they fit a terminal ``width`` columns wide (None: as they are). A longer line is
    wrapped at spaces, its continuation indented four more than the line (a quoted `| ` line's under
    its bar), and a word longer than the room is cut across lines: nothing is lost."""
    if width is None:
        return list(lines)
    fitted = []
    for line in lines:
        if len(line) <= width:
            fitted.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        more = indent + ("|" + CONTINUED if body.startswith("| ") else CONTINUED)
        if len(more) > width // 2:  # a deep indent would leave no room: continue at the margin
            more = ""
        fitted.extend(
            textwrap.wrap(line, width, subsequent_indent=more, break_on_hyphens=False, replace_whitespace=False)
        )
    return fitted

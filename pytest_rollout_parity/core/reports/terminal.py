"""The `rollout parity` terminal section: lines rendered from the :class:`Summary`."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Optional

from tabulate import tabulate

from ..escaping import terminal_line, visible
from ..identity.item_names import clipped, listed
from .summary import FLIPS, Summary
from .wording import MORE, capped, category_rows, listings, paired_lines, plural, side_lines, verdict

LIST_CAP = 10  # entries listed per list; the JSON file has them all
NOTE_CAP = 400  # characters of a note (or a reason) shown


def summary_lines(summary: Summary) -> list[str]:
    """The section, line by line: first the one line a reviewer acts on, the verdict and what to do."""
    head, rest = verdict(summary)
    lines = [f"{head}; {rest}" if head.startswith("partial:") else f"parity: {head}: {rest}", *side_lines(summary)]
    metrics = summary.aggregate_metrics
    for side in ("old", "new"):
        check = metrics.side(side) if metrics is not None else None
        if check is not None and check.recorded_mean is not None:
            lines.append(
                f"{side} aggregate metrics: mean reward {check.recorded_mean!r} recorded, "
                f"{check.computed_mean!r} from {plural(check.rows, 'row')}"
                + (f" (agent {check.agent})" if check.agent else "")
            )
    table = tabulate(category_rows(summary), headers=["category", "tasks", "breakdown"], tablefmt="simple")
    lines.extend(["", *table.splitlines(), ""])
    lines.extend(
        f"{category}: {listed(labels, LIST_CAP)}" for category in FLIPS if (labels := summary.labels(category))
    )
    for heading, entries in listings(summary):
        names = [name for name, _ in entries]
        if "" in names:  # the notes: a line each
            lines.extend(capped(entries, LIST_CAP, lambda entry: f"note: {clipped(entry[1], NOTE_CAP)}"))
        elif entries and not any(words for _, words in entries):  # names alone: on the heading's line
            lines.append(f"{heading}: {listed(names, LIST_CAP)}")
        else:
            lines.append(f"{heading}:")
            lines.extend(capped(entries, LIST_CAP, lambda e: f"    {e[0]}{clipped(e[1], NOTE_CAP)}", f"    {MORE}"))
    lines.extend(paired_lines(summary))
    run = summary.run
    if run is not None and run.part is not None and run.selected != run.part.items:
        lines.append(f"selected: {run.selected} of {run.part.items} parity items ran")
    if summary.nothing_compared:
        lines.append(f"NOTHING COMPARED: {summary.nothing_compared}")
    if summary.plan is not None:
        lines.extend(summary.plan.lines())
    # labels, reasons and notes come from the rows: each line stays one line, none is a workflow
    # command, and none but the first reads as the verdict line
    return [visible(lines[0]), *(terminal_line(line) for line in lines[1:])]


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
        more = indent + ("|    " if body.startswith("| ") else "    ")
        if len(more) > width // 2:  # a deep indent would leave no room: continue at the margin
            more = ""
        fitted.extend(
            textwrap.wrap(line, width, subsequent_indent=more, break_on_hyphens=False, replace_whitespace=False)
        )
    return fitted

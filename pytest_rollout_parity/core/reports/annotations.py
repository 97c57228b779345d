"""GitHub Actions workflow commands for the flips: `::error title=<task> flipped::new regressed: old=1.0 new=0.0`.

GitHub reads a workflow command from one stdout line, so the data escapes `%`, CR and LF, and a
property value (the title) also `:` and `,`, which would end it early. GitHub shows at most 10
error annotations per step; the lines are capped there and the rest counted.
"""

from __future__ import annotations

from collections.abc import Collection

from ..escaping import visible
from .markdown import FLIPS, flip_text, utf8_safe
from .summary import Summary

ANNOTATION_CAP = 10  # error annotations GitHub shows per step


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as data, and `:` and `,` escaped too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation_lines(summary: Summary, failed: Collection[str], cap: int = ANNOTATION_CAP) -> list[str]:
    """One `::error` line per flip whose item failed (task order), capped; then a count of the rest."""
    flips = [task for task in summary.tasks if task.category in FLIPS and task.task in failed]
    lines = []
    for task in flips[:cap]:
        kind = "flipped (agent error)" if task.category == "flipped_agent_error" else "flipped"
        title = escape_property(f"{visible(task.task)} {kind}")  # no raw control character reaches the log
        lines.append(utf8_safe(f"::error title={title}::{escape_data(flip_text(task))}"))
    if len(flips) > cap:
        lines.append(f"{len(flips) - cap} more failed flip(s) not annotated: GitHub shows at most {cap} error "
                     "annotations per step; the job summary and --parity-json list them all")
    return lines

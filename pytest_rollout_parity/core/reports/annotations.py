"""GitHub Actions workflow commands: `::error title=<task> failed::new regressed: old=1.0 new=0.0`.

GitHub reads a workflow command from one stdout line, so the data escapes `%`, CR and LF, and a
property value (the title) also `:` and `,`, which would end it early.
"""

from __future__ import annotations

from collections.abc import Collection

from ..escaping import utf8_safe, visible
from ..judging.completeness import COVERAGE_NAME
from ..statistics.margin import EQUIVALENCE_ITEM
from .summary import Summary
from .wording import flip_line, paired_rows

ANNOTATION_CAP = 10  # error annotations GitHub shows per step, at most


def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as data, and `:` and `,` escaped too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, title: str, message: str) -> str:
    """One workflow command line; no raw control character of the data reaches the log."""
    return utf8_safe(f"::{level} title={escape_property(visible(title))}::{escape_data(message)}")


def annotation_lines(summary: Summary, failed: Collection[str]) -> list[str]:
    """The run's annotations, each titled with its outcome: one `::error` per flip whose item failed,
    one `::notice` per flip within noise (no regression shown) and one `::warning` per flip with an
    agent error (each kind capped, the rest counted), then the gate-level items that ran (an error
    when they fail, a notice when they pass)."""
    flips = summary.flips
    passed = [task for task in flips if task.task not in failed]
    lines: list[str] = []
    for level, title, shown in (
        ("error", "", [task for task in flips if task.task in failed]),
        ("notice", "within noise", [task for task in passed if task.outcome == "within_noise"]),
        ("warning", "agent_error", [task for task in passed if task.outcome == "agent_error"]),
    ):
        lines.extend(
            _annotation(level, f"{task.task} {title or task.outcome}", flip_line(task))
            for task in shown[:ANNOTATION_CAP]
        )
        if len(shown) > ANNOTATION_CAP:
            lines.append(
                f"{len(shown) - ANNOTATION_CAP} more {title or 'failed'} flip(s) not annotated: GitHub shows at "
                f"most {ANNOTATION_CAP} {level}s per step; the job summary and --parity-json list them all"
            )
    items = [item.item for item in summary.run.gate] if summary.run is not None else []
    decision = summary.equivalence
    if EQUIVALENCE_ITEM in items and decision is not None:
        level, outcome = ("notice", "passed") if decision.passed else ("error", "failed")
        # the statistics' last row is the margin's decision, in the words every report gives it
        lines.append(_annotation(level, f"{EQUIVALENCE_ITEM} {outcome}", paired_rows(summary)[-1][1]))
    coverage = summary.coverage
    if COVERAGE_NAME in items and coverage is not None:
        level, outcome = ("notice", "passed") if coverage.passed else ("error", "failed")
        lines.append(_annotation(level, f"{COVERAGE_NAME} {outcome}", coverage.message.split("\n", 1)[0]))
    return lines

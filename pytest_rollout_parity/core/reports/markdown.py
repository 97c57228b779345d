"""The summary as Markdown, for a GitHub Actions job page (`GITHUB_STEP_SUMMARY`) or a Markdown file.

A pure function of the :class:`Summary` (with the flips' report texts the run collected), so it says
what the terminal and the JSON file say. Text from the data is backslash-escaped in Markdown lines
and escaped for HTML inside HTML blocks (a flip's `<details>`), so the raw file reads well too. Everything that grows with the data is
capped, because GitHub takes at most 1 MiB of summary per step: the flips listed, each flip's text,
each list of labels, each note; what is left out is counted and pointed to the JSON file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Optional

from ..escaping import html_text, markdown_text, utf8_safe, visible
from ..identity.item_names import clipped
from ..model import Category
from .paired_lines import paired_lines
from .summary import SideSummary, Summary, TaskSummary
from .wording import (
    accepted_words,
    capped,
    category_rows,
    coverage_line,
    flip_line,
    hook_changes,
    hook_heading,
    part_of,
    part_outcome,
    partial_words,
    rows_note,
    side_line,
    uncompared,
    verdict_head,
    verdict_words,
)

FLIP_CAP = 20  # flips listed, each with its text folded
TEXT_CAP = 4000  # characters of one flip's text
LIST_CAP = 20  # labels listed per category
MORE = "- ... and {} more (see `--parity-json`)"
NOTE_CAP = 1000  # characters of one note
BUDGET = 1_000_000  # bytes; GitHub refuses a step summary above 1 MiB

FLIPS: tuple[Category, ...] = ("flipped", "flipped_agent_error")
#: where the pictures are: GitHub's Markdown cannot draw a scatter of thousands of tasks
PICTURES = (
    "Pictures (each task's old against new mean reward, the difference's interval against the margin): "
    "the HTML report, `--parity-html=FILE`."
)


def _code(label: str) -> str:
    """A task label as inline code in a Markdown line, backslash-escaped: no character of a label can break the page."""
    return f"<code>{markdown_text(label)}</code>"


def _html_code(label: str) -> str:
    """A task label as inline code inside an HTML block (a `<summary>`), where Markdown is not read."""
    return f"<code>{html_text(label)}</code>"


def _counts(side: Optional[SideSummary]) -> tuple[int, int]:
    return (side.reward_rows, side.rows) if side is not None else (0, 0)


def flip_text(task: TaskSummary) -> str:
    """A flip in the crash line's words: `new regressed: old=1.0 new=0.0 (means of 1 vs 2 rows)`."""
    old, new = task.old, task.new
    extra = rows_note(_counts(old), _counts(new)) if old is not None and new is not None else None
    return flip_line(task.winner, old.reward if old else None, new.reward if new else None, extra)


def verdict(
    summary: Summary, exit_status: Optional[int] = None, quote: Callable[[str], str] = lambda text: text
) -> tuple[str, str]:
    """The verdict (`PASS`, `FAIL`, `INCONCLUSIVE`) and the tasks by what to do about them
    (``quote`` marks up a file's name in them); a part of the whole file gives its own verdict and
    outcome (`partial: 31 of 92 items ran here, 2 failed`) instead, and the whole file's verdict after it."""
    part = part_of(summary)
    if part is not None:
        rest = partial_words(summary, part, quote) + accepted_words(summary, quote)
        if exit_status is not None:
            rest += f" (exit status {exit_status})"
        return f"partial: {part_outcome(summary, part)}", rest
    head = verdict_head(summary)
    rest = verdict_words(summary, quote) + accepted_words(summary, quote)
    if exit_status is not None:
        rest += f" (exit status {exit_status})"
    return head, rest


def verdict_line(summary: Summary, exit_status: Optional[int] = None) -> str:
    """One Markdown line a reviewer can act on: the verdict, then the tasks by what to do about them."""
    head, rest = verdict(summary, exit_status, _code)
    if head.startswith("partial:"):
        return f"**{head}** (rollout parity): {rest}"
    return f"**rollout parity: {head}**: {rest}"


def _table(summary: Summary) -> list[str]:
    lines = ["| category | tasks | breakdown |", "| --- | ---: | --- |"]
    lines.extend(f"| {name} | {count} | {breakdown} |" for name, count, breakdown in category_rows(summary))
    return lines


def _pre(text: str) -> str:
    """A `<pre>` block's text (an HTML block: Markdown does not read it), escaped for HTML line by line,
    controls shown as escapes."""
    return html_text(text, lines=True)


def _capped_text(text: str) -> str:
    if len(text) <= TEXT_CAP:
        return text
    return text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters: see the terminal or JUnit report)"


def _flip(task: TaskSummary, text: Optional[str], with_text: bool) -> list[str]:
    """A flip's headline (its outcome first, then its rewards), with its text folded under it."""
    rest = flip_text(task) + (", agent error: rerun" if task.category == "flipped_agent_error" else "")
    if not with_text or not text:
        head = f"{_code(task.task)}: **{task.outcome}**: {markdown_text(rest)}"
        if task.excerpt:
            head += f" (prompt: {markdown_text(task.excerpt)})"
        return [f"- {head}"]
    head = f"{_html_code(task.task)}: <strong>{task.outcome}</strong>: {html_text(rest)}"
    if task.excerpt:
        head += f" <em>{html_text(task.excerpt)}</em>"
    return ["<details>", f"<summary>{head}</summary>", "", f"<pre>{_pre(_capped_text(text))}</pre>", "", "</details>"]


def _flips_title(flips: list[TaskSummary]) -> str:
    """`Flips (3) and rerun candidates (2)`: the same numbers as the table's two rows."""
    counted = sum(task.category == "flipped" for task in flips)
    parts = [f"flips ({counted})"] if counted else []
    if len(flips) > counted:
        parts.append(f"rerun candidates ({len(flips) - counted})")
    title = " and ".join(parts)
    return title[0].upper() + title[1:]


def _flips(summary: Summary, texts: Mapping[str, str], with_text: bool) -> list[str]:
    flips = [task for task in summary.tasks if task.category in FLIPS]
    if not flips:
        return []
    lines = ["", f"### {_flips_title(flips)}", ""]
    for task in flips[:FLIP_CAP]:
        lines.extend(_flip(task, texts.get(task.task), with_text))
    if len(flips) > FLIP_CAP:
        lines.extend(["", f"... and {len(flips) - FLIP_CAP} more flips: see the JSON summary (`--parity-json`)."])
    return lines


def _uncompared(summary: Summary, category: Category) -> list[str]:
    """Each masked or missing task with why it was not compared, capped; the JSON has them all."""
    reasons = uncompared(summary, category)
    if not reasons:
        return []
    return [
        f"- **{category}** ({len(reasons)}):",
        *capped(reasons, LIST_CAP, lambda item: f"  - {_code(item[0])}: {markdown_text(item[1])}", f"  {MORE}"),
    ]


def _capped_note(note: str) -> str:
    """A note or reason, cut at :data:`NOTE_CAP` at a word, escaped for Markdown and HTML on one line."""
    return markdown_text(clipped(note, NOTE_CAP))


def _hook_verdicts(summary: Summary) -> list[str]:
    """Each verdict a hook changed (task, category, outcome given, reason), capped."""
    count, changes = hook_changes(summary)
    if not count:
        return []
    lines = ["", f"### {hook_heading(summary, count)}", ""]
    lines.extend(
        capped(
            changes,
            LIST_CAP,
            lambda change: (
                f"- {_code(change.task)} ({change.category}): {change.outcome}: {_capped_note(change.reason)}"
            ),
            MORE,
        )
    )
    return lines


def _render(summary: Summary, texts: Mapping[str, str], exit_status: Optional[int], with_text: bool) -> str:
    lines = ["## rollout parity", "", verdict_line(summary, exit_status), ""]
    lines.extend(f"- {markdown_text(side_line(summary, side))}" for side in ("old", "new"))
    lines.append("")
    coverage = [line for side in ("old", "new") if (line := coverage_line(summary, side)) is not None]
    if coverage:
        lines.extend(f"- {markdown_text(line)}" for line in coverage)
        lines.append("")
    lines.extend(_table(summary))
    lines.extend(_flips(summary, texts, with_text))
    listed = [line for category in ("masked", "missing") for line in _uncompared(summary, category)]
    if listed:
        lines.extend(["", "### Not compared", ""])
        lines.extend(listed)
    lines.extend(["", "### Paired statistics", "", "```text"])
    lines.extend(visible(line) for line in paired_lines(summary.paired, summary.equivalence, summary.flip_tests))
    lines.extend(["```", "", PICTURES])
    lines.extend(_hook_verdicts(summary))
    failed_checks = [check.nodeid for check in summary.checks if check.outcome == "failed"]
    if failed_checks:
        lines.extend(["", f"### Your checks that failed ({len(failed_checks)})", ""])
        lines.extend(capped(failed_checks, LIST_CAP, lambda nodeid: f"- {_code(nodeid)}", MORE))
    if summary.nothing_compared:
        lines.extend(["", f"**Nothing compared**: {markdown_text(summary.nothing_compared)}"])
    if summary.plan is not None:
        lines.extend(["", "### What to run next", "", "```text"])
        lines.extend(visible(line) for line in summary.plan.lines())
        lines.append("```")
    if summary.notes:
        lines.extend(["", "### Notes", ""])
        lines.extend(capped(summary.notes, LIST_CAP, lambda note: f"- {_capped_note(note)}", MORE))
    return "\n".join(lines) + "\n"


def render_markdown(
    summary: Summary,
    texts: Optional[Mapping[str, str]] = None,
    exit_status: Optional[int] = None,
) -> str:
    """The Markdown summary; ``texts`` maps a flip's task label to its report text (log tail included),
    by default each task's own (:attr:`TaskSummary.evidence`).

    Within :data:`BUDGET` bytes: should the capped page still be larger, the flips' texts are dropped.
    """
    if texts is None:
        texts = {task.task: task.evidence for task in summary.tasks if task.evidence is not None}
    text = utf8_safe(_render(summary, texts, exit_status, True))
    if len(text.encode("utf-8")) > BUDGET:
        text = utf8_safe(_render(summary, {}, exit_status, False))
    encoded = text.encode("utf-8")
    if len(encoded) > BUDGET:
        text = encoded[: BUDGET - 200].decode("utf-8", "ignore") + "\n\n... (cut at GitHub's size limit)\n"
    return text

"""The summary as Markdown, for a GitHub Actions job page (`GITHUB_STEP_SUMMARY`) or a Markdown file.

Text from the data is backslash-escaped in Markdown lines and escaped for HTML inside HTML blocks (a
flip's `<details>`), so the raw file reads well too. Everything that grows with the data is capped,
as GitHub takes at most 1 MiB of summary per step; what is left out is counted and pointed to the JSON.
"""

from __future__ import annotations

from typing import Optional

from ..escaping import html_text, markdown_text, utf8_safe, visible
from ..identity.item_names import clipped
from .summary import Summary
from .wording import MORE, capped, category_rows, flip_line, listings, paired_lines, side_lines
from .wording import verdict as verdict_words

FLIP_CAP = 20  # flips listed, each with its text folded
TEXT_CAP = 4000  # characters of one flip's text
LIST_CAP = 20  # entries listed per list
NOTE_CAP = 1000  # characters of one note or reason
BUDGET = 1_000_000  # bytes; GitHub refuses a step summary above 1 MiB
#: where the pictures are: GitHub's Markdown cannot draw a scatter of thousands of tasks
PICTURES = (
    "Pictures (each task's old against new mean reward, the difference's interval against the margin): "
    "the HTML report, `--parity-html=FILE`."
)


def _code(label: str) -> str:
    """A task label as inline code in a Markdown line, backslash-escaped: no character of a label can break the page."""
    return f"<code>{markdown_text(label)}</code>"


def pre_block(text: str) -> str:
    """A flip's text as an HTML `<pre>` block, its lines kept, escaped for HTML, cut at :data:`TEXT_CAP`
    characters saying where the rest is."""
    if len(text) > TEXT_CAP:
        text = text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters: see the terminal or JUnit report)"
    return f"<pre>{html_text(text, lines=True)}</pre>"


def verdict_line(summary: Summary, exit_status: Optional[int] = None) -> str:
    """One Markdown line a reviewer can act on: the verdict, then the tasks by what to do about them."""
    head, rest = verdict_words(summary, exit_status, _code)
    if head.startswith("partial:"):
        return f"**{head}** (rollout parity): {rest}"
    return f"**rollout parity: {head}**: {rest}"


def _flips(summary: Summary, with_texts: bool) -> list[str]:
    """`### Flips (3) and rerun candidates (2)`, then each flip (capped), its report text folded under
    it in a `<details>` HTML block: Markdown is not read there, so it is escaped for HTML."""
    flips = summary.flips
    if not flips:
        return []
    counted = sum(task.category == "flipped" for task in flips)
    named = {"flips": counted, "rerun candidates": len(flips) - counted}
    title = " and ".join(f"{name} ({count})" for name, count in named.items() if count)
    lines = ["", f"### {title[0].upper()}{title[1:]}", ""]
    for task in flips[:FLIP_CAP]:
        rest = flip_line(task) + (", agent error: rerun" if task.category == "flipped_agent_error" else "")
        text = task.evidence if with_texts else None
        if not text:
            head = f"{_code(task.task)}: **{task.outcome}**: {markdown_text(rest)}"
            lines.append(f"- {head} (prompt: {markdown_text(task.excerpt)})" if task.excerpt else f"- {head}")
            continue
        head = f"<code>{html_text(task.task)}</code>: <strong>{task.outcome}</strong>: {html_text(rest)}"
        if task.excerpt:
            head += f" <em>{html_text(task.excerpt)}</em>"
        lines.extend(["<details>", f"<summary>{head}</summary>", "", pre_block(text), "", "</details>"])
    if len(flips) > FLIP_CAP:
        lines.extend(["", MORE.format(len(flips) - FLIP_CAP)])
    return lines


def _note(note: str) -> str:
    """A note or reason, cut at :data:`NOTE_CAP` at a word, escaped for Markdown on one line."""
    return markdown_text(clipped(note, NOTE_CAP))


def _render(summary: Summary, exit_status: Optional[int], with_texts: bool) -> str:
    lines = ["## rollout parity", "", verdict_line(summary, exit_status), ""]
    lines.extend(f"- {markdown_text(line)}" for line in side_lines(summary))
    lines.extend(["", "| category | tasks | breakdown |", "| --- | ---: | --- |"])
    lines.extend(f"| {name} | {count} | {breakdown} |" for name, count, breakdown in category_rows(summary))
    lines.extend(_flips(summary, with_texts))
    for heading, entries in listings(summary):
        lines.extend(["", f"### {heading}", ""])
        lines.extend(capped(entries, LIST_CAP, lambda e: f"- {_code(e[0]) if e[0] else ''}{_note(e[1])}", f"- {MORE}"))
    lines.extend(["", "### Paired statistics", "", "```text"])
    lines.extend(visible(line) for line in paired_lines(summary))
    lines.extend(["```", "", PICTURES])
    if summary.nothing_compared:
        lines.extend(["", f"**Nothing compared**: {markdown_text(summary.nothing_compared)}"])
    if summary.plan is not None:
        lines.extend(["", "### What to run next", "", "```text", *map(visible, summary.plan.lines()), "```"])
    return "\n".join(lines) + "\n"


def render_markdown(summary: Summary, exit_status: Optional[int] = None) -> str:
    """The Markdown summary within :data:`BUDGET` bytes: should the capped page be larger, the flips'
    report texts (:attr:`TaskSummary.evidence`) are dropped."""
    for with_texts in (True, False):
        text = utf8_safe(_render(summary, exit_status, with_texts))
        if len(text.encode("utf-8")) <= BUDGET:
            return text
    return text.encode("utf-8")[: BUDGET - 200].decode("utf-8", "ignore") + "\n\n... (cut at GitHub's size limit)\n"

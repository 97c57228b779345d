"""HTML fragments for an HTML test report (pytest-html): the parity counts, and a flip's extra.

Pure functions of the :class:`Summary` and of a flip's texts; every text is escaped.
"""

from __future__ import annotations

import html

from .render_markdown import LIST_CAP, TEXT_CAP, utf8_safe, verdict
from .summary import Summary
from .verdict_words import category_rows, coverage_line, hook_changes, hook_heading


def _hook_verdicts(summary: Summary) -> str:
    """Each verdict a hook changed (task, category, outcome given, reason) as a list, capped."""
    count, changes = hook_changes(summary)
    if not count:
        return ""
    items = "".join(f"<li><code>{html.escape(change.task)}</code> ({change.category}): {change.outcome}: "
                    f"{html.escape(change.reason)}</li>" for change in changes[:LIST_CAP])
    if len(changes) > LIST_CAP:
        items += f"<li>... and {len(changes) - LIST_CAP} more (see --parity-json)</li>"
    return f"<p>{hook_heading(summary, count)}:</p><ul>{items}</ul>" if items else f"<p>{hook_heading(summary, count)}</p>"


def summary_html(summary: Summary) -> str:
    """The verdict line, the counts table and the verdicts hooks changed, for the report's summary."""
    head, rest = verdict(summary)
    cells = "".join(f"<tr><td>{name}</td><td>{count}</td><td>{html.escape(breakdown)}</td></tr>"
                    for name, count, breakdown in category_rows(summary))
    return utf8_safe(f'<div class="rollout-parity"><p><strong>rollout parity: {html.escape(head)}</strong>: '
                     f"{html.escape(rest)}</p><table><tr><th>category</th><th>tasks</th><th>breakdown</th></tr>"
                     f"{cells}</table>{_coverage(summary)}{_hook_verdicts(summary)}</div>")


def _coverage(summary: Summary) -> str:
    """Each side's own inventory beside what the gate scored, when the side has one."""
    lines = [line for side in ("old", "new") if (line := coverage_line(summary, side)) is not None]
    return "".join(f"<p>{html.escape(line)}</p>" for line in lines)


def flip_html(headline: str, text: str) -> str:
    """A flip's extra: its rewards and who won, then its message with the loser's log tail."""
    if len(text) > TEXT_CAP:
        text = text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters)"
    return utf8_safe(f'<div class="rollout-parity-flip"><p>{html.escape(headline)}</p>'
                     f"<pre>{html.escape(text)}</pre></div>")

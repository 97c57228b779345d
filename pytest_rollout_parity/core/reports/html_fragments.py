"""HTML fragments for an HTML test report (pytest-html): the parity counts, and a flip's extra.

Pure functions of the :class:`Summary` and of a flip's texts; every text is escaped.
"""

from __future__ import annotations

import html

from ..identity.item_names import clipped
from .markdown import LIST_CAP, NOTE_CAP, TEXT_CAP, utf8_safe, verdict
from .summary import Summary
from .wording import category_rows, coverage_line, hook_changes, hook_heading, side_line, uncompared


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
                     f"{cells}</table>{_sides(summary)}{_uncompared(summary)}{_hook_verdicts(summary)}"
                     f"{_notes(summary)}</div>")


def _sides(summary: Summary) -> str:
    """Each side's file, counts and join key (and why), then its own coverage inventory if any."""
    lines = [side_line(summary, side) for side in ("old", "new")]
    lines.extend(line for side in ("old", "new") if (line := coverage_line(summary, side)) is not None)
    return "".join(f"<p>{html.escape(line)}</p>" for line in lines)


def _uncompared(summary: Summary) -> str:
    """The masked and missing tasks with why each was not compared, capped."""
    parts = []
    for category in ("masked", "missing"):
        reasons = uncompared(summary, category)
        if not reasons:
            continue
        items = "".join(f"<li><code>{html.escape(task)}</code>: {html.escape(reason)}</li>"
                        for task, reason in reasons[:LIST_CAP])
        if len(reasons) > LIST_CAP:
            items += f"<li>... and {len(reasons) - LIST_CAP} more (see --parity-json)</li>"
        parts.append(f"<p>{category} ({len(reasons)}):</p><ul>{items}</ul>")
    return "".join(parts)


def _notes(summary: Summary) -> str:
    """The notes, capped."""
    if not summary.notes:
        return ""
    items = "".join(f"<li>{html.escape(clipped(note, NOTE_CAP))}</li>" for note in summary.notes[:LIST_CAP])
    if len(summary.notes) > LIST_CAP:
        items += f"<li>... and {len(summary.notes) - LIST_CAP} more (see --parity-json)</li>"
    return f"<p>notes:</p><ul>{items}</ul>"


def flip_html(headline: str, text: str) -> str:
    """A flip's extra: its rewards and who won, then its message with the loser's log tail."""
    if len(text) > TEXT_CAP:
        text = text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters)"
    return utf8_safe(f'<div class="rollout-parity-flip"><p>{html.escape(headline)}</p>'
                     f"<pre>{html.escape(text)}</pre></div>")

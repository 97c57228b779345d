"""HTML fragments for an HTML test report (pytest-html): the parity counts, and a flip's extra.

Pure functions of the :class:`Summary` and of a flip's texts; every text is escaped.
"""

from __future__ import annotations

import html

from .render_markdown import TEXT_CAP, utf8_safe, verdict
from .summary import Summary


def summary_html(summary: Summary) -> str:
    """The verdict line and the counts table, for the report's summary."""
    head, rest = verdict(summary)
    counts = summary.counts
    rows = [
        ("identical", counts.identical, ""),
        ("flipped", counts.flipped,
         f"new regressed (old wins) {counts.flipped_old_win}, new improved (new wins) {counts.flipped_new_win}"),
        ("flipped_agent_error", counts.flipped_agent_error, "rerun candidates"),
        ("masked", counts.masked, f"old side {counts.masked_old}, new side {counts.masked_new}"),
        ("missing", counts.missing, f"old only {counts.missing_old_only}, new only {counts.missing_new_only}"),
        ("tasks", counts.tasks, ""),
    ]
    cells = "".join(f"<tr><td>{name}</td><td>{count}</td><td>{html.escape(breakdown)}</td></tr>"
                    for name, count, breakdown in rows)
    return (f'<div class="rollout-parity"><p><strong>rollout parity: {html.escape(head)}</strong>: '
            f"{html.escape(rest)}</p><table><tr><th>category</th><th>tasks</th><th>breakdown</th></tr>"
            f"{cells}</table></div>")


def flip_html(headline: str, text: str) -> str:
    """A flip's extra: its rewards and who won, then its message with the loser's log tail."""
    if len(text) > TEXT_CAP:
        text = text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters)"
    return utf8_safe(f'<div class="rollout-parity-flip"><p>{html.escape(headline)}</p>'
                     f"<pre>{html.escape(text)}</pre></div>")

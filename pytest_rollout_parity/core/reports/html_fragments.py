"""HTML fragments for an HTML test report (pytest-html): the report at its top, and a flip's extra.

Pure functions of the :class:`Summary` and of a flip's texts; every text is escaped.
"""

from __future__ import annotations

import html

from ..vocabulary import OptionNames
from .html_page import report_body
from .markdown import TEXT_CAP, utf8_safe
from .summary import Summary


def summary_html(summary: Summary, *, names: OptionNames) -> str:
    """The whole report (:func:`.html_page.report_body`) for the top of pytest-html's: each flip's
    evidence stays in the flip's own row, so it is shown once."""
    return report_body(summary, names=names, with_evidence=False)


def flip_html(headline: str, text: str) -> str:
    """A flip's extra: its rewards and who won, then its message with the loser's log tail."""
    if len(text) > TEXT_CAP:
        text = text[:TEXT_CAP] + f"\n... ({len(text) - TEXT_CAP} more characters)"
    return utf8_safe(
        f'<div class="rollout-parity-flip"><p>{html.escape(headline)}</p><pre>{html.escape(text)}</pre></div>'
    )

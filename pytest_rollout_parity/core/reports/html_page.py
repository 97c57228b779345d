"""The report as one self-contained HTML page (the HTML report file), and its body inside pytest-html's.

A pure function of the :class:`Summary` (and, for the page's audit footer, the run's :class:`Audit`).
The style sheet and the pictures (:mod:`.pictures`) are inline and nothing is fetched, so the page
opens offline. Every text from the data is escaped for HTML. The lists are capped (the JSON has
every task), and the pictures bin tasks past ten thousand, so the page stays under 2 MB at 100,000
tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional, TypeVar

from ..escaping import html_text, utf8_safe
from ..identity.item_names import clipped
from .markdown import LIST_CAP, NOTE_CAP, pre_block
from .pictures import interval_svg, scatter_svg
from .summary import SideSummary, Summary
from .wording import MORE, capped, category_rows, listings, paired_heading, paired_rows, side_lines, verdict

#: flips the page's table lists, at most (each with its means, repeats, outcome and p)
FLIP_ROWS = 200
#: flips whose evidence (message, log tail or last messages) the page carries, at most
EVIDENCE_ROWS = 20
#: identical tasks the page lists (folded), at most
IDENTICAL_ROWS = 1000
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """What the page's footer says about the run that wrote it (the inputs' digests are the summary's)."""

    #: the command line, as one shell-quoted string
    command: str
    #: the plugin's version
    version: str
    #: when the run started (ISO 8601, UTC)
    started: str


STYLE = """
.rollout-parity{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;max-width:1200px}
.rollout-parity h1{font-size:22px;margin:0 0 8px}.rollout-parity h2{font-size:17px;margin:22px 0 8px;
border-bottom:1px solid #d0d7de;padding-bottom:4px}
.rollout-parity .verdict{display:inline-block;padding:2px 10px;border-radius:6px;font-weight:700;color:#fff;
background:#57606a}.rollout-parity .v-pass{background:#1a7f37}.rollout-parity .v-fail{background:#cf222e}
.rollout-parity .v-inconclusive{background:#9a6700}
.rollout-parity table{border-collapse:collapse;margin:6px 0}.rollout-parity th,.rollout-parity td{
border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
.rollout-parity th{background:#f6f8fa}.rollout-parity td.n{text-align:right;font-variant-numeric:tabular-nums}
.rollout-parity code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:0 3px}
.rollout-parity pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:8px;
overflow:auto;white-space:pre-wrap;margin:4px 0}
.rollout-parity .excerpt{color:#57606a;font-size:12px;display:block}
.rollout-parity .o-failed{color:#cf222e;font-weight:600}.rollout-parity .o-within_noise{color:#9a6700}
.rollout-parity .o-accepted{color:#1a7f37}.rollout-parity .o-agent_error{color:#8250df}
.rollout-parity .pictures{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.rollout-parity figure{margin:0}.rollout-parity figcaption{font-size:12px;color:#57606a;max-width:560px}
.rollout-parity svg text{font:11px system-ui,sans-serif;fill:#1f2328}.rollout-parity svg .axis{font-size:12px}
.rollout-parity svg .plot{fill:#fff;stroke:#d0d7de}.rollout-parity svg .diagonal{stroke:#8c959f;stroke-dasharray:4 3}
.rollout-parity .p-passed{--c:#8c959f;fill-opacity:.55}.rollout-parity .p-regressed{--c:#cf222e}
.rollout-parity .p-improved{--c:#0969da}.rollout-parity .p-noise{--c:#d4a72c}.rollout-parity .p-disagree{--c:#bc4c00}
.rollout-parity .p-accepted{--c:#1a7f37}.rollout-parity .p-agent{--c:#8250df}.rollout-parity circle{fill:var(--c)}
.rollout-parity .p-notrun{fill:none;stroke:#8c959f}.rollout-parity span.p-notrun{border:1px solid #8c959f}
.rollout-parity .cell{fill:#57606a}.rollout-parity .cell-flip{fill:#cf222e}
.rollout-parity span.key{display:inline-block;width:10px;height:10px;border-radius:5px;margin:0 4px 0 10px;
background:var(--c)}
.rollout-parity svg .band{fill:#dafbe1;stroke:#1a7f37}.rollout-parity svg .zero{stroke:#8c959f;stroke-dasharray:3 3}
.rollout-parity svg .ci{stroke:#1f2328;stroke-width:2}.rollout-parity svg .delta{fill:#1f2328}
.rollout-parity svg .bounds-in{stroke:#1a7f37;stroke-width:3}.rollout-parity svg .bounds-out{stroke:#cf222e;stroke-width:3}
.rollout-parity svg .count{font-size:10px;font-weight:600}
.rollout-parity table.statistics td:first-child{white-space:nowrap;color:#57606a}
.rollout-parity table.statistics td{max-width:900px}
.rollout-parity details.identical ul{columns:3;margin:4px 0}
.rollout-parity footer{margin-top:24px;border-top:1px solid #d0d7de;padding-top:6px;font-size:12px;color:#57606a}
.rollout-parity footer code{word-break:break-all}
"""


def _passes(side: Optional[SideSummary]) -> str:
    """One side of a flip: `4/5` (passed of scored rollouts) for 0/1 rewards, else the mean with the rows' range."""
    if side is None:
        return "—"
    if side.reward is None or side.reward_rows == 0:
        text = "no reward"
    elif side.passed is not None:
        text = f"{side.passed}/{side.reward_rows}"
    else:
        text = f"{side.reward:.4g}"
        if side.reward_range is not None and side.reward_rows > 1:
            low, high = side.reward_range
            text += f" [{low:.4g}, {high:.4g}]"
    return text + (f" (+{side.masked_rows} masked)" if side.masked_rows else "")


def _flip_rows(summary: Summary, with_evidence: bool) -> str:
    flips = summary.flips
    if not flips:
        return "<p>No task flipped.</p>"
    rows = ['<table class="flips"><tr><th>task</th><th>old &#8594; new</th><th>outcome</th><th>p</th></tr>']
    for index, task in enumerate(flips[:FLIP_ROWS]):
        p = task.adjusted_p if task.adjusted_p is not None else task.p_value
        p_text = "—" if p is None else f"{p:.3g}" + (" (adjusted)" if task.adjusted_p is not None else "")
        label = f"<code>{html_text(task.task)}</code>"
        if task.excerpt:
            label += f'<span class="excerpt">{html_text(task.excerpt)}</span>'
        if with_evidence and index < EVIDENCE_ROWS and task.evidence:
            label += f"<details><summary>evidence</summary>{pre_block(task.evidence)}</details>"
        rows.append(
            f'<tr class="flip"><td>{label}</td><td class="n">{_passes(task.old)} &#8594; {_passes(task.new)}</td>'
            f'<td class="o-{task.outcome}">{task.outcome}</td><td class="n">{p_text}</td></tr>'
        )
    rows.append(
        '</table><p class="caption">old &#8594; new: the rollouts that passed (reward 1) of those scored, on '
        "each side; where rewards are not 0 or 1, the mean reward and [lowest, highest] of the rollouts.</p>"
    )
    if len(flips) > FLIP_ROWS:
        rows.append(f"<p>{MORE.format(len(flips) - FLIP_ROWS)}</p>")
    return "".join(rows)


def _listing(items: Sequence[T], render: Callable[[T], str], cap: int = LIST_CAP) -> str:
    """The first ``cap`` items, each rendered (escaped), as a list, then how many are left out."""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in capped(items, cap, render)) + "</ul>"


def _entry(entry: tuple[str, str]) -> str:
    """A list's entry: its name as code (none for a note), then its words cut at :data:`NOTE_CAP`."""
    name, words = entry
    return (f"<code>{html_text(name)}</code>" if name else "") + html_text(clipped(words, NOTE_CAP))


def report_body(
    summary: Summary, exit_status: Optional[int] = None, *, with_evidence: bool = True, audit: Optional[Audit] = None
) -> str:
    """The report's content as one `<div class="rollout-parity">` (its style sheet inside), with
    ``audit``'s footer. The identical tasks are listed, folded: a reviewer can check that a task
    they expect to agree did.

    ``with_evidence``: each flip's text under its row; pytest-html's report shows it in the flip's
    own row instead, so it is drawn there once.
    """
    head, rest = verdict(summary, exit_status)
    counts = "".join(
        f'<tr><td>{name}</td><td class="n">{count}</td><td>{html_text(breakdown)}</td></tr>'
        for name, count, breakdown in category_rows(summary)
    )
    statistics = "".join(
        f"<tr><td>{html_text(label)}</td><td>{html_text(value)}</td></tr>" for label, value in paired_rows(summary)
    )
    parts = [
        f'<div class="rollout-parity"><style>{STYLE}</style>',
        f'<h1>rollout parity <span class="verdict v-{summary.verdict}">{html_text(head)}</span></h1>',
        f"<p>{html_text(rest)}</p>",
        "<p>Decided by:</p>" + _listing(summary.decided_by, lambda by: html_text(by.text)),
        "<h2>Sides</h2>" + "".join(f"<p>{html_text(line)}</p>" for line in side_lines(summary)),
        f"<table><tr><th>category</th><th>tasks</th><th>breakdown</th></tr>{counts}</table>",
        f'<h2>Pictures</h2><div class="pictures">{scatter_svg(summary)}{interval_svg(summary)}</div>',
        f"<h2>Paired statistics</h2><p>{html_text(paired_heading(summary))}:</p>",
        f'<table class="statistics">{statistics}</table>',
        "<h2>Flips</h2>" + _flip_rows(summary, with_evidence),
    ]
    identical = summary.labels("identical")
    if identical:
        shown = _listing(identical, lambda label: f"<code>{html_text(label)}</code>", IDENTICAL_ROWS)
        parts.append(
            f'<details class="identical"><summary>identical tasks ({len(identical)})</summary>{shown}</details>'
        )
    parts.extend(f"<h2>{html_text(heading)}</h2>{_listing(entries, _entry)}" for heading, entries in listings(summary))
    if audit is not None:
        inputs = dict(summary.run.inputs) if summary.run is not None else {}
        sides = "; ".join(
            f"{side}: <code>{html_text(summary.files.file(side) if summary.files else side)}</code> "
            f"({html_text(inputs.get(side) or 'no digest')})"
            for side in ("old", "new")
        )
        parts.append(
            f"<footer><p>command: <code>{html_text(audit.command)}</code></p>"
            f"<p>pytest-rollout-parity {html_text(audit.version)}; run started {html_text(audit.started)}</p>"
            f"<p>inputs: {sides}</p></footer>"
        )
    return utf8_safe("".join(parts) + "</div>")


def render_html(summary: Summary, exit_status: Optional[int] = None, *, audit: Optional[Audit] = None) -> str:
    """The whole page: a document that needs nothing but itself, with ``audit``'s footer when given."""
    head, _ = verdict(summary, exit_status)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>rollout parity: {html_text(head)}</title></head><body>"
        f"{report_body(summary, exit_status, audit=audit)}</body></html>\n"
    )


def summary_html(summary: Summary) -> str:
    """The whole report (:func:`report_body`) for the top of pytest-html's: each flip's evidence
    stays in the flip's own row, so it is shown once."""
    return report_body(summary, with_evidence=False)


def flip_html(headline: str, text: str) -> str:
    """A flip's extra in pytest-html's report: its rewards and who won, then its message with the
    loser's log tail."""
    return utf8_safe(f'<div class="rollout-parity-flip"><p>{html_text(headline)}</p>{pre_block(text)}</div>')

"""The report as one self-contained HTML page, and its body inside pytest-html's report.

The style sheet and two pictures (inline SVG, a few lines of text and no library: what a reviewer
would otherwise read off tables) are in the page and nothing is fetched, so it opens offline. Every
text from the data is escaped for HTML. The lists are capped (the JSON has every task) and the
scatter bins tasks past :data:`POINTS_CAP`, so the page stays under 2 MB at 100,000 tasks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Optional, TypeVar

from ..escaping import html_text, utf8_safe
from ..identity.item_names import clipped, listed
from ..model import COMPARED_CATEGORIES
from .markdown import LIST_CAP, NOTE_CAP, pre_block
from .summary import SideSummary, Summary
from .wording import MORE, capped, category_rows, listings, paired_heading, paired_rows, side_lines, verdict

FLIP_ROWS = 200  # flips the page's table lists, at most; the binned scatter still draws as many as circles
EVIDENCE_ROWS = 20  # flips whose evidence (message, log tail or last messages) the page carries, at most
IDENTICAL_ROWS = 1000  # identical tasks the page lists (folded), at most
POINTS_CAP = 10_000  # the scatter's tasks drawn one point each, at most; beyond, binned
TOOLTIPS_CAP = 1_000  # past this many tasks only flips and groups have a tooltip: the page stays small
GRID = 60  # cells per axis when binned
GROUP_LABELS = 5  # labels a group's tooltip names, at most
APART = 8  # pixels between the circles of different outcomes that share a position
SIZE = 420
PAD = 48
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """What the page's footer says about the run that wrote it (the inputs' digests are the summary's)."""

    command: str  # the command line, as one shell-quoted string
    version: str
    started: str  # ISO 8601, UTC


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


#: the pictures' outcome -> (class, legend words), in legend order; the colours are in STYLE
CLASSES: dict[str, tuple[str, str]] = {
    "passed": ("p-passed", "identical"),
    "failed-old": ("p-regressed", "regressed (fails)"),
    "failed-new": ("p-improved", "improved (fails)"),
    "failed-verifier": ("p-disagree", "verifier disagreement (fails)"),
    "within_noise": ("p-noise", "within noise"),
    "accepted": ("p-accepted", "accepted"),
    "agent_error": ("p-agent", "agent error"),
    "not_run": ("p-notrun", "not run (deselected)"),
}


def _svg(css: str, width: int, height: int, label: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{label}">{body}</svg>'
    )


def _n(value: float) -> str:
    """A coordinate: one decimal, none for a whole number."""
    return f"{value:.1f}".removesuffix(".0")


def _text(x: float, y: float, words: str, css: str = "tick", anchor: str = "middle", extra: str = "") -> str:
    return f'<text x="{_n(x)}" y="{_n(y)}" class="{css}" text-anchor="{anchor}"{extra}>{words}</text>'


def _line(x1: float, y1: float, x2: float, y2: float, css: str) -> str:
    return f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" class="{css}"/>'


class Point(NamedTuple):
    """One compared task in the scatter; ``kind`` is its key in :data:`CLASSES`."""

    task: str
    old: float
    new: float
    kind: str
    flip: bool


def points(summary: Summary) -> list[Point]:
    """The compared tasks with a finite mean reward on both sides, classed by outcome: a failing flip
    by its winner, or as a verifier disagreement (where those cancel, no side won)."""
    found = []
    for task in summary.tasks:
        if task.category not in COMPARED_CATEGORIES or task.old is None or task.new is None:
            continue
        old, new = task.old.reward, task.new.reward
        if old is not None and new is not None and math.isfinite(old) and math.isfinite(new):
            if task.outcome == "failed" and task.verifier_disagreements:
                kind = "failed-verifier"
            elif task.outcome == "failed":
                kind = "failed-old" if task.winner == "old" else "failed-new"
            else:
                kind = task.outcome if task.outcome in CLASSES else "passed"
            found.append(Point(task.task, old, new, kind, task.category != "identical"))
    return found


def _circles(drawn: list[Point], x: Callable[[float], float], y: Callable[[float], float], tooltips: bool) -> list[str]:
    """One circle per position (to 9 decimals, so means equal but for float rounding coincide) and
    class, its area growing with its tasks, its tooltip naming them; classes sharing a position sit
    around it, so no task hides behind another."""
    at: dict[tuple[float, float], dict[str, list[Point]]] = {}
    for point in drawn:
        at.setdefault((round(point.old, 9), round(point.new, 9)), {}).setdefault(point.kind, []).append(point)
    order = list(CLASSES)
    parts = []
    # identical tasks first, so flips are drawn on top
    for here in sorted(at.values(), key=lambda kinds: any(p.flip for group in kinds.values() for p in group)):
        for index, kind in enumerate(sorted(here, key=order.index)):
            group = here[kind]
            first, count = group[0], len(group)
            cx, cy = x(first.old), y(first.new)
            if len(here) > 1:
                angle = 2 * math.pi * index / len(here) - math.pi / 2
                cx, cy = cx + APART * math.cos(angle), cy + APART * math.sin(angle)
            radius = min((4.5 if first.flip else 3.5) * math.sqrt(count), 16.0)
            where, named = f"old {first.old:.4g}, new {first.new:.4g}", tooltips or first.flip
            labels = html_text(listed([clipped(p.task, 80) for p in group], GROUP_LABELS, where=""))
            if count == 1:
                title = f"<title>{labels}: {where}</title>" if named else ""
            else:
                title = f"<title>{count} tasks at {where}" + (f": {labels}" if named else "") + "</title>"
            parts.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" class="{CLASSES[kind][0]}" '
                f'data-tasks="{count}">{title}</circle>'
            )
            if count > 1:
                parts.append(_text(cx + radius + 2, cy - radius + 2, str(count), "count", "start"))
    return parts


def scatter_svg(summary: Summary) -> str:
    """Old against new mean reward per compared task: identical tasks on the diagonal, flips off it;
    past :data:`POINTS_CAP` tasks the rest are counted in a grid, the listed flips still circles."""
    drawn = points(summary)
    if not drawn:
        return '<p class="caption">No task has a mean reward on both sides: nothing to draw.</p>'
    values = [value for point in drawn for value in (point.old, point.new)]
    low, high = min([0.0, *values]), max([1.0, *values])
    span, inner = high - low, SIZE - 2 * PAD

    def x(value: float) -> float:
        return PAD + (value - low) / span * inner

    def y(value: float) -> float:
        return SIZE - PAD - (value - low) / span * inner

    def cell(value: float) -> int:
        return min(GRID - 1, int((value - low) / span * GRID))

    parts = [
        f'<rect x="{PAD}" y="{PAD}" width="{inner}" height="{inner}" class="plot"/>',
        _line(x(low), y(low), x(high), y(high), "diagonal"),
    ]
    for step in range(5):
        value = low + span * step / 4
        parts.append(_text(x(value), SIZE - PAD + 16, f"{value:.3g}"))
        parts.append(_text(PAD - 6, y(value) + 4, f"{value:.3g}", anchor="end"))
    parts.append(_text(SIZE / 2, SIZE - 8, "old mean reward", "axis"))
    parts.append(_text(14, SIZE / 2, "new mean reward", "axis", extra=f' transform="rotate(-90 14 {SIZE / 2})"'))
    binned = len(drawn) > POINTS_CAP
    one_by_one = [p for p in drawn if p.flip][:FLIP_ROWS] if binned else drawn
    chosen = {id(p) for p in one_by_one}
    rest = [p for p in drawn if id(p) not in chosen]
    if rest:  # counted per grid cell, flips apart: one square a non-empty cell
        cells = Counter((cell(point.old), cell(point.new), point.flip) for point in rest)
        most, side = max(cells.values()), inner / GRID
        parts.extend(
            f'<rect x="{PAD + column * side:.1f}" y="{SIZE - PAD - (row + 1) * side:.1f}" '
            f'width="{side:.1f}" height="{side:.1f}" class="{"cell-flip" if flip else "cell"}" '
            f'fill-opacity="{0.25 + 0.75 * math.log1p(count) / math.log1p(most):.2f}">'
            f"<title>{count} task(s)</title></rect>"
            for (column, row, flip), count in sorted(cells.items())
        )
    parts.extend(_circles(one_by_one, x, y, len(drawn) <= TOOLTIPS_CAP))
    counts = Counter(point.kind for point in drawn)
    legend = " ".join(
        f'<span class="key {css}"></span>{words} {counts[kind]}'
        for kind, (css, words) in CLASSES.items()
        if kind in counts
    )
    how = (
        f"{len(drawn)} compared tasks; beyond {POINTS_CAP:,} they are counted in a {GRID}&#215;{GRID} grid "
        f"(darker: more tasks), the first {len(one_by_one)} flips drawn as circles"
        if binned
        else f"{len(drawn)} compared tasks"
    )
    svg = _svg("scatter", SIZE, SIZE, "old against new mean reward per task", "".join(parts))
    return (
        f'<figure class="picture">{svg}<figcaption>Each task\'s mean reward, old (across) '
        f"against new (up): on the diagonal the servers agree, below it the new one scores lower. "
        f"{how}. Tasks of one outcome at one position are one circle, its area growing with their number "
        f"and the number beside it; outcomes that share a position sit around it. <br>{legend}</figcaption></figure>"
    )


def interval_svg(summary: Summary) -> str:
    """The mean difference (new - old) with what decides on it: in margin mode the equivalence
    decision's own one-sided bounds against the ±margin band (so picture and verdict cannot
    disagree), else the 95% interval against 0; "" without a difference (nothing compared, one task)."""
    paired, decision = summary.paired, summary.equivalence
    if paired.delta is None or paired.ci95 is None:
        return ""
    delta, (low_end, high_end) = paired.delta, paired.ci95
    name, margin = "95% interval", None
    if decision is not None and decision.lower_bound is not None and decision.upper_bound is not None:
        low_end, high_end, margin = decision.lower_bound, decision.upper_bound, decision.margin
        name = "one-sided 95% bounds"
    width, height, left, right = 560, 120, 30, 30
    values: list[float] = [delta, low_end, high_end, 0.0, *((-margin, margin) if margin is not None else ())]
    finite = [v for v in values if math.isfinite(v)]
    pad = (max(finite) - min(finite)) * 0.1 or 0.1
    low, high = min(finite) - pad, max(finite) + pad

    def x(value: float) -> float:
        value = min(max(value, low), high)  # an infinite bound is drawn at the edge
        return left + (value - low) / (high - low) * (width - left - right)

    parts = []
    if margin is not None:
        parts.append(
            f'<rect x="{x(-margin):.1f}" y="18" width="{x(margin) - x(-margin):.1f}" height="56" class="band"/>'
        )
        parts.append(_text(x(-margin) - 2, 14, f"&#8722;{margin:g}", anchor="end"))
        parts.append(_text(x(margin) + 2, 14, f"+{margin:g}", anchor="start"))
    parts.append(_line(x(0), 18, x(0), 74, "zero"))
    inside = decision.passed if margin is not None and decision is not None else None
    style = "ci" if inside is None else ("bounds-in" if inside else "bounds-out")
    parts.append(_line(x(low_end), 46, x(high_end), 46, style))
    parts.extend(_line(x(end), 38, x(end), 54, style) for end in (low_end, high_end))
    parts.append(_text((x(low_end) + x(high_end)) / 2, 34, f"{name} [{low_end:.4f}, {high_end:.4f}]"))
    parts.append(f'<circle cx="{x(delta):.1f}" cy="46" r="5" class="delta"/>')
    parts.append(_text(x(delta), 92, f"delta {delta:+.4f}", "axis"))
    parts.append(_text(width / 2, 112, "mean reward difference, new &#8722; old"))
    words = (
        "The mean difference over the compared tasks with its 95% interval, against 0 "
        "(with a margin, margin mode draws its one-sided bounds against the ±margin band)"
    )
    if inside is not None:
        shown = "both bounds lie inside the band, so" if inside else "a bound lies outside the band, so"
        words = (
            "The mean difference over the compared tasks with the one-sided 95% bounds the equivalence test "
            f"decides on, against ±{margin:g}: {shown} the servers are {'' if inside else 'not '}shown equivalent "
            "within the margin (the 95% interval is in the statistics below)"
        )
    svg = _svg("interval", width, height, f"mean difference and {name}", "".join(parts))
    return f'<figure class="picture">{svg}<figcaption>{words}.</figcaption></figure>'


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
    """The report as one `<div class="rollout-parity">`. The identical tasks are listed, folded, so a
    reviewer can check that a task they expect to agree did. Without ``with_evidence`` the flips'
    texts are left out: pytest-html's report shows each in the flip's own row."""
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
    if identical := summary.labels("identical"):
        shown = _listing(identical, lambda label: f"<code>{html_text(label)}</code>", IDENTICAL_ROWS)
        parts.append(
            f'<details class="identical"><summary>identical tasks ({len(identical)})</summary>{shown}</details>'
        )
    parts.extend(f"<h2>{html_text(heading)}</h2>{_listing(entries, _entry)}" for heading, entries in listings(summary))
    if audit is not None:
        inputs = dict(summary.run.inputs) if summary.run is not None else {}
        sides = "; ".join(
            f"{side}: <code>{html_text(summary.files.side(side).file if summary.files else side)}</code> "
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
    """The whole page: a document that needs nothing but itself."""
    head, _ = verdict(summary, exit_status)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        'img-src data:">'
        f"<title>rollout parity: {html_text(head)}</title></head><body>"
        f"{report_body(summary, exit_status, audit=audit)}</body></html>\n"
    )


def flip_html(headline: str, text: str) -> str:
    """A flip's extra in pytest-html's report: its rewards and who won, then its whole message."""
    return utf8_safe(f'<div class="rollout-parity-flip"><p>{html_text(headline)}</p>{pre_block(text)}</div>')

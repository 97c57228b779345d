"""The report's pictures as inline SVG: pure functions of the :class:`Summary`, nothing fetched.

Two pictures say what a reviewer would otherwise read off tables. :func:`scatter_svg` puts each
compared task at (old mean reward, new mean reward): identical tasks sit on the diagonal, a flip
stands off it, coloured by its outcome. Tasks of one outcome at one position are one circle whose
area grows with their count, the count written beside it; outcomes sharing a position sit around
it, so no task hides behind another. Up to :data:`POINTS_CAP` tasks are drawn so; beyond, tasks
are counted in a grid of cells (so the page stays small at 100,000 tasks) while the first
:data:`FLIP_POINTS` flips are still drawn as circles. :func:`interval_svg` draws what decides:
in margin mode the one-sided 95% bounds against the ±margin band (the equivalence decision's own
figures, so the picture and the verdict cannot disagree), else the 95% interval against 0.
SVG is a few lines of text here, needs no library and opens offline in every browser; labels
from the data are escaped for HTML.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from ..escaping import html_text
from ..identity.item_names import clipped, listed
from .summary import Summary

#: tasks drawn one point each, at most; beyond, binned
POINTS_CAP = 10_000
#: flips drawn one point each even when the others are binned (the report's flip list cap)
FLIP_POINTS = 200
#: tasks whose points carry a tooltip with their label (flips always do)
TOOLTIPS_CAP = 1_000
#: cells per axis when binned
GRID = 60
#: labels a group's tooltip names, at most
GROUP_LABELS = 5
#: pixels between the circles of different outcomes that share a position
APART = 8
SIZE = 420
PAD = 48

#: outcome -> (class, legend words), in legend order; the colours are in the page's style sheet
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
    """One compared task: its label, old and new mean reward, its class, and whether it is a flip."""

    task: str
    old: float
    new: float
    kind: str
    flip: bool


def points(summary: Summary) -> list[Point]:
    """The compared tasks with a finite mean reward on both sides, in task order, each classed by its
    outcome: a failing flip split by direction, or a verifier disagreement (the same trajectories
    scored differently: where they cancel, no side won)."""
    found = []
    for task in summary.tasks:
        if task.category not in ("identical", "flipped", "flipped_agent_error") or task.old is None or task.new is None:
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
    """One circle per position (to 9 decimals: means equal but for float rounding coincide) and class,
    its area growing with its tasks (at most four times the smallest's width); classes at one position
    set around it, each count beside its circle. A circle's tooltip names its task(s) and position
    (past :data:`TOOLTIPS_CAP` tasks, a lone identical task's circle has none, to keep the page small)."""
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
    """Old against new mean reward per compared task; one circle a position and outcome up to
    :data:`POINTS_CAP` tasks."""
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
    one_by_one = [p for p in drawn if p.flip][:FLIP_POINTS] if binned else drawn
    chosen = {id(p) for p in one_by_one}
    rest = [p for p in drawn if id(p) not in chosen]
    if rest:
        parts.append(_cells(rest, low, span, inner))
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


def _cells(rest: list[Point], low: float, span: float, inner: float) -> str:
    """The tasks not drawn one by one, counted per grid cell and class: one square a non-empty cell."""

    def cell(value: float) -> int:
        return min(GRID - 1, int((value - low) / span * GRID))

    cells = Counter((cell(point.old), cell(point.new), point.flip) for point in rest)
    most, side = max(cells.values()), inner / GRID
    return "".join(
        f'<rect x="{PAD + column * side:.1f}" y="{SIZE - PAD - (row + 1) * side:.1f}" '
        f'width="{side:.1f}" height="{side:.1f}" class="{"cell-flip" if flip else "cell"}" '
        f'fill-opacity="{0.25 + 0.75 * math.log1p(count) / math.log1p(most):.2f}"><title>{count} task(s)</title></rect>'
        for (column, row, flip), count in sorted(cells.items())
    )


def interval_svg(summary: Summary) -> str:
    """The mean difference (new - old) with what decides on it: in margin mode the one-sided 95% bounds
    against the ±margin band (green inside, red not), else the 95% interval against 0; "" when the
    summary has no difference (nothing compared, one task)."""
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

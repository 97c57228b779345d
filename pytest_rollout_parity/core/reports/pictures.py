"""The report's pictures as inline SVG: pure functions of the :class:`Summary`, nothing fetched.

Two pictures say what a reviewer would otherwise read off tables. :func:`scatter_svg` puts each
compared task at (old mean reward, new mean reward): identical tasks sit on the diagonal, a flip
stands off it, coloured by its outcome. Up to :data:`POINTS_CAP` tasks each is a point of its
own; beyond, tasks are counted in a grid of cells (so the page stays small at 100,000 tasks)
while the first :data:`FLIP_POINTS` flips are still drawn one by one. :func:`interval_svg` draws
the difference's 95% interval (and margin mode's one-sided bounds) against the ±margin band.
SVG is a few lines of text here, needs no library and opens offline in every browser; labels
from the data are escaped for HTML.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import NamedTuple, Optional

from ..escaping import html_text
from ..identity.item_names import clipped
from .summary import Summary, TaskSummary

#: tasks drawn one point each, at most; beyond, binned
POINTS_CAP = 10_000
#: flips drawn one point each even when the others are binned (the report's flip list cap)
FLIP_POINTS = 200
#: tasks whose points carry a tooltip with their label (flips always do)
TOOLTIPS_CAP = 1_000
#: cells per axis when binned
GRID = 60
#: points are moved by up to this share of the axis, so equal ones do not hide each other
JITTER = 0.02
SIZE = 420
PAD = 48

#: outcome -> (class, legend words), in legend order; the colours are in the page's style sheet
CLASSES: dict[str, tuple[str, str]] = {
    "passed": ("p-passed", "identical"),
    "failed-old": ("p-regressed", "regressed (fails)"),
    "failed-new": ("p-improved", "improved (fails)"),
    "within_noise": ("p-noise", "within noise"),
    "accepted": ("p-accepted", "accepted"),
    "agent_error": ("p-agent", "agent error"),
    "not_run": ("p-notrun", "not run (deselected)"),
}


class Point(NamedTuple):
    """One compared task: its label, old and new mean reward, its class, and whether it is a flip."""

    task: str
    old: float
    new: float
    kind: str
    flip: bool


def point_kind(task: TaskSummary, outcome: str) -> str:
    """The class of a task's point: its outcome, a failing flip split by direction."""
    if outcome == "failed":
        return "failed-old" if task.winner == "old" else "failed-new"
    return outcome if outcome in CLASSES else "passed"


def points(summary: Summary, outcomes: Iterable[str]) -> list[Point]:
    """The compared tasks with a finite mean reward on both sides, in task order."""
    found = []
    for task, outcome in zip(summary.tasks, outcomes):
        if task.category not in ("identical", "flipped", "flipped_agent_error"):
            continue
        if task.old is None or task.new is None or task.old.reward is None or task.new.reward is None:
            continue
        if not (math.isfinite(task.old.reward) and math.isfinite(task.new.reward)):
            continue
        found.append(
            Point(task.task, task.old.reward, task.new.reward, point_kind(task, outcome), task.category != "identical")
        )
    return found


def _jitter(index: int, salt: int) -> float:
    """A stable offset in [-0.5, 0.5) for the ``index``-th point (the same page on every run)."""
    return (((index * 2654435761 + salt * 40503) % 4096) / 4096) - 0.5


def _axis(values: list[float]) -> tuple[float, float]:
    low, high = min([0.0, *values]), max([1.0, *values])
    return low, high if high > low else low + 1.0


def _number(value: float) -> str:
    return f"{value:.3g}"


def scatter_svg(summary: Summary, outcomes: Iterable[str]) -> str:
    """Old against new mean reward per compared task; one point each up to :data:`POINTS_CAP` tasks."""
    drawn = points(summary, outcomes)
    if not drawn:
        return '<p class="caption">No task has a mean reward on both sides: nothing to draw.</p>'
    low, high = _axis([value for point in drawn for value in (point.old, point.new)])
    span = high - low
    inner = SIZE - 2 * PAD

    def x(value: float) -> float:
        return PAD + (value - low) / span * inner

    def y(value: float) -> float:
        return SIZE - PAD - (value - low) / span * inner

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="scatter" viewBox="0 0 {SIZE} {SIZE}" '
        f'width="{SIZE}" height="{SIZE}" role="img" aria-label="old against new mean reward per task">',
        _frame(x, y, low, high),
    ]
    binned = len(drawn) > POINTS_CAP
    one_by_one = [p for p in drawn if p.flip][:FLIP_POINTS] if binned else drawn
    chosen = {id(p) for p in one_by_one}
    rest = [p for p in drawn if id(p) not in chosen]
    if rest:
        parts.append(_cells(rest, low, span, inner))
    tooltips = len(drawn) <= TOOLTIPS_CAP
    # identical tasks first, so flips are drawn on top
    for index, point in sorted(enumerate(one_by_one), key=lambda item: item[1].flip):
        jx, jy = (_jitter(index, 1) * JITTER * span, _jitter(index, 2) * JITTER * span)
        cls = CLASSES[point.kind][0]
        radius = 4.5 if point.flip else 3
        circle = f'<circle cx="{x(point.old + jx):.1f}" cy="{y(point.new + jy):.1f}" r="{radius}" class="{cls}"'
        if point.flip or tooltips:
            label = html_text(clipped(point.task, 80))
            circle += f"><title>{label}: old {point.old:.4g}, new {point.new:.4g}</title></circle>"
        else:
            circle += "/>"
        parts.append(circle)
    parts.append("</svg>")
    counts: dict[str, int] = {}
    for point in drawn:
        counts[point.kind] = counts.get(point.kind, 0) + 1
    legend = " ".join(
        f'<span class="key {CLASSES[kind][0]}"></span>{CLASSES[kind][1]} {counts[kind]}'
        for kind in CLASSES
        if kind in counts
    )
    how = (
        f"{len(drawn)} compared tasks; beyond {POINTS_CAP:,} they are counted in a {GRID}&#215;{GRID} grid "
        f"(darker: more tasks), the first {len(one_by_one)} flips drawn one by one"
        if binned
        else f"{len(drawn)} compared tasks, one point each (moved by up to {JITTER:.0%} so equal ones stay visible)"
    )
    return (
        f'<figure class="picture">{"".join(parts)}<figcaption>Each task\'s mean reward, old (across) '
        f"against new (up): on the diagonal the servers agree, below it the new one scores lower. "
        f"{how}. <br>{legend}</figcaption></figure>"
    )


def _frame(x: Callable[[float], float], y: Callable[[float], float], low: float, high: float) -> str:
    """The axes, the diagonal and the ticks."""
    lines = [
        f'<rect x="{PAD}" y="{PAD}" width="{SIZE - 2 * PAD}" height="{SIZE - 2 * PAD}" class="plot"/>',
        f'<line x1="{x(low):.1f}" y1="{y(low):.1f}" x2="{x(high):.1f}" y2="{y(high):.1f}" class="diagonal"/>',
    ]
    for step in range(5):
        value = low + (high - low) * step / 4
        lines.append(
            f'<text x="{x(value):.1f}" y="{SIZE - PAD + 16}" class="tick" text-anchor="middle">{_number(value)}</text>'
        )
        lines.append(
            f'<text x="{PAD - 6}" y="{y(value) + 4:.1f}" class="tick" text-anchor="end">{_number(value)}</text>'
        )
    lines.append(f'<text x="{SIZE / 2}" y="{SIZE - 8}" class="axis" text-anchor="middle">old mean reward</text>')
    lines.append(
        f'<text x="14" y="{SIZE / 2}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 14 {SIZE / 2})">new mean reward</text>'
    )
    return "".join(lines)


def _cells(rest: list[Point], low: float, span: float, inner: float) -> str:
    """The tasks not drawn one by one, counted per grid cell and class: one square a non-empty cell."""
    cells: dict[tuple[int, int, bool], int] = {}
    for point in rest:
        column = min(GRID - 1, int((point.old - low) / span * GRID))
        row = min(GRID - 1, int((point.new - low) / span * GRID))
        key = (column, row, point.flip)
        cells[key] = cells.get(key, 0) + 1
    most = max(cells.values())
    side = inner / GRID
    squares = []
    for (column, row, flip), count in sorted(cells.items()):
        shade = 0.25 + 0.75 * math.log1p(count) / math.log1p(most)
        squares.append(
            f'<rect x="{PAD + column * side:.1f}" y="{SIZE - PAD - (row + 1) * side:.1f}" '
            f'width="{side:.1f}" height="{side:.1f}" class="{"cell-flip" if flip else "cell"}" '
            f'fill-opacity="{shade:.2f}"><title>{count} task(s)</title></rect>'
        )
    return "".join(squares)


class Interval(NamedTuple):
    """What :func:`interval_svg` draws: the difference, its 95% interval, margin mode's bounds and margin."""

    delta: float
    ci95: tuple[float, float]
    bounds: Optional[tuple[float, float]]
    margin: Optional[float]


def interval_of(summary: Summary) -> Optional[Interval]:
    """The difference's figures, or None when the summary has none (nothing compared, one task)."""
    paired = summary.paired
    if paired.delta is None or paired.ci95 is None:
        return None
    decision = summary.equivalence
    bounds = None
    if decision is not None and decision.lower_bound is not None and decision.upper_bound is not None:
        bounds = (decision.lower_bound, decision.upper_bound)
    return Interval(paired.delta, paired.ci95, bounds, decision.margin if decision is not None else None)


def interval_svg(summary: Summary) -> Optional[str]:
    """The mean difference (new - old) with its 95% interval, against the ±margin band in margin mode."""
    shown = interval_of(summary)
    if shown is None:
        return None
    width, height, left, right = 560, 130, 30, 30
    values = [shown.delta, *shown.ci95, 0.0]
    if shown.bounds is not None:
        values.extend(shown.bounds)
    if shown.margin is not None:
        values.extend((-shown.margin, shown.margin))
    finite = [v for v in values if math.isfinite(v)]
    low, high = min(finite), max(finite)
    pad = (high - low) * 0.1 or 0.1
    low, high = low - pad, high + pad

    def x(value: float) -> float:
        value = min(max(value, low), high)  # an infinite bound is drawn at the edge
        return left + (value - low) / (high - low) * (width - left - right)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="interval" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="mean difference and its interval">'
    ]
    if shown.margin is not None:
        m = shown.margin
        parts.append(f'<rect x="{x(-m):.1f}" y="18" width="{x(m) - x(-m):.1f}" height="70" class="band"/>')
        parts.append(f'<text x="{x(-m) - 2:.1f}" y="14" class="tick" text-anchor="end">&#8722;{m:g}</text>')
        parts.append(f'<text x="{x(m) + 2:.1f}" y="14" class="tick" text-anchor="start">+{m:g}</text>')
    parts.append(f'<line x1="{x(0):.1f}" y1="18" x2="{x(0):.1f}" y2="88" class="zero"/>')
    lo95, hi95 = shown.ci95
    parts.append(f'<line x1="{x(lo95):.1f}" y1="42" x2="{x(hi95):.1f}" y2="42" class="ci"/>')
    for end in (lo95, hi95):
        parts.append(f'<line x1="{x(end):.1f}" y1="36" x2="{x(end):.1f}" y2="48" class="ci"/>')
    parts.append(
        f'<text x="{(x(lo95) + x(hi95)) / 2:.1f}" y="32" class="tick" text-anchor="middle">'
        f"95% interval [{lo95:.4f}, {hi95:.4f}]</text>"
    )
    if shown.bounds is not None:
        lower, upper = shown.bounds
        parts.append(f'<line x1="{x(lower):.1f}" y1="66" x2="{x(upper):.1f}" y2="66" class="bounds"/>')
        parts.append(
            f'<text x="{(x(lower) + x(upper)) / 2:.1f}" y="84" class="tick" text-anchor="middle">'
            f"one-sided 95% bounds [{lower:.4f}, {upper:.4f}]</text>"
        )
    parts.append(f'<circle cx="{x(shown.delta):.1f}" cy="42" r="5" class="delta"/>')
    parts.append(
        f'<text x="{x(shown.delta):.1f}" y="106" class="axis" text-anchor="middle">delta {shown.delta:+.4f}</text>'
    )
    parts.append(
        f'<text x="{width / 2}" y="124" class="tick" text-anchor="middle">mean reward difference, '
        "new &#8722; old</text></svg>"
    )
    words = (
        "inside the band the servers are shown equivalent within the margin"
        if shown.margin is not None
        else "no margin given: the interval against 0 (with --parity-margin, against the ±margin band)"
    )
    return (
        f'<figure class="picture">{"".join(parts)}<figcaption>The mean difference over the compared '
        f"tasks with its 95% interval{' and the one-sided 95% bounds margin mode decides on' if shown.bounds else ''}; "
        f"{words}.</figcaption></figure>"
    )

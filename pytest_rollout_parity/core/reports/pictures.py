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


def _axis(values: list[float]) -> tuple[float, float]:
    low, high = min([0.0, *values]), max([1.0, *values])
    return low, high if high > low else low + 1.0


def _number(value: float) -> str:
    return f"{value:.3g}"


class Group(NamedTuple):
    """The tasks of one outcome at one position, drawn as one circle."""

    old: float
    new: float
    kind: str
    flip: bool
    tasks: list[str]


def groups(drawn: Iterable[Point]) -> list[Group]:
    """The points grouped by position (to 9 decimals: means equal but for float rounding coincide)
    and class, in order of first appearance."""
    found: dict[tuple[float, float, str], Group] = {}
    for point in drawn:
        key = (round(point.old, 9), round(point.new, 9), point.kind)
        group = found.get(key)
        if group is None:
            found[key] = Group(point.old, point.new, point.kind, point.flip, [point.task])
        else:
            group.tasks.append(point.task)
    return list(found.values())


def _radius(count: int, flip: bool) -> float:
    """A circle's radius: its area grows with the tasks it stands for (at most four times the smallest's width)."""
    return min((4.5 if flip else 3.5) * math.sqrt(count), 16.0)


def _group_title(group: Group, tooltips: bool) -> str:
    """The circle's tooltip: its task(s) and position (past :data:`TOOLTIPS_CAP` tasks, a lone
    identical task's circle has none, to keep the page small)."""
    where = f"old {group.old:.4g}, new {group.new:.4g}"
    count = len(group.tasks)
    named = tooltips or group.flip
    if count == 1:
        return f"<title>{html_text(clipped(group.tasks[0], 80))}: {where}</title>" if named else ""
    labels = ", ".join(html_text(clipped(task, 80)) for task in group.tasks[:GROUP_LABELS])
    more = f" and {count - GROUP_LABELS} more" if count > GROUP_LABELS else ""
    return f"<title>{count} tasks at {where}" + (f": {labels}{more}" if named else "") + "</title>"


def _circles(drawn: list[Group], x: Callable[[float], float], y: Callable[[float], float], tooltips: bool) -> list[str]:
    """One circle a group; groups at one position set around it, each count beside its circle."""
    at: dict[tuple[float, float], list[Group]] = {}
    for group in drawn:
        at.setdefault((group.old, group.new), []).append(group)
    order = list(CLASSES)
    parts = []
    # identical tasks first, so flips are drawn on top
    for (old, new), here in sorted(at.items(), key=lambda item: any(g.flip for g in item[1])):
        here.sort(key=lambda group: order.index(group.kind))
        for index, group in enumerate(here):
            cx, cy = x(old), y(new)
            if len(here) > 1:
                angle = 2 * math.pi * index / len(here) - math.pi / 2
                cx, cy = cx + APART * math.cos(angle), cy + APART * math.sin(angle)
            count = len(group.tasks)
            radius = _radius(count, group.flip)
            parts.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" class="{CLASSES[group.kind][0]}" '
                f'data-tasks="{count}">{_group_title(group, tooltips)}</circle>'
            )
            if count > 1:
                parts.append(f'<text x="{cx + radius + 2:.1f}" y="{cy - radius + 2:.1f}" class="count">{count}</text>')
    return parts


def scatter_svg(summary: Summary, outcomes: Iterable[str]) -> str:
    """Old against new mean reward per compared task; one circle a position and outcome up to
    :data:`POINTS_CAP` tasks."""
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
    parts.extend(_circles(groups(one_by_one), x, y, len(drawn) <= TOOLTIPS_CAP))
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
        f"(darker: more tasks), the first {len(one_by_one)} flips drawn as circles"
        if binned
        else f"{len(drawn)} compared tasks"
    )
    return (
        f'<figure class="picture">{"".join(parts)}<figcaption>Each task\'s mean reward, old (across) '
        f"against new (up): on the diagonal the servers agree, below it the new one scores lower. "
        f"{how}. Tasks of one outcome at one position are one circle, its area growing with their number "
        f"and the number beside it; outcomes that share a position sit around it. <br>{legend}</figcaption></figure>"
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
    """What :func:`interval_svg` draws: the difference and the interval that decides, with its name;
    in margin mode the one-sided bounds, the margin and whether the bounds lie inside it."""

    delta: float
    low: float
    high: float
    name: str
    margin: Optional[float]
    inside: Optional[bool]


def interval_of(summary: Summary) -> Optional[Interval]:
    """The difference's figures, or None when the summary has none (nothing compared, one task)."""
    paired = summary.paired
    if paired.delta is None or paired.ci95 is None:
        return None
    decision = summary.equivalence
    if decision is not None and decision.lower_bound is not None and decision.upper_bound is not None:
        return Interval(
            paired.delta,
            decision.lower_bound,
            decision.upper_bound,
            "one-sided 95% bounds",
            decision.margin,
            decision.passed,
        )
    low, high = paired.ci95
    return Interval(paired.delta, low, high, "95% interval", None, None)


def interval_svg(summary: Summary) -> Optional[str]:
    """The mean difference (new - old) with what decides on it: in margin mode the one-sided 95% bounds
    against the ±margin band (green inside, red not), else the 95% interval against 0."""
    shown = interval_of(summary)
    if shown is None:
        return None
    width, height, left, right = 560, 120, 30, 30
    values = [shown.delta, shown.low, shown.high, 0.0]
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
        f'width="{width}" height="{height}" role="img" aria-label="mean difference and {shown.name}">'
    ]
    if shown.margin is not None:
        m = shown.margin
        parts.append(f'<rect x="{x(-m):.1f}" y="18" width="{x(m) - x(-m):.1f}" height="56" class="band"/>')
        parts.append(f'<text x="{x(-m) - 2:.1f}" y="14" class="tick" text-anchor="end">&#8722;{m:g}</text>')
        parts.append(f'<text x="{x(m) + 2:.1f}" y="14" class="tick" text-anchor="start">+{m:g}</text>')
    parts.append(f'<line x1="{x(0):.1f}" y1="18" x2="{x(0):.1f}" y2="74" class="zero"/>')
    style = "ci" if shown.inside is None else ("bounds-in" if shown.inside else "bounds-out")
    parts.append(f'<line x1="{x(shown.low):.1f}" y1="46" x2="{x(shown.high):.1f}" y2="46" class="{style}"/>')
    for end in (shown.low, shown.high):
        parts.append(f'<line x1="{x(end):.1f}" y1="38" x2="{x(end):.1f}" y2="54" class="{style}"/>')
    parts.append(
        f'<text x="{(x(shown.low) + x(shown.high)) / 2:.1f}" y="34" class="tick" text-anchor="middle">'
        f"{shown.name} [{shown.low:.4f}, {shown.high:.4f}]</text>"
    )
    parts.append(f'<circle cx="{x(shown.delta):.1f}" cy="46" r="5" class="delta"/>')
    parts.append(
        f'<text x="{x(shown.delta):.1f}" y="92" class="axis" text-anchor="middle">delta {shown.delta:+.4f}</text>'
    )
    parts.append(
        f'<text x="{width / 2}" y="112" class="tick" text-anchor="middle">mean reward difference, '
        "new &#8722; old</text></svg>"
    )
    if shown.inside is None:
        words = (
            "the mean difference over the compared tasks with its 95% interval, against 0 "
            "(with a margin, margin mode draws its one-sided bounds against the ±margin band)"
        )
    else:
        words = (
            "the mean difference over the compared tasks with the one-sided 95% bounds the equivalence test "
            f"decides on, against ±{shown.margin:g}: "
            + (
                "both bounds lie inside the band, so the servers are shown equivalent within the margin"
                if shown.inside
                else "a bound lies outside the band, so the servers are not shown equivalent within the margin"
            )
            + " (the 95% interval is in the statistics below)"
        )
    return f'<figure class="picture">{"".join(parts)}<figcaption>{words[0].upper()}{words[1:]}.</figcaption></figure>'

"""The HTML report (`--parity-html`) and its pictures: pure functions of the summary."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.html_page import EVIDENCE_ROWS, FLIP_ROWS, render_html, report_body
from pytest_rollout_parity.core.reports.pictures import FLIP_POINTS, POINTS_CAP, interval_svg, scatter_svg
from pytest_rollout_parity.core.reports.summary import Files, RunInfo, Summary, build_summary

SVG = "{http://www.w3.org/2000/svg}"


def _rows(rewards: dict[str, list[float]]) -> list[dict[str, object]]:
    return [
        {"task_id": task, "reward": reward, "_ng_rollout_index": i}
        for task, values in rewards.items()
        for i, reward in enumerate(values)
    ]


def _summary(
    old: dict[str, list[float]], new: dict[str, list[float]], margin: float | None = None, **run: object
) -> Summary:
    result = compare_rollouts(_rows(old), _rows(new))
    info = RunInfo(files=Files("old.jsonl", "new.jsonl"), **run) if run else None  # type: ignore[arg-type]
    return build_summary(result, info, margin=margin)


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(block) for block in re.findall(r"<svg .*?</svg>", page, flags=re.S)]


def _circles(svg: ET.Element) -> list[ET.Element]:
    return list(svg.iter(f"{SVG}circle"))


class _Strict(HTMLParser):
    """Collects the tags and the external references a page has."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.references: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.references.extend(value or "" for name, value in attrs if name in ("src", "href", "xlink:href"))


def test_the_page_holds_the_verdict_statistics_flips_and_lists() -> None:
    old = {"same": [1.0], "down": [1.0, 1.0], "up": [0.0], "gone": [1.0]}
    new = {"same": [1.0], "down": [0.0, 1.0], "up": [1.0], "extra": [1.0]}
    summary = _summary(old, new, evidence={"down": "down: new regressed\n    | the log's last line"})
    page = render_html(summary, exit_status=1)
    assert page.startswith("<!DOCTYPE html>") and "<title>rollout parity: FAIL</title>" in page
    assert '<span class="verdict v-fail">FAIL</span>' in page and "Decided by:" in page
    assert "paired over 3 compared tasks" in page
    rows = re.findall(r'<tr class="flip">(.*?)</tr>', page, flags=re.S)
    assert len(rows) == 2
    assert re.search(
        r'<code>down</code>.*<td class="n">1</td><td class="n">0.5</td><td class="n">2 / 2</td>'
        r'<td class="o-failed">failed</td>',
        rows[0],
        flags=re.S,
    )
    assert page.count("the log&#x27;s last line") == 1  # each flip's evidence once
    assert "<code>gone</code>: only in the old file" in page and "<code>extra</code>: only in the new file" in page
    # without the evidence (pytest-html shows it in the flip's row), the rest is the same
    assert "the log" not in report_body(summary, with_evidence=False)


def test_the_page_opens_offline_and_parses() -> None:
    summary = _summary({"a": [1.0], "b": [0.0]}, {"a": [0.0], "b": [0.0]}, margin=0.1)
    page = render_html(summary)
    parser = _Strict()
    parser.feed(page)
    assert parser.references == [] and "script" not in parser.tags and "link" not in parser.tags
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert len(_svgs(page)) == 2  # the scatter and the interval, each well-formed XML


HOSTILE = [
    "<script>alert(1)</script>",
    "</svg><img src=x onerror=alert(1)>",
    "a&b\"c'd",
    "\x1b[2J\r",
    "[x](https://evil.example)",
]


@pytest.mark.parametrize("label", HOSTILE)
def test_labels_are_escaped_everywhere_on_the_page(label: str) -> None:
    summary = _summary(
        {label: [1.0], "ok": [1.0]},
        {label: [0.0], "ok": [1.0]},
        evidence={label: f"{label}: new regressed\n    | {label}"},
    )
    page = render_html(summary)
    parser = _Strict()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags and parser.references == []
    assert "\x1b" not in page and "\r" not in page
    for svg in _svgs(page):  # the label inside the picture's tooltip keeps the SVG well-formed
        assert svg.tag == f"{SVG}svg"


def test_every_compared_task_is_a_point_at_10_tasks() -> None:
    old = {f"t{i}": [1.0] for i in range(10)}
    new = {f"t{i}": [0.0 if i < 3 else 1.0] for i in range(10)}
    scatter = _svgs(scatter_svg(_summary(old, new), ["failed"] * 3 + ["passed"] * 7))[0]
    circles = _circles(scatter)
    assert len(circles) == 10
    assert sum(circle.get("class") == "p-regressed" for circle in circles) == 3
    titles = {title.text for title in scatter.iter(f"{SVG}title")}
    assert "t0: old 1, new 0" in titles  # a reader can hover a point to see which task it is


def test_ten_thousand_tasks_are_ten_thousand_points_within_a_megabyte() -> None:
    rng = random.Random(7)
    n = POINTS_CAP
    old = {f"t{i}": [rng.choice((0.0, 1.0)) for _ in range(3)] for i in range(n)}
    new = {f"t{i}": [rng.choice((0.0, 1.0)) for _ in range(3)] for i in range(n)}
    summary = _summary(old, new)
    page = render_html(summary)
    scatter = _svgs(page)[0]
    compared = summary.compared
    assert len(_circles(scatter)) == compared == n
    assert len(page.encode()) < 1_000_000


def test_twice_the_points_cap_is_binned_flips_drawn_and_the_page_small() -> None:
    """Past the cap the page no longer grows with the tasks: 20,000 tasks fit in 400 kB (about 100 kB
    today), so a page that spent 15 bytes a task would fail here (100,000 tasks cost 5 times as much
    to build and show nothing more)."""
    rng = random.Random(11)
    n = 2 * POINTS_CAP
    old = {f"task-{i}": [rng.random()] for i in range(n)}
    new = {f"task-{i}": [value[0] if i % 50 else rng.random() for value in [old[f"task-{i}"]]] for i in range(n)}
    summary = _summary(old, new)
    page = render_html(summary)
    assert len(page.encode()) <= 400_000
    scatter = _svgs(page)[0]
    flips = summary.counts.flipped
    assert flips > FLIP_POINTS
    assert len(_circles(scatter)) == FLIP_POINTS  # the first flips one by one, the rest counted in cells
    counted = sum(
        int(title.text.split()[0])
        for title in scatter.iter(f"{SVG}title")
        if title.text and title.text.endswith("task(s)")
    )
    assert counted + FLIP_POINTS == summary.compared == n  # every task present, once
    assert page.count('<tr class="flip">') == FLIP_ROWS and f"and {flips - FLIP_ROWS} more" in page


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=40))
def test_each_compared_task_is_drawn_once(pairs: list[tuple[float, float]]) -> None:
    old = {f"t{i}": [a] for i, (a, _) in enumerate(pairs)}
    new = {f"t{i}": [b] for i, (_, b) in enumerate(pairs)}
    summary = _summary(old, new)
    scatter = _svgs(scatter_svg(summary, ["passed"] * len(pairs)))[0]
    assert len(_circles(scatter)) == len(pairs)


def test_the_interval_is_drawn_against_the_margin_band() -> None:
    old = {f"t{i}": [1.0, 0.0, 1.0] for i in range(30)}
    new = {f"t{i}": [1.0, 0.0, 1.0 if i % 3 else 0.0] for i in range(30)}
    summary = _summary(old, new, margin=0.05)
    svg = interval_svg(summary)
    assert svg is not None
    drawn = _svgs(svg)[0]
    band = [rect for rect in drawn.iter(f"{SVG}rect") if rect.get("class") == "band"]
    assert len(band) == 1
    aggregate = summary.equivalence
    assert aggregate is not None and aggregate.lower_bound is not None and aggregate.upper_bound is not None
    assert f"[{aggregate.lower_bound:.4f}, {aggregate.upper_bound:.4f}]" in svg
    assert "&#8722;0.05" in svg and "+0.05" in svg
    # the band lies where ±M is on the axis: the delta's dot sits left of it (the difference is -0.11)
    dot = next(circle for circle in _circles(drawn) if circle.get("class") == "delta")
    assert float(dot.get("cx", "0")) < float(band[0].get("x", "0"))


def test_only_the_first_flips_carry_their_evidence() -> None:
    n = EVIDENCE_ROWS + 5
    old = {f"t{i:02d}": [1.0] for i in range(n)}
    new = {f"t{i:02d}": [0.0] for i in range(n)}
    summary = _summary(old, new, evidence={f"t{i:02d}": f"EVIDENCE-{i:02d}" for i in range(n)})
    page = render_html(summary)
    assert page.count("<details>") == EVIDENCE_ROWS
    assert f"EVIDENCE-{EVIDENCE_ROWS - 1:02d}" in page and f"EVIDENCE-{EVIDENCE_ROWS:02d}" not in page

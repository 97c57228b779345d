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
from pytest_rollout_parity.core.reports.html_page import (
    EVIDENCE_ROWS,
    FLIP_ROWS,
    IDENTICAL_ROWS,
    POINTS_CAP,
    Audit,
    interval_svg,
    render_html,
    report_body,
    scatter_svg,
)
from pytest_rollout_parity.core.reports.summary import BySide, RunInfo, RunOutcome, SideFile, Summary, build_summary

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
    info = RunInfo(files=BySide(SideFile("old.jsonl"), SideFile("new.jsonl")), **run) if run else None  # type: ignore[arg-type]
    return build_summary(result, info, margin=margin)


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(block) for block in re.findall(r"<svg .*?</svg>", page, flags=re.S)]


def _circles(svg: ET.Element) -> list[ET.Element]:
    return list(svg.iter(f"{SVG}circle"))


def _tasks_drawn(svg: ET.Element) -> int:
    """How many tasks the scatter's circles stand for (each says so)."""
    return sum(int(circle.get("data-tasks", "0")) for circle in _circles(svg))


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
        r'<code>down</code>.*<td class="n">2/2 &#8594; 1/2</td><td class="o-failed">failed</td>', rows[0], flags=re.S
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
    scatter = _svgs(scatter_svg(_summary(old, new)))[0]
    assert _tasks_drawn(scatter) == 10
    # the three regressions at (1, 0) are one circle that says 3, larger than a lone task's
    regressed = [circle for circle in _circles(scatter) if circle.get("class") == "p-regressed"]
    assert [circle.get("data-tasks") for circle in regressed] == ["3"]
    counts = [text.text for text in scatter.iter(f"{SVG}text") if text.get("class") == "count"]
    assert sorted(counts, key=str) == ["3", "7"]
    titles = {title.text for title in scatter.iter(f"{SVG}title")}
    assert "3 tasks at old 1, new 0: t0, t1, t2" in titles  # a reader can hover a circle to see which tasks
    lone = _svgs(scatter_svg(_summary({"a": [1.0], "b": [1.0]}, {"a": [0.0], "b": [1.0]})))[0]
    assert float(regressed[0].get("r", "0")) > max(float(c.get("r", "0")) for c in _circles(lone))
    assert "a: old 1, new 0" in {title.text for title in lone.iter(f"{SVG}title")}


def test_ten_thousand_tasks_are_ten_thousand_points_within_a_megabyte() -> None:
    rng = random.Random(7)
    n = POINTS_CAP
    old = {f"t{i}": [rng.choice((0.0, 1.0)) for _ in range(3)] for i in range(n)}
    new = {f"t{i}": [rng.choice((0.0, 1.0)) for _ in range(3)] for i in range(n)}
    summary = _summary(old, new)
    page = render_html(summary)
    scatter = _svgs(page)[0]
    assert _tasks_drawn(scatter) == summary.compared == n
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
    assert flips > FLIP_ROWS
    assert _tasks_drawn(scatter) == FLIP_ROWS  # the first flips as circles, the rest counted in cells
    counted = sum(
        int(title.text.split()[0])
        for title in scatter.iter(f"{SVG}title")
        if title.text and title.text.endswith("task(s)")
    )
    assert counted + FLIP_ROWS == summary.compared == n  # every task present, once
    assert page.count('<tr class="flip">') == FLIP_ROWS and f"and {flips - FLIP_ROWS} more" in page


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=40))
def test_each_compared_task_is_drawn_once(pairs: list[tuple[float, float]]) -> None:
    old = {f"t{i}": [a] for i, (a, _) in enumerate(pairs)}
    new = {f"t{i}": [b] for i, (_, b) in enumerate(pairs)}
    summary = _summary(old, new)
    scatter = _svgs(scatter_svg(summary))[0]
    assert _tasks_drawn(scatter) == len(pairs)
    # no circle hides another: each stands at a place of its own
    places = [(circle.get("cx"), circle.get("cy")) for circle in _circles(scatter)]
    assert len(places) == len(set(places))


def _bar(svg: str) -> tuple[ET.Element, list[float], tuple[float, float]]:
    """The interval picture: its drawing, the decisive bar's ends (x) and the band's (x)."""
    drawn = _svgs(svg)[0]
    bar = next(line for line in drawn.iter(f"{SVG}line") if line.get("y1") == line.get("y2") == "46")
    ends = sorted(float(bar.get(name, "0")) for name in ("x1", "x2"))
    band = next(rect for rect in drawn.iter(f"{SVG}rect") if rect.get("class") == "band")
    left = float(band.get("x", "0"))
    return bar, ends, (left, left + float(band.get("width", "0")))


@pytest.mark.parametrize(("flipped", "margin"), [(10, 0.05), (1, 0.3), (0, 0.1)])
def test_the_interval_picture_draws_the_bounds_that_decide(flipped: int, margin: float) -> None:
    """Margin mode draws the one-sided bounds against ±M: the bar lies inside the band exactly when
    the verdict says equivalent, and the text says so in the same words."""
    old = {f"t{i}": [1.0, 0.0, 1.0] for i in range(30)}
    new = {f"t{i}": [1.0, 0.0, 1.0 if i >= flipped else 0.0] for i in range(30)}
    summary = _summary(old, new, margin=margin)
    decision = summary.equivalence
    assert decision is not None and decision.lower_bound is not None and decision.upper_bound is not None
    svg = interval_svg(summary)
    assert svg is not None
    bar, (low, high), (band_low, band_high) = _bar(svg)
    inside = band_low <= low and high <= band_high
    assert inside == decision.passed
    assert bar.get("class") == ("bounds-in" if decision.passed else "bounds-out")
    assert f"one-sided 95% bounds [{decision.lower_bound:.4f}, {decision.upper_bound:.4f}]" in svg
    assert "95% interval [" not in svg  # the interval that does not decide is not drawn
    assert ("so the servers are shown equivalent" in svg) == decision.passed
    assert f"&#8722;{margin:g}" in svg and f"+{margin:g}" in svg


def test_without_a_margin_the_95_interval_is_drawn_against_zero() -> None:
    old = {f"t{i}": [1.0, 0.0] for i in range(20)}
    new = {f"t{i}": [1.0, 0.0 if i % 4 else 1.0] for i in range(20)}
    summary = _summary(old, new)
    svg = interval_svg(summary)
    assert svg is not None and summary.paired.ci95 is not None
    low, high = summary.paired.ci95
    assert f"95% interval [{low:.4f}, {high:.4f}]" in svg and 'class="band"' not in svg


def test_only_the_first_flips_carry_their_evidence() -> None:
    n = EVIDENCE_ROWS + 5
    old = {f"t{i:02d}": [1.0] for i in range(n)}
    new = {f"t{i:02d}": [0.0] for i in range(n)}
    summary = _summary(old, new, evidence={f"t{i:02d}": f"EVIDENCE-{i:02d}" for i in range(n)})
    page = render_html(summary)
    assert page.count("<details>") == EVIDENCE_ROWS
    assert f"EVIDENCE-{EVIDENCE_ROWS - 1:02d}" in page and f"EVIDENCE-{EVIDENCE_ROWS:02d}" not in page


def test_flips_show_pass_counts_and_a_continuous_range() -> None:
    old = {"binary": [1.0] * 5, "scores": [0.2, 0.9, 0.4], "same": [1.0]}
    new = {"binary": [0.0] * 5, "scores": [0.1, 0.3], "same": [1.0]}
    page = render_html(_summary(old, new))
    assert "5/5 &#8594; 0/5" in page
    assert "0.5 [0.2, 0.9] &#8594; 0.2 [0.1, 0.3]" in page
    assert "repeats" not in page


def test_the_statistics_are_rows_of_a_table() -> None:
    old = {f"t{i}": [1.0, 0.0, 1.0] for i in range(30)}
    new = {f"t{i}": [1.0, 0.0, 1.0 if i % 3 else 0.0] for i in range(30)}
    summary = _summary(old, new, margin=0.05)
    page = render_html(summary)
    table = re.search(r'<table class="statistics">(.*?)</table>', page, flags=re.S)
    assert table is not None and "<pre>" not in page  # no preformatted block to run off the edge
    rows = dict(re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", table.group(1)))
    assert rows["delta"] == f"{summary.paired.delta:.4f}"
    assert rows["sign test"].startswith("0 better, 10 worse")
    assert rows["aggregate at margin ±0.05"].startswith("FAILED (not shown equivalent)")


def test_the_page_points_to_the_json_option() -> None:
    """Notes, the 'more' line and the per-task noise row name the option that writes every task."""
    n = FLIP_ROWS + 3
    old = {f"t{i}": [1.0, 1.0] for i in range(n)}
    new = {f"t{i}": [0.0, 1.0] for i in range(n)}
    note = "a long note " * 200  # cut: its pointer to every word is in the same words
    page = render_html(_summary(old, new, outcome=RunOutcome(None, 1, {}, known_flips="k.txt"), notes=(note,)))
    assert "{" + "json}" not in page
    assert "more (see --parity-json)" in page and "note a ... (see --parity-json)" in page
    assert "hooks and the known-flips list changed 1 verdict(s)" in page
    assert "(p_value in --parity-json)" in page


def test_identical_tasks_are_listed_folded_and_capped() -> None:
    few = render_html(_summary({"a": [1.0], "b": [0.0]}, {"a": [1.0], "b": [1.0]}))
    assert re.search(r'<details class="identical"><summary>identical tasks \(1\)</summary><ul><li><code>a</code>', few)
    n = IDENTICAL_ROWS + 7
    many = render_html(_summary({f"t{i}": [1.0] for i in range(n)}, {f"t{i}": [1.0] for i in range(n)}))
    listed = re.search(r'<details class="identical">(.*?)</details>', many, flags=re.S)
    assert listed is not None and listed.group(1).count("<li><code>") == IDENTICAL_ROWS
    assert "and 7 more" in listed.group(1)


def test_the_footer_names_the_run_its_inputs_and_escapes_them() -> None:
    summary = _summary(
        {"a": [1.0]}, {"a": [0.0]}, outcome=RunOutcome(None, 0, {}, inputs={"old": "sha256:00be:12:1", "new": None})
    )
    audit = Audit(command="pytest --parity-old='<x>.jsonl'", version="9.9.9", started="2026-01-02T03:04:05+00:00")
    page = render_html(summary, audit=audit)
    footer = re.search(r"<footer>(.*?)</footer>", page, flags=re.S)
    assert footer is not None
    text = footer.group(1)
    assert "pytest --parity-old=&#x27;&lt;x&gt;.jsonl&#x27;" in text and "<x>" not in text
    assert "pytest-rollout-parity 9.9.9; run started 2026-01-02T03:04:05+00:00" in text
    assert (
        "old: <code>old.jsonl</code> (sha256:00be:12:1)" in text and "new: <code>new.jsonl</code> (no digest)" in text
    )
    assert "<footer>" not in render_html(summary)  # no run known: no footer


def test_a_verifier_disagreement_is_its_own_point_and_legend_entry() -> None:
    """Re-verified tasks (each rollout's trajectory the same on both sides): one whose rescored
    rollouts cancel (no winner) and one rescored 1 -> 0 are verifier disagreements, not improvements
    or regressions."""

    def rows(rewards: dict[str, list[float]]) -> list[dict[str, object]]:
        return [
            {
                "task_id": task,
                "reward": reward,
                "_ng_rollout_index": i,
                "response": {"output": [{"text": f"{task}{i}"}]},
            }
            for task, values in rewards.items()
            for i, reward in enumerate(values)
        ]

    old = {"cancel": [1.0, 0.0], "down": [1.0, 1.0], "same": [1.0, 1.0]}
    new = {"cancel": [0.0, 1.0], "down": [1.0, 0.0], "same": [1.0, 1.0]}
    picture = scatter_svg(build_summary(compare_rollouts(rows(old), rows(new))))
    kinds = sorted(str(circle.get("class")) for circle in _circles(_svgs(picture)[0]))
    assert kinds == ["p-disagree", "p-disagree", "p-passed"]
    assert "verifier disagreement (fails) 2" in picture
    assert ".p-disagree{" in render_html(build_summary(compare_rollouts(rows(old), rows(new))))

"""The Markdown summary and the GitHub annotations: pure functions of the summary."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.annotations import annotation_lines, escape_data, escape_property
from pytest_rollout_parity.core.reports.markdown import BUDGET, FLIP_CAP, TEXT_CAP, render_markdown, verdict_line
from pytest_rollout_parity.core.reports.summary import (
    BySide,
    GateItem,
    RunInfo,
    RunOutcome,
    SideFile,
    Summary,
    build_summary,
)


def _summary(old: dict[str, float], new: dict[str, float], **run: object) -> Summary:
    result = compare_rollouts(
        [{"task_id": t, "reward": r} for t, r in old.items()], [{"task_id": t, "reward": r} for t, r in new.items()]
    )
    info = RunInfo(files=BySide(SideFile("old.jsonl"), SideFile("new.jsonl")), **run) if run else None  # type: ignore[arg-type]
    return build_summary(result, info)


def _with_texts(summary: Summary, texts: dict[str, str]) -> Summary:
    """The summary with these flips' report texts, as a run's items give them."""
    return replace(summary, tasks=tuple(replace(task, evidence=texts.get(task.task)) for task in summary.tasks))


def test_verdict_first_then_table_flips_paired() -> None:
    summary = _summary(
        {"a": 1.0, "b": 1.0, "c": 0.0, "gone": 1.0},
        {"a": 1.0, "b": 0.0, "c": 1.0},
        outcome=RunOutcome(None, 0, {"failed": 2, "passed": 1, "xfailed": 1}),
    )
    text = render_markdown(
        _with_texts(summary, {"b": "b: new regressed: old=1.0 new=0.0\n    | <tail> & more"}), exit_status=1
    )
    lines = text.splitlines()
    assert lines[0] == "## rollout parity"
    assert lines[2] == "**rollout parity: FAIL**: 1 task regressed, 1 improved, 1 missing; 1 identical (exit status 1)"
    assert "| flipped | 2 | new regressed 1, new improved 1 |" in lines
    assert "| missing | 1 | old only 1, new only 0 |" in lines
    # b's text folded and HTML-escaped; c ran without a text: a plain line
    assert "<summary><code>b</code>: <strong>failed</strong>: new regressed: old=1.0 new=0.0</summary>" in lines
    assert "    | &lt;tail&gt; &amp; more</pre>" in lines  # inside <pre> Markdown is not read: HTML escaping only
    assert "- <code>c</code>: **failed**: new improved: old=0.0 new=1.0" in lines
    assert lines[lines.index("### missing (1)") + 2] == "- <code>gone</code>: only in the old file"
    assert "paired over 3 compared tasks (d = new - old of the task means):" in lines


def test_flips_title_agrees_with_the_table_and_annotations_word_means_as_the_crash_line() -> None:
    old = [{"task_id": t, "reward": 1.0} for t in ("a", "b", "c")]
    new = [
        {"task_id": "a", "reward": 0.0},
        {"task_id": "a", "reward": 1.0},
        {"task_id": "b", "reward": 0.0, "error": "timeout"},
        {"task_id": "c", "reward": 0.0, "error": "timeout"},
    ]
    summary = build_summary(compare_rollouts(old, new))
    assert (summary.counts.flipped, summary.counts.flipped_agent_error) == (1, 2)
    text = render_markdown(summary)
    assert "### Flips (1) and rerun candidates (2)" in text.splitlines()
    assert "- <code>a</code>: **failed**: new regressed: old=1.0 new=0.5 (means of 1 vs 2 rows)" in text.splitlines()
    assert "- <code>b</code>: **agent_error**: new regressed: old=1.0 new=0.0, agent error: rerun" in text.splitlines()
    # each flip's annotation is titled with its outcome: the failed one an error, the agent errors warnings
    assert annotation_lines(summary, failed={"a"}) == [
        "::error title=a failed::new regressed: old=1.0 new=0.5 (means of 1 vs 2 rows)",
        "::warning title=b agent_error::new regressed: old=1.0 new=0.0",
        "::warning title=c agent_error::new regressed: old=1.0 new=0.0",
    ]
    reruns = build_summary(compare_rollouts(old[1:], new[2:]))
    assert "### Rerun candidates (2)" in render_markdown(reruns).splitlines()


def test_passed_and_nothing_compared_verdicts() -> None:
    same = _summary({"a": 1.0, "b": 0.0}, {"a": 1.0, "b": 0.0}, outcome=RunOutcome(None, 0, {"passed": 2}))
    assert verdict_line(same).startswith("**rollout parity: INCONCLUSIVE**")  # the same rows: a copy
    assert "### Flips" not in render_markdown(same)
    assert "### What to run next" in render_markdown(same)
    disjoint = _summary({"a": 1.0}, {"b": 1.0})
    assert verdict_line(disjoint, 1).startswith("**rollout parity: INCONCLUSIVE**: nothing compared")
    assert "**Nothing compared**: no task was compared" in render_markdown(disjoint)


def test_labels_cannot_break_the_markup() -> None:
    summary = _summary({"<b>x|y`": 1.0}, {"<b>x|y`": 0.0})
    text = render_markdown(summary)
    assert "<code>\\<b\\>x\\|y\\`</code>" in text and "<b>x" not in text


def _structure(page: str) -> list[str]:
    """The page's block structure: each line's kind outside `<pre>` blocks (HTML, where Markdown is not read)."""
    kinds, inside = [], False
    for line in page.splitlines():
        if line.startswith("<pre>"):
            inside = True
        if not inside and line.startswith(("#", "<", "- ", "|", "```")):
            kinds.append(line.split(" ", 1)[0][:9])
        if line.endswith("</pre>"):
            inside = False
    return kinds


def markdown_read(page: str) -> tuple[str, str]:
    """(the lines Markdown reads, the lines of HTML blocks: a flip's `<details>` up to its `</details>`,
    where Markdown reads nothing and only HTML escaping counts)."""
    read, raw, inside = [], [], False
    for line in page.splitlines():
        if line == "<details>":
            inside = True
        (raw if inside else read).append(line)
        if line == "</details>":
            inside = False
    return "\n".join(read), "\n".join(raw)


HOSTILE = [
    "[click](https://evil.example)",
    "![img](https://evil.example/x.png)",
    "**bold** _it_ ~~s~~",
    "x\n</details>\n\n# HEADING\n- item",
    "https://evil.example www.evil.example a@evil.example",
    "a | b | c",
    "<script>alert(1)</script>",
    "\x1b[31mred\r\x07\x00",
]


@pytest.mark.parametrize("label", HOSTILE)
def test_hostile_labels_stay_text_on_their_line(label: str) -> None:
    summary = _summary({label: 1.0, "gone": 1.0}, {label: 0.0, "gone-too": 1.0})
    text = render_markdown(_with_texts(summary, {label: f"{label}: new regressed\n    | {label}"}))
    # the page's structure is the same as for a plain label: data adds no heading, list item or tag
    plain_summary = _summary({"plain": 1.0, "gone": 1.0}, {"plain": 0.0, "gone-too": 1.0})
    plain = render_markdown(_with_texts(plain_summary, {"plain": "plain: new regressed\n    | plain"}))
    assert _structure(text) == _structure(plain)
    read, blocks = markdown_read(text)
    for raw in (
        "](",
        "**bold**",
        "_it_",
        "~~s~~",
        "<script",
        "\n# HEADING",
        "https://",
        "www.",
        "@evil",
        "\x1b",
        "\r",
        "\x00",
        "\x07",
    ):
        if raw in label:
            assert raw not in read, raw
    for raw in ("<script", "</details>\n", "\x1b", "\r", "\x00", "\x07"):  # a `<pre>` is not ended by a blank line
        if raw in label:
            assert raw not in blocks, raw
    assert text.count("<details>") == text.count("</details>") == 1


def test_flips_and_texts_capped_within_budget() -> None:
    n = FLIP_CAP + 7
    summary = _summary({f"t{i}": 1.0 for i in range(n)}, {f"t{i}": 0.0 for i in range(n)})
    texts = {f"t{i}": "x" * (TEXT_CAP * 3) for i in range(n)}
    text = render_markdown(_with_texts(summary, texts))
    assert text.count("<details>") == FLIP_CAP
    assert "... and 7 more (see --parity-json)" in text
    assert f"{TEXT_CAP * 2} more characters" in text
    huge = {f"t{i}": 1.0 for i in range(3000)}
    big = _summary(huge, {t: 0.0 for t in huge})
    page = render_markdown(_with_texts(big, {t: "y" * TEXT_CAP for t in huge}))
    assert len(page.encode("utf-8")) <= BUDGET


def test_escaping_of_workflow_commands() -> None:
    assert escape_data("50%\r\nnext: a, b") == "50%25%0D%0Anext: a, b"
    assert escape_property("a: b, c%\n") == "a%3A b%2C c%25%0A"


def test_annotations_for_failed_flips_capped() -> None:
    summary = _summary({"a:1,x": 1.0, "b": 0.0, "c": 1.0}, {"a:1,x": 0.0, "b": 1.0, "c": 0.0})
    lines = annotation_lines(summary, failed={"a:1,x", "b"})
    assert lines == [
        "::error title=a%3A1%2Cx failed::new regressed: old=1.0 new=0.0",
        "::error title=b failed::new improved: old=0.0 new=1.0",
    ]
    many = _summary({f"t{i}": 1.0 for i in range(12)}, {f"t{i}": 0.0 for i in range(12)})
    capped = annotation_lines(many, failed={f"t{i}" for i in range(12)})
    assert len(capped) == 11 and capped[-1].startswith("2 more failed flip(s) not annotated: GitHub shows at most 10")


def test_margin_mode_annotates_flips_within_noise_and_the_aggregate_like_flips() -> None:
    old = [
        {"task_id": f"t{i}", "reward": r, "_ng_rollout_index": k}
        for i in range(6)
        for k, r in enumerate((1.0, 0.0, 1.0))
    ]
    new = [
        {"task_id": f"t{i}", "reward": r if i else 1 - r, "_ng_rollout_index": k}
        for i in range(6)
        for k, r in enumerate((1.0, 0.0, 1.0))
    ]
    result = compare_rollouts(old, new)
    info = RunInfo(
        BySide(SideFile("old.jsonl"), SideFile("new.jsonl")),
        RunOutcome(None, 0, {}, gate=(GateItem("parity-aggregate", False, None),)),
    )
    summary = build_summary(result, info, margin=0.05)
    assert [task.outcome for task in summary.tasks if task.category == "flipped"] == ["within_noise"]
    lines = annotation_lines(summary, failed=set())
    assert lines[0] == "::notice title=t0 within noise::new regressed: old=0.6667 new=0.3333 (means of 3 vs 3 rows)"
    assert lines[1].startswith("::error title=parity-aggregate failed::")
    page = render_markdown(summary)
    assert "- <code>t0</code>: **within_noise**: new regressed: old=0.6667 new=0.3333" in page

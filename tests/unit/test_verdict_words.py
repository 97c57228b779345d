"""One wording of the verdict for every report; each report lists the verdicts hooks changed."""

from __future__ import annotations

from dataclasses import replace

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.verdicts import Verdict
from pytest_rollout_parity.core.reports import markdown as markdown
from pytest_rollout_parity.core.reports.html_page import report_body
from pytest_rollout_parity.core.reports.summary import (
    BySide,
    GateItem,
    RunInfo,
    RunOutcome,
    SideFile,
    SplitGroup,
    Summary,
    build_summary,
)
from pytest_rollout_parity.core.reports.terminal import summary_lines
from pytest_rollout_parity.core.reports.wording import DIRECTION, IMPROVED, REGRESSED, listings, verdict_words


def _summary(old: dict[str, float], new: dict[str, float], **run: object) -> Summary:
    result = compare_rollouts(
        [{"task_id": t, "reward": r} for t, r in old.items()], [{"task_id": t, "reward": r} for t, r in new.items()]
    )
    return build_summary(result, RunInfo(files=BySide(SideFile("old.jsonl"), SideFile("new.jsonl")), **run))  # type: ignore[arg-type]


def test_every_report_says_the_verdict_in_the_same_words() -> None:
    summary = _summary(
        {"a": 1.0, "b": 1.0, "c": 0.0, "gone": 1.0},
        {"a": 1.0, "b": 0.0, "c": 1.0},
        outcome=RunOutcome(None, 0, {"failed": 2, "passed": 1, "xfailed": 1}),
    )
    words = verdict_words(summary)
    assert words == "1 task regressed, 1 improved, 1 missing; 1 identical"
    assert summary_lines(summary)[0] == f"parity: FAIL: {words}"
    assert f"**rollout parity: FAIL**: {words}" in markdown.render_markdown(summary)
    page = report_body(summary, with_evidence=False)
    assert '<span class="verdict v-fail">FAIL</span>' in page and f"<p>{words}</p>" in page
    assert (DIRECTION["old"], DIRECTION["new"]) == (REGRESSED, IMPROVED) == ("new regressed", "new improved")


def test_hook_verdicts_listed_in_markdown_and_html_capped_and_escaped() -> None:
    n = markdown.LIST_CAP + 2
    tasks = {f"<t{i:02d}>": 1.0 for i in range(n)}
    verdicts = {task: Verdict("passed", f"reviewed & ok\nsecond line of {task}") for task in tasks}
    summary = _summary(tasks, {task: 0.0 for task in tasks}, hook_verdicts=verdicts)
    heading, changes = listings(summary)[0]
    assert heading == f"pytest_parity_verdict hooks changed {n} verdict(s)"
    assert changes[0] == ("<t00>", " (flipped): passed: reviewed & ok")

    page = markdown.render_markdown(summary).splitlines()
    start = page.index(f"### pytest_parity_verdict hooks changed {n} verdict(s)")
    assert page[start + 2] == "- <code>\\<t00\\></code> (flipped): passed: reviewed \\& ok"
    assert page[start + 2 + markdown.LIST_CAP] == "- ... and 2 more (see --parity-json)"
    assert "second line" not in "\n".join(page)

    fragment = report_body(summary, with_evidence=False)
    changed = fragment[fragment.index(f"<h2>pytest_parity_verdict hooks changed {n} verdict(s)</h2><ul>") :]
    assert "<li><code>&lt;t00&gt;</code> (flipped): passed: reviewed &amp; ok</li>" in changed
    assert changed.count("<li>") == markdown.LIST_CAP + 1 and "<li>... and 2 more" in changed


def test_a_count_without_per_task_entries_is_still_said() -> None:
    """A run's count stands where the summary holds no task's entry."""
    summary = _summary({"a": 1.0}, {"a": 0.0}, outcome=RunOutcome(None, 1, {}))
    assert listings(summary) == [("pytest_parity_verdict hooks changed 1 verdict(s)", [])]
    assert "### pytest_parity_verdict hooks changed 1 verdict(s)" in markdown.render_markdown(summary)
    assert "<h2>pytest_parity_verdict hooks changed 1 verdict(s)</h2><ul></ul>" in report_body(
        summary, with_evidence=False
    )


def test_no_hook_no_list() -> None:
    summary = _summary({"a": 1.0}, {"a": 0.0})
    assert listings(summary) == []
    assert "pytest_parity_verdict" not in markdown.render_markdown(summary)
    assert "pytest_parity_verdict" not in report_body(summary, with_evidence=False)


def test_a_long_note_is_cut_at_a_word_boundary() -> None:
    from pytest_rollout_parity.core.identity.item_names import clipped

    text = "1 thing: " + ", ".join(f"name-{n}" for n in range(100))
    cut = clipped(text, 60)
    assert cut.endswith(" ... (see --parity-json)")
    kept = cut.removesuffix(" ... (see --parity-json)").split(": ", 1)[1].split(", ")
    assert all(name.startswith("name-") and name[5:].isdigit() for name in kept)
    assert clipped("short", 60) == "short"


def test_one_compared_task_is_singular() -> None:
    assert verdict_words(_summary({"a": 1.0}, {"a": 1.0}, outcome=RunOutcome(1, 0, {}))) == (
        "no flip in 1 compared task; both files hold the same rows: was the new server run?"
    )


def test_a_narrowed_run_says_it_is_a_part_and_what_it_ran() -> None:
    old, new = {"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1.0, "b": 0.0, "c": 1.0}
    narrowed = _summary(
        old,
        new,
        outcome=RunOutcome(1, 0, {"passed": 1}),
        task_outcomes={"a": "passed"},
        ran_tasks=frozenset({"a"}),
    )
    assert summary_lines(narrowed)[0] == (
        "partial: 1 of 3 items ran here, none failed; tasks 1 of 3; "
        "the whole file: INCONCLUSIVE (merge the parts for its verdict): 1 task regressed, 0 improved; 2 identical"
    )
    assert markdown.verdict_line(narrowed, 0).startswith(
        "**partial: 1 of 3 items ran here, none failed** (rollout parity): tasks 1 of 3; "
        "the whole file: INCONCLUSIVE (merge the parts for its verdict): "
    )
    assert markdown.verdict_line(narrowed, 0).endswith(" (exit status 0)")
    collected = _summary(old, new, outcome=RunOutcome(None, 0, {}, collect_only=True))
    assert verdict_words(collected).endswith("; counts of the whole file (3 tasks): collected only, no item ran")
    whole = _summary(
        old,
        new,
        outcome=RunOutcome(3, 0, {"passed": 2, "failed": 1}),
        task_outcomes={"a": "passed", "b": "failed", "c": "passed"},
    )
    assert verdict_words(whole) == "1 task regressed, 0 improved; 2 identical"
    assert summary_lines(whole)[0] == "parity: FAIL: 1 task regressed, 0 improved; 2 identical"


def test_gate_items_never_count_as_tasks() -> None:
    """Two tasks deselected and two gate items run: as many items ran as there are tasks, and it is
    still a part, tasks and gate items counted apart."""
    old = {t: 1.0 for t in "abcd"}
    new = {**old, "d": 0.0}
    part = _summary(
        old,
        new,
        outcome=RunOutcome(
            4,
            0,
            {"passed": 3, "failed": 1},
            gate=(GateItem("parity-aggregate", True, "passed"), GateItem("parity-coverage", True, "passed")),
        ),
        task_outcomes={"a": "passed", "d": "failed"},
        ran_tasks=frozenset({"a", "d"}),
        group=SplitGroup("pytest-split", 3, 4),
    )
    line = summary_lines(part)[0]
    assert line.startswith(
        "partial: 4 of 6 items ran here, 1 failed; tasks 2 of 4; "
        "gate items 2 of 2; pytest-split group 3 of 4; the whole file: FAIL (merge the parts for its verdict): "
    )
    assert part.run is not None and part.run.part is not None
    assert (part.run.part.tasks_ran, part.run.part.items_ran, part.run.part.partial) == (2, 4, True)


def test_margin_mode_names_the_failing_flips_and_those_within_noise() -> None:
    result = compare_rollouts(
        [{"task_id": t, "reward": 1.0} for t in "abc"],
        [{"task_id": t, "reward": 0.0 if t != "c" else 1.0} for t in "abc"],
    )
    summary = replace(build_summary(result, margin=0.1), failing_flips=1)
    assert verdict_words(summary).startswith("1 flip fails (2 regressed, 0 improved; 1 within noise); 1 identical")
    for failing, lead in ((0, "no flip fails"), (2, "2 flips fail")):
        summary = replace(build_summary(result, margin=0.1), failing_flips=failing)
        assert verdict_words(summary).startswith(f"{lead} (2 regressed, 0 improved; {2 - failing} within noise)")

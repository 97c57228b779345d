"""The merge of a split run's parts, as a pure function of their JSON summaries.

Parts are built the way the plugin builds them: one comparison, one summary a part, each with the
outcomes of the items that part ran. Whatever way the items are dealt out to parts, the merge
gives each item the outcome of the part that ran it, refuses an item dealt twice, names those
dealt nowhere, and decides as one run over every item would.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.html_page import report_body
from pytest_rollout_parity.core.reports.json_file import json_dict, read_summary
from pytest_rollout_parity.core.reports.markdown import render_markdown
from pytest_rollout_parity.core.reports.merge import MergeError, merge_parts
from pytest_rollout_parity.core.reports.summary import (
    NAMED,
    BySide,
    Options,
    RunInfo,
    RunOutcome,
    SideFile,
    Summary,
    build_summary,
)
from pytest_rollout_parity.core.reports.terminal import summary_lines

OLD = {"a": 1.0, "b": 1.0, "c": 0.0, "d": 1.0, "e": 0.0, "gone": 1.0}
NEW = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0, "e": 0.0, "fresh": 0.0}
#: the pytest outcome each task's item has under the default rules (the plugin's items decide it)
ITEM = {
    "a": "passed",
    "b": "failed",
    "c": "failed",
    "d": "passed",
    "e": "passed",
    "gone": "xfailed",
    "fresh": "xfailed",
}
INPUTS = {"old": "crc32:0000abcd:10", "new": "crc32:0000dcba:12"}
#: the options a run records (docs/json.md), at their defaults
OPTIONS = Options(
    margin=None,
    alpha=0.05,
    strict=False,
    max_missing="20%",
    max_masked="30%",
    max_uncompared="20%",
    allow_copy=False,
    key=BySide(None, None),
    agent=BySide(None, None),
    known_flips=None,
)


def _result() -> Any:
    return compare_rollouts(
        [{"task_id": t, "reward": r} for t, r in OLD.items()], [{"task_id": t, "reward": r} for t, r in NEW.items()]
    )


def part(
    tasks: list[str], *, inputs: Optional[dict[str, str]] = None, options: Optional[Options] = None
) -> dict[str, Any]:
    """The JSON summary of a run that ran the items of ``tasks``."""
    ran = {task: ITEM[task] for task in tasks}
    outcomes: dict[str, int] = {}
    for outcome in ran.values():
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    every = len(ran) == len(ITEM)
    info = RunInfo(
        files=BySide(SideFile("old.jsonl"), SideFile("new.jsonl")),
        outcome=RunOutcome(len(ran), 0, outcomes, inputs=inputs or INPUTS, options=options or OPTIONS),
        task_outcomes=ran,
        ran_tasks=None if every else frozenset(ran),
    )
    return json_dict(build_summary(_result(), info))


def merge(parts: list[tuple[str, Any]]) -> Summary:
    """The merge of parts given as their JSON, each read back as the merge command reads it."""
    return merge_parts([(path, read_summary(data)) for path, data in parts])


def merged_json(merged: Summary) -> dict[str, Any]:
    return {key: value for key, value in json_dict(merged).items() if key != "merge"}


def test_every_way_of_dealing_the_items_out_merges_to_the_whole_run() -> None:
    whole = part(list(ITEM))
    merged = merge(
        [("p1.json", part(["a", "b"])), ("p2.json", part(["c", "gone"])), ("p3.json", part(["d", "e", "fresh"]))]
    )
    assert merged_json(merged) == whole
    assert merged.merge is not None and (merged.verdict, merged.merge.exit_status) == ("fail", 1)
    assert [(p.file, p.failed) for p in merged.merge.parts] == [("p1.json", 1), ("p2.json", 1), ("p3.json", 0)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-1, max_value=2), min_size=len(ITEM), max_size=len(ITEM)))
def test_any_partition_merges_to_its_items_outcomes(assignment: list[int]) -> None:
    """Each task goes to part 0, 1 or 2, or to none (-1): gaps are exactly the tasks dealt nowhere."""
    tasks = list(ITEM)
    parts = [
        (f"p{index}.json", part([t for t, where in zip(tasks, assignment) if where == index])) for index in range(3)
    ]
    merged = merge(parts)
    assert merged.merge is not None
    expected = {t: ITEM[t] for t, where in zip(tasks, assignment) if where >= 0}
    assert {task.task: task.item_outcome for task in merged.tasks if task.ran_here} == expected
    assert set(merged.merge.gaps) == {t for t, where in zip(tasks, assignment) if where < 0}
    failed = any(outcome == "failed" for outcome in expected.values())
    assert merged.merge.exit_status == (1 if failed or merged.merge.gaps else 0)
    whole = build_summary(
        _result(), RunInfo(BySide(SideFile("o"), SideFile("n")), RunOutcome(len(ITEM), 0, {}), task_outcomes=ITEM)
    )
    if not merged.merge.gaps:  # any split of the whole run merges into exactly the unsplit run's JSON
        assert merged.verdict == whole.verdict
        assert merged_json(merged) == part(tasks)
    else:
        assert merged.verdict != "pass"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(min_value=0, max_value=2), min_size=1), min_size=len(ITEM), max_size=len(ITEM)))
def test_an_item_dealt_to_two_parts_is_refused(assignment: list[set[int]]) -> None:
    tasks = list(ITEM)
    parts = [
        (f"p{index}.json", part([t for t, where in zip(tasks, assignment) if index in where])) for index in range(3)
    ]
    twice = [t for t, where in zip(tasks, assignment) if len(where) > 1]
    if not twice:
        merged = merge(parts).merge
        assert merged is not None and not merged.gaps
        return
    with pytest.raises(MergeError, match=rf"^{len(twice)} item\(s\) ran in more than one part: ") as caught:
        merge(parts)
    assert sum(f"{task!r} (" in caught.value.reason for task in twice) == min(len(twice), NAMED)


WHOLE_FILE = r"^p2.json and p1.json hold different classifications of the whole file \(.*\): first at "


def test_parts_of_other_inputs_or_options_are_refused() -> None:
    first = ("p1.json", part(["a", "b", "c"]))
    other_new = {**INPUTS, "new": "crc32:12345678:12"}
    with pytest.raises(
        MergeError, match=WHOLE_FILE + r"run.inputs.new \('crc32:12345678:12' against 'crc32:0000dcba:12'\)$"
    ):
        merge([first, ("p2.json", part(["d"], inputs=other_new))])
    with pytest.raises(MergeError, match=WHOLE_FILE + r"run.options.strict \(True against False\)$"):
        merge([first, ("p2.json", part(["d"], options=replace(OPTIONS, strict=True)))])


def test_a_part_that_classifies_the_file_otherwise_is_refused() -> None:
    """Same digests, same items, but one task's category moved (a file edited between the runs, or a part edited)."""
    second = part(["d", "e", "gone", "fresh"])
    second["tasks"][1]["category"] = "masked"
    second["counts"]["masked"] += 1
    with pytest.raises(MergeError, match=WHOLE_FILE + r"counts.masked \(1 against 0\)$"):
        merge([("p1.json", part(["a", "b", "c"])), ("p2.json", second)])


@pytest.mark.parametrize("claimed", ["passed", "accepted", "within_noise", "not_run"])
def test_a_part_whose_claimed_outcome_contradicts_its_category_is_refused(claimed: str) -> None:
    edited = part(["a", "b", "c"])
    flipped = next(task for task in edited["tasks"] if task["task"] == "b")
    flipped["outcome"] = claimed
    with pytest.raises(MergeError, match=r"^p1.json: task 'b' \(flipped\) claims the outcome '" + claimed + "'"):
        merge([("p1.json", edited), ("p2.json", part(["d", "e", "gone", "fresh"]))])


def test_a_claimed_known_flips_verdict_needs_the_recorded_list() -> None:
    edited = part(["a", "b", "c"])
    flipped = next(task for task in edited["tasks"] if task["task"] == "b")
    flipped.update(outcome="accepted", hook_verdict={"outcome": "xfail", "reason": "fine", "source": "known_flips"})
    with pytest.raises(MergeError, match=r"^p1.json: task 'b' claims a known-flips verdict its recorded list"):
        merge([("p1.json", edited), ("p2.json", part(["d", "e", "gone", "fresh"]))])


def test_the_merge_decides_under_the_recorded_options_and_exits_by_its_verdict() -> None:
    """A copied pair: inconclusive (exit 1) by default, a pass (exit 0) under --parity-allow-copy, as unsplit."""
    global OLD, NEW, ITEM
    saved = (OLD, NEW, ITEM)
    try:
        OLD = NEW = {"a": 1.0, "b": 0.0, "c": 1.0}
        ITEM = {"a": "passed", "b": "passed", "c": "passed"}
        for allow, expected in ((False, ("inconclusive", 1)), (True, ("pass", 0))):
            options = replace(OPTIONS, allow_copy=allow)
            merged = merge([("p1.json", part(["a"], options=options)), ("p2.json", part(["b", "c"], options=options))])
            assert merged.merge is not None and (merged.verdict, merged.merge.exit_status) == expected
    finally:
        OLD, NEW, ITEM = saved


@pytest.mark.parametrize(
    "run, reason",
    [
        (None, 'no "run" section'),
        (
            RunInfo(BySide(SideFile("o"), SideFile("n")), RunOutcome(None, 0, {}, collect_only=True)),
            "no item ran in this run",
        ),
        (
            RunInfo(BySide(SideFile("o"), SideFile("n")), RunOutcome(1, 0, {}, options=OPTIONS)),
            "no content digest of the old and new side",
        ),
        (RunInfo(BySide(SideFile("o"), SideFile("n")), RunOutcome(1, 0, {}, inputs=INPUTS)), "no recorded options"),
    ],
)
def test_a_file_that_is_not_a_part_is_refused(run: Optional[RunInfo], reason: str) -> None:
    with pytest.raises(MergeError) as caught:
        merge([("x.json", json_dict(build_summary(_result(), run)))])
    assert caught.value.path == "x.json" and reason in caught.value.reason


def test_no_part_is_refused() -> None:
    with pytest.raises(MergeError, match="no part given"):
        merge_parts([])


def test_the_reports_escape_what_the_parts_say() -> None:
    """A label from the rows reaches the merge's terminal lines and Markdown escaped."""
    global ITEM
    saved = (dict(OLD), dict(NEW), dict(ITEM))
    try:
        label = "::error::x|<b>"
        OLD[label], NEW[label] = 1.0, 0.0
        ITEM = {**ITEM, label: "failed"}
        merged = merge([("p1.json", part([label])), ("p2.json", part([t for t in ITEM if t != label]))])
    finally:
        OLD.clear(), OLD.update(saved[0]), NEW.clear(), NEW.update(saved[1])
        ITEM = saved[2]
    lines = summary_lines(merged)
    assert not any(line.startswith("::") for line in lines)
    markdown = render_markdown(merged)
    assert "<b>" not in markdown and "|<" not in markdown
    # every report lists the parts, each under the merge's heading
    heading = next(line for line in lines if "part(s) merged" in line)
    assert lines[lines.index(heading) + 1].startswith("    p1.json (no group): ")
    assert f"### {heading[:-1]}" in markdown and "- <code>p1.json</code> (no group): " in markdown
    assert "<li><code>p1.json</code> (no group): " in report_body(merged)


def test_a_label_with_a_lone_surrogate_reaches_every_output(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate reports such a label everywhere (its JSON as a `\\ud800` escape); so does the merge."""
    from pytest_rollout_parity.__main__ import main
    from pytest_rollout_parity.core.reports.json_file import json_text

    global ITEM
    saved = (dict(OLD), dict(NEW), dict(ITEM))
    label = "bad\ud800label"
    try:
        OLD[label], NEW[label] = 1.0, 0.0
        ITEM = {**ITEM, label: "failed"}
        paths = []
        for index, tasks in enumerate(([label, "a"], [t for t in ITEM if t not in (label, "a")])):
            path = tmp_path / f"p{index}.json"
            path.write_text(json_text(part(tasks)) + "\n", encoding="utf-8")
            paths.append(str(path))
    finally:
        OLD.clear(), OLD.update(saved[0]), NEW.clear(), NEW.update(saved[1])
        ITEM = saved[2]
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    status = main(["merge", *paths, f"--json={tmp_path / 'm.json'}", f"--markdown={tmp_path / 'm.md'}"])
    out, err = capsys.readouterr()
    assert (status, err) == (1, "")
    assert "bad\\ud800label" in out
    merged = (tmp_path / "m.json").read_text(encoding="utf-8")
    assert '"bad\\ud800label"' in merged
    assert "bad\\ud800label" in (tmp_path / "m.md").read_text(encoding="utf-8") == step.read_text(encoding="utf-8")


#: what a malformed part puts in a value's place: wrong types, a lone surrogate, NaN, depth past any parser's
BAD_VALUES = st.sampled_from(
    ['"text"', "1", "-1.5", "true", "null", "[]", "{}", '"\\udc80"', "NaN", "Infinity", "[" * 100_000 + "]" * 100_000]
)


def _places(value: Any, where: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (the value itself first)."""
    found = [where]
    if isinstance(value, dict):
        for key, inner in value.items():
            found.extend(_places(inner, (*where, key)))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found.extend(_places(inner, (*where, index)))
    return found


@settings(max_examples=60, deadline=None)
@given(place=st.integers(min_value=0), bad=BAD_VALUES, how=st.sampled_from(["replace", "delete", "add"]))
def test_a_malformed_part_is_one_error_line_before_any_decision(
    tmp_path_factory: pytest.TempPathFactory, place: int, bad: str, how: str
) -> None:
    """Any part changed at any place (a value replaced, a key dropped or added) merges, or is one
    `ERROR:` line naming the part, exit 4, nothing written: never a traceback."""
    import json
    from contextlib import redirect_stderr, redirect_stdout
    from io import StringIO

    from pytest_rollout_parity.__main__ import main
    from pytest_rollout_parity.core.reports.json_file import json_text

    tmp = tmp_path_factory.mktemp("parts")
    good, data = part(["a", "b", "c"]), part(["d", "e", "gone", "fresh"])
    places = _places(data)
    where = places[place % len(places)]
    marker = "\u2603PLACE\u2603"
    parent: Any = data
    for step in where[:-1]:
        parent = parent[step]
    if not where:
        data = marker
    elif how == "delete" and isinstance(parent, dict):
        del parent[where[-1]]
    elif how == "add" and isinstance(parent, dict):
        parent["surprise"] = marker
    else:
        parent[where[-1]] = marker
    paths = [tmp / "p1.json", tmp / "p2.json"]
    paths[0].write_text(json_text(good), encoding="utf-8")
    paths[1].write_text(json_text(data).replace(json.dumps(marker, ensure_ascii=False), bad), encoding="utf-8")
    out, err = StringIO(), StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = main(["merge", *map(str, paths), f"--json={tmp / 'm.json'}"])
    except SystemExit as exc:
        status = int(exc.code or 0)
    event(f"exit {status}")
    assert status in (0, 1, 4)
    if status == 4:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ERROR: ") and str(paths[1]) in lines[0], lines
        assert "pydantic" not in lines[0], lines  # the place and what is wrong there, not the parser's report
        assert out.getvalue() == "" and not (tmp / "m.json").exists()


def test_parts_whose_figures_contradict_each_other_are_one_error_line(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A part the layout lets through may still hold figures no run gives (a plan for a margin with no
    variance): the merge says so in one `ERROR:` line, exit 4, nothing written, never a traceback."""
    from pytest_rollout_parity.__main__ import main
    from pytest_rollout_parity.core.reports.json_file import json_text

    global OLD, NEW, ITEM
    saved = (OLD, NEW, ITEM)
    try:
        OLD = NEW = {"a": 1.0, "b": 0.0}  # a copy: the merged verdict is inconclusive, so its plan is shown
        ITEM = {"a": "passed", "b": "passed"}
        paths = []
        for index, tasks in enumerate((["a"], ["b"])):
            data = part(tasks)
            data["plan"].update(margin=0.05, rollout_variance=None)
            paths.append(tmp_path / f"p{index}.json")
            paths[-1].write_text(json_text(data), encoding="utf-8")
    finally:
        OLD, NEW, ITEM = saved
    with pytest.raises(SystemExit) as caught:
        main(["merge", *map(str, paths), f"--json={tmp_path / 'm.json'}"])
    out, err = capsys.readouterr()
    assert caught.value.code == 4 and out == "" and not (tmp_path / "m.json").exists()
    assert err.startswith("ERROR: the parts' figures contradict each other (") and err.count("\n") == 1

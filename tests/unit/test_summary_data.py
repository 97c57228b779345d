"""The summary as typed data: built once from the result, rendered as terminal lines and as JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_rollout_parity import compare_rollouts, summary_dict
from pytest_rollout_parity.core.judging.companions import AggregateCheck
from pytest_rollout_parity.core.model import Counts, Join, RowCounts
from pytest_rollout_parity.core.reports.json_file import json_dict, json_text, write_text
from pytest_rollout_parity.core.reports.summary import (
    BySide,
    Decider,
    GateItem,
    Paired,
    RunInfo,
    RunOutcome,
    SideFile,
    SideSummary,
    Summary,
    TaskSummary,
    build_summary,
)
from pytest_rollout_parity.core.reports.terminal import summary_lines
from pytest_rollout_parity.core.statistics.margin import Equivalence
from pytest_rollout_parity.core.statistics.paired import LeftOut
from pytest_rollout_parity.core.statistics.paired_tests import SignTest


def _rows(pairs: dict[str, float]) -> list[dict[str, object]]:
    return [{"task_id": task, "reward": reward} for task, reward in pairs.items()]


def test_build_summary_is_typed_and_frozen() -> None:
    result = compare_rollouts(_rows({"a": 1.0, "b": 1.0, "gone": 1.0}), _rows({"a": 1.0, "b": 0.0}))
    summary = build_summary(
        result, RunInfo(BySide(SideFile("o.jsonl"), SideFile("n.jsonl")), RunOutcome(None, 0, {"passed": 1}))
    )
    assert summary.counts == Counts(
        tasks=3,
        identical=1,
        flipped=1,
        flipped_old_win=1,
        flipped_new_win=0,
        flipped_agent_error=0,
        masked=0,
        masked_old=0,
        masked_new=0,
        missing=1,
        missing_old_only=1,
        missing_new_only=0,
    )
    assert [task.task for task in summary.tasks] == ["a", "b", "gone"]
    assert summary.tasks[1].winner == "old" and summary.tasks[2].new is None
    assert summary.labels("flipped") == ["b"] and sum(task.new is not None for task in summary.tasks) == 2
    assert summary.nothing_compared is None and summary.compared == 2
    assert summary.run == RunOutcome(selected=None, verdicts_changed_by_hook=0, outcomes={"passed": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.compared = 0  # type: ignore[misc]


def test_nothing_compared_is_a_field() -> None:
    summary = build_summary(compare_rollouts(_rows({"a": 1.0}), _rows({"b": 1.0})))
    assert summary.compared == 0
    assert summary.nothing_compared is not None and "share no task" in summary.nothing_compared


def test_same_file_adds_its_note() -> None:
    result = compare_rollouts(_rows({"a": 1.0}), _rows({"a": 1.0}))
    info = RunInfo(files=BySide(SideFile("r.jsonl"), SideFile("r.jsonl")), same_file=True)
    assert build_summary(result, info).notes[-1] == "both sides are the same file"
    assert "both sides are the same file" not in build_summary(result).notes


def test_hook_verdicts_are_per_task_fields() -> None:
    from pytest_rollout_parity.core.judging.verdicts import Verdict
    from pytest_rollout_parity.core.reports.json_file import json_dict
    from pytest_rollout_parity.core.reports.terminal import summary_lines

    result = compare_rollouts(_rows({"a": 1.0, "b": 1.0}), _rows({"a": 0.0, "b": 1.0}))
    info = RunInfo(
        files=BySide(SideFile("o"), SideFile("n")),
        outcome=RunOutcome(None, 1, {}),
        hook_verdicts={"a": Verdict("passed", "reviewed\nsecond line")},
    )
    summary = build_summary(result, info)
    assert [t.hook_verdict for t in summary.tasks] == [Verdict("passed", "reviewed\nsecond line"), None]
    assert [t["hook_verdict"] for t in json_dict(summary)["tasks"]] == [
        {"outcome": "passed", "reason": "reviewed\nsecond line", "source": "hook"},
        None,
    ]
    lines = summary_lines(summary)
    start = lines.index("pytest_parity_verdict hooks changed 1 verdict(s):")
    assert lines[start + 1] == "    a (flipped): passed: reviewed"


def hand_built() -> Summary:
    """A summary made without any result: the renderings need nothing else."""
    side = SideSummary(reward=1.0, rows=1, reward_rows=1, masked=None, agent_error=None, failure_kind=None)
    lost = dataclasses.replace(side, reward=0.0)
    return Summary(
        verdict="fail",
        decided_by=(Decider("failed_tasks", "1 task(s) failed"),),
        task_outcomes={"failed": 1},
        accepted=(),
        counts=Counts(
            tasks=1,
            identical=0,
            flipped=1,
            flipped_old_win=1,
            flipped_new_win=0,
            flipped_agent_error=0,
            masked=0,
            masked_old=0,
            masked_new=0,
            missing=0,
            missing_old_only=0,
            missing_new_only=0,
        ),
        join=Join(
            old_key="task_name",
            new_key="_ng_task_id",
            old_key_reason="",
            new_key_reason="given",
            old_prefix_stripped="tb/",
            new_prefix_stripped=None,
            keyed_by_taskset=False,
        ),
        rows=RowCounts(old=1, new=2, old_masked=0, new_masked=1),
        conditions=BySide("", ""),
        models=BySide("", ""),
        compared=1,
        nothing_compared=None,
        notes=("a note",),
        copies=None,
        paired=Paired(
            n=1,
            old_mean=1.0,
            new_mean=0.0,
            delta=-1.0,
            ci95=None,
            df=None,
            clustered_by=None,
            sign_test=SignTest(better=0, worse=1, p=1.0),
            table=None,
            absent="one compared task",
            left_out=LeftOut(tasks=1, old=0, new=0, range_tasks=1, reward_range=(0.0, 1.0), delta_range=None),
        ),
        tasks=(TaskSummary(task="t", category="flipped", winner="old", old=side, new=lost, outcome="failed"),),
        plan=None,
        equivalence=Equivalence(margin=0.05, lower_bound=None, upper_bound=None, passed=False),
        files=BySide(SideFile("a/old.jsonl"), SideFile("b/new.jsonl", "b/new_failures.jsonl")),
        aggregate_metrics=BySide(
            old=None,
            new=AggregateCheck(
                file="b/new_aggregate_metrics.json", agent=None, recorded_mean=0.5, computed_mean=0.0, rows=2, note=None
            ),
        ),
        run=RunOutcome(
            selected=2,
            verdicts_changed_by_hook=0,
            outcomes={"failed": 2},
            gate=(GateItem("parity-aggregate", True, "failed"),),
        ),
    )


def test_terminal_lines_render_the_summary() -> None:
    lines = summary_lines(hand_built())
    assert lines[1] == "old: a/old.jsonl: 1 task, 1 row (0 masked), key task_name, prefix 'tb/' stripped"
    assert (
        lines[2]
        == "new: b/new.jsonl (+ sidecar new_failures.jsonl): 1 task, 2 rows (1 masked), key _ng_task_id (given)"
    )
    assert lines[3] == "new aggregate metrics: mean reward 0.5 recorded, 0.0 from 2 rows"
    assert lines[0].startswith("parity: FAIL: 1 task regressed, 0 improved")
    assert lines.index("flipped: t") + 1 == lines.index("note: a note")  # the notes: the last list
    start = lines.index("paired over 1 compared task (d = new - old of the task means):")
    assert lines[start + 1 : start + 4] == [
        "    figures absent: one compared task",
        "    sign test: 0 better, 1 worse, p = 1.000",
        "aggregate at margin ±0.05: FAILED, no decision: one compared task",
    ]
    assert not any(line.startswith(("selected:", "NOTHING COMPARED")) for line in lines)


def test_json_renders_the_summary(tmp_path: Path) -> None:
    summary = hand_built()
    data = json_dict(summary)
    assert list(data) == [
        "verdict",
        "decided_by",
        "task_outcomes",
        "accepted_flips",
        "counts",
        "join",
        "rows",
        "conditions",
        "models",
        "compared",
        "nothing_compared",
        "notes",
        "copies",
        "paired",
        "tasks",
        "plan",
        "aggregate",
        "files",
        "aggregate_metrics",
        "run",
    ]
    assert data["rows"] == {"old": 1, "new": 2, "old_masked": 0, "new_masked": 1}
    assert data["tasks"][0]["new"]["reward"] == 0.0 and data["tasks"][0]["p_value"] is None
    assert data["paired"]["sign_test"] == {"better": 0, "worse": 1, "p": 1.0} and data["paired"]["table"] is None
    assert data["aggregate"] == {"margin": 0.05, "lower_bound": None, "upper_bound": None, "passed": False}
    assert data["aggregate_metrics"]["old"] is None and data["aggregate_metrics"]["new"]["recorded_mean"] == 0.5
    assert data["run"] == {
        "selected": 2,
        "verdicts_changed_by_hook": 0,
        "outcomes": {"failed": 2},
        "known_flips": None,
        "part": None,
        "gate": [{"item": "parity-aggregate", "ran_here": True, "item_outcome": "failed"}],
        "inputs": {},
        "options": None,
        "checks": [],
    }
    target = tmp_path / "s.json"
    write_text(target, json_text(json_dict(summary)) + "\n")
    assert json.loads(target.read_text(encoding="utf-8")) == data
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_summary_dict_is_the_json_rendering() -> None:
    result = compare_rollouts(_rows({"a": 1.0, "b": 0.5}), _rows({"a": 0.0, "c": 1.0}))
    assert summary_dict(result) == json_dict(build_summary(result))
    assert "files" not in summary_dict(result) and "run" not in summary_dict(result)

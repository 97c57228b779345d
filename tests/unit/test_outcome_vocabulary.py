"""The task outcomes and the run verdict: one vocabulary, decided once in the summary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.completeness import coverage, parse_limit
from pytest_rollout_parity.core.judging.verdicts import Verdict
from pytest_rollout_parity.core.model import TASK_OUTCOMES, RunVerdict
from pytest_rollout_parity.core.reports.json_file import json_dict
from pytest_rollout_parity.core.reports.summary import BySide, RunInfo, RunOutcome, SideFile, build_summary

Rows = list[dict[str, Any]]


def _side(real_rows: Callable[[str], Rows], rewards: dict[str, float], **extra: Any) -> Rows:
    """Real-shaped rows (a trimmed NeMo Gym row) with the task id and reward changed."""
    template = real_rows("deepswe_opencode_trimmed.jsonl")[0]
    for name in ("_ng_task_index", "_ng_rollout_index"):
        template.pop(name)
    return [dict(template, task_id=task, reward=reward, **extra) for task, reward in rewards.items()]


def test_the_vocabulary_is_the_documented_one() -> None:
    assert TASK_OUTCOMES == (
        "passed",
        "failed",
        "within_noise",
        "accepted",
        "agent_error",
        "masked",
        "missing",
        "not_run",
    )
    assert get_args(RunVerdict) == ("pass", "fail", "inconclusive")


def test_each_category_has_its_outcome_and_a_flip_fails_the_run(real_rows: Callable[[str], Rows]) -> None:
    old = _side(real_rows, {"a": 1.0, "b": 1.0, "c": 1.0, "gone": 1.0})
    new = _side(real_rows, {"a": 1.0, "b": 0.0}) + [dict(_side(real_rows, {"c": 0.0})[0], evaluation_completed=False)]
    summary = build_summary(compare_rollouts(old, new))
    outcomes = {task.task: task.outcome for task in summary.tasks}
    assert outcomes == {"a": "passed", "b": "failed", "c": "agent_error", "gone": "missing"}
    assert summary.verdict == "fail"
    assert [d.code for d in summary.decided_by] == ["failed_tasks"]
    data = json_dict(summary)
    assert data["verdict"] == "fail"
    assert [t["outcome"] for t in data["tasks"]] == ["passed", "failed", "agent_error", "missing"]
    assert data["task_outcomes"]["failed"] == 1 and sum(data["task_outcomes"].values()) == 4


def test_a_reviewed_flip_is_accepted_and_the_run_passes(real_rows: Callable[[str], Rows]) -> None:
    old, new = _side(real_rows, {"a": 1.0, "b": 1.0}), _side(real_rows, {"a": 1.0, "b": 0.0})
    info = RunInfo(
        files=BySide(SideFile("o.jsonl"), SideFile("n.jsonl")),
        outcome=RunOutcome(None, 0, {"passed": 2}),
        hook_verdicts={"b": Verdict("passed", "reviewed")},
    )
    summary = build_summary(compare_rollouts(old, new), info)
    assert [task.outcome for task in summary.tasks] == ["passed", "accepted"]
    assert summary.verdict == "pass"


def test_a_narrowed_run_never_passes(real_rows: Callable[[str], Rows]) -> None:
    rows = _side(real_rows, {"a": 1.0, "b": 1.0})
    info = RunInfo(
        BySide(SideFile("o.jsonl"), SideFile("n.jsonl")), RunOutcome(1, 0, {"passed": 1}), ran_tasks=frozenset({"a"})
    )
    rerun = [dict(r, response=dict(r["response"], id=f"resp_rerun_{i}")) for i, r in enumerate(rows)]
    summary = build_summary(compare_rollouts(rows, rerun), info)
    assert [task.outcome for task in summary.tasks] == ["passed", "not_run"]
    assert summary.verdict == "inconclusive" and summary.decided_by[0].code == "narrowed"


def test_nothing_compared_is_inconclusive(real_rows: Callable[[str], Rows]) -> None:
    summary = build_summary(compare_rollouts(_side(real_rows, {"a": 1.0}), _side(real_rows, {"b": 1.0})))
    assert summary.verdict == "inconclusive"
    assert "nothing_compared" in [d.code for d in summary.decided_by]


def test_margin_mode_within_noise_and_undecided_aggregate(real_rows: Callable[[str], Rows]) -> None:
    old = _side(real_rows, {"a": 1.0, "b": 1.0, "c": 0.0})
    # a rerun: its own trajectories (the same ones rescored would be a verifier disagreement, which fails)
    new = [
        dict(row, response=dict(row["response"], output=[{"type": "message", "id": f"rerun-{row['task_id']}"}]))
        for row in _side(real_rows, {"a": 1.0, "b": 0.0, "c": 0.0})
    ]
    summary = build_summary(compare_rollouts(old, new), margin=0.05)
    assert [task.outcome for task in summary.tasks] == ["passed", "within_noise", "passed"]
    assert summary.verdict == "inconclusive"
    assert [d.code for d in summary.decided_by] == ["aggregate_undecided"]


def test_lost_evidence_is_inconclusive(real_rows: Callable[[str], Rows]) -> None:
    old = _side(real_rows, {f"t{i}": 1.0 for i in range(5)})
    new = _side(real_rows, {"t0": 1.0, "t1": 1.0})
    result = compare_rollouts(old, new)
    cover = coverage(result, parse_limit("20%"), parse_limit("30%"), max_uncompared=parse_limit("20%"))
    summary = build_summary(result, coverage=cover)
    assert not cover.passed and summary.verdict == "inconclusive"
    assert summary.decided_by[0].code == "evidence"

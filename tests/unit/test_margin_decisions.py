"""Margin mode's decisions are made once and every report reads them (the summary included)."""

from __future__ import annotations

import dataclasses

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.summary import build_summary, margin_decisions
from pytest_rollout_parity.core.statistics.paired import paired_section


def _rows(rewards: dict[str, list[float]]) -> list[dict[str, object]]:
    return [{"task_id": task, "reward": r} for task, values in rewards.items() for r in values]


OLD = _rows({"a": [1.0] * 6, "b": [1.0, 0.0, 1.0], "c": [0.0, 0.0], "d": [1.0]})
NEW = _rows({"a": [0.0] * 6, "b": [0.0, 1.0, 0.0], "c": [0.0, 0.0], "d": [1.0]})


def test_the_summary_holds_the_decisions_it_is_given() -> None:
    """Given decisions, the summary reads them instead of deciding again: a changed equivalence decision shows."""
    result = compare_rollouts(OLD, NEW)
    section = paired_section(result)
    made = margin_decisions(section, result.tasks, 0.3)
    assert made.equivalence is not None and made.fdr is not None
    flipped = dataclasses.replace(
        made, equivalence=dataclasses.replace(made.equivalence, passed=not made.equivalence.passed)
    )
    summary = build_summary(result, paired=section, margin=0.3, decisions=flipped)
    assert summary.equivalence is not None and summary.equivalence.passed is (not made.equivalence.passed)
    assert summary.failing_flips == sum(1 for j in made.judgements if j is not None and j.regression) == 1


def test_decisions_made_by_the_summary_equal_those_made_once() -> None:
    result = compare_rollouts(OLD, NEW)
    section = paired_section(result)
    made = margin_decisions(section, result.tasks, 0.3)
    alone, given = build_summary(result, margin=0.3), build_summary(result, margin=0.3, decisions=made)
    assert alone == given
    assert [t.outcome for t in alone.tasks] == ["failed", "within_noise", "passed", "passed"]


def test_without_a_margin_there_is_no_decision() -> None:
    result = compare_rollouts(OLD, NEW)
    made = margin_decisions(paired_section(result), result.tasks, None)
    assert (made.fdr, made.equivalence) == (None, None)
    assert made.judgements == (None,) * len(result.tasks)

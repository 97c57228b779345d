"""docs/semantics.md, "Evidence budget": the old side's tasks not compared, against one budget and the finer limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.completeness import Limit, coverage, parse_limit
from pytest_rollout_parity.plugin.options import ParitySettings

DEFAULTS = ParitySettings(Path("old.jsonl"), Path("new.jsonl"))
BUDGET = DEFAULTS.max_uncompared

REAL = "deepswe_opencode_trimmed.jsonl"


@pytest.fixture
def tasks(real_rows):
    """tasks(n, reward=1.0, **extra) -> n real rows, each its own task."""
    template = real_rows(REAL)[0]

    def make(names, reward=1.0, **extra):
        return [
            dict(template, task_id=name, verifier_metadata={"task_id": name}, reward=reward, **extra) for name in names
        ]

    return make


NAMES = [f"task-{i}" for i in range(10)]


def test_a_run_that_covered_a_tenth_fails_by_default(tasks):
    result = compare_rollouts(tasks(NAMES), tasks(NAMES[:1]))
    decision = coverage(result, DEFAULTS.max_missing, DEFAULTS.max_masked, max_uncompared=BUDGET)
    assert not decision.passed
    assert (decision.old_tasks, decision.missing, decision.masked) == (10, 9, 0)
    assert decision.message.splitlines()[0] == (
        "9 of 10 old task(s) not compared (9 missing) (over the limit 20% = 2); "
        "9 of 10 old task(s) missing from the new side (over the limit 20% = 2)"
    )
    assert decision.uncompared == 9


def test_masked_tasks_on_the_new_side_count_against_their_own_limit(tasks):
    new = tasks(NAMES[:6]) + tasks(NAMES[6:], reward=None, mask_sample=True, failure_kind="verifier_error")
    result = compare_rollouts(tasks(NAMES), new)
    decision = coverage(result, parse_limit("off"), parse_limit("3"), max_uncompared=parse_limit("off"))
    assert not decision.passed and decision.masked == 4
    assert decision.message.startswith("4 of 10 old task(s) masked on the new side (over the limit 3)")
    assert coverage(result, parse_limit("0"), parse_limit("40%"), max_uncompared=parse_limit("40%")).passed
    budget = coverage(result, parse_limit("off"), parse_limit("off"), max_uncompared=BUDGET)  # the budget alone
    assert not budget.passed and budget.message.startswith("4 of 10 old task(s) not compared (4 masked)")


def test_old_side_masks_and_new_only_tasks_do_not_count(tasks):
    old = tasks(NAMES[:5]) + tasks(NAMES[5:], reward=None)
    new = tasks(NAMES) + tasks(["new-only"])
    decision = coverage(compare_rollouts(old, new), parse_limit("0"), parse_limit("0"), max_uncompared=BUDGET)
    # the finer limits do not count them; the one budget does: a task masked on the old side is not compared
    assert not decision.passed and (decision.missing, decision.masked, decision.uncompared) == (0, 0, 5)
    assert decision.message.startswith("5 of 10 old task(s) not compared (5 masked)")
    within = coverage(compare_rollouts(old, new), parse_limit("0"), parse_limit("0"), max_uncompared=parse_limit("5"))
    assert within.passed and within.message.startswith("the gate has enough evidence")


@pytest.mark.parametrize(
    ("text", "count", "percent"),
    [("3", 3, None), ("10%", None, 10.0), (" 0 ", 0, None), ("OFF", None, None), ("100%", None, 100.0)],
)
def test_limits_parse(text, count, percent):
    limit = parse_limit(text)
    assert (limit.count, limit.percent) == (count, percent)


@pytest.mark.parametrize("text", ["-1", "1.5", "101%", "x", "", "nan%"])
def test_bad_limits_say_what_is_expected(text):
    with pytest.raises(ValueError, match="must be a count of tasks"):
        parse_limit(text)


def test_a_percentage_rounds_down_to_a_whole_task_and_off_allows_any():
    assert Limit("25%", percent=25.0).allowed(7) == 1
    assert Limit("10%", percent=10.0).allowed(30) == 3
    assert Limit("12.5%", percent=12.5).allowed(8) == 1
    assert Limit("20%", percent=20.0).allowed(5) == 1
    assert Limit("20%", percent=20.0).allowed(2) == 0  # one of two tasks lost is 50%, over a 20% budget
    assert Limit("0%", percent=0.0).allowed(3) == 0
    assert parse_limit("off").allowed(10) is None

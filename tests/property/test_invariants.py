"""Invariants of the classification, property-tested through the public Python API."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import CompareResult, compare_rollouts, summary_dict

TASK_IDS = st.text(alphabet="abcdefghij-", min_size=1, max_size=6).filter(lambda s: s.strip("-"))
REWARDS = st.one_of(
    st.sampled_from([0.0, 1.0, 0.5]),
    st.floats(min_value=-100, max_value=100, allow_nan=False),
    st.none(),
    st.just(float("nan")),
)


@st.composite
def rows_for(draw: st.DrawFn, ids: list[str], style: str) -> list[dict]:
    """Rows of one side: legacy `task_name` or Harbor `_ng_task_id`, 1-3 repeats, assorted signals."""
    rows = []
    for task in ids:
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            row: dict = {"reward": draw(REWARDS)}
            if style == "legacy":
                row["task_name"] = task
            else:
                row["_ng_task_id"] = {"taskset": "tb", "task_id": task}
            if draw(st.integers(0, 9)) == 0:
                row["mask_sample"] = True
                row["failure_kind"] = "verifier_error"
            if draw(st.integers(0, 9)) == 0:
                row["error"] = "Traceback...\nTimeoutError: agent timed out"
            if draw(st.integers(0, 9)) == 0:
                row["failure_kind"] = "harbor:verifier_timeout"
            rows.append(row)
    return rows


@st.composite
def pairs(draw: st.DrawFn) -> tuple[list[dict], list[dict]]:
    ids = draw(st.lists(TASK_IDS, min_size=1, max_size=8, unique=True))
    old_ids = [i for i in ids if draw(st.booleans()) or i == ids[0]]
    new_ids = [i for i in ids if draw(st.booleans()) or i == ids[0]]
    return draw(rows_for(old_ids, "legacy")), draw(rows_for(new_ids, "harbor"))


def _shape(result: CompareResult) -> dict[str, tuple]:
    return {
        t.task: (
            t.category,
            t.winner,
            None if t.old is None else (t.old.reward, t.old.masked is not None, len(t.old.facts)),
            None if t.new is None else (t.new.reward, t.new.masked is not None, len(t.new.facts)),
        )
        for t in result.tasks
    }


def _nan_safe(value: object) -> object:
    return "nan" if isinstance(value, float) and value != value else value


@settings(max_examples=150, deadline=None)
@given(pairs())
def test_counts_add_up_to_the_tasks(pair: tuple[list[dict], list[dict]]) -> None:
    counts = compare_rollouts(*pair).counts()
    assert (
        counts["identical"] + counts["flipped"] + counts["flipped_agent_error"] + counts["masked"] + counts["missing"]
        == counts["tasks"]
    )
    assert counts["flipped_old_win"] + counts["flipped_new_win"] == counts["flipped"]
    assert counts["missing_old_only"] + counts["missing_new_only"] == counts["missing"]
    assert counts["masked_old"] + counts["masked_new"] >= counts["masked"]


SWAPPED = {
    "flipped_old_win": "flipped_new_win",
    "flipped_new_win": "flipped_old_win",
    "masked_old": "masked_new",
    "masked_new": "masked_old",
    "missing_old_only": "missing_new_only",
    "missing_new_only": "missing_old_only",
}


@settings(max_examples=150, deadline=None)
@given(pairs())
def test_swapping_sides_swaps_winners_and_side_counts_only(pair: tuple[list[dict], list[dict]]) -> None:
    old_rows, new_rows = pair
    forward, backward = compare_rollouts(old_rows, new_rows), compare_rollouts(new_rows, old_rows)
    flip = {"old": "new", "new": "old", None: None}
    assert [t.task for t in forward.tasks] == [t.task for t in backward.tasks]
    for f, b in zip(forward.tasks, backward.tasks):
        assert f.category == b.category
        assert flip[f.winner] == b.winner
        assert (f.old is None) == (b.new is None) and (f.new is None) == (b.old is None)
    counts_f, counts_b = forward.counts(), backward.counts()
    assert {SWAPPED.get(k, k): v for k, v in counts_f.items()} == counts_b
    assert (forward.join.old_key, forward.join.new_key) == (backward.join.new_key, backward.join.old_key)


@settings(max_examples=150, deadline=None)
@given(pairs(), st.randoms(use_true_random=False))
def test_row_order_changes_no_category_or_reward(pair: tuple[list[dict], list[dict]], rnd: random.Random) -> None:
    old_rows, new_rows = pair
    shuffled_old, shuffled_new = old_rows[:], new_rows[:]
    rnd.shuffle(shuffled_old)
    rnd.shuffle(shuffled_new)
    before, after = compare_rollouts(old_rows, new_rows), compare_rollouts(shuffled_old, shuffled_new)
    assert {k: tuple(map(_nan_safe, v)) for k, v in _shape(before).items()} == {
        k: tuple(map(_nan_safe, v)) for k, v in _shape(after).items()
    }
    assert before.counts() == after.counts()


@settings(max_examples=150, deadline=None)
@given(pairs(), st.sampled_from(["old", "new", "both"]), REWARDS, REWARDS)
def test_a_fresh_task_changes_no_other_result(
    pair: tuple[list[dict], list[dict]], where: str, old_reward: float, new_reward: float
) -> None:
    old_rows, new_rows = pair
    fresh = "zz-fresh-task"
    grown_old = old_rows + ([{"task_name": fresh, "reward": old_reward}] if where in ("old", "both") else [])
    grown_new = new_rows + (
        [{"_ng_task_id": {"taskset": "tb", "task_id": fresh}, "reward": new_reward}] if where in ("new", "both") else []
    )
    before, after = _shape(compare_rollouts(old_rows, new_rows)), _shape(compare_rollouts(grown_old, grown_new))
    assert fresh in after
    del after[fresh]
    assert {k: tuple(map(_nan_safe, v)) for k, v in before.items()} == {
        k: tuple(map(_nan_safe, v)) for k, v in after.items()
    }


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs())
def test_items_terminal_summary_and_json_agree(pytester: pytest.Pytester, pair: tuple[list[dict], list[dict]]) -> None:
    old_rows, new_rows = pair
    old = pytester.path / "old.jsonl"
    new = pytester.path / "new.jsonl"
    old.write_text("".join(json.dumps(r) + "\n" for r in old_rows))
    new.write_text("".join(json.dumps(r) + "\n" for r in new_rows))
    summary_file = pytester.path / "summary.json"
    result = pytester.runpytest(
        f"--parity-old={old}", f"--parity-new={new}", f"--parity-json={summary_file}", "-p", "no:cacheprovider"
    )
    summary = json.loads(Path(summary_file).read_text())
    api = summary_dict(compare_rollouts(old_rows, new_rows))
    assert summary["counts"] == api["counts"]
    assert [(t["task"], t["category"]) for t in summary["tasks"]] == [(t["task"], t["category"]) for t in api["tasks"]]
    counts = summary["counts"]
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == counts["identical"]
    # the run-wide parity-coverage item fails besides the flips when the new side covers too little
    assert outcomes.get("failed", 0) == counts["flipped"] + (not summary["coverage"]["passed"])
    assert outcomes.get("xfailed", 0) == counts["flipped_agent_error"] + counts["masked"] + counts["missing"]
    table = {
        line.split()[0]: int(line.split()[1])
        for line in result.outlines
        if line.split()[:1] and line.split()[0] in counts and len(line.split()) > 1 and line.split()[1].isdigit()
    }
    for category in ("identical", "flipped", "flipped_agent_error", "masked", "missing", "tasks"):
        assert table[category] == counts[category]

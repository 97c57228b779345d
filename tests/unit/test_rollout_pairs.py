"""Pairing a task's rows per rollout when both sides hold the same trajectories (docs/semantics.md,
"Verifier disagreements"): by `_ng_rollout_index`, else by an equal trajectory; never for a rerun."""

from __future__ import annotations

from typing import Any, Optional

from hypothesis import given
from hypothesis import strategies as st

from pytest_rollout_parity.core.judging.classify import categorize, summarize_side
from pytest_rollout_parity.core.judging.rollout_pairs import (
    disagreements,
    rollout_pairs,
    trajectory_digest,
    with_verifier_disagreements,
)
from pytest_rollout_parity.core.model import CompareResult, Join, RowCounts, TaskComparison
from pytest_rollout_parity.core.reading.row_facts import reduce_row


def row(reward: float, text: str, rollout: Optional[int] = None, **extra: Any) -> dict[str, Any]:
    """A row shaped as NeMo Gym writes one: the trajectory is `response.output`."""
    found: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": "2+2?"}]},
        "response": {"id": "resp_x", "output": [{"id": f"msg_{text}", "type": "message", "content": text}]},
        "reward": reward,
        **extra,
    }
    if rollout is not None:
        found["_ng_rollout_index"] = rollout
    return found


def task(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> TaskComparison:
    sides = [summarize_side([reduce_row(r, line=i + 1, keep=True) for i, r in enumerate(rows)]) for rows in (old, new)]
    return categorize("t", sides[0], sides[1])


def test_same_trajectories_pair_by_rollout_index_whatever_the_order() -> None:
    old = [row(1.0, "a", 0), row(0.0, "b", 1), row(1.0, "c", 2)]
    new = [row(1.0, "c", 2), row(1.0, "b", 1), row(1.0, "a", 0)]
    found = task(old, new)
    pairs = rollout_pairs(found)
    assert pairs is not None
    assert [(p.old.rollout, p.new.rollout, p.agrees) for p in pairs] == [(0, 0, True), (1, 1, False), (2, 2, True)]
    assert disagreements(pairs) == 1


def test_without_rollout_indices_rows_pair_by_equal_trajectories() -> None:
    old = [row(1.0, "a"), row(0.0, "b")]
    new = [row(1.0, "b"), row(1.0, "a")]
    pairs = rollout_pairs(task(old, new))
    assert pairs is not None
    assert [(p.old.line, p.new.line) for p in pairs] == [(1, 2), (2, 1)]
    assert disagreements(pairs) == 1


def test_a_repeated_rollout_index_leaves_the_pairing_to_the_trajectories() -> None:
    pairs = rollout_pairs(task([row(1.0, "a", 0), row(1.0, "b", 0)], [row(0.0, "a", 0), row(1.0, "b", 1)]))
    assert pairs is not None and [(p.old.line, p.new.line, p.agrees) for p in pairs] == [(1, 1, False), (2, 2, True)]


def test_a_rerun_does_not_pair() -> None:
    """The same indices, other trajectories (a real rerun): no pairs, judged as independent runs."""
    assert rollout_pairs(task([row(1.0, "a", 0), row(1.0, "b", 1)], [row(0.0, "x", 0), row(1.0, "b", 1)])) is None
    assert rollout_pairs(task([row(1.0, "a"), row(1.0, "b")], [row(0.0, "b"), row(1.0, "y")])) is None


def test_rows_that_cannot_pair_one_to_one_do_not() -> None:
    # another number of scored rows, a repeated trajectory, no trajectory at all
    assert rollout_pairs(task([row(1.0, "a", 0)], [row(0.0, "a", 0), row(1.0, "b", 1)])) is None
    assert rollout_pairs(task([row(1.0, "a"), row(1.0, "b")], [row(0.0, "a"), row(1.0, "a")])) is None
    bare = [{"reward": 1.0, "_ng_rollout_index": 0}]
    assert rollout_pairs(task(bare, [{"reward": 0.0, "_ng_rollout_index": 0}])) is None


def test_masked_rows_are_left_out_of_the_pairs() -> None:
    old = [row(1.0, "a", 0), row(1.0, "b", 1), row(1.0, "c", 2, mask_sample=True)]
    new = [row(0.0, "a", 0), row(1.0, "b", 1), row(1.0, "z", 2)]
    pairs = rollout_pairs(task(old, new))
    assert pairs is None  # the new side scores 3 rows, the old 2: they do not pair one to one
    new[2]["mask_sample"] = True
    pairs = rollout_pairs(task(old, new))
    assert pairs is not None and [p.old.rollout for p in pairs] == [0, 1]


def test_the_trajectory_digest_reads_the_value_not_its_spelling() -> None:
    a = {"response": {"output": [{"b": 1, "a": "é"}]}}
    b = {"response": {"output": [{"a": "é", "b": 1}]}}
    assert trajectory_digest(a) == trajectory_digest(b) is not None
    assert trajectory_digest({"response": {"output": []}}) is None
    assert trajectory_digest({"reward": 1.0}) is None


def test_only_flips_are_marked_with_their_disagreements() -> None:
    flip = task([row(1.0, "a", 0), row(1.0, "b", 1)], [row(0.0, "a", 0), row(1.0, "b", 1)])
    same = task([row(1.0, "a", 0)], [row(1.0, "a", 0)])
    rerun = task([row(1.0, "a", 0)], [row(0.0, "x", 0)])
    result = CompareResult(tasks=[flip, same, rerun], join=Join("k", "k"), rows=RowCounts(4, 4))
    marked = with_verifier_disagreements(result)
    assert [t.disagreements for t in marked.tasks] == [1, 0, 0]
    assert marked.counts()["verifier_disagreements"] == 1
    assert with_verifier_disagreements(CompareResult([same], Join("k", "k"), RowCounts(1, 1))).tasks == [same]


@given(
    rewards=st.lists(st.sampled_from([0.0, 1.0, 0.5]), min_size=1, max_size=8),
    data=st.data(),
    indexed=st.booleans(),
)
def test_a_rescored_copy_in_any_order_pairs_and_counts_each_changed_reward(
    rewards: list[float], data: st.DataObject, indexed: bool
) -> None:
    """Whatever the rows' order on the new side, with or without rollout indices, every rollout pairs
    with its own trajectory and the disagreements are exactly the rewards the new verifier changed."""
    changed = data.draw(st.sets(st.integers(0, len(rewards) - 1)))
    old = [row(r, f"t{i}", i if indexed else None) for i, r in enumerate(rewards)]
    new = [row(1.0 - r if i in changed else r, f"t{i}", i if indexed else None) for i, r in enumerate(rewards)]
    new = data.draw(st.permutations(new))
    pairs = rollout_pairs(task(old, new))
    assert pairs is not None
    assert all(p.old.row["response"] == p.new.row["response"] for p in pairs)  # type: ignore[index]
    assert disagreements(pairs) == sum(1 for i in changed if rewards[i] != 0.5)

"""Same trajectories, paired per rollout: the verifier told apart from the environment.

`gym eval reverify` scores the old rollouts again with the new server, and a replay of cached
responses runs the same trajectories again: such a task's rows pair rollout by rollout, by
`_ng_rollout_index` (by `_ng_rollout_id` where a side reuses its indices), or by an equal
trajectory. A reward that differs within a pair is a verifier disagreement: the same trajectory
scored differently, which no sampling noise explains, so a task holding one is a flip even where
its disagreements cancel in the mean. The rule is in docs/semantics.md, "Verifier disagreements".

The rows hold their trajectories only in their files, so pairing reads rows, once, while the
comparison is made. Paired by index, a pair's trajectories are read one pair at a time, so a real
rerun (whose first pair already differs) costs two rows; a task whose scored rewards are all one
value, where no pair can disagree, is paired only when asked (:func:`rollout_pairs`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any, Optional

from ..model import CompareResult, RolloutPair, TaskComparison
from ..reading.fields import ROLLOUT_ID, TRAJECTORY
from ..reading.prompt_labels import prompt_hash
from ..reading.row_facts import lookup


def trajectory_digest(row: dict[str, Any]) -> Optional[str]:
    """A hash of the row's trajectory (`response.output`, canonical JSON), or None without one."""
    value = lookup(row, TRAJECTORY)
    return prompt_hash(value) if value else None


def _matched(old: Sequence[Hashable], new: Sequence[Hashable]) -> Optional[list[tuple[int, int]]]:
    """(old place, new place) of each key, in the old side's order, when every row has a key,
    distinct on its side, and both sides have the same set; else None."""
    old_at = {key: place for place, key in enumerate(old)}
    new_at = {key: place for place, key in enumerate(new)}
    if None in old_at or len(old_at) != len(old) or len(new_at) != len(new) or old_at.keys() != new_at.keys():
        return None
    return [(place, new_at[key]) for key, place in old_at.items()]


def _ids(rows: Sequence[dict[str, Any]]) -> list[Optional[str]]:
    """Each row's `_ng_rollout_id` (hashed: any JSON value), None where it has none."""
    return [None if row.get(ROLLOUT_ID) is None else prompt_hash(row[ROLLOUT_ID]) for row in rows]


def _pairs(task: TaskComparison) -> Optional[tuple[RolloutPair, ...]]:
    """The task's scored rows paired rollout by rollout when every pair holds the same trajectory
    (a re-verification), else None (the sides ran the task apart: nothing pairs them)."""
    old, new = task.old, task.new
    if old is None or new is None:
        return None
    olds, news = [f for f in old.facts if f.scored], [f for f in new.facts if f.scored]
    if not olds or len(olds) != len(news):
        return None
    order = _matched([f.rollout for f in olds], [f.rollout for f in news])
    if order is not None:
        for i, j in order:  # a pair at a time: a rerun's first pair already differs
            digest = trajectory_digest(old.read_row(olds[i]))
            if digest is None or digest != trajectory_digest(new.read_row(news[j])):
                return None
    else:  # indices reused or absent: by NeMo Gym's explicit capture id, else by the trajectories
        old_rows, new_rows = [old.read_row(f) for f in olds], [new.read_row(f) for f in news]
        old_digests = [trajectory_digest(r) for r in old_rows]
        new_digests = [trajectory_digest(r) for r in new_rows]
        order = _matched(_ids(old_rows), _ids(new_rows)) or _matched(old_digests, new_digests)
        if order is None or any(old_digests[i] is None or old_digests[i] != new_digests[j] for i, j in order):
            return None
    return tuple(RolloutPair(olds[i], news[j]) for i, j in order)


def _may_disagree(task: TaskComparison) -> bool:
    """The task was compared and its scored rewards are not all one value: a pair of it may disagree."""
    if task.category not in ("identical", "flipped") or task.old is None or task.new is None:
        return False
    return len({f.reward for side in (task.old, task.new) for f in side.facts if f.scored}) > 1


def rollout_pairs(task: TaskComparison) -> Optional[tuple[RolloutPair, ...]]:
    """The task's rows paired rollout by rollout, each pair holding the same trajectory (a
    re-verification), or None when the sides ran the task apart: the comparison's pairing, or for a
    task it left unpaired (its rewards all one value) a pairing made now."""
    return task.pairs if task.pairs is not None or _may_disagree(task) else _pairs(task)


def first_disagreement(task: TaskComparison) -> Optional[RolloutPair]:
    """The first rollout the two verifiers scored differently, one the task's losing side lost where
    there is one; None when no pair disagrees."""
    disagreeing = [pair for pair in task.pairs or () if not pair.agrees]
    return next((pair for pair in disagreeing if pair.loser == task.loser), next(iter(disagreeing), None))


def with_verifier_disagreements(result: CompareResult) -> CompareResult:
    """The result with every task that may hold a verifier disagreement paired per rollout (once);
    a task of equal means whose pairs disagree (they cancel in the mean) is a flip with no winner."""
    tasks = list(result.tasks)
    for place, task in enumerate(tasks):
        pairs = _pairs(task) if _may_disagree(task) else None
        if pairs is not None:
            task = tasks[place] = replace(task, pairs=pairs)
            if task.category == "identical" and task.disagreements:
                tasks[place] = replace(task, category="flipped")
    return replace(result, tasks=tasks)

"""Same trajectories, paired per rollout: the verifier told apart from the environment.

`gym eval reverify` scores the old rollouts again with the new server, and a replay of cached
responses runs the same trajectories again: such a task's rows pair rollout by rollout, by
`_ng_rollout_index`, or by an equal trajectory. A reward that differs within a pair is a verifier
disagreement: the same trajectory scored differently, which no sampling noise explains. The rule
is in docs/semantics.md, "Verifier disagreements".

The rows hold their trajectories only in their files, so pairing reads rows: only a flip's are
paired while the comparison is made, and a pair's trajectories are read one pair at a time, so a
real rerun (whose first pair already differs) costs two rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from ..model import REWARD_TOLERANCE, CompareResult, RowFacts, TaskComparison, TaskSide
from ..reading.fields import TRAJECTORY
from ..reading.prompt_labels import prompt_hash
from ..reading.row_facts import lookup


@dataclass(frozen=True, repr=False)
class RolloutPair:
    """One rollout on both sides: the old row's and the new row's facts (the same trajectory); each
    side's ``read_row`` reads the full row."""

    old: RowFacts
    new: RowFacts

    @property
    def rollout(self) -> Optional[int]:
        """The pair's `_ng_rollout_index` (None: paired by an equal trajectory)."""
        return self.old.rollout if self.old.rollout == self.new.rollout else None

    @property
    def agrees(self) -> bool:
        """Both verifiers gave the trajectory the same reward."""
        old, new = self.old.reward, self.new.reward
        return old is not None and new is not None and abs(old - new) <= REWARD_TOLERANCE

    def __repr__(self) -> str:
        return f"RolloutPair(rollout={self.rollout!r}, old_reward={self.old.reward!r}, new_reward={self.new.reward!r})"


def trajectory_digest(row: dict[str, Any]) -> Optional[str]:
    """A hash of the row's trajectory (`response.output`, canonical JSON), or None without one."""
    value = lookup(row, TRAJECTORY)
    if not value:
        return None
    return prompt_hash(value)


def _by_index(olds: Sequence[RowFacts], news: Sequence[RowFacts]) -> Optional[list[RolloutPair]]:
    """The rows paired by `_ng_rollout_index`: every row has one, distinct on its side, the same set on both."""
    old_at = {f.rollout: f for f in olds}
    new_at = {f.rollout: f for f in news}
    if None in old_at or len(old_at) != len(olds) or len(new_at) != len(news) or old_at.keys() != new_at.keys():
        return None
    return [RolloutPair(old_at[index], new_at[index]) for index in sorted(old_at)]  # type: ignore[type-var]


def rollout_pairs(task: TaskComparison) -> Optional[tuple[RolloutPair, ...]]:
    """The task's scored rows paired rollout by rollout when every pair holds the same trajectory
    (a re-verification), else None (the sides ran the task apart: nothing pairs them)."""
    old, new = task.old, task.new
    if old is None or new is None:
        return None
    olds = [f for f in old.facts if f.scored]
    news = [f for f in new.facts if f.scored]
    if not olds or len(olds) != len(news):
        return None
    pairs = _by_index(olds, news)
    if pairs is not None:
        for pair in pairs:  # a pair at a time: a rerun's first pair already differs
            digest = trajectory_digest(old.read_row(pair.old))
            if digest is None or digest != trajectory_digest(new.read_row(pair.new)):
                return None
        return tuple(pairs)
    return _by_trajectory(olds, news, old, new)


def _by_trajectory(
    olds: Sequence[RowFacts], news: Sequence[RowFacts], old: TaskSide, new: TaskSide
) -> Optional[tuple[RolloutPair, ...]]:
    """The rows paired by equal trajectories, when each old row's is on exactly one new row."""
    first = trajectory_digest(old.read_row(olds[0]))
    if first is None:
        return None
    new_by_digest: dict[str, RowFacts] = {}
    for facts in news:
        digest = trajectory_digest(new.read_row(facts))
        if digest is None or digest in new_by_digest:
            return None
        new_by_digest[digest] = facts
    if first not in new_by_digest:
        return None
    pairs = []
    for facts in olds:
        digest = first if facts is olds[0] else trajectory_digest(old.read_row(facts))
        match = new_by_digest.pop(digest, None) if digest is not None else None
        if match is None:
            return None
        pairs.append(RolloutPair(facts, match))
    return tuple(pairs)


def disagreements(pairs: Sequence[RolloutPair]) -> int:
    """How many rollouts the two verifiers scored differently."""
    return sum(1 for pair in pairs if not pair.agrees)


def first_disagreement(task: TaskComparison) -> Optional[RolloutPair]:
    """The first rollout of a verifier disagreement (the same trajectory scored differently), or None."""
    if not task.disagreements:
        return None
    return next((pair for pair in rollout_pairs(task) or () if not pair.agrees), None)


def with_verifier_disagreements(result: CompareResult) -> CompareResult:
    """The result with each flip whose rows pair per rollout marked with its verifier disagreements."""
    tasks = list(result.tasks)
    changed = False
    for i, task in enumerate(tasks):
        if task.category != "flipped":
            continue
        pairs = rollout_pairs(task)
        if pairs is not None:
            tasks[i] = replace(task, disagreements=disagreements(pairs))
            changed = True
    return replace(result, tasks=tasks) if changed else result

"""One side of a task, the category of a task, and the whole comparison (docs/semantics.md,
"Categories"). Where both sides hold the same trajectories (`gym eval reverify`, a replay of cached
responses), a task's rows pair per rollout, and a reward that differs within a pair is a verifier
disagreement, which no sampling noise explains ("Verifier disagreements").
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Optional

from ..identity.item_names import listed
from ..identity.join import SideInput, join_sides
from ..model import (
    COMPARED_CATEGORIES,
    REWARD_TOLERANCE,
    Category,
    CompareResult,
    Join,
    RolloutPair,
    RowCounts,
    RowFacts,
    RowReader,
    Side,
    TaskComparison,
    TaskSide,
    scored_rewards,
)
from ..reading.fields import PROMPT, ROLLOUT_ID, TRAJECTORY
from ..reading.row_facts import lookup
from ..reading.task_idents import natural_key, prompt_hash


def enough_scored(scored: int, rows: int) -> bool:
    """A side of a task is compared on its scored rows when at least half of its rows are scored: once
    most are masked, the few that scored are those the infrastructure let through, which say little
    about the task (docs/semantics.md, "Categories")."""
    return scored > 0 and 2 * scored >= rows


def mean_reward(rewards: Sequence[float]) -> float:
    """The exact mean of finite rewards, also when their sum leaves the float range (two rewards
    near 1.8e308, which a row may hold): then each is scaled down by a power of two (exact) that
    keeps their sum in range, and the mean, never larger than the largest reward, scaled back."""
    try:
        return math.fsum(rewards) / len(rewards)
    except OverflowError:
        shift = len(rewards).bit_length() + 1
        return math.ldexp(math.fsum(math.ldexp(reward, -shift) for reward in rewards) / len(rewards), shift)


def summarize_side(facts: Sequence[RowFacts], reader: Optional[RowReader] = None) -> TaskSide:
    """A side's rows for one task reduced: the mean reward of its scored rows, mask text, agent error,
    failure kind; the side is masked only when too few rows are scored (:func:`enough_scored`)."""
    if len(facts) == 1:  # most tasks: one row a side, reduced without the lists below
        only = facts[0]
        unmasked = only.mask is None
        return TaskSide(
            facts,
            reward=only.reward if only.scored else None,
            masked=only.mask,
            agent_error=(only.agent_error or None) if unmasked else None,
            failure_kind=(only.failure_kind or None) if unmasked else None,
            reader=reader,
        )
    rewards = scored_rewards(facts)
    reasons = [f.mask for f in facts if f.mask is not None]
    if not reasons or enough_scored(len(rewards), len(facts)):
        masked = None
    else:
        masked = f"{len(reasons)}/{len(facts)} rows masked: {reasons[0]}"
        if rewards:
            masked += f" (only {len(rewards)} scored: too few to compare)"
    return TaskSide(
        facts,
        reward=mean_reward(rewards) if rewards else None,
        masked=masked,
        agent_error=next((f.agent_error for f in facts if f.agent_error and f.mask is None), None),
        failure_kind=next((f.failure_kind for f in facts if f.failure_kind and f.mask is None), None),
        reader=reader,
    )


def trajectory_digest(row: dict[str, Any]) -> Optional[str]:
    """A hash of the row's trajectory, its input (`responses_create_params.input`) and its output
    (`response.output`) as canonical JSON; None without an output. Both count: a game whose state is
    its prompt answers a bare `hit` in many rollouts that are not the same trajectory."""
    output = lookup(row, TRAJECTORY)
    return prompt_hash([lookup(row, PROMPT), output]) if output else None


def _pairable(side: TaskSide) -> list[RowFacts]:
    """The side's rows that take part in pairing: scored (a masked row takes no part) and without an
    agent error (its rollout broke: a rerun candidate, whatever the verifier said)."""
    return [f for f in side.facts if f.scored and not f.agent_error]


def _shared(old: Sequence[Hashable], new: Sequence[Hashable]) -> Optional[list[tuple[int, int]]]:
    """(old place, new place) of each key both sides hold, in the old side's order, when every row has
    a key and each side's are distinct; else None, and None when no key is on both sides. A row
    whose key the other side lacks (its partner masked, broken or absent) stays unpaired."""
    old_at = {key: place for place, key in enumerate(old)}
    new_at = {key: place for place, key in enumerate(new)}
    if None in old_at or None in new_at or len(old_at) != len(old) or len(new_at) != len(new):
        return None
    return [(place, new_at[key]) for key, place in old_at.items() if key in new_at] or None


@dataclass(eq=False)
class _Pairing:
    """One task's pairing under way (:func:`_pairings`): its pairable rows (:func:`_pairable`) and the
    pairs by `_ng_rollout_index` (None: by NeMo Gym's capture id, else by the trajectories)."""

    sides: tuple[TaskSide, TaskSide]
    olds: list[RowFacts]
    news: list[RowFacts]
    order: Optional[list[tuple[int, int]]]
    #: a read row's `_ng_rollout_id` (hashed: any JSON value) and trajectory digest: all pairing
    #: keeps of a row, however many rows the task has
    keys: dict[RowFacts, tuple[Optional[str], Optional[str]]] = field(default_factory=dict)
    ended: bool = False

    @cached_property
    def wanted(self) -> tuple[list[RowFacts], list[RowFacts]]:
        """Each side's rows to read: the paired ones, or all without indices."""
        if self.order is None:
            return self.olds, self.news
        return [self.olds[i] for i, _ in self.order], [self.news[j] for _, j in self.order]

    @cached_property
    def partners(self) -> dict[RowFacts, RowFacts]:
        """Each new row's old partner by `_ng_rollout_index`."""
        return dict(zip(*reversed(self.wanted)))

    @cached_property
    def must_match(self) -> Optional[set[Optional[str]]]:
        """The old rows' digests, once read, where every new row must find its equal among them (no
        indices and no capture ids, and no more new rows than old); else None."""
        if self.order is not None or len(self.news) > len(self.olds) or all(self.keys[f][0] for f in self.olds):
            return None
        return {self.keys[f][1] for f in self.olds}

    def read(self, side: int, facts: RowFacts) -> None:
        """Read one row's keys (``side`` 0 old, 1 new). A new row, read after all old ones, that cannot
        pair ends the pairing: its partner's trajectory differs, or, without indices or capture ids,
        no old row's equals it while every new row must pair. So a rerun costs one new row."""
        row = self.sides[side].read_row(facts)
        capture, digest = row.get(ROLLOUT_ID), trajectory_digest(row)
        self.keys[facts] = (None if capture is None else prompt_hash(capture), digest)
        if side and self.order is not None:
            self.ended = self.keys[self.partners[facts]][1] != digest
        elif side and self.must_match is not None:
            self.ended = digest not in self.must_match

    def pairs(self) -> Optional[tuple[RolloutPair, ...]]:
        """The rows paired, every pair holding one trajectory, or None."""
        if self.ended:
            return None
        olds, news = ([self.keys.get(f, (None, None)) for f in rows] for rows in (self.olds, self.news))
        order = self.order or _shared([k[0] for k in olds], [k[0] for k in news])
        if order is None:  # by the trajectories: every row of one side pairs (a rerun may share one by chance)
            order = _shared([k[1] for k in olds], [k[1] for k in news])
            if order is not None and len(order) < min(len(olds), len(news)):
                return None
        if order is None or any(olds[i][1] is None or olds[i][1] != news[j][1] for i, j in order):
            return None
        return tuple(RolloutPair(self.olds[i], self.news[j]) for i, j in order)


def _plan(task: TaskComparison) -> Optional[_Pairing]:
    """The pairing a task needs read, or None where its facts already rule one out: no pairable row
    on a side, or two model calls (their response ids differ: a rerun, told without reading a row)."""
    if task.old is None or task.new is None:
        return None
    olds, news = _pairable(task.old), _pairable(task.new)
    order = _shared([f.rollout for f in olds], [f.rollout for f in news])
    if order is not None:
        calls = [(olds[i].response, news[j].response) for i, j in order]
        if any(None not in pair and pair[0] != pair[1] for pair in calls):
            return None  # two model calls (their response ids differ): no row is read again
    else:  # indices reused or absent: by NeMo Gym's explicit capture id, else by the trajectories
        old_calls, new_calls = {f.response for f in olds}, {f.response for f in news}
        if not olds or not news or (None not in old_calls | new_calls and old_calls.isdisjoint(new_calls)):
            return None
    return _Pairing((task.old, task.new), olds, news, order)


def _pairings(tasks: Sequence[TaskComparison]) -> list[Optional[tuple[RolloutPair, ...]]]:
    """Each task's rows paired rollout by rollout when every pair holds the same trajectory, else None.
    The rows are read a side at a time, all tasks' together in file order: a reader that keeps its
    files open passes over each once, where task by task it would decompress a file again per row."""
    plans = [_plan(task) for task in tasks]
    for side in (0, 1):
        wanted = [(facts, plan) for plan in plans if plan is not None for facts in plan.wanted[side]]
        for facts, plan in sorted(wanted, key=lambda each: each[0].place):
            if not plan.ended:
                plan.read(side, facts)
    return [None if plan is None else plan.pairs() for plan in plans]


def _may_disagree(task: TaskComparison) -> bool:
    """The task was compared and its pairable rewards are not all one value: a pair of it may disagree."""
    if task.category not in COMPARED_CATEGORIES or task.old is None or task.new is None:
        return False
    return len({f.reward for side in (task.old, task.new) for f in _pairable(side)}) > 1


def rollout_pairs(task: TaskComparison) -> Optional[tuple[RolloutPair, ...]]:
    """The task's rows paired rollout by rollout (:func:`_pairings`): the comparison's pairing, or for a
    task it left unpaired (its rewards all one value) a pairing made now."""
    return task.pairs if task.pairs is not None or _may_disagree(task) else _pairings([task])[0]


def first_disagreement(task: TaskComparison) -> Optional[RolloutPair]:
    """The first rollout the verifiers scored differently, one the losing side lost where there is one."""
    disagreeing = [pair for pair in task.pairs or () if not pair.agrees]
    return next((pair for pair in disagreeing if pair.loser == task.loser), next(iter(disagreeing), None))


def with_rollout_pairs(tasks: Sequence[TaskComparison]) -> list[TaskComparison]:
    """The tasks with their rows paired per rollout where a pair may disagree. A task holding a
    verifier disagreement is a flip whatever else it holds: also where its means agree (the
    disagreements cancel; a flip with no winner) and where a side reports an agent error."""
    mixed = [task for task in tasks if _may_disagree(task)]
    found = {id(task): pairs for task, pairs in zip(mixed, _pairings(mixed)) if pairs is not None}
    paired = [replace(task, pairs=found[id(task)]) if id(task) in found else task for task in tasks]
    return [replace(task, category="flipped") if task.disagreements else task for task in paired]


def categorize(
    task: str, old: Optional[TaskSide], new: Optional[TaskSide], taskset: Optional[str] = None
) -> TaskComparison:
    """The category of one task, the first that applies (docs/semantics.md, "Categories")."""
    category: Category
    winner: Optional[Side] = None
    if old is None or new is None:
        category = "missing"
    elif old.masked or new.masked:
        category = "masked"
    else:
        # unmasked sides always have a finite reward: a row without one is masked ("no reward")
        old_reward, new_reward = old.reward or 0.0, new.reward or 0.0
        if abs(old_reward - new_reward) <= REWARD_TOLERANCE:
            category = "identical"
        else:
            winner = "old" if old_reward > new_reward else "new"
            category = "flipped_agent_error" if (old.agent_error or new.agent_error) else "flipped"
    return TaskComparison(task=task, category=category, old=old, new=new, winner=winner, taskset=taskset)


def _taskset_of(side: SideInput, rows: Optional[list[int]]) -> Optional[str]:
    """The first taskset named by one side's rows of a task (the paired statistics cluster on it)."""
    for index in rows or ():
        ident = side.values[index]
        if ident is not None and ident[0] is not None:
            return ident[0]
    return None


def compare_sides(
    old: SideInput, new: SideInput, old_key: Optional[str] = None, new_key: Optional[str] = None
) -> CompareResult:
    """Join both sides, classify every task (in natural label order) and collect the notes."""
    joined = join_sides(old, new, old_key, new_key)
    tasks: list[TaskComparison] = []
    for label in joined.old.keys() | joined.new.keys():
        old_rows, new_rows = joined.old.get(label), joined.new.get(label)
        old_side = summarize_side([old.facts[i] for i in old_rows], old.reader) if old_rows else None
        new_side = summarize_side([new.facts[i] for i in new_rows], new.reader) if new_rows else None
        taskset = _taskset_of(new, new_rows) or _taskset_of(old, old_rows)
        tasks.append(categorize(label, old_side, new_side, taskset))
    tasks = with_rollout_pairs(tasks)
    for side_name, side in (("old", old), ("new", new)):  # a row naming no task is masked, never missing
        anonymous = [index for index, value in enumerate(side.values) if value is None]
        for n, index in enumerate(anonymous, start=1):
            summary = summarize_side([side.facts[index]], side.reader)
            pair = (summary, None) if side_name == "old" else (None, summary)
            tasks.append(TaskComparison(f"unknown ({side_name}) #{n}", "masked", *pair))
    tasks.sort(key=lambda t: natural_key(t.task))

    notes = list(joined.notes)
    if repeated := [t.task for t in tasks if (t.old and t.old.repeated) or (t.new and t.new.repeated)]:
        notes.append(
            f"{len(repeated)} task(s) have several rows on a side; they are compared on the mean reward: "
            + listed(repeated)
        )
    return CompareResult(
        tasks=tasks,
        join=Join(
            old_key=old.key,
            new_key=new.key,
            old_key_reason=old.reason,
            new_key_reason=new.reason,
            old_prefix_stripped=joined.old_prefix_stripped,
            new_prefix_stripped=joined.new_prefix_stripped,
            keyed_by_taskset=joined.keyed_by_taskset,
        ),
        rows=RowCounts(
            old=len(old.facts),
            new=len(new.facts),
            old_masked=sum(1 for f in old.facts if f.mask is not None),
            new_masked=sum(1 for f in new.facts if f.mask is not None),
        ),
        notes=notes,
        unjoined=joined.unjoined,
    )

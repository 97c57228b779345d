"""One side of a task, the category of a task, and the whole comparison.

The rules are in docs/semantics.md, "Categories".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

from ..errors import Place
from ..identity.item_names import listed, natural_key
from ..identity.join import REASON_SHARDED, Join, TaskIdent, check_prompts, group_rows, join
from ..model import NO_OFFSET, Category, CompareResult, RowFacts, RowOrigin, RowReader, Side, TaskComparison, TaskSide
from ..reading.fields import PROMPT, TASK_INDEX

REWARD_TOLERANCE = 1e-9


def enough_scored(scored: int, rows: int) -> bool:
    """A side of a task is compared on its scored rows when at least half of its rows are scored.

    A masked row is left out, and the rest still measure the task; once most rows are masked, the
    few that scored are the ones the infrastructure let through, which say little about the task
    (docs/semantics.md, "Categories").
    """
    return scored > 0 and 2 * scored >= rows


def summarize_side(facts: Sequence[RowFacts], reader: Optional[RowReader] = None) -> TaskSide:
    """Reduce a side's rows for one task: mean reward of its scored rows, mask text, agent error, failure kind.

    A masked row's reward never enters the mean; the side is masked only when too few rows are
    scored (:func:`enough_scored`).
    """
    if len(facts) == 1:  # most tasks: one row a side, reduced without the lists below
        only = facts[0]
        unmasked = only.mask is None
        reward = only.reward if unmasked and only.reward is not None and math.isfinite(only.reward) else None
        return TaskSide(
            facts,
            reward=reward,
            masked=only.mask,
            agent_error=(only.agent_error or None) if unmasked else None,
            failure_kind=(only.failure_kind or None) if unmasked else None,
            reward_rows=0 if reward is None else 1,
            reader=reader,
        )
    rewards = [f.reward for f in facts if f.mask is None and f.reward is not None and math.isfinite(f.reward)]
    reasons = [f.mask for f in facts if f.mask is not None]
    if not reasons or enough_scored(len(rewards), len(facts)):
        masked = None
    else:
        masked = f"{len(reasons)}/{len(facts)} rows masked: {reasons[0]}"
        if rewards:
            masked += f" (only {len(rewards)} scored: too few to compare)"
    return TaskSide(
        facts,
        reward=math.fsum(rewards) / len(rewards) if rewards else None,
        masked=masked,
        agent_error=next((f.agent_error for f in facts if f.agent_error and f.mask is None), None),
        failure_kind=next((f.failure_kind for f in facts if f.failure_kind and f.mask is None), None),
        reward_rows=len(rewards),
        reader=reader,
    )


def categorize(
    task: str,
    old: Optional[TaskSide],
    new: Optional[TaskSide],
    *,
    anonymous: bool = False,
    taskset: Optional[str] = None,
) -> TaskComparison:
    """The category of one task, the first that applies (docs/semantics.md, "Categories")."""
    category: Category
    winner: Optional[Side] = None
    if old is None or new is None:
        category = "masked" if anonymous else "missing"
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


@dataclass
class SideInput:
    """A side ready to be joined: its row facts, each row's join value (None: anonymous), its key."""

    facts: Sequence[RowFacts]
    values: Sequence[Optional[TaskIdent]]
    key: str
    reader: Optional[RowReader] = None
    reason: str = ""
    notes: Sequence[str] = ()
    prompts: Optional[Sequence[Optional[TaskIdent]]] = None
    name: str = ""
    #: a sharded side's files as shown, in order (a row's ``shard`` indexes them); empty for one file
    shard_names: Sequence[str] = ()

    def where(self, index: int) -> Place:
        """Where row ``index`` of the side is, for messages (in its own shard's file)."""
        facts = self.facts[index]
        name = self.shard_names[facts.shard] if self.shard_names else self.name
        if facts.offset is NO_OFFSET:
            return Place(name, facts.line, f"{name}: row {facts.line}")
        if facts.origin is RowOrigin.MAIN:
            return Place(name, facts.line)
        return Place(name, facts.line, f"{name} (sidecar line {facts.line})")


def _align_fallbacks(old: SideInput, new: SideInput) -> list[str]:
    """A side keyed on `_ng_task_index` joins a side keyed on the prompt by its own prompts."""
    for side, name, other in ((old, "old", new), (new, "new", old)):
        if side.key == TASK_INDEX and other.key == PROMPT and side.prompts is not None:
            side.key, side.values = PROMPT, side.prompts
            if other.reason == REASON_SHARDED:
                side.reason = "the prompt, as the other side is in shards whose _ng_task_index restarts"
                return [f"the {name} side is keyed on the prompt too, to join the other side, whose shards each "
                        "number their tasks from 0"]
            side.reason = "the prompt, as the other side has no _ng_task_index"
            return [f"the {name} side is keyed on the prompt too, to join the other side, which has no _ng_task_index"]
    return []


def _side_notes(old: SideInput, new: SideInput) -> list[str]:
    """Each side's identity notes, said once for both when both sides say the same."""
    notes = [f"both sides: {note}" for note in old.notes if note in new.notes]
    notes += [f"old side: {note}" for note in old.notes if note not in new.notes]
    notes += [f"new side: {note}" for note in new.notes if note not in old.notes]
    return notes


def _taskset_of(side: SideInput, rows: Optional[list[int]]) -> Optional[str]:
    """The first taskset named by one side's rows of a task (the paired statistics cluster on it)."""
    for index in rows or ():
        ident = side.values[index]
        if ident is not None and ident[0] is not None:
            return ident[0]
    return None


def compare_sides(old: SideInput, new: SideInput) -> CompareResult:
    """Join both sides, classify every task (in natural label order) and collect the notes."""
    identity_notes = _side_notes(old, new) + _align_fallbacks(old, new)
    old_grouped, new_grouped = group_rows(old.values), group_rows(new.values)
    joined: Join = join(old_grouped, new_grouped)
    if old.key == new.key == TASK_INDEX and old.prompts is not None and new.prompts is not None:
        check_prompts(joined, old.prompts, new.prompts, lambda side, i: (old if side == "old" else new).where(i))
    tasks: list[TaskComparison] = []
    for label in joined.old.keys() | joined.new.keys():
        old_rows, new_rows = joined.old.get(label), joined.new.get(label)
        tasks.append(
            categorize(
                label,
                summarize_side([old.facts[i] for i in old_rows], old.reader) if old_rows else None,
                summarize_side([new.facts[i] for i in new_rows], new.reader) if new_rows else None,
                taskset=_taskset_of(new, new_rows) or _taskset_of(old, old_rows),
            )
        )
    for side_name, side, grouped in (("old", old, old_grouped), ("new", new, new_grouped)):
        for n, index in enumerate(grouped.anonymous, start=1):
            summary = summarize_side([side.facts[index]], side.reader)
            label = f"unknown ({side_name}) #{n}"
            old_side, new_side = (summary, None) if side_name == "old" else (None, summary)
            tasks.append(categorize(label, old_side, new_side, anonymous=True))
    tasks.sort(key=lambda t: natural_key(t.task))

    notes = identity_notes + joined.notes
    repeated = [t.task for t in tasks if (t.old and t.old.repeated) or (t.new and t.new.repeated)]
    if repeated:
        notes.append(
            f"{len(repeated)} task(s) have several rows on a side; they are compared on the mean reward: "
            + listed(repeated)
        )
    return CompareResult(
        tasks=tasks,
        old_key=old.key,
        new_key=new.key,
        old_rows=len(old.facts),
        new_rows=len(new.facts),
        old_masked_rows=sum(1 for f in old.facts if f.mask is not None),
        new_masked_rows=sum(1 for f in new.facts if f.mask is not None),
        old_prefix_stripped=joined.old_prefix_stripped,
        new_prefix_stripped=joined.new_prefix_stripped,
        keyed_by_taskset=joined.keyed_by_taskset,
        notes=notes,
        old_key_reason=old.reason,
        new_key_reason=new.reason,
    )

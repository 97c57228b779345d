"""One side of a task, the category of a task, and the whole comparison.

The rules are in docs/semantics.md, "Categories".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import Place
from ..identity.inference import TaskPrompt, prompt_on_side, rank_inferred, runners_up, shared_count, with_messages
from ..identity.item_names import listed
from ..identity.join import LabelledSides, group_rows, join
from ..model import (
    NO_OFFSET,
    Category,
    CompareResult,
    Join,
    RowCounts,
    RowFacts,
    RowOrigin,
    RowReader,
    Side,
    TaskComparison,
    TaskSide,
)
from ..reading.fields import PROMPT, TASK_INDEX
from ..reading.key_vote import REASON_GIVEN, REASON_SHARDED
from ..reading.prompt_labels import prompt_label
from ..reading.row_facts import lookup
from ..reading.task_idents import TaskIdent, natural_key

REWARD_TOLERANCE = 1e-9


def enough_scored(scored: int, rows: int) -> bool:
    """A side of a task is compared on its scored rows when at least half of its rows are scored.

    A masked row is left out, and the rest still measure the task; once most rows are masked, the
    few that scored are the ones the infrastructure let through, which say little about the task
    (docs/semantics.md, "Categories").
    """
    return scored > 0 and 2 * scored >= rows


def mean_reward(rewards: Sequence[float]) -> float:
    """The exact mean of finite rewards, also when their sum leaves the float range (two rewards
    near 1.8e308, which a row may hold): then each is divided first."""
    try:
        return math.fsum(rewards) / len(rewards)
    except OverflowError:
        return math.fsum(reward / len(rewards) for reward in rewards)


def scored_rewards(facts: Sequence[RowFacts]) -> list[float]:
    """The rewards a side's mean is taken over: its scored rows' (unmasked, finite), in row order."""
    return [f.reward for f in facts if f.scored and f.reward is not None]


def summarize_side(facts: Sequence[RowFacts], reader: Optional[RowReader] = None) -> TaskSide:
    """Reduce a side's rows for one task: mean reward of its scored rows, mask text, agent error, failure kind.

    A masked row's reward never enters the mean; the side is masked only when too few rows are
    scored (:func:`enough_scored`).
    """
    if len(facts) == 1:  # most tasks: one row a side, reduced without the lists below
        only = facts[0]
        unmasked = only.mask is None
        reward = only.reward if only.scored else None
        return TaskSide(
            facts,
            reward=reward,
            masked=only.mask,
            agent_error=(only.agent_error or None) if unmasked else None,
            failure_kind=(only.failure_kind or None) if unmasked else None,
            reward_rows=0 if reward is None else 1,
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
    #: inferred id fields holding one task a value on this side, each with its value per row
    inferred: dict[str, Sequence[Optional[TaskIdent]]] = field(default_factory=dict)

    def prompt_at(self, index: int) -> Any:
        """Row ``index``'s prompt, read again from its file when the row is not kept."""
        facts = self.facts[index]
        row = self.reader(facts) if self.reader is not None and facts.row is None else facts.row
        return lookup(row or {}, PROMPT)

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
            if _one_prompt(side.prompts) and len(set(side.values) - {None}) > 1:
                return [
                    f"the {name} side's prompt is the same on every row: it names no task there, so the side "
                    "keeps its _ng_task_index and cannot be joined to the other side's prompts"
                ]
            side.key, side.values = PROMPT, side.prompts
            if other.reason == REASON_SHARDED:
                side.reason = "the prompt, as the other side is in shards whose _ng_task_index restarts"
                return [
                    f"the {name} side is keyed on the prompt too, to join the other side, whose shards each "
                    "number their tasks from 0"
                ]
            side.reason = "the prompt, as the other side has no _ng_task_index"
            return [f"the {name} side is keyed on the prompt too, to join the other side, which has no _ng_task_index"]
    return []


def _one_prompt(prompts: Sequence[Optional[TaskIdent]]) -> bool:
    """Every row that has a prompt has the same one."""
    return len({p for p in prompts if p is not None}) == 1


_FALLBACK_KEYS = (TASK_INDEX, PROMPT, "")


def infer_keys(old: SideInput, new: SideInput) -> list[str]:
    """Key both sides on an inferred id field when one joins at least as many tasks as their
    `_ng_task_index` or prompts would (never over a known id field); the notes it makes.

    A side that names its tasks only by inferred fields, none shared with the other side, is keyed
    on its own first one: the sides then share no task, which the summary says.
    """
    notes: list[str] = []
    if old.key in _FALLBACK_KEYS and new.key in _FALLBACK_KEYS:
        ranked = rank_inferred(old.inferred, new.inferred)
        if ranked:
            best = ranked[0]
            baseline, what = _fallback_joins(old, new)
            if best.joined >= baseline:
                reason = (
                    f"{best.name}, inferred from the rows: every row of both sides carries it, each value holds "
                    f"one task, and it joins {best.joined} task(s) ({best.old_tasks} old, {best.new_tasks} new)"
                )
                if what:
                    reason += f"; {what} joins {baseline}"
                rest = runners_up(ranked)
                if rest:
                    reason += f"; runners-up: {rest}"
                changed = _prompts_changed(old, new, best.name)
                for side in (old, new):
                    side.key, side.values, side.reason = best.name, side.inferred[best.name], reason
                if changed:
                    notes.append(changed)
    elif (old.key in _FALLBACK_KEYS) != (new.key in _FALLBACK_KEYS):
        notes += _infer_against_known(old, new)
    for side in (old, new):
        if not side.key and side.inferred:  # a side of rollouts is not refused for what the other holds
            own = sorted(side.inferred, key=lambda name: ("." in name, name))[0]
            side.key, side.values = own, side.inferred[own]
            side.reason = (
                f"{own}, inferred from this side's rows: every row carries it and each value holds one "
                "task, but it shares no value with the other side"
            )
    return notes


def _infer_against_known(old: SideInput, new: SideInput) -> list[str]:
    """One side keyed on a known id field, the other on a fallback: the other side takes the
    inferred field of its own that shares the most values with the known one, when that joins more
    tasks than its fallback does."""
    known, other = (old, new) if new.key in _FALLBACK_KEYS else (new, old)
    ranked = sorted(
        ((shared_count(known.values, column), name) for name, column in other.inferred.items()),
        key=lambda item: (-item[0], "." in item[1], item[1]),
    )
    if not ranked or not ranked[0][0]:
        return []
    joined, name = ranked[0]
    if joined <= (shared_count(known.values, other.values) if other.key else 0):
        return []
    side = "old" if other is old else "new"
    other.key, other.values = name, other.inferred[name]
    other.reason = (
        f"{name}, inferred from the rows: every row carries it, each value holds one task, and it joins "
        f"{joined} task(s) to the other side's {known.key}"
    )
    return [f"the {side} side is keyed on {name}, whose values are the other side's {known.key}"]


def _fallback_joins(old: SideInput, new: SideInput) -> tuple[int, str]:
    """How many tasks the sides' own fallback keys would join, and which key that is."""
    if not old.key or not new.key:
        return 0, ""
    if old.key == new.key == TASK_INDEX:
        joined = join(group_rows(old.values), group_rows(new.values))
        return len(joined.old.keys() & joined.new.keys()) - len(_differing(joined, old, new)), TASK_INDEX
    if old.prompts is not None and new.prompts is not None:
        return shared_count(old.prompts, new.prompts), "the prompt"
    return shared_count(old.values, new.values), old.key if old.key == new.key else "the sides' keys"


def _prompts_changed(old: SideInput, new: SideInput, name: str) -> Optional[str]:
    """A note when tasks joined on ``name`` have a different prompt on each side (a template change)."""
    if old.prompts is None or new.prompts is None:
        return None
    firsts: list[dict[str, Optional[TaskIdent]]] = []
    for side, prompts in ((old, old.prompts), (new, new.prompts)):
        first: dict[str, Optional[TaskIdent]] = {}
        for value, prompt in zip(side.inferred[name], prompts):
            if value is not None and value[1] not in first:
                first[value[1]] = prompt
        firsts.append(first)
    shared = firsts[0].keys() & firsts[1].keys()
    changed = sorted(
        (t for t in shared if None not in (firsts[0][t], firsts[1][t]) and firsts[0][t] != firsts[1][t]),
        key=natural_key,
    )
    if not changed:
        return None
    return (
        f"the prompts changed between the runs: {len(changed)} of {len(shared)} task(s) joined on {name} have a "
        f"different prompt on each side ({listed(changed)}); {name} names them, so they are compared as the same "
        "tasks"
    )


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


def compare_sides(old: SideInput, new: SideInput, inference_notes: Sequence[str] = ()) -> CompareResult:
    """Join both sides, classify every task (in natural label order) and collect the notes.

    ``inference_notes`` are what :func:`infer_keys` said when it chose the sides' key."""
    identity_notes = _side_notes(old, new) + list(inference_notes) + _align_fallbacks(old, new)
    old_grouped, new_grouped = group_rows(old.values), group_rows(new.values)
    joined: LabelledSides = join(old_grouped, new_grouped)
    unjoined: Optional[str] = None
    if old.key == new.key == TASK_INDEX:
        joined, unjoined, index_notes = _check_index_prompts(joined, old, new)
        identity_notes += index_notes
        if old.key == PROMPT:  # the same prompts at other indices: joined on them instead
            old_grouped, new_grouped = group_rows(old.values), group_rows(new.values)
    else:
        unjoined = _coincidence(joined, old, new)
        if unjoined is not None:
            joined = _apart(joined)
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

    notes = identity_notes + joined.notes + ([unjoined] if unjoined else [])
    repeated = [t.task for t in tasks if (t.old and t.old.repeated) or (t.new and t.new.repeated)]
    if repeated:
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
        unjoined=unjoined,
    )


def _differing(joined: LabelledSides, old: SideInput, new: SideInput) -> list[tuple[str, TaskPrompt, TaskPrompt]]:
    """The task indices both sides hold whose prompts differ (docs/semantics.md, "Prompts and the
    task index"): each with its prompt on either side."""
    if old.prompts is None or new.prompts is None:
        return []
    found = []
    for label in sorted(joined.old.keys() & joined.new.keys(), key=natural_key):
        old_rows, new_rows = joined.old[label], joined.new[label]
        old_prompt = prompt_on_side(old.prompts, old_rows, old.prompt_at)
        new_prompt = prompt_on_side(new.prompts, new_rows, new.prompt_at)
        if old_prompt is None or new_prompt is None or old_prompt.label == new_prompt.label:
            continue
        if old_prompt.per_rollout or new_prompt.per_rollout:
            old_prompt = with_messages(old_prompt, old_rows, old.prompt_at)
            new_prompt = with_messages(new_prompt, new_rows, new.prompt_at)
        if not old_prompt.agrees(new_prompt):
            found.append((label, old_prompt, new_prompt))
    return found


def _check_index_prompts(
    joined: LabelledSides, old: SideInput, new: SideInput
) -> tuple[LabelledSides, Optional[str], list[str]]:
    """The join on `_ng_task_index` with each index whose prompts differ split into two tasks.

    When more than half of the shared indices differ, the same prompts may sit at other indices
    (the inputs in another order): the sides are then joined on their prompts if that joins more;
    otherwise the runs read different input files and no task is joined.
    """
    differing = _differing(joined, old, new)
    if not differing:
        return joined, None, []
    shared = len(joined.old.keys() & joined.new.keys())
    first, first_old, first_new = differing[0]
    if (
        old.prompts is not None
        and new.prompts is not None
        and shared_count(old.prompts, new.prompts) > shared - len(differing)
    ):
        for side in (old, new):
            side.key, side.values = PROMPT, side.prompts or []
            side.reason = "the prompt: the same prompts are at other _ng_task_index values on each side"
        note = (
            f"the runs list the same prompts at different _ng_task_index values ({len(differing)} of {shared} "
            "differ, as inputs in another order do), so both sides are joined on the prompt"
        )
        return join(group_rows(old.values), group_rows(new.values)), None, [note]
    if 2 * len(differing) <= shared:
        split = {label: (o.label, n.label) for label, o, n in differing}
        notes = [
            f"{len(differing)} of {shared} _ng_task_index value(s) have a different prompt on each side, so each is "
            "listed as two tasks, one only in old and one only in new: "
            + "; ".join(f"{label} ({o} vs {n})" for label, (o, n) in list(split.items())[:5])
            + ("; ..." if len(split) > 5 else "")
        ]
        return _relabel(joined, {k: v[0] for k, v in split.items()}, {k: v[1] for k, v in split.items()}), None, notes
    reason = (
        f"the runs read different input files: {len(differing)} of {shared} _ng_task_index value(s) have a "
        f"different prompt on each side (_ng_task_index {first}: {first_old.label} vs {first_new.label}), so "
        "the index does not name the same task on both; every task is listed as only in its own file "
        f"(name a key with --parity-key or key= if a field names the tasks)"
    )
    return _apart(joined), reason, []


def _relabel(joined: LabelledSides, old_names: dict[str, str], new_names: dict[str, str]) -> LabelledSides:
    """The join with the given labels renamed on each side as `<label>:<prompt label>`."""

    def renamed(labels: dict[str, list[int]], names: dict[str, str]) -> dict[str, list[int]]:
        return {(f"{label}:{names[label]}" if label in names else label): rows for label, rows in labels.items()}

    return LabelledSides(
        renamed(joined.old, old_names),
        renamed(joined.new, new_names),
        joined.old_prefix_stripped,
        joined.new_prefix_stripped,
        joined.keyed_by_taskset,
        joined.notes,
    )


def _apart(joined: LabelledSides) -> LabelledSides:
    """The join with no task shared: each side's labels marked with its side."""
    return LabelledSides(
        {f"{label}:old": rows for label, rows in joined.old.items()},
        {f"{label}:new": rows for label, rows in joined.new.items()},
        joined.old_prefix_stripped,
        joined.new_prefix_stripped,
        joined.keyed_by_taskset,
        joined.notes,
    )


#: How many joined tasks the check for a join by coincidence reads the prompts of.
COINCIDENCE_SAMPLE = 50


def _kind(key: str) -> str:
    return "_ng_task_index" if key == TASK_INDEX else "the prompt" if key == PROMPT else f"the id field {key}"


def _coincidence(joined: LabelledSides, old: SideInput, new: SideInput) -> Optional[str]:
    """Why the tasks met only by coincidence, or None: the sides are keyed on identities of
    different kinds, their tasks meet only after a prefix was stripped or as equal numbers, and
    the prompts of the tasks they share (a sample, where both sides have them) mostly disagree."""
    kinds = {_kind(old.key), _kind(new.key)}
    if REASON_GIVEN in (old.reason, new.reason):  # a key the user named is trusted as given
        return None
    if len(kinds) < 2 or (old.key != TASK_INDEX and new.key != TASK_INDEX and PROMPT not in (old.key, new.key)):
        return None
    shared = sorted(joined.old.keys() & joined.new.keys(), key=natural_key)
    stripped = joined.old_prefix_stripped or joined.new_prefix_stripped
    if not shared or not (stripped or all(label.isdigit() for label in shared)):
        return None
    compared = differ = 0
    for label in shared[:COINCIDENCE_SAMPLE]:
        labels = []
        for side, rows in ((old, joined.old[label]), (new, joined.new[label])):
            if side.prompts is not None:
                found = prompt_on_side(side.prompts, rows, side.prompt_at)
                labels.append(found.label if found is not None else None)
            else:
                labels.append(_first_label(side, rows))
        if None in labels:
            continue
        compared += 1
        differ += labels[0] != labels[1]
    if not compared or 2 * differ <= compared:
        return None
    how = f"after {stripped} was stripped" if stripped else "as equal numbers"
    return (
        f"the files look like different environments: the old side is keyed on {_kind(old.key)} and the new on "
        f"{_kind(new.key)}, whose tasks meet only {how}, and the prompts of {differ} of {compared} such task(s) "
        "differ; they are not compared as the same tasks"
    )


def _first_label(side: SideInput, rows: Sequence[int]) -> Optional[str]:
    for index in rows:
        label = prompt_label(side.prompt_at(index))
        if label is not None:
            return label
    return None

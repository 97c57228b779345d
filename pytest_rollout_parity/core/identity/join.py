"""The join of two sides: the key each is joined on, its rows labelled so that one task carries one
label on both sides, and the repairs of a join its key misleads. Which inferred id field names the
same tasks on both sides is seen only with both (:func:`infer_keys`). The rules are in
docs/semantics.md, "Task identity and the join", "Inferred id fields" and "Prompts and the task index".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..model import RowFacts, RowReader
from ..reading.fields import PROMPT, TASK_INDEX
from ..reading.key_vote import NG_TASK_ID, REASON_BORROWED, REASON_GIVEN, REASON_ID_FIELD, KeyChoice
from ..reading.row_facts import lookup
from ..reading.side_builder import vote_again
from ..reading.task_idents import (
    TaskIdent,
    canonical_json,
    common_start,
    full_label,
    is_prompt,
    natural_key,
    prompt_label,
)
from .item_names import listed

Column = Sequence[Optional[TaskIdent]]


#: A side's rows by task ident (row indexes in file order); anonymous rows are left out.
Groups = dict[TaskIdent, list[int]]


def _grouped(idents: Column) -> Groups:
    groups: Groups = {}
    for index, ident in enumerate(idents):
        if ident is not None:
            groups.setdefault(ident, []).append(index)
    return groups


def _tasksets(groups: Groups) -> set[str]:
    return {taskset for taskset, _ in groups if taskset is not None}


@dataclass
class JoinedSides:
    """Both sides joined: each task's label with its rows on each side, and how the labels were made."""

    old: dict[str, list[int]]
    new: dict[str, list[int]]
    old_prefix_stripped: Optional[str] = None
    new_prefix_stripped: Optional[str] = None
    keyed_by_taskset: bool = False
    notes: list[str] = field(default_factory=list)
    #: why no task is joined (the runs read different input files, or met by coincidence), or None
    unjoined: Optional[str] = None


def _labels(groups: Groups, label: Callable[[TaskIdent], str] = lambda ident: ident[1]) -> dict[str, list[int]]:
    """The side's rows by label: its plain task id, unless another ``label`` is given."""
    labels: dict[str, list[int]] = {}
    for ident, rows in groups.items():
        labels.setdefault(label(ident), []).extend(rows)
    return labels


def _match_keyed(keyed: Groups, plain: Groups) -> tuple[dict[str, list[int]], set[str]]:
    """Labels of the keyed side matched to the plain side's ids, and the ids too ambiguous to match: an
    id in several keyed tasksets (not the one the plain side's rows name) keeps `taskset/task_id`."""
    homes: dict[str, set[Optional[str]]] = {}
    for taskset, task_id in keyed:
        homes.setdefault(task_id, set()).add(taskset)
    plain_tasksets = _tasksets(plain)
    home = next(iter(plain_tasksets)) if len(plain_tasksets) == 1 else None

    def label(ident: TaskIdent) -> str:
        taskset, task_id = ident
        return task_id if len(homes[task_id]) == 1 or (home is not None and taskset == home) else full_label(ident)

    ambiguous = {task_id for task_id, at in homes.items() if len(at) > 1 and (home is None or home not in at)}
    return _labels(keyed, label), ambiguous


def _common_prefix(labels: Iterable[str]) -> Optional[str]:
    """The `<prefix>/` every label starts with (with something after it), or None."""
    prefix: Optional[str] = None
    for label in labels:
        head, sep, rest = label.partition("/")
        if not sep or not head or not rest or head != (prefix or head):
            return None
        prefix = head
    return prefix


def _strip_namespace(old: Groups, new: Groups) -> tuple[Groups, Groups, Optional[str], Optional[str]]:
    """Both sides, one stripped of the `<prefix>/` all its task ids share when the sides share no id;
    judged before tasksets are matched, as the reference strips ids, so that a prefixed id recurring
    in several tasksets does not keep its sibling ids from joining."""
    old_ids, new_ids = ({task_id for _, task_id in side} for side in (old, new))
    if not old_ids or not new_ids or old_ids & new_ids:
        return old, new, None, None
    old_prefix, new_prefix = _common_prefix(old_ids), _common_prefix(new_ids)
    if (old_prefix is None) == (new_prefix is None):
        return old, new, None, None
    prefix = old_prefix or new_prefix or ""
    stripped: Groups = {}
    for (taskset, task_id), rows in (old if old_prefix else new).items():  # tasksets untouched
        stripped.setdefault((taskset, task_id[len(prefix) + 1 :]), []).extend(rows)
    return (stripped, new, prefix + "/", None) if old_prefix else (old, stripped, None, prefix + "/")


def join(old_values: Column, new_values: Column) -> JoinedSides:
    """Label both sides' rows so that the same task carries the same label (anonymous rows none)."""
    old, new, old_stripped, new_stripped = _strip_namespace(_grouped(old_values), _grouped(new_values))
    notes: list[str] = []
    old_multi, new_multi = len(_tasksets(old)) > 1, len(_tasksets(new)) > 1
    if old_multi and new_multi:
        old_labels, new_labels = _labels(old, full_label), _labels(new, full_label)
        tasksets = sorted(_tasksets(old) | _tasksets(new))
        notes.append(
            f"both sides span several tasksets ({', '.join(tasksets)}); tasks are keyed and listed as taskset/task_id"
        )
    elif old_multi or new_multi:
        keyed_side = "old" if old_multi else "new"
        keyed, plain = (old, new) if old_multi else (new, old)
        keyed_labels, ambiguous = _match_keyed(keyed, plain)
        plain_labels = _labels(plain)
        old_labels, new_labels = (keyed_labels, plain_labels) if old_multi else (plain_labels, keyed_labels)
        notes.append(
            f"the {keyed_side} side spans several tasksets ({', '.join(sorted(_tasksets(keyed)))}); "
            "its tasks are matched to the other side's plain ids on task_id"
        )
        if unmatched := sorted(ambiguous & plain_labels.keys()):  # ids recurring in several keyed tasksets
            notes.append(
                f"{len(unmatched)} task id(s) recur in several {keyed_side} tasksets and cannot be matched to the "
                f"other side's plain ids; they are listed as taskset/task_id: {listed(unmatched)}"
            )
    else:
        old_labels, new_labels = _labels(old), _labels(new)
    return JoinedSides(old_labels, new_labels, old_stripped, new_stripped, old_multi and new_multi, notes)


@dataclass
class SideInput(KeyChoice):
    """A side ready to be joined: how its rows are keyed, its row facts, and its rows read again."""

    key: str  # "" when no row names a task: the side borrows the other side's key
    facts: Sequence[RowFacts] = ()
    reader: Optional[RowReader] = None
    #: a sharded side's files as shown, in order (a row's ``shard`` indexes them); empty for one file
    shard_names: Sequence[str] = ()
    #: each distinct [model, temperature, top_p, max_output_tokens] the side ran with, as JSON
    conditions: Sequence[str] = ()

    def row_at(self, index: int) -> dict[str, Any]:
        """Row ``index``, read again from its file when it is not kept."""
        facts = self.facts[index]
        row = self.reader(facts) if self.reader is not None and facts.row is None else facts.row
        return row or {}

    def prompt_at(self, index: int) -> Any:
        return lookup(self.row_at(index), PROMPT)


def _align_fallbacks(old: SideInput, new: SideInput) -> list[str]:
    """A side keyed on `_ng_task_index` joins a side keyed on the prompt by its own prompts."""
    for side, name, other in ((old, "old", new), (new, "new", old)):
        if side.key == TASK_INDEX and other.key == PROMPT and side.prompts is not None:
            if len(set(side.prompts) - {None}) == 1 and len(set(side.values) - {None}) > 1:
                return [
                    f"the {name} side's prompt is the same on every row: it names no task there, so the side "
                    "keeps its _ng_task_index and cannot be joined to the other side's prompts"
                ]
            side.key, side.values, side.reason = PROMPT, side.prompts, "the prompt, as the other side is keyed on it"
            return [f"the {name} side is keyed on the prompt too, to join the other side ({other.reason})"]
    return []


def join_sides(
    old: SideInput, new: SideInput, old_key: Optional[str] = None, new_key: Optional[str] = None
) -> JoinedSides:
    """Key both sides (:func:`infer_keys`; a side whose rows name no task takes the key it was given,
    ``old_key`` or ``new_key``, else the other side's), join them, and repair a join its key misleads."""
    inferred = infer_keys(old, new)
    if not old.key:
        old.key = old_key or new.key or new_key or NG_TASK_ID
        old.reason = REASON_GIVEN if old_key else REASON_BORROWED
    if not new.key:
        new.key = new_key or old.key
        new.reason = REASON_GIVEN if new_key else REASON_BORROWED
    notes = [f"both sides: {note}" for note in old.notes if note in new.notes]  # said once when both say it
    notes += [f"old side: {note}" for note in old.notes if note not in new.notes]
    notes += [f"new side: {note}" for note in new.notes if note not in old.notes]
    notes += inferred + _align_fallbacks(old, new)
    joined = join(old.values, new.values)
    if old.key == new.key == TASK_INDEX:
        joined = _check_index_prompts(joined, old, new)
    elif (coincidence := _coincidence(joined, old, new)) is not None:
        joined = _apart(joined, coincidence)
    notes += joined.notes + ([joined.unjoined] if joined.unjoined else [])
    return replace(joined, notes=notes)


# --- an inferred id field: the one that joins the most tasks of both sides ------------------------


def _tasks(column: Column) -> set[str]:
    return {ident[1] for ident in column if ident is not None}


def shared_count(old: Column, new: Column) -> int:
    """How many task values both columns hold."""
    return len(_tasks(old) & _tasks(new))


def _ranked(joins: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """(tasks joined, field) of the fields that join any, most first; then top-level fields before
    nested ones, then by name."""
    return sorted((item for item in joins if item[0]), key=lambda item: (-item[0], "." in item[1], item[1]))


_FALLBACK_KEYS = (TASK_INDEX, PROMPT, "")


def infer_keys(old: SideInput, new: SideInput) -> list[str]:
    """Key both sides on an inferred id field when one joins at least as many tasks as their
    `_ng_task_index` or prompts would (never over a known id field); the notes it makes. A side
    whose inferred fields the other lacks is keyed on its own first one: they share no task."""
    notes = _categories_on_both(old, new)
    if old.key in _FALLBACK_KEYS and new.key in _FALLBACK_KEYS:
        ranked = _ranked(
            (shared_count(old.inferred[name], new.inferred[name]), name) for name in old.inferred.keys() & new.inferred
        )
        baseline, what = _fallback_joins(old, new) if ranked else (0, "")
        if ranked and ranked[0][0] >= baseline:
            joined, best = ranked[0]
            reason = (
                f"{best}, inferred from the rows: every row of both sides carries it, each value holds one task, "
                f"and it joins {joined} task(s) ({len(_tasks(old.inferred[best]))} old, "
                f"{len(_tasks(new.inferred[best]))} new)"
            )
            if what:
                reason += f"; {what} joins {baseline}"
            if len(ranked) > 1:
                reason += "; runners-up: " + listed([f"{name} (joins {n})" for n, name in ranked[1:]], 3, where="")
            notes += _prompts_changed(old, new, best)
            for side in (old, new):
                side.key, side.values, side.reason = best, side.inferred[best], reason
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


def _categories_on_both(old: SideInput, new: SideInput) -> list[str]:
    """A side keyed on an id field the other side shows to be a category is voted on again without
    the other's categories, so it is keyed as its own vote would have keyed it had it shown that
    too (docs/semantics.md, "A category is passed over"); one the vote leaves keyless keeps it."""
    notes: list[str] = []
    for side, name, other in ((old, "old", new), (new, "new", old)):
        if side.reason != REASON_ID_FIELD or side.key not in other.categories:
            continue
        choice = vote_again(side.facts, side.row_at, sharded=bool(side.shard_names), passed_over=other.categories)
        if choice.key is None:
            continue
        notes.append(
            f"the {name} side's {side.key} is passed over too: the {'old' if other is old else 'new'} side shows it "
            "is a category, so it names no task on either side"
        )
        if choice.reason != REASON_ID_FIELD:
            choice.reason = f"{side.key} passed over: a category on the other side"
        side.key, side.values, side.prompts, side.reason = choice.key, choice.values, choice.prompts, choice.reason
        side.notes = [*side.notes, *(note for note in choice.notes if note not in side.notes)]
    return notes


def _infer_against_known(old: SideInput, new: SideInput) -> list[str]:
    """A side keyed on a fallback takes its inferred field sharing the most values with the other
    side's known id field, when that joins more tasks than its fallback does."""
    known, other = (old, new) if new.key in _FALLBACK_KEYS else (new, old)
    ranked = _ranked((shared_count(known.values, column), name) for name, column in other.inferred.items())
    if not ranked or ranked[0][0] <= (shared_count(known.values, other.values) if other.key else 0):
        return []
    joined, name = ranked[0]
    other.key, other.values = name, other.inferred[name]
    other.reason = (
        f"{name}, inferred from the rows: every row carries it, each value holds one task, and it joins "
        f"{joined} task(s) to the other side's {known.key}"
    )
    return [
        f"the {'old' if other is old else 'new'} side is keyed on {name}, whose values are the other side's {known.key}"
    ]


def _fallback_joins(old: SideInput, new: SideInput) -> tuple[int, str]:
    """How many tasks the sides' own fallback keys would join, and which key that is."""
    if not old.key or not new.key:
        return 0, ""
    if old.key == new.key == TASK_INDEX:
        joined = join(old.values, new.values)
        return len(joined.old.keys() & joined.new.keys()) - len(_differing(joined, old, new)[1]), TASK_INDEX
    if old.prompts is not None and new.prompts is not None:
        return shared_count(old.prompts, new.prompts), "the prompt"
    return shared_count(old.values, new.values), old.key if old.key == new.key else "the sides' keys"


def _prompts_changed(old: SideInput, new: SideInput, name: str) -> list[str]:
    """A note when tasks joined on ``name`` have a different prompt on each side (a template change)."""
    joined = join(old.inferred[name], new.inferred[name])
    changed = [label for label, _, _ in _differing(joined, old, new)[1]]
    if not changed:
        return []
    shared = len(joined.old.keys() & joined.new.keys())
    return [
        f"the prompts changed between the runs: {len(changed)} of {shared} task(s) joined on {name} have a "
        f"different prompt on each side ({listed(changed)}); {name} names them, so they are compared as the same "
        "tasks"
    ]


# --- a task's prompts, and the repairs of a join its key misleads ---------------------------------


@dataclass(frozen=True)
class TaskPrompt:
    """What a side asked for one task: its rows' one prompt, or (rows whose prompts differ, as a
    rollout's own state in its prompt makes them) the messages every row begins with."""

    label: str
    #: the messages (or the whole prompt) as canonical JSON each; None when the prompt is not read
    messages: Optional[tuple[str, ...]]
    per_rollout: bool = False


def prompt_on_side(side: SideInput, rows: Sequence[int], messages: bool = False) -> Optional[TaskPrompt]:
    """A side's prompt for the task of ``rows``; None when none of them has one. Its messages are
    read again (those every row begins with) only when the rows' prompts differ, or when asked."""
    if side.prompts is not None:
        distinct = {ident[1] for i in rows if (ident := side.prompts[i]) is not None}
    else:
        distinct = {label for i in rows if (label := prompt_label(side.prompt_at(i))) is not None}
    if not distinct or (len(distinct) == 1 and not messages):
        return TaskPrompt(distinct.pop(), None) if distinct else None
    common: Optional[tuple[str, ...]] = None
    for i in rows:  # a row at a time: a task's prompts are never all held at once
        if is_prompt(prompt := side.prompt_at(i)):
            read = tuple(canonical_json(message) for message in (prompt if isinstance(prompt, list) else [prompt]))
            common = read if common is None else read[: common_start(common, read)]
    common = common or ()
    if len(distinct) == 1:
        return TaskPrompt(distinct.pop(), common)
    leading = prompt_label([json.loads(message) for message in common]) if common else None
    label = f"{len(distinct)} prompts" + (f" beginning {leading}" if leading else "")
    return TaskPrompt(label, common, per_rollout=True)


Differing = list[tuple[str, TaskPrompt, TaskPrompt]]


def _differing(
    joined: JoinedSides, old: SideInput, new: SideInput, sample: Optional[int] = None
) -> tuple[int, Differing]:
    """Of the shared tasks, how many have a prompt on both sides, and those whose prompts disagree
    (docs/semantics.md, "Prompts and the task index"). Every task is checked only when both sides
    keep their prompts' labels; a ``sample`` (the first tasks) is read from the rows if need be."""
    if sample is None and (old.prompts is None or new.prompts is None):
        return 0, []
    compared, found = 0, []
    for label in sorted(joined.old.keys() & joined.new.keys(), key=natural_key)[:sample]:
        old_rows, new_rows = joined.old[label], joined.new[label]
        old_prompt, new_prompt = prompt_on_side(old, old_rows), prompt_on_side(new, new_rows)
        if old_prompt is None or new_prompt is None:
            continue
        compared += 1
        if old_prompt.label == new_prompt.label:
            continue
        if old_prompt.per_rollout or new_prompt.per_rollout:  # a per-rollout side's begins with the other's?
            old_prompt = prompt_on_side(old, old_rows, True) or old_prompt
            new_prompt = prompt_on_side(new, new_rows, True) or new_prompt
            short, long = sorted((old_prompt.messages or (), new_prompt.messages or ()), key=len)
            if short and long[: len(short)] == short:
                continue
        found.append((label, old_prompt, new_prompt))
    return compared, found


def _check_index_prompts(joined: JoinedSides, old: SideInput, new: SideInput) -> JoinedSides:
    """The join on `_ng_task_index` where prompts differ: joined on the prompts if that joins more (the
    inputs in another order); kept when every index differs by one template edit; else each such
    index split into two tasks, or, when more than half differ, none joined (other input files)."""
    differing = _differing(joined, old, new)[1]  # none unless both sides have prompts
    if not differing:
        return joined
    shared = len(joined.old.keys() & joined.new.keys())
    first, first_old, first_new = differing[0]
    if shared_count(old.prompts or [], new.prompts or []) > shared - len(differing):
        for side in (old, new):
            side.key, side.values = PROMPT, side.prompts or []
            side.reason = "the prompt: the same prompts are at other _ng_task_index values on each side"
        note = (
            f"the runs list the same prompts at different _ng_task_index values ({len(differing)} of {shared} "
            "differ, as inputs in another order do), so both sides are joined on the prompt"
        )
        rejoined = join(old.values, new.values)
        return replace(rejoined, notes=[note, *rejoined.notes])
    if (edit := _uniform_edit(differing, joined, old, new)) is not None:
        note = (
            f"every prompt differs by the same edit: {edit} ({len(differing)} of {shared} _ng_task_index value(s), "
            "the rest of each prompt unchanged), as a new template words its instruction; they are joined on the index"
        )
        return replace(joined, notes=[note, *joined.notes])
    if 2 * len(differing) <= shared:
        note = (
            f"{len(differing)} of {shared} _ng_task_index value(s) have a different prompt on each side, so each is "
            "listed as two tasks, one only in old and one only in new: "
            + "; ".join(f"{label} ({o.label} vs {n.label})" for label, o, n in differing[:5])
            + ("; ..." if len(differing) > 5 else "")
        )
        return _split(joined, {label: (o.label, n.label) for label, o, n in differing}, notes=[note, *joined.notes])
    reason = (
        f"the runs read different input files: {len(differing)} of {shared} _ng_task_index value(s) have a "
        f"different prompt on each side (_ng_task_index {first}: {first_old.label} vs {first_new.label}), so "
        "the index does not name the same task on both; every task is listed as only in its own file "
        "(name the key with --parity-key if a field names the tasks)"
    )
    return _apart(joined, reason)


#: At least this many task indices must differ by one edit for the sides to join on the index.
UNIFORM_EDIT_MIN = 3
#: How many characters of an edit's text a note shows.
EDIT_SHOWN = 60
#: How many characters on each side of a replaced stretch must be the same at every index: the
#: edit sits in the template's own words, not next to a task's text.
EDIT_CONTEXT = 20


def _message_texts(prompt: Any) -> Optional[list[tuple[str, str]]]:
    """Each message of a prompt as (role and other fields, text): a message whose content is a
    string gives it, any other message its canonical JSON; None for no prompt."""
    if prompt is None:
        return None
    texts = []
    for message in prompt if isinstance(prompt, list) else [prompt]:
        if isinstance(message, str):
            texts.append(("user", message))
        elif isinstance(message, dict) and isinstance(message.get("content"), str):
            texts.append((canonical_json({k: v for k, v in message.items() if k != "content"}), message["content"]))
        else:
            texts.append(("", canonical_json(message)))
    return texts


def _shown(text: str) -> str:
    return json.dumps(text[:EDIT_SHOWN] + ("..." if len(text) > EDIT_SHOWN else ""), ensure_ascii=False)


def _text_edit(old: str, new: str, where: str) -> tuple[str, str, str, str]:
    """How ``new`` differs from ``old`` in message ``where``: (as a note says it, taken out, put in,
    the text around it). A text added or removed whole at either end is said so; else the edit is
    the stretch between their common start and end."""
    short, long = sorted((old, new), key=len)
    if long.endswith(short) or long.startswith(short):  # added or removed whole at one end
        at_start = long.endswith(short)
        piece = long[: len(long) - len(short)] if at_start else long[len(short) :]
        if long is new:
            return f"{_shown(piece)} added {'before' if at_start else 'after'} {where}", "", piece, ""
        return f"{_shown(piece)} removed from the {'start' if at_start else 'end'} of {where}", piece, "", ""
    start = common_start(old, new)
    end = common_start(old[start:][::-1], new[start:][::-1])
    taken, put = old[start : len(old) - end], new[start : len(new) - end]
    around = old[max(0, start - EDIT_CONTEXT) : start] + "\x00" + old[len(old) - end : len(old) - end + EDIT_CONTEXT]
    return f"{_shown(taken)} → {_shown(put)} in {where}", taken, put, around


def _prompt_edit(old: Any, new: Any) -> Optional[tuple[tuple[str, str, str, str], ...]]:
    """How one index's prompts differ: each differing message's edit (:func:`_text_edit`); None
    when the messages differ in number or in anything but their text, or when the edit changes
    more of the prompt than it keeps (other prompts, not a template's edit)."""
    old_texts, new_texts = _message_texts(old), _message_texts(new)
    if old_texts is None or new_texts is None or len(old_texts) != len(new_texts):
        return None
    edits = []
    for position, ((old_role, old_text), (new_role, new_text)) in enumerate(zip(old_texts, new_texts)):
        if old_role != new_role:
            return None
        if old_text != new_text:
            where = "the system message" if '"role":"system"' in old_role else f"message {position + 1}"
            edits.append(_text_edit(old_text, new_text, where))
    changed = sum(max(len(taken), len(put)) for _, taken, put, _ in edits)
    if sum(len(text) for _, text in old_texts) - sum(len(taken) for _, taken, _, _ in edits) <= changed:
        return None
    return tuple(edits) or None


def _uniform_edit(differing: Differing, joined: JoinedSides, old: SideInput, new: SideInput) -> Optional[str]:
    """The one edit by which the prompts of every differing task index differ, as a note words it,
    when at least :data:`UNIFORM_EDIT_MIN` indices differ and each by the same edit; else None."""
    if len(differing) < UNIFORM_EDIT_MIN:
        return None
    found = None
    for label, old_prompt, new_prompt in differing:
        if old_prompt.per_rollout or new_prompt.per_rollout:
            return None
        edit = _prompt_edit(old.prompt_at(joined.old[label][0]), new.prompt_at(joined.new[label][0]))
        if edit is None or found not in (None, edit):
            return None
        found = edit
    return "; ".join(words for words, *_ in found or ())


def _split(joined: JoinedSides, suffixes: dict[str, tuple[str, str]], **changes: Any) -> JoinedSides:
    """The join with each task of ``suffixes`` made two (`<label>:<old suffix>`, `<label>:<new suffix>`)."""
    old = {f"{label}:{suffixes[label][0]}" if label in suffixes else label: r for label, r in joined.old.items()}
    new = {f"{label}:{suffixes[label][1]}" if label in suffixes else label: r for label, r in joined.new.items()}
    return replace(joined, old=old, new=new, **changes)


def _apart(joined: JoinedSides, why: str) -> JoinedSides:
    """The join with no task shared, and ``why``: each side's labels marked with its side."""
    return _split(joined, dict.fromkeys(joined.old.keys() | joined.new.keys(), ("old", "new")), unjoined=why)


#: How many joined tasks the check for a join by coincidence reads the prompts of.
COINCIDENCE_SAMPLE = 50


def _kind(key: str) -> str:
    return "_ng_task_index" if key == TASK_INDEX else "the prompt" if key == PROMPT else f"the id field {key}"


def _coincidence(joined: JoinedSides, old: SideInput, new: SideInput) -> Optional[str]:
    """Why the tasks met only by coincidence, or None: the sides are keyed on identities of
    different kinds, their tasks meet only after a prefix was stripped or as equal numbers, and
    the prompts of the tasks they share (a sample, where both sides have them) mostly disagree."""
    if REASON_GIVEN in (old.reason, new.reason):  # a key the user named is trusted as given
        return None
    if old.key == new.key or not {old.key, new.key} & {TASK_INDEX, PROMPT}:  # of one kind: both id fields
        return None
    shared = sorted(joined.old.keys() & joined.new.keys(), key=natural_key)
    stripped = joined.old_prefix_stripped or joined.new_prefix_stripped
    if not shared or not (stripped or all(label.isdigit() for label in shared)):
        return None
    compared, differing = _differing(joined, old, new, COINCIDENCE_SAMPLE)
    differ = len(differing)
    if not compared or 2 * differ <= compared:
        return None
    how = f"after {stripped} was stripped" if stripped else "as equal numbers"
    return (
        f"the files look like different environments: the old side is keyed on {_kind(old.key)} and the new on "
        f"{_kind(new.key)}, whose tasks meet only {how}, and the prompts of {differ} of {compared} such task(s) "
        "differ; they are not compared as the same tasks"
    )

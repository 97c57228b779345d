"""The join of two sides: each side's task idents grouped, labelled so that one task carries one
label on both sides (tasksets matched, a shared namespace prefix stripped).

Each side's idents come from its key vote (:mod:`..reading.key_vote`); the rules are in
docs/semantics.md, "Task identity and the join".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ..reading.task_idents import TaskIdent, full_label
from .item_names import listed


@dataclass
class Grouped:
    """A side's rows grouped by task ident (row indexes in file order) and its anonymous rows."""

    groups: dict[TaskIdent, list[int]] = field(default_factory=dict)
    anonymous: list[int] = field(default_factory=list)

    @property
    def tasksets(self) -> set[str]:
        """The tasksets the side's rows name."""
        return {ts for ts, _ in self.groups if ts is not None}


def group_rows(idents: Sequence[Optional[TaskIdent]]) -> Grouped:
    """Group row indexes by their ident; None marks an anonymous row."""
    grouped = Grouped()
    groups = grouped.groups
    for index, ident in enumerate(idents):
        if ident is None:
            grouped.anonymous.append(index)
            continue
        bucket = groups.get(ident)
        if bucket is None:
            groups[ident] = [index]
        else:
            bucket.append(index)
    return grouped


@dataclass
class LabelledSides:
    """Labels per side: label -> row indexes, plus how the labels were made."""

    old: dict[str, list[int]]
    new: dict[str, list[int]]
    old_prefix_stripped: Optional[str] = None
    new_prefix_stripped: Optional[str] = None
    keyed_by_taskset: bool = False
    notes: list[str] = field(default_factory=list)


def _plain_labels(grouped: Grouped) -> dict[str, list[int]]:
    labels: dict[str, list[int]] = {}
    for (_, task_id), rows in grouped.groups.items():
        labels.setdefault(task_id, []).extend(rows)
    return labels


def _full_labels(grouped: Grouped) -> dict[str, list[int]]:
    labels: dict[str, list[int]] = {}
    for ident, rows in grouped.groups.items():
        labels.setdefault(full_label(ident), []).extend(rows)
    return labels


def _match_keyed(keyed: Grouped, plain: Grouped) -> tuple[dict[str, list[int]], set[str]]:
    """Labels of the keyed side, matched to the plain side's ids; and the ids too ambiguous to match.

    An id that lives in one keyed taskset (or in the taskset the plain side's rows name) is listed
    under the plain id; one that recurs in several tasksets keeps its `taskset/task_id` labels.
    """
    homes: dict[str, set[Optional[str]]] = {}
    for taskset, task_id in keyed.groups:
        homes.setdefault(task_id, set()).add(taskset)
    plain_tasksets = plain.tasksets
    plain_taskset = next(iter(plain_tasksets)) if len(plain_tasksets) == 1 else None
    labels: dict[str, list[int]] = {}
    matched: set[str] = set()
    kept_full: set[str] = set()
    for ident, rows in keyed.groups.items():
        taskset, task_id = ident
        if len(homes[task_id]) == 1 or (plain_taskset is not None and taskset == plain_taskset):
            label = task_id
            matched.add(task_id)
        else:
            label = full_label(ident)
            kept_full.add(task_id)
        labels.setdefault(label, []).extend(rows)
    return labels, kept_full - matched


def _common_prefix(labels: Sequence[str]) -> Optional[str]:
    """The `<prefix>/` every label starts with (with something after it), or None."""
    prefix: Optional[str] = None
    for label in labels:
        head, sep, rest = label.partition("/")
        if not sep or not head or not rest:
            return None
        if prefix is None:
            prefix = head
        elif head != prefix:
            return None
    return prefix


def _strip(grouped: Grouped, prefix: str) -> Grouped:
    """The side with ``<prefix>/`` cut from every task id (tasksets untouched)."""
    stripped = Grouped(anonymous=grouped.anonymous)
    cut = len(prefix) + 1
    for (taskset, task_id), rows in grouped.groups.items():
        stripped.groups.setdefault((taskset, task_id[cut:]), []).extend(rows)
    return stripped


def _strip_namespace(old: Grouped, new: Grouped) -> tuple[Grouped, Grouped, Optional[str], Optional[str]]:
    """Both sides, one stripped of the `<prefix>/` all its task ids share when the sides share no id.

    Judged on task ids before tasksets are matched, as the reference strips ids: a prefixed id
    that recurs in several tasksets must not keep its sibling ids from joining.
    """
    old_ids = {task_id for _, task_id in old.groups}
    new_ids = {task_id for _, task_id in new.groups}
    if not old_ids or not new_ids or old_ids & new_ids:
        return old, new, None, None
    old_prefix, new_prefix = _common_prefix(sorted(old_ids)), _common_prefix(sorted(new_ids))
    if old_prefix is not None and new_prefix is None:
        return _strip(old, old_prefix), new, old_prefix + "/", None
    if new_prefix is not None and old_prefix is None:
        return old, _strip(new, new_prefix), None, new_prefix + "/"
    return old, new, None, None


def join(old: Grouped, new: Grouped) -> LabelledSides:
    """Label both sides so that the same task carries the same label.

    The rules are in docs/semantics.md, "Task identity and the join".
    """
    old, new, old_stripped, new_stripped = _strip_namespace(old, new)
    notes: list[str] = []
    old_multi, new_multi = len(old.tasksets) > 1, len(new.tasksets) > 1
    keyed_by_taskset = False
    ambiguous: set[str] = set()  # ids of the keyed side that recur in several of its tasksets
    keyed_side = ""
    if old_multi and new_multi:
        keyed_by_taskset = True
        old_labels, new_labels = _full_labels(old), _full_labels(new)
        tasksets = sorted(old.tasksets | new.tasksets)
        notes.append(
            f"both sides span several tasksets ({', '.join(tasksets)}); tasks are keyed and listed as taskset/task_id"
        )
    elif old_multi or new_multi:
        keyed_side = "old" if old_multi else "new"
        keyed, plain = (old, new) if old_multi else (new, old)
        keyed_labels, ambiguous = _match_keyed(keyed, plain)
        plain_labels = _plain_labels(plain)
        old_labels, new_labels = (keyed_labels, plain_labels) if old_multi else (plain_labels, keyed_labels)
        notes.append(
            f"the {keyed_side} side spans several tasksets ({', '.join(sorted(keyed.tasksets))}); "
            "its tasks are matched to the other side's plain ids on task_id"
        )
    else:
        old_labels, new_labels = _plain_labels(old), _plain_labels(new)
    if ambiguous:
        plain_ids = new_labels.keys() if keyed_side == "old" else old_labels.keys()
        unmatched = sorted(ambiguous & plain_ids)
        if unmatched:
            notes.append(
                f"{len(unmatched)} task id(s) recur in several {keyed_side} tasksets and cannot be matched to the "
                f"other side's plain ids; they are listed as taskset/task_id: {listed(unmatched)}"
            )
    return LabelledSides(
        old_labels,
        new_labels,
        old_prefix_stripped=old_stripped,
        new_prefix_stripped=new_stripped,
        keyed_by_taskset=keyed_by_taskset,
        notes=notes,
    )

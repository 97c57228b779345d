"""Task identity: the join field of each side, task ids and tasksets, labels, and the join.

Key detection is streamed: :class:`KeyVote` sees each row once and keeps only the values of the
candidate fields that every row so far carries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .errors import CompareInputError
from .rows import KEY_CANDIDATES, lookup

#: (taskset or None, task id)
TaskIdent = tuple[Optional[str], str]


def ident_of(value: Any) -> TaskIdent:
    """A join value as (taskset, task id): `{taskset, task_id|id}` objects, else a canonical string."""
    if isinstance(value, dict):
        task_id = value.get("task_id")
        if task_id is None:
            task_id = value.get("id")
        if task_id is not None:
            taskset = value.get("taskset")
            return (None if taskset is None else _text(taskset), _text(task_id))
        return (None, json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")))
    return (None, _text(value))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def describe_row_task(row: dict[str, Any], key: Optional[str]) -> Optional[str]:
    """The row's task as `taskset/task_id` or the plain id, for error messages; None when unnamed."""
    for name in (key,) if key else KEY_CANDIDATES:
        value = lookup(row, name)
        if value is not None:
            taskset, task_id = ident_of(value)
            return f"{taskset}/{task_id}" if taskset else task_id
    return None


class KeyVote:
    """Streams the rows of one side and keeps, per row, the values of the surviving candidates.

    A candidate survives while every voting row carries it (non-null). Rows that vote=False (a
    sidecar record naming no task) are anonymous and keep no value.
    """

    def __init__(self, key: Optional[str]) -> None:
        self.explicit = key
        self.columns: dict[str, list[Optional[TaskIdent]]] = {
            name: [] for name in ((key,) if key else KEY_CANDIDATES)
        }
        self.voters = 0
        self._idents: dict[TaskIdent, TaskIdent] = {}

    def candidate_values(self, row: dict[str, Any]) -> dict[str, Any]:
        """The values this vote needs from a row (kept for sidecar records until they stand)."""
        return {name: lookup(row, name) for name in self.columns}

    def add(self, values: dict[str, Any], anonymous: bool = False) -> Optional[str]:
        """Record one row's values; returns an error text for a row lacking an explicit key."""
        if anonymous:
            for column in self.columns.values():
                column.append(None)
            return None
        self.voters += 1
        for name in list(self.columns):
            value = values.get(name)
            if value is None:
                if self.explicit:
                    return f"row has no {self.explicit!r} field (--parity-key {self.explicit})"
                del self.columns[name]
            else:
                self.columns[name].append(self._compact(value))
        return None

    def _compact(self, value: Any) -> TaskIdent:
        """The value as a (taskset, task id) ident, one shared object per distinct task."""
        ident = ident_of(value)
        return self._idents.setdefault(ident, ident)

    def chosen(self) -> Optional[str]:
        """The first candidate every voting row carries; None when no row voted or none qualifies."""
        if self.voters == 0:
            return None
        for name in self.columns:
            return name
        return None

    def values(self, name: str) -> list[Optional[TaskIdent]]:
        """Each row's ident under the chosen field; None for an anonymous row."""
        return self.columns[name]


def no_key_message(path: str) -> str:
    """The input error for a side on which no candidate field is on every row."""
    return f"{path}: no task id field found; rows carry none of {', '.join(KEY_CANDIDATES)} (use --parity-key)"


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
class Join:
    """Labels per side: label -> row indexes, plus how the labels were made."""

    old: dict[str, list[int]]
    new: dict[str, list[int]]
    old_prefix_stripped: Optional[str] = None
    new_prefix_stripped: Optional[str] = None
    keyed_by_taskset: bool = False
    notes: list[str] = field(default_factory=list)


def _full(ident: TaskIdent) -> str:
    taskset, task_id = ident
    return f"{taskset}/{task_id}" if taskset is not None else task_id


def _plain_labels(grouped: Grouped) -> dict[str, list[int]]:
    labels: dict[str, list[int]] = {}
    for (_, task_id), rows in grouped.groups.items():
        labels.setdefault(task_id, []).extend(rows)
    return labels


def _full_labels(grouped: Grouped) -> dict[str, list[int]]:
    labels: dict[str, list[int]] = {}
    for ident, rows in grouped.groups.items():
        labels.setdefault(_full(ident), []).extend(rows)
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
            label = _full(ident)
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


def join(old: Grouped, new: Grouped) -> Join:
    """Label both sides so that the same task carries the same label (SEMANTICS.md §2-3)."""
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
                f"other side's plain ids; they are listed as taskset/task_id: {', '.join(unmatched)}"
            )
    return Join(
        old_labels,
        new_labels,
        old_prefix_stripped=old_stripped,
        new_prefix_stripped=new_stripped,
        keyed_by_taskset=keyed_by_taskset,
        notes=notes,
    )

"""Whether a candidate field names the tasks of one side, or a category of them (a taskset, a source).

A field every row carries is no task id when one of its values holds several different prompts
that each recur across their repeats, or, without prompts, when its values each span several task
indices. The key vote asks this of each candidate in turn (:meth:`.key_vote.KeyVote.choose`); the
rules are in docs/semantics.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .fields import PROMPT, TASK_INDEX
from .task_idents import TaskIdent, full_label, natural_key


@dataclass(frozen=True)
class SideColumns:
    """One side's candidate columns as its vote holds them, and how a row's prompt label is had."""

    #: each surviving candidate's value per row
    columns: dict[str, list[Optional[TaskIdent]]]
    #: each row's prompt fingerprint (None: no prompt, or an anonymous row)
    fingerprints: list[Optional[int]]
    #: row ``index``'s prompt label, worked out (and kept in the vote) when it was deferred
    label: Callable[[int], Optional[TaskIdent]]
    #: whether deferred prompts can be read again (else a deferred label stays unknown)
    rereads: bool
    #: each row's `_ng_run_id` (None: none), where the vote kept them: an index names a task within its run
    runs: Sequence[Any] = ()

    def holds_one_task(self, name: str) -> bool:
        """An inferred field names tasks on this side: no task index of a run carries two of its
        values (it would name rollouts), no value spans task indices of different prompts, and,
        without task indices, no value is a category by the prompts (:meth:`_prompt_category`)."""
        column = self.columns[name]
        indexes = self.columns.get(TASK_INDEX)
        prompts = self.columns.get(PROMPT)
        if indexes is not None:
            runs = self.runs if len(self.runs) == len(column) else [None] * len(column)
            value_of: dict[tuple[Any, TaskIdent], TaskIdent] = {}
            spread: dict[TaskIdent, dict[TaskIdent, int]] = {}
            for row, (value, index, run) in enumerate(zip(column, indexes, runs)):
                if value is None or index is None:
                    continue
                if value_of.setdefault((run, index), value) != value:
                    return False
                spread.setdefault(value, {}).setdefault(index, row)
            if prompts is None or not self.rereads:
                return True
            fingerprints = self.fingerprints if len(self.fingerprints) == len(column) else None
            for rows in spread.values():
                if len(rows) < 2:
                    continue
                if fingerprints is not None and len({fingerprints[row] for row in rows.values()} - {None}) < 2:
                    continue  # one spelling of one prompt: nothing to label
                labels: set[TaskIdent] = set()
                for row in rows.values():
                    label = self.label(row)
                    if label is not None:
                        labels.add(label)
                        if len(labels) > 1:
                            return False
            return True
        if prompts is not None and len(self.fingerprints) == len(column):
            return self._prompt_category(name, []) is None
        return True

    def category(self, name: str, notes: list[str]) -> Optional[str]:
        """Why the candidate is a category, not a task id; else None (docs/semantics.md).

        On the prompts when every voting row has one (:meth:`_prompt_category`), else on
        `_ng_task_index` (:meth:`_index_category`). NeMo Gym's own `_ng_task_id` names a task by
        construction and is not checked.
        """
        if name == "_ng_task_id":
            return None
        if PROMPT in self.columns and len(self.fingerprints) == len(self.columns[name]):
            return self._prompt_category(name, notes)
        return self._index_category(name)

    def _prompt_category(self, name: str, notes: list[str]) -> Optional[str]:
        """A category when one of its values holds two or more different prompts, each recurring
        across its own repeats, or each on as many rows as the others (once each: one rollout a
        task). A value whose prompts fit neither (some once, some repeated) is kept, with a note.

        Decided on the prompts' labels (reader-independent); the fingerprints only pick the values
        worth labelling."""
        rows_of: dict[TaskIdent, list[int]] = {}
        seen: dict[TaskIdent, set[int]] = {}
        for index, (value, fingerprint) in enumerate(zip(self.columns[name], self.fingerprints)):
            if value is None or fingerprint is None:
                continue
            rows_of.setdefault(value, []).append(index)
            seen.setdefault(value, set()).add(fingerprint)
        suspects = [value for value, prints in seen.items() if len(prints) > 1]
        if not suspects:
            return None
        for value in sorted(suspects, key=lambda v: rows_of[v][0]):  # file order: the same under every reader
            counts = Counter(self.label(index) for index in rows_of[value])
            counts.pop(None, None)
            if len(counts) < 2:
                continue
            if min(counts.values()) > 1 or len(set(counts.values())) == 1:
                return (
                    f"{name} is not a task id here: {full_label(value)!r} holds {len(counts)} different prompts "
                    f"({len(rows_of[value])} rows{self._indices_of(rows_of[value])}); passed over"
                )
            notes.append(
                f"{name} {full_label(value)!r} holds {len(counts)} different prompts that do not recur as repeats do; "
                f"kept as one task (give the key setting if they are different tasks)"
            )
        return None

    def _indices_of(self, rows: list[int]) -> str:
        """`; _ng_task_index 0, 1, ...` for the rows (up to five, natural order), when rows carry it."""
        column = self.columns.get(TASK_INDEX)
        if column is None:
            return ""
        return f"; {TASK_INDEX} " + _some({ident for i in rows if (ident := column[i]) is not None})

    def _index_category(self, name: str) -> Optional[str]:
        """Without prompts: a category when a value of it is on several task indices while no task
        index has several of its values and there are at most half as many values as indices (one
        task listed at two indices is no category; a file merged from several runs reuses indices,
        and then neither field decides)."""
        indexes = self.columns.get(TASK_INDEX)
        if indexes is None:
            return None
        spread: dict[TaskIdent, set[TaskIdent]] = {}
        values_of: dict[TaskIdent, TaskIdent] = {}
        for value, index in zip(self.columns[name], indexes):
            if value is None or index is None:
                continue
            if values_of.setdefault(index, value) != value:
                return None
            spread.setdefault(value, set()).add(index)
        widest = max(spread.items(), key=lambda item: len(item[1]), default=None)
        if widest is None or len(widest[1]) < 2 or 2 * len(spread) > len(values_of):
            return None
        value, indices = widest
        return (
            f"{name} is not a task id here: {full_label(value)!r} is on {len(indices)} task indices "
            f"({TASK_INDEX} {_some(indices)}); passed over"
        )


def _some(indices: set[TaskIdent]) -> str:
    """Up to five task indices in natural order, `...` after them when there are more."""
    shown = sorted((i for _, i in indices), key=natural_key)
    return ", ".join(shown[:5]) + (", ..." if len(shown) > 5 else "")

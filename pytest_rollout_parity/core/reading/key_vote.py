"""The key vote: which field names a task on one side, decided while the side's rows stream by
(docs/semantics.md, "Task identity and the join"); the join (:mod:`..identity.join`) reads it."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Optional

from .fields import (
    IDENTITY_FALLBACKS,
    KEY_CANDIDATES,
    LOAD_FIELDS,
    PROMPT,
    PROMPT_FIELDS,
    ROLLOUT_INDEX,
    RUN_ID,
    TASK_INDEX,
    inferred_candidates,
)
from .row_facts import lookup
from .task_idents import TaskIdent, common_start, full_label, ident_of, is_prompt, natural_key, prompt_label

#: ``row_at(row)``: a row's dict, read again from its file when the row is not kept
RowAt = Callable[[int], dict[str, Any]]
#: ``prompt_at(row)``: a row's prompt, read again from its file when the row is not kept
PromptAt = Callable[[int], Any]

#: A prompt not labelled yet: its row names an id field, which usually decides, and hashing a prompt
#: of many kilobytes costs more than reading the rest of the row.
DEFERRED: TaskIdent = (None, "<prompt not read yet>")

#: Why a side is keyed as it is (the summary prints these).
REASON_GIVEN = "given"
REASON_ID_FIELD = "an id field every row carries"
REASON_TASK_INDEX = "no task id field on every row"
REASON_PROMPT = "the prompt: no task id field and no _ng_task_index on every row"
REASON_BORROWED = "borrowed from the other side: no row names a task"
REASON_SHARDED = "the prompt: no task id field on every row, and _ng_task_index restarts in every shard"
REASON_SHARD_INDEX = "_ng_task_index within its shard (shard:index): no task id field and no prompt on every row"
REASON_RUNS = "the prompt: no task id field on every row, and the side holds several runs that each number their tasks"
REASON_RUN_INDEX = (
    "_ng_task_index within its run (run:index): several runs, no task id field and no prompt on every row"
)

#: Fields never inferred as an id: the known candidates, the fallbacks and what loading reads.
KNOWN_FIELDS: frozenset[str] = frozenset(KEY_CANDIDATES + IDENTITY_FALLBACKS + LOAD_FIELDS)

#: A cheap fingerprint of the row's prompt (detection only): it shows, without labelling every
#: prompt, whether an id value holds several prompts.
FINGERPRINT = "#prompt"
#: A fingerprint not taken: the row names its task by `_ng_task_id`, which keys the side while every
#: voting row has it; else the rows are read again (:meth:`KeyVote._read_fingerprints`).
UNREAD = -1
#: The row's `_ng_run_id` and `_ng_rollout_index` as dict keys (a non-scalar as its repr): they show several runs.
RUN = "#run"
ROLLOUT = "#rollout"
#: A record without `_ng_run_id` is placed by its index alone, when that maps one task in every run.
ANY_RUN = object()
#: The id field that names a task by construction: a side whose every row carries it is keyed on it.
NG_TASK_ID = KEY_CANDIDATES[0]


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once


def prompt_fingerprint(prompt: Any) -> Optional[int]:
    """A prompt's fingerprint as the row spells it, the same in every process; a value that seems to
    hold several prompts is confirmed on their labels."""
    if not is_prompt(prompt):
        return None
    data = _compact_json(prompt).encode("utf-8", "surrogatepass")
    return zlib.crc32(data) | (len(data) << 32)


@dataclass
class KeyChoice:
    """How one side is keyed: the field (None: no row names a task), why, and each row's ident."""

    key: Optional[str]
    values: list[Optional[TaskIdent]]
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    #: each row's prompt label when every voting row has one: a join on `_ng_task_index` checks them
    prompts: Optional[list[Optional[TaskIdent]]] = None
    #: the inferred id fields that hold one task a value here: the other side decides among them
    #: (:func:`..identity.join.infer_keys`)
    inferred: dict[str, list[Optional[TaskIdent]]] = field(default_factory=dict)
    #: the id fields this side showed to be categories: they are passed over on the other side too
    categories: list[str] = field(default_factory=list)


class KeyVote:
    """Keeps, per row, the values of the candidates every voting row so far carries (non-null).
    Anonymous rows (a sidecar record naming no task) do not vote but keep their `_ng_task_index` and
    prompt, so a side keyed on those still places them."""

    def __init__(self, key: Optional[str], option: str = "key", *, index_restarts: bool = False) -> None:
        """``index_restarts``: `_ng_task_index` names a task within its shard only (the side's reader
        qualifies it by shard), so it keys the side only when it is named."""
        self.explicit = key
        self.index_restarts = index_restarts
        self.option = option
        #: a given key keeps `_ng_task_index` beside it, to place a record lacking the key (:meth:`_placed`)
        self.columns: dict[str, list[Optional[TaskIdent]]] = {
            name: [] for name in ((key, TASK_INDEX) if key else KEY_CANDIDATES + IDENTITY_FALLBACKS)
        }
        self.voters = 0
        #: each added row's prompt fingerprint (None: no prompt, or an anonymous row)
        self.fingerprints: list[Optional[int]] = []
        self._idents: dict[TaskIdent, TaskIdent] = {}
        self._scalars: dict[type, dict[Any, TaskIdent]] = {str: {}, int: {}}
        #: the inferred id candidates (seen on the first voting row); None until that row is seen
        self.inferred: Optional[tuple[str, ...]] = () if key else None
        #: each row's `_ng_run_id` and `_ng_rollout_index`, kept while every voting row has a task index
        #: (or under a given key): it names a task within its run only (:meth:`several_runs`, :meth:`_placed`)
        self.runs: list[Any] = []
        self.rollouts: list[Any] = []

    def candidate_values(self, row: dict[str, Any], *, anonymous: bool = False) -> dict[str, Any]:
        """The values this vote needs from a row (kept for sidecar records until they stand)."""
        if self.inferred is None and not anonymous:
            self.inferred = inferred_candidates(row, KNOWN_FIELDS)
        names = (*self.columns, *(self.inferred or ())) if self.voters == 0 else self.columns  # made on the first vote
        values = {name: lookup(row, name) for name in names if name != PROMPT}
        if PROMPT in self.columns:
            prompt = lookup(row, PROMPT)
            named = not self.explicit and any(values.get(name) is not None for name in KEY_CANDIDATES)
            values[PROMPT] = DEFERRED if named and is_prompt(prompt) else prompt_label(prompt)
            if not self.explicit and not anonymous:  # an anonymous row's fingerprint is never kept
                keyed_on_ng_id = values.get(NG_TASK_ID) is not None and NG_TASK_ID in self.columns
                values[FINGERPRINT] = UNREAD if keyed_on_ng_id else prompt_fingerprint(prompt)
        if TASK_INDEX in values:
            for name, stamp in ((RUN, row.get(RUN_ID)), (ROLLOUT, row.get(ROLLOUT_INDEX))):
                if stamp is not None:
                    values[name] = stamp if isinstance(stamp, (str, int, float)) else repr(stamp)
        return values

    def add(self, values: dict[str, Any], *, anonymous: bool = False) -> Optional[str]:
        """Record one row's values; returns an error text for a row lacking an explicit key."""
        if not anonymous and self.voters == 0 and not self.explicit:
            # a column for each inferred candidate, None on the anonymous rows before the first vote
            for name in self.inferred or ():
                self.columns.setdefault(name, [None] * len(self.fingerprints))
        self.fingerprints.append(None if anonymous else values.get(FINGERPRINT))
        if TASK_INDEX in self.columns:
            self.runs.append(values.get(RUN))
            self.rollouts.append(values.get(ROLLOUT))
        if anonymous:
            for name, column in self.columns.items():
                column.append(self._cell(values.get(name)) if name in IDENTITY_FALLBACKS else None)
            return None
        self.voters += 1
        scalars = self._scalars
        for name, column in list(self.columns.items()):
            value = values.get(name)
            if value is None:
                if name == self.explicit:
                    return f"row has no {self.explicit!r} field ({self.option} {self.explicit})"
                if self.explicit or (name == PROMPT and self.index_restarts):  # a record's may be its task's
                    column.append(None)
                    continue
                del self.columns[name]
                if name == TASK_INDEX:  # the runs count only while every voting row has a task index
                    self.runs.clear()
                    self.rollouts.clear()
                continue
            known = scalars.get(type(value))  # the common case inline: an index or id seen before
            ident = known.get(value) if known is not None else None
            column.append(ident if ident is not None else self._cell(value))
        return None

    def _placed(self, name: str, column: list[Optional[TaskIdent]], notes: list[str]) -> list[Optional[TaskIdent]]:
        """The column with each row lacking the field (a failure record naming its task by its stamps
        only) given the value all rows of its `_ng_task_index` have (in its run; the index holds its
        shard)."""
        indexes = self.columns.get(TASK_INDEX)
        if not indexes or None not in column:
            return column
        mapped: dict[tuple[Any, TaskIdent], Optional[TaskIdent]] = {}
        for value, index, run in zip(column, indexes, self.runs):
            if value is not None and value is not DEFERRED and index is not None:
                for where in ((run, index), (ANY_RUN, index)):
                    if mapped.setdefault(where, value) != value:
                        mapped[where] = None  # two tasks at one index: it maps nothing
        placed = list(column)
        for row, (value, index, run) in enumerate(zip(column, indexes, self.runs)):
            if value is None and index is not None:
                placed[row] = mapped.get((run, index)) or (mapped.get((ANY_RUN, index)) if run is None else None)
        count = sum(value is None for value in column) - sum(value is None for value in placed)
        if count:
            notes.append(
                f"{count} failure record(s) without {name} placed in their task by the main file's rows of "
                f"the same {TASK_INDEX}"
            )
        return placed

    def several_runs(self, prompt_at: PromptAt) -> Optional[str]:
        """Why the side holds several runs, or None: several `_ng_run_id` values, or one logical rollout
        (run, task index, rollout index) recurring with a prompt sharing no leading user message with
        the first (a retry of a rollout whose prompt holds its own state, such as a dealt hand, begins
        as the first did; a legacy append file's retry repeats its prompt, and is one run)."""
        runs = {run for run in self.runs if run is not None}
        if len(runs) > 1:
            shown = ", ".join(sorted(str(run) for run in runs)[:3]) + (", ..." if len(runs) > 3 else "")
            return f"its rows carry {len(runs)} {RUN_ID} values ({shown})"
        if PROMPT not in self.columns:  # some row has no prompt: none to compare
            return None
        fingerprints = self.fingerprints
        first: dict[tuple[Any, TaskIdent, Any], int] = {}
        per_row = zip(self.runs, self.rollouts, self.columns[TASK_INDEX], fingerprints)
        for row, (run, rollout, index, fingerprint) in enumerate(per_row):
            if rollout is None or index is None or fingerprint is None or fingerprint == UNREAD:
                continue
            earlier = first.setdefault((run, index, rollout), row)
            if earlier == row or fingerprints[earlier] == fingerprint:
                continue
            if self._label(earlier, prompt_at) == self._label(row, prompt_at):
                continue
            before, now = prompt_at(earlier), prompt_at(row)
            if isinstance(before, list) and isinstance(now, list):
                shared = before[: common_start(before, now)]
                if any(isinstance(message, dict) and message.get("role") == "user" for message in shared):
                    continue  # a retry: it begins with the same user message
            return (
                f"{TASK_INDEX} {index[1]} with the same {ROLLOUT_INDEX} recurs with another prompt "
                f"(rows {earlier + 1} and {row + 1} of the side)"
            )
        return None

    def drop_rows(self, kept: list[int]) -> None:
        """Keep only the rows at ``kept`` (in order) in what the vote holds per row."""
        per_row: list[list[Any]] = [*self.columns.values(), self.fingerprints, self.runs, self.rollouts]
        for column in per_row:
            if column:
                column[:] = [column[place] for place in kept]

    def _cell(self, value: Any) -> Optional[TaskIdent]:
        """The value as a (taskset, task id) ident, one shared object per distinct task."""
        if value is None or value is DEFERRED:
            return value
        scalars = self._scalars.get(type(value))  # most values repeat: an index, a label, an id
        known = scalars.get(value) if scalars is not None else None
        if known is None:
            ident = ident_of(value)
            known = self._idents.setdefault(ident, ident)
            if scalars is not None:
                scalars[value] = known
        return known

    def choose(self, row_at: RowAt) -> KeyChoice:
        """The first candidate every voting row carries and that is no category; then the fallbacks."""

        def prompt_at(index: int) -> Any:
            return lookup(row_at(index), PROMPT)

        if self.voters == 0 or not self.columns:
            return KeyChoice(None, [])
        notes: list[str] = []
        if self.explicit:
            column = self._placed(self.explicit, self.columns[self.explicit], notes)
            return KeyChoice(self.explicit, column, REASON_GIVEN, notes)
        passed_over: list[str] = []
        inferred = self.inferred or ()
        for name, column in self.columns.items():  # the id candidates come first, in their order
            if name in IDENTITY_FALLBACKS or name in inferred:
                continue
            if name == NG_TASK_ID:  # names a task by construction: never checked
                category = None
            elif PROMPT in self.columns:  # on the prompts when every voting row has one
                self._read_fingerprints(prompt_at)
                category = self._prompt_category(name, notes, prompt_at)
            else:
                category = self._index_category(name)
            if category is None:
                return KeyChoice(
                    name, self._placed(name, column, notes), REASON_ID_FIELD, notes, categories=passed_over
                )
            passed_over.append(name)
            notes.append(category)
        passed = f"{', '.join(passed_over)} passed over: a category" if passed_over else ""
        indexes, prompts = self.columns.get(TASK_INDEX), self.columns.get(PROMPT)
        runs = None if indexes is None or self.index_restarts else self.several_runs(prompt_at)
        restarts = self.index_restarts or runs is not None  # the index names a task within its shard or run
        labels = None
        if restarts and prompts is not None:  # a record without a prompt takes its shard's or run's rows'
            placed: list[str] = []
            labels = self._placed(PROMPT, [self._label(row, prompt_at) for row in range(len(prompts))], placed)
            if sum(label is None for label in labels) > len(labels) - self.voters:
                labels = None  # a voting row has no prompt to take
            notes += placed if labels else []
        if runs is not None:
            notes.append(
                f"the side holds several runs: {runs}; {TASK_INDEX} names a task within its run only, so "
                + ("the side is keyed on the prompt" if labels else f"its tasks are named run:{TASK_INDEX}")
            )
        choice = KeyChoice(None, [], notes=notes, prompts=prompts)
        if labels:
            choice = KeyChoice(PROMPT, labels, passed or (REASON_RUNS if runs else REASON_SHARDED), notes, labels)
        elif indexes is not None and runs is not None:
            values = [None if i is None else self._cell(f"{run}:{i[1]}") for i, run in zip(indexes, self.runs)]
            choice = KeyChoice(TASK_INDEX, values, passed or REASON_RUN_INDEX, notes, prompts)
        elif indexes is not None:
            reason = REASON_SHARD_INDEX if self.index_restarts else REASON_TASK_INDEX
            choice = KeyChoice(TASK_INDEX, indexes, passed or reason, notes, prompts)
        elif prompts is not None:
            choice = KeyChoice(PROMPT, prompts, passed or REASON_PROMPT, notes, prompts)
        choice.categories = passed_over
        # the inferred id fields that hold one task a value here (the other side decides among them)
        choice.inferred = {
            name: self._placed(name, self.columns[name], [])
            for name in self.inferred or ()
            if name in self.columns and self._holds_one_task(name, prompt_at)
        }
        one_prompt = choice.key == PROMPT and self.voters > 1 and len(set(choice.values) - {None}) == 1
        for index in range(len(choice.prompts or ())):  # the join compares the deferred labels too
            self._label(index, prompt_at)
        if not _prompt_from_field(choice, row_at) and one_prompt:
            choice.notes.append(
                "the prompt is the same on every row: it names no task, and without _ng_task_index the "
                "side's rows cannot be told apart (they are compared as one task)"
            )
        return choice

    def _label(self, index: int, prompt_at: PromptAt) -> Optional[TaskIdent]:
        """Row ``index``'s prompt label, worked out now (and kept) when it was deferred."""
        column = self.columns[PROMPT]
        label = column[index]
        if label is DEFERRED:
            label = column[index] = self._cell(prompt_label(prompt_at(index)))
        return label

    # --- a task id, or a category of tasks ----------------------------------------------------

    def _read_fingerprints(self, prompt_at: PromptAt) -> None:
        """The fingerprints left unread (:data:`UNREAD`) taken now, when every voting row has a prompt."""
        if PROMPT in self.columns and UNREAD in self.fingerprints:
            for index, fingerprint in enumerate(self.fingerprints):
                if fingerprint == UNREAD:
                    self.fingerprints[index] = prompt_fingerprint(prompt_at(index))

    def _holds_one_task(self, name: str, prompt_at: PromptAt) -> bool:
        """No task index of a run carries two of the field's values (they would name rollouts), no
        value spans task indices of different prompts, and without task indices none is a category."""
        self._read_fingerprints(prompt_at)
        if TASK_INDEX not in self.columns:
            return PROMPT not in self.columns or self._prompt_category(name, [], prompt_at) is None
        spread = self._spread(name, self.runs)
        if spread is None:
            return False
        return PROMPT not in self.columns or all(
            len(self._labels_of(rows.values(), prompt_at)) < 2 for rows in spread.values()
        )

    def _labels_of(self, rows: Collection[int], prompt_at: PromptAt) -> Counter[Optional[TaskIdent]]:
        """The prompt labels of ``rows``, counted; none when their fingerprints agree (one spelling of
        one prompt: nothing to label). Labels decide, as every reader gives them alike."""
        if len({self.fingerprints[row] for row in rows} - {None}) < 2:
            return Counter()
        counts = Counter(self._label(row, prompt_at) for row in rows)
        counts.pop(None, None)
        return counts

    def _prompt_category(self, name: str, notes: list[str], prompt_at: PromptAt) -> Optional[str]:
        """Why the candidate is a category, not a task id (docs/semantics.md); else None. A value
        holding several prompts that each recur, or are each on as many rows (once each: one rollout a
        task), is a category; one whose prompts fit neither (some once, some repeated) is kept, noted."""
        rows_of: dict[TaskIdent, list[int]] = {}  # in file order: the same under every reader
        for index, (value, fingerprint) in enumerate(zip(self.columns[name], self.fingerprints)):
            if value is not None and fingerprint is not None:
                rows_of.setdefault(value, []).append(index)
        for value in rows_of:
            counts = self._labels_of(rows_of[value], prompt_at)
            if len(counts) < 2:
                continue
            if min(counts.values()) > 1 or len(set(counts.values())) == 1:
                indexes = self.columns.get(TASK_INDEX)
                at = "" if indexes is None else f"; {TASK_INDEX} " + _some({indexes[i] for i in rows_of[value]})
                return (
                    f"{name} is not a task id here: {full_label(value)!r} holds {len(counts)} different prompts "
                    f"({len(rows_of[value])} rows{at}); passed over"
                )
            notes.append(
                f"{name} {full_label(value)!r} holds {len(counts)} different prompts that do not recur as repeats do; "
                f"kept as one task (name the key with --parity-key if they are different tasks)"
            )
        return None

    def _spread(self, name: str, runs: Iterable[Any]) -> Optional[dict[TaskIdent, dict[TaskIdent, int]]]:
        """Each value of the field with its task indices (a row at each); None when a task index (of a
        run) carries two of its values."""
        value_of: dict[tuple[Any, TaskIdent], TaskIdent] = {}
        spread: dict[TaskIdent, dict[TaskIdent, int]] = {}
        for row, (value, index, run) in enumerate(zip(self.columns[name], self.columns[TASK_INDEX], runs)):
            if value is None or index is None:
                continue
            if value_of.setdefault((run, index), value) != value:
                return None
            spread.setdefault(value, {}).setdefault(index, row)
        return spread

    def _index_category(self, name: str) -> Optional[str]:
        """Without prompts: a category when a value is on several task indices, no index has two
        values, and there are at most half as many values as indices (one task at two indices is no
        category; a file merged from several runs reuses indices, and then neither field decides)."""
        spread = self._spread(name, repeat(None)) if TASK_INDEX in self.columns else None  # runs ignored
        if not spread:
            return None
        value, indices = max(spread.items(), key=lambda item: len(item[1]))
        if len(indices) < 2 or 2 * len(spread) > len(set().union(*spread.values())):
            return None
        return (
            f"{name} is not a task id here: {full_label(value)!r} is on {len(indices)} task indices "
            f"({TASK_INDEX} {_some(indices)}); passed over"
        )


#: rows read first for a field that may be the prompt; only when one qualifies there are all read
PROMPT_FIELD_SAMPLE = 20


def _free_text(value: Any) -> bool:
    """A string holding whitespace (between words): free text, as a prompt is."""
    return isinstance(value, str) and any(ch.isspace() for ch in value.strip())


def _prompt_from_field(choice: KeyChoice, row_at: RowAt) -> bool:
    """Whether a varying free-text field of :data:`.fields.PROMPT_FIELDS` is read as the prompt of
    a side keyed on its index or prompt whose prompt is the same on every row (docs/semantics.md, "A
    prompt the same on every row")."""
    prompts = choice.prompts
    if choice.key not in (PROMPT, TASK_INDEX) or prompts is None:
        return False
    rows = [index for index, label in enumerate(prompts) if label is not None]
    if len(rows) < 2 or len({prompts[index] for index in rows}) > 1:
        return False
    sample = [row_at(index) for index in rows[:PROMPT_FIELD_SAMPLE]]  # most sides have no such field
    names = [name for name in PROMPT_FIELDS if all(_free_text(row.get(name)) for row in sample)]
    read = {index: row_at(index) for index in rows} if names else {}
    for name in names:
        texts = [read[index].get(name) for index in rows]
        if not all(_free_text(text) for text in texts) or len(set(texts)) < 2:
            continue
        labels: list[Optional[TaskIdent]] = [None] * len(prompts)
        for index, text in zip(rows, texts):
            labels[index] = ident_of(prompt_label(text))
        choice.prompts = labels
        if choice.key == PROMPT:
            choice.values = labels
            choice.reason = f"the prompt, read from the {name} field: the messages are the same on every row"
        choice.notes.append(
            f"the messages are the same on every row, so the {name} field, which varies as a prompt does, is read "
            "as the prompt"
        )
        return True
    return False


def _some(indices: Collection[Optional[TaskIdent]]) -> str:
    """Up to five task indices in natural order, `...` after them when there are more."""
    shown = sorted((ident[1] for ident in indices if ident is not None), key=natural_key)
    return ", ".join(shown[:5]) + (", ..." if len(shown) > 5 else "")


#: The input error of a side on which no candidate field is on every row.
NO_KEY = (
    f"no task id field found; rows carry none of {', '.join(KEY_CANDIDATES)}, "
    f"and neither {TASK_INDEX} nor a prompt ({PROMPT}) is on every row"
)

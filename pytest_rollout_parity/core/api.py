"""The Python API: compare rows in memory (like `gym dev compare`) or two files by streaming.

``key`` names the join field of both sides; ``old_key``/``new_key`` name one side's and win over
``key`` for that side. ``agent``/``old_agent``/``new_agent`` keep one agent's rows the same way.
An input error that a setting settles says how to give it here (:data:`HOW_TO_SET`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Optional, TypeVar

from .errors import CompareInputError, Place
from .identity.join import SideInput, infer_keys
from .judging.classify import compare_sides
from .judging.verification import copies_note, run_conditions, verification_notes
from .model import CompareResult, RowFacts, RowReader
from .reading import loading
from .reading.agents import AgentFilter
from .reading.key_vote import REASON_BORROWED, REASON_GIVEN, KeyChoice
from .reading.loaded_side import LoadedSide
from .reading.side_builder import RowSource, SideBuilder, is_failure_record
from .reading.side_request import SideRequest
from .reports.json_file import json_dict
from .reports.summary import DEFAULT_ALPHA, RunInfo, build_summary
from .statistics.paired import PairedSection

#: How each setting an input error concerns (:attr:`CompareInputError.setting`) is given to the
#: API, as the error's reason ends
HOW_TO_SET = {
    "key": " (use key=)",
    "agent": "; choose one with agent= NAME (both sides) or old_agent= / new_agent= NAME",
}

F = TypeVar("F", bound=Callable[..., Any])


def _saying_how_to_set(function: F) -> F:
    """``function`` with its input errors saying how to give the setting they concern (:data:`HOW_TO_SET`)."""

    @functools.wraps(function)
    def raising(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except CompareInputError as exc:
            if exc.setting:
                exc.reason += HOW_TO_SET[exc.setting]
            raise

    return raising  # type: ignore[return-value]


def _side_from_rows(
    rows: Iterable[dict[str, Any]], key: Optional[str], name: str, agent: Optional[str] = None
) -> SideInput:
    builder = SideBuilder(key, f"{name}_key")
    agents = AgentFilter(agent, f"{name}_agent")
    for index, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise _row_place(name, index).error(f"expected a dict, got {type(row).__name__}")
        if not (agents.keep_record(row) if is_failure_record(row) else agents.keep(row)):
            continue
        builder.add_row(row, RowSource(_row_place(name, index)), keep=True)
    agents.check(f"{name} rows")
    found = _input(builder.facts, builder.finish(f"{name} rows"), f"{name} rows")
    found.conditions = builder.conditions
    return found


def _row_place(name: str, index: int) -> Place:
    """Row ``index`` of the rows given for side ``name``, as messages name it (`old rows: row 3`)."""
    return Place(f"{name} rows", index, f"{name} rows: row {index}")


def _input(facts: list[RowFacts], choice: KeyChoice, name: str, reader: Optional[RowReader] = None) -> SideInput:
    return SideInput(
        facts=facts,
        values=choice.values,
        key=choice.key or "",
        reader=reader,
        reason=choice.reason,
        notes=choice.notes,
        prompts=choice.prompts,
        name=name,
        inferred=dict(choice.inferred),
        categories=choice.categories,
    )


def _borrow_keys(old: SideInput, new: SideInput, old_key: Optional[str], new_key: Optional[str]) -> None:
    """A side with no task-naming rows takes the other side's field."""
    if not old.key:
        old.key = old_key or new.key or new_key or "_ng_task_id"
        old.reason = REASON_GIVEN if old_key else REASON_BORROWED
    if not new.key:
        new.key = new_key or old.key
        new.reason = REASON_GIVEN if new_key else REASON_BORROWED


@_saying_how_to_set
def compare_rollouts(
    old_rows: Iterable[dict[str, Any]],
    new_rows: Iterable[dict[str, Any]],
    key: Optional[str] = None,
    *,
    old_key: Optional[str] = None,
    new_key: Optional[str] = None,
    agent: Optional[str] = None,
    old_agent: Optional[str] = None,
    new_agent: Optional[str] = None,
) -> CompareResult:
    """Compare two sides given as row dicts (from :func:`load_rollouts` or built in memory)."""
    old_key, new_key = old_key or key, new_key or key
    old = _side_from_rows(old_rows, old_key, "old", old_agent or agent)
    new = _side_from_rows(new_rows, new_key, "new", new_agent or agent)
    if not old.facts and not new.facts:
        raise CompareInputError("", "no rows on either side: nothing to compare")
    notes = infer_keys(old, new)
    _borrow_keys(old, new, old_key, new_key)
    return _with_copies(_with_conditions(compare_sides(old, new, notes), old, new))


def _with_copies(
    result: CompareResult, old: Optional[LoadedSide] = None, new: Optional[LoadedSide] = None
) -> CompareResult:
    """The result with its copies note first among the notes, when both sides hold the same rows,
    and the notes on sides that may not have been verified (:mod:`.judging.verification`).

    Not for one file compared with itself (a smoke test, named as such).
    """
    names = [
        name
        for side in (old, new)
        if side is not None
        for name in ([shown for _, shown, _ in side.shards] if side.shards else [side.display])
    ]
    if old is not None and new is not None and not old.shards and not new.shards:
        try:
            if os.path.samefile(old.path, new.path):
                return _with_verification(result, names)
        except OSError:
            pass
    note = copies_note(result, *((old.digest, new.digest) if old is not None and new is not None else ()))
    if note is not None:
        result = replace(result, copies=note, notes=[note, *result.notes])
    return _with_verification(result, names)


def _with_verification(result: CompareResult, names: list[str]) -> CompareResult:
    notes = verification_notes(result, names)
    return replace(result, notes=[*result.notes, *notes]) if notes else result


def _with_conditions(result: CompareResult, old: SideInput, new: SideInput) -> CompareResult:
    """The result with the conditions each side ran under, and a note naming any difference."""
    found = run_conditions(result, old.conditions, new.conditions)
    notes = [*result.notes, found.note] if found.note else result.notes
    return replace(result, conditions=found.shown, models=found.models, notes=notes)


def _side_input(side: LoadedSide) -> SideInput:
    found = _input(side.facts, side.choice, side.display, side.read_row)
    found.conditions = side.conditions
    if side.shards:
        found.shard_names = [shown for _, shown, _ in side.shards]
    return found


def compare_loaded(
    old: LoadedSide,
    new: LoadedSide,
    key: Optional[str] = None,
    *,
    old_key: Optional[str] = None,
    new_key: Optional[str] = None,
) -> CompareResult:
    """Classify two streamed sides; a side whose rows name no task borrows the other's key."""
    return _compare_loaded(old, new, old_key or key, new_key or key)


def _compare_loaded(old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]) -> CompareResult:
    old_input, new_input = _side_input(old), _side_input(new)
    notes = infer_keys(old_input, new_input)
    _borrow_keys(old_input, new_input, old_key, new_key)
    return _with_copies(
        _with_conditions(compare_sides(old_input, new_input, notes), old_input, new_input),
        old,
        new,
    )


@_saying_how_to_set
def compare_files(
    old_path: str | os.PathLike[str],
    new_path: str | os.PathLike[str],
    key: Optional[str] = None,
    *,
    old_key: Optional[str] = None,
    new_key: Optional[str] = None,
    agent: Optional[str] = None,
    old_agent: Optional[str] = None,
    new_agent: Optional[str] = None,
) -> CompareResult:
    """Compare two rollouts files by streaming them; rows are re-read from disk only on demand."""
    old = SideRequest.from_arguments("old", old_path, key, old_key, agent, old_agent)
    new = SideRequest.from_arguments("new", new_path, key, new_key, agent, new_agent)
    return _compare_loaded(loading.load_side(old), loading.load_side(new), old.key, new.key)


def summary_dict(
    result: CompareResult,
    run: Optional[RunInfo] = None,
    *,
    paired: Optional[PairedSection] = None,
    margin: Optional[float] = None,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, Any]:
    """The JSON summary of a result (and, in a pytest run, of what the run did) as a dict.

    ``paired`` is the result's paired section when the caller already has it (else computed);
    with a ``margin`` the summary also holds the equivalence decision and the per-task tests at
    false discovery rate ``alpha`` (each flip's ``adjusted_p``).
    """
    return json_dict(build_summary(result, run, paired=paired, margin=margin, alpha=alpha))

"""The Python API: compare rows in memory (like `gym dev compare`) or two files by streaming.

``key`` names the join field of both sides; ``old_key``/``new_key`` name one side's and win over
``key`` for that side. ``agent``/``old_agent``/``new_agent`` keep one agent's rows the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from .errors import CompareInputError, Place
from .identity.join import SideInput
from .judging.classify import compare_sides
from .judging.verification import copies_note, verification_notes, with_conditions
from .model import CompareResult, RowFacts, RowReader
from .reading import loading
from .reading.key_vote import KeyChoice
from .reading.loaded_side import LoadedSide, SideRequest
from .reading.side_builder import AgentFilter, SideBuilder
from .reading.sidecar import is_failure_record
from .reports.json_file import json_dict
from .reports.outputs import named_input
from .reports.summary import DEFAULT_ALPHA, RunInfo, build_summary
from .statistics.paired import PairedSection


@contextmanager
def _saying_how_to_set() -> Iterator[None]:
    """Input errors raised inside say how to give the setting they concern, as an argument here."""
    try:
        yield
    except CompareInputError as exc:
        exc.reason += exc.how_to_set(lambda setting: f"{setting}=")
        raise


def _side_from_rows(
    rows: Iterable[dict[str, Any]], key: Optional[str], name: str, agent: Optional[str] = None
) -> SideInput:
    builder = SideBuilder(key, f"{name}_key")
    agents = AgentFilter(agent, f"{name}_agent")
    for index, row in enumerate(rows, start=1):
        place = Place(f"{name} rows", index, f"{name} rows: row {index}")  # as messages name it
        if not isinstance(row, dict):
            raise place.error(f"expected a dict, got {type(row).__name__}")
        if not (agents.keep_record(row) if is_failure_record(row) else agents.keep(row)):
            continue
        builder.add_row(row, place, keep=True)
    agents.check(f"{name} rows")
    return _input(builder.facts, builder.finish(f"{name} rows"), builder.conditions)


def _input(
    facts: list[RowFacts],
    choice: KeyChoice,
    conditions: Sequence[str],
    reader: Optional[RowReader] = None,
    shard_names: Sequence[str] = (),
) -> SideInput:
    keyed = {**vars(choice), "key": choice.key or "", "inferred": dict(choice.inferred)}
    return SideInput(**keyed, facts=facts, reader=reader, shard_names=shard_names, conditions=conditions)


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
    with _saying_how_to_set():
        old = _side_from_rows(old_rows, old_key, "old", old_agent or agent)
        new = _side_from_rows(new_rows, new_key, "new", new_agent or agent)
        if not old.facts and not new.facts:
            raise CompareInputError("", "no rows on either side: nothing to compare")
        return _compare(old, new, old_key, new_key)


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
    # a side's own key and agent win over the shared ones; errors name the API's arguments
    old = SideRequest(str(Path(old_path)), old_key or key, None, old_agent or agent, "old_key", "old_agent")
    new = SideRequest(str(Path(new_path)), new_key or key, None, new_agent or agent, "new_key", "new_agent")
    with _saying_how_to_set():
        return compare_loaded(loading.load_side(old), loading.load_side(new), old_key=old.key, new_key=new.key)


def compare_loaded(
    old: LoadedSide, new: LoadedSide, *, old_key: Optional[str] = None, new_key: Optional[str] = None
) -> CompareResult:
    """Classify two streamed sides; a side whose rows name no task borrows the other's key."""
    with old.kept_open() as old_read, new.kept_open() as new_read:
        old_input, new_input = (
            _input(side.facts, side.choice, side.conditions, read, [n for _, n, _ in side.shards])
            for side, read in ((old, old_read), (new, new_read))
        )
        return _compare(old_input, new_input, old_key, new_key, (old, new))


def _compare(
    old: SideInput,
    new: SideInput,
    old_key: Optional[str],
    new_key: Optional[str],
    loaded: Optional[tuple[LoadedSide, LoadedSide]] = None,
) -> CompareResult:
    """Join and classify two sides; note the conditions each ran under (and any difference), two
    sides holding the same rows (that note first) and sides that may not have been verified
    (:mod:`.judging.verification`). ``loaded``: the sides as read from files."""
    result = with_conditions(compare_sides(old, new, old_key, new_key), old.conditions, new.conditions)
    # one file compared with itself (by any path) is a smoke test, named as such: no copies note
    if loaded is None:
        note = copies_note(result)
    elif loaded[0].shards or loaded[1].shards or named_input(loaded[0].path, [("", loaded[1].path)]) is None:
        note = copies_note(result, loaded[0].digest, loaded[1].digest, (loaded[0].agent, loaded[1].agent))
    else:
        note = None
    if note is not None:
        result = replace(result, copies=note, notes=[note, *result.notes])
    verification = verification_notes(result, [shown for side in loaded or () for _, shown, _ in side.files])
    return replace(result, notes=[*result.notes, *verification]) if verification else result


def summary_dict(
    result: CompareResult,
    run: Optional[RunInfo] = None,
    *,
    paired: Optional[PairedSection] = None,
    margin: Optional[float] = None,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, Any]:
    """The JSON summary of a result (and, in a pytest run, of what the run did) as a dict; with a
    ``margin``, also the equivalence decision and the per-task tests at false discovery rate ``alpha``
    (each flip's ``adjusted_p``). ``paired``: the result's paired section, if the caller has it."""
    return json_dict(build_summary(result, run, paired=paired, margin=margin, alpha=alpha))

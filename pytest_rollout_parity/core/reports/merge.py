"""The parts of a split run joined into one verdict: pure functions of the parts' JSON summaries.

A run split over CI jobs (pytest-split groups, pytest-shard shards, `-k` selections) writes one
JSON summary file a part. Every part holds the whole file's classification, but only the items
it ran have an outcome there. :func:`merge_parts` trusts no part: every part must hold the same
whole-file classification (inputs, deciding options, known-flips list, counts, figures, each
task's category), each task's claimed outcome must be the one its category, its verdict and the
recorded options give, and an item must run in one part only. It takes each item's outcome from
the part that ran it, names the items no part ran, and decides as the gate does
(:func:`.summary.decide`) under the recorded options; its exit status follows the verdict (0 for
`pass`, else 1).

The parts are the user's files, read as data: the merge command holds each to the published
layout before this module sees it, and what a report shows of them is escaped by the renderers
(:mod:`.merge_reports`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from typing import Any, Optional, TypeVar, cast

from ..judging.completeness import Coverage
from ..judging.hook_verdict import Verdict
from ..model import TASK_OUTCOMES, Category, TaskOutcome
from ..statistics.margin import Equivalence
from .json_file import verdict_dict
from .summary import (
    AcceptedFlips,
    CheckRun,
    Counts,
    Decision,
    RunOutcome,
    SplitGroup,
    TaskSummary,
    accepted_flips,
    decide,
)

#: how many names a refusal or a list of gaps spells out before it counts the rest
NAMED = 5

PASS_EXIT, FAIL_EXIT = 0, 1
T = TypeVar("T")


class MergeError(Exception):
    """The parts cannot be merged: ``path`` (a part as given, or empty) and what is wrong."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


@dataclass(frozen=True, slots=True)
class MergedItem:
    """One item of the whole file: its outcome and the part that ran it (None: no part did)."""

    name: str
    gate: bool
    #: the item's outcome as the part's run reported it (its test runner's word) in the part that ran it
    outcome: Optional[str]
    part: Optional[str]
    category: Optional[Category] = None
    hook_verdict: Optional[Verdict] = None
    #: a task's outcome in the outcome vocabulary, from the part that ran it (`not_run`: no part did)
    task_outcome: Optional[TaskOutcome] = None
    #: a flip's report text, from the part that ran it
    evidence: Optional[str] = None


@dataclass(frozen=True, slots=True)
class PartRun:
    """What one part ran: its file as given, its splitter group, items and tasks run, failures."""

    path: str
    group: Optional[SplitGroup]
    items_ran: int
    tasks_ran: int
    gate_ran: int
    failed: int


@dataclass(frozen=True, slots=True)
class Merged:
    """The one verdict of the parts, with what the whole file's report needs (see :class:`Headline`)."""

    verdict: str
    exit_status: int
    decision: Decision
    counts: Counts
    compared: int
    nothing_compared: Optional[str]
    failing_flips: Optional[int]
    equivalence: Optional[Equivalence]
    copies: Optional[str]
    files: Mapping[str, Any]
    inputs: Mapping[str, str]
    parts: tuple[PartRun, ...]
    items: tuple[MergedItem, ...]
    #: the first part's summary, on which the merged JSON is built
    base: Mapping[str, Any]
    #: what to run next (the whole file's plan, which an inconclusive part carries), or None
    plan: Optional[Mapping[str, Any]] = None
    #: the team's own checks of every part, each with its outcome in the part that ran it (None: no part did)
    checks: tuple[CheckRun, ...] = ()
    #: the part that ran each check, by node id
    check_parts: Mapping[str, str] = field(default_factory=dict)

    def failed_checks(self) -> list[CheckRun]:
        return [check for check in self.checks if check.outcome == "failed"]

    def check_gaps(self) -> list[CheckRun]:
        """The team's checks that no part ran."""
        return [check for check in self.checks if check.outcome is None]

    #: the SHA-256 of the known-flips list the parts read, when a part accepted a flip by it
    known_flips_sha256: Optional[str] = None

    def outcomes(self) -> dict[str, int]:
        """How many items ended each way, over every part (items that ran nowhere left out)."""
        counted: dict[str, int] = {}
        for item in self.items:
            if item.outcome is not None:
                counted[item.outcome] = counted.get(item.outcome, 0) + 1
        return counted

    def gaps(self) -> list[MergedItem]:
        """The items no part ran, tasks first, in the whole file's order."""
        return [item for item in self.items if item.part is None]

    def failed(self) -> list[MergedItem]:
        return [item for item in self.items if item.outcome == "failed"]

    def hook_verdicts(self) -> list[MergedItem]:
        return [item for item in self.items if item.hook_verdict is not None]


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


def _part_of(path: str, data: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The part's summary and its `run` section: a summary of a pytest run that ran items."""
    run = data.get("run")
    if run is None:
        raise MergeError(path, 'no "run" section: a summary of a pytest run is needed, not of the Python API')
    if run["part"] is None:
        raise MergeError(path, "no item ran in this run (--collect-only, or written before parts were recorded)")
    return data, run


def _digests(path: str, run: Mapping[str, Any]) -> None:
    missing = [side for side in ("old", "new") if run["inputs"][side] is None]
    if missing:
        raise MergeError(path, f"no content digest of the {' and '.join(missing)} side: a part must read its files")


def _items(data: Mapping[str, Any], run: Mapping[str, Any]) -> list[tuple[str, bool, Optional[str], dict[str, Any]]]:
    """(name, is a gate item, outcome here or None, the entry) of every item of the whole file."""
    tasks = [(entry["task"], False, entry) for entry in data["tasks"]]
    gates = [(entry["item"], True, entry) for entry in run["gate"]]
    return [
        (name, gate, entry["item_outcome"] if entry["ran_here"] else None, entry) for name, gate, entry in tasks + gates
    ]


def _hook_verdict(entry: Mapping[str, Any]) -> Optional[Verdict]:
    verdict = entry.get("hook_verdict")  # a gate item has none
    return None if verdict is None else Verdict.read(verdict["outcome"], verdict["reason"], verdict["source"])


#: what a part's summary says of its own run only; every other key is the whole file's, and the parts must agree on it
RUN_KEYS = frozenset(
    ("verdict", "decided_by", "task_outcomes", "accepted_flips", "plan", "notes", "files", "run", "merge")
)
TASK_RUN_KEYS = frozenset(("outcome", "hook_verdict", "ran_here", "item_outcome", "evidence"))
#: what a part's `run` says of the whole file: the inputs, the deciding options, the known-flips list, the gate items
RUN_WHOLE_KEYS = ("inputs", "options", "known_flips", "gate_items")


def _whole_file(data: Mapping[str, Any]) -> dict[str, Any]:
    """The part's whole-file classification: its summary without what only its own run did."""
    whole: dict[str, Any] = {
        "run": {key: data["run"].get(key) for key in RUN_WHOLE_KEYS}
    }  # first: the inputs tell runs apart best
    whole.update((key, value) for key, value in data.items() if key not in RUN_KEYS)
    whole["tasks"] = [{k: v for k, v in task.items() if k not in TASK_RUN_KEYS} for task in data["tasks"]]
    return whole


def _difference(first: Any, other: Any, where: str = "") -> Optional[str]:
    """The first place where two JSON values differ, as `place (this against that)`, or None."""
    if isinstance(first, dict) and isinstance(other, dict):
        for key in [*first, *(key for key in other if key not in first)]:
            found = _difference(first.get(key), other.get(key), f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    if isinstance(first, list) and isinstance(other, list):
        for index, (a, b) in enumerate(zip(first, other)):
            found = _difference(a, b, f"{where}[{index}]")
            if found:
                return found
        if len(first) != len(other):
            return f"{where} ({len(other)} entries against {len(first)})"
        return None
    if first != other or type(first) is not type(other):
        return f"{where or 'the top level'} ({other!r:.80} against {first!r:.80})"
    return None


def _derived_outcome(path: str, entry: Mapping[str, Any], options: Mapping[str, Any], listed: set[str]) -> TaskOutcome:
    """A task's outcome re-derived from its category, the verdict it was given and the recorded options
    (docs/semantics.md, "Outcomes"): what a part that ran it must claim."""
    verdict = _hook_verdict(entry)
    if verdict is not None:
        if verdict.source == "known_flips" and (entry["category"] != "flipped" or entry["task"] not in listed):
            raise MergeError(
                path, f"task {entry['task']!r} claims a known-flips verdict its recorded list does not give"
            )
        return "failed" if verdict.outcome == "failed" else "accepted"
    category = entry["category"]
    if category == "identical":
        return "passed"
    if category == "flipped":
        if options.get("margin") is None or entry.get("verifier_disagreements"):
            return "failed"  # no sampling noise explains a verifier disagreement
        adjusted = entry.get("adjusted_p")
        return "failed" if adjusted is not None and adjusted < options["alpha"] else "within_noise"
    if category == "flipped_agent_error":
        return "agent_error"
    return "masked" if category == "masked" else "missing"


def _check_outcomes(path: str, data: Mapping[str, Any], options: Mapping[str, Any]) -> None:
    """Each task's claimed outcome is the one its category and the recorded options give (`not_run` where
    its item did not run here); a part that claims otherwise is refused."""
    listed = {entry[0] for entry in options.get("known_flips") or ()}
    for entry in data["tasks"]:
        expected = _derived_outcome(path, entry, options, listed) if entry.get("ran_here") else "not_run"
        if entry.get("outcome") != expected:
            raise MergeError(
                path,
                f"task {entry['task']!r} ({entry['category']}) claims the outcome {entry.get('outcome')!r}, "
                f"but its category and the recorded options give {expected!r}: an edited part?",
            )


def _known_flips_sha(checked: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> Optional[str]:
    """The known-flips list's SHA-256 the parts record (every part that names it: the same)."""
    found: Optional[tuple[str, str]] = None
    for path, data, _ in checked:
        for accepted in data.get("accepted_flips") or ():
            sha = accepted.get("sha256")
            if accepted.get("source") != "known_flips" or sha is None:
                continue
            if found is not None and sha != found[1]:
                raise MergeError(
                    path, f"read another known-flips list than {found[0]} (SHA-256 {sha} against {found[1]})"
                )
            found = found or (path, sha)
    return found[1] if found is not None else None


def merge_parts(parts: Sequence[tuple[str, Any]]) -> Merged:
    """The one verdict of ``parts`` (each: its file as given, its JSON summary as parsed, holding the
    published layout: `python -m pytest_rollout_parity` checks it first).

    Raises :class:`MergeError` when the parts read different inputs or ran under different options,
    when two parts ran one item, or when a file is not a part.
    """
    if not parts:
        raise MergeError("", "no part given: name each part's --parity-json file")
    checked = [(path, *_part_of(path, data)) for path, data in parts]
    first_path, first, first_run = checked[0]
    first_items = _items(first, first_run)
    names = [(name, gate) for name, gate, _, _ in first_items]
    ran_by: dict[tuple[str, bool], tuple[str, str]] = {}
    entries: dict[tuple[str, bool], dict[str, Any]] = {}
    overlaps: dict[tuple[str, bool], list[str]] = {}
    runs: list[PartRun] = []
    checks: dict[str, tuple[str, Optional[str]]] = {}
    check_parts: dict[str, str] = {}
    for path, data, run in checked:
        _digests(path, run)
        differs = _difference(_whole_file(first), _whole_file(data))
        if differs:
            raise MergeError(
                "",
                f"{path} and {first_path} hold different classifications of the whole file (parts of different "
                f"runs or inputs, or an edited part): first at {differs}",
            )
        _check_outcomes(path, data, run["options"])
        items = _items(data, run)
        failed = tasks = gates = 0
        for name, gate, outcome, entry in items:
            if outcome is None:
                continue
            key = (name, gate)
            if key in ran_by:
                overlaps.setdefault(key, [ran_by[key][0]]).append(path)
                continue
            ran_by[key] = (path, outcome)
            entries[key] = entry
            failed += outcome == "failed"
            tasks += not gate
            gates += gate
        for check in _checks(path, run):
            checks.setdefault(check.nodeid, (check.task, None))
            if check.outcome is None:
                continue
            if check.nodeid in check_parts:
                overlaps.setdefault((check.nodeid, False), [check_parts[check.nodeid]]).append(path)
                continue
            checks[check.nodeid] = (check.task, check.outcome)
            check_parts[check.nodeid] = path
            failed += check.outcome == "failed"
        part = run["part"]
        runs.append(PartRun(path, _read_back(SplitGroup, part["group"]), tasks + gates, tasks, gates, failed))
    if overlaps:
        named = [f"{name!r} ({', '.join(paths[:-1])} and {paths[-1]})" for (name, _), paths in overlaps.items()]
        raise MergeError(
            "",
            f"{len(named)} item(s) ran in more than one part: {_named(named)}; "
            "each item must run in one part (overlapping selections?)",
        )
    merged_items = []
    for (name, gate), (_, _, _, entry) in zip(names, first_items):
        path_outcome = ran_by.get((name, gate))
        ran_entry = entries.get((name, gate), entry)
        merged_items.append(
            MergedItem(
                name=name,
                gate=gate,
                outcome=path_outcome[1] if path_outcome else None,
                part=path_outcome[0] if path_outcome else None,
                category=None if gate else entry["category"],
                hook_verdict=_hook_verdict(ran_entry) if path_outcome else None,
                task_outcome=None if gate else ran_entry["outcome"] if path_outcome else "not_run",
                evidence=ran_entry.get("evidence") if path_outcome else None,
            )
        )
    merged = Merged(
        verdict="",
        exit_status=0,
        decision=Decision("inconclusive", ()),
        counts=Counts(**first["counts"]),
        compared=first["compared"],
        nothing_compared=first["nothing_compared"],
        failing_flips=first.get("failing_flips"),
        equivalence=_read_back(Equivalence, first.get("aggregate")),
        copies=first["copies"],
        files=first.get("files") or {},
        inputs=first_run["inputs"],
        parts=tuple(runs),
        items=tuple(merged_items),
        base=first,
        checks=tuple(CheckRun(nodeid, task, outcome) for nodeid, (task, outcome) in checks.items()),
        check_parts=check_parts,
    )
    options = first_run["options"]
    decision = _decision(merged, first, strict=options["strict"], allow_copy=options["allow_copy"])
    # the plan is the whole file's (one figure set, whatever part carries it), shown when the verdict is inconclusive
    plans = [data["plan"] for _, data, _ in checked if data["plan"] is not None]
    plan = plans[0] if plans and decision.verdict == "inconclusive" else None
    return replace(
        merged,
        verdict=decision.verdict,
        exit_status=PASS_EXIT if decision.verdict == "pass" else FAIL_EXIT,
        decision=decision,
        plan=plan,
        known_flips_sha256=_known_flips_sha(checked),
    )


def _checks(path: str, run: Mapping[str, Any]) -> list[CheckRun]:
    """The team's checks a part collected or ran (`run.checks`; none in a part written before checks were recorded)."""
    found = []
    for entry in run.get("checks", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("nodeid"), str):
            raise MergeError(path, "a check entry without its node id: not a --parity-json summary")
        outcome = entry.get("outcome")
        found.append(CheckRun(entry["nodeid"], str(entry.get("task")), outcome if isinstance(outcome, str) else None))
    return found


@cache
def _adapter(kind: Hashable) -> Any:
    """pydantic's adapter of one section's dataclass, built once a process (building one costs ms)."""
    from pydantic import TypeAdapter

    # pydantic 2.5 resolves a nested dataclass's annotations in this frame, not in its own module
    from ..judging.completeness import ErrorRates, Limit  # noqa: F401

    return TypeAdapter(cast(Any, kind))


def _read_back(kind: type[T], data: Any) -> Optional[T]:
    """A summary section the layout check let through, as the core's own dataclass (None: absent)."""
    if data is None:
        return None
    adapter = _adapter(cast(Hashable, kind))  # a class is hashable; mypy does not see it in type[T]
    read: T = adapter.validate_python(data, strict=False)  # checked strictly before
    return read


def _decision(merged: Merged, first: Mapping[str, Any], *, strict: bool, allow_copy: bool) -> Decision:
    """The gate's own verdict (:func:`.summary.decide`) over the merged outcomes."""
    tasks = tuple(
        TaskSummary(
            task=item.name,
            category=item.category or "identical",
            winner=None,
            old=None,
            new=None,
            outcome=item.task_outcome or "not_run",
        )
        for item in merged.items
        if not item.gate
    )
    run = RunOutcome(
        selected=sum(1 for item in merged.items if item.part is not None),
        verdicts_changed_by_hook=len(merged.hook_verdicts()),
        outcomes=tuple(merged.outcomes().items()),
        gate_items=tuple(item.name for item in merged.items if item.gate),
    )
    return decide(
        tasks,
        nothing=merged.nothing_compared,
        aggregate=merged.equivalence,
        coverage=_read_back(Coverage, first.get("coverage")),
        copies=merged.copies,
        run=run,
        strict=strict,
        checks=merged.checks,
        allow_copy=allow_copy,
    )


def merged_json(merged: Merged) -> dict[str, Any]:
    """The merged run as one run's JSON summary: the whole file's figures, each item's outcome from
    the part that ran it, the run's counts over every part, and `merge` (the parts, gaps, verdict)."""
    data = dict(merged.base)
    by_name = {(item.name, item.gate): item for item in merged.items}
    tasks = []
    for entry in data["tasks"]:
        item = by_name[(entry["task"], False)]
        tasks.append(
            {
                **entry,
                "ran_here": item.part is not None,
                "item_outcome": item.outcome,
                "outcome": item.task_outcome,
                "hook_verdict": verdict_dict(item.hook_verdict),
                "evidence": item.evidence,
            }
        )
    data["tasks"] = tasks
    if "plan" in data:
        data["plan"] = merged.plan
    data["verdict"] = merged.decision.verdict
    data["decided_by"] = [{"code": d.code, "text": d.text} for d in merged.decision.decided_by]
    counted: dict[str, int] = dict.fromkeys(TASK_OUTCOMES, 0)
    for item in merged.items:
        if item.task_outcome is not None:
            counted[item.task_outcome] += 1
    data["task_outcomes"] = counted
    data["accepted_flips"] = [asdict(accepted) for accepted in _accepted(merged, data["run"]["known_flips"])]
    run = dict(data["run"])
    gate_items = [item for item in merged.items if item.gate]
    ran = [item for item in merged.items if item.part is not None]
    run.update(
        selected=len(ran),
        outcomes=merged.outcomes(),
        verdicts_changed_by_hook=len(merged.hook_verdicts()),
        gate=[
            {"item": item.name, "ran_here": item.part is not None, "item_outcome": item.outcome} for item in gate_items
        ],
        checks=[asdict(check) for check in merged.checks],
        part={
            "partial": bool(merged.gaps() or merged.check_gaps()),
            "items": len(merged.items),
            "items_ran": len(ran),
            "tasks": len(merged.items) - len(gate_items),
            "tasks_ran": sum(1 for item in ran if not item.gate),
            "gate_items_ran": [item.name for item in gate_items if item.part is not None],
            "group": None,
            "checks": len(merged.checks),
            "checks_ran": len(merged.checks) - len(merged.check_gaps()),
        },
    )
    data["run"] = run
    data["merge"] = {
        "verdict": merged.verdict,
        "exit_status": merged.exit_status,
        "parts": [
            {
                "file": part.path,
                "group": _group_dict(part.group),
                "items_ran": part.items_ran,
                "tasks_ran": part.tasks_ran,
                "gate_items_ran": part.gate_ran,
                "failed": part.failed,
            }
            for part in merged.parts
        ],
        "gaps": [item.name for item in merged.gaps()] + [check.nodeid for check in merged.check_gaps()],
    }
    return data


def _accepted(merged: Merged, known_flips: Optional[str]) -> tuple[AcceptedFlips, ...]:
    """Who accepted which of the merged tasks' verdicts, the known-flips list with its path and SHA-256."""
    tasks = tuple(
        TaskSummary(item.name, "flipped", None, None, None, hook_verdict=item.hook_verdict, outcome=item.task_outcome)
        for item in merged.items
        if not item.gate and item.task_outcome is not None
    )
    return tuple(
        replace(accepted, path=known_flips, sha256=merged.known_flips_sha256)
        if accepted.source == "known_flips"
        else accepted
        for accepted in accepted_flips(tasks, None)
    )


def _group_dict(group: Optional[SplitGroup]) -> Optional[dict[str, Any]]:
    return {"engine": group.engine, "index": group.index, "count": group.count} if group is not None else None

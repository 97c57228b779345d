"""The parts of a split run joined into one verdict: pure functions of the parts' JSON summaries.

A run split over CI jobs (pytest-split groups, pytest-shard shards, `-k` selections) writes one
JSON summary file a part. Every part holds the whole file's classification, but only the items
it ran have an outcome there. :func:`merge_parts` checks that the parts read the same inputs (each
side's content digest) under the same deciding options, takes each item's outcome from the one
part that ran it, refuses an item two parts ran, and names the items no part ran. The verdict is
the gate's: `fail` when an item failed, `inconclusive` when nothing was compared or an item ran
nowhere, else `pass`; its exit status is the gate's for the same outcome (1, 2, 0).

The parts are the user's files, read as data: each value is checked for its type before use, and
what a report shows of them is escaped by the renderers (:mod:`.merge_reports`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Optional

from ..judging.completeness import Coverage, Limit
from ..judging.hook_verdict import Verdict
from ..model import TASK_OUTCOMES, Category, TaskOutcome
from ..statistics.margin import Equivalence
from .json_file import verdict_dict
from .summary import CheckRun, Counts, Decision, RunOutcome, SplitGroup, TaskSummary, decide

#: how many names a refusal or a list of gaps spells out before it counts the rest
NAMED = 5

PASS_EXIT, FAIL_EXIT = 0, 1


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
    category: Optional[str] = None
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


def _field(path: str, data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise MergeError(path, f"{what}: a --parity-json summary of a pytest run is needed")
    return value


def _part_of(path: str, data: Any) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The part's summary and its `run` section, checked for the fields a merge reads."""
    if not isinstance(data, dict):
        raise MergeError(path, "not a JSON object: a --parity-json summary is needed")
    run = data.get("run")
    if not isinstance(run, dict):
        raise MergeError(path, 'no "run" section: a summary of a pytest run is needed, not of the Python API')
    if run.get("part") is None:
        raise MergeError(path, "no item ran in this run (--collect-only, or written before parts were recorded)")
    _field(path, run, "part", dict, 'no "run.part"')
    for name in ("inputs", "options"):
        _field(path, run, name, dict, f'no "run.{name}"')
    _field(path, run, "gate", list, 'no "run.gate"')
    _field(path, data, "tasks", list, 'no "tasks"')
    _field(path, data, "counts", dict, 'no "counts"')
    return data, run


def _digests(path: str, run: Mapping[str, Any]) -> dict[str, str]:
    inputs = run["inputs"]
    digests = {side: inputs.get(side) for side in ("old", "new")}
    missing = [side for side, digest in digests.items() if not isinstance(digest, str)]
    if missing:
        raise MergeError(path, f"no content digest of the {' and '.join(missing)} side: a part must read its files")
    return {side: str(digest) for side, digest in digests.items()}


def _group(data: Any) -> Optional[SplitGroup]:
    if not isinstance(data, dict):
        return None
    engine, index, count = data.get("engine"), data.get("index"), data.get("count")
    if isinstance(engine, str) and isinstance(index, int) and isinstance(count, int):
        return SplitGroup(engine, index, count)
    return None


def _items(
    path: str, data: Mapping[str, Any], run: Mapping[str, Any]
) -> list[tuple[str, bool, Optional[str], dict[str, Any]]]:
    """(name, is a gate item, outcome here or None, the entry) of every item of the whole file."""
    items: list[tuple[str, bool, Optional[str], dict[str, Any]]] = []
    for entry in data["tasks"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("task"), str):
            raise MergeError(path, "a task entry without its label: not a --parity-json summary")
        items.append((entry["task"], False, _outcome(path, entry), entry))
    for entry in run["gate"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("item"), str):
            raise MergeError(path, "a gate item entry without its name: not a --parity-json summary")
        items.append((entry["item"], True, _outcome(path, entry), entry))
    return items


def _outcome(path: str, entry: Mapping[str, Any]) -> Optional[str]:
    ran, outcome = entry.get("ran_here"), entry.get("item_outcome")
    if ran is not True:
        return None
    if not isinstance(outcome, str):
        raise MergeError(path, "an item that ran here without its outcome: not a --parity-json summary")
    return outcome


def _hook_verdict(entry: Mapping[str, Any]) -> Optional[Verdict]:
    verdict = entry.get("hook_verdict")
    if isinstance(verdict, dict):
        return Verdict.read(verdict.get("outcome"), verdict.get("reason"), verdict.get("source"))
    return None


def _counts(path: str, data: Mapping[str, Any]) -> Counts:
    try:
        return Counts(**{name: int(value) for name, value in data["counts"].items()})
    except (TypeError, ValueError):
        raise MergeError(path, '"counts" is not the summary\'s: not a --parity-json summary') from None


def _equivalence(data: Any) -> Optional[Equivalence]:
    if not isinstance(data, dict):
        return None
    try:
        return Equivalence(
            margin=float(data["margin"]),
            lower_bound=data.get("lower_bound"),
            upper_bound=data.get("upper_bound"),
            passed=bool(data["passed"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def merge_parts(parts: Sequence[tuple[str, Any]]) -> Merged:
    """The one verdict of ``parts`` (each: its file as given, its JSON summary as parsed).

    Raises :class:`MergeError` when the parts read different inputs or ran under different options,
    when two parts ran one item, or when a file is not a part.
    """
    if not parts:
        raise MergeError("", "no part given: name each part's --parity-json file")
    checked = [(path, *_part_of(path, data)) for path, data in parts]
    first_path, first, first_run = checked[0]
    inputs = _digests(first_path, first_run)
    first_items = _items(first_path, first, first_run)
    names = [(name, gate) for name, gate, _, _ in first_items]
    ran_by: dict[tuple[str, bool], tuple[str, str]] = {}
    entries: dict[tuple[str, bool], dict[str, Any]] = {}
    overlaps: dict[tuple[str, bool], list[str]] = {}
    runs: list[PartRun] = []
    checks: dict[str, tuple[str, Optional[str]]] = {}
    check_parts: dict[str, str] = {}
    for path, data, run in checked:
        digests = _digests(path, run)
        for side in ("old", "new"):
            if digests[side] != inputs[side]:
                raise MergeError(
                    path,
                    f"read another {side} side than {first_path} ({digests[side]} against "
                    f"{inputs[side]}): parts of different runs?",
                )
        if run["options"] != first_run["options"]:
            differ = sorted(
                name
                for name in set(run["options"]) | set(first_run["options"])
                if run["options"].get(name) != first_run["options"].get(name)
            )
            raise MergeError(path, f"ran with other options than {first_path} ({', '.join(differ)})")
        items = _items(path, data, run)
        if [(name, gate) for name, gate, _, _ in items] != names:
            raise MergeError(path, f"holds other items than {first_path}: parts of different runs?")
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
        runs.append(PartRun(path, _group(part.get("group")), tasks + gates, tasks, gates, failed))
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
                category=entry.get("category") if isinstance(entry.get("category"), str) else None,
                hook_verdict=_hook_verdict(ran_entry) if path_outcome else None,
                evidence=ran_entry.get("evidence")
                if path_outcome and isinstance(ran_entry.get("evidence"), str)
                else None,
                task_outcome=None
                if gate
                else _task_outcome(
                    path_outcome[0] if path_outcome else first_path, ran_entry if path_outcome else None
                ),
            )
        )
    nothing = first.get("nothing_compared")
    nothing_compared = nothing if isinstance(nothing, str) else None
    failing = first.get("failing_flips")
    copies = first.get("copies")
    compared = first.get("compared")
    files = first.get("files")
    merged = Merged(
        verdict="",
        exit_status=0,
        decision=Decision("inconclusive", ()),
        counts=_counts(first_path, first),
        compared=compared if isinstance(compared, int) else 0,
        nothing_compared=nothing_compared,
        failing_flips=failing if isinstance(failing, int) else None,
        equivalence=_equivalence(first.get("aggregate")),
        copies=copies if isinstance(copies, str) else None,
        files=files if isinstance(files, dict) else {},
        inputs=inputs,
        parts=tuple(runs),
        items=tuple(merged_items),
        base=first,
        checks=tuple(CheckRun(nodeid, task, outcome) for nodeid, (task, outcome) in checks.items()),
        check_parts=check_parts,
    )
    options = first_run["options"]
    decision = _decision(merged, first, strict=options.get("strict") is True)
    # the plan is the whole file's (one figure set, whatever part carries it), shown when the verdict is inconclusive
    plans = [data.get("plan") for _, data, _ in checked if isinstance(data.get("plan"), dict)]
    plan = plans[0] if plans and decision.verdict == "inconclusive" else None
    return replace(merged, verdict=decision.verdict, exit_status=_exit_status(merged), decision=decision, plan=plan)


def _checks(path: str, run: Mapping[str, Any]) -> list[CheckRun]:
    """The team's checks a part collected or ran (`run.checks`; none in a part written before checks were recorded)."""
    found = []
    for entry in run.get("checks", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("nodeid"), str):
            raise MergeError(path, "a check entry without its node id: not a --parity-json summary")
        outcome = entry.get("outcome")
        found.append(CheckRun(entry["nodeid"], str(entry.get("task")), outcome if isinstance(outcome, str) else None))
    return found


def _task_outcome(path: str, entry: Optional[Mapping[str, Any]]) -> TaskOutcome:
    """A task's outcome in the part that ran it (``entry``); `not_run` when no part did."""
    if entry is None:
        return "not_run"
    outcome = entry.get("outcome")
    for known in TASK_OUTCOMES:
        if outcome == known and known != "not_run":
            return known
    raise MergeError(path, f"a task that ran here without its outcome ({outcome!r}): not a --parity-json summary")


def _coverage(data: Any) -> Optional[Coverage]:
    if not isinstance(data, dict):
        return None
    try:
        limits = [Limit(**data[name]) for name in ("max_missing", "max_masked")]
        return Coverage(
            int(data["old_tasks"]),
            int(data["missing"]),
            int(data["masked"]),
            limits[0],
            limits[1],
            bool(data["passed"]),
            str(data["message"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _decision(merged: Merged, first: Mapping[str, Any], *, strict: bool) -> Decision:
    """The gate's own verdict (:func:`.summary.decide`) over the merged outcomes."""
    tasks = tuple(
        TaskSummary(
            task=item.name,
            category=_category(item.category),
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
        coverage=_coverage(first.get("coverage")),
        copies=merged.copies,
        run=run,
        strict=strict,
        checks=merged.checks,
    )


_CATEGORIES: tuple[Category, ...] = ("identical", "flipped", "flipped_agent_error", "masked", "missing")


def _category(value: Optional[str]) -> Category:
    for known in _CATEGORIES:
        if value == known:
            return known
    return "identical"


def _exit_status(merged: Merged) -> int:
    """The gate's exit status for the merged items and checks: 1 when one failed or ran in no part, else 0."""
    if merged.failed() or merged.gaps() or merged.failed_checks() or merged.check_gaps():
        return FAIL_EXIT
    return PASS_EXIT


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


def _group_dict(group: Optional[SplitGroup]) -> Optional[dict[str, Any]]:
    return {"engine": group.engine, "index": group.index, "count": group.count} if group is not None else None

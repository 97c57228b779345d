"""The parts of a split run (pytest-split groups, shards, `-k` selections) joined into one verdict.

Each part's summary holds the whole file's classification and outcomes for the items it ran; the
merge is one run's summary, decided as the gate decides, so the run's own renderers show it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Optional

from ..identity.item_names import listed
from ..statistics.margin import FlipJudgement
from .json_file import json_dict
from .summary import (
    NAMED,
    CheckRun,
    GateItem,
    MergeRecord,
    Part,
    PartRun,
    RunOutcome,
    Summary,
    TaskSummary,
    decided,
    task_outcome,
)

PASS_EXIT, FAIL_EXIT = 0, 1


class MergeError(Exception):
    """The parts cannot be merged: ``path`` (a part as given, or empty) and what is wrong."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path = path
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path else self.reason


def _run_of(path: str, summary: Summary) -> RunOutcome:
    """The part's run: a pytest run that ran items, read its files and recorded its options."""
    run = summary.run
    if run is None:
        raise MergeError(path, 'no "run" section: a summary of a pytest run is needed, not of the Python API')
    if run.part is None:
        raise MergeError(path, "no item ran in this run (--collect-only, or written before parts were recorded)")
    missing = [side for side in ("old", "new") if run.inputs.get(side) is None]
    if missing:
        raise MergeError(path, f"no content digest of the {' and '.join(missing)} side: a part must read its files")
    if run.options is None:
        raise MergeError(path, "no recorded options: a part must record the settings that decide outcomes")
    return run


#: what a part's summary says of its own run only; every other key is the whole file's, and the parts must agree on it
RUN_KEYS = frozenset(
    ("verdict", "decided_by", "task_outcomes", "accepted_flips", "plan", "notes", "files", "run", "merge")
)
TASK_RUN_KEYS = frozenset(("outcome", "hook_verdict", "ran_here", "item_outcome", "evidence"))
#: what a part's `run` says of the whole file: the inputs, the deciding options, the known-flips list (and the gate items)
RUN_WHOLE_KEYS = ("inputs", "options", "known_flips")


def _whole_file(summary: Summary) -> dict[str, Any]:
    """The part's whole-file classification: its summary without what only its own run did."""
    data = json_dict(summary)
    whole: dict[str, Any] = {"run": {key: data["run"][key] for key in RUN_WHOLE_KEYS}}  # first: inputs tell runs apart
    whole["run"]["gate_items"] = [item["item"] for item in data["run"]["gate"]]
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


def _check_outcomes(path: str, summary: Summary, run: RunOutcome) -> None:
    """Refuse a part whose tasks claim other outcomes than the summary's rule gives them."""
    options = run.options
    assert options is not None  # _run_of
    listed = {task for task, _ in options.known_flips or ()}
    for task in summary.tasks:
        verdict = task.hook_verdict
        if (
            verdict is not None
            and verdict.source == "known_flips"
            and (task.category != "flipped" or task.task not in listed)
        ):
            raise MergeError(path, f"task {task.task!r} claims a known-flips verdict its recorded list does not give")
        # margin mode's judgement of a flip, as it was made (statistics.margin.judge_flip): a verifier
        # disagreement, or a BH-adjusted p-value below alpha, is a regression
        regression = bool(task.verifier_disagreements) or (
            task.adjusted_p is not None and task.adjusted_p < options.alpha
        )
        judgement = FlipJudgement(regression, "") if options.margin is not None else None
        expected = task_outcome(task, judgement, verdict, ran=bool(task.ran_here))
        if task.outcome != expected:
            raise MergeError(
                path,
                f"task {task.task!r} ({task.category}) claims the outcome {task.outcome!r}, "
                f"but its category and the recorded options give {expected!r}: an edited part?",
            )


def merge_parts(parts: Sequence[tuple[str, Summary]]) -> Summary:
    """The one verdict of ``parts`` (file as given, summary as read back): the first part's summary
    with each item's outcome from the part that ran it, decided anew. No part is trusted: they must
    hold the same whole-file classification, claim the outcomes the rule gives and run no item twice."""
    if not parts:
        raise MergeError("", "no part given: name each part's --parity-json file")
    runs = [_run_of(path, summary) for path, summary in parts]
    first_path, first = parts[0]
    whole = _whole_file(first)
    for path, summary in parts[1:]:
        differs = _difference(whole, _whole_file(summary))
        if differs:
            raise MergeError(
                "",
                f"{path} and {first_path} hold different classifications of the whole file (parts of different "
                f"runs or inputs, or an edited part): first at {differs}",
            )
    #: each item that ran, by (kind, name): the part that ran it and its entry there
    ran: dict[tuple[str, str], tuple[str, Any]] = {}
    overlaps: dict[str, list[str]] = {}
    records = []
    collected: dict[str, CheckRun] = {}  # every part's checks, each once, in collection order
    for (path, summary), run in zip(parts, runs):
        _check_outcomes(path, summary, run)
        tasks = [("task", task.task, task, task.item_outcome) for task in summary.tasks if task.ran_here]
        gates = [("gate", gate.item, gate, gate.item_outcome) for gate in run.gate if gate.ran_here]
        checks = [("check", check.nodeid, check, check.outcome) for check in run.checks if check.outcome is not None]
        for kind, name, entry, _ in tasks + gates + checks:
            if (kind, name) in ran:
                overlaps.setdefault(name, [ran[kind, name][0]]).append(path)
            else:
                ran[kind, name] = (path, entry)
        failed = sum(outcome == "failed" for *_, outcome in tasks + gates + checks)
        group = run.part.group if run.part is not None else None
        records.append(PartRun(path, Part.of(summary.tasks, run.gate, run.checks, group), failed))
        collected.update((check.nodeid, check) for check in run.checks if check.nodeid not in collected)
    if overlaps:
        twice = [f"{name!r} ({', '.join(paths[:-1])} and {paths[-1]})" for name, paths in overlaps.items()]
        raise MergeError(
            "",
            f"{len(twice)} item(s) ran in more than one part: {listed(twice, NAMED, '')}; "
            "each item must run in one part (overlapping selections?)",
        )
    run = runs[0]
    merged_tasks: tuple[TaskSummary, ...] = tuple(ran.get(("task", task.task), ("", task))[1] for task in first.tasks)
    gate: tuple[GateItem, ...] = tuple(ran.get(("gate", item.item), ("", item))[1] for item in run.gate)
    all_checks = tuple(ran.get(("check", nodeid), ("", check))[1] for nodeid, check in collected.items())
    items = [task.item_outcome for task in merged_tasks if task.ran_here]
    items += [item.item_outcome for item in gate if item.ran_here]
    merged_run = replace(
        run,
        selected=len(items),
        verdicts_changed_by_hook=sum(1 for task in merged_tasks if task.ran_here and task.hook_verdict is not None),
        outcomes=dict(Counter(outcome for outcome in items if outcome is not None)),
        part=Part.of(merged_tasks, gate, all_checks, None),
        gate=gate,
        checks=all_checks,
    )
    # the known-flips list's SHA-256 the parts record (every part that names one: the same)
    shas = [(path, a.sha256) for path, part in parts for a in part.accepted if a.source == "known_flips" and a.sha256]
    for path, sha in shas[1:]:
        if sha != shas[0][1]:
            raise MergeError(
                path, f"read another known-flips list than {shas[0][0]} (SHA-256 {sha} against {shas[0][1]})"
            )
    options = run.options
    assert options is not None  # _run_of
    summary = decided(
        replace(first, tasks=merged_tasks, run=merged_run),
        strict=options.strict,
        allow_copy=options.allow_copy,
        known_flips_sha256=shas[0][1] if shas else None,
    )
    # the plan is the whole file's (one figure set, whatever part carries it), shown when the verdict is inconclusive
    plans = [part.plan for _, part in parts if part.plan is not None]
    exit_status = PASS_EXIT if summary.verdict == "pass" else FAIL_EXIT
    gaps = [task.task for task in merged_tasks if not task.ran_here] + [item.item for item in gate if not item.ran_here]
    gaps += [check.nodeid for check in all_checks if check.outcome is None]
    record = MergeRecord(exit_status, tuple(records), tuple(gaps))
    return replace(summary, plan=plans[0] if plans and summary.verdict == "inconclusive" else None, merge=record)

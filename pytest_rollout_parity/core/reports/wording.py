"""The verdict in words, one wording for every report (terminal, Markdown, HTML, annotations).

Pure functions of the typed :class:`Summary`: the verdict line's words, a flip's direction from the
new side's view (`new regressed`: the old side won; `new improved`), the category table's rows, and
the verdicts a `pytest_parity_verdict` hook changed. Each renderer only marks them up.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import NamedTuple, Optional, Protocol, TypeVar

from ..judging.coverage_file import FIELDS
from ..model import Category, Side
from ..statistics.margin import Equivalence
from .summary import Counts, Decision, Part, Summary

#: Said in every verdict line of two sides that hold the same rows (the full note is among the notes).
COPY_WORDS = "both files hold the same rows: was the new server run?"
REGRESSED = "new regressed"  # a flip the old side wins
IMPROVED = "new improved"  # a flip the new side wins


def plural(count: int, noun: str) -> str:
    """`1 task`, `2 tasks`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def direction(winner: Optional[Side]) -> str:
    """A flip in words, from the new side's view: the migration is what is under test."""
    if winner == "old":
        return REGRESSED
    if winner == "new":
        return IMPROVED
    return "rewards differ"


def disagreement_words(tasks: int) -> str:
    """`2 verifier disagreements`: flips of the same trajectories, scored differently by the two verifiers."""
    return f"{plural(tasks, 'verifier disagreement')}: the same trajectories scored differently"


def rows_note(old: tuple[int, int], new: tuple[int, int]) -> Optional[str]:
    """`means of 1 vs 200 rows` when a side has repeats (`180 of 200` when some are not counted).

    Each side is (rows with a counted reward, rows).
    """
    if old[1] <= 1 and new[1] <= 1:
        return None
    counts = [str(rows) if counted == rows else f"{counted} of {rows}" for counted, rows in (old, new)]
    return f"means of {counts[0]} vs {counts[1]} rows"


def _reward(reward: Optional[float]) -> str:
    return repr(round(reward, 4)) if reward is not None else "none"


def flip_line(winner: Optional[Side], old: Optional[float], new: Optional[float], extra: Optional[str] = None) -> str:
    """`new regressed: old=1.0 new=0.0 (<extra>)`: a flip in one line, the crash line of its item.

    The direction leads: pytest cuts the short summary line at the terminal's width. The task is
    not named (the node id, the annotation's title, the report's label name it). ``extra`` is the
    task's noise figures or the row counts of a mean.
    """
    line = f"{direction(winner)}: old={_reward(old)} new={_reward(new)}"
    return f"{line} ({extra})" if extra else line


class Headline(Protocol):
    """What the verdict's words are made of: the whole file's counts and decisions (a :class:`Summary`,
    or the merged parts of a split run)."""

    @property
    def counts(self) -> Counts: ...
    @property
    def compared(self) -> int: ...
    @property
    def nothing_compared(self) -> Optional[str]: ...
    @property
    def failing_flips(self) -> Optional[int]: ...
    @property
    def equivalence(self) -> Optional[Equivalence]: ...
    @property
    def copies(self) -> Optional[str]: ...
    @property
    def verdict(self) -> str: ...
    @property
    def decision(self) -> Decision: ...


def verdict_words(summary: Summary, quote: Callable[[str], str] = lambda text: text) -> str:
    """What regressed, improved, needs a rerun, was not compared; each renderer puts its head before it.

    `regressed` and `improved` are the new side's view; counts that are zero are left out, and a run
    with no difference says so in as many words.
    """
    return headline_words(summary) + _models_words(summary, quote) + _narrowed(summary)


def _models_words(summary: Summary, quote: Callable[[str], str]) -> str:
    """`; different models: old a, new b ...`: a run of two models says nothing of the server alone.
    The names come from the rows: ``quote`` marks them up for where the line goes."""
    old, new = summary.models
    if not old:
        return ""
    return (
        f"; different models: old {quote(old)}, new {quote(new)} "
        "(the run compares the models too, not the server alone)"
    )


def headline_words(summary: Headline) -> str:
    """:func:`verdict_words` of the whole file's counts and decisions alone (no run's selection)."""
    counts = summary.counts
    if summary.nothing_compared is not None:
        return (
            f"nothing compared in {plural(counts.tasks, 'task')} "
            f"({counts.masked} masked, {counts.missing} missing; see below)"
        )
    differs = counts.flipped or counts.flipped_agent_error or counts.masked or counts.missing
    if not differs:
        # "no difference" only when the run passes: an item that failed is never called no difference
        what = "no difference" if summary.verdict == "pass" else "no flip"
        words = f"{what} in {plural(summary.compared, 'compared task')}"
    else:
        parts = [f"{plural(counts.flipped_old_win, 'task')} regressed", f"{counts.flipped_new_win} improved"]
        disagree = counts.verifier_disagreements
        if disagree:
            parts[-1] += f" ({disagreement_words(disagree)})"
        if summary.failing_flips is not None and counts.flipped:
            # margin mode: what decides leads, the flips that fail; the rest are the breakdown
            failing = summary.failing_flips
            lead = "no flip fails" if not failing else f"{plural(failing, 'flip')} fail" + ("s" if failing == 1 else "")
            parts = [
                f"{lead} ({disagreement_words(disagree) + '; ' if disagree else ''}{counts.flipped_old_win} regressed, "
                f"{counts.flipped_new_win} improved; {counts.flipped - failing} within noise)"
            ]
        if counts.flipped_agent_error:
            parts.append(f"{plural(counts.flipped_agent_error, 'rerun candidate')} (agent errors)")
        if counts.masked:
            parts.append(f"{counts.masked} masked")
        if counts.missing:
            parts.append(f"{counts.missing} missing")
        words = ", ".join(parts) + f"; {counts.identical} identical"
    decision = summary.equivalence
    if decision is not None and decision.lower_bound is not None:
        shown = "within" if decision.passed else "NOT shown within"
        words += f"; mean difference {shown} the margin {decision.margin:g}"
    if summary.copies is not None:
        words += f"; {COPY_WORDS}"
    words += "".join(f"; {decider.text}" for decider in summary.decision.decided_by if decider.code in SAID_BY_CODE)
    return words


#: how many hex digits of a known-flips list's SHA-256 a verdict line shows (the JSON holds all 64)
DIGEST_SHOWN = 12


def accepted_words(summary: Summary, quote: Callable[[str], str] = lambda text: text) -> str:
    """`; 3 flips accepted by known_flips.txt (sha256 1a2b3c4d5e6f…)`: who accepted verdicts instead of
    the data, appended to each verdict line ("" when nobody did). ``quote`` marks up the list's path."""
    parts = []
    for accepted in summary.accepted:
        if accepted.source == "known_flips":
            digest = f" (sha256 {accepted.sha256[:DIGEST_SHOWN]}…)" if accepted.sha256 else ""
            parts.append(
                f"{plural(accepted.count, 'flip')} accepted by {quote(accepted.path or 'the known-flips list')}{digest}"
            )
        else:
            parts.append(f"{plural(accepted.count, 'verdict')} accepted by pytest_parity_verdict hooks")
    return "".join(f"; {part}" for part in parts)


#: what decided a verdict that the counts do not already say: its words join the verdict line
SAID_BY_CODE = ("checks_failed", "evidence", "strict_uncompared", "item_failed")


def verdict_head(summary: Summary) -> str:
    """`PASS`, `FAIL` or `INCONCLUSIVE`: the run's verdict, as every report's verdict line opens."""
    return summary.verdict.upper()


def _narrowed(summary: Summary) -> str:
    """For a run that collected its items only: the counts are the whole file's, and none ran."""
    run = summary.run
    if run is None or not run.collect_only:
        return ""
    return f"; counts of the whole file ({plural(summary.counts.tasks, 'task')}): collected only, no item ran"


def part_of(summary: Summary) -> Optional[Part]:
    """The part of the whole file this run ran, when it ran fewer items than the file has; else None."""
    run = summary.run
    part = run.part if run is not None else None
    return part if part is not None and part.partial else None


def part_words(part: Part) -> str:
    """`tasks 28 of 90; gate items 1 of 2; pytest-split group 3 of 4`: what of the whole file ran here.

    Tasks and gate-level items are counted apart: a task count never holds a gate item.
    """
    words = f"tasks {part.tasks_ran} of {part.tasks}"
    if part.gate_items:
        words += f"; gate items {len(part.gate_ran)} of {len(part.gate_items)}"
    if part.group is not None:
        words += f"; {part.group.engine} group {part.group.index} of {part.group.count}"
    return words


def _failed(count: int) -> str:
    return f"{count} failed" if count else "none failed"


def part_outcome(summary: Summary, part: Part) -> str:
    """This run's own outcome, first: `11 of 14 items ran here, none failed` (and the team's checks
    that ran here: `; your checks: 4 of 8 ran here, 1 failed`), never the whole file's verdict."""
    failed = dict(summary.run.outcomes).get("failed", 0) if summary.run is not None else 0
    words = f"{part.items_ran} of {plural(part.items, 'item')} ran here, {_failed(failed)}"
    if part.checks:
        failed_checks = sum(1 for check in summary.checks if check.outcome == "failed")
        words += f"; your checks: {part.checks_ran} of {part.checks} ran here, {_failed(failed_checks)}"
    return words


def partial_words(summary: Summary, part: Part, quote: Callable[[str], str] = lambda text: text) -> str:
    """What a part says after its own outcome: what it ran, then the whole file's verdict and words,
    as the file's (only the merged parts decide it)."""
    return (
        f"{part_words(part)}; the whole file: {verdict_head(summary)} (merge the parts for its verdict): "
        f"{verdict_words(summary, quote)}"
    )


def category_rows(summary: Headline) -> list[tuple[str, int, str]]:
    """The category table: (category, tasks, breakdown), the flips broken down by direction."""
    counts = summary.counts
    return [
        ("identical", counts.identical, ""),
        ("flipped", counts.flipped, _flip_breakdown(counts)),
        ("flipped_agent_error", counts.flipped_agent_error, "rerun candidates"),
        ("masked", counts.masked, f"old side {counts.masked_old}, new side {counts.masked_new}"),
        ("missing", counts.missing, f"old only {counts.missing_old_only}, new only {counts.missing_new_only}"),
        ("tasks", counts.tasks, ""),
    ]


def _flip_breakdown(counts: Counts) -> str:
    """`new regressed 1, new improved 1` and, for a re-verification, its verifier disagreements."""
    text = f"{REGRESSED} {counts.flipped_old_win}, {IMPROVED} {counts.flipped_new_win}"
    if counts.verifier_disagreements:
        text += f"; {plural(counts.verifier_disagreements, 'verifier disagreement')}"
    return text


class HookChange(NamedTuple):
    """A verdict a hook changed: the task, its category, the outcome it was given, the reason's first line."""

    task: str
    category: str
    outcome: str
    reason: str


def hook_changes(summary: Summary) -> tuple[int, list[HookChange]]:
    """How many verdicts hooks changed, and those the summary holds per task, in task order.

    The count is at least the run's own, which it keeps even where a task's entry is not at hand.
    """
    changes = [
        HookChange(task.task, task.category, verdict.outcome, verdict.text.split("\n", 1)[0] or "(no reason given)")
        for task in summary.tasks
        if (verdict := task.hook_verdict) is not None
    ]
    run = summary.run
    return max(len(changes), run.verdicts_changed_by_hook if run is not None else 0), changes


def hook_heading(summary: Summary, count: int) -> str:
    """The line that opens the list of changed verdicts (by hooks, and by a known-flips list when given)."""
    if summary.run is not None and summary.run.known_flips is not None:
        return f"pytest_parity_verdict hooks and the known-flips list changed {count} verdict(s)"
    return f"pytest_parity_verdict hooks changed {count} verdict(s)"


def coverage_line(summary: Summary, side: Side) -> Optional[str]:
    """The side's own inventory beside what the gate scored: `new coverage (<file>): expected 20, ...`."""
    inventory = summary.inventory.side(side) if summary.inventory is not None else None
    if inventory is None:
        return None
    counts = ", ".join(f"{name} {inventory.counts[name]}" for name in FIELDS)
    return f"{side} coverage ({', '.join(inventory.files)}): {counts}; the gate scored {plural(inventory.gate_measured, 'row')}"


def side_line(summary: Summary, side: Side) -> str:
    """`old: <file> (+ sidecar <name>): 12 tasks, 14 rows (1 masked), key <field> (<why>); model <m>,
    temperature <t>, ..., 4 rollout(s) a task`: a side's facts."""
    files = summary.files
    line = f"{side}: {files.file(side) if files else side}"
    sidecar = files.sidecar(side) if files else None
    if files and files.shards(side) > 1:
        line += f" ({files.shards(side)} shards, {plural(files.sidecars(side), 'sidecar')})"
    elif sidecar:
        line += f" (+ sidecar {os.path.basename(sidecar)})"
    rows = summary.rows
    line += (
        f": {plural(summary.side_tasks(side), 'task')}, {plural(rows.total(side), 'row')} "
        f"({rows.masked(side)} masked), key {summary.join.key(side)}"
    )
    reason = summary.join.key_reason(side)
    if reason:
        line += f" ({reason})"
    prefix = summary.join.prefix_stripped(side)
    if prefix:
        line += f", prefix '{prefix}' stripped"
    conditions = summary.conditions[0 if side == "old" else 1]
    if conditions:
        line += f"; {conditions}"
    return line


T = TypeVar("T")


def capped(items: Sequence[T], cap: int, render: Callable[[T], str], more: str) -> list[str]:
    """The first ``cap`` items, each rendered, then ``more`` (``{}``: how many were left out) when
    there are more; only the items shown are rendered."""
    lines = [render(item) for item in items[:cap]]
    if len(items) > cap:
        lines.append(more.format(len(items) - cap))
    return lines


def uncompared(summary: Summary, category: Category) -> list[tuple[str, str]]:
    """Each masked or missing task with why it was not compared (its side and reason), in task order."""
    reasons: list[tuple[str, str]] = []
    for task in summary.tasks:
        if task.category != category:
            continue
        if category == "missing":
            reasons.append((task.task, f"only in the {'old' if task.new is None else 'new'} file"))
            continue
        masked = [
            f"{name} side: {side.masked}"
            for name in ("old", "new")
            if (side := task.side(name)) is not None and side.masked
        ]
        reasons.append((task.task, "; ".join(masked)))
    return reasons

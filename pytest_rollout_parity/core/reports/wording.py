"""The verdict in words, built once and unescaped for every report (terminal, Markdown, HTML,
annotations), so no two disagree; each renderer escapes it for where it goes and marks it up.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Optional, TypeVar

from ..judging.companions import FIELDS
from ..model import Side, per_side
from ..statistics.margin import left_out_text
from ..statistics.paired import format_p
from .summary import SideFile, Summary, TaskSummary

REGRESSED = "new regressed"  # a flip the old side wins
IMPROVED = "new improved"  # a flip the new side wins
#: how many hex digits of a known-flips list's SHA-256 a verdict line shows (the JSON holds all 64)
DIGEST_SHOWN = 12
#: what decided a verdict that the counts do not already say: its words join the verdict line
SAID_BY_CODE = ("checks_failed", "evidence", "strict_uncompared", "item_failed")
SIDES: tuple[Side, Side] = ("old", "new")
#: a flip in words by its winner (None: disagreements that cancel), from the new side's view: it is under test
DIRECTION: dict[Optional[Side], str] = {"old": REGRESSED, "new": IMPROVED, None: "verifiers disagree"}


def plural(count: int, noun: str) -> str:
    """`1 task`, `2 tasks`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def flip_line(task: TaskSummary, noise: Optional[str] = None) -> str:
    """`new regressed: old=0.75 new=0.5 (verifier disagreement on 1 of 4 rollouts)`: a flip's crash
    line, Markdown line and GitHub annotation. The direction leads, as pytest cuts the short summary
    line at the terminal's width; the task is not named (the node id or the title names it). In
    brackets: a verifier disagreement, else ``noise`` (the task's p-value), else the means' rows."""
    old, new = task.old, task.new
    if task.verifier_disagreements and old is not None:
        noise = f"verifier disagreement on {task.verifier_disagreements} of {old.reward_rows} rollouts"
    if noise is None and old is not None and new is not None and (old.rows > 1 or new.rows > 1):
        counts = [str(s.rows) if s.reward_rows == s.rows else f"{s.reward_rows} of {s.rows}" for s in (old, new)]
        noise = f"means of {counts[0]} vs {counts[1]} rows"
    rewards = [repr(round(s.reward, 4)) if s is not None and s.reward is not None else "none" for s in (old, new)]
    line = f"{DIRECTION[task.winner]}: old={rewards[0]} new={rewards[1]}"
    return f"{line} ({noise})" if noise else line


def verdict_words(summary: Summary, quote: Callable[[str], str] = str) -> str:
    """What regressed, improved, needs a rerun, was not compared (zero counts left out); each renderer
    puts its head before it. Two models say nothing of the server alone, and a run that only collected
    its items ran none: both are said. ``quote`` marks up the model names (from the rows)."""
    counts = summary.counts
    if summary.nothing_compared is not None:
        return (
            f"nothing compared in {plural(counts.tasks, 'task')} "
            f"({counts.masked} masked, {counts.missing} missing; see below)"
        )
    if not (counts.flipped or counts.flipped_agent_error or counts.masked or counts.missing):
        # "no difference" only when the run passes: an item that failed is never called no difference
        what = "no difference" if summary.verdict == "pass" else "no flip"
        words = f"{what} in {plural(summary.compared, 'compared task')}"
    else:
        parts = [f"{plural(counts.flipped_old_win, 'task')} regressed", f"{counts.flipped_new_win} improved"]
        disagree = counts.verifier_disagreements
        disagreed = f"{plural(disagree, 'verifier disagreement')}: the same trajectories scored differently"
        if disagree:
            parts[-1] += f" ({disagreed})"
        if summary.failing_flips is not None and counts.flipped:
            # margin mode: what decides leads, the flips that fail; the rest are the breakdown
            failing = summary.failing_flips
            lead = "no flip fails" if not failing else f"{plural(failing, 'flip')} fail" + ("s" if failing == 1 else "")
            parts = [
                f"{lead} ({disagreed + '; ' if disagree else ''}{counts.flipped_old_win} regressed, "
                f"{counts.flipped_new_win} improved; {counts.flipped - failing} within noise)"
            ]
        if counts.flipped_agent_error:
            parts.append(f"{plural(counts.flipped_agent_error, 'rerun candidate')} (agent errors)")
        parts += [f"{counts.masked} masked"] if counts.masked else []
        parts += [f"{counts.missing} missing"] if counts.missing else []
        words = ", ".join(parts) + f"; {counts.identical} identical"
    decision = summary.equivalence
    if decision is not None and decision.lower_bound is not None:
        shown = "within" if decision.passed else "NOT shown within"
        words += f"; mean difference {shown} the margin {decision.margin:g}"
    if summary.copies is not None:
        words += "; both files hold the same rows: was the new server run?"  # the full note is among the notes
    words += "".join(f"; {by.text}" for by in summary.decided_by if by.code in SAID_BY_CODE)
    old, new = summary.models.old, summary.models.new
    if old:
        words += f"; different models: old {quote(old)}, new {quote(new)} "
        words += "(the run compares the models too, not the server alone)"
    if summary.run is not None and summary.run.collect_only:
        words += f"; counts of the whole file ({plural(summary.counts.tasks, 'task')}): collected only, no item ran"
    return words


def verdict(summary: Summary, exit_status: Optional[int] = None, quote: Callable[[str], str] = str) -> tuple[str, str]:
    """The verdict's head (`PASS`) and the rest: :func:`verdict_words`, then who accepted verdicts
    instead of the data. A part of the file (a selection, a splitter group) never gives the file's
    verdict as its own, only the merged parts decide it: its head is its own outcome (`partial: 31 of
    92 items ran here, 2 failed`), then what of the file ran, and the file's verdict as the file's."""
    run = summary.run
    part = run.part if run is not None and summary.merge is None else None  # a merge speaks for the whole file
    rest = verdict_words(summary, quote)
    for accepted in summary.accepted:  # `; 3 flips accepted by known_flips.txt (sha256 1a2b3c4d5e6f…)`
        if accepted.source == "known_flips":
            digest = f" (sha256 {accepted.sha256[:DIGEST_SHOWN]}…)" if accepted.sha256 else ""
            by = quote(accepted.path or "the known-flips list")
            rest += f"; {plural(accepted.count, 'flip')} accepted by {by}{digest}"
        else:
            rest += f"; {plural(accepted.count, 'verdict')} accepted by pytest_parity_verdict hooks"
    if run is not None and part is not None and part.partial:
        failed = run.outcomes.get("failed", 0)
        head = f"partial: {part.items_ran} of {plural(part.items, 'item')} ran here, {failed or 'none'} failed"
        if part.checks:
            failed = len(summary.failed_checks)
            head += f"; your checks: {part.checks_ran} of {part.checks} ran here, {failed or 'none'} failed"
        ran = f"tasks {part.tasks_ran} of {part.tasks}"
        if part.items > part.tasks:
            ran += f"; gate items {len(part.gate_items_ran)} of {part.items - part.tasks}"
        if part.group is not None:
            ran += f"; {part.group}"
        rest = f"{ran}; the whole file: {summary.verdict.upper()} (merge the parts for its verdict): {rest}"
    else:
        head = summary.verdict.upper()
    return head, rest + (f" (exit status {exit_status})" if exit_status is not None else "")


def category_rows(summary: Summary) -> list[tuple[str, int, str]]:
    """The category table: (category, tasks, breakdown), the flips broken down by direction."""
    counts = summary.counts
    flips = f"{REGRESSED} {counts.flipped_old_win}, {IMPROVED} {counts.flipped_new_win}"
    if counts.verifier_disagreements:
        flips += f"; {plural(counts.verifier_disagreements, 'verifier disagreement')}"
    return [
        ("identical", counts.identical, ""),
        ("flipped", counts.flipped, flips),
        ("flipped_agent_error", counts.flipped_agent_error, "rerun candidates"),
        ("masked", counts.masked, f"old side {counts.masked_old}, new side {counts.masked_new}"),
        ("missing", counts.missing, f"old only {counts.missing_old_only}, new only {counts.missing_new_only}"),
        ("tasks", counts.tasks, ""),
    ]


def side_lines(summary: Summary) -> list[str]:
    """Each side's facts (`old: <file>: 12 tasks, 14 rows (1 masked), key <field> (<why>); model <m>`),
    then each side's own inventory beside what the gate scored."""
    files = summary.files
    lines = []
    for side in SIDES:
        shown = files.side(side) if files else SideFile(side)
        line = f"{side}: {shown.file}"
        if shown.shards > 1:
            line += f" ({shown.shards} shards, {plural(shown.sidecars, 'sidecar')})"
        elif shown.sidecar:
            line += f" (+ sidecar {os.path.basename(shown.sidecar)})"
        join, rows = summary.join, summary.rows
        total, masked, key, reason, prefix = per_side(
            side,
            (rows.old, rows.old_masked, join.old_key, join.old_key_reason, join.old_prefix_stripped),
            (rows.new, rows.new_masked, join.new_key, join.new_key_reason, join.new_prefix_stripped),
        )
        tasks = sum(1 for task in summary.tasks if task.side(side) is not None)
        line += f": {plural(tasks, 'task')}, {plural(total, 'row')} ({masked} masked), key {key}"
        line += f" ({reason})" if reason else ""
        line += f", prefix '{prefix}' stripped" if prefix else ""
        conditions = summary.conditions.side(side)
        lines.append(line + (f"; {conditions}" if conditions else ""))
    for side in SIDES:
        inventory = summary.inventory.side(side) if summary.inventory is not None else None
        if inventory is not None:
            counts = ", ".join(f"{name} {inventory.counts[name]}" for name in FIELDS)
            scored = plural(inventory.gate_measured, "row")
            lines.append(f"{side} coverage ({', '.join(inventory.files)}): {counts}; the gate scored {scored}")
    return lines


T = TypeVar("T")
#: what a list says in place of the entries past its cap (the JSON file holds them all)
MORE = "... and {} more (see --parity-json)"


def capped(items: Sequence[T], cap: int, render: Callable[[T], str], more: str = MORE) -> list[str]:
    """The one cut of every report's lists: the first ``cap`` items, each rendered, then ``more``
    (``{}``: how many were left out) when there are more; only the items shown are rendered."""
    lines = [render(item) for item in items[:cap]]
    if len(items) > cap:
        lines.append(more.format(len(items) - cap))
    return lines


def why_uncompared(task: TaskSummary) -> str:
    """Why a masked or missing task was not compared: its item's expected-failure reason and its
    entry in every report's list (docs/semantics.md, "Categories")."""
    if task.category == "missing":
        return f"only in the {'old' if task.new is None else 'new'} file"
    masked = [(name, side.masked) for name in SIDES if (side := task.side(name)) is not None and side.masked]
    return "; ".join(f"{name} side masked: {reason}" for name, reason in masked)


#: a list every report shows: its heading and entries, each a name from the data (a task label or a
#: node id, shown as code; "" for a note) and its words; each renderer caps, escapes and marks it up
Listing = tuple[str, list[tuple[str, str]]]


def listings(summary: Summary) -> list[Listing]:
    """Every report's lists, in order: masked and missing tasks with why, the verdicts hooks (or a
    known-flips list) changed, the team's failed checks, a merge's parts and the items no part ran,
    the notes. An empty list is left out but for the changed verdicts: the run's own count stands
    alone where the summary holds no task's entry."""
    found = [
        (f"{category} ({len(tasks)})", [(task.task, f": {why_uncompared(task)}") for task in tasks])
        for category in ("masked", "missing")
        if (tasks := [task for task in summary.tasks if task.category == category])
    ]
    changes = []
    for task in summary.tasks:
        if (verdict := task.hook_verdict) is not None:
            reason = verdict.text.split("\n", 1)[0] or "(no reason given)"
            changes.append((task.task, f" ({task.category}): {verdict.outcome}: {reason}"))
    run = summary.run
    if count := max(len(changes), run.verdicts_changed_by_hook if run is not None else 0):
        by = " and the known-flips list" if run is not None and run.known_flips is not None else ""
        found.append((f"pytest_parity_verdict hooks{by} changed {count} verdict(s)", changes))
    if checks := summary.failed_checks:
        found.append((f"your checks failed ({len(checks)})", [(nodeid, "") for nodeid in checks]))
    if (merge := summary.merge) is not None:
        ran, failed = sum(part.ran.items_ran for part in merge.parts), sum(part.failed for part in merge.parts)
        parts = [
            (
                part.file,
                f" ({part.ran.group or 'no group'}): {part.ran.items_ran} item(s) (tasks {part.ran.tasks_ran}, "
                f"gate items {len(part.ran.gate_items_ran)}), {part.failed} failed",
            )
            for part in merge.parts
        ]
        found.append((f"{len(merge.parts)} part(s) merged: {ran} item(s) ran, {failed} failed", parts))
        if merge.gaps:
            found.append((f"ran in no part ({len(merge.gaps)})", [(gap, "") for gap in merge.gaps]))
    if summary.notes:
        found.append((f"notes ({len(summary.notes)})", [("", note) for note in summary.notes]))
    return found


#: the rows the terminal shows on one line, `old mean 0.5833, new mean 0.5208, ...`
FIGURES = ("old mean", "new mean", "delta", "95% CI", "standard error")
LEFT_OUT = "left out"
AGGREGATE = "aggregate at margin"


def paired_heading(summary: Summary) -> str:
    return f"paired over {plural(summary.paired.n, 'compared task')} (d = new - old of the task means)"


def paired_rows(summary: Summary) -> list[tuple[str, str]]:
    """(label, value) of each figure: the means and the interval, the sign test, the table, per-task
    noise, what is left out and the equivalence decision."""
    paired, equivalence, flip_tests = summary.paired, summary.equivalence, summary.flip_tests
    rows: list[tuple[str, str]] = []
    means = (paired.old_mean, paired.new_mean, paired.delta)
    if paired.absent or paired.ci95 is None or None in means:
        rows.append(("figures absent", str(paired.absent)))
    else:
        rows += [(label, f"{value:.4f}") for label, value in zip(FIGURES, means)]
        rows.append(("95% CI", f"[{paired.ci95[0]:.4f}, {paired.ci95[1]:.4f}]"))
        if paired.clustered_by and paired.df is not None:
            clustered = f"clustered by {paired.clustered_by} (CR2, {paired.df:.1f} degrees of freedom)"
            rows.append(("standard error", clustered))
    sign, table = paired.sign_test, paired.table
    if sign is not None:
        rows.append(("sign test", f"{sign.better} better, {sign.worse} worse, p = {format_p(sign.p)}"))
    if table is not None:
        both = f"both pass {table.both_pass}, old only {table.old_only}, new only {table.new_only}, "
        rows.append(("old x new pass/fail", f"{both}both fail {table.both_fail}"))
    tested = sum(1 for task in summary.tasks if task.p_value is not None)  # a flip's, with 2+ rows a side
    if tested:
        noise = f"{tested} flipped task(s) with 2+ rows a side tested (p_value in --parity-json)"
        rows.append(("per-task noise", noise))
    if flip_tests is not None and flip_tests.tests:
        counted = f"{flip_tests.counted} of {flip_tests.tests} task(s) with 2+ rows a side can reach alpha "
        rows.append(("per-task tests", f"{counted}{flip_tests.alpha:g} and are counted in the BH correction"))
    if paired.left_out.old or paired.left_out.new:
        rows.append((LEFT_OUT, left_out_text(paired.left_out)))
    if equivalence is not None:
        margin = f"{equivalence.margin:g}"
        low, high = equivalence.lower_bound, equivalence.upper_bound
        if low is None or high is None:
            decided = f"FAILED, no decision: {paired.absent}"
        else:
            verdict = "PASSED (equivalent)" if equivalence.passed else "FAILED (not shown equivalent)"
            decided = f"{verdict}: one-sided 95% bounds [{low:.4f}, {high:.4f}] against [-{margin}, +{margin}]"
        rows.append((f"{AGGREGATE} ±{margin}", decided))
    return rows


def paired_lines(summary: Summary) -> list[str]:
    """The rows as lines: the heading, the figures on one line, each other row `label: value` (what is
    left out unlabelled, the margin's decision unindented)."""
    rows = paired_rows(summary)
    figures = [f"{label} {value}" for label, value in rows if label in FIGURES]
    lines = [f"{paired_heading(summary)}:", *(["    " + ", ".join(figures)] if figures else [])]
    for label, value in rows:
        if label == LEFT_OUT:
            lines.append(f"    {value}")
        elif label.startswith(AGGREGATE):
            lines.append(f"{label}: {value}")
        elif label not in FIGURES:
            lines.append(f"    {label}: {value}")
    return lines

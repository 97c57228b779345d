"""What a task's item shows: the flip message and why a task is not counted (docs/semantics.md,
"Categories"); the reasons do not repeat the task, as the node id names it. Text from the rows is
shown with its controls escaped, so each stays on its line. The verifier output is looked up only
when the message is built, i.e. only for a flip item that runs and fails.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

from ..escaping import visible
from ..judging.classify import first_disagreement
from ..judging.row_context import EVIDENCE_LINES, last_assistant_message, prompt_excerpt, row_evidence
from ..judging.verifier_output import NO_OUTPUT, LogRoots, scored_row, verifier_output
from ..model import Side, TaskComparison, per_side
from ..statistics.margin import FlipJudgement, disagreement_text
from .summary import task_summary
from .wording import flip_line, why_uncompared


def header_line(comparison: TaskComparison, noise: Optional[str] = None) -> str:
    """A flip's headline: its task and crash line (:func:`.flip_line`), from the comparison's sides as
    the summary holds them."""
    return f"{visible(comparison.task)}: {flip_line(task_summary(comparison), noise)}"


@dataclass(frozen=True)
class FlipEvidence:
    """A flip's message, and ``no_output`` when its losing row carries no verifier output at all
    (the report says so once for the run; the message shows the rows' last assistant messages)."""

    text: str
    no_output: bool = False


def flip_evidence(
    comparison: TaskComparison,
    tail: int,
    roots: LogRoots,
    noise: Optional[str] = None,
    judgement: Optional[FlipJudgement] = None,
    excerpt: bool = False,
) -> FlipEvidence:
    """The whole flip message: its header, the prompt's start (``excerpt``: the task is keyed on its
    index or prompt), why it failed, then the loser's verifier output tail, or without one the rows'
    evidence and last assistant messages (the disagreeing rollout's, for a verifier disagreement)."""
    lines = [header_line(comparison, noise)]
    if excerpt and (prompt := task_prompt(comparison)) is not None:
        lines.append(f"    prompt: {visible(prompt)}")
    if judgement is not None and judgement.regression:
        lines.append(f"    {judgement.text}")
    elif comparison.disagreements:
        lines.append(f"    {disagreement_text(comparison.disagreements)}")
    sides = (("old", comparison.old), ("new", comparison.new))
    lines.extend(
        f"    {name} agent error: {visible(side.agent_error)}" for name, side in sides if side and side.agent_error
    )
    lines.extend(
        f"    {name} scored with failure_kind={visible(side.failure_kind)} (not masked)"
        for name, side in sides
        if side and side.failure_kind
    )
    pair = first_disagreement(comparison)
    loser = comparison.loser if pair is None else pair.loser  # disagreements that cancel: no task loser
    loser_side = comparison.side(loser) if loser else None
    if tail <= 0 or loser is None or loser_side is None:
        return FlipEvidence("\n".join(lines))
    winner: Side = "new" if loser == "old" else "old"
    winner_side = comparison.side(winner)
    if pair is not None:
        where = f" (_ng_rollout_index {pair.rollout})" if pair.rollout is not None else ""
        lines.append(f"    the same trajectory{where} scored by each side's verifier, the losing side first:")
    row = loser_side.read_row(scored_row(loser_side) if pair is None else per_side(loser, pair.old, pair.new))
    output = verifier_output(row, roots.for_side(loser), tail)
    no_output = output.lines is None and output.source == f"unavailable: {NO_OUTPUT}"
    if output.lines is not None:
        lines.append(f"    {loser} verifier output (last {tail} lines of {visible(output.source)}):")
        lines.extend(_quoted(output.lines))
    else:
        lines.extend([] if no_output else [f"    {loser} verifier output {visible(output.source)}"])
        lines.extend(_evidence_block(loser, "losing", row, tail))
    if pair is not None and winner_side is not None:
        lines.extend(
            _evidence_block(winner, "winning", winner_side.read_row(per_side(winner, pair.old, pair.new)), tail)
        )
    if output.lines is None:
        # the rows' last assistant messages, the loser's first (a row without one is left out); a
        # verifier disagreement is one trajectory on both sides: the loser's alone
        shown = [(loser, "losing", row)]
        if pair is None and winner_side is not None and winner_side.facts:
            shown.append((winner, "winning", winner_side.read_row(scored_row(winner_side, highest=True))))
        same = " (the same trajectory on both sides)" if pair is not None else ""
        for name, role, at in shown:
            if (message := last_assistant_message(at)) is not None:
                lines.append(f"    {name} ({role}) row's last assistant message{same}:")
                lines.extend(_quoted(message))
    return FlipEvidence("\n".join(lines), no_output)


def _quoted(lines: Iterable[str]) -> list[str]:
    return [f"    | {visible(line, keep_tabs=True)}" for line in lines]


def _evidence_block(name: Side, role: str, row: dict[str, Any], tail: int) -> list[str]:
    """A row's evidence (:func:`.row_evidence`) under its heading; nothing for a row without any."""
    evidence = row_evidence(row, min(tail, EVIDENCE_LINES))
    if not evidence:
        return []
    return [f"    {name} ({role}) row's evidence:", *(f"    | {visible(line)}" for line in evidence)]


def task_prompt(comparison: TaskComparison) -> Optional[str]:
    """The prompt's start, from the new side's first row (else the old side's); reads one or two rows."""
    sides = (side for side in (comparison.new, comparison.old) if side is not None and side.facts)
    return next((shown for side in sides if (shown := prompt_excerpt(side.read_row(side.facts[0])))), None)


def uncompared_reason(comparison: TaskComparison) -> str:
    """Why a task the gate could not compare (an agent error, masked, missing) is not counted: the
    reason its item gives for the expected failure (docs/semantics.md, "Categories")."""
    if comparison.category != "flipped_agent_error":
        return visible(why_uncompared(task_summary(comparison)))
    sides = [(name, side) for name in ("old", "new") if (side := comparison.side(name)) is not None]
    errors = "; ".join(f"{name} agent error: {visible(side.agent_error)}" for name, side in sides if side.agent_error)
    old, new = (side.reward_text() if side else "none" for side in (comparison.old, comparison.new))
    return f"old={old} new={new} with {errors}; not a counted flip: rerun the task"

"""The merged verdict of a split run's parts as terminal lines and as Markdown.

Pure functions of :class:`.merge.Merged`, in the words of one run's reports (:mod:`.wording`):
the verdict line, the category table, then what only a merge knows (each part, the failed items
and the part that ran each, the items no part ran). Labels and file names come from the parts'
files: escaped for the terminal (one line, never a workflow command) and for Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..escaping import markdown_text, terminal_line, utf8_safe
from .markdown import BUDGET, LIST_CAP
from .merge import Merged, MergedItem, PartRun
from .terminal import LIST_CAP as TERMINAL_CAP
from .wording import category_rows, headline_words, plural


def merged_head(merged: Merged) -> str:
    """`PASS`, `FAIL` or `INCONCLUSIVE`, as one run's reports open."""
    return merged.verdict.upper()


def merged_words(merged: Merged) -> str:
    """The whole file's words, then what the parts ran together."""
    ran = sum(part.items_ran for part in merged.parts)
    words = f"{headline_words(merged)}; {plural(len(merged.parts), 'part')} merged: {ran} of {plural(len(merged.items), 'item')} ran"
    gaps = merged.gaps()
    if gaps:
        words += f", {len(gaps)} ran in no part"
    failed = merged.failed()
    if failed:
        words += f", {len(failed)} failed"
    return words


def _group(part: PartRun) -> str:
    return (
        f"{part.group.engine} group {part.group.index} of {part.group.count}"
        if part.group is not None
        else "no splitter group"
    )


def _part_line(part: PartRun) -> str:
    return (
        f"{part.path} ({_group(part)}): {plural(part.items_ran, 'item')} (tasks {part.tasks_ran}, "
        f"gate items {part.gate_ran}), {part.failed} failed"
    )


def _names(items: Sequence[MergedItem], cap: int) -> str:
    shown = ", ".join(item.name for item in items[:cap])
    return shown + (f", ... and {len(items) - cap} more (see the merged JSON)" if len(items) > cap else "")


def merged_lines(merged: Merged) -> list[str]:
    """The merge's terminal output: the verdict line, each part, the failed items, the gaps, the audit."""
    lines = [f"parity: {merged_head(merged)}: {merged_words(merged)}"]
    for side in ("old", "new"):
        lines.append(f"{side}: {merged.files.get(side, side)} ({merged.inputs[side]})")
    lines.extend(f"part {_part_line(part)}" for part in merged.parts)
    failed = merged.failed()
    if failed:
        lines.append(
            f"failed ({len(failed)}): "
            + ", ".join(f"{item.name} ({item.part})" for item in failed[:TERMINAL_CAP])
            + (f", ... and {len(failed) - TERMINAL_CAP} more" if len(failed) > TERMINAL_CAP else "")
        )
    gaps = merged.gaps()
    if gaps:
        lines.append(f"ran in no part ({len(gaps)}): {_names(gaps, TERMINAL_CAP)}")
    lines.extend(_check_lines(merged))
    changed = merged.hook_verdicts()
    if changed:
        lines.append(f"verdicts changed by hooks or the known-flips list: {len(changed)}")
        lines.extend(
            f"    {item.name} ({item.category}): {item.hook_verdict.outcome}: "
            f"{item.hook_verdict.text.splitlines()[0] if item.hook_verdict.text else ''}"
            for item in changed[:TERMINAL_CAP]
            if item.hook_verdict is not None
        )
    if merged.nothing_compared:
        lines.append(f"NOTHING COMPARED: {merged.nothing_compared}")
    return [utf8_safe(terminal_line(line)) for line in lines]


def _check_lines(merged: Merged) -> list[str]:
    """The team's checks that failed (each with the part that ran it) and those no part ran."""
    lines = []
    failed = merged.failed_checks()
    if failed:
        shown = ", ".join(f"{check.nodeid} ({merged.check_parts[check.nodeid]})" for check in failed[:TERMINAL_CAP])
        more = f", ... and {len(failed) - TERMINAL_CAP} more" if len(failed) > TERMINAL_CAP else ""
        lines.append(f"your checks failed ({len(failed)}): {shown}{more}")
    gaps = merged.check_gaps()
    if gaps:
        shown = ", ".join(check.nodeid for check in gaps[:TERMINAL_CAP])
        more = f", ... and {len(gaps) - TERMINAL_CAP} more" if len(gaps) > TERMINAL_CAP else ""
        lines.append(f"your checks that ran in no part ({len(gaps)}): {shown}{more}")
    return lines


def _code(text: str) -> str:
    return f"<code>{markdown_text(text)}</code>"


def _capped(items: Sequence[MergedItem], render_part: bool) -> list[str]:
    lines = [
        f"- {_code(item.name)}" + (f" ({_code(item.part)})" if render_part and item.part else "")
        for item in items[:LIST_CAP]
    ]
    if len(items) > LIST_CAP:
        lines.append(f"- ... and {len(items) - LIST_CAP} more (see the merged JSON)")
    return lines


def merged_markdown(merged: Merged) -> str:
    """The merge's Markdown, for `--markdown` and a GitHub Actions job page; within GitHub's size limit."""
    lines = [
        "## rollout parity",
        "",
        f"**rollout parity: {merged_head(merged)}**: {merged_words(merged)} (exit status {merged.exit_status})",
        "",
    ]
    lines.extend(
        f"- {side}: {markdown_text(str(merged.files.get(side, side)))} ({markdown_text(merged.inputs[side])})"
        for side in ("old", "new")
    )
    lines.extend(["", "| category | tasks | breakdown |", "| --- | ---: | --- |"])
    lines.extend(f"| {name} | {count} | {breakdown} |" for name, count, breakdown in category_rows(merged))
    lines.extend(
        [
            "",
            "### Parts",
            "",
            "| part | group | items | tasks | gate items | failed |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
    )
    lines.extend(
        f"| {_code(part.path)} | {markdown_text(_group(part))} | {part.items_ran} | {part.tasks_ran} | "
        f"{part.gate_ran} | {part.failed} |"
        for part in merged.parts
    )
    failed = merged.failed()
    if failed:
        lines.extend(["", f"### Failed ({len(failed)})", ""])
        lines.extend(_capped(failed, render_part=True))
    gaps = merged.gaps()
    if gaps:
        lines.extend(["", f"### Ran in no part ({len(gaps)})", ""])
        lines.extend(_capped(gaps, render_part=False))
    check_lines = _check_lines(merged)
    if check_lines:
        lines.extend(["", "### Your checks", ""])
        lines.extend(f"- {markdown_text(line)}" for line in check_lines)
    changed = [item for item in merged.hook_verdicts() if item.hook_verdict is not None]
    if changed:
        lines.extend(["", f"### Verdicts changed by hooks or the known-flips list ({len(changed)})", ""])
        lines.extend(
            f"- {_code(item.name)} ({markdown_text(str(item.category))}): {item.hook_verdict.outcome}: "
            f"{markdown_text(item.hook_verdict.text.splitlines()[0] if item.hook_verdict.text else '')}"
            for item in changed[:LIST_CAP]
            if item.hook_verdict is not None
        )
    if merged.nothing_compared:
        lines.extend(["", f"**Nothing compared**: {markdown_text(merged.nothing_compared)}"])
    text = utf8_safe("\n".join(lines) + "\n")
    encoded = text.encode("utf-8")
    if len(encoded) > BUDGET:
        text = encoded[: BUDGET - 200].decode("utf-8", "ignore") + "\n\n... (cut at GitHub's size limit)\n"
    return text

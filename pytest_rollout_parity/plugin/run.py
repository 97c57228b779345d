"""The state of one gate run: settings, both sides streamed, the result, item names, log roots."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Optional

import pytest

from .. import core
from ..core import (
    COPY_NAME,
    COVERAGE_NAME,
    EQUIVALENCE_ITEM,
    EXCERPT_CAP,
    FLIPS,
    AggregateCheck,
    CheckRun,
    CompareResult,
    Coverage,
    Equivalence,
    Files,
    FlipEvidence,
    FlipJudgement,
    InventoryRead,
    KnownFlips,
    LoadedSide,
    LogRoots,
    MarginDecisions,
    PairedSection,
    RunInfo,
    SideRequest,
    SplitGroup,
    Verdict,
    check_side,
    combined_check,
    compare_loaded,
    coverage,
    error_rates,
    flip_evidence,
    item_names,
    margin_beyond_range,
    margin_decisions,
    noise_text,
    paired_section,
    read_inventory,
    sidecar_display,
    sidecar_path,
    task_noise,
    task_prompt,
    wants_excerpt,
)
from .options import ParitySettings


@dataclass(frozen=True)
class ParityRun:
    """Loaded once per process (controller and each xdist worker); read by items and summaries."""

    settings: ParitySettings
    old: LoadedSide
    new: LoadedSide
    result: CompareResult
    names: tuple[str, ...]
    roots: LogRoots
    #: the reviewed flips that pass (`--parity-known-flips`), or None
    known_flips: Optional[KnownFlips] = None
    #: each side's `<stem>_coverage.json` inventory, when it has one
    inventory: Optional[dict[str, InventoryRead]] = None

    @classmethod
    def load(
        cls,
        settings: ParitySettings,
        invocation_dir: Path,
        sides: Optional[tuple[LoadedSide, LoadedSide]] = None,
        known_flips: Optional[KnownFlips] = None,
        compare: Optional[Compare] = None,
    ) -> ParityRun:
        """Stream both sides (unless given) and compare them (through ``compare``, given the sides and
        their join keys, when the caller has a comparison at hand); raises CompareInputError naming
        the file and line."""
        old, new = sides if sides is not None else read_sides(settings)
        result = (compare or _compare)(old, new, settings.side_key("old")[0], settings.side_key("new")[0])
        roots = LogRoots(
            invocation_dir=invocation_dir,
            old_dir=settings.old.parent,
            new_dir=settings.new.parent,
            extra=settings.logs_roots + shard_dirs(old, new),
        )
        inventory = {
            name: read
            for name, side in (("old", old), ("new", new))
            if (read := read_inventory([p for p, _, _ in side.files], [d for _, d, _ in side.files], side.facts, name))
            is not None
        }
        # the run-wide items' names are reserved in every run, so a task's node id does not depend on the mode
        names = tuple(item_names([t.task for t in result.tasks], reserved=[EQUIVALENCE_ITEM, COVERAGE_NAME, COPY_NAME]))
        _check_margin(settings.margin, result)
        return cls(settings, old, new, result, names, roots, known_flips, inventory)

    @cached_property
    def aggregate(self) -> dict[str, AggregateCheck]:
        """Each side's aggregate-metrics check, when it has such a file: read only by the reports, so
        an xdist worker never reads the files."""
        sides = (("old", self.old), ("new", self.new))
        return {name: check for name, side in sides if (check := check_files(side, name)) is not None}

    @cached_property
    def paired(self) -> PairedSection:
        """The paired statistics and per-task p-values, computed on first use in this process."""
        return paired_section(self.result)

    @cached_property
    def decisions(self) -> MarginDecisions:
        """Margin mode's decisions (the flips' FDR, their judgements, the aggregate), made once in
        this process: the items and every report read them."""
        return margin_decisions(
            self.paired,
            self.result.tasks,
            self.settings.margin,
            self.settings.alpha,
            copy=self.result.copies is not None,
        )

    @cached_property
    def judgements(self) -> tuple[Optional[FlipJudgement], ...]:
        """Margin mode's judgement of each flip, by task index; all None without a margin (made once:
        every item reads it)."""
        if self.settings.margin is None:
            return (None,) * len(self.result.tasks)
        return self.decisions.judgements

    @property
    def equivalence(self) -> Optional[Equivalence]:
        """The equivalence decision at the margin; None without a margin."""
        return self.decisions.equivalence if self.settings.margin is not None else None

    @property
    def gate_items(self) -> tuple[str, ...]:
        """The names of the gate-level items this run collects (judging the run, not one task), in order:
        the aggregate in margin mode; the coverage item when the gate lost more evidence than its
        budget allows (or compared nothing, or the new side errs clearly more); the copy item when
        both sides hold the same rows (it passes under --parity-allow-copy)."""
        items = [EQUIVALENCE_ITEM] if self.settings.margin is not None else []
        if not self.coverage.passed:
            items.append(COVERAGE_NAME)
        if self.result.copies is not None:
            items.append(COPY_NAME)
        return tuple(items)

    @cached_property
    def coverage(self) -> Coverage:
        """The new side's coverage of the old side's tasks (and its own run's inventory), against the limits."""
        read = (self.inventory or {}).get("new")
        inventory = read.inventory if read is not None else None
        unreported = None
        if inventory is not None:
            unreported = (inventory.counts["failed"] + inventory.counts["unknown"], inventory.counts["expected"])
        return coverage(
            self.result,
            self.settings.max_missing,
            self.settings.max_masked,
            unreported,
            max_uncompared=self.settings.max_uncompared,
            error_rates=error_rates(self.result),
        )

    def flip_message(self, index: int) -> str:
        """The failure message of the flip at ``index`` (reads its verifier log)."""
        return self.flip_evidence(index).text

    @cached_property
    def _evidence(self) -> dict[int, FlipEvidence]:
        return {}

    @cached_property
    def wants_excerpt(self) -> bool:
        """A side is keyed on the task's index or prompt: its labels say little, a prompt excerpt helps."""
        return wants_excerpt(self.result.join.old_key) or wants_excerpt(self.result.join.new_key)

    def built_evidence(self, index: int) -> Optional[FlipEvidence]:
        """The flip's evidence when this process has built it, else None (nothing is read)."""
        return self._evidence.get(index)

    def flip_evidence(self, index: int) -> FlipEvidence:
        """The flip at ``index``: its message, and whether its losing row has no verifier output at all
        (built once per process: the item and the HTML report's row read the same)."""
        if index in self._evidence:
            return self._evidence[index]
        comparison = self.result.tasks[index]
        if self.settings.margin is None and "paired" not in self.__dict__:
            p = task_noise(comparison)  # this task's alone: an xdist worker need not test every flip
        else:
            p = self.paired.p_values[index]
        noise = noise_text(comparison, p) if p is not None else None
        evidence = flip_evidence(
            comparison, self.settings.tail, self.roots, noise, self.judgements[index], excerpt=self.wants_excerpt
        )
        self._evidence[index] = evidence
        return evidence

    def run_info(
        self,
        selected: Optional[int] = None,
        verdicts_changed: int = 0,
        outcomes: Optional[dict[str, int]] = None,
        hook_verdicts: Optional[dict[str, Verdict]] = None,
        collect_only: bool = False,
        ran_tasks: Optional[frozenset[str]] = None,
        evidence: Optional[dict[str, str]] = None,
        no_output: int = 0,
        task_outcomes: Optional[dict[str, str]] = None,
        gate_outcomes: Optional[dict[str, str]] = None,
        group: Optional[SplitGroup] = None,
        session_failures: int = 0,
        failure_section_rescans: bool = False,
        checks: tuple[CheckRun, ...] = (),
    ) -> RunInfo:
        """What the run adds to the summary: files, selection, hook verdicts, outcomes, the flips'
        texts, for a side keyed on index or prompt the listed flips' prompt excerpts, the part of the
        whole file that ran here, and what the parts of a split run must agree on to be merged."""
        files = Files(
            old=self.old.display,
            new=self.new.display,
            old_sidecar=_sidecar_shown(self.old),
            new_sidecar=_sidecar_shown(self.new),
            old_shards=len(self.old.files),
            new_shards=len(self.new.files),
            old_sidecars=sum(1 for _, _, sidecar in self.old.files if sidecar is not None),
            new_sidecars=sum(1 for _, _, sidecar in self.new.files if sidecar is not None),
        )
        return RunInfo(
            files=files,
            same_file=self.settings.same_file,
            selected=selected,
            verdicts_changed=verdicts_changed,
            outcomes=outcomes or {},
            gate_items=self.gate_items,
            aggregate=self.aggregate,
            hook_verdicts=hook_verdicts or {},
            known_flips=self.known_flips.shown if self.known_flips is not None else None,
            known_flips_sha256=self.known_flips.sha256 if self.known_flips is not None else None,
            notes=self._left_out_notes()
            + (tuple(self.known_flips.notes(self.result.tasks)) if self.known_flips is not None else ()),
            inventory=self.inventory or {},
            collect_only=collect_only,
            ran_tasks=ran_tasks,
            evidence=evidence or {},
            no_output=no_output,
            excerpts=self.excerpts() if self.wants_excerpt else {},
            task_outcomes=task_outcomes or {},
            gate_outcomes=gate_outcomes or {},
            group=group,
            inputs={"old": self.old.digest, "new": self.new.digest},
            options=decision_options(self.settings, self.known_flips),
            session_failures=session_failures,
            failure_section_rescans=failure_section_rescans,
            checks=checks,
        )

    def _left_out_notes(self) -> tuple[str, ...]:
        """A note per side whose glob matched files written beside the rollouts, left out."""
        notes = []
        for side in ("old", "new"):
            names = getattr(self.settings, f"{side}_left_out")
            if names:
                shown = "; ".join(f"{name} ({what})" for name, what in names[:5])
                more = f" and {len(names) - 5} more" if len(names) > 5 else ""
                notes.append(f"{side} side: its glob also matched files that are no rollouts, left out: {shown}{more}")
        return tuple(notes)

    def excerpts(self) -> dict[str, str]:
        """The prompt excerpts of the first :data:`EXCERPT_CAP` flips, by task label (reads a row each)."""
        found: dict[str, str] = {}
        flips = [task for task in self.result.tasks if task.category in FLIPS][:EXCERPT_CAP]
        for task in flips:
            shown = task_prompt(task)
            if shown is not None:
                found[task.task] = shown
        return found


def _check_margin(margin: Optional[float], result: CompareResult) -> None:
    """A margin at or above the rewards' range makes the aggregate unfailable: a usage error naming the range."""
    span = margin_beyond_range(result, margin) if margin is not None else None
    if span is not None:
        low, high = span
        raise pytest.UsageError(
            f"--parity-margin: {margin:g} is at or above the range of the rewards, [{low:g}, {high:g}]: no mean "
            "difference can exceed it, so the aggregate could never fail; the margin is in reward units "
            f"(0.05 for 5 points of a reward in [0, 1])"
        )


def decision_options(settings: ParitySettings, known_flips: Optional[KnownFlips]) -> dict[str, object]:
    """The settings that decide an item's outcome, as plain values: the parts of a split run are
    merged only when theirs are equal (the known flips by the tasks and reasons they accept)."""
    return {
        "margin": settings.margin,
        "alpha": settings.alpha,
        "strict": settings.strict,
        "max_missing": settings.max_missing.text,
        "max_masked": settings.max_masked.text,
        "max_uncompared": settings.max_uncompared.text,
        "allow_copy": settings.allow_copy,
        "old_key": settings.side_key("old")[0],
        "new_key": settings.side_key("new")[0],
        "old_agent": settings.side_agent("old")[0],
        "new_agent": settings.side_agent("new")[0],
        "known_flips": (
            sorted([entry.task, entry.reason] for entry in known_flips.entries.values())
            if known_flips is not None
            else None
        ),
    }


def _sidecar_shown(side: LoadedSide) -> Optional[str]:
    """A side's sidecar as shown; None without one, and for a sharded side (its count is shown)."""
    if side.shards or side.sidecar is None:
        return None
    return sidecar_display(side.display, side.path)


def side_request(settings: ParitySettings, side: str) -> SideRequest:
    """What to read for one side: its own key and agent (each named by the option that gave it)."""
    key, key_option = settings.side_key(side)
    agent, agent_option = settings.side_agent(side)
    path, shown = (settings.old, settings.old_shown) if side == "old" else (settings.new, settings.new_shown)
    shards = tuple((str(file), name) for file, name in (settings.old_shards if side == "old" else settings.new_shards))
    return SideRequest(str(path), key, shown or None, agent, key_option, agent_option, shards)


def shard_dirs(*sides: LoadedSide) -> tuple[Path, ...]:
    """The directories of sharded sides' files beyond the first's, where their relative
    `verifier_logs_dir` values may also be found."""
    dirs: list[Path] = []
    for side in sides:
        for path, _, _ in side.files[1:]:
            if path.parent != side.path.parent and path.parent not in dirs:
                dirs.append(path.parent)
    return tuple(dirs)


def check_files(side: LoadedSide, name: str) -> Optional[AggregateCheck]:
    """The side's aggregate-metrics check: its one file's, or its shards' taken together."""
    if not side.shards:
        return check_side(side.path, side.display, side.agent, side.facts, name)
    checks = [
        check
        for index, (path, shown, _) in enumerate(side.files)
        if (check := check_side(path, shown, side.agent, side.shard_facts(index), name)) is not None
    ]
    return combined_check(checks)


#: how a process gets its comparison: given both sides and their join keys (old, new)
Compare = Callable[[LoadedSide, LoadedSide, Optional[str], Optional[str]], CompareResult]


def _compare(old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]) -> CompareResult:
    return compare_loaded(old, new, old_key=old_key, new_key=new_key)


def _serially(requests: list[SideRequest]) -> list[LoadedSide]:
    return [core.load_side(request) for request in requests]


def read_sides(
    settings: ParitySettings, load: Callable[[list[SideRequest]], list[LoadedSide]] = _serially
) -> tuple[LoadedSide, LoadedSide]:
    """Both sides through ``load`` (given the requests in order, old first; it returns the sides)."""
    if _same_selection(settings):
        # one file under two names: read once, each side shown under the name it was given
        (old,) = load([side_request(settings, "old")])
        new = replace(
            old,
            path=settings.new,
            display=settings.new_shown or str(settings.new),
            sidecar=sidecar_path(settings.new) if old.sidecar else None,
        )
        return old, new
    old, new = load([side_request(settings, "old"), side_request(settings, "new")])
    return old, new


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _read_alike(old: Path, new: Path) -> bool:
    """Both names reach the same file and the same sidecar (or neither has one)."""
    if not _same(old, new):
        return False
    old_sidecar, new_sidecar = sidecar_path(old), sidecar_path(new)
    if not old_sidecar.exists() and not new_sidecar.exists():
        return True
    return _same(old_sidecar, new_sidecar)


def _same_selection(settings: ParitySettings) -> bool:
    """Both sides are the same file (and sidecar) read the same way: one read serves both."""
    return (
        not settings.old_shards
        and not settings.new_shards
        and _read_alike(settings.old, settings.new)
        and settings.side_key("old")[0] == settings.side_key("new")[0]
        and settings.side_agent("old")[0] == settings.side_agent("new")[0]
    )


#: The run of this pytest process, where its items and fixtures find it (``config.stash``).
RUN_KEY = pytest.StashKey["ParityRun"]()

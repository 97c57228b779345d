"""The state of one gate run: settings, both sides streamed, the result, item names, log roots."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

import pytest

from .. import core
from .options import ParitySettings
from .rerun_cache import RerunCache, entries_dir


@dataclass(frozen=True)
class ParityRun:
    """Loaded once per process (controller and each xdist worker); read by items and summaries."""

    settings: ParitySettings
    old: core.LoadedSide
    new: core.LoadedSide
    result: core.CompareResult
    names: tuple[str, ...]
    roots: core.LogRoots
    #: the reviewed flips that pass (`--parity-known-flips`), or None
    known_flips: Optional[core.KnownFlips] = None
    #: each side's `<stem>_coverage.json` inventory, when it has one
    inventory: Optional[dict[str, core.InventoryRead]] = None
    #: each flip's evidence this process built, by task index (the item and the HTML extra read the same)
    evidence: dict[int, core.FlipEvidence] = field(default_factory=dict)

    @classmethod
    def load(cls, settings: ParitySettings, config: pytest.Config, progress: Optional[core.SideProgress]) -> ParityRun:
        """Both sides (from the rerun cache when current) and their comparison, built with the cyclic
        collector resting; raises CompareInputError naming the file and line."""
        known_flips = None
        if settings.known_flips:  # a malformed list stops the run before a row is read
            known_flips = core.read_known_flips(settings.known_flips, settings.known_flips_shown)
        # the sides shown while read in this process, not those the cache holds
        comparisons = RerunCache(entries_dir(config), progress)
        with collector_paused():
            old, new = comparisons.load([side_request(settings, "old"), side_request(settings, "new")])
            result = comparisons.compare(old, new, settings.old_key, settings.new_key)
            # a sharded side's relative `verifier_logs_dir` values may also lie beside its other files
            beside = [
                path.parent for side in (old, new) for path, _, _ in side.files[1:] if path.parent != side.path.parent
            ]
            roots = core.LogRoots(
                invocation_dir=config.invocation_params.dir,
                old_dir=settings.old.parent,
                new_dir=settings.new.parent,
                extra=settings.logs_roots + tuple(dict.fromkeys(beside)),
            )
            inventory = {}
            for name, side in (("old", old), ("new", new)):
                paths, shown = [path for path, _, _ in side.files], [display for _, display, _ in side.files]
                if (read := core.read_inventory(paths, shown, side.facts, name)) is not None:
                    inventory[name] = read
            # the run-wide items' names are reserved in every run, so a task's node id does not depend on the mode
            reserved = [core.EQUIVALENCE_ITEM, core.COVERAGE_NAME, core.COPY_NAME]
            names = tuple(core.item_names([task.task for task in result.tasks], reserved=reserved))
        if settings.margin is not None:
            low, high = core.reward_range(result)
            if settings.margin >= high - low:
                raise pytest.UsageError(
                    f"--parity-margin: {settings.margin:g} is at or above the range of the rewards, [{low:g}, "
                    f"{high:g}]: no mean difference can exceed it, so the aggregate could never fail; the margin "
                    "is in reward units (0.05 for 5 points of a reward in [0, 1])"
                )
        return cls(settings, old, new, result, names, roots, known_flips, inventory)

    @cached_property
    def aggregate(self) -> dict[str, core.AggregateCheck]:
        """Each side's aggregate-metrics check (its one file's, or its shards' taken together), when
        it has such a file: read only by the reports, so an xdist worker never reads the files."""
        checks = {}
        for name, side in (("old", self.old), ("new", self.new)):
            each = [
                core.check_side(path, shown, side.agent, side.shard_facts(i), name)
                for i, (path, shown, _) in enumerate(side.files)
            ]
            check = core.combined_check([found for found in each if found is not None])
            if check is not None:
                checks[name] = check
        return checks

    @cached_property
    def paired(self) -> core.PairedSection:
        """The paired statistics and per-task p-values, computed on first use in this process."""
        return core.paired_section(self.result)

    @cached_property
    def decisions(self) -> core.MarginDecisions:
        """Margin mode's decisions, made once in this process for the items and every report; without
        a margin there are none, and no paired statistics are computed for them."""
        settings, tasks = self.settings, self.result.tasks
        if settings.margin is None:
            return core.MarginDecisions(None, (None,) * len(tasks), None)
        copy = self.result.copies is not None
        return core.margin_decisions(self.paired, tasks, settings.margin, settings.alpha, copy=copy)

    @cached_property
    def gate_items(self) -> dict[str, tuple[bool, str]]:
        """The gate-level items this run collects, each (passed, message): those with something to decide."""
        items = {}
        if (equivalence := self.decisions.equivalence) is not None:  # margin mode
            items[core.EQUIVALENCE_ITEM] = equivalence.passed, equivalence.message
        if not self.coverage.passed:
            limits = "--parity-max-uncompared, --parity-max-missing and --parity-max-masked set the limits"
            items[core.COVERAGE_NAME] = False, f"{self.coverage.message}\n    {limits} (off switches one off)"
        if (copies := self.result.copies) is not None and self.settings.allow_copy:
            items[core.COPY_NAME] = True, f"{copies}: passed under --parity-allow-copy (a dry run of the CI wiring)"
        elif copies is not None:
            advice = (
                "run the new server on the same tasks and give its rollouts as --parity-new; "
                "--parity-allow-copy passes a deliberate copy (a dry run of the CI wiring)"
            )
            items[core.COPY_NAME] = False, f"{copies}\n    no evidence about the new server: {advice}"
        return items

    @cached_property
    def coverage(self) -> core.Coverage:
        """The new side's coverage of the old side's tasks (and its own run's inventory), against the limits."""
        read = (self.inventory or {}).get("new")
        unreported = None
        if read is not None and read.inventory is not None:
            counts = read.inventory.counts
            unreported = (counts["failed"] + counts["unknown"], counts["expected"])
        return core.coverage(
            self.result,
            self.settings.max_missing,
            self.settings.max_masked,
            unreported,
            max_uncompared=self.settings.max_uncompared,
            error_rates=core.error_rates(self.result),
        )

    @cached_property
    def wants_excerpt(self) -> bool:
        """A side is keyed on the task's index or prompt: its labels say little, a prompt excerpt helps."""
        return core.wants_excerpt(self.result.join.old_key) or core.wants_excerpt(self.result.join.new_key)

    def flip_evidence(self, index: int) -> core.FlipEvidence:
        """The evidence of the flip at ``index``, its verifier log read once per process."""
        if index in self.evidence:
            return self.evidence[index]
        comparison = self.result.tasks[index]
        if self.settings.margin is None and "paired" not in self.__dict__:
            # this task's alone (an agent error's is None): an xdist worker need not test every flip
            test = core.task_noise_test(comparison)
            p = test[0] if test is not None else None
        else:
            p = self.paired.p_values[index]
        noise = core.noise_text(comparison, p) if p is not None else None
        self.evidence[index] = evidence = core.flip_evidence(
            comparison,
            self.settings.tail,
            self.roots,
            noise,
            self.decisions.judgements[index],
            excerpt=self.wants_excerpt,
        )
        return evidence


def side_request(settings: ParitySettings, side: str) -> core.SideRequest:
    """What to read for one side: its own key and agent (each named by the option that gave it)."""
    key, agent = getattr(settings, f"{side}_key"), getattr(settings, f"{side}_agent")
    shown, files = getattr(settings, f"{side}_shown") or None, getattr(settings, f"{side}_files")
    shards = tuple((str(path), name) for path, name in files) if len(files) > 1 else ()
    options = settings.sources[f"{side}_key"], settings.sources[f"{side}_agent"]
    return core.SideRequest(str(getattr(settings, side)), key, shown, agent, *options, shards)


#: The run of this pytest process, where its items and fixtures find it (``config.stash``).
RUN_KEY = pytest.StashKey["ParityRun"]()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector paused while the gate builds what lives as long as the run (sides, result,
    items, summary): each full collection their allocations start walks them all, a tenth of a
    10,000-task rerun's CPU. On again before other code runs, if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

"""The state of one gate run: settings, both sides streamed, the result, item names, log roots."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Optional

from ..core.api import compare_loaded
from ..core.loading import LoadedSide, load_side, sidecar_display
from ..core.margin import AGGREGATE_NAME, Aggregate, FlipJudgement, aggregate, judge_flips
from ..core.model import CompareResult
from ..core.naming import item_names
from ..core.outcomes import flip_message
from ..core.paired import PairedSection, noise_text, paired_section
from ..core.report import RunInfo
from ..core.verifier import LogRoots
from .settings import ParitySettings


@dataclass(frozen=True)
class ParityRun:
    """Loaded once per process (controller and each xdist worker); read by items and summaries."""

    settings: ParitySettings
    old: LoadedSide
    new: LoadedSide
    result: CompareResult
    names: tuple[str, ...]
    roots: LogRoots

    @classmethod
    def load(cls, settings: ParitySettings, invocation_dir: Path) -> "ParityRun":
        """Stream both sides; raises CompareInputError naming the file and line."""
        old = load_side(settings.old, settings.key, settings.old_shown)
        new = old if settings.same_file else load_side(settings.new, settings.key, settings.new_shown)
        result = compare_loaded(old, new, settings.key)
        roots = LogRoots(
            invocation_dir=invocation_dir,
            old_dir=settings.old.parent,
            new_dir=settings.new.parent,
            extra=settings.logs_roots,
        )
        # the aggregate's name is reserved in both modes, so a task's node id does not depend on the mode
        names = tuple(item_names([t.task for t in result.tasks], reserved=[AGGREGATE_NAME]))
        return cls(settings, old, new, result, names, roots)

    @cached_property
    def paired(self) -> PairedSection:
        """The paired statistics and per-task p-values, computed on first use in this process."""
        return paired_section(self.result)

    @cached_property
    def judgements(self) -> tuple[Optional[FlipJudgement], ...]:
        """Margin mode's judgement of each flip, by task index; all None without a margin."""
        if self.settings.margin is None:
            return (None,) * len(self.result.tasks)
        return tuple(judge_flips(self.paired, self.result.tasks, self.settings.alpha))

    @cached_property
    def aggregate(self) -> Optional[Aggregate]:
        """The equivalence decision at the margin; None without a margin."""
        if self.settings.margin is None:
            return None
        return aggregate(self.paired.stats, self.settings.margin)

    def flip_message(self, index: int) -> str:
        """The failure message of the flip at ``index`` (reads its verifier log)."""
        comparison = self.result.tasks[index]
        p = self.paired.p_values[index]
        noise = noise_text(comparison, p) if p is not None else None
        return flip_message(comparison, self.settings.tail, self.roots, noise, self.judgements[index])

    def run_info(self, selected: Optional[int] = None, verdicts_changed: int = 0,
                 outcomes: Optional[dict[str, int]] = None) -> RunInfo:
        """What the run adds to the summary: files, selection, hook verdicts, outcomes."""
        return RunInfo(
            old_file=self.old.display,
            new_file=self.new.display,
            old_sidecar=sidecar_display(self.old.display) if self.old.sidecar else None,
            new_sidecar=sidecar_display(self.new.display) if self.new.sidecar else None,
            same_file=self.settings.same_file,
            selected=selected,
            verdicts_changed=verdicts_changed,
            outcomes=outcomes or {},
        )

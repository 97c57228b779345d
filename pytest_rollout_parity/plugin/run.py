"""The state of one gate run: settings, both sides streamed, the result, item names, log roots."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from ..core.api import compare_loaded
from ..core.loading import LoadedSide, load_side, sidecar_display, sidecar_path
from ..core.model import CompareResult
from ..core.naming import item_names
from ..core.outcomes import flip_message
from ..core.summary import RunInfo
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
        if _read_alike(settings.old, settings.new):
            # one file under two names: read once, each side shown under the name it was given
            new = replace(old, path=settings.new, display=settings.new_shown or str(settings.new),
                          sidecar=sidecar_path(settings.new) if old.sidecar else None)
        else:
            new = load_side(settings.new, settings.key, settings.new_shown)
        result = compare_loaded(old, new, settings.key)
        roots = LogRoots(
            invocation_dir=invocation_dir,
            old_dir=settings.old.parent,
            new_dir=settings.new.parent,
            extra=settings.logs_roots,
        )
        return cls(settings, old, new, result, tuple(item_names([t.task for t in result.tasks])), roots)

    def flip_message(self, index: int) -> str:
        """The failure message of the flip at ``index`` (reads its verifier log)."""
        return flip_message(self.result.tasks[index], self.settings.tail, self.roots)

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


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _read_alike(old: Path, new: Path) -> bool:
    """Both names reach the same file and the same sidecar (or neither has one): one read serves both."""
    if not _same(old, new):
        return False
    old_sidecar, new_sidecar = sidecar_path(old), sidecar_path(new)
    if not old_sidecar.exists() and not new_sidecar.exists():
        return True
    return _same(old_sidecar, new_sidecar)

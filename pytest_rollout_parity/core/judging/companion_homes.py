"""The files the gate finds beside a side's file stay in its directory, checked before any is read.

A side's sidecar, aggregate-metrics and coverage files are found by name, not given by the user: a
pull request can commit one as a link to any file the runner can read, whose content the reports
would then publish. So each one that is there must resolve beside the side's file, as given or as
resolved (a side named by a link finds its companions beside the link's target too).
"""

from __future__ import annotations

from pathlib import Path

from ..reading.files import check_home
from ..reading.sidecar import sidecar_display, sidecar_path
from .coverage_file import coverage_path, coverage_places
from .metrics_file import metrics_path, metrics_places


def _shown(found: Path, beside_given: Path, shown: str) -> str:
    """A companion as messages name it: beside the side as the user named it, else its own path."""
    return str(Path(shown).with_name(beside_given.name)) if found == beside_given else str(found)


def check_companions(path: Path, shown: str) -> None:
    """Raise CompareInputError naming the first companion of ``path`` (shown as ``shown``) that leads out."""
    check_home(sidecar_path(path), path, sidecar_display(shown, path))
    for found, places in ((metrics_path(path), metrics_places(path)), (coverage_path(path), coverage_places(path))):
        check_home(found, path, _shown(found, places[0], shown))

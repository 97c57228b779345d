"""The files around a side: what a name is (compressed, a file written beside the rollouts), and
where a file the gate finds beside a side may resolve."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import CompareInputError

SUFFIXES = (".gz", ".bz2", ".xz", ".zst")


def plain_name(name: str) -> str:
    """A file name without its compression suffix."""
    return name.rsplit(".", 1)[0] if name.endswith(SUFFIXES) else name


def companion(path: Path, name_for: Callable[[Path], Path]) -> Path:
    """A file kept beside ``path`` (``name_for`` names it): beside the path as given, else (none there,
    the path a symlink) beside the file it resolves to, so a link and a farm of links find theirs."""
    given = name_for(path)
    if given.exists() or not path.is_symlink():
        return given
    target = name_for(Path(os.path.realpath(path)))
    return target if target.exists() else given


#: why a file found beside a side is refused
LEADS_OUT = "a link leading out of its side's directory: files the gate finds beside a side must resolve there"


def inside(path: str | os.PathLike[str], directory: str | os.PathLike[str]) -> bool:
    """Whether ``path`` resolves to ``directory`` or below it (both resolved)."""
    real, home = os.path.realpath(path), os.path.realpath(directory)
    return real == home or real.startswith(home.rstrip(os.sep) + os.sep)


def leads_out(found: Path, main: Path, roots: Sequence[Path] = ()) -> bool:
    """Whether ``found`` is there and resolves outside ``main``'s directory (as given and as resolved) and ``roots``."""
    if not (found.exists() or found.is_symlink()):
        return False
    homes = [main.parent, Path(os.path.realpath(main)).parent, *roots]
    return not any(inside(found, home) for home in homes)


def check_home(found: Path, main: Path, shown: str, roots: Sequence[Path] = ()) -> None:
    """A companion the gate found by itself (a sidecar, a coverage or metrics file) stays home; a link
    leading elsewhere is an input error naming the link (``shown``), raised before the file is opened."""
    if leads_out(found, main, roots):
        raise CompareInputError(shown, f"{LEADS_OUT} (copy the file in, or name the side by the link's target)")


#: Files written beside the rollouts that are never rollouts, by what each is: `gym eval
#: health-check`'s two (NeMo Gym PR 2705), and the `--prompt` task and `--echo` items of other producers.
HEALTH_CHECK_FILES = {
    "rollout_verdicts.jsonl": "the health check's per-rollout verdicts (gym eval health-check)",
    "quality_summary.json": "the health check's quality summary (gym eval health-check)",
}
WRITTEN_BESIDE = {
    "_items.jsonl": "the --echo output (Responses API items, <stem>_items.jsonl)",
    "_task.jsonl": "the task written for --prompt (<stem>_task.jsonl)",
}


def written_beside(name: str) -> str:
    """What a file written beside the rollouts is, by its name (`""`: none of those)."""
    plain = plain_name(os.path.basename(name))
    beside = (what for suffix, what in WRITTEN_BESIDE.items() if plain.endswith(suffix))
    return HEALTH_CHECK_FILES.get(plain) or next(beside, "")

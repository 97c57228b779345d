"""The JSON rendering of the summary (`--parity-json`), and writing it atomically.

The keys are the file's documented layout; :func:`summary_dict` is the public way to get the same
dict from a result in memory.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

from .model import CompareResult
from .summary import RunInfo, SideSummary, Summary, TaskSummary, build_summary


def _side(side: Optional[SideSummary]) -> Optional[dict[str, Any]]:
    return None if side is None else asdict(side)


def _task(task: TaskSummary) -> dict[str, Any]:
    return {"task": task.task, "category": task.category, "winner": task.winner,
            "old": _side(task.old), "new": _side(task.new)}


def json_dict(summary: Summary) -> dict[str, Any]:
    """The summary as the JSON file holds it."""
    data: dict[str, Any] = {
        "counts": asdict(summary.counts),
        "join": asdict(summary.join),
        "rows": asdict(summary.rows),
        "compared": summary.compared,
        "nothing_compared": summary.nothing_compared,
        "notes": list(summary.notes),
        "tasks": [_task(task) for task in summary.tasks],
    }
    if summary.files is not None:
        data["files"] = asdict(summary.files)
    if summary.run is not None:
        data["run"] = {
            "selected": summary.run.selected,
            "verdicts_changed_by_hook": summary.run.verdicts_changed_by_hook,
            "outcomes": dict(summary.run.outcomes),
        }
    return data


def summary_dict(result: CompareResult, run: Optional[RunInfo] = None) -> dict[str, Any]:
    """The JSON summary of a result (and, in a pytest run, of what the run did) as a dict."""
    return json_dict(build_summary(result, run))


def _mode_for(path: Path) -> int:
    """The permissions a plain `open(path, "w")` would give: the existing file's, else 0666 & ~umask."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_json(path: Path, summary: Summary) -> None:
    """Write the summary through a temporary file beside it, so a reader never sees half a file."""
    data = json_dict(summary)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _mode_for(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

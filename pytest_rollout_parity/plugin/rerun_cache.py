"""Reruns read nothing twice: both loaded sides and their comparison, kept in pytest's cache as JSON.

Reading and parsing every row is a run's most expensive part, and a one-task rerun would otherwise
classify every task again. The paired statistics and margin judgements are made on every run: they
depend on options that change neither what is read nor how the tasks compare.

One file per pair of inputs under ``config.cache.mkdir("rollout-parity")`` (never beside the
inputs), written through a temporary file; ``--cache-clear`` empties it, and ``-p no:cacheprovider``
runs without it. Under pytest-xdist the controller loads first and names the directory to its
workers (a temporary one, without the cacheprovider), so no worker reads a rollouts file; a worker
whose inputs changed reads them itself.

An entry is used only under the current key: each input file's :func:`inputs_state` (an edit that
restores size and mtime still moves the ctime, which no user call sets back; three ``stat`` calls a
file decide, and no byte is read), each side's request and row reader (`PARITY_PARSER`), and the
plugin's :func:`code_state`. A pair is stored only when its files did not change while it was read.

A planted entry is harmless (the cache directory can come with a pull request, or with a results
directory run as the rootdir): an entry is read only as a regular file no larger than a multiple of
its inputs' size, its body only under the current key, whose inodes and change times no one can
write beforehand, and the body is JSON rebuilt field by field. Anything else is a miss. No write
here fails a run: an entry that cannot be written (a full disk, a read-only directory) is not kept.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, fields
from functools import lru_cache
from hashlib import sha256
from pathlib import Path
from typing import Any, Optional

import pytest

from ..core import (
    CATEGORIES,
    CompareResult,
    Join,
    LoadedSide,
    RolloutPair,
    RowCounts,
    SideProgress,
    SideRequest,
    TaskComparison,
    TaskSide,
    by_field,
    compare_loaded,
    load_sides,
    metrics_path,
    read_capped,
    reader_name,
    side_from_plain,
    side_to_plain,
    sidecar_path,
    write_text,
)

CACHE_DIR = "rollout-parity"
#: an entry is never read when it is larger than this many times its inputs' bytes, plus the slack
ENTRY_FACTOR = 16
ENTRY_SLACK = 16 << 20


def inputs_state(request: SideRequest) -> list[list[Any]]:
    """[role, real path, device, inode, size, mtime ns, ctime ns] of every file a side is read from;
    [role, real path] when absent."""
    states: list[list[Any]] = []
    for main in map(Path, request.files()):
        for role, path in (("rows", main), ("sidecar", sidecar_path(main)), ("aggregate", metrics_path(main))):
            real = os.path.realpath(path)
            try:
                st = os.stat(real)
            except OSError:
                states.append([role, real])
            else:
                states.append([role, real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return states


@lru_cache(maxsize=1)
def code_state() -> list[Any]:
    """The (name, size, mtime) of each module: they define what an entry holds and how it is read."""
    package = Path(__file__).parents[1]
    return [
        [each.relative_to(package).as_posix(), state.st_size, state.st_mtime_ns]
        for each in sorted(package.rglob("*.py"))
        for state in [each.stat()]
    ]


class RerunCache:
    """Both sides and their comparison: from the entry when it is current, else read and stored."""

    def __init__(self, directory: Optional[Path], progress: Optional[SideProgress] = None) -> None:
        self.directory = directory
        self.progress = progress
        self.path: Optional[Path] = None
        self.key = b""
        #: the entry read or to be written ({"sides": ..., "comparison": ...}); None: nothing to store
        self.entry: Optional[dict[str, Any]] = None

    def load(self, requests: list[SideRequest]) -> list[LoadedSide]:
        """The sides asked for (one, or old and new), in order."""
        states = [inputs_state(request) for request in requests]
        if self.directory is not None:
            plain = [request.plain() for request in requests]
            self.key = json.dumps([code_state(), reader_name(), plain, states]).encode("ascii")
            # one entry a pair of requests: an entry of other states of the same files replaces it
            asked = repr([(os.path.realpath(request.path), request.plain()) for request in requests])
            self.path = self.directory / f"pair-{sha256(asked.encode()).hexdigest()[:24]}.json"
            cap = ENTRY_FACTOR * sum(state[4] for side in states for state in side if len(state) == 7) + ENTRY_SLACK
            try:  # a regular file no larger than the cap, under the current key, or read again
                first, _, body = read_capped(self.path, cap, follow=False).partition(b"\n")
                entry = json.loads(body) if first == self.key else None
                sides = [side_from_plain(plain) for plain in entry["sides"]]  # type: ignore[index]
                if len(sides) == len(requests):
                    self.entry = entry
                    return sides
            except Exception:  # absent, unreadable, or another shape: read again
                pass
        sides = load_sides(requests, self.progress)
        if self.path is not None and [inputs_state(request) for request in requests] == states:
            self.entry = {"sides": [side_to_plain(side) for side in sides]}
        return sides

    def compare(
        self, old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]
    ) -> CompareResult:
        """The stored comparison when it was made for these keys and names, else made and stored."""
        asked = [old_key, new_key, str(old.path), old.display, str(new.path), new.display]
        stored = self.entry.get("comparison") if self.entry is not None else None
        try:
            if stored is not None and stored[0] == asked:
                return result_from_plain(stored[1], old, new)
        except Exception:  # another shape: compared again
            pass
        result = compare_loaded(old, new, old_key=old_key, new_key=new_key)
        if self.entry is None or self.path is None:
            return result
        try:
            self.entry["comparison"] = [asked, result_to_plain(result, old, new)]
        except KeyError:  # a task's row is not among its side's facts: the sides alone are kept
            self.entry.pop("comparison", None)
        try:  # through a temporary file renamed into place
            write_text(self.path, self.key.decode("ascii") + "\n" + json.dumps(self.entry))
        except (OSError, ValueError, TypeError, RecursionError):
            pass  # a full disk, a read-only cache: the next run reads the files again
        return result


#: the workerinput key naming the directory of the controller's entries
WORKER_DIR = "rollout_parity_cache_dir"


class ShareWithWorkers:
    """Under xdist, the controller tells each worker where the entries are."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_DIR] = str(self.directory)


def entries_dir(config: pytest.Config) -> Optional[Path]:
    """The directory of this process's entries: its controller's (an xdist worker), pytest's cache,
    or a temporary one for a controller without the cacheprovider; None: nothing is kept."""
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and isinstance(workerinput.get(WORKER_DIR), str):
        return Path(workerinput[WORKER_DIR])
    cache = getattr(config, "cache", None)
    # an xdist controller that will start workers
    distributing = not hasattr(config, "workerinput") and bool(
        config.getoption("numprocesses", None) or config.getoption("tx", None)
    )
    if cache is None and not distributing:
        return None
    try:
        directory = Path(cache.mkdir(CACHE_DIR) if cache is not None else tempfile.mkdtemp(prefix="rollout-parity-"))
    except OSError:  # a full disk, a read-only checkout: no cache, and the run goes on
        return None
    if cache is None:  # pytest's cache stays for the next run, a temporary directory goes
        config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))
    if distributing:
        config.pluginmanager.register(ShareWithWorkers(directory), "rollout-parity-xdist-share")
    return directory


#: A task's side travels as its rows (indices into its side's facts), then these attributes' values:
#: TaskSide's constructor arguments between its rows and its reader (its rewards are counted again).
_SIDE_FIELDS = tuple(each.name for each in fields(TaskSide) if each.init)[1:-1]
#: A task travels as its fields' values in order; these are where its category, sides, winner and pairs stand.
_TASK_FIELDS = tuple(each.name for each in fields(TaskComparison))
_CATEGORY, _OLD, _NEW, _WINNER, _PAIRS = map(_TASK_FIELDS.index, ("category", "old", "new", "winner", "pairs"))


def result_to_plain(result: CompareResult, old: LoadedSide, new: LoadedSide) -> dict[str, Any]:
    """The comparison as plain values, each task's rows as indices into its side's facts (else KeyError)."""
    indices = {
        name: {id(facts): i for i, facts in enumerate(side.facts)} for name, side in (("old", old), ("new", new))
    }

    def task(comparison: TaskComparison) -> list[Any]:
        values = {name: getattr(comparison, name) for name in _TASK_FIELDS}  # fields() is slow per task
        for name, index in indices.items():
            side: Optional[TaskSide] = values[name]
            if side is not None:
                values[name] = [[index[id(facts)] for facts in side.facts], *(getattr(side, f) for f in _SIDE_FIELDS)]
        if comparison.pairs is not None:
            values["pairs"] = [[indices["old"][id(p.old)], indices["new"][id(p.new)]] for p in comparison.pairs]
        return list(values.values())

    plain = by_field(result)
    plain.update(
        tasks=[task(comparison) for comparison in result.tasks], join=asdict(result.join), rows=asdict(result.rows)
    )
    return plain


def result_from_plain(plain: Any, old: LoadedSide, new: LoadedSide) -> CompareResult:
    """The comparison :func:`result_to_plain` was given, rebuilt onto ``old`` and ``new`` (raises on another shape)."""
    # one reader a side for all its tasks (a bound method each: 20,000 more objects on 10,000 tasks)
    sides = {"old": (old.facts, old.read_row), "new": (new.facts, new.read_row)}

    def task(values: list[Any]) -> TaskComparison:
        if (
            len(values) != len(_TASK_FIELDS)
            or values[_CATEGORY] not in CATEGORIES
            or values[_WINNER] not in (None, "old", "new")
        ):
            raise ValueError("a task of another shape")
        for at, (facts, reader) in ((_OLD, sides["old"]), (_NEW, sides["new"])):
            if values[at] is not None:
                rows, reward, *texts = values[at]
                if not (reward is None or type(reward) in (int, float)) or any(
                    text is not None and not isinstance(text, str) for text in texts
                ):
                    raise ValueError("a side of another shape")
                values[at] = TaskSide(*([facts[i] for i in rows], reward, *texts, reader))
        if values[_PAIRS] is not None:
            values[_PAIRS] = tuple(RolloutPair(old.facts[i], new.facts[j]) for i, j in values[_PAIRS])
        return TaskComparison(*values)  # by position: 10,000 tasks, keywords cost more

    values = dict(plain)
    values.update(
        tasks=[task(each) for each in values["tasks"]],
        join=Join(**values["join"]),
        rows=RowCounts(**values["rows"]),
    )
    for each in fields(CompareResult):  # JSON gave lists
        if isinstance(each.default, tuple):
            values[each.name] = tuple(values[each.name])
    return CompareResult(**values)

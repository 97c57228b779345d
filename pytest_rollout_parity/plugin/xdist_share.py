"""Under pytest-xdist (``-n`` as the user gave it): the loaded sides are handed to the workers.

Imported only when xdist is active. The controller loads the sides (from the rerun cache or the
files) before its workers start, stores each one in the snapshot format (the cache entry itself,
or a temporary file removed when the run ends when the cacheprovider is off), and puts the
entries' paths and keys, each with the side's request, into each worker's ``workerinput``. A worker
whose own requests are those rebuilds the sides from the entries instead of reading the rollout
files, so all processes judge the very same rows; a worker that cannot use an entry reads the
files itself. The entries are checked as the rerun cache checks its own: each worker is handed the
controller's secret with them, and decodes an entry only once its tag holds for that secret. The
controller's comparison of the sides is handed over the same way (:mod:`.result_cache`), so a
worker that took the sides classifies no task again.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

import pytest

from ..core import CompareResult, LoadedSide, SideRequest
from .rerun_cache import read_entry, write_entry
from .result_cache import read_result, result_key, write_result

WORKERINPUT_KEY = "rollout_parity_sides"
SECRET_KEY = "rollout_parity_secret"
#: the comparison of the sides, (path, key), when the controller could store it
RESULT_KEY = "rollout_parity_comparison"


class ShareWithWorkers:
    """The controller's side: one entry per side, named in each worker's ``workerinput``."""

    def __init__(self, entries: list[tuple[str, Any, tuple[Any, ...]]], secret: bytes, temp_dir: Optional[str]) -> None:
        self.entries = entries
        self.secret = secret
        self.temp_dir = temp_dir
        #: the stored comparison of the sides (path, key), once :meth:`add_result` has one
        self.result: Optional[tuple[str, Any]] = None

    @classmethod
    def prepare(
        cls, requests: list[SideRequest], sides: list[LoadedSide], cached: list[tuple[Path, Any]], secret: bytes
    ) -> Optional[ShareWithWorkers]:
        """Reuse the cache entries just read or written (tagged with ``secret``); else write temporary
        ones (None: cannot)."""
        if len(cached) == len(sides):
            entries = [(str(path), key, request.plain()) for (path, key), request in zip(cached, requests)]
            return cls(entries, secret, None)
        temp_dir = tempfile.mkdtemp(prefix="rollout-parity-")
        entries = []
        for index, (request, side) in enumerate(zip(requests, sides)):
            path, key = Path(temp_dir) / f"side-{index}.bin", ("xdist", index)
            if not write_entry(path, key, side, secret):
                shutil.rmtree(temp_dir, ignore_errors=True)
                return None
            entries.append((str(path), key, request.plain()))
        return cls(entries, secret, temp_dir)

    def add_result(
        self,
        result: CompareResult,
        old: LoadedSide,
        new: LoadedSide,
        old_key: Optional[str],
        new_key: Optional[str],
        stored: Optional[Path] = None,
    ) -> None:
        """Hand the workers the comparison too: the cache's entry ``stored`` when there is one (it is
        under the same key), else one written beside the temporary sides."""
        key = result_key([key for _, key, _ in self.entries], old, new, old_key, new_key)
        if stored is None:
            if self.temp_dir is None:
                self.temp_dir = tempfile.mkdtemp(prefix="rollout-parity-")
            stored = Path(self.temp_dir) / "comparison.bin"
            if not write_result(stored, key, self.secret, result, old, new):
                return
        self.result = (str(stored), key)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker where the sides (and their comparison) are."""
        node.workerinput[WORKERINPUT_KEY] = self.entries
        node.workerinput[SECRET_KEY] = self.secret.hex()
        if self.result is not None:
            node.workerinput[RESULT_KEY] = self.result

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Remove the temporary entries (cache entries stay for the next run)."""
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def shared_sides(config: pytest.Config, requests: list[SideRequest]) -> Optional[list[LoadedSide]]:
    """In an xdist worker, the sides the controller handed over for these ``requests``; None elsewhere,
    when the controller was asked for other sides, or when an entry is unusable."""
    workerinput = getattr(config, "workerinput", None)
    if not isinstance(workerinput, dict) or WORKERINPUT_KEY not in workerinput:
        return None
    entries = workerinput[WORKERINPUT_KEY]
    try:
        secret = bytes.fromhex(workerinput[SECRET_KEY])
    except (KeyError, TypeError, ValueError):
        return None
    if len(entries) != len(requests):
        return None
    sides = []
    for (path, key, plain), request in zip(entries, requests):
        if SideRequest.from_plain(_as_tuple(plain)) != request:
            return None
        side = read_entry(Path(path), _as_tuple(key), secret)
        if side is None:
            return None
        sides.append(side)
    return sides


def shared_result(
    config: pytest.Config, old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]
) -> Optional[CompareResult]:
    """In an xdist worker that took its controller's sides, their comparison as the controller made
    it for these join keys; None when none was handed over or it is unusable (the worker compares)."""
    workerinput = getattr(config, "workerinput", None)
    if not isinstance(workerinput, dict) or RESULT_KEY not in workerinput or WORKERINPUT_KEY not in workerinput:
        return None
    try:
        secret = bytes.fromhex(workerinput[SECRET_KEY])
        path, key = workerinput[RESULT_KEY]
    except (KeyError, TypeError, ValueError):
        return None
    expected = result_key([_as_tuple(key) for _, key, _ in workerinput[WORKERINPUT_KEY]], old, new, old_key, new_key)
    if _as_tuple(key) != expected:
        return None
    return read_result(Path(path), expected, secret, old, new)


def _as_tuple(value: Any) -> Any:
    """The key as it was built: execnet may hand tuples over as lists."""
    if isinstance(value, (list, tuple)):
        return tuple(_as_tuple(v) for v in value)
    return value

"""Where a process gets its two loaded sides and their comparison: its xdist controller, pytest's
cache, or the files.

An xdist worker takes what its controller handed over (:mod:`.xdist_share`); every other process
loads through :mod:`.rerun_cache` (which reads the files, both sides at once, when an entry is not
current), and an xdist controller then shares what it loaded with its workers. The comparison
follows the sides: handed over with them, or kept beside their entries (:mod:`.result_cache`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import pytest

from ..core import CompareResult, LoadedSide, Progress, SideRequest, compare_loaded
from .options import ParitySettings
from .progress import LoadProgress
from .rerun_cache import SideStore, cache_dir, config_secret
from .result_cache import read_result, result_key, result_path, write_result
from .run import read_sides

if TYPE_CHECKING:
    from .xdist_share import ShareWithWorkers


def xdist_active(config: pytest.Config) -> bool:
    return config.pluginmanager.hasplugin("xdist")


def distributing(config: pytest.Config) -> bool:
    """This process is an xdist controller that will start workers."""
    if hasattr(config, "workerinput"):
        return False
    return bool(config.getoption("numprocesses", None) or config.getoption("tx", None))


class _Shown:
    """The load progress display, told about sides by their index (0: old, 1: new)."""

    NAMES = ("old", "new")

    def __init__(self, display: LoadProgress) -> None:
        self.display = display

    def start(self, index: int) -> Optional[Progress]:
        return self.display.side(self.NAMES[index])

    def done(self, index: int) -> None:
        self.display.finished(self.NAMES[index])


class Comparisons:
    """Where this process's comparison of its sides comes from: its xdist controller's, the rerun
    cache's (when both sides came from current entries), or made here, then stored beside the sides'
    entries and handed to the workers."""

    def __init__(
        self, config: pytest.Config, store: SideStore, shared: bool, share: Optional[ShareWithWorkers]
    ) -> None:
        self.config = config
        self.store = store
        #: the sides are the controller's (an xdist worker that took the hand-over)
        self.shared = shared
        self.share = share

    def compare(
        self, old: LoadedSide, new: LoadedSide, old_key: Optional[str], new_key: Optional[str]
    ) -> CompareResult:
        """The comparison of ``old`` and ``new`` joined on these keys, made at most once per cache."""
        if self.shared:
            from .xdist_share import shared_result

            handed = shared_result(self.config, old, new, old_key, new_key)
            if handed is not None:
                return handed
        entries = self.store.entries
        directory = self.store.directory
        cached = directory is not None and len(entries) == self.store.asked and bool(entries)
        path = result_path(directory, [p for p, _ in entries]) if directory is not None and cached else None
        key = result_key([k for _, k in entries], old, new, old_key, new_key)
        result = read_result(path, key, self.store.secret, old, new) if path is not None else None
        stored = result is not None
        if result is None:
            result = compare_loaded(old, new, old_key=old_key, new_key=new_key)
            stored = path is not None and write_result(path, key, self.store.secret, result, old, new)
        if self.share is not None:
            self.share.add_result(result, old, new, old_key, new_key, path if stored else None)
        return result


def gather_sides(
    config: pytest.Config, settings: ParitySettings, progress: Optional[LoadProgress] = None
) -> tuple[tuple[LoadedSide, LoadedSide], Comparisons]:
    """Both sides for this process, and where their comparison comes from; raises CompareInputError
    for an unusable input.

    ``progress`` shows the sides read in this process (not those taken from the cache); the one a
    reader child reads shows only its time, once it is in.
    """
    directory = cache_dir(config)
    store = SideStore(directory, config_secret(config, directory), _Shown(progress) if progress is not None else None)
    asked: list[SideRequest] = []
    loaded: list[LoadedSide] = []
    handed: list[bool] = []

    def load(requests: list[SideRequest]) -> list[LoadedSide]:
        if xdist_active(config) and hasattr(config, "workerinput"):
            from .xdist_share import shared_sides

            shared = shared_sides(config, requests)
            if shared is not None:
                handed.append(True)
                return shared
        asked[:], loaded[:] = requests, store.load(requests)
        return list(loaded)

    sides = read_sides(settings, load)
    share = None
    if xdist_active(config) and distributing(config):
        from .xdist_share import ShareWithWorkers

        share = ShareWithWorkers.prepare(asked, loaded, store.entries, store.secret)
        if share is not None:
            config.pluginmanager.register(share, "rollout-parity-xdist-share")
    return sides, Comparisons(config, store, bool(handed), share)

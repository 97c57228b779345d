"""Where a process gets its two loaded sides: its xdist controller, pytest's cache, or the files.

An xdist worker takes what its controller handed over (:mod:`.xdist_share`); every other process
loads through :mod:`.rerun_cache` (which reads the files, both sides at once, when an entry is not
current), and an xdist controller then shares what it loaded with its workers.
"""

from __future__ import annotations

from typing import Optional

import pytest

from ..core import LoadedSide, Progress, SideRequest
from .progress import LoadProgress
from .rerun_cache import SideStore, cache_dir, config_secret
from .run import read_sides
from .settings import ParitySettings


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


def gather_sides(
    config: pytest.Config, settings: ParitySettings, progress: Optional[LoadProgress] = None
) -> tuple[LoadedSide, LoadedSide]:
    """Both sides for this process; raises CompareInputError for an unusable input.

    ``progress`` shows the sides read in this process (not those taken from the cache); the one a
    reader child reads shows only its time, once it is in.
    """
    directory = cache_dir(config)
    store = SideStore(directory, config_secret(config, directory), _Shown(progress) if progress is not None else None)
    asked: list[SideRequest] = []
    loaded: list[LoadedSide] = []

    def load(requests: list[SideRequest]) -> list[LoadedSide]:
        if xdist_active(config) and hasattr(config, "workerinput"):
            from .xdist_share import shared_sides

            shared = shared_sides(config, requests)
            if shared is not None:
                return shared
        asked[:], loaded[:] = requests, store.load(requests)
        return list(loaded)

    sides = read_sides(settings, load)
    if xdist_active(config) and distributing(config):
        from .xdist_share import ShareWithWorkers

        share = ShareWithWorkers.prepare(asked, loaded, store.entries, store.secret)
        if share is not None:
            config.pluginmanager.register(share, "rollout-parity-xdist-share")
    return sides

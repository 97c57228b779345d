"""Where a process gets its two loaded sides and their comparison: pytest's cache, or the files.

Every process loads through :mod:`.rerun_cache`, which reads the files (both sides at once) when the
cache holds no current entry, and stores what it read and compared. Under pytest-xdist the
controller does so before its workers start and names its entries' directory to them (a temporary
one, removed when the run ends, when the cacheprovider is off), so each worker takes the sides and
their comparison from the controller's entry under the same key: no worker reads a rollouts file
or classifies a task. A worker whose inputs changed meanwhile reads them itself.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Optional

import pytest

from ..core import LoadedSide
from .options import ParitySettings
from .progress import LoadProgress
from .rerun_cache import CACHE_DIR, RerunCache
from .run import read_sides

#: the workerinput key naming the directory of the controller's entries
WORKER_DIR = "rollout_parity_cache_dir"


def distributing(config: pytest.Config) -> bool:
    """This process is an xdist controller that will start workers."""
    if hasattr(config, "workerinput"):
        return False
    return bool(config.getoption("numprocesses", None) or config.getoption("tx", None))


class ShareWithWorkers:
    """The controller's side under xdist: each worker is told where the entries are."""

    def __init__(self, directory: Path, temporary: bool) -> None:
        self.directory = directory
        self.temporary = temporary

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_DIR] = str(self.directory)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Remove a temporary directory (pytest's cache stays for the next run)."""
        if self.temporary:
            shutil.rmtree(self.directory, ignore_errors=True)


def entries_dir(config: pytest.Config) -> Optional[Path]:
    """The directory of this process's entries: its controller's (an xdist worker), the plugin's
    directory in pytest's cache, or for a controller without the cacheprovider a temporary one; None
    when there is none (nothing is then kept)."""
    workerinput = getattr(config, "workerinput", None)
    if isinstance(workerinput, dict) and isinstance(workerinput.get(WORKER_DIR), str):
        return Path(workerinput[WORKER_DIR])
    cache = getattr(config, "cache", None)
    if cache is None and not distributing(config):
        return None
    try:
        directory = Path(cache.mkdir(CACHE_DIR) if cache is not None else tempfile.mkdtemp(prefix="rollout-parity-"))
    except OSError:  # a full disk, a read-only checkout: no cache, and the run goes on
        return None
    if distributing(config):
        config.pluginmanager.register(ShareWithWorkers(directory, cache is None), "rollout-parity-xdist-share")
    return directory


def gather_sides(
    config: pytest.Config, settings: ParitySettings, progress: Optional[LoadProgress] = None
) -> tuple[tuple[LoadedSide, LoadedSide], RerunCache]:
    """Both sides for this process, and the cache their comparison comes from (``.compare``); raises
    CompareInputError for an unusable input.

    ``progress`` shows the sides read in this process (not those taken from the cache); the one a
    reader child reads shows only its time, once it is in.
    """
    cache = RerunCache(entries_dir(config), progress)
    return read_sides(settings, cache.load), cache

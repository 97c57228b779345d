"""The pytest11 entry point: options, hookspecs, and the sub-plugins a gate run needs.

Without --parity-old/--parity-new (or their ini keys) nothing is loaded or registered beyond the
options and a `rollout_pair` fixture that skips.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import pytest

from . import hookspecs
from .collect import ParityFile
from ..core.errors import CompareInputError
from .fixtures import parametrize_rollout_pair, rollout_pair  # noqa: F401 - the fixture is registered here
from .placement import collect_new_file, keep_cache_out_of_inputs
from .run import ParityRun
from .settings import addoptions, settings_from_config
from .summary import ParitySummary

RUN_KEY = pytest.StashKey[ParityRun]()
INPUT_ERROR_EXIT = 4  # pytest's usage-error status: 2 before configure breaks in-process pytester runs


def pytest_addoption(parser: pytest.Parser) -> None:
    """The --parity-* options and their ini keys."""
    addoptions(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare pytest_parity_verdict for conftest.py files."""
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """Read both sides before anything runs: an unusable input stops here with one line."""
    if config.option.help or config.option.version:
        return None
    settings = settings_from_config(config)
    if settings is None:
        return None
    try:
        run = ParityRun.load(settings, config.invocation_params.dir)
    except CompareInputError as exc:
        sys.stderr.write(f"ERROR: {exc}\n")
        return INPUT_ERROR_EXIT
    config.stash[RUN_KEY] = run
    keep_cache_out_of_inputs(config, run.settings.old, run.settings.new)
    return None


def pytest_configure(config: pytest.Config) -> None:
    """Register the collection side everywhere and the summary where reports arrive."""
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return
    collect_new_file(config, run.settings.new)
    config.pluginmanager.register(ParityCollection(run), "rollout-parity-collection")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(ParitySummary(run), "rollout-parity-summary")


class ParityCollection:
    """Collection-side hooks, registered in every process that collects (serial or xdist worker)."""

    def __init__(self, run: ParityRun) -> None:
        self.run = run
        self.target = run.settings.new.resolve()

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Optional[ParityFile]:
        """The new rollouts file becomes the parity collector."""
        if file_path.resolve() == self.target:
            return ParityFile.for_run(parent, file_path, self.run)
        return None

    @pytest.hookimpl
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize `rollout_pair` tests with one case per task."""
        parametrize_rollout_pair(metafunc, self.run)

"""The gate switched on: settings validated, both sides read, collection and summary registered.

Imported by the entry point only when a run gives a parity option, so runs that do not use the
gate never import pydantic, tabulate or the core.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import pytest

from ..core.errors import CompareInputError
from ._pytest_compat import QuietPhaseReports
from .ci import ParityCI
from .collect import ParityFile, is_parity_report
from .fixtures import parametrize_rollout_pair
from .html import ParityHtmlRows, ParityHtmlSummary, html_report_requested
from .placement import collect_new_file
from .progress import progress_for
from .run import ParityRun
from .settings import settings_from_config
from .summary import ParitySummary

INPUT_ERROR_EXIT = 4  # pytest's usage-error status: 2 before configure breaks in-process pytester runs


def activate(config: pytest.Config) -> Optional[int]:
    """Read both sides; an unusable input stops the run here with one `ERROR:` line and status 4."""
    settings = settings_from_config(config)
    if settings is None:
        return None
    progress = progress_for(config)
    try:
        run = ParityRun.load(settings, config.invocation_params.dir, progress)
    except CompareInputError as exc:
        if progress is not None:
            progress.close()
        sys.stderr.write(f"ERROR: {exc}\n")
        return INPUT_ERROR_EXIT
    config.pluginmanager.register(ParityGate(run), "rollout-parity-gate")
    return None


class ParityGate:
    """Registers the collection side everywhere and the summary where reports arrive."""

    def __init__(self, run: ParityRun) -> None:
        self.run = run

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        collect_new_file(config, self.run.settings.new)
        config.pluginmanager.register(ParityCollection(self.run), "rollout-parity-collection")
        html = html_report_requested(config)
        if html:
            config.pluginmanager.register(ParityHtmlRows(), "rollout-parity-html-rows")
        if not hasattr(config, "workerinput"):
            summary = ParitySummary(self.run)
            config.pluginmanager.register(summary, "rollout-parity-summary")
            config.pluginmanager.register(ParityCI(summary), "rollout-parity-ci")
            if html:
                config.pluginmanager.register(ParityHtmlSummary(summary), "rollout-parity-html-summary")
            config.pluginmanager.register(QuietPhaseReports(is_parity_report), "rollout-parity-quiet-reports")


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

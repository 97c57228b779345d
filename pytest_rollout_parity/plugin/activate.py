"""The gate switched on: settings validated, both sides read, collection and summary registered.

Imported by the entry point only when a run gives a parity option, so runs that do not use the
gate never import the core, tabulate or pydantic-core.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Optional

import pytest

from ..core import FLIPS, CompareInputError, flip_html, header_line, read_known_flips, terminal_line, visible
from ._pytest_compat import collect_beside, hooks_at, item_collected
from .collect import MESSAGE_ATTRIBUTE, GateFinding, GateItem, ParityFile, ParityItem
from .fixtures import mark_checks, parametrize_rollout_pair
from .options import ParitySettings
from .placement import Selection, take_new_file
from .progress import progress_for
from .reporting import ParitySummary
from .run import RUN_KEY, ParityRun
from .settings import settings_from_config
from .sources import gather_sides

#: How each setting an input error concerns (:attr:`CompareInputError.setting`) is given to the
#: plugin, as the error line ends
HOW_TO_SET = {
    "key": " (use --parity-key)",
    "agent": "; choose one with --parity-agent NAME (both sides) or --parity-old-agent / --parity-new-agent NAME",
}


def error_line(exc: CompareInputError) -> str:
    """The input error as the plugin shows it: with how to give the setting it concerns, if any."""
    return f"{exc}{HOW_TO_SET[exc.setting]}" if exc.setting else str(exc)


def activate(config: pytest.Config) -> None:
    """Validate the settings now; the sides are read when pytest configures (its cache is ready then)."""
    settings = settings_from_config(config)
    if settings is not None:
        config.pluginmanager.register(ParityGate(settings), "rollout-parity-gate")


class ParityGate:
    """Reads both sides, then registers the collection side everywhere and the summary where reports arrive."""

    def __init__(self, settings: ParitySettings) -> None:
        self.settings = settings

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        """An unusable input stops the run here with one `ERROR:` line and status 4."""
        settings = self.settings
        progress = progress_for(config)
        try:
            # a malformed list stops the run before a row is read
            known = read_known_flips(settings.known_flips, settings.known_flips_shown) if settings.known_flips else None
            sides, comparisons = gather_sides(config, settings, progress)
            run = ParityRun.load(settings, config.invocation_params.dir, sides, known, comparisons.compare)
        except CompareInputError as exc:
            if progress is not None:
                progress.close()
            # the message may quote the data (an agent's name, a key): one line, never a workflow command
            raise pytest.UsageError(terminal_line(error_line(exc))) from None
        config.stash[RUN_KEY] = run
        collection = ParityCollection(config, run, take_new_file(config, settings.new))
        config.pluginmanager.register(collection, "rollout-parity-collection")
        if not hasattr(config, "workerinput"):
            config.pluginmanager.register(ParitySummary(run), "rollout-parity-summary")


class ParityCollection:
    """Collection-side hooks, registered in every process that collects (serial or xdist worker)."""

    def __init__(self, config: pytest.Config, run: ParityRun, selection: Selection) -> None:
        self.run = run
        self.selection = selection
        self.target = run.settings.new.resolve()
        #: pytest-html is loaded and asked for a report
        self.html = config.pluginmanager.hasplugin("html") and bool(config.getoption("htmlpath", None))

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Optional[ParityFile]:
        """The new rollouts file met in a directory the user named as a test path: the parity collector."""
        if self.selection.walked and file_path.resolve() == self.target:
            return ParityFile.for_run(parent, file_path)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """The gate's items, built here, not collected from the results' path (:mod:`.placement`).

        First among the implementations, so that `-k`, `-m`, `--deselect` and `--lf` select from
        them as from any collected item; their collector is reported like any collected file.
        Under --parity-plan no item runs, the gate's or any other: the run only prints the plan.
        """
        if self.run.settings.plan:
            if items:
                session.config.hook.pytest_deselected(items=list(items))
                items.clear()
            return
        mark_checks(session.config, items)  # before any selection: a check not run here is known as one
        if self.selection.walked and any(isinstance(item, GateItem) for item in items):
            return
        node = ParityFile.for_run(session, self.target)
        node.hooks = hooks_at(session.config, self.target)
        built = collect_beside(node)
        missing = self.selection.not_found({item.name for item in built})
        if missing:
            raise pytest.UsageError(*(f"not found: {arg}" for arg in missing))
        for item in built:
            if self.selection.keep(item.name):
                item_collected(item)
                items.append(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Under `--tb=line`, whose representation is the crash line alone, a gate item's finding keeps
        its whole text on its report (:data:`.collect.MESSAGE_ATTRIBUTE`) for the reports; an xdist
        worker sends it with the report. Every other style shows the whole message, and the report
        then carries exactly a plain test's fields (other plugins' records stay alike).

        When pytest-html writes a report, a flip whose row does not show its message already (one
        that did not fail: a hook, margin mode, an agent error show only their reason) carries its
        evidence as pytest-html's documented `report.extras` entry, a plain dict (no import of it)."""
        report = yield
        finding = call.excinfo.value if call.excinfo is not None else None
        if item.config.option.tbstyle == "line" and isinstance(finding, GateFinding) and isinstance(item, GateItem):
            setattr(report, MESSAGE_ATTRIBUTE, finding.body)
        if self.html and report.when == "call" and isinstance(item, ParityItem) and not report.failed:
            comparison = self.run.result.tasks[item.index]
            if comparison.category in FLIPS:
                headline = f"{visible(comparison.task)}: {header_line(comparison)}"
                content = flip_html(headline, self.run.flip_evidence(item.index).text)
                extra = {"name": None, "format_type": "html", "content": content, "mime_type": None, "extension": None}
                report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]
        return report

    @pytest.hookimpl
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrize `rollout_pair` tests with one case per task."""
        parametrize_rollout_pair(metafunc, self.run)

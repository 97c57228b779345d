"""Controller-side reporting: the `rollout parity` terminal section, the JSON file, the exit status.

Registered only where the run's reports arrive (a serial run or the xdist controller), so the
summary appears once. It reads the same :class:`CompareResult` the items were built from.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from .collect import CATEGORY_PROPERTY, TASK_PROPERTY, VERDICT_PROPERTY
from ..core.report import summary_dict, summary_lines, write_json_atomically
from .run import ParityRun

NOTHING_COMPARED_EXIT = 2


class ParitySummary:
    """Counts what the parity items did, then writes the summary once at the end."""

    def __init__(self, run: ParityRun) -> None:
        self.run = run
        self.ran: set[str] = set()
        self.verdicts_changed = 0
        self.outcomes: dict[str, int] = {}
        self.summary: Optional[dict[str, Any]] = None

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count the outcome of each parity item that ran (serial, or from xdist workers)."""
        properties = dict(report.user_properties)
        if TASK_PROPERTY not in properties or CATEGORY_PROPERTY not in properties:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.ran.add(report.nodeid)
            outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            if VERDICT_PROPERTY in properties:
                self.verdicts_changed += 1

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Build the one summary object; write it as JSON; settle the exit status."""
        ran = None if session.config.option.collectonly else len(self.ran)
        info = self.run.run_info(selected=ran, verdicts_changed=self.verdicts_changed, outcomes=self.outcomes)
        self.summary = summary_dict(self.run.result, info, paired=self.run.paired, margin=self.run.settings.margin)
        json_path = self.run.settings.json_path
        if json_path is not None:
            try:
                write_json_atomically(json_path, self.summary)
            except OSError as exc:
                tr = session.config.pluginmanager.get_plugin("terminalreporter")
                message = f"--parity-json: cannot write {json_path}: {exc.strerror or exc}"
                if tr is not None:
                    tr.write_line(f"ERROR: {message}", red=True)
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        _forget_quiet_phase_reports(session.config)
        if self.summary["nothing_compared"] and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = NOTHING_COMPARED_EXIT

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The `rollout parity` section, from the summary built at session finish."""
        if self.summary is None:
            return
        terminalreporter.write_sep("=", "rollout parity")
        for line in summary_lines(self.summary):
            terminalreporter.write_line(line)


def _forget_quiet_phase_reports(config: pytest.Config) -> None:
    """Drop parity items' passed setup/teardown reports that carry no output from the reporter's stats.

    The terminal reporter scans every such report once per failure to find teardown output; with
    thousands of items and hundreds of flips that scan costs more than the whole run. Parity items
    never write teardown output, so their quiet phase reports are never shown anyway.
    """
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", None)
    if not isinstance(stats, dict) or not stats.get(""):
        return
    stats[""] = [report for report in stats[""] if not _is_quiet_parity_phase(report)]


def _is_quiet_parity_phase(report: object) -> bool:
    properties = getattr(report, "user_properties", None)
    return (
        getattr(report, "when", None) in ("setup", "teardown")
        and getattr(report, "passed", False)
        and not getattr(report, "sections", None)
        and bool(properties)
        and properties[0][0] == TASK_PROPERTY  # type: ignore[index]
    )

"""The two places where the plugin reaches past pytest's public API, because no public way exists.

Tested with pytest 8.0 and 9.2. Both touch objects pytest made for this run only (a failure's
representation, the terminal reporter's lists of reports); if their shape changes, both do nothing
and the run stays correct, only the crash line, the --tb=line/short body or the speed of a large
run changes.

1. **The crash line of a flip, and its body per --tb style.** pytest takes a failure's one-line
   crash message (the short summary line, in CI the whole line; JUnit's ``message``; the
   ``path:line: message`` of ``--tb=line``) from the exception text and the code location:
   ``pytest.fail(text, pytrace=False)`` gives ``"Failed: " + text`` with every line of the text
   (the verifier log tail included) at a line of the plugin's own code. No hook or option chooses
   that line, so :func:`set_crash_message` writes the flip's header, and the task's row in the new
   file as its location, into the representation ``Item.repr_failure`` has just built. With a
   ``pytrace=False`` failure pytest renders every style as the whole message, and ``--tb=line``
   prints that body before the crash line; :func:`keep_message_lines` cuts the body to what the
   style asks for (none for line, the header for short).

2. **Quiet phase reports, set aside while failures are rendered.** pytest's terminal reporter keeps
   every passed setup/teardown report under the empty category and, for each failure it renders
   (and each pass with ``-rP``), scans all of them for teardown output (``_get_teardown_reports``):
   O(items x failures), longer than the whole gate run at 10,000 items with 175 flips. The public
   ``pytest_report_teststatus`` hook can file them under a category of their own, but every
   non-empty category is counted in the final stats line and turns an all-passed line yellow.
   :class:`QuietPhaseReports` takes the parity items' quiet setup/teardown reports (passed, no
   captured output: never shown) out of that list at session finish, before the reporter renders
   failures, and puts them back first thing in ``pytest_terminal_summary``, which runs after the
   failures are rendered and before ``--durations`` reads the reports, so durations list them.
   Without ``--durations`` nothing ever reads them again, so each is dropped as it arrives: on a
   5,000-task pair they held about 10 MB until the end of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import pytest


def set_crash_message(representation: object, message: str, location: Optional[tuple[str, int]] = None) -> None:
    """Make ``message`` (at ``location``: path, 1-based line) the crash line of a failure (docstring, 1)."""
    crash = getattr(representation, "reprcrash", None)
    if crash is not None and hasattr(crash, "message"):
        crash.message = message
        if location is not None and hasattr(crash, "path") and hasattr(crash, "lineno"):
            crash.path, crash.lineno = location


def keep_message_lines(representation: object, count: int) -> None:
    """Keep the first ``count`` lines of a ``pytrace=False`` failure's message body (docstring, 1)."""
    traceback = getattr(representation, "reprtraceback", None)
    entries = getattr(traceback, "reprentries", None)
    if not entries or not isinstance(getattr(entries[-1], "lines", None), list):
        return
    del entries[-1].lines[count:]


class QuietPhaseReports:
    """Sets the parity items' quiet setup/teardown reports aside while failures are rendered (2)."""

    def __init__(self, config: pytest.Config, is_parity: Callable[[Any], bool]) -> None:
        self.config = config
        self.is_parity = is_parity
        self.durations: Optional[bool] = None  # read at the first report: a conftest may set it
        self.aside: list[Any] = []

    def _quiet(self, report: Any) -> bool:
        return (
            getattr(report, "when", None) in ("setup", "teardown")
            and getattr(report, "passed", False)
            and not getattr(report, "sections", None)
            and self.is_parity(report)
        )

    @staticmethod
    def _reports(config: pytest.Config) -> Any:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(reporter, "stats", None)
        reports = stats.get("") if isinstance(stats, dict) else None
        return reports if isinstance(reports, list) else None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Without --durations, drop a quiet report the terminal reporter has just filed (2)."""
        if self.durations is None:
            self.durations = self.config.getoption("durations", None) is not None
        if self.durations or not self._quiet(report):
            return
        reports = self._reports(self.config)
        if reports and reports[-1] is report:
            reports.pop()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        reports = self._reports(session.config)
        if not reports:
            return
        kept: list[Any] = []
        for report in reports:
            (self.aside if self._quiet(report) else kept).append(report)
        reports[:] = kept

    @pytest.hookimpl(tryfirst=True)
    def pytest_terminal_summary(self, config: pytest.Config) -> None:
        reports = self._reports(config)
        if self.aside and reports is not None:
            reports.extend(self.aside)
        self.aside = []

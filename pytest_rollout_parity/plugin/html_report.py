"""The HTML reports: `--parity-html`'s page, and inside pytest-html's report the same content.

pytest-html: the report's summary carries the gate's report (without the flips' evidence), and a
flip whose row does not show its message already (one that did not fail) carries it as an extra.

Registered only when pytest-html is loaded and writes a report (`--html`): its hooks exist only
then (pluggy rejects an implementation of a hook nobody declared), and without it nothing changes.
The extra is pytest-html's documented `report.extras` entry, built as a plain dict so this module
needs no import of pytest-html.
"""

from __future__ import annotations

import shlex
from collections.abc import Generator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

import pytest

from ..core import (
    FLIPS,
    Audit,
    fit,
    flip_html,
    header_line,
    render_html,
    skipped_line,
    summary_html,
    visible,
    write_output,
)
from .collect import ParityItem, terminal_width
from .reporting import ParitySummary
from .rerun_cache import release


def html_report_requested(config: pytest.Config) -> bool:
    """pytest-html is loaded and asked for a report."""
    return config.pluginmanager.hasplugin("html") and bool(config.getoption("htmlpath", None))


class ParityHtmlRows:
    """Where items run (serial, or each xdist worker): a flip's call report gets the extra."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when != "call" or not isinstance(item, ParityItem):
            return report
        comparison = item.run.result.tasks[item.index]
        if comparison.category not in FLIPS or report.failed:
            return report  # a failed flip's row shows its message (pytest-html's log): once is enough
        # another outcome (a hook, margin mode, an agent error) shows only its reason: the evidence goes here
        text = item.run.flip_message(item.index)
        extra = {
            "name": None,
            "format_type": "html",
            "content": flip_html(_headline(item), text),
            "mime_type": None,
            "extension": None,
        }
        report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]
        return report


def _headline(item: ParityItem) -> str:
    """`<task>: <direction>: old=<reward> new=<reward>` of the item's task (its crash line's words)."""
    comparison = item.run.result.tasks[item.index]
    return f"{visible(comparison.task)}: {header_line(comparison)}"


class ParityHtmlPage:
    """On the controller: the report as one self-contained page (`--parity-html`), at session finish."""

    def __init__(self, summary: ParitySummary, target: Path) -> None:
        self.summary = summary
        self.target = target
        self.problem: Optional[str] = None
        self.started: Optional[str] = None

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """The run's start, for the page's footer."""
        self.started = datetime.now(timezone.utc).isoformat(timespec="seconds")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After the summary is built and the exit status settled."""
        built = self.summary.summary
        if built is None:
            return
        config = session.config
        audit = Audit(
            command=shlex.join(["pytest", *config.invocation_params.args]),
            version=release(),
            started=self.started or "unknown",
        )
        try:
            skipped = write_output(self.target, render_html(built, int(session.exitstatus), audit=audit))
        except OSError as exc:
            self.problem = f"ERROR: --parity-html: cannot write {self.target}: {exc.strerror or exc}"
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
        else:
            if skipped is not None:
                self.problem = skipped_line("--parity-html", self.target, skipped)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """A page that could not be written, on its own line."""
        if self.problem is not None:
            for line in fit([self.problem], terminal_width(terminalreporter.config)):
                terminalreporter.write_line(line, red=True)


class ParityHtmlSummary:
    """On the controller: the parity verdict and counts at the top of the report."""

    def __init__(self, summary: ParitySummary) -> None:
        self.summary = summary

    @pytest.hookimpl
    def pytest_html_results_summary(self, prefix: list[Any], summary: list[Any], postfix: list[Any]) -> None:
        built = self.summary.summary
        if built is not None:
            prefix.append(summary_html(built))

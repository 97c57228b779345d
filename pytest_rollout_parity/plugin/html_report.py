"""pytest-html: a flip's row carries its rewards and log tail as an extra; the summary the parity counts.

Registered only when pytest-html is loaded and writes a report (`--html`): its hooks exist only
then (pluggy rejects an implementation of a hook nobody declared), and without it nothing changes.
The extra is pytest-html's documented `report.extras` entry, built as a plain dict so this module
needs no import of pytest-html.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..core import FLIPS, flip_html, header_line, summary_html, visible
from .collect import ParityItem
from .reporting import ParitySummary


def html_report_requested(config: pytest.Config) -> bool:
    """pytest-html is loaded and asked for a report."""
    return config.pluginmanager.hasplugin("html") and bool(config.getoption("htmlpath", None))


class ParityHtmlRows:
    """Where items run (serial, or each xdist worker): a flip's call report gets the extra."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
            None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.when != "call" or not isinstance(item, ParityItem):
            return report
        comparison = item.run.result.tasks[item.index]
        if comparison.category not in FLIPS:
            return report
        # a failed flip's report already holds its message; another outcome (a hook, margin mode) reads it now
        text = report.longreprtext if report.failed else item.run.flip_message(item.index)
        extra = {"name": None, "format_type": "html", "content": flip_html(_headline(item), text),
                 "mime_type": None, "extension": None}
        report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]
        return report


def _headline(item: ParityItem) -> str:
    """`<task>: <direction>: old=<reward> new=<reward>` of the item's task (its crash line's words)."""
    comparison = item.run.result.tasks[item.index]
    return f"{visible(comparison.task)}: {header_line(comparison)}"


class ParityHtmlSummary:
    """On the controller: the parity verdict and counts at the top of the report."""

    def __init__(self, summary: ParitySummary) -> None:
        self.summary = summary

    @pytest.hookimpl
    def pytest_html_results_summary(self, prefix: list[Any], summary: list[Any], postfix: list[Any]) -> None:
        built = self.summary.summary
        if built is not None:
            prefix.append(summary_html(built))

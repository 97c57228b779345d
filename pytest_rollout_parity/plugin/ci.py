"""Reports for CI: the Markdown summary (`--parity-markdown`, `$GITHUB_STEP_SUMMARY`), the verdict as
a step output (`$GITHUB_OUTPUT`) and GitHub annotations.

Registered beside :class:`ParitySummary` only where reports arrive (a serial run or the xdist
controller), so a job page gets the summary once. The flips' texts (header, log tail) are taken from
their reports as they arrive: the controller never reads a verifier log again.
"""

from __future__ import annotations

import os

import pytest

from ..core import annotation_lines, ci_files, fit, publish_to_ci, render_markdown, skipped_line, write_output
from .collect import terminal_width
from .reporting import ParitySummary

#: the entry-point name of pytest-github-actions-annotate-failures, which annotates every failed test
ANNOTATE_FAILURES = "pytest_github_actions_annotate_failures"


class ParityCI:
    """Writes the Markdown at session finish; prints annotations (the flips' texts are the summary's)."""

    def __init__(self, summary: ParitySummary) -> None:
        self.summary = summary
        #: lines about reports not written, kept for the terminal summary (with their markup)
        self.problems: list[tuple[str, dict[str, bool]]] = []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After the summary is built and the exit status settled: the Markdown file, the job page
        (`$GITHUB_STEP_SUMMARY`) and the step's outputs (`$GITHUB_OUTPUT`: `verdict=...`)."""
        summary = self.summary.summary
        target = self.summary.run.settings.markdown_path
        if summary is None or (target is None and not ci_files()):
            return
        markdown = render_markdown(summary, exit_status=int(session.exitstatus))
        if target is not None:
            try:
                skipped = write_output(target, markdown)
            except OSError as exc:
                self.problems.append(
                    (f"ERROR: --parity-markdown: cannot write {target}: {exc.strerror or exc}", {"red": True})
                )
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
            else:
                if skipped is not None:
                    self.problems.append((skipped_line("--parity-markdown", target, skipped), {"yellow": True}))
        # the job page or a later step lacks the summary; the verdict itself still stands
        self.problems.extend((line, {"yellow": True}) for line in publish_to_ci(markdown, summary.verdict))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """A report that could not be written (each on its own line: the progress line may still be
        open when the session finishes); under GitHub Actions, one `::error` command per failed flip,
        unless pytest-github-actions-annotate-failures is active: it annotates each failed item already."""
        width = terminal_width(terminalreporter.config)
        for line, markup in self.problems:
            for part in fit([line], width):
                terminalreporter.write_line(part, **markup)
        summary = self.summary.summary
        if summary is None or os.environ.get("GITHUB_ACTIONS") != "true":
            return
        if terminalreporter.config.pluginmanager.hasplugin(ANNOTATE_FAILURES):
            return
        for line in annotation_lines(summary, self.summary.failed_flips):
            terminalreporter.write_line(line)

"""Controller-side reporting: the `rollout parity` section, the JSON, Markdown and HTML reports, the
CI outputs and annotations, the JUnit properties and the exit status.

Registered only where the run's reports arrive (a serial run or the xdist controller), so the
summary appears once; the flips' texts come with their reports, so the controller never reads a
verifier log again.
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from collections.abc import Generator
from dataclasses import fields
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path
from typing import Any, Optional

import pytest

from .. import core
from ._pytest_compat import add_junit_suite_property
from .collect import (
    CATEGORY_PROPERTY,
    CHECK_PROPERTY,
    CHECKS_KEY,
    GATE_PROPERTY,
    MESSAGE_ATTRIBUTE,
    NO_OUTPUT_PROPERTY,
    SOURCE_PROPERTY,
    TASK_PROPERTY,
    VERDICT_PROPERTY,
    terminal_width,
)
from .run import RUN_KEY, ParityRun, collector_paused

#: pytest's traceback styles whose failure section does not rescan the stored reports per failure
LINEAR_TB_STYLES = ("line", "no")
#: the entry-point name of pytest-github-actions-annotate-failures, which annotates every failed test
ANNOTATE_FAILURES = "pytest_github_actions_annotate_failures"


def splitter_group(config: pytest.Config) -> Optional[core.SplitGroup]:
    """The group this run is of a test splitter that says so in its options: pytest-split's
    `--splits N --group i`, pytest-shard's `--num-shards N --shard-id i` (counted from 0; shown from 1)."""
    option = config.option
    splits, group = getattr(option, "splits", None), getattr(option, "group", None)
    if isinstance(splits, int) and isinstance(group, int) and splits > 0:
        return core.SplitGroup("pytest-split", group, splits)
    shards, shard = getattr(option, "num_shards", None), getattr(option, "shard_id", None)
    if isinstance(shards, int) and isinstance(shard, int) and shards > 1:
        return core.SplitGroup("pytest-shard", shard + 1, shards)
    return None


def session_failures(config: pytest.Config) -> int:
    """How many reports of the whole session failed or errored (any test's), as the terminal counted them."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", None) or {}
    return sum(
        1
        for key in ("failed", "error")
        for report in stats.get(key, ())
        if getattr(report, "when", "call") in ("call", "setup", "teardown")
    )


def release() -> str:
    """The plugin's installed version (`unknown` when it is run from a tree that was never installed)."""
    try:
        return version("pytest-rollout-parity")
    except Exception:
        return "unknown"


class ParitySummary:
    """Counts what the parity items did, then builds the summary once and writes every report of it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        #: each parity item's last report by node id (a rerun by pytest-rerunfailures replaces the
        #: earlier one): its user properties, its outcome, and its failure text or xfail reason
        self.ran: dict[str, tuple[dict[str, object], str, Optional[str]]] = {}
        self.summary: Optional[core.Summary] = None
        #: reports that could not be written, each with its colour, for the terminal summary
        self.problems: list[tuple[str, str]] = []
        #: each of the team's checks that ran, by node id: (its task, its outcome over setup, call and teardown)
        self.checks: dict[str, tuple[str, str]] = {}
        #: the run's start (this plugin is registered as pytest configures), for the HTML page's footer
        self.started = datetime.now(timezone.utc).isoformat(timespec="seconds")

    @property
    def run(self) -> ParityRun:
        return self.config.stash[RUN_KEY]

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        """Let go of the summary and the items' records (this plugin outlives the run in pytest's
        record of registrations) before pytest's closing full collections walk each of their objects."""
        self.summary = None
        self.ran.clear()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note the outcome of each parity item that ran, here or on an xdist worker: the task items,
        the gate-level items and the team's checks."""
        if str(report.outcome) == "rerun":  # pytest-rerunfailures: an attempt it runs again (not in pytest's type)
            return
        properties = dict(report.user_properties)
        if CHECK_PROPERTY in properties:
            self._check(report, str(properties[CHECK_PROPERTY]))
            return
        if not ({TASK_PROPERTY, CATEGORY_PROPERTY} <= properties.keys() or GATE_PROPERTY in properties):
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            text = None
            if hasattr(report, "wasxfail"):
                text = str(report.wasxfail)
            elif report.failed:
                whole = getattr(report, MESSAGE_ATTRIBUTE, None)  # set under --tb=line, which shows a line of it
                # else the representation itself: not `longreprtext`, which heads an xdist worker's report
                # with the worker's line (`[gw1] linux -- Python ...`)
                text = whole if isinstance(whole, str) else str(report.longrepr)
            outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.ran[report.nodeid] = (properties, outcome, text)

    def _check(self, report: pytest.TestReport, task: str) -> None:
        """A team's check: failed when its setup, call or teardown failed; else its call's outcome
        (or its setup's, for a skip there). A rerun attempt (pytest-rerunfailures) starts over at setup."""
        before = self.checks.get(report.nodeid, (task, None))[1] if report.when != "setup" else None
        if before == "failed" or (report.when == "teardown" and not report.failed):
            return
        outcome = str(report.outcome)
        if hasattr(report, "wasxfail"):  # never on a failed report (a strict xpass fails without it)
            outcome = "xfailed" if report.skipped else "xpassed"
        self.checks[report.nodeid] = (task, outcome)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        """Before every other plugin's session finish (junitxml writes its file there: the suite
        carries the verdict), build the summary and write the JSON; after them, with the exit status
        settled (the reports state it), the Markdown, the job page and step outputs, the HTML page."""
        with collector_paused():
            self._build(session)
        result = yield
        if self.summary is not None:
            self._publish(session, self.summary)
        return result

    def _build(self, session: pytest.Session) -> None:
        run, settings, config = self.run, self.run.settings, session.config
        tasks = {str(p[TASK_PROPERTY]): (p, out, text) for p, out, text in self.ran.values() if TASK_PROPERTY in p}
        gates = {str(p[GATE_PROPERTY]): out for p, out, _ in self.ran.values() if GATE_PROPERTY in p}
        flips = {task: ran for task, ran in tasks.items() if ran[0].get(CATEGORY_PROPERTY) in core.FLIPS}
        hook_verdicts = {}
        for task, (properties, _, _) in tasks.items():
            given, _, reason = str(properties.get(VERDICT_PROPERTY, "")).partition(": ")
            if (verdict := core.Verdict.read(given, reason, properties.get(SOURCE_PROPERTY))) is not None:
                hook_verdicts[task] = verdict
        known = run.known_flips
        # a note per side whose glob matched files written beside the rollouts; then the known flips' notes
        notes: list[str] = []
        for side in ("old", "new"):
            if names := getattr(settings, f"{side}_left_out"):
                shown = "; ".join(f"{name} ({what})" for name, what in names[:5])
                more = f" and {len(names) - 5} more" if len(names) > 5 else ""
                notes.append(f"{side} side: its glob also matched files that are no rollouts, left out: {shown}{more}")
        if known is not None:
            notes.extend(known.notes(run.result.tasks))
        # the prompt excerpts of the first flips, by task label (reads a row each)
        excerpts = [task for task in run.result.tasks if task.category in core.FLIPS][: core.EXCERPT_CAP]
        info = core.RunInfo(
            files=core.BySide(*(_side_file(side) for side in (run.old, run.new))),
            outcome=core.RunOutcome(
                selected=None if config.option.collectonly or settings.plan else len(self.ran),
                verdicts_changed_by_hook=len(hook_verdicts),
                outcomes=dict(Counter(outcome for _, outcome, _ in self.ran.values())),
                known_flips=known.shown if known is not None else None,
                gate=tuple(core.GateItem(name, name in gates, gates.get(name)) for name in run.gate_items),
                inputs={"old": run.old.digest, "new": run.new.digest},
                options=self._decision_options(),
                checks=self._check_runs(config),
                collect_only=bool(config.option.collectonly),
            ),
            same_file=settings.shared_file is not None,
            aggregate=run.aggregate,
            hook_verdicts=hook_verdicts,
            known_flips_sha256=known.sha256 if known is not None else None,
            notes=tuple(notes),
            inventory=run.inventory or {},
            ran_tasks=None if settings.plan or len(tasks) >= len(run.result.tasks) else frozenset(tasks),
            evidence={task: text for task, (_, _, text) in flips.items() if text is not None},
            no_output=sum(1 for properties, _, _ in flips.values() if NO_OUTPUT_PROPERTY in properties),
            excerpts={
                task.task: prompt
                for task in excerpts
                if run.wants_excerpt and (prompt := core.task_prompt(task)) is not None
            },
            task_outcomes={task: outcome for task, (_, outcome, _) in tasks.items()},
            group=splitter_group(config),
            session_failures=session_failures(config),
            failure_section_rescans=config.getoption("tbstyle", "auto") not in LINEAR_TB_STYLES,
        )
        self.summary = summary = core.build_summary(
            run.result,
            info,
            paired=run.paired,
            margin=settings.margin,
            coverage=run.coverage,
            alpha=settings.alpha,
            decisions=run.decisions,
            strict=settings.strict,
            allow_copy=settings.allow_copy,
            with_plan=settings.plan,
        )
        if settings.plan and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.OK  # a plan is no finding: nothing ran, nothing failed
        add_junit_suite_property(config, "parity_verdict", summary.verdict)
        if summary.failed_checks:
            add_junit_suite_property(config, "parity_checks_failed", " ".join(summary.failed_checks))
        if settings.json_path is not None:
            self._write(session, "--parity-json", settings.json_path, core.json_text(core.json_dict(summary)) + "\n")

    def _publish(self, session: pytest.Session, summary: core.Summary) -> None:
        settings = self.run.settings
        if settings.markdown_path is not None or core.ci_files():
            markdown = core.render_markdown(summary, exit_status=int(session.exitstatus))
            if settings.markdown_path is not None:
                self._write(session, "--parity-markdown", settings.markdown_path, markdown)
            # the job page or a later step lacks the summary; the verdict itself still stands
            self.problems.extend((line, "yellow") for line in core.publish_to_ci(markdown, summary.verdict))
        if settings.html_path is not None:
            command = shlex.join(["pytest", *session.config.invocation_params.args])
            audit = core.Audit(command=command, version=release(), started=self.started)
            html = core.render_html(summary, int(session.exitstatus), audit=audit)
            self._write(session, "--parity-html", settings.html_path, html)

    def _write(self, session: pytest.Session, option: str, path: Path, text: str) -> None:
        """Write one report unless its path is no place for one (a link, a FIFO); one that cannot be
        written is a usage error, printed with the terminal summary (the `-q` line may be open here)."""
        try:
            skipped = core.write_output(path, text)
        except OSError as exc:
            self.problems.append((f"ERROR: {option}: cannot write {path}: {exc.strerror or exc}", "red"))
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        if skipped is not None:
            self.problems.append((core.skipped_line(option, path, skipped), "yellow"))

    def _check_runs(self, config: pytest.Config) -> tuple[core.CheckRun, ...]:
        """The team's checks: those collected here (before any selection), then any other that ran
        (an xdist worker's), each with its outcome here (None: not run here)."""
        collected = config.stash.get(CHECKS_KEY, {})
        every = {**collected, **{nodeid: task for nodeid, (task, _) in self.checks.items()}}  # collected first
        return tuple(core.CheckRun(node, task, self.checks.get(node, (task, None))[1]) for node, task in every.items())

    def _decision_options(self) -> core.Options:
        """The settings that decide an item's outcome: the parts of a split run are
        merged only when theirs are equal (the known flips by the tasks and reasons they accept)."""
        settings, known = self.run.settings, self.run.known_flips
        # each a setting of the same name (a side's: old_<name>, new_<name>); a limit as it was written
        key = core.BySide(settings.old_key, settings.new_key)
        agent = core.BySide(settings.old_agent, settings.new_agent)
        own = [each.name for each in fields(core.Options) if each.name not in ("key", "agent", "known_flips")]
        taken = {name: getattr(settings, name) for name in own}
        taken.update((name, taken[name].text) for name in ("max_missing", "max_masked", "max_uncompared"))
        accepted = tuple(sorted((e.task, e.reason) for e in known.entries.values())) if known else None
        return core.Options(**taken, key=key, agent=agent, known_flips=accepted)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Reports not written; the `rollout parity` section; under GitHub Actions, an `::error` per failed
        flip unless pytest-github-actions-annotate-failures, which annotates each failed item, is active."""
        width = terminal_width(terminalreporter.config)
        for line, colour in self.problems:
            for part in core.fit([line], width):
                terminalreporter.write_line(part, **{colour: True})
        if self.summary is None:
            return
        terminalreporter.write_sep("=", "rollout parity")
        lines = core.summary_lines(self.summary)
        if self.run.settings.plan:
            lines.insert(0, "--parity-plan: no item ran; the verdict and the plan below are the data's")
        for line in core.fit(lines, width):
            terminalreporter.write_line(line)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            if not terminalreporter.config.pluginmanager.hasplugin(ANNOTATE_FAILURES):
                failed = {task.task for task in self.summary.flips if task.item_outcome == "failed"}
                for line in core.annotation_lines(self.summary, failed):
                    terminalreporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[Any], summary: list[Any], postfix: list[Any]) -> None:
        """pytest-html's report: the parity verdict and counts at its top."""
        if self.summary is not None:
            prefix.append(core.report_body(self.summary, with_evidence=False))


def _side_file(side: core.LoadedSide) -> core.SideFile:
    """A side's file as shown; its sidecar only for a side of one file (a sharded side's are counted)."""
    sidecar = None if side.shards or side.sidecar is None else core.sidecar_display(side.display, side.path)
    sidecars = sum(1 for _, _, each in side.files if each is not None)
    return core.SideFile(side.display, sidecar, len(side.files), sidecars)

"""Controller-side reporting: the `rollout parity` terminal section, the JSON file, the exit status.

Registered only where the run's reports arrive (a serial run or the xdist controller), so the
summary appears once. It reads the same :class:`CompareResult` the items were built from.
"""

from __future__ import annotations

from typing import Optional

import pytest

from ..core import (
    FLIPS,
    CheckRun,
    SplitGroup,
    Summary,
    Verdict,
    build_summary,
    fit,
    skipped_line,
    summary_lines,
    unsafe,
    write_json,
)
from ._pytest_compat import add_junit_suite_property
from .collect import (
    CATEGORY_PROPERTY,
    GATE_PROPERTY,
    MESSAGE_ATTRIBUTE,
    NO_OUTPUT_PROPERTY,
    SOURCE_PROPERTY,
    TASK_PROPERTY,
    VERDICT_PROPERTY,
    hook_verdict,
    terminal_width,
)
from .fixtures import CHECK_PROPERTY, CHECKS_KEY
from .run import ParityRun

#: pytest's traceback styles whose failure section does not rescan the stored reports per failure
LINEAR_TB_STYLES = ("line", "no")


def splitter_group(config: pytest.Config) -> Optional[SplitGroup]:
    """The group this run is of a test splitter that says so in its options: pytest-split's
    `--splits N --group i`, pytest-shard's `--num-shards N --shard-id i` (counted from 0; shown from 1)."""
    option = config.option
    splits, group = getattr(option, "splits", None), getattr(option, "group", None)
    if isinstance(splits, int) and isinstance(group, int) and splits > 0:
        return SplitGroup("pytest-split", group, splits)
    shards, shard = getattr(option, "num_shards", None), getattr(option, "shard_id", None)
    if isinstance(shards, int) and isinstance(shard, int) and shards > 1:
        return SplitGroup("pytest-shard", shard + 1, shards)
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


class ParitySummary:
    """Counts what the parity items did, then writes the summary once at the end."""

    def __init__(self, run: ParityRun) -> None:
        self.run = run
        #: each item's last outcome by node id: a rerun (pytest-rerunfailures) replaces the earlier one
        self.outcome_of: dict[str, str] = {}
        #: what each parity item that ran is, by node id: ("task", label) or ("gate", item name)
        self.item_of: dict[str, tuple[str, str]] = {}
        #: the hook verdicts that changed an item's outcome, by node id (task label, verdict)
        self.changed_by_hook: dict[str, tuple[str, Verdict]] = {}
        self.summary: Optional[Summary] = None
        #: reports that could not be written, for the terminal summary
        self.problems: list[str] = []
        #: each flip's report text (its failure message, or its xfail reason) by task label
        self.texts: dict[str, str] = {}
        #: the flips whose item failed, and those whose losing row has no verifier output at all
        self.failed_flips: set[str] = set()
        self.no_output: set[str] = set()
        #: each of the team's checks that ran, by node id: (its task, its outcome over setup, call and teardown)
        self.checks: dict[str, tuple[str, str]] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Note the outcome of each parity item that ran (serial, or from xdist workers): the task
        items and the gate-level items (any item that carries GATE_PROPERTY), each once."""
        properties = dict(report.user_properties)
        if CHECK_PROPERTY in properties:
            self._check(report, str(properties[CHECK_PROPERTY]))
            return
        task_item = TASK_PROPERTY in properties and CATEGORY_PROPERTY in properties
        if not task_item and GATE_PROPERTY not in properties:
            return
        if str(report.outcome) == "rerun":  # pytest-rerunfailures: an attempt it runs again (not in pytest's type)
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self._flip_text(report, properties)
            self.outcome_of[report.nodeid] = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.item_of[report.nodeid] = (
                ("task", str(properties[TASK_PROPERTY])) if task_item else ("gate", str(properties[GATE_PROPERTY]))
            )
            self.changed_by_hook.pop(report.nodeid, None)
            if VERDICT_PROPERTY in properties:
                given, reason = hook_verdict(str(properties[VERDICT_PROPERTY]))
                verdict = Verdict.read(given, reason, properties.get(SOURCE_PROPERTY))
                if verdict is not None:
                    self.changed_by_hook[report.nodeid] = (str(properties[TASK_PROPERTY]), verdict)

    def _check(self, report: pytest.TestReport, task: str) -> None:
        """A team's check: failed when its setup, call or teardown failed; else its call's outcome
        (or its setup's, for a skip there). A rerun attempt (pytest-rerunfailures) starts over at setup."""
        if str(report.outcome) == "rerun":
            return
        before = self.checks.get(report.nodeid, (task, None))[1] if report.when != "setup" else None
        if before == "failed" or (report.when == "teardown" and not report.failed):
            return
        if report.failed:
            outcome = "failed"
        elif hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        else:
            outcome = str(report.outcome)
        self.checks[report.nodeid] = (task, outcome)

    def _flip_text(self, report: pytest.TestReport, properties: dict[str, object]) -> None:
        """Keep a flip's failure text (or its xfail reason) by task label, as its report brings it."""
        task = properties.get(TASK_PROPERTY)
        if not isinstance(task, str) or properties.get(CATEGORY_PROPERTY) not in FLIPS:
            return
        self.failed_flips.discard(task)
        if hasattr(report, "wasxfail"):
            self.texts[task] = str(report.wasxfail)
        elif report.failed:
            whole = getattr(report, MESSAGE_ATTRIBUTE, None)  # set under --tb=line, which shows a line of it
            # else the representation itself: not `longreprtext`, which heads an xdist worker's report
            # with the worker's line (`[gw1] linux -- Python ...`)
            self.texts[task] = whole if isinstance(whole, str) else str(report.longrepr)
            self.failed_flips.add(task)
        if NO_OUTPUT_PROPERTY in properties:
            self.no_output.add(task)

    @pytest.hookimpl(tryfirst=True)  # before junitxml writes its file: the suite carries the verdict
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Build the one summary object; write it as JSON; settle the exit status from its fields."""
        planning = self.run.settings.plan
        ran = None if session.config.option.collectonly or planning else len(self.outcome_of)
        outcomes: dict[str, int] = {}
        for outcome in self.outcome_of.values():
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        hook_verdicts = dict(self.changed_by_hook.values())
        kinds: dict[str, dict[str, str]] = {"task": {}, "gate": {}}
        for nodeid, (kind, name) in self.item_of.items():
            kinds[kind][name] = self.outcome_of[nodeid]
        config = session.config
        ran_tasks = frozenset(kinds["task"])
        every_task = planning or len(ran_tasks) >= len(self.run.result.tasks)
        info = self.run.run_info(
            selected=ran,
            verdicts_changed=len(hook_verdicts),
            outcomes=outcomes,
            hook_verdicts=hook_verdicts,
            collect_only=bool(config.option.collectonly),
            ran_tasks=None if every_task else ran_tasks,
            evidence=self.texts,
            no_output=len(self.no_output),
            task_outcomes=kinds["task"],
            gate_outcomes=kinds["gate"],
            group=splitter_group(config),
            session_failures=session_failures(config),
            failure_section_rescans=config.option.tbstyle not in LINEAR_TB_STYLES,
            checks=self._check_runs(config),
        )
        self.summary = build_summary(
            self.run.result,
            info,
            paired=self.run.paired,
            margin=self.run.settings.margin,
            coverage=self.run.coverage,
            alpha=self.run.settings.alpha,
            decisions=self.run.decisions,
            strict=self.run.settings.strict,
            allow_copy=self.run.settings.allow_copy,
            with_plan=planning,
        )
        if planning and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.OK  # a plan is no finding: nothing ran, nothing failed
        add_junit_suite_property(session.config, "parity_verdict", self.summary.verdict)
        failed_checks = [check.nodeid for check in self.summary.checks if check.outcome == "failed"]
        if failed_checks:
            add_junit_suite_property(session.config, "parity_checks_failed", " ".join(failed_checks))
        json_path = self.run.settings.json_path
        skipped = unsafe(json_path) if json_path is not None else None
        if json_path is not None and skipped is not None:
            self.problems.append(skipped_line("--parity-json", json_path, skipped))
        elif json_path is not None:
            try:
                write_json(json_path, self.summary)
            except OSError as exc:
                # printed with the terminal summary: here the `-q` progress line may still be open
                self.problems.append(f"ERROR: --parity-json: cannot write {json_path}: {exc.strerror or exc}")
                session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _check_runs(self, config: pytest.Config) -> tuple[CheckRun, ...]:
        """The team's checks: those collected here (before any selection), then any other that ran
        (an xdist worker's), each with its outcome here (None: not run here)."""
        collected = config.stash.get(CHECKS_KEY, {})
        runs = [CheckRun(nodeid, task, self.checks.get(nodeid, (task, None))[1]) for nodeid, task in collected.items()]
        runs.extend(
            CheckRun(nodeid, task, outcome)
            for nodeid, (task, outcome) in self.checks.items()
            if nodeid not in collected
        )
        return tuple(runs)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The `rollout parity` section, from the summary built at session finish."""
        width = terminal_width(terminalreporter.config)
        for problem in fit(self.problems, width):
            terminalreporter.write_line(problem, red=True)
        if self.summary is None:
            return
        terminalreporter.write_sep("=", "rollout parity")
        lines = summary_lines(self.summary)
        if self.run.settings.plan:
            lines.insert(0, "--parity-plan: no item ran; the verdict and the plan below are the data's")
        for line in fit(lines, width):
            terminalreporter.write_line(line)

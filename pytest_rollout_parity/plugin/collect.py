"""The collector for the new file and its items: one item per joined task, in sorted task order."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import pytest

from ..core import (
    COPY_NAME,
    COVERAGE_NAME,
    EQUIVALENCE_ITEM,
    RowOrigin,
    Verdict,
    fit,
    task_outcome,
    terminal_line,
    terminal_text,
    visible,
)
from ._pytest_compat import keep_message_lines, refit_message_lines, set_crash_message
from .outcomes import default_verdict
from .run import RUN_KEY, ParityRun

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

VERDICT_PROPERTY = "parity_verdict_changed"
TASK_PROPERTY = "parity_task"
#: who changed an item's verdict (`hook`, `known_flips`), beside VERDICT_PROPERTY
SOURCE_PROPERTY = "parity_verdict_source"
CATEGORY_PROPERTY = "parity_category"
#: the JUnit property of the equivalence item (named, as its item is, `aggregate` for the users who read it)
EQUIVALENCE_PROPERTY = "parity_aggregate"
COVERAGE_PROPERTY = "parity_coverage"
COPY_PROPERTY = "parity_copy"
NO_OUTPUT_PROPERTY = "parity_no_verifier_output"
"""Carried by a flip whose losing row has no verifier output at all: the summary notes it once."""
OUTCOME_PROPERTY = "parity_outcome"
"""The task's outcome in the gate's vocabulary (the summary decides it by the same rule)."""
GATE_PROPERTY = "parity_gate_item"
"""Carried by every gate-level item (one judging the whole run, not a task): the summary counts them."""


def hook_verdict(value: str) -> tuple[str, str]:
    """(outcome, reason) from a `parity_verdict_changed` property value (`<outcome>: <reason>`)."""
    outcome, _, reason = value.partition(": ")
    return outcome, reason


class ParityFile(pytest.File):
    """The `--parity-new` file as a collector; its children are the tasks."""

    #: the hooks of its nodes when built beside collection (:mod:`._pytest_compat`); else pytest's for its path
    hooks: Any = None

    @property
    def ihook(self) -> Any:
        """The hooks for this file's nodes: as pytest gives them to a file at its path, without
        importing a conftest there (:mod:`._pytest_compat`)."""
        return self.hooks if self.hooks is not None else super().ihook

    @classmethod
    def for_run(cls, parent: pytest.Collector, path: Path) -> ParityFile:
        """The collector for the new file; outside the rootdir its node id is the absolute path."""
        nodeid: Optional[str] = None
        try:
            path.relative_to(parent.config.rootpath)
        except ValueError:
            nodeid = path.as_posix()  # outside the rootdir: absolute, so --lf finds the file again
        return cls.from_parent(parent, path=path, nodeid=nodeid) if nodeid else cls.from_parent(parent, path=path)

    @property
    def run(self) -> ParityRun:
        """The run this file's items judge (in ``config.stash``)."""
        return self.config.stash[RUN_KEY]

    def collect(self) -> Iterator[pytest.Item]:
        """One item per joined task, in sorted task order; then the run's gate-level items
        (:attr:`ParityRun.gate_items`)."""
        for index, name in enumerate(self.run.names):
            yield ParityItem.from_parent(self, name=name, index=index)
        kinds = {EQUIVALENCE_ITEM: EquivalenceItem, COVERAGE_NAME: CoverageItem, COPY_NAME: CopyItem}
        for name in self.run.gate_items:
            yield kinds[name].from_parent(self, name=name)


class GateFinding(pytest.fail.Exception):  # type: ignore[misc, name-defined]  # public, typed only as an attribute
    """What the gate found about a task or the run (a flip, a masked task, a failed check): its
    message is the finding, not a fault in code, so it is shown without a traceback.

    ``header`` is the crash line (short summary, JUnit ``message``, ``--tb=line``); ``body`` the
    whole text. Any other exception an item meets (one raised by a user's hook, say) is an error
    in code and keeps pytest's own report, traceback included. A kind of ``pytest.fail``'s
    exception, so that every plugin records a finding as the failure of any test (allure's
    ``failed``, not ``broken``).
    """

    def __init__(self, body: str, header: Optional[str] = None) -> None:
        super().__init__(body, pytrace=False)
        self.body = body
        self.header = header if header is not None else body.split("\n", 1)[0]

    def __str__(self) -> str:
        return self.body


#: the report attribute that carries a finding's whole text, whatever --tb cuts from its
#: representation: the JSON, Markdown and HTML reports read it (:class:`.reporting.ParitySummary`)
MESSAGE_ATTRIBUTE = "parity_message"


def terminal_width(config: pytest.Config) -> Optional[int]:
    """The width the gate's lines are fitted to: the terminal's when there is one (output to a
    terminal, or `COLUMNS` set), read as pytest reads it; None for a log, whose lines stay whole."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not os.environ.get("COLUMNS") and not getattr(reporter, "isatty", False):
        return None
    columns = shutil.get_terminal_size().columns
    return columns if columns >= 40 else 80  # pytest's own floor


def _message_only(
    item: pytest.Item,
    excinfo: pytest.ExceptionInfo[BaseException],
    style: Any,
    location: tuple[str, int],
    name: str,
) -> str | TerminalRepr:
    """A :class:`GateFinding`'s message alone, no traceback; its crash line is the finding's header at
    ``location`` (the task's row, or the new file). Every --tb style shows the whole message but
    `line`, which shows the crash line alone, then prefixed with the item's ``name`` (the task, or
    `parity-aggregate`): that line is all it prints. Anything else: pytest's own report."""
    finding = excinfo.value
    if not isinstance(finding, GateFinding):
        return pytest.Item.repr_failure(item, excinfo, style=style)
    representation = pytest.Item.repr_failure(item, excinfo, style="value")
    if (style or item.config.getoption("tbstyle", "auto")) == "line":
        set_crash_message(representation, f"{terminal_line(name)}: {finding.header}", location)
        keep_message_lines(representation, 0)
    else:
        set_crash_message(representation, finding.header, location)
    width = terminal_width(item.config)
    if width is not None:
        refit_message_lines(representation, lambda body: fit(body, width))
    return representation


def crash_line(text: str, task: str) -> str:
    """A failure text's first line without the task label it starts with (the node id names it)."""
    first = text.split("\n", 1)[0]
    return first.removeprefix(f"{terminal_line(task)}: ") or first


#: who changed a verdict, as the item's report section names them
VERDICT_SOURCES = {"known_flips": "--parity-known-flips", "hook": "a pytest_parity_verdict hook"}


class ParityItem(pytest.Item):
    """One task of the comparison; its outcome follows its category, or a hook's verdict."""

    @property
    def run(self) -> ParityRun:
        """The run (in ``config.stash``)."""
        return self.config.stash[RUN_KEY]

    @property
    def ihook(self) -> Any:
        """Its file's hooks (:attr:`ParityFile.ihook`)."""
        return self.parent.ihook  # type: ignore[union-attr]

    def __init__(self, *, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        comparison = self.run.result.tasks[index]
        self.user_properties.append((TASK_PROPERTY, comparison.task))
        self.user_properties.append((CATEGORY_PROPERTY, comparison.category))

    def runtest(self) -> None:
        """Pass, fail or xfail as the category (or a conftest verdict) says."""
        comparison = self.run.result.tasks[self.index]
        strict = self.run.settings.strict
        verdict: Optional[Verdict] = self.config.hook.pytest_parity_verdict(comparison=comparison, config=self.config)
        if verdict is not None and not isinstance(verdict, Verdict):
            raise GateFinding(
                terminal_text(
                    f"{visible(comparison.task)}: pytest_parity_verdict returned {verdict!r}; "
                    "return None or a pytest_rollout_parity.Verdict"
                )
            )
        judgement = self.run.judgements[self.index]
        if verdict is None and self.run.known_flips is not None:
            verdict = self.run.known_flips.verdict(comparison)
        changed_to: Optional[Verdict] = None
        if verdict is not None:
            default = default_verdict(comparison, lambda: "", strict=strict, judgement=judgement)
            if verdict.outcome != default.outcome:
                changed_to = Verdict(verdict.outcome, verdict.text)
                # outcome and reason, for the JUnit properties of a hook-decided item
                changed = verdict.outcome + (f": {verdict.text}" if verdict.text else "")
                self.user_properties.append((VERDICT_PROPERTY, changed))
                self.user_properties.append((SOURCE_PROPERTY, verdict.source))
                if verdict.outcome == "passed":  # -rA / -rP show it under the PASSES heading
                    who = VERDICT_SOURCES.get(verdict.source, VERDICT_SOURCES["hook"])
                    self.add_report_section(
                        "call",
                        "parity verdict",
                        terminal_text(
                            f"{visible(comparison.task)} ({comparison.category}) passed by {who}: "
                            f"{verdict.text or '(no reason given)'}"
                        ),
                    )
        else:
            verdict = default_verdict(
                comparison, lambda: self.run.flip_message(self.index), strict=strict, judgement=judgement
            )
        evidence = self.run.built_evidence(self.index)
        if evidence is not None and evidence.no_output:  # the summary says it once for the run
            self.user_properties.append((NO_OUTPUT_PROPERTY, "1"))
        self.user_properties.append((OUTCOME_PROPERTY, task_outcome(comparison, judgement, changed_to)))
        # shown in the terminal (pytest's short summary under CI prints a reason whole): no line
        # of it may carry a raw control character or start a GitHub workflow command
        text = terminal_text(verdict.text)
        if verdict.outcome == "failed":
            raise GateFinding(text, crash_line(text, comparison.task))
        if verdict.outcome == "xfail":
            # An xfail mark, then the failure it expects (as pytest-mypy's --mypy-xfail does): pytest
            # evaluates a mark added during the call, so every plugin sees an ordinary xfailed test, and
            # under --runxfail a masked, missing or agent-error task fails with its reason, never passes.
            self.add_marker(pytest.mark.xfail(reason=text, raises=GateFinding))
            raise GateFinding(text)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """The message alone, no traceback; its crash line (short summary, JUnit) is the header,
        at the task's first row in its file (`new.jsonl:12: new regressed: old=1.0 new=0.0`)."""
        comparison = self.run.result.tasks[self.index]
        return _message_only(self, excinfo, style, self._row_location(), comparison.task)

    def _row_location(self) -> tuple[str, int]:
        """The task's first row in the new file (else the old file's), or the new file's line 0."""
        comparison = self.run.result.tasks[self.index]
        for side, loaded in ((comparison.new, self.run.new), (comparison.old, self.run.old)):
            main_rows = (
                [facts.line for facts in side.facts if facts.origin is RowOrigin.MAIN] if side is not None else []
            )
            if main_rows:
                return loaded.display, main_rows[0]
        return self.run.new.display, 0

    def reportinfo(self) -> tuple[Path, Optional[int], str]:
        """The task label heads the item's failure report; line 0 (a skip mark's report needs a line)."""
        return self.path, 0, terminal_line(self.run.result.tasks[self.index].task)


class _RunWideItem(pytest.Item):
    """An item that judges the whole comparison, not one task: it reads no other item, so it runs
    alike under -k, --lf and xdist. Subclasses name themselves and their decision."""

    item_name = ""
    property_name = ""

    @property
    def run(self) -> ParityRun:
        """The run (in ``config.stash``)."""
        return self.config.stash[RUN_KEY]

    @property
    def ihook(self) -> Any:
        """Its file's hooks (:attr:`ParityFile.ihook`)."""
        return self.parent.ihook  # type: ignore[union-attr]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_properties.append((GATE_PROPERTY, self.item_name))

    def decision(self) -> Optional[tuple[bool, str]]:
        """(passed, message); None when there is nothing to decide."""
        raise NotImplementedError

    def runtest(self) -> None:
        """Pass or fail as the decision says, its message a user property."""
        decision = self.decision()
        if decision is None:  # pragma: no cover - collected only when there is one
            return
        passed, message = decision
        self.user_properties.append((self.property_name, message))
        if not passed:
            raise GateFinding(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """The decision's message alone, no traceback; its crash line at the new file's line 0
        (it judges the whole file), never at the plugin's source line."""
        return _message_only(self, excinfo, style, (self.run.new.display, 0), self.item_name)

    def reportinfo(self) -> tuple[Path, Optional[int], str]:
        """The item's name heads its failure report; line 0 (a skip mark's report needs a line)."""
        return self.path, 0, self.item_name


class EquivalenceItem(_RunWideItem):
    """Margin mode's equivalence test over all compared tasks: `<new file>::parity-aggregate`.

    It passes when the one-sided 95% bounds of the mean difference lie within the margin.
    """

    item_name = EQUIVALENCE_ITEM
    property_name = EQUIVALENCE_PROPERTY

    def decision(self) -> Optional[tuple[bool, str]]:
        """The equivalence decision at the margin."""
        equivalence = self.run.equivalence
        return None if equivalence is None else (equivalence.passed, equivalence.message)


class CoverageItem(_RunWideItem):
    """`<new file>::parity-coverage`: fails when the new side misses or masks too many old tasks.

    Collected only then: a run that covers the old side has nothing to say here.
    """

    item_name = COVERAGE_NAME
    property_name = COVERAGE_PROPERTY

    def decision(self) -> Optional[tuple[bool, str]]:
        """The evidence against the budget and the finer limits, and the sides' agent-error rates."""
        cover = self.run.coverage
        message = cover.message
        if not cover.passed:
            message += (
                "\n    --parity-max-uncompared, --parity-max-missing and --parity-max-masked set the limits "
                "(off switches one off)"
            )
        return cover.passed, message


#: what the copy item tells a user to run instead
COPY_ADVICE = (
    "run the new server on the same tasks and give its rollouts as --parity-new; "
    "--parity-allow-copy passes a deliberate copy (a dry run of the CI wiring)"
)


class CopyItem(_RunWideItem):
    """`<new file>::parity-copy`: both sides hold the same rows, so the new server may never have
    run. Collected only then; it fails unless --parity-allow-copy says the copy is meant."""

    item_name = COPY_NAME
    property_name = COPY_PROPERTY

    def decision(self) -> Optional[tuple[bool, str]]:
        """Fails with the copies note and what to run, or passes a copy the user meant."""
        note = self.run.result.copies
        if note is None:
            return None
        if self.run.settings.allow_copy:
            return True, f"{note}: passed under --parity-allow-copy (a dry run of the CI wiring)"
        return False, f"{note}\n    no evidence about the new server: {COPY_ADVICE}"


def is_gate_item(item: pytest.Item) -> bool:
    """One of the gate's own items (a task's, or a gate-level one), not a user's `rollout_pair` test."""
    return isinstance(item, (ParityItem, _RunWideItem))

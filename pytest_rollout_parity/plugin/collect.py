"""The gate's collection: one item per joined task in sorted task order, then the gate-level items,
built beside pytest's own collection (:mod:`.placement`); the team's `rollout_pair` checks."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Generator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import pytest

from .. import core
from ._pytest_compat import collect_beside, hooks_at, refit_message_lines, set_crash_message
from .placement import take_new_file
from .run import RUN_KEY, ParityRun, collector_paused

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

VERDICT_PROPERTY = "parity_verdict_changed"
TASK_PROPERTY = "parity_task"
#: who changed an item's verdict (`hook`, `known_flips`), beside VERDICT_PROPERTY
SOURCE_PROPERTY = "parity_verdict_source"
CATEGORY_PROPERTY = "parity_category"
#: carried by a flip whose losing row has no verifier output at all: the summary notes it once
NO_OUTPUT_PROPERTY = "parity_no_verifier_output"
#: the task's outcome in the gate's vocabulary (the summary decides it by the same rule)
OUTCOME_PROPERTY = "parity_outcome"
#: carried by every gate-level item (one judging the whole run, not a task): the summary counts them
GATE_PROPERTY = "parity_gate_item"
#: the report attribute with a finding's whole text, whatever --tb cuts: the JSON, Markdown and HTML read it
MESSAGE_ATTRIBUTE = "parity_message"
#: the fixture of the team's own checks, one case per task; defined in the entry point, so that it
#: exists (and skips) in runs that never import the gate
FIXTURE = "rollout_pair"
#: a team's check's property, its task's label: the summary finds the check wherever it ran (xdist too)
CHECK_PROPERTY = "parity_check"
#: the team's checks this process collected (before any selection), their tasks by node id
CHECKS_KEY = pytest.StashKey[dict[str, str]]()


class ParityFile(pytest.File):
    """The `--parity-new` file as a collector; its children are the tasks."""

    #: its nodes' hooks: those at its path, no conftest imported there (:func:`._pytest_compat.hooks_at`)
    hooks: Any = None

    @property
    def ihook(self) -> Any:
        return self.hooks

    def collect(self) -> list[pytest.Item]:
        """One item per task, then the gate-level items; made with the cyclic collector resting, as
        they live as long as the run and each full collection would walk them all."""
        run: ParityRun = self.config.stash[RUN_KEY]
        with collector_paused():
            items: list[pytest.Item] = [
                ParityItem.from_parent(self, name=name, index=index) for index, name in enumerate(run.names)
            ]
            items.extend(RunWideItem.from_parent(self, name=name) for name in run.gate_items)
        return items


class GateFinding(pytest.fail.Exception):  # type: ignore[misc, name-defined]  # public, typed only as an attribute
    """What the gate found about a task or the run: a finding, not a fault in code, so shown without
    a traceback (any other exception keeps pytest's report). ``header`` is the crash line. A kind of
    ``pytest.fail``'s exception, so every plugin records it as a failed test (allure's ``failed``,
    not ``broken``)."""

    def __init__(self, body: str, header: Optional[str] = None) -> None:
        super().__init__(body, pytrace=False)
        self.body = body
        self.header = header if header is not None else body.split("\n", 1)[0]


def terminal_width(config: pytest.Config) -> Optional[int]:
    """The width the gate's lines are fitted to: the terminal's when there is one (output to a
    terminal, or `COLUMNS` set), read as pytest reads it; None for a log, whose lines stay whole."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if not os.environ.get("COLUMNS") and not getattr(reporter, "isatty", False):
        return None
    columns = shutil.get_terminal_size().columns
    return columns if columns >= 40 else 80  # pytest's own floor


class GateItem(pytest.Item):
    """One of the gate's own items (a task's or a gate-level one), not a team's `rollout_pair` check."""

    @property
    def run(self) -> ParityRun:
        return self.config.stash[RUN_KEY]

    @property
    def ihook(self) -> Any:
        return self.parent.ihook  # type: ignore[union-attr]

    def label(self) -> str:
        """What heads the item's failure report and its `--tb=line` crash line."""
        return self.name

    def finding_location(self) -> tuple[str, int]:
        """Where the crash line points: the new file's line 0 (the item judges the whole file)."""
        return self.run.new.display, 0

    def reportinfo(self) -> tuple[Path, Optional[int], str]:
        """The label heads the item's failure report; line 0 (a skip mark's report needs a line)."""
        return self.path, 0, self.label()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        """A :class:`GateFinding`'s message alone, its crash line the finding's header at
        :meth:`finding_location`; `--tb=line` prints only that line, prefixed with the label.
        Anything else: pytest's own report."""
        finding = excinfo.value
        if not isinstance(finding, GateFinding):
            return super().repr_failure(excinfo, style=style)
        representation = super().repr_failure(excinfo, style="value")
        line_style = (style or self.config.getoption("tbstyle", "auto")) == "line"
        header = f"{self.label()}: {finding.header}" if line_style else finding.header
        set_crash_message(representation, header, self.finding_location())
        width = terminal_width(self.config)
        if line_style:
            refit_message_lines(representation, lambda body: [])
        elif width is not None:
            refit_message_lines(representation, lambda body: core.fit(body, width))
        return representation


def default_verdict(
    comparison: core.TaskComparison,
    render_flip: Callable[[], str],
    *,
    strict: bool,
    judgement: Optional[core.FlipJudgement] = None,
) -> core.Verdict:
    """passed / failed / xfail for the task's category; ``render_flip`` is called only for a failure.

    A task the gate could not compare xfails (fails under `--parity-strict`); ``judgement`` is margin
    mode's view of a flip: one not shown to be a regression xfails.
    """
    category = comparison.category
    if category == "identical":
        verdict = core.Verdict.passed()
    elif category == "flipped" and judgement is not None and not judgement.regression:
        verdict = core.Verdict.xfail(judgement.text)
    elif category == "flipped" or (category == "flipped_agent_error" and strict):
        verdict = core.Verdict.failed(render_flip())
    elif strict:
        verdict = core.Verdict.failed(core.uncompared_reason(comparison))
    else:
        verdict = core.Verdict.xfail(core.uncompared_reason(comparison))
    return replace(verdict, source="category")


class ParityItem(GateItem):
    """One task of the comparison; its outcome follows its category, or a hook's verdict."""

    def __init__(self, *, index: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index = index
        comparison = self.run.result.tasks[index]
        self.user_properties += [(TASK_PROPERTY, comparison.task), (CATEGORY_PROPERTY, comparison.category)]

    def label(self) -> str:
        return core.terminal_line(self.run.result.tasks[self.index].task)

    def runtest(self) -> None:
        """Pass, fail or xfail as the category says, unless a conftest hook or the known flips decide."""
        run, index = self.run, self.index
        comparison, judgement = run.result.tasks[index], run.decisions.judgements[index]
        given = self.config.hook.pytest_parity_verdict(comparison=comparison, config=self.config)
        if given is not None and not isinstance(given, core.Verdict):
            raise GateFinding(
                core.terminal_text(
                    f"{core.visible(comparison.task)}: pytest_parity_verdict returned {given!r}; "
                    "return None or a pytest_rollout_parity.Verdict"
                )
            )
        if given is None and run.known_flips is not None:
            given = run.known_flips.verdict(comparison)
        # a failing flip's text reads its verifier log: only when the category's verdict stands
        flip_text = (lambda: "") if given is not None else (lambda: run.flip_evidence(index).text)
        default = default_verdict(comparison, flip_text, strict=run.settings.strict, judgement=judgement)
        changed = given if given is not None and given.outcome != default.outcome else None
        verdict = given or default
        if changed is not None:
            # outcome and reason, and who decided, for the JUnit properties of a hook-decided item
            given_text = changed.outcome + (f": {changed.text}" if changed.text else "")
            self.user_properties += [(VERDICT_PROPERTY, given_text), (SOURCE_PROPERTY, changed.source)]
            if changed.outcome == "passed":  # -rA / -rP show it under the PASSES heading
                who = "--parity-known-flips" if changed.source == "known_flips" else "a pytest_parity_verdict hook"
                reason = changed.text or "(no reason given)"
                line = f"{core.visible(comparison.task)} ({comparison.category}) passed by {who}: {reason}"
                self.add_report_section("call", "parity verdict", core.terminal_text(line))
        evidence = run.evidence.get(index)
        if evidence is not None and evidence.no_output:  # the summary says it once for the run
            self.user_properties.append((NO_OUTPUT_PROPERTY, "1"))
        self.user_properties.append((OUTCOME_PROPERTY, core.task_outcome(comparison, judgement, changed)))
        # shown in the terminal (pytest's short summary under CI prints a reason whole): no line
        # of it may carry a raw control character or start a GitHub workflow command
        text = core.terminal_text(verdict.text)
        if verdict.outcome == "failed":
            # the crash line without the task label it starts with (the node id names it)
            first = text.split("\n", 1)[0]
            raise GateFinding(text, first.removeprefix(f"{self.label()}: ") or first)
        if verdict.outcome == "xfail":
            # An xfail mark, then the failure it expects (as pytest-mypy's --mypy-xfail does): pytest
            # evaluates a mark added during the call, so every plugin sees an ordinary xfailed test, and
            # under --runxfail a masked, missing or agent-error task fails with its reason, never passes.
            self.add_marker(pytest.mark.xfail(reason=text, raises=GateFinding))
            raise GateFinding(text)

    def finding_location(self) -> tuple[str, int]:
        """The task's first row in the new file (else the old file's), or the new file's line 0
        (`new.jsonl:12: new regressed: old=1.0 new=0.0`)."""
        comparison = self.run.result.tasks[self.index]
        for side, loaded in ((comparison.new, self.run.new), (comparison.old, self.run.old)):
            rows = [facts.line for facts in side.facts if facts.origin is core.RowOrigin.MAIN] if side else []
            if rows:
                return loaded.display, rows[0]
        return super().finding_location()


class RunWideItem(GateItem):
    """An item judging the whole comparison (:attr:`ParityRun.gate_items`, docs/semantics.md): it reads no
    other item, so it runs alike under -k, --lf and xdist. Its message is also its JUnit property."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.user_properties.append((GATE_PROPERTY, self.name))

    def runtest(self) -> None:
        passed, message = self.run.gate_items[self.name]
        self.user_properties.append((self.name.replace("-", "_"), message))
        if not passed:
            raise GateFinding(message)


class ParityCollection:
    """Collection-side hooks, registered in every process that collects (serial or xdist worker)."""

    def __init__(self, config: pytest.Config, run: ParityRun) -> None:
        self.config = config
        #: the item names the arguments asked for by node id, each with its argument; None: every item
        self.named = take_new_file(config, run.settings.new)
        self.target = run.settings.new.resolve()
        #: pytest-html is loaded and asked for a report
        self.html = config.pluginmanager.hasplugin("html") and bool(config.getoption("htmlpath", None))

    @property
    def run(self) -> ParityRun:
        return self.config.stash[RUN_KEY]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """The gate's items, built here (:mod:`.placement`), first among the implementations so that
        `-k`, `-m`, `--deselect` and `--lf` select from them as from any item. Under --parity-plan no
        item runs, the gate's or any other."""
        if self.run.settings.plan:
            if items:
                session.config.hook.pytest_deselected(items=list(items))
                items.clear()
            return
        # the team's checks, before any selection: a check not run here is known as one
        found = session.config.stash.setdefault(CHECKS_KEY, {})
        for item in items:
            callspec = getattr(item, "callspec", None)
            pair = callspec.params.get(FIXTURE) if callspec is not None else None
            if FIXTURE in getattr(item, "fixturenames", ()) and isinstance(pair, core.TaskComparison):
                found[item.nodeid] = pair.task
                if (CHECK_PROPERTY, pair.task) not in item.user_properties:
                    item.user_properties.append((CHECK_PROPERTY, pair.task))
        # outside the rootdir its node id is its absolute path, so --lf finds the file again
        nodeid = None if self.target.is_relative_to(session.config.rootpath) else self.target.as_posix()
        node = ParityFile.from_parent(session, path=self.target, nodeid=nodeid)
        node.hooks = hooks_at(session.config, self.target)
        built = collect_beside(node)
        names = {item.name for item in built}
        if missing := [arg for name, arg in self.named or () if name not in names]:
            raise pytest.UsageError(*(f"not found: {arg}" for arg in missing))
        wanted = None if self.named is None else {name for name, _ in self.named}
        for item in built:
            if wanted is None or item.name in wanted:
                item.ihook.pytest_itemcollected(item=item)
                items.append(item)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Under `--tb=line` (the crash line alone) a finding's whole text rides on its report
        (:data:`MESSAGE_ATTRIBUTE`, through xdist too); otherwise the report has exactly a plain test's
        fields. For pytest-html, a flip that did not fail (its row shows only a reason) carries its
        evidence as a documented `report.extras` entry, a plain dict (no import of pytest-html)."""
        report = yield
        finding = call.excinfo.value if call.excinfo is not None else None
        line_style = item.config.getoption("tbstyle", "auto") == "line"  # no such option under -p no:terminal
        if line_style and isinstance(finding, GateFinding) and isinstance(item, GateItem):
            setattr(report, MESSAGE_ATTRIBUTE, finding.body)
        if self.html and report.when == "call" and isinstance(item, ParityItem) and not report.failed:
            comparison = self.run.result.tasks[item.index]
            if comparison.category in core.FLIPS:
                content = core.flip_html(core.header_line(comparison), self.run.flip_evidence(item.index).text)
                extra = {"name": None, "format_type": "html", "content": content, "mime_type": None, "extension": None}
                report.extras = [*getattr(report, "extras", []), extra]  # type: ignore[attr-defined]
        return report

    @pytest.hookimpl
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """One `rollout_pair` case per task, in the items' order, its id the task label (else its item name)."""
        if FIXTURE in metafunc.fixturenames:
            ids = [task.task or name for task, name in zip(self.run.result.tasks, self.run.names)]
            metafunc.parametrize(FIXTURE, self.run.result.tasks, ids=ids)

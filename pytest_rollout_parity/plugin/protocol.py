"""The gate's own items run through a shorter protocol than pytest's default one.

A gate item only looks up a verdict the core has already computed: it has no fixtures, prints
nothing and sets nothing up. pytest's default protocol still runs the setup, call and teardown
hooks around it, each wrapped by output capture, log capture, unraisable-exception checks and
the skip/xfail mark evaluation, about 0.3 ms an item: on a 5,000-task pair that was most of a
rerun and a third of a whole run. This protocol keeps everything other plugins read, through
public hooks only: ``pytest_runtest_logstart``/``logfinish``, and for each phase a report made by
``pytest_runtest_makereport`` (so skipping, pytest-html and ``--runxfail`` still shape it) and
logged by ``pytest_runtest_logreport`` (terminal, ``--lf``, ``-x``, JUnit, the gate's summary);
``pytest_exception_interact`` (``--pdb``) for a failure, as the default protocol does.

It skips the phase hooks, so pytest's per-session setup stack is left alone, which is safe
because the item's collectors set nothing up. The last item before a test of another kind (or
the end) runs the default protocol, whose teardown tears down what an earlier test left for it.

The default protocol runs instead when an item carries a mark (its evaluation needs the setup
hook); when user code would run in or around the items: a ``conftest.py`` implements
``pytest_parity_verdict`` (its output must be captured as in any test) or a setup, call or
teardown hook, or another plugin implements its own runtest protocol (pytest-rerunfailures,
pytest-forked); and with ``--setup-show``, ``--setup-only`` or ``--setup-plan`` (they change which
phases run and what is printed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal, Optional

import pytest

Phase = Literal["setup", "call", "teardown"]
PHASE_HOOKS = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")


def _nothing() -> None:
    """A phase with nothing to do."""


class LeanProtocol:
    """Runs the items ``is_lean`` accepts through the shorter protocol; others as pytest does."""

    def __init__(self, is_lean: Callable[[pytest.Item], bool]) -> None:
        self.is_lean = is_lean
        self.for_this_run: Optional[bool] = None  # decided at the first item (conftests are in by then)
        self.reraise: tuple[type[BaseException], ...] = (pytest.exit.Exception,)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Optional[pytest.Item]) -> Optional[bool]:
        """Run a gate item with three reports and no phase hooks (module docstring)."""
        if nextitem is None or not self._applies(item) or not self._applies(nextitem):
            return None  # the last one before other tests (or the end) tears down as pytest does
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        if _phase(item, ihook, "setup", _nothing, self.reraise):
            _phase(item, ihook, "call", item.runtest, self.reraise)
        _phase(item, ihook, "teardown", _nothing, self.reraise)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def _applies(self, item: pytest.Item) -> bool:
        if self.for_this_run is None:
            self._decide(item.config)
        return bool(self.for_this_run) and self.is_lean(item) and next(item.iter_markers(), None) is None

    def _decide(self, config: pytest.Config) -> None:
        """Once per run: whether the lean protocol may run at all, and what each phase lets through."""
        self.for_this_run = (
            not _others_take_part(config, self)
            and not config.getoption("setupshow", False)  # --setup-show/-only/-plan: pytest's way
        )
        if not config.getoption("usepdb", False):
            self.reraise = (pytest.exit.Exception, KeyboardInterrupt)


def _others_take_part(config: pytest.Config, this: object) -> bool:
    """User code would run in or around the items: a ``pytest_parity_verdict`` hook, a conftest's
    setup/call/teardown hook, or another plugin's own runtest protocol (not a wrapper)."""
    if config.hook.pytest_parity_verdict.get_hookimpls():
        return True
    for name in PHASE_HOOKS:
        if any(_is_conftest(impl.plugin) for impl in getattr(config.hook, name).get_hookimpls()):
            return True
    return any(
        not (impl.hookwrapper or impl.wrapper)
        and impl.plugin is not this
        and getattr(impl.plugin, "__name__", None) != "_pytest.runner"
        for impl in config.hook.pytest_runtest_protocol.get_hookimpls()
    )


def _is_conftest(plugin: object) -> bool:
    return os.path.basename(getattr(plugin, "__file__", None) or "") == "conftest.py"


def _phase(item: pytest.Item, ihook: Any, when: Phase, action: Callable[[], None],
           reraise: tuple[type[BaseException], ...]) -> bool:
    """Run one phase, make and log its report; True when it passed."""
    call = pytest.CallInfo.from_call(action, when=when, reraise=reraise)
    report: pytest.TestReport = ihook.pytest_runtest_makereport(item=item, call=call)
    ihook.pytest_runtest_logreport(report=report)
    if call.excinfo is not None and report.failed and not hasattr(report, "wasxfail"):
        ihook.pytest_exception_interact(node=item, call=call, report=report)
    return report.passed

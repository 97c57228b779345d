"""Every place where the plugin reaches past pytest's documented API, each because no public way exists.

Tested with pytest 8.0 (the declared floor) and 9.2 (the newest): ``tests/integration/
test_pytest_compat.py`` fails if an assumption below stops holding. Each function touches only an
object the plugin was handed for the purpose, never another plugin's state. Why any of this: no
conftest beside the results may run (:mod:`.placement`), and a finding's crash line is its header.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import pytest


@contextmanager
def hide_initial_paths(early_config: pytest.Config, hidden: Callable[[str], bool]) -> Generator[None, None, None]:
    """Hide the path arguments ``hidden`` names while pytest imports its initial conftests.

    pytest imports the conftests beside every path argument (``known_args_namespace.file_or_dir``)
    before any plugin's own hooks run; no option skips one argument (``--noconftest`` skips all,
    ``--confcutdir`` only bounds the walk upwards). The list is restored as soon as that step ends.
    If pytest stops keeping the arguments there, nothing is hidden: the compat test then fails.
    """
    namespace = early_config.known_args_namespace
    given = getattr(namespace, "file_or_dir", None)
    namespace.file_or_dir = [arg for arg in given or () if not hidden(arg)]
    try:
        yield
    finally:
        namespace.file_or_dir = given


def set_test_paths(config: pytest.Config, args: list[str]) -> None:
    """Make ``args`` the paths pytest collects: ``Config.args`` is documented, though not as writable,
    and no hook narrows the initial paths (``pytest_ignore_collect`` would still import the conftest)."""
    config.args = args


class _SubsetHooks:
    """A hook relay without some plugins: what pytest gives the nodes of a path (its ``FSHookProxy``)."""

    def __init__(self, pluginmanager: pytest.PytestPluginManager, remove: list[object]) -> None:
        self._pluginmanager = pluginmanager
        self._remove = remove

    def __getattr__(self, name: str) -> Any:
        caller = self._pluginmanager.subset_hook_caller(name, remove_plugins=self._remove)
        setattr(self, name, caller)
        return caller


def hooks_at(config: pytest.Config, path: Path) -> Any:
    """The hooks pytest would call for nodes at ``path``: every plugin, and the conftests loaded at or
    above its directory.

    pytest's ``Session.gethookproxy`` answers only for directories it collected, which the gate's
    file's never is: there it would drop every conftest, the rootdir's runtest hooks included. So
    conftests are told by their module file and kept when they sit at or above ``path``.
    """
    directory = path.resolve().parent
    remove: list[object] = []
    for plugin in config.pluginmanager.get_plugins():
        module_file = getattr(plugin, "__file__", None)
        if isinstance(module_file, str) and os.path.basename(module_file) == "conftest.py":
            home = Path(module_file).resolve().parent
            if home != directory and home not in directory.parents:
                remove.append(plugin)
    return _SubsetHooks(config.pluginmanager, remove) if remove else config.hook


def collect_beside(node: pytest.Collector) -> Sequence[pytest.Item]:
    """Collect ``node``, built in ``pytest_collection_modifyitems``, as ``genitems`` collects a file
    (the same public hooks): its items, or none when its collection failed (reported as any is)."""
    report = node.ihook.pytest_make_collect_report(collector=node)
    node.ihook.pytest_collectreport(report=report)
    return [item for item in report.result if isinstance(item, pytest.Item)] if report.passed else []


def set_crash_message(representation: object, message: str, location: Optional[tuple[str, int]] = None) -> None:
    """Make ``message`` (at ``location``: path, 1-based line) the crash line of a failure.

    The short summary, JUnit, pytest-json-report and pytest-html read it from ``longrepr.reprcrash``,
    which pytest fills from the exception and the raising line of code; no hook chooses it. A plain
    string from ``repr_failure`` (pytest-mypy's way) has none: the short summary would name the node
    id alone, JUnit's ``message`` be the whole text. If its shape changes, pytest's own line stands.
    """
    crash = getattr(representation, "reprcrash", None)
    if crash is not None and hasattr(crash, "message"):
        crash.message = message
        if location is not None and hasattr(crash, "path") and hasattr(crash, "lineno"):
            crash.path, crash.lineno = location


def refit_message_lines(representation: object, fitted: Callable[[list[str]], list[str]]) -> None:
    """Print a message-only (``style="value"``) failure's body as ``fitted`` gives it: such a
    representation holds the whole message under every --tb style (``--tb=line`` too, before the
    crash line). If pytest's shape changes, the message is printed as it is."""
    traceback = getattr(representation, "reprtraceback", None)
    entries = getattr(traceback, "reprentries", None)
    if entries and isinstance(getattr(entries[-1], "lines", None), list):
        entries[-1].lines[:] = fitted(entries[-1].lines)


def add_junit_suite_property(config: pytest.Config, name: str, value: str) -> None:
    """A `<property>` of the JUnit file's test suite, when one is written: pytest's public
    `record_testsuite_property` is a fixture, and the verdict is known only once every item has run.
    If pytest's shape changes, this does nothing: the verdict is still in every other report."""
    from _pytest.junitxml import xml_key  # in every pytest from 8.0, the floor

    add = getattr(config.stash.get(xml_key, None), "add_global_property", None)
    if callable(add):
        add(name, value)

"""Every place where the plugin reaches past pytest's documented API, each because no public way exists.

Tested with pytest 8.0 (the declared floor) and 9.2 (the newest); ``tests/integration/
test_pytest_compat.py`` fails if any assumption below stops holding. Each function touches only
an object the plugin was handed for this purpose (the early namespace while conftests load, the
test paths at configure, a report representation ``repr_failure`` has just built, the hooks of a
node the plugin made itself): never another plugin's state.

Why the gate needs any of this: its items come from a results file, not from a test module, and
pytest imports the ``conftest.py`` of every directory it collects a path from. A conftest planted
beside the results must never run, so the new file is kept out of pytest's own collection
(:func:`hide_initial_paths`, :func:`set_test_paths`) and its items are built beside it
(:func:`collect_beside`, :func:`hooks_at`). Its failures are findings, not code errors, so their
crash line is the finding's header (:func:`set_crash_message`, :func:`refit_message_lines`).
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

    pytest imports the conftest files beside every path argument (``known_args_namespace.file_or_dir``)
    in ``pytest_load_initial_conftests``, before any plugin's own hooks run; no option skips one
    argument (``--noconftest`` skips all, ``--confcutdir`` only bounds the walk upwards). The list
    is restored as soon as that step ends. If pytest stops keeping the arguments there, nothing is
    hidden and a conftest beside the results would be imported: the compat test then fails.
    """
    namespace = early_config.known_args_namespace
    given = getattr(namespace, "file_or_dir", None)
    namespace.file_or_dir = [arg for arg in given or () if not hidden(arg)]
    try:
        yield
    finally:
        namespace.file_or_dir = given


def set_test_paths(config: pytest.Config, args: list[str]) -> None:
    """Make ``args`` the paths pytest collects (``Config.args``, read by ``Session.perform_collect``).

    ``Config.args`` is a documented attribute but not documented as writable; no hook narrows the
    initial paths before collection starts. ``pytest_ignore_collect`` would still walk the path's
    directory, and importing its conftest is what must not happen.
    """
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
    """The hooks pytest would call for nodes at ``path``: every plugin, and of the conftest files
    loaded, those of its directory and the directories above it (the rootdir's, typically).

    pytest's own ``Session.gethookproxy`` answers only for directories it has collected, and the
    gate's file's directory is never collected: there it would drop every conftest, the rootdir's
    runtest hooks included. So the conftest plugins are told by their module file
    (``conftest.py``, pytest's registration of them) and kept when they sit at or above ``path``.
    Built on pluggy's public ``subset_hook_caller``.
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
    """Collect ``node`` as pytest's ``genitems`` collects a file, firing the same public hooks
    (``pytest_make_collect_report``, ``pytest_collectreport``), for a node built in
    ``pytest_collection_modifyitems`` rather than found on disk. Its items, or none when its
    collection failed (reported like any collection error)."""
    report = node.ihook.pytest_make_collect_report(collector=node)
    node.ihook.pytest_collectreport(report=report)
    if not report.passed:
        return []
    return [item for item in report.result if isinstance(item, pytest.Item)]


def set_crash_message(representation: object, message: str, location: Optional[tuple[str, int]] = None) -> None:
    """Make ``message`` (at ``location``: path, 1-based line) the crash line of a failure.

    pytest, JUnit, pytest-json-report (``crash``), pytest-html and the short summary read the crash
    line from ``longrepr.reprcrash``, which pytest fills from the exception's type and text and the
    raising line of code; no hook or option chooses it. A ``repr_failure`` that returns a plain
    string (as pytest-mypy's does) has no ``reprcrash`` at all, so the short summary would name the
    node id alone and JUnit's ``message`` would be the whole message. This writes the finding's
    header, and the task's row as its location, into the representation ``Item.repr_failure`` has
    just built. If its shape changes, nothing is written and pytest's own crash line stands.
    """
    crash = getattr(representation, "reprcrash", None)
    if crash is not None and hasattr(crash, "message"):
        crash.message = message
        if location is not None and hasattr(crash, "path") and hasattr(crash, "lineno"):
            crash.path, crash.lineno = location


def refit_message_lines(representation: object, fitted: Callable[[list[str]], list[str]]) -> None:
    """Print a message-only (``style="value"``) failure's body lines as ``fitted`` gives them.

    Such a representation holds the whole message for every --tb style: this wraps it to the
    terminal's width, or cuts it to what the style asks for (``--tb=line`` prints that body before
    the crash line, and should print the crash line alone). If pytest's shape changes, the message
    is printed as it is.
    """
    traceback = getattr(representation, "reprtraceback", None)
    entries = getattr(traceback, "reprentries", None)
    if entries and isinstance(getattr(entries[-1], "lines", None), list):
        entries[-1].lines[:] = fitted(entries[-1].lines)


def add_junit_suite_property(config: pytest.Config, name: str, value: str) -> None:
    """A `<property>` of the JUnit file's test suite (``--junitxml``), when one is being written.

    pytest's public `record_testsuite_property` is a fixture, for a test to call; the run's verdict
    is known only once every item has run, so it goes through the same object that fixture uses.
    If pytest's shape changes, this does nothing: the verdict is still in every other report.
    """
    from _pytest.junitxml import xml_key  # in every pytest from 8.0, the floor

    add = getattr(config.stash.get(xml_key, None), "add_global_property", None)
    if callable(add):
        add(name, value)

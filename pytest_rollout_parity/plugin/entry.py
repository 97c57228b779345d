"""The pytest11 entry point: options, the hook a conftest implements, the `rollout_pair` fixture.

Loaded in every pytest run where the plugin is installed, so it imports only pytest and what needs
nothing more; the gate (:mod:`.activate`) is imported only when a run gives a parity option.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Optional

import pytest

from ._pytest_compat import hide_initial_paths
from .options import parity_requested
from .options import pytest_addoption as pytest_addoption  # the hook, declared beside the options
from .placement import new_file_given, resolved_arg

if TYPE_CHECKING:
    from ..core import TaskComparison, Verdict


class ParityHooks:
    """Hook specifications a conftest.py can implement to take part in the gate (a class, so that
    this module, itself a plugin, does not implement them)."""

    @pytest.hookspec(firstresult=True)
    def pytest_parity_verdict(self, comparison: TaskComparison, config: pytest.Config) -> Optional[Verdict]:
        """Decide the outcome of one task's item, or return None to keep the default.

        Called as each task's item runs. The summary keeps the task's category and counts the verdicts
        hooks changed. Example: accept reviewed flips::

            # conftest.py
            from pytest_rollout_parity import Verdict

            KNOWN = {"fix-git": "flaky upstream test, reviewed in #123"}

            def pytest_parity_verdict(comparison, config):
                if comparison.category == "flipped" and comparison.task in KNOWN:
                    return Verdict.passed(KNOWN[comparison.task])
                return None
        """


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(ParityHooks)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """Hide an argument naming the new rollouts file (`new.jsonl::task`) while pytest imports the
    conftests beside its path arguments: no conftest beside the results runs (:mod:`.placement`)."""
    new = new_file_given(early_config)
    if new is None:
        return (yield)
    base = early_config.invocation_params.dir
    with hide_initial_paths(early_config, lambda arg: resolved_arg(arg, base) == new):
        return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """With parity options, read both sides before anything runs; without, do nothing at all."""
    if config.option.help or config.option.version or not parity_requested(config):
        return None
    from .activate import ParityGate, settings_from_config

    settings = settings_from_config(config)  # checked now; the sides are read once pytest configures
    if settings is not None:
        config.pluginmanager.register(ParityGate(settings), "rollout-parity-gate")
    return None


@pytest.fixture
def rollout_pair() -> None:
    """A task's comparison; parametrized per task when --parity-old/--parity-new are given."""
    pytest.skip("rollout_pair needs --parity-old and --parity-new (no rollout files to compare)")

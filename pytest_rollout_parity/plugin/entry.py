"""The pytest11 entry point: options, hookspecs and the `rollout_pair` fixture; the gate on demand.

Loaded in every pytest run of an environment the plugin is installed in, so it imports only pytest
and what needs nothing more (:mod:`.options`, :mod:`.hookspecs`, :mod:`.placement`). The gate itself (its settings,
reading, classification, the summary) is imported from :mod:`.activate` only when the run
gives a --parity-* option or a parity_* ini key.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Optional

import pytest

from . import hookspecs
from ._pytest_compat import hide_initial_paths
from .options import addoptions, parity_requested
from .placement import names_file, new_file_given


def pytest_addoption(parser: pytest.Parser) -> None:
    addoptions(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare pytest_parity_verdict for conftest.py files."""
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """pytest imports the conftest files beside every path argument before any plugin runs: an
    argument naming the new rollouts file (`new.jsonl::task`, a rerun by node id) is hidden from
    that step, so no conftest beside the results is imported (:mod:`.placement`)."""
    new = new_file_given(early_config)
    if new is None:
        return (yield)
    base = early_config.invocation_params.dir
    with hide_initial_paths(early_config, lambda arg: names_file(arg, base, new)):
        return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """With parity options, read both sides before anything runs; without, do nothing at all."""
    if config.option.help or config.option.version or not parity_requested(config):
        return None
    from .activate import activate

    activate(config)
    return None


@pytest.fixture
def rollout_pair() -> None:
    """A task's comparison; parametrized per task when --parity-old/--parity-new are given."""
    pytest.skip("rollout_pair needs --parity-old and --parity-new (no rollout files to compare)")

"""The pytest11 entry point: options, hookspecs and the `rollout_pair` fixture; the gate on demand.

Loaded in every pytest run of an environment the plugin is installed in, so it imports only pytest
and what needs nothing more (:mod:`.options`, :mod:`.hookspecs`). The gate itself (settings with
pydantic, reading, classification, the summary) is imported from :mod:`.activate` only when the run
gives a --parity-* option or a parity_* ini key.
"""

from __future__ import annotations

from typing import Optional

import pytest

from . import hookspecs
from .options import addoptions, parity_requested


def pytest_addoption(parser: pytest.Parser) -> None:
    """The --parity-* options and their ini keys."""
    addoptions(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare pytest_parity_verdict for conftest.py files."""
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """With parity options, read both sides before anything runs; without, do nothing at all."""
    if config.option.help or config.option.version or not parity_requested(config):
        return None
    from .activate import activate

    return activate(config)


@pytest.fixture
def rollout_pair() -> None:
    """A task's comparison; parametrized per task when --parity-old/--parity-new are given."""
    pytest.skip("rollout_pair needs --parity-old and --parity-new (no rollout files to compare)")

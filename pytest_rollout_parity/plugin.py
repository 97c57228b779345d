"""The pytest11 entry point: options, hookspecs, and the sub-plugins a gate run needs.

Without --parity-old/--parity-new (or their ini keys) nothing is loaded or registered beyond the
options and a `rollout_pair` fixture that skips.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Optional

import pytest

from . import hookspecs
from .collect import ParityFile
from .errors import CompareInputError
from .fixtures import parametrize_rollout_pair, rollout_pair  # noqa: F401 - the fixture is registered here
from .run import ParityRun
from .settings import addoptions, settings_from_config
from .summary_plugin import ParitySummary

RUN_KEY = pytest.StashKey[ParityRun]()
INPUT_ERROR_EXIT = 4  # pytest's usage-error status: 2 before configure breaks in-process pytester runs


def pytest_addoption(parser: pytest.Parser) -> None:
    addoptions(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """Read both sides before anything runs: an unusable input stops here with one line."""
    if config.option.help or config.option.version:
        return None
    settings = settings_from_config(config)
    if settings is None:
        return None
    try:
        run = ParityRun.load(settings, config.invocation_params.dir)
    except CompareInputError as exc:
        sys.stderr.write(f"ERROR: {exc}\n")
        return INPUT_ERROR_EXIT
    config.stash[RUN_KEY] = run
    _keep_cache_out_of_inputs(config, run)
    return None


def pytest_configure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return
    _collect_new_file(config, run.settings.new)
    config.pluginmanager.register(ParityCollection(run), "rollout-parity-collection")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(ParitySummary(run), "rollout-parity-summary")


def _covers(arg: str, base: Path, target: Path) -> bool:
    path = Path(arg.split("::", 1)[0])
    path = (path if path.is_absolute() else base / path).resolve()
    return path == target or path in target.parents


def _collect_new_file(config: pytest.Config, new: Path) -> None:
    """Make pytest collect the new file: alone when no test paths were given, else beside them."""
    target = new.resolve()
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
        config.args = [str(target)]
    elif not any(_covers(arg, config.invocation_params.dir, target) for arg in config.args):
        config.args = [*config.args, str(target)]


def _keep_cache_out_of_inputs(config: pytest.Config, run: ParityRun) -> None:
    """Point a not-yet-created `.pytest_cache` away from the input files' directories.

    Run from inside a results directory, the rootdir is that directory and pytest would create its
    cache there; the gate leaves input directories as they were. The cache (and with it `--lf`)
    moves to a per-rootdir directory under the user's cache home. This must happen before the
    cache plugin configures itself, so it primes pytest's ini cache; if that ever changes shape the
    cache simply stays where pytest puts it.
    """
    ini_cache = getattr(config, "_inicache", None)
    if not isinstance(ini_cache, dict) or "cache_dir" in ini_cache or not config.pluginmanager.has_plugin("cacheprovider"):
        return
    cache_dir = Path(os.path.expandvars(config.getini("cache_dir")))
    cache_dir = (cache_dir if cache_dir.is_absolute() else config.rootpath / cache_dir).resolve()
    if cache_dir.exists():
        return
    inputs = {path.resolve().parent for path in (run.settings.old, run.settings.new)}
    if not any(cache_dir.parent == folder or folder in cache_dir.parents for folder in inputs):
        return
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha1(str(config.rootpath).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    ini_cache["cache_dir"] = str(home / "pytest-rollout-parity" / digest)


class ParityCollection:
    """Collection-side hooks, registered in every process that collects (serial or xdist worker)."""

    def __init__(self, run: ParityRun) -> None:
        self.run = run
        self.target = run.settings.new.resolve()

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> Optional[ParityFile]:
        if file_path.resolve() == self.target:
            return ParityFile.for_run(parent, file_path, self.run)
        return None

    @pytest.hookimpl
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        parametrize_rollout_pair(metafunc, self.run)

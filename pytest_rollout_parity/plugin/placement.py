"""Where a gate run reads and writes: what pytest collects, and where its cache goes.

Both keep the gate out of the user's way: with no test paths only the new file is collected (a
results directory full of `test-stdout.txt` logs is never walked), and pytest's cache is not
created inside the input files' directories.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest


def _covers(arg: str, base: Path, target: Path) -> bool:
    path = Path(arg.split("::", 1)[0])
    path = (path if path.is_absolute() else base / path).resolve()
    return path == target or path in target.parents


def collect_new_file(config: pytest.Config, new: Path) -> None:
    """Make pytest collect the new file: alone when no test paths were given, else beside them."""
    target = new.resolve()
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
        config.args = [str(target)]
    elif not any(_covers(arg, config.invocation_params.dir, target) for arg in config.args):
        config.args = [*config.args, str(target)]


def keep_cache_out_of_inputs(config: pytest.Config, old: Path, new: Path) -> None:
    """Point a not-yet-created `.pytest_cache` away from the input files' directories.

    Run from inside a results directory, the rootdir is that directory and pytest would create its
    cache there; the gate leaves input directories as they were. The cache (and with it `--lf`)
    moves to a per-rootdir directory under the user's cache home. This must happen before the
    cache plugin configures itself, so it primes pytest's ini cache; if that ever changes shape the
    cache simply stays where pytest puts it.
    """
    ini_cache = getattr(config, "_inicache", None)
    if not isinstance(ini_cache, dict) or "cache_dir" in ini_cache:
        return
    if not config.pluginmanager.has_plugin("cacheprovider"):
        return
    configured = config.getini("cache_dir")
    if configured != ".pytest_cache":
        return  # the user chose where the cache goes
    cache_dir = (config.rootpath / configured).resolve()
    if cache_dir.exists():
        return
    inputs = {path.resolve().parent for path in (old, new)}
    if not any(cache_dir.parent == folder or folder in cache_dir.parents for folder in inputs):
        return
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha1(str(config.rootpath).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    ini_cache["cache_dir"] = str(home / "pytest-rollout-parity" / digest)

"""What a gate run collects: the new file, alone when no test paths are given.

A results directory full of `test-stdout.txt` logs (which match pytest's doctest glob) is then
never walked, so the gate can be run from inside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def _covers(arg: str, base: Path, target: Path) -> bool:
    path = _resolved(arg, base)
    return path == target or path in target.parents


def _resolved(arg: str, base: Path) -> Path:
    path = Path(arg.split("::", 1)[0])
    return (path if path.is_absolute() else base / path).resolve()


def collect_new_file(config: pytest.Config, new: Path) -> None:
    """Make pytest collect the new file: alone when no test paths were given, else beside them."""
    target = new.resolve()
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
        config.args = [str(target)]
    elif not any(_covers(arg, config.invocation_params.dir, target) for arg in config.args):
        config.args = [*config.args, str(target)]

"""Where the gate's items come from: built beside what pytest collects, never by collecting the results.

pytest imports the `conftest.py` files of every directory it collects a path from (up to the
rootdir). So the new rollouts file is taken out of pytest's arguments (a node id such as
`new.jsonl::task` is remembered as a selection) and its items are built with the public collection
hooks at `pytest_collection_modifyitems`, before `-k`, `-m`, `--deselect` and `--lf` select. No
conftest beside either side is imported unless the user names its directory as a test path, and a
results directory of `test-stdout.txt` logs (pytest's doctest glob matches them) is never walked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest

from ._pytest_compat import set_test_paths
from .options import ini_value


def resolve(value: str, base: Path) -> Path:
    """A path as given (``~`` expanded), a relative one against ``base``."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def resolved_arg(arg: str, base: Path) -> Optional[Path]:
    """The file a path argument (`file` or `file::name`) or the new side's setting names, resolved, or None."""
    try:
        return resolve(arg.split("::", 1)[0], base).resolve()
    except (OSError, ValueError):
        return None


def new_file_given(early_config: pytest.Config) -> Optional[Path]:
    """The new rollouts file as the settings will resolve it, read before the command line is parsed
    whole (`--parity-new`, else the `parity_new` ini key); None when not given."""
    value = getattr(early_config.known_args_namespace, "parity_new", None)
    base = early_config.invocation_params.dir
    if not value:
        value = ini_value(early_config, "parity_new")
        if not isinstance(value, str):
            return None
        base = early_config.inipath.parent if early_config.inipath else early_config.rootpath
    return resolved_arg(value, base)


def take_new_file(config: pytest.Config, new: Path) -> Optional[tuple[tuple[str, str], ...]]:
    """Take the new file out of pytest's arguments (left with none, pytest collects nothing itself);
    the item names they asked for by node id (`file::task`), each with its argument, or None for
    every item (also when a test path is a directory holding the file: pytest would collect it all)."""
    target, base = new.resolve(), config.invocation_params.dir
    if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:  # no test path given
        set_test_paths(config, [])
        return None
    named: list[tuple[str, str]] = []
    whole = False
    kept: list[str] = []
    for arg in config.args:
        path = resolved_arg(arg, base)
        if path != target:
            kept.append(arg)
            # a directory holding the file: pytest would collect all of it, so every task runs
            whole = whole or (path is not None and "::" not in arg and path in target.parents)
        elif "::" in arg:
            named.append((arg.split("::", 1)[1].split("::", 1)[0], arg))
        else:
            whole = True
    if len(kept) != len(config.args):
        set_test_paths(config, kept)
    return None if whole or not named else tuple(named)

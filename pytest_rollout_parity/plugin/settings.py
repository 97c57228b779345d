"""The plugin's options as one validated model: command line over ini, paths resolved, UsageError.

Relative paths from the command line resolve against the invocation directory; those from an ini
file against the ini file's directory, so an ini file means the same wherever pytest is run from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .options import OPTION_NAMES, ini_value


class ParitySettings(BaseModel):
    """Everything the gate was asked to do, validated once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    old: Path
    new: Path
    #: each file as messages name it: as typed on the command line, or resolved from the ini file
    old_shown: str = ""
    new_shown: str = ""
    key: Optional[str] = None
    tail: int = Field(15, ge=0)
    logs_roots: tuple[Path, ...] = ()
    json_path: Optional[Path] = None
    strict: bool = False

    @field_validator("key")
    @classmethod
    def _key_not_blank(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not value.strip():
            raise ValueError("must name a field")
        return value

    @property
    def same_file(self) -> bool:
        """Both sides name the same file (the summary notes it)."""
        try:
            return os.path.samefile(self.old, self.new)
        except OSError:
            return self.old == self.new


def _resolve(value: str, base: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def settings_from_config(config: pytest.Config) -> Optional[ParitySettings]:
    """The validated settings, or None when neither side is given (the plugin then does nothing)."""
    cwd = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    raw: dict[str, Any] = {}
    sources: dict[str, str] = {}

    for field_name, ini_name in (("old", "parity_old"), ("new", "parity_new")):
        cli = config.getoption(OPTION_NAMES[field_name].lstrip("-").replace("-", "_"))
        if cli:
            raw[field_name], sources[field_name] = _resolve(cli, cwd), OPTION_NAMES[field_name]
            raw[f"{field_name}_shown"] = cli
        elif ini_value(config, ini_name):
            raw[field_name], sources[field_name] = _resolve(ini_value(config, ini_name), ini_dir), ini_name
            raw[f"{field_name}_shown"] = str(raw[field_name])
    if not sources:
        return None
    if len(sources) == 1:
        given = next(iter(sources.values()))
        missing = "--parity-new" if "old" in sources else "--parity-old"
        raise pytest.UsageError(f"{given} was given without {missing}: the gate needs both sides")

    for field_name, option, ini_name in (("key", "parity_key", "parity_key"), ("tail", "parity_tail", "parity_tail"),
                                         ("strict", "parity_strict", "parity_strict")):
        cli = config.getoption(option)
        if cli is not None:
            raw[field_name], sources[field_name] = cli, OPTION_NAMES[field_name]
        elif ini_value(config, ini_name) is not None:
            raw[field_name], sources[field_name] = ini_value(config, ini_name), ini_name
    cli_roots = config.getoption("parity_logs_root")
    if cli_roots:
        raw["logs_roots"] = tuple(_resolve(r, cwd) for r in cli_roots)
    elif ini_value(config, "parity_logs_root"):
        raw["logs_roots"] = tuple(_resolve(r, ini_dir) for r in ini_value(config, "parity_logs_root"))
    json_path = config.getoption("parity_json")
    if json_path:
        raw["json_path"] = _resolve(json_path, cwd)
        sources["json_path"] = "--parity-json"

    try:
        settings = ParitySettings(**raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field_name = str(error["loc"][0]) if error["loc"] else "?"
        where = sources.get(field_name, OPTION_NAMES.get(field_name, field_name))
        value = raw.get(field_name)
        message = error["msg"].removeprefix("Value error, ")
        raise pytest.UsageError(f"{where}: {message[:1].lower() + message[1:]}, got {value!r}") from None
    _check_json_target(settings)
    for root in settings.logs_roots:
        if not root.is_dir():
            where = "--parity-logs-root" if cli_roots else "parity_logs_root"
            raise pytest.UsageError(f"{where}: {root} is not a directory")
    return settings


def _check_json_target(settings: ParitySettings) -> None:
    """An unwritable --parity-json stops the run before anything is read; its parent is never made."""
    target = settings.json_path
    if target is None:
        return
    if target.is_dir():
        raise pytest.UsageError(f"--parity-json: {target} is a directory")
    parent = target.parent
    if not parent.is_dir():
        raise pytest.UsageError(f"--parity-json: cannot write {target}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise pytest.UsageError(f"--parity-json: cannot write {target}: permission denied")

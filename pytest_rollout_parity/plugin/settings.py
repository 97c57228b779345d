"""The plugin's options as one validated model: command line over ini, paths resolved, UsageError.

Relative paths from the command line resolve against the invocation directory; those from an ini
file against the ini file's directory (CONTRACT.md, Options).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

OPTION_NAMES = {
    "old": "--parity-old",
    "new": "--parity-new",
    "key": "--parity-key",
    "old_key": "--parity-old-key",
    "new_key": "--parity-new-key",
    "agent": "--parity-agent",
    "old_agent": "--parity-old-agent",
    "new_agent": "--parity-new-agent",
    "tail": "--parity-tail",
    "logs_roots": "--parity-logs-root",
    "json_path": "--parity-json",
    "strict": "--parity-strict",
    "margin": "--parity-margin",
    "alpha": "--parity-alpha",
}


class ParitySettings(BaseModel):
    """Everything the gate was asked to do, validated once."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    old: Path
    new: Path
    #: each file as messages name it: as typed on the command line, or resolved from the ini file
    old_shown: str = ""
    new_shown: str = ""
    #: the join field given for both sides, and each side's own (a per-side key wins for its side)
    key: Optional[str] = None
    old_key: Optional[str] = None
    new_key: Optional[str] = None
    #: the agent (`agent_ref.name`) kept on both sides, and on each side
    agent: Optional[str] = None
    old_agent: Optional[str] = None
    new_agent: Optional[str] = None
    #: where each side's key and agent came from, for messages (an option or an ini key)
    sources: dict[str, str] = Field(default_factory=dict)
    tail: int = Field(15, ge=0)
    logs_roots: tuple[Path, ...] = ()
    json_path: Optional[Path] = None
    strict: bool = False
    #: margin mode: the largest mean-reward difference accepted as parity (reward units)
    margin: Optional[float] = Field(None, ge=0, allow_inf_nan=False)
    #: the false discovery rate below which a flip's repeats show it is not noise (margin mode)
    alpha: float = Field(0.05, gt=0, lt=1)

    @field_validator("key", "old_key", "new_key")
    @classmethod
    def _key_not_blank(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not value.strip():
            raise ValueError("must name a field")
        return value

    @field_validator("agent", "old_agent", "new_agent")
    @classmethod
    def _agent_not_blank(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and not value.strip():
            raise ValueError("must name an agent")
        return value

    def side_key(self, side: str) -> tuple[Optional[str], str]:
        """The side's join field (its own key, else the shared one) and the option that gave it."""
        return self._per_side(side, "key")

    def side_agent(self, side: str) -> tuple[Optional[str], str]:
        """The agent kept on the side (its own, else the shared one) and the option that gave it."""
        return self._per_side(side, "agent")

    def _per_side(self, side: str, what: str) -> tuple[Optional[str], str]:
        own, shared = f"{side}_{what}", what
        own_value, shared_value = getattr(self, own), getattr(self, shared)
        own_from, shared_from = self.sources.get(own, ""), self.sources.get(shared, "")
        # the command line wins over the ini file; on the same level the per-side value wins
        if own_value is not None and not (shared_value is not None and _is_ini(own_from) and not _is_ini(shared_from)):
            return own_value, own_from or OPTION_NAMES[own]
        return shared_value, shared_from or OPTION_NAMES[shared]

    @property
    def same_file(self) -> bool:
        """Both sides name the same file (the summary notes it)."""
        try:
            return os.path.samefile(self.old, self.new)
        except OSError:
            return self.old == self.new


def _is_ini(source: str) -> bool:
    return bool(source) and not source.startswith("--")


def addoptions(parser: pytest.Parser) -> None:
    """Register the command-line options and their ini keys."""
    group = parser.getgroup("rollout-parity", "rollout parity (compare two NeMo Gym rollout files)")
    group.addoption("--parity-old", metavar="PATH", help="rollouts JSONL of the old (reference) side")
    group.addoption("--parity-new", metavar="PATH", help="rollouts JSONL of the new (candidate) side")
    group.addoption("--parity-key", metavar="FIELD", help="dotted field holding the task id, for both sides")
    group.addoption("--parity-old-key", metavar="FIELD", help="dotted field holding the task id on the old side")
    group.addoption("--parity-new-key", metavar="FIELD", help="dotted field holding the task id on the new side")
    group.addoption("--parity-agent", metavar="NAME", help="keep only this agent's rows (agent_ref.name), both sides")
    group.addoption("--parity-old-agent", metavar="NAME", help="keep only this agent's rows on the old side")
    group.addoption("--parity-new-agent", metavar="NAME", help="keep only this agent's rows on the new side")
    group.addoption("--parity-tail", metavar="N", help="lines of the losing side's verifier output per flip (default 15)")
    group.addoption(
        "--parity-logs-root", metavar="DIR", action="append", default=None,
        help="extra directory for relative verifier_logs_dir (repeatable)",
    )
    group.addoption("--parity-json", metavar="PATH", help="also write the machine-readable summary there")
    group.addoption(
        "--parity-strict", action="store_true", default=None,
        help="masked, missing and agent-error tasks fail instead of xfail",
    )
    group.addoption(
        "--parity-margin", metavar="M",
        help="margin mode: pass when the mean reward difference is shown within +-M (reward units, e.g. 0.02); "
        "a flip then fails only when its repeats show it is not noise",
    )
    group.addoption(
        "--parity-alpha", metavar="A",
        help="margin mode: false discovery rate for the per-task tests of flips (default 0.05)",
    )
    parser.addini("parity_old", "rollouts JSONL of the old (reference) side", default=None)
    parser.addini("parity_new", "rollouts JSONL of the new (candidate) side", default=None)
    parser.addini("parity_key", "dotted field holding the task id, for both sides", default=None)
    parser.addini("parity_old_key", "dotted field holding the task id on the old side", default=None)
    parser.addini("parity_new_key", "dotted field holding the task id on the new side", default=None)
    parser.addini("parity_agent", "keep only this agent's rows (agent_ref.name), both sides", default=None)
    parser.addini("parity_old_agent", "keep only this agent's rows on the old side", default=None)
    parser.addini("parity_new_agent", "keep only this agent's rows on the new side", default=None)
    _addini_scalar(parser, "parity_tail", "lines of the losing side's verifier output per flip", int)
    parser.addini("parity_logs_root", "extra directories for relative verifier_logs_dir", type="linelist", default=[])
    _addini_scalar(parser, "parity_strict", "masked, missing and agent-error tasks fail instead of xfail", bool)
    _addini_scalar(parser, "parity_margin", "margin mode: the accepted mean reward difference (reward units)", float)
    _addini_scalar(parser, "parity_alpha", "margin mode: false discovery rate for the flips' tests", float)


def _addini_scalar(parser: pytest.Parser, name: str, help: str, scalar: type) -> None:
    """Accept a native TOML value (`[tool.pytest]`, pytest 9) as well as a string.

    Older pytest knows only string-typed ini values; the settings model converts either.
    """
    try:
        parser.addini(name, help, type=scalar | str, default=None)  # type: ignore[arg-type]
    except (AssertionError, TypeError, ValueError):
        parser.addini(name, help, default=None)


def _resolve(value: str, base: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def _ini(config: pytest.Config, name: str) -> Any:
    value = config.getini(name)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


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
        elif _ini(config, ini_name):
            raw[field_name], sources[field_name] = _resolve(_ini(config, ini_name), ini_dir), ini_name
            raw[f"{field_name}_shown"] = str(raw[field_name])
    if not sources:
        return None
    if len(sources) == 1:
        given = next(iter(sources.values()))
        missing = "--parity-new" if "old" in sources else "--parity-old"
        raise pytest.UsageError(f"{given} was given without {missing}: the gate needs both sides")

    for field_name in ("key", "old_key", "new_key", "agent", "old_agent", "new_agent", "tail", "strict",
                       "margin", "alpha"):
        cli = config.getoption(f"parity_{field_name}")
        if cli is not None:
            raw[field_name], sources[field_name] = cli, OPTION_NAMES[field_name]
        elif _ini(config, f"parity_{field_name}") is not None:
            raw[field_name], sources[field_name] = _ini(config, f"parity_{field_name}"), f"parity_{field_name}"
    raw["sources"] = {name: sources[name] for name in ("key", "old_key", "new_key", "agent", "old_agent", "new_agent")
                      if name in sources}
    cli_roots = config.getoption("parity_logs_root")
    if cli_roots:
        raw["logs_roots"] = tuple(_resolve(r, cwd) for r in cli_roots)
    elif _ini(config, "parity_logs_root"):
        raw["logs_roots"] = tuple(_resolve(r, ini_dir) for r in _ini(config, "parity_logs_root"))
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

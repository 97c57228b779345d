"""The plugin's options as one checked dataclass: command line over ini, paths resolved, UsageError.

Relative paths from the command line resolve against the invocation directory; those from an ini
file against the ini file's directory, so an ini file means the same wherever pytest is run from.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest

from ..core import (
    DEFAULT_MAX_MASKED,
    DEFAULT_MAX_MISSING,
    DEFAULT_MAX_UNCOMPARED,
    CompareInputError,
    Limit,
    ShardPatternError,
    check_companions,
    ci_files,
    coverage_places,
    expand,
    metrics_places,
    named_input,
    parse_limit,
    sidecar_places,
    visible,
)
from .options import OPTION, Option, ini_value
from .setting_values import (
    SettingError,
    as_bool,
    as_float,
    as_int,
    at_least,
    below,
    checked_as,
    finite,
    not_blank,
    optional,
)


def _limit(value: Any) -> Limit:
    if isinstance(value, Limit):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise SettingError("must be a count of tasks (3), a percentage of the old side's tasks (10%) or off")
    try:
        return parse_limit(str(value))
    except ValueError as exc:
        raise SettingError(str(exc)) from None


#: each checked setting and how its value is checked and converted, in the order they are checked
#: (the first that fails is the one a usage error names)
_CHECKS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("key", optional(not_blank("must name a field"))),
    ("old_key", optional(not_blank("must name a field"))),
    ("new_key", optional(not_blank("must name a field"))),
    ("agent", optional(not_blank("must name an agent"))),
    ("old_agent", optional(not_blank("must name an agent"))),
    ("new_agent", optional(not_blank("must name an agent"))),
    ("tail", at_least(0, as_int)),
    ("strict", as_bool),
    ("margin", optional(at_least(0, finite(as_float)))),
    ("alpha", below(1, above=0, convert=as_float)),
    ("allow_same_file", as_bool),
    ("max_missing", _limit),
    ("max_masked", _limit),
    ("max_uncompared", _limit),
    ("allow_copy", as_bool),
    ("plan", as_bool),
)


@dataclass(frozen=True)
class ParitySettings:
    """Everything the gate was asked to do, checked once when built (:class:`SettingError` names the
    field and why). A plain dataclass: a gate run imports no validation library for a dozen options."""

    old: Path
    new: Path
    #: each file as messages name it: as typed on the command line, or resolved from the ini file
    old_shown: str = ""
    new_shown: str = ""
    #: a side given as a glob or comma-separated globs matching several files: each (path, name
    #: shown), sorted (``old``/``new`` is then the first); empty for a side of one file
    old_shards: tuple[tuple[Path, str], ...] = ()
    new_shards: tuple[tuple[Path, str], ...] = ()
    #: the join field given for both sides, and each side's own (a per-side key wins for its side)
    key: Optional[str] = None
    old_key: Optional[str] = None
    new_key: Optional[str] = None
    #: the agent (`agent_ref.name`) kept on both sides, and on each side
    agent: Optional[str] = None
    old_agent: Optional[str] = None
    new_agent: Optional[str] = None
    #: where each side's key and agent came from, for messages (an option or an ini key)
    sources: dict[str, str] = field(default_factory=dict)
    tail: int = 15
    logs_roots: tuple[Path, ...] = ()
    json_path: Optional[Path] = None
    markdown_path: Optional[Path] = None
    html_path: Optional[Path] = None
    strict: bool = False
    #: margin mode: the largest mean-reward difference accepted as parity (reward units)
    margin: Optional[float] = None
    #: the false discovery rate below which a flip's repeats show it is not noise (margin mode)
    alpha: float = 0.05
    #: both sides may name one file (a deliberate smoke test); otherwise that is a usage error
    allow_same_file: bool = False
    #: the reviewed flips that pass (`--parity-known-flips`), and the file as messages name it
    known_flips: Optional[Path] = None
    known_flips_shown: str = ""
    #: the coverage item's limits on old tasks missing from / masked on the new side
    max_missing: Limit = field(default_factory=lambda: parse_limit(DEFAULT_MAX_MISSING))
    max_masked: Limit = field(default_factory=lambda: parse_limit(DEFAULT_MAX_MASKED))
    #: the one budget of lost evidence: old-side tasks not compared for whatever reason
    max_uncompared: Limit = field(default_factory=lambda: parse_limit(DEFAULT_MAX_UNCOMPARED))
    #: two sides that hold the same rows pass the copy item (a dry run of the CI wiring)
    allow_copy: bool = False
    #: print what to run next for the pair, run no item, exit 0
    plan: bool = False

    def __post_init__(self) -> None:
        """Each checked setting converted as an ini file or TOML may give it (`"3"`, `3`, `"yes"`)."""
        for name, check in _CHECKS:
            object.__setattr__(self, name, checked_as(name, check, getattr(self, name)))

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
            return own_value, own_from or OPTION[own].flag
        return shared_value, shared_from or OPTION[shared].flag

    def side_files(self, side: str) -> list[Path]:
        """Every file a side is read from: its shards, or its one file."""
        shards = self.old_shards if side == "old" else self.new_shards
        return [path for path, _ in shards] or [self.old if side == "old" else self.new]

    @property
    def shared_file(self) -> Optional[Path]:
        """A file both sides name (the new side's name for it), or None."""
        for new in self.side_files("new"):
            for old in self.side_files("old"):
                try:
                    if os.path.samefile(old, new):
                        return new
                except OSError:
                    if old == new:
                        return new
        return None

    @property
    def same_file(self) -> bool:
        """Both sides name the same file (the summary notes it)."""
        return self.shared_file is not None


def _is_ini(source: str) -> bool:
    return bool(source) and not source.startswith("--")


def _resolve(value: str, base: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


#: the settings given as they are (the others are paths, resolved against where they were given)
_AS_GIVEN = (
    "key",
    "old_key",
    "new_key",
    "agent",
    "old_agent",
    "new_agent",
    "tail",
    "strict",
    "margin",
    "alpha",
    "allow_same_file",
    "max_missing",
    "max_masked",
    "max_uncompared",
    "allow_copy",
    "plan",
)
#: the settings whose source each side's messages name
_KEYS_AND_AGENTS = ("key", "old_key", "new_key", "agent", "old_agent", "new_agent")


def _given(
    config: pytest.Config, option: Option, present: Callable[[Any], bool] = lambda value: value is not None
) -> Optional[tuple[Any, str]]:
    """(value, where it was given): the command line over the ini file; None when neither gives a
    value that is ``present`` (a path or a list of them: not empty)."""
    cli = config.getoption(option.dest)
    if present(cli):
        return cli, option.flag
    if option.ini is not None and present(value := ini_value(config, option.ini)):
        return value, option.ini
    return None


def settings_from_config(config: pytest.Config) -> Optional[ParitySettings]:
    """The validated settings, or None when neither side is given (the plugin then does nothing)."""
    cwd = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    raw: dict[str, Any] = {}
    sources: dict[str, str] = {}

    for option in (OPTION["old"], OPTION["new"]):
        given = _given(config, option, bool)
        if given is not None:
            sources[option.field] = given[1]
            from_ini = given[1] == option.ini
            _side_files(raw, option.field, given[0], ini_dir if from_ini else cwd, given[1], from_ini=from_ini)
    if not sources:
        return None
    if len(sources) == 1:
        given_as = next(iter(sources.values()))
        missing = OPTION["new" if "old" in sources else "old"].flag
        raise pytest.UsageError(f"{given_as} was given without {missing}: the gate needs both sides")

    for field_name in _AS_GIVEN:
        given = _given(config, OPTION[field_name])
        if given is not None:
            raw[field_name], sources[field_name] = given
    raw["sources"] = {name: sources[name] for name in _KEYS_AND_AGENTS if name in sources}
    roots = _given(config, OPTION["logs_roots"], bool)
    if roots is not None:
        base = cwd if roots[1] == OPTION["logs_roots"].flag else ini_dir
        raw["logs_roots"] = tuple(_resolve(r, base) for r in roots[0])
    known = _given(config, OPTION["known_flips"], bool)
    if known is not None:
        if known[1] == OPTION["known_flips"].flag:
            raw["known_flips"], raw["known_flips_shown"] = _resolve(known[0], cwd), known[0]
        else:
            raw["known_flips"] = _resolve(known[0], ini_dir)
            raw["known_flips_shown"] = str(raw["known_flips"])
    for field_name in ("json_path", "markdown_path", "html_path"):
        target = config.getoption(OPTION[field_name].dest)
        if target:
            raw[field_name] = _resolve(target, cwd)
            sources[field_name] = OPTION[field_name].flag

    try:
        settings = ParitySettings(**raw)
    except SettingError as exc:
        field_name = exc.field_name
        where = sources.get(field_name, OPTION[field_name].flag if field_name in OPTION else field_name)
        value = raw.get(field_name)
        message = exc.message
        raise pytest.UsageError(f"{where}: {message[:1].lower() + message[1:]}, got {value!r}") from None
    _check_same_file(settings, sources)
    _check_companions(settings)
    json_flag, markdown_flag = OPTION["json_path"].flag, OPTION["markdown_path"].flag
    html_flag = OPTION["html_path"].flag
    _check_target(settings.json_path, json_flag)
    _check_target(settings.markdown_path, markdown_flag)
    _check_target(settings.html_path, html_flag)
    for target, named in (
        (settings.json_path, json_flag),
        (settings.markdown_path, markdown_flag),
        (settings.html_path, html_flag),
        *((path, name) for name, path in ci_files()),
    ):
        if target is not None:
            _check_not_an_input(target, named, settings)
    for root in settings.logs_roots:
        if not root.is_dir():
            where = roots[1] if roots is not None else OPTION["logs_roots"].flag
            raise pytest.UsageError(visible(f"{where}: {root} is not a directory"))
    return settings


def _side_files(raw: dict[str, Any], side: str, value: str, base: Path, source: str, *, from_ini: bool) -> None:
    """The side's file, or its shards when ``value`` is a glob or comma-separated globs matching several.

    Names from the command line are shown as typed (or as matched); those from an ini file resolved.
    """
    try:
        files = expand(value, base)
    except ShardPatternError as exc:
        raise pytest.UsageError(visible(f"{source}: {exc}")) from None
    if from_ini:
        files = [(path, str(path)) for path, _ in files]
    raw[side] = files[0][0]
    if len(files) == 1:
        raw[f"{side}_shown"] = files[0][1]
    else:
        raw[f"{side}_shown"] = value
        raw[f"{side}_shards"] = tuple(files)


def _check_companions(settings: ParitySettings) -> None:
    """A sidecar, metrics or coverage file linked out of its side's directory stops the run before
    anything is read (the core refuses it again when it reads, for the Python API)."""
    for side in ("old", "new"):
        shards = settings.old_shards if side == "old" else settings.new_shards
        files = list(shards) or [
            (getattr(settings, side), getattr(settings, f"{side}_shown") or str(getattr(settings, side)))
        ]
        for path, shown in files:
            try:
                check_companions(path, shown)
            except CompareInputError as exc:
                raise pytest.UsageError(visible(str(exc))) from None


def _check_same_file(settings: ParitySettings, sources: dict[str, str]) -> None:
    """Both sides naming one file (by any path, symlink or hard link) compares nothing: a usage error."""
    shared = settings.shared_file
    if shared is not None and not settings.allow_same_file:
        shown = settings.new_shown or str(settings.new)
        if settings.new_shards:
            shown = next((name for path, name in settings.new_shards if path == shared), str(shared))
        raise pytest.UsageError(
            f"{sources['old']} and {sources['new']} name the same file ({visible(shown)}): "
            "a file compared with itself shows nothing; give --parity-allow-same-file for a smoke test"
        )


def _inputs(settings: ParitySettings) -> list[tuple[str, Path]]:
    """Every file the gate reads: each side's rollouts file (each of its shards), its sidecar, metrics and coverage files, each
    beside the path as given and beside the file it resolves to (present or not: a file written there
    would be read by the next run)."""
    inputs: list[tuple[str, Path]] = []
    for side, path in ((name, file) for name in ("old", "new") for file in settings.side_files(name)):
        inputs.append((f"the {side} rollouts file", path))
        inputs.extend((f"the {side} side's failures sidecar", place) for place in sidecar_places(path))
        inputs.extend((f"the {side} side's aggregate metrics file", place) for place in metrics_places(path))
        inputs.extend((f"the {side} side's coverage file", place) for place in coverage_places(path))
    if settings.known_flips is not None:
        inputs.append(("the known-flips list", settings.known_flips))
    return inputs


def _check_not_an_input(target: Path, option: str, settings: ParitySettings) -> None:
    """An output naming an input, by any path or link, is refused before anything is read."""
    what = named_input(target, _inputs(settings))
    if what is not None:
        raise pytest.UsageError(visible(f"{option}: {target} is {what}: an output never overwrites an input"))


def _check_target(target: Optional[Path], option: str) -> None:
    """An output that could not be written stops the run before anything is read.

    A temporary file is made and removed in the target's directory, as the report itself will be
    written at the end (through a temporary file replacing the target, so an existing report is never
    truncated); no directory is ever made.
    """
    if target is None:
        return
    if target.is_dir():
        raise pytest.UsageError(visible(f"{option}: {target} is a directory, not a file"))
    parent = target.parent
    if not parent.is_dir():
        # the nearest ancestor that exists says what is wrong: a file in the way, or a missing directory
        chain = [parent, *parent.parents]
        found = next(index for index, path in enumerate(chain) if path.exists() or index == len(chain) - 1)
        if chain[found].exists() and not chain[found].is_dir():
            raise pytest.UsageError(
                visible(f"{option}: cannot write {target}: {chain[found]} is a file, not a directory")
            )
        raise pytest.UsageError(
            visible(f"{option}: cannot write {target}: directory {chain[max(found - 1, 0)]} does not exist")
        )
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise pytest.UsageError(visible(f"{option}: cannot write {target}: {exc.strerror or exc}")) from None
    os.close(fd)
    os.unlink(probe)
    if target.exists() and not os.access(target, os.W_OK):
        raise pytest.UsageError(visible(f"{option}: cannot write {target}: permission denied"))

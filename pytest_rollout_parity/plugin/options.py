"""The gate's settings, each declared once on the field of the one frozen object the plugin reads:
its command-line option and ini key, its default, and how a value is converted and checked.

Imported by the entry point in every pytest run, so it needs nothing but pytest.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import pytest

if TYPE_CHECKING:
    from ..core import Limit

#: converts and checks a value as the command line, an ini file (a string) or TOML gives it; a
#: ValueError says what the value must be
Convert = Callable[[Any], Any]


@dataclass(frozen=True)
class Option:
    """How one setting is given: its command-line option, its ini key (if any), how a value is taken."""

    flag: str
    help: str
    metavar: Optional[str] = None
    #: also given by an ini key (``parity_...``); else on the command line only
    has_ini: bool = True
    convert: Optional[Convert] = None
    #: a path (or, repeated, paths): resolved against the directory of the place it was given in
    path: bool = False
    #: given several times on the command line; a list of lines in an ini file
    repeated: bool = False
    #: the settings field it fills
    field: str = ""

    @property
    def dest(self) -> str:
        """Its name in ``config.getoption``, and its ini key's."""
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def ini(self) -> Optional[str]:
        return self.dest if self.has_ini else None

    @property
    def action(self) -> Optional[str]:
        """A flag without a value (``store_true``), one given several times (``append``), or None."""
        return "store_true" if self.convert is _switch else "append" if self.repeated else None


def option(flag: str, help: str, metavar: Optional[str] = None, *, default: Any = None, **how: Any) -> Any:
    """A settings field given by ``flag`` and, unless ``has_ini=False``, by its ini key (the same help
    in ``pytest --help``); ``how``: the rest of :class:`Option`. The default is converted too."""
    return field(default=default, metadata={"option": Option(flag, help, metavar, **how)})


def switch(flag: str, help: str, *, has_ini: bool = True) -> Any:
    """A flag, off by default: ``flag`` turns it on, its ini key (unless ``has_ini=False``) says either way."""
    return option(flag, help, default=False, has_ini=has_ini, convert=_switch)


def _naming(what: str) -> Convert:
    """None, or a string with something in it besides whitespace (it names ``what``)."""

    def convert(value: Any) -> Optional[str]:
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"must name {what}")
        return value

    return convert


def join_field(flag: str, where: str) -> Any:
    """The dotted field that holds the task id, ``where`` (a side, or both)."""
    return option(flag, f"dotted field holding the task id {where}", "FIELD", convert=_naming("a field"))


def agent_kept(flag: str, where: str) -> Any:
    """The agent whose rows are kept, ``where`` (a side, or both)."""
    return option(flag, f"keep only this agent's rows {where}", "NAME", convert=_naming("an agent"))


def output(flag: str, what: str) -> Any:
    """A report to write at a path: given on the command line only, as each run writes its own."""
    return option(flag, f"also write {what} there", "PATH", has_ini=False, path=True)


def _count(value: Any) -> int:
    """A whole number, 0 or more (an ini file gives it as a string)."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdecimal():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be a whole number, 0 or more")
    return value


def _real(value: Any, must: str, accept: Callable[[float], bool]) -> float:
    """A finite number ``accept`` takes (an ini file gives it as a string); else ``must`` says what it must be."""
    if isinstance(value, str):
        with suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not accept(value):
        raise ValueError(must)
    return float(value)


def _margin(value: Any) -> Optional[float]:
    return None if value is None else _real(value, "must be a number, 0 or more (reward units)", lambda x: x >= 0)


def _rate(value: Any) -> float:
    return _real(value, "must be a number between 0 and 1, both excluded", lambda x: 0 < x < 1)


_SWITCH = {word: True for word in ("1", "true", "t", "yes", "y", "on")}
_SWITCH.update({word: False for word in ("0", "false", "f", "no", "n", "off")})


def _switch(value: Any) -> bool:
    """A boolean: True/False, 0/1, or a word for one (`yes`, `off`, `t`, ...)."""
    if isinstance(value, bool):
        return value
    word = _SWITCH.get(str(value).strip().lower()) if isinstance(value, (str, int)) else None
    if word is None:
        raise ValueError("must be true or false (or yes/no, on/off, 1/0)")
    return word


def _limit(value: Any) -> Limit:
    """`N`, `P%` or `off` (TOML may give `N` as a number)."""
    from ..core import Limit, parse_limit  # called only when a gate run builds its settings

    if isinstance(value, Limit):
        return value
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError("must be a count of tasks (3), a percentage of the old side's tasks (10%) or off")
    return parse_limit(str(value))


#: the scalar an ini key holds, also accepted natively from TOML, by the converter of its setting
_INI_SCALARS: dict[Convert, type] = {_count: int, _margin: float, _rate: float, _switch: bool, _limit: int}


def limit(flag: str, condition: str, default: str) -> Any:
    """A limit on the old side's tasks the item parity-coverage allows (``condition`` says which)."""
    help = (
        f"the item parity-coverage fails when more old tasks than this {condition}: "
        f"a count, a percentage of the old side's tasks, or off (default {default}%)"
    )
    return option(flag, help, "N|P%|off", default=default, convert=_limit)


@dataclass(frozen=True)
class ParitySettings:
    """Everything the gate was asked to do, each field checked once when built (a ``pytest.UsageError``
    names the option or ini key and why), in the order ``pytest --help`` lists the options."""

    old: Path = option("--parity-old", "rollouts JSONL of the old (reference) side", "PATH", default=MISSING, path=True)
    new: Path = option("--parity-new", "rollouts JSONL of the new (candidate) side", "PATH", default=MISSING, path=True)
    #: the join field of both sides, and each side's own: the one it reads, once settings_from_config ran
    key: Optional[str] = join_field("--parity-key", "for both sides")
    old_key: Optional[str] = join_field("--parity-old-key", "on the old side")
    new_key: Optional[str] = join_field("--parity-new-key", "on the new side")
    #: the agent (`agent_ref.name`) kept on both sides, and on each side (the one it keeps, likewise)
    agent: Optional[str] = agent_kept("--parity-agent", "(agent_ref.name), both sides")
    old_agent: Optional[str] = agent_kept("--parity-old-agent", "on the old side")
    new_agent: Optional[str] = agent_kept("--parity-new-agent", "on the new side")
    tail: int = option(
        "--parity-tail",
        "lines of the losing side's verifier output per flip (default 15)",
        "N",
        default=15,
        convert=_count,
    )
    logs_roots: tuple[Path, ...] = option(
        "--parity-logs-root",
        "extra directory for relative verifier_logs_dir (repeatable)",
        "DIR",
        default=(),
        path=True,
        repeated=True,
    )
    json_path: Optional[Path] = output("--parity-json", "the machine-readable summary")
    markdown_path: Optional[Path] = output(
        "--parity-markdown", "the summary as Markdown (as appended to $GITHUB_STEP_SUMMARY under GitHub Actions)"
    )
    html_path: Optional[Path] = output(
        "--parity-html", "the report as one self-contained HTML page (verdict, pictures, flips; opens offline)"
    )
    strict: bool = switch("--parity-strict", "masked, missing and agent-error tasks fail instead of xfail")
    margin: Optional[float] = option(
        "--parity-margin",
        "margin mode: pass when the mean reward difference is shown within +-M (reward units, e.g. 0.02); "
        "a flip then fails only when its repeats show it is not noise",
        "M",
        convert=_margin,
    )
    alpha: float = option(
        "--parity-alpha",
        "margin mode: false discovery rate for the per-task tests of flips (default 0.05)",
        "A",
        default=0.05,
        convert=_rate,
    )
    allow_same_file: bool = switch(
        "--parity-allow-same-file",
        "allow both sides to name the same file (a smoke test of the gate; otherwise a usage error)",
    )
    known_flips: Optional[Path] = option(
        "--parity-known-flips",
        "reviewed flips that pass: one task label a line, then `# reason` (a usage error names a bad line)",
        "FILE",
        path=True,
    )
    #: the coverage limits: by default a finished run misses no task and masks few, and loses at most
    #: a fifth of the old side's tasks for any reason (docs/semantics.md, "Evidence budget")
    max_missing: Limit = limit("--parity-max-missing", "are missing from the new side", "20%")
    max_masked: Limit = limit("--parity-max-masked", "are masked on the new side", "30%")
    max_uncompared: Limit = limit(
        "--parity-max-uncompared", "could not be compared (the evidence budget: missing, masked, agent error)", "20%"
    )
    allow_copy: bool = switch(
        "--parity-allow-copy",
        "let two sides that hold the same rows pass the item parity-copy (a dry run of the CI wiring)",
    )
    plan: bool = switch(
        "--parity-plan",
        "print what to run next for the pair (repeats and tasks that would decide), run no item, exit 0",
        has_ini=False,
    )
    #: each file as messages name it: as typed on the command line, or resolved from the ini file
    old_shown: str = ""
    new_shown: str = ""
    known_flips_shown: str = ""
    #: every file a side is read from, each (path, name shown): its one file, or its globs' matches sorted
    old_files: tuple[tuple[Path, str], ...] = ()
    new_files: tuple[tuple[Path, str], ...] = ()
    #: (name shown, what it is) of each file the side's glob matched that is no rollouts: left out, noted
    old_left_out: tuple[tuple[str, str], ...] = ()
    new_left_out: tuple[tuple[str, str], ...] = ()
    #: where each given setting came from, for messages: its option or its ini key
    sources: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Each value converted and checked in field order: the first unusable one is one line."""
        from ..core import visible  # called only when a gate run builds its settings

        for declared in OPTIONS:
            if declared.convert is None:
                continue
            value = getattr(self, declared.field)
            try:
                object.__setattr__(self, declared.field, declared.convert(value))
            except ValueError as exc:
                where = self.sources.get(declared.field, declared.flag)
                raise pytest.UsageError(visible(f"{where}: {exc}, got {value!r}")) from None

    @property
    def shared_file(self) -> Optional[str]:
        """A file both sides name (by any path, symlink or hard link), as the new side shows it; or None."""
        from ..core import named_input  # called only once a gate run has its settings

        old = [("", path) for path, _ in self.old_files]
        return next((shown for new, shown in self.new_files if named_input(new, old) is not None), None)


#: Every setting given by an option, in the order ``pytest --help`` lists them.
OPTIONS: tuple[Option, ...] = tuple(
    replace(each.metadata["option"], field=each.name) for each in fields(ParitySettings) if "option" in each.metadata
)
#: each setting by its field name
OPTION = {declared.field: declared for declared in OPTIONS}


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the command-line options and their ini keys, from :data:`OPTIONS`."""
    group = parser.getgroup("rollout-parity", "rollout parity (compare two NeMo Gym rollout files)")
    for declared in OPTIONS:
        metavar = {} if declared.action == "store_true" else {"metavar": declared.metavar}
        group.addoption(declared.flag, action=declared.action, default=None, help=declared.help, **metavar)
        if declared.ini is None:
            continue
        help = declared.help.replace("%%", "%")  # argparse's escape; an ini key's help is shown as written
        scalar = _INI_SCALARS.get(declared.convert) if declared.convert is not None else None
        if declared.repeated:
            parser.addini(declared.ini, help, type="linelist", default=[])
        elif scalar is None:
            parser.addini(declared.ini, help, default=None)
        else:
            # a native TOML value (`[tool.pytest]`, pytest 9) as well as a string; older pytest knows
            # only string-typed ini values, and the settings convert either
            try:
                parser.addini(declared.ini, help, type=scalar | str, default=None)  # type: ignore[arg-type]
            except (AssertionError, TypeError, ValueError):
                parser.addini(declared.ini, help, default=None)


def ini_value(config: pytest.Config, name: str) -> Any:
    """An ini key's value; a blank string is None (not given). pytest 9 warns that a TOML list under
    `[tool.pytest.ini_options]` reaches a string key; the settings refuse it in one line instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pytest.PytestDeprecationWarning)
        value = config.getini(name)
    return (value.strip() or None) if isinstance(value, str) else value


def parity_requested(config: pytest.Config) -> bool:
    """Whether the run gives any --parity-* option or parity_* ini key (cheap: no validation)."""
    if any(config.getoption(declared.dest) is not None for declared in OPTIONS):
        return True
    return any(ini_value(config, declared.ini) not in (None, []) for declared in OPTIONS if declared.ini is not None)

"""The --parity-* options and their ini keys, and whether a run gave any of them.

Imported by the entry point in every pytest run, so it needs nothing but pytest: the settings (:mod:`.settings`)
and the gate itself are imported only once :func:`parity_requested` says yes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

import pytest

#: The coverage limits' defaults, as `core.coverage` has them (not imported: no run that leaves the
#: gate unused may import the core); a test checks that both say the same.
DEFAULT_MAX_MISSING = "20%"
DEFAULT_MAX_MASKED = "30%"
DEFAULT_MAX_UNCOMPARED = "20%"

IniType = Literal["string", "linelist", "int", "float", "bool"]


@dataclass(frozen=True)
class Option:
    """One setting of the gate: its command-line option, its ini key (if any) and the side it is for."""

    #: the field of the settings model it fills
    field: str
    #: the command-line option (``--parity-...``)
    flag: str
    help: str
    metavar: Optional[str] = None
    #: the ini key, and its help in ``pytest --help``; None: given on the command line only
    ini: Optional[str] = None
    ini_help: str = ""
    #: what the ini key holds: a string, a list of lines, or a scalar also accepted natively from TOML
    ini_type: IniType = "string"
    #: the side it is for (old or new); None for both sides or the run
    side: Optional[str] = None
    #: a flag without a value (``store_true``), or one given several times (``append``)
    action: Optional[str] = None

    @property
    def dest(self) -> str:
        """Its name in ``config.getoption``."""
        return self.flag.lstrip("-").replace("-", "_")


def _named_alike(field: str, metavar: str, help: str) -> Option:
    """A string setting named alike as an option and as an ini key (``parity_<field>``), its side
    the one its name starts with."""
    side = field.partition("_")[0]
    return Option(
        field,
        f"--parity-{field.replace('_', '-')}",
        help,
        metavar,
        f"parity_{field}",
        help,
        side=side if side in ("old", "new") else None,
    )


def _limit_help(what: str, default: str) -> str:
    return (
        f"the item parity-coverage fails when more old tasks than this are {what} the new side: "
        f"a count, a percentage of the old side's tasks, or off (default {default}%)"
    )


#: Every setting, in the order ``pytest --help`` lists them.
OPTIONS: tuple[Option, ...] = (
    _named_alike("old", "PATH", "rollouts JSONL of the old (reference) side"),
    _named_alike("new", "PATH", "rollouts JSONL of the new (candidate) side"),
    _named_alike("key", "FIELD", "dotted field holding the task id, for both sides"),
    _named_alike("old_key", "FIELD", "dotted field holding the task id on the old side"),
    _named_alike("new_key", "FIELD", "dotted field holding the task id on the new side"),
    _named_alike("agent", "NAME", "keep only this agent's rows (agent_ref.name), both sides"),
    _named_alike("old_agent", "NAME", "keep only this agent's rows on the old side"),
    _named_alike("new_agent", "NAME", "keep only this agent's rows on the new side"),
    Option(
        "tail",
        "--parity-tail",
        "lines of the losing side's verifier output per flip (default 15)",
        "N",
        "parity_tail",
        "lines of the losing side's verifier output per flip",
        "int",
    ),
    Option(
        "logs_roots",
        "--parity-logs-root",
        "extra directory for relative verifier_logs_dir (repeatable)",
        "DIR",
        "parity_logs_root",
        "extra directories for relative verifier_logs_dir",
        "linelist",
        action="append",
    ),
    Option("json_path", "--parity-json", "also write the machine-readable summary there", "PATH"),
    Option(
        "markdown_path",
        "--parity-markdown",
        "also write the summary as Markdown there (as appended to $GITHUB_STEP_SUMMARY under GitHub Actions)",
        "PATH",
    ),
    Option(
        "html_path",
        "--parity-html",
        "also write the report as one self-contained HTML page there (verdict, pictures, flips; opens offline)",
        "PATH",
    ),
    Option(
        "strict",
        "--parity-strict",
        "masked, missing and agent-error tasks fail instead of xfail",
        None,
        "parity_strict",
        "masked, missing and agent-error tasks fail instead of xfail",
        "bool",
        action="store_true",
    ),
    Option(
        "margin",
        "--parity-margin",
        "margin mode: pass when the mean reward difference is shown within +-M (reward units, e.g. 0.02); "
        "a flip then fails only when its repeats show it is not noise",
        "M",
        "parity_margin",
        "margin mode: the accepted mean reward difference (reward units)",
        "float",
    ),
    Option(
        "alpha",
        "--parity-alpha",
        "margin mode: false discovery rate for the per-task tests of flips (default 0.05)",
        "A",
        "parity_alpha",
        "margin mode: false discovery rate for the flips' tests",
        "float",
    ),
    Option(
        "allow_same_file",
        "--parity-allow-same-file",
        "allow both sides to name the same file (a smoke test of the gate; otherwise a usage error)",
        None,
        "parity_allow_same_file",
        "allow both sides to name the same file (a smoke test)",
        "bool",
        action="store_true",
    ),
    Option(
        "known_flips",
        "--parity-known-flips",
        "reviewed flips that pass: one task label a line, then `# reason` (a usage error names a bad line)",
        "FILE",
        "parity_known_flips",
        "file of reviewed flips that pass (`task  # reason` a line)",
    ),
    Option(
        "max_missing",
        "--parity-max-missing",
        _limit_help("missing from", DEFAULT_MAX_MISSING),
        "N|P%|off",
        "parity_max_missing",
        "most old tasks missing from the new side (N, P% or off)",
        "int",
    ),
    Option(
        "max_masked",
        "--parity-max-masked",
        _limit_help("masked on", DEFAULT_MAX_MASKED),
        "N|P%|off",
        "parity_max_masked",
        "most old tasks masked on the new side (N, P% or off)",
        "int",
    ),
    Option(
        "max_uncompared",
        "--parity-max-uncompared",
        "the evidence budget: the item parity-coverage fails when more old tasks than this could not be "
        "compared (missing, masked, agent error): a count, a percentage of the old side's tasks, or off "
        f"(default {DEFAULT_MAX_UNCOMPARED}%)",
        "N|P%|off",
        "parity_max_uncompared",
        "most old tasks not compared, for any reason (N, P% or off)",
        "int",
    ),
    Option(
        "allow_copy",
        "--parity-allow-copy",
        "let two sides that hold the same rows pass the item parity-copy (a dry run of the CI wiring)",
        None,
        "parity_allow_copy",
        "two sides that hold the same rows pass (a dry run of the CI wiring)",
        "bool",
        action="store_true",
    ),
    Option(
        "plan",
        "--parity-plan",
        "print what to run next for the pair (repeats and tasks that would decide), run no item, exit 0",
        None,
        action="store_true",
    ),
)
#: each setting by its field name
OPTION = {option.field: option for option in OPTIONS}
_SCALARS: dict[str, type] = {"int": int, "float": float, "bool": bool}


def addoptions(parser: pytest.Parser) -> None:
    """Register the command-line options and their ini keys, from :data:`OPTIONS`."""
    group = parser.getgroup("rollout-parity", "rollout parity (compare two NeMo Gym rollout files)")
    for option in OPTIONS:
        if option.action == "store_true":
            group.addoption(option.flag, action="store_true", default=None, help=option.help)
        elif option.action is not None:
            group.addoption(option.flag, metavar=option.metavar, action=option.action, default=None, help=option.help)
        else:
            group.addoption(option.flag, metavar=option.metavar, help=option.help)
    for option in OPTIONS:
        if option.ini is None:
            continue
        if option.ini_type == "linelist":
            parser.addini(option.ini, option.ini_help, type="linelist", default=[])
        elif option.ini_type in _SCALARS:
            _addini_scalar(parser, option.ini, option.ini_help, _SCALARS[option.ini_type])
        else:
            parser.addini(option.ini, option.ini_help, default=None)


def _addini_scalar(parser: pytest.Parser, name: str, help: str, scalar: type) -> None:
    """Accept a native TOML value (`[tool.pytest]`, pytest 9) as well as a string.

    Older pytest knows only string-typed ini values; the settings model converts either.
    """
    try:
        parser.addini(name, help, type=scalar | str, default=None)  # type: ignore[arg-type]
    except (AssertionError, TypeError, ValueError):
        parser.addini(name, help, default=None)


def ini_value(config: pytest.Config, name: str) -> Any:
    """An ini key's value; a blank string is None (not given)."""
    value = config.getini(name)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def parity_requested(config: pytest.Config) -> bool:
    """Whether the run gives any --parity-* option or parity_* ini key (cheap: no validation)."""
    if any(config.getoption(option.dest) is not None for option in OPTIONS):
        return True
    return any(ini_value(config, option.ini) not in (None, []) for option in OPTIONS if option.ini is not None)

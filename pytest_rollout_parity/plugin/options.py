"""The --parity-* options and their ini keys, and whether a run gave any of them.

Imported by the entry point in every pytest run, so it needs nothing but pytest: the settings model
(pydantic) and the gate itself are imported only once :func:`parity_requested` says yes.
"""

from __future__ import annotations

from typing import Any

import pytest

#: The coverage limits' defaults, as `core.coverage` has them (not imported: no run that leaves the
#: gate unused may import the core); a test checks that both say the same.
DEFAULT_MAX_MISSING = "20%"
DEFAULT_MAX_MASKED = "30%"

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
    "markdown_path": "--parity-markdown",
    "strict": "--parity-strict",
    "margin": "--parity-margin",
    "alpha": "--parity-alpha",
    "allow_same_file": "--parity-allow-same-file",
    "known_flips": "--parity-known-flips",
    "max_missing": "--parity-max-missing",
    "max_masked": "--parity-max-masked",
}
INI_NAMES = (
    "parity_old", "parity_new", "parity_key", "parity_old_key", "parity_new_key", "parity_agent",
    "parity_old_agent", "parity_new_agent", "parity_tail", "parity_logs_root", "parity_strict",
    "parity_margin", "parity_alpha", "parity_allow_same_file", "parity_known_flips",
    "parity_margin", "parity_alpha", "parity_allow_same_file", "parity_max_missing", "parity_max_masked",
)

# The files, keys and agents: a string each, the same words as an option and as an ini key.
SIDE_OPTIONS = (
    ("old", "PATH", "rollouts JSONL of the old (reference) side"),
    ("new", "PATH", "rollouts JSONL of the new (candidate) side"),
    ("key", "FIELD", "dotted field holding the task id, for both sides"),
    ("old_key", "FIELD", "dotted field holding the task id on the old side"),
    ("new_key", "FIELD", "dotted field holding the task id on the new side"),
    ("agent", "NAME", "keep only this agent's rows (agent_ref.name), both sides"),
    ("old_agent", "NAME", "keep only this agent's rows on the old side"),
    ("new_agent", "NAME", "keep only this agent's rows on the new side"),
)


def addoptions(parser: pytest.Parser) -> None:
    """Register the command-line options and their ini keys."""
    group = parser.getgroup("rollout-parity", "rollout parity (compare two NeMo Gym rollout files)")
    for name, metavar, help in SIDE_OPTIONS:
        group.addoption(f"--parity-{name.replace('_', '-')}", metavar=metavar, help=help)
    group.addoption("--parity-tail", metavar="N", help="lines of the losing side's verifier output per flip (default 15)")
    group.addoption(
        "--parity-logs-root", metavar="DIR", action="append", default=None,
        help="extra directory for relative verifier_logs_dir (repeatable)",
    )
    group.addoption("--parity-json", metavar="PATH", help="also write the machine-readable summary there")
    group.addoption(
        "--parity-markdown", metavar="PATH",
        help="also write the summary as Markdown there (as appended to $GITHUB_STEP_SUMMARY under GitHub Actions)",
    )
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
    group.addoption(
        "--parity-allow-same-file", action="store_true", default=None,
        help="allow both sides to name the same file (a smoke test of the gate; otherwise a usage error)",
    )
    group.addoption(
        "--parity-known-flips", metavar="FILE",
        help="reviewed flips that pass: one task label a line, then `# reason` (a usage error names a bad line)",
    )
    for name, default, what in (("missing", DEFAULT_MAX_MISSING, "missing from"), ("masked", DEFAULT_MAX_MASKED, "masked on")):
        group.addoption(
            f"--parity-max-{name}", metavar="N|P%|off",
            help=f"the item parity-coverage fails when more old tasks than this are {what} the new side: "
            f"a count, a percentage of the old side's tasks, or off (default {default}%)",
        )
    for name, _, help in SIDE_OPTIONS:
        parser.addini(f"parity_{name}", help, default=None)
    parser.addini("parity_known_flips", "file of reviewed flips that pass (`task  # reason` a line)", default=None)
    _addini_scalar(parser, "parity_tail", "lines of the losing side's verifier output per flip", int)
    parser.addini("parity_logs_root", "extra directories for relative verifier_logs_dir", type="linelist", default=[])
    _addini_scalar(parser, "parity_strict", "masked, missing and agent-error tasks fail instead of xfail", bool)
    _addini_scalar(parser, "parity_margin", "margin mode: the accepted mean reward difference (reward units)", float)
    _addini_scalar(parser, "parity_alpha", "margin mode: false discovery rate for the flips' tests", float)
    _addini_scalar(parser, "parity_allow_same_file", "allow both sides to name the same file (a smoke test)", bool)
    _addini_scalar(parser, "parity_max_missing", "most old tasks missing from the new side (N, P% or off)", int)
    _addini_scalar(parser, "parity_max_masked", "most old tasks masked on the new side (N, P% or off)", int)


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
    for option in OPTION_NAMES.values():
        if config.getoption(option.lstrip("-").replace("-", "_")) is not None:
            return True
    return any(ini_value(config, name) not in (None, []) for name in INI_NAMES)

"""Free when unused: a pytest run that gives no parity option imports none of the gate's machinery.

Each run is a subprocess (this process has long imported the gate); a conftest there records the
modules loaded by the end of the session.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import Gate

pytestmark = pytest.mark.slow  # every run is a fresh interpreter

HEAVY = ("pytest_rollout_parity.core", "pydantic", "pydantic_core", "tabulate")

PROBE = """
import json, sys

def pytest_sessionfinish(session):
    with open("modules.json", "w") as handle:
        json.dump(sorted(sys.modules), handle)
"""


def loaded_modules(gate: Gate, *args: str) -> list[str]:
    gate.pytester.makeconftest(PROBE)
    gate.pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = gate.run_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret in (0, 1), result.stderr.str()
    modules: list[str] = json.loads((gate.path / "modules.json").read_text())
    return modules


def heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY)]


def test_a_run_without_parity_options_imports_no_gate_machinery(gate: Gate) -> None:
    modules = loaded_modules(gate, "test_plain.py")
    assert "pytest_rollout_parity.plugin.entry" in modules  # the plugin was loaded ...
    assert heavy(modules) == []  # ... and nothing beyond its entry point


def test_the_rollout_pair_fixture_skips_without_importing_the_gate(gate: Gate) -> None:
    gate.pytester.makepyfile(test_pairs="def test_pair(rollout_pair):\n    assert rollout_pair\n")
    modules = loaded_modules(gate, "test_pairs.py", "-rs")
    assert heavy(modules) == []


@pytest.mark.parametrize("given", ["options", "ini"])
def test_a_gate_run_imports_the_gate(gate: Gate, given: str) -> None:
    """The probe sees the gate once it is asked for (so the test above can fail)."""
    args = gate.pair([{"task_id": "a", "reward": 1.0}], [{"task_id": "a", "reward": 1.0}])
    if given == "ini":
        gate.pytester.makeini(
            f"[pytest]\nparity_old = {args[0].split('=', 1)[1]}\nparity_new = {args[1].split('=', 1)[1]}\n"
        )
        args = []
    modules = loaded_modules(gate, *args)
    assert "pytest_rollout_parity.core.judging.classify" in modules


def test_every_parity_option_and_ini_key_switches_the_gate_on(gate: Gate) -> None:
    """Each registered --parity-* option and parity_* ini key counts as asking for the gate."""
    from pytest_rollout_parity.plugin.options import OPTIONS, parity_requested

    flags = [option.flag for option in OPTIONS]
    ini_names = [option.ini for option in OPTIONS if option.ini is not None]
    assert len(set(flags)) == len(flags) and len(set(ini_names)) == len(ini_names)
    shown = gate.pytester.runpytest("--help").stdout.str()
    assert set(re.findall(r"(--parity-[a-z-]+)", shown)) == set(flags)
    assert set(re.findall(r"^\s+(parity_[a-z_]+) \(", shown, flags=re.M)) == set(ini_names)
    assert not parity_requested(gate.pytester.parseconfig())
    for option in OPTIONS:
        args = [option.flag] if option.action == "store_true" else [f"{option.flag}=x"]
        assert parity_requested(gate.pytester.parseconfig(*args)), option.flag
    for name in ini_names:
        gate.pytester.makeini(f"[pytest]\n{name} = x\n")
        assert parity_requested(gate.pytester.parseconfig()), name

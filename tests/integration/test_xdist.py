"""Under pytest-xdist (`-n 2`): the same outcomes, one summary section, the same JSON."""

from __future__ import annotations

import json

import pytest

from .conftest import Gate, junit_cases, junit_properties, section
from .test_selection import ran

pytest.importorskip("xdist")
pytestmark = pytest.mark.slow  # every test starts xdist workers

NEW = "new/rollouts.jsonl"


def test_xdist_same_outcomes_one_section_same_json(gate: Gate) -> None:
    args = [*gate.mixed(), gate.beside()]
    serial = gate.run(*args, "-rA", "-vv", "--parity-json=serial.json")
    parallel = gate.run(*args, "-rA", "-vv", "--parity-json=xdist.json", "-n", "2", "--junitxml=x.xml")
    assert serial.ret == parallel.ret == 1
    assert "created: 2/2 workers" in parallel.stdout.str()
    assert ran(parallel) == ran(serial)
    assert len(ran(serial)) == 8
    parallel.assert_outcomes(passed=2, failed=2, xfailed=4)
    assert sum(" rollout parity " in line for line in parallel.outlines) == 1
    assert section(parallel) == section(serial)
    serial_json = json.loads((gate.path / "serial.json").read_text())
    parallel_json = json.loads((gate.path / "xdist.json").read_text())
    assert parallel_json == serial_json
    assert parallel_json["counts"]["tasks"] == 7
    # the flip message is shown the same way from a worker
    assert "regex-log: new regressed: old=1.0 new=0.0" in parallel.outlines
    assert "    | regex line 30" in parallel.outlines
    assert "Traceback" not in parallel.stdout.str()
    cases = junit_cases(gate.path / "x.xml")
    assert junit_properties(cases["regex-log"])["parity_task"] == "regex-log"
    failure = cases["regex-log"].find("failure")
    assert failure is not None and failure.get("message") == "new regressed: old=1.0 new=0.0"


def test_n_is_honoured_for_the_gate_items_alone(gate: Gate) -> None:
    """With no test path of the user's own, -n 2 still starts the workers asked for (no option rewritten)."""
    args = gate.mixed()
    serial = gate.run(*args, "-rA", "-vv", "--parity-json=serial.json")
    alone = gate.run(*args, "-rA", "-vv", "--parity-json=alone.json", "-n", "2")
    assert alone.ret == serial.ret == 1
    assert "created: 2/2 workers" in alone.stdout.str() and "not started" not in alone.stdout.str()
    assert ran(alone) == ran(serial) and len(ran(serial)) == 7
    assert section(alone) == section(serial)
    assert json.loads((gate.path / "alone.json").read_text()) == json.loads((gate.path / "serial.json").read_text())
    # --tx specs start what xdist starts
    specs = gate.run(*args, "-rA", "-vv", "--tx", "3*popen", "--dist", "load")
    assert "created: 3/3 workers" in specs.stdout.str()
    assert ran(specs) == ran(serial)


def test_xdist_strict_and_selection(gate: Gate) -> None:
    args = [*gate.mixed(), gate.beside()]
    serial = gate.run(*args, "-rA", "-vv", "--parity-strict", "-k", "not fix-git")
    parallel = gate.run(*args, "-rA", "-vv", "--parity-strict", "-k", "not fix-git", "-n", "2")
    assert ran(parallel) == ran(serial)
    assert set(ran(parallel).values()) == {"FAILED", "PASSED"}
    assert ran(parallel).pop("test_beside.py::test_beside") == "PASSED"
    assert section(parallel) == section(serial)


def test_xdist_nothing_compared_exit_status(gate: Gate) -> None:
    from .conftest import harbor_row, legacy_row

    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("regex-log", 1.0)])
    serial = gate.run(*args)
    parallel = gate.run(*args, "-n", "2")
    assert serial.ret == parallel.ret
    assert parallel.ret == 1  # inconclusive through parity-coverage, never 2
    assert any("no task was compared" in line for line in section(parallel))


def test_xdist_lf(gate: Gate) -> None:
    args = [*gate.mixed(), gate.beside()]
    assert gate.run(*args).ret == 1
    again = gate.run(*args, "--lf", "-n", "2", "-rA", "-vv")
    assert ran(again) == {"new/rollouts.jsonl::regex-log": "FAILED", "new/rollouts.jsonl::cancel-async-tasks": "FAILED"}
    assert sum(" rollout parity " in line for line in again.outlines) == 1

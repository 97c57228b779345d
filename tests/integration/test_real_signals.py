"""Agent-error signals and odd task ids, end to end: the flip is named, the summary is written."""

from __future__ import annotations

import json

from .conftest import SMALL_RUN_BUDGET, Gate, all_text, harbor_row, legacy_row


def test_whitespace_only_error_is_an_agent_error(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix-git", 0.0, error="  \n ")], [harbor_row("fix-git", 1.0)])
    result = gate.run(*args, "-rx", *SMALL_RUN_BUDGET)
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *::fix-git - *old agent error: error: (whitespace only)*"])


def test_harbor_counter_flip_names_the_counter(gate: Gate) -> None:
    old = [legacy_row("fix-git", 1.0)]
    new = [legacy_row("fix-git", 0.0, agent_timeout_error=1, context_length_exceeded_error=0)]
    result = gate.run(*gate.pair(old, new), "--parity-strict")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["    new agent error: agent_timeout_error=1"])


def test_lone_surrogate_task_id_json_is_written(gate: Gate) -> None:
    old = '{"task_id": "t\\ud800", "reward": 1.0}\n{"task_id": "ok", "reward": 1.0}\n'
    new = '{"task_id": "t\\ud800", "reward": 0.0}\n{"task_id": "ok", "reward": 1.0}\n'
    result = gate.run(*gate.pair(old, new), "--parity-json=s.json")
    assert "Traceback" not in all_text(result)
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=1)
    raw = (gate.path / "s.json").read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    assert b"\\ud800" in raw
    summary = json.loads(raw)
    assert {task["task"] for task in summary["tasks"]} == {"t\ud800", "ok"}

"""The run's `<stem>_aggregate_metrics.json` in the summary: recorded beside computed, notes, never an error."""

from __future__ import annotations

import json

from .conftest import Gate, all_text, section


def rows(rewards: dict[str, float]) -> list[dict]:
    return [{"task_id": t, "reward": r, "agent_ref": {"name": "simple_agent"}} for t, r in rewards.items()]


def metrics(mean: float) -> str:
    return json.dumps(
        [
            {
                "agent_ref": {"type": "responses_api_agents", "name": "simple_agent"},
                "agent_metrics": {"mean/reward": mean},
                "key_metrics": {"mean/reward": mean},
                "group_level_metrics": [],
            }
        ],
        indent=2,
    )


def test_recorded_and_computed_means_in_summary(gate: Gate) -> None:
    args = gate.pair(rows({"a": 1.0, "b": 0.0}), rows({"a": 1.0, "b": 1.0}))
    gate.write("old/rollouts_aggregate_metrics.json", metrics(0.5))
    gate.write("new/rollouts_aggregate_metrics.json", metrics(0.75))  # stale: the rows give 1.0
    result = gate.run(*args, "--parity-json=s.json")
    assert result.ret == 1
    lines = section(result)
    assert "old aggregate metrics: mean reward 0.5 recorded, 0.5 from 2 rows (agent simple_agent)" in lines
    assert "new aggregate metrics: mean reward 0.75 recorded, 1.0 from 2 rows (agent simple_agent)" in lines
    assert any(
        line.startswith("note: new side: new/rollouts_aggregate_metrics.json records a mean reward of 0.75")
        for line in lines
    )
    data = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))
    assert data["aggregate_metrics"]["old"] == {
        "file": "old/rollouts_aggregate_metrics.json",
        "agent": "simple_agent",
        "recorded_mean": 0.5,
        "computed_mean": 0.5,
        "rows": 2,
        "note": None,
    }
    assert data["aggregate_metrics"]["new"]["recorded_mean"] == 0.75


def test_malformed_metrics_file_is_a_note_not_an_error(gate: Gate) -> None:
    args = gate.pair(rows({"a": 1.0}), rows({"a": 1.0}))
    gate.write("new/rollouts_aggregate_metrics.json", "[{truncated")
    result = gate.run(*args, "--parity-json=s.json", "--parity-allow-copy")  # the same rows, on purpose
    assert result.ret == 0 and "Traceback" not in all_text(result)
    result.assert_outcomes(passed=2)  # the task, and parity-copy passed under --parity-allow-copy
    assert any(
        line.startswith("note: new side: new/rollouts_aggregate_metrics.json ignored:") for line in section(result)
    )
    data = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))
    assert data["aggregate_metrics"]["old"] is None
    assert data["aggregate_metrics"]["new"]["recorded_mean"] is None

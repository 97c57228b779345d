"""`<stem>_aggregate_metrics.json`: the run's recorded mean reward next to the rows' mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rollout_parity.core.judging.companions import check_side, metrics_path
from pytest_rollout_parity.core.reading.loaded_side import SideRequest
from pytest_rollout_parity.core.reading.loading import load_side

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
ANYSWE = REAL_FILES / "responses_api_agents" / "anyswe_agent" / "data" / "example_rollouts_opencode.jsonl"
KEY = "responses_create_params.metadata.instance_id"


def entry(name: str | None, mean: object) -> dict:
    """An entry shaped as NeMo Gym writes one (agent_metrics, key_metrics, group_level_metrics)."""
    return {
        "agent_ref": {"type": "responses_api_agents", "name": name} if name else None,
        "agent_metrics": {"mean/reward": mean, "pass@1/reward": mean},
        "key_metrics": {"mean/reward": mean},
        "group_level_metrics": [{"_ng_task_index": 0, "num_rollouts": 5}],
    }


@pytest.fixture
def side(tmp_path: Path) -> Path:
    """A copy of anyswe's real file (five rollouts of one task, rewards 0, 1, 1, 1, 1: mean 0.8)."""
    path = tmp_path / "example_rollouts_opencode.jsonl"
    path.write_bytes(ANYSWE.read_bytes())
    return path


def check(path: Path, agent: str | None = None):
    loaded = load_side(SideRequest(str(path), KEY, agent=agent))
    return check_side(loaded.path, "side.jsonl", loaded.agent, loaded.facts, "old")


def write_metrics(path: Path, data: object) -> None:
    metrics_path(path).write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_no_metrics_file_no_check(side: Path) -> None:
    assert check(side) is None


def test_recorded_mean_agrees(side: Path) -> None:
    write_metrics(side, [entry("some_other_agent", 0.1), entry("anyswe_opencode", 0.8)])
    result = check(side)
    assert result is not None
    assert (result.recorded_mean, result.computed_mean, result.rows, result.note) == (0.8, 0.8, 5, None)
    assert result.file == "side_aggregate_metrics.json" and result.agent == "anyswe_opencode"


def test_disagreement_is_a_note(side: Path) -> None:
    write_metrics(side, [entry("anyswe_opencode", 0.75)])
    result = check(side)
    assert result is not None and result.recorded_mean == 0.75
    assert result.note is not None
    assert result.note.startswith(
        "old side: side_aggregate_metrics.json records a mean reward of 0.75, the rows give 0.8"
    )


@pytest.mark.parametrize(
    ("recorded", "shown"),
    [
        (2 / 3, "records a mean reward of 0.6667, the rows give 0.8 "),
        (0.80004, "records a mean reward of 0.80004, the rows give 0.8 "),  # 4 places would hide the gap
    ],
)
def test_note_rounds_like_other_rewards(side: Path, recorded: float, shown: str) -> None:
    write_metrics(side, [entry("anyswe_opencode", recorded)])
    result = check(side)
    assert result is not None and result.note is not None and shown in result.note, result.note
    assert result.recorded_mean == recorded  # the JSON keeps the recorded value as it is


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "ignored: "),
        ('{"a": 1}', "its entry has no numeric mean/reward"),
        (json.dumps([entry("anyswe_opencode", "high")]), "its entry has no numeric mean/reward"),
        (json.dumps([entry("a", 0.5), entry("b", 0.5)]), "no single entry for agent anyswe_opencode (entries: a, b)"),
        ("[1, 2]", "expected a JSON array of objects"),
    ],
)
def test_bad_metrics_file_is_a_note(side: Path, content: str, reason: str) -> None:
    metrics_path(side).write_text(content, encoding="utf-8")
    result = check(side)
    assert result is not None and result.recorded_mean is None and result.computed_mean == 0.8
    assert result.note is not None and result.note.startswith("old side: side_aggregate_metrics.json ignored: ")
    assert reason in result.note


def test_rows_without_agent_ref_use_the_only_entry(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "reward": 0.0}\n', encoding="utf-8")
    write_metrics(path, [entry(None, 0.5)])
    loaded = load_side(SideRequest(str(path)))
    result = check_side(loaded.path, "r.jsonl", loaded.agent, loaded.facts, "new")
    assert result is not None and (result.recorded_mean, result.computed_mean, result.note) == (0.5, 0.5, None)

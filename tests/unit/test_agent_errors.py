"""Every agent-error signal real rollout files carry: the row stays scored, the flip is set apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rollout_parity import compare_files, compare_rollouts
from pytest_rollout_parity.core.reading.row_facts import agent_error

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
ANYSWE = REAL_FILES / "responses_api_agents" / "anyswe_agent" / "data" / "example_rollouts_opencode.jsonl"


def row(task: str, reward: float, **extra: object) -> dict:
    return {"task_id": task, "reward": reward, **extra}


@pytest.mark.parametrize(
    ("extra", "reward", "named"),
    [
        ({"error": "   \n\t "}, 0.0, "error: (whitespace only)"),
        ({"context_length_exceeded_error": 1}, 0.0, "context_length_exceeded_error=1"),
        ({"memory_limit_exceeded_error": 1}, 0.0, "memory_limit_exceeded_error=1"),
        ({"agent_timeout_error": 1}, 0.0, "agent_timeout_error=1"),
        ({"agent_timed_out": True, "agent_error_kind": "timeout"}, 0.0, "agent_timed_out=true"),
        ({"evaluation_completed": False}, 0.0, "evaluation_completed=false"),
        ({"agent_error": "Traceback ...\nTimeoutError: browse step\n"}, 0.0, "agent_error: TimeoutError: browse step"),
    ],
)
def test_signal_makes_the_flip_an_agent_error_and_is_named(extra: dict, reward: float, named: str) -> None:
    result = compare_rollouts([row("t", 1.0)], [row("t", reward, **extra)])
    (task,) = result.tasks
    assert task.category == "flipped_agent_error"
    assert task.new is not None and task.new.agent_error is not None
    assert task.new.agent_error.startswith(named)
    assert task.new.reward == reward and task.new.masked is None  # still scored


@pytest.mark.parametrize(
    "extra",
    [
        {"context_length_exceeded_error": 0, "memory_limit_exceeded_error": 0, "agent_timeout_error": 0},
        {"agent_timed_out": False, "agent_error_kind": "other"},
        {"agent_error_kind": "other"},
        {"evaluation_completed": True},
        {"agent_error": ""},
        {"agent_error": None},
        {"error": ""},
    ],
)
def test_quiet_values_are_no_agent_error(extra: dict) -> None:
    assert agent_error(row("t", 0.0, **extra), 0.0) is None
    (task,) = compare_rollouts([row("t", 1.0)], [row("t", 0.0, **extra)]).tasks
    assert task.category == "flipped"


def test_evaluation_not_completed_counts_only_on_a_zero_reward() -> None:
    assert agent_error({"evaluation_completed": False}, 0.0) is not None
    assert agent_error({"evaluation_completed": False}, 1.0) is None


def test_legacy_error_wins_and_is_named_first() -> None:
    both = {"error": "boom", "agent_timed_out": True, "context_length_exceeded_error": 1}
    assert agent_error(both, 0.0) == "error: boom"


def test_real_anyswe_timeout_row_is_an_agent_error(tmp_path: Path) -> None:
    """anyswe's own file (one task, five repeats, `agent_error_kind: "other"` on rows of reward 1.0)."""
    rows = [json.loads(line) for line in ANYSWE.read_text(encoding="utf-8").splitlines()]
    key = "responses_create_params.metadata.instance_id"
    old = tmp_path / "old.jsonl"
    old.write_bytes(ANYSWE.read_bytes())

    def compare_with(changes: dict) -> tuple[str, object]:
        changed = [dict(r) for r in rows]
        changed[1].update(changes)
        new = tmp_path / "new.jsonl"
        new.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
        (task,) = compare_files(old, new, key=key).tasks
        return task.category, task.new.agent_error if task.new else None

    assert compare_with({"reward": 0.0}) == ("flipped", None)
    assert compare_with({"reward": 0.0, "agent_timed_out": True}) == ("flipped_agent_error", "agent_timed_out=true")


@pytest.mark.parametrize("reader", ["pydantic-core"])
def test_both_readers_see_every_signal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    """The skeleton reader (either backend) decodes the signal fields, so it flags the same rows."""
    monkeypatch.setenv("PARITY_PARSER", reader)
    from pytest_rollout_parity.core.reading.jsonl_lines import iter_objects, skeleton_decoder
    from pytest_rollout_parity.core.reading.row_facts import reduce_row

    rows = [
        row("a", 0.0, error=" "),
        row("b", 0.0, context_length_exceeded_error=1, response={"output": ["x" * 100]}),
        row("c", 0.0, agent_timed_out=True, agent_error_kind="timeout"),
        row("d", 0.0, evaluation_completed=False),
        row("e", 0.0, agent_error="rate limited"),
        row("f", 1.0, agent_error_kind="other", agent_timed_out=False),
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    decode = skeleton_decoder(None)
    assert decode is not None
    seen = {
        fast: [
            reduce_row(obj, line=line, offset=offset).agent_error
            for line, offset, obj in iter_objects(path, "r.jsonl", decode if fast else None)
        ]
        for fast in (False, True)
    }
    assert seen[True] == seen[False]
    assert [e is not None for e in seen[True]] == [True, True, True, True, True, False]


def test_a_side_of_agent_errors_is_not_asked_about_skip_verification() -> None:
    """An agent error never reached a verifier, and its text is no sign that one ran: a side whose
    every row failed that way is not the measure the other side's missing verifier output is named by."""
    old = [row(f"t{i}", 1.0) for i in range(4)]
    new = [row(f"t{i}", 0.0, agent_error="Traceback ...\nRuntimeError: the agent crashed\n") for i in range(4)]
    result = compare_rollouts(old, new)
    assert [task.category for task in result.tasks] == ["flipped_agent_error"] * 4
    assert not any("skip_verification" in note for note in result.notes), result.notes

"""docs/semantics.md, "Copies": two sides holding the same rows are named, whole rows compared."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.api import compare_files

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
PAIR = (
    "resources_servers/reasoning_gym/data/example_rollouts.jsonl",
    "environments/reasoning_gym/data/example_rollouts.jsonl",
)


def test_the_real_byte_identical_pair_is_named_a_copy():
    result = compare_files(REAL_FILES / PAIR[0], REAL_FILES / PAIR[1])
    assert result.copies == (
        "the new file's rows are identical to the old file's (the same bytes): was the new server run?"
    )
    assert result.notes[0] == result.copies


def test_the_same_rows_in_another_order_and_spelling_are_a_copy(tmp_path: Path):
    rows = [json.loads(line) for line in (REAL_FILES / PAIR[0]).read_text(encoding="utf-8").splitlines()]
    new = tmp_path / "new.jsonl"
    new.write_text("".join(json.dumps(r, indent=None, sort_keys=True) + "\n" for r in reversed(rows)), encoding="utf-8")
    result = compare_files(REAL_FILES / PAIR[0], new)
    assert result.copies is not None and "(every task has the same rows)" in result.copies


def test_same_rewards_with_other_rows_are_no_copy(real_rows):
    old = real_rows("deepswe_opencode_trimmed.jsonl")
    new = real_rows("deepswe_opencode_trimmed.jsonl")
    new[0]["response"]["id"] = "resp_rerun"
    result = compare_rollouts(old, new)
    assert result.tasks[0].category == "identical"
    assert result.copies is None and not any("identical to the old" in n for n in result.notes)


def test_in_memory_copies_are_named_too(real_rows):
    rows = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    assert compare_rollouts(rows, real_rows("anyswe_hermes_repeats_trimmed.jsonl")).copies is not None


def test_a_flip_is_never_a_copy(real_rows):
    old, new = real_rows("deepswe_opencode_trimmed.jsonl"), real_rows("deepswe_opencode_trimmed.jsonl")
    new[0]["reward"] = 0.0
    assert compare_rollouts(old, new).copies is None


def test_the_json_summary_holds_the_note():
    from pytest_rollout_parity import summary_dict

    result = compare_files(REAL_FILES / PAIR[0], REAL_FILES / PAIR[1])
    data = summary_dict(result)
    assert data["copies"] == result.copies and data["notes"][0] == result.copies


def test_the_same_bytes_read_for_two_agents_are_no_copy(tmp_path: Path):
    """One file holding two agents' rows, given as both sides with another agent each: the bytes
    are the same, the rows compared are not (here a task flips), so no copy is named."""

    def row(task: str, agent: str, reward: float) -> str:
        return json.dumps({"task_id": task, "agent_ref": {"name": agent}, "reward": reward}) + "\n"

    text = row("a", "x", 1.0) + row("b", "x", 1.0) + row("a", "y", 1.0) + row("b", "y", 0.0)
    for name in ("old.jsonl", "new.jsonl"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = compare_files(tmp_path / "old.jsonl", tmp_path / "new.jsonl", old_agent="x", new_agent="y")
    assert result.copies is None and [t.category for t in result.tasks] == ["identical", "flipped"]
    same = compare_files(tmp_path / "old.jsonl", tmp_path / "new.jsonl", agent="x")
    assert same.copies is not None and "(the same bytes)" in same.copies


def test_equal_digests_are_no_copy_when_the_rewards_say_otherwise():
    """A CRC-32 can be made to collide: a side whose digest equals the other's but whose rewards
    differ is compared, never called a copy on the digest alone."""
    from pytest_rollout_parity.core.judging.verification import copies_note

    result = compare_rollouts([{"task_id": "a", "reward": 1.0}], [{"task_id": "a", "reward": 0.0}])
    assert copies_note(result, "crc32:0badf00d:20:1", "crc32:0badf00d:20:1") is None
    same = compare_rollouts([{"task_id": "a", "reward": 1.0}], [{"task_id": "a", "reward": 1.0}])
    assert copies_note(same, "crc32:0badf00d:20:1", "crc32:0badf00d:20:1") is not None

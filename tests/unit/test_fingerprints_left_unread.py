"""Prompt fingerprints wait while every row names its task by `_ng_task_id`; a side that loses the
field late takes them from its rows read again, and decides as if every one had been taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.api import compare_files
from pytest_rollout_parity.core.reading.key_vote import FINGERPRINT, UNREAD, KeyVote, prompt_fingerprint


def row(index: int, text: str, task_name: str, ng_id: Optional[str] = None) -> dict[str, Any]:
    r: dict[str, Any] = {
        "reward": 1.0,
        "_ng_task_index": index,
        "task_name": task_name,
        "responses_create_params": {"input": [{"role": "user", "content": text}]},
    }
    if ng_id is not None:
        r["_ng_task_id"] = ng_id
    return r


#: three puzzles under one task_name, each row naming its task by `_ng_task_id`, then a row without it
#: under another name: only the fingerprints of the first three show that task_name is a category
LOST_LATE = [row(i, f"puzzle {i}", "knights_knaves", f"t{i}") for i in range(3)] + [row(3, "puzzle 3", "other")]
CATEGORY_NOTE = (
    "task_name is not a task id here: 'knights_knaves' holds 3 different prompts (3 rows; _ng_task_index 0, 1, 2); "
    "passed over"
)


def test_rows_keyed_on_the_ng_task_id_leave_their_fingerprint_unread():
    vote = KeyVote(None)
    first = vote.candidate_values(LOST_LATE[0])
    assert first[FINGERPRINT] == UNREAD
    vote.add(first)
    last = vote.candidate_values(LOST_LATE[3])
    assert last[FINGERPRINT] == prompt_fingerprint(LOST_LATE[3]["responses_create_params"]["input"])


def test_a_side_keyed_on_the_ng_task_id_is_keyed_so_without_fingerprints():
    rows = [row(i, f"puzzle {i}", "knights_knaves", f"t{i}") for i in range(3)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == res.join.new_key == "_ng_task_id"


def test_the_ng_task_id_lost_late_takes_the_unread_fingerprints_from_the_rows_in_memory():
    res = compare_rollouts(LOST_LATE, LOST_LATE)
    assert res.join.old_key == res.join.new_key == "_ng_task_index"
    assert res.join.old_key_reason == "task_name passed over: a category"
    assert f"both sides: {CATEGORY_NOTE}" in res.notes


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_the_ng_task_id_lost_late_takes_the_unread_fingerprints_from_the_file(
    parser: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PARITY_PARSER", parser)
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in LOST_LATE), encoding="utf-8")
    res = compare_files(path, path)
    assert res.join.old_key == "_ng_task_index"
    assert res.join.old_key_reason == "task_name passed over: a category"
    assert f"both sides: {CATEGORY_NOTE}" in res.notes

"""Real pairs that differ (tests/data/real_history_pairs/README.md): two versions of one NeMo Gym
example rollouts file, gated with no key, join as a careful reader of the rows would.

Each case states what the README says a reader finds; the expected counts are read off the rows
by the test itself where they can be (the tasks the shared id names, the indices whose prompts
agree), not taken from the gate.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import Gate, all_text

PAIRS = Path(__file__).resolve().parents[1] / "data" / "real_history_pairs"


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def side_file(name: str, side: str) -> Path:
    files = sorted((PAIRS / name / side).glob("*.jsonl"))
    assert len(files) == 1
    return files[0]


def gate_pair(gate: Gate, name: str, *extra: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    for side in ("old", "new"):
        shutil.copytree(PAIRS / name / side, gate.path / name / side)
    old = side_file(name, "old").relative_to(PAIRS)
    new = side_file(name, "new").relative_to(PAIRS)
    result = gate.run(f"--parity-old={old}", f"--parity-new={new}", "--parity-json=summary.json", *extra)
    summary_path = gate.path / "summary.json"
    data = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
    return result, data


def ids(name: str, field: str) -> tuple[set[Any], set[Any]]:
    return ({r[field] for r in rows_of(side_file(name, "old"))}, {r[field] for r in rows_of(side_file(name, "new"))})


@pytest.fixture
def gate(pytester: pytest.Pytester) -> Gate:
    return Gate(pytester)


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("bunsenbench_chemistry_mcq", "uuid"),
        ("text_to_sql", "uuid"),
        ("deepswe", "instance_id"),
    ],
)
def test_a_stable_id_the_rows_carry_joins_every_task(gate: Gate, name: str, field: str) -> None:
    old_ids, new_ids = ids(name, field)
    result, data = gate_pair(gate, name)
    assert data["join"]["old_key"] == data["join"]["new_key"] == field
    assert "inferred from the rows" in data["join"]["old_key_reason"]
    assert data["counts"]["identical"] == len(old_ids & new_ids) == 5
    assert data["counts"]["tasks"] == 5 and data["counts"]["missing"] == 0
    assert result.ret == 0


def test_a_re_templated_run_is_joined_on_its_scenario_id_and_its_flips_shown(gate: Gate) -> None:
    result, data = gate_pair(gate, "openair_congestion")
    old_ids, new_ids = ids("openair_congestion", "scenario_id")
    assert data["join"]["old_key"] == "scenario_id"
    assert data["counts"]["flipped"] == len(old_ids & new_ids) == 5
    assert any(note.startswith("the prompts changed between the runs: 5 of 5") for note in data["notes"])
    assert result.ret == 1


def test_a_reworded_question_under_a_stable_uuid_is_noted_not_refused(gate: Gate) -> None:
    _, data = gate_pair(gate, "bunsenbench_chemistry_mcq")
    changed = [note for note in data["notes"] if note.startswith("the prompts changed between the runs")]
    assert len(changed) == 1 and "1 of 5" in changed[0] and "bunsen:example:5" in changed[0]


def test_per_rollout_prompts_are_one_task_compared_on_their_leading_messages(gate: Gate) -> None:
    result, data = gate_pair(gate, "blackjack")
    assert data["join"]["old_key"] == "_ng_task_index"
    assert data["counts"]["tasks"] == 1 and data["counts"]["flipped"] == 1
    assert data["counts"]["missing"] == 0
    assert result.ret == 1


def test_an_index_whose_prompt_changed_is_unjoined_alone(gate: Gate) -> None:
    old, new = rows_of(side_file("iheval", "old")), rows_of(side_file("iheval", "new"))
    changed = [
        o["_ng_task_index"]
        for o, n in zip(old, new)
        if o["responses_create_params"]["input"] != n["responses_create_params"]["input"]
    ]
    assert changed == [3]
    result, data = gate_pair(gate, "iheval")
    assert data["counts"]["identical"] == len(old) - len(changed) == 5
    assert data["counts"]["missing_old_only"] == data["counts"]["missing_new_only"] == 1
    note = next(note for note in data["notes"] if "have a different prompt on each side" in note)
    missing = [task["task"] for task in data["tasks"] if task["category"] == "missing"]
    assert all(label.startswith("3:") for label in missing)
    assert all(label.split(":", 1)[1] in note for label in missing)  # both prompt labels named
    assert data["nothing_compared"] is None
    assert result.ret == 0


def test_a_changed_input_dataset_is_a_report_of_nothing_compared_never_a_pass(gate: Gate) -> None:
    result, data = gate_pair(gate, "spartqa")
    assert data["compared"] == 0
    assert data["counts"]["missing_old_only"] == data["counts"]["missing_new_only"] == 5
    assert "the runs read different input files" in data["nothing_compared"]
    assert any(note.startswith("the runs read different input files: 5 of 5") for note in data["notes"])
    assert "NOTHING COMPARED" in all_text(result) and "the runs read different input files" in all_text(result)
    assert result.ret not in (0, 4)


def test_a_reward_profile_is_named_for_what_it_is(gate: Gate) -> None:
    result, data = gate_pair(gate, "longmt_eval")
    text = all_text(result)
    assert result.ret == 4 and not data
    assert "example_rollouts_reward_profiling.jsonl: a per-task reward profile" in text
    assert "gym eval profile" in text and "an input dataset" not in text
    assert "Traceback" not in text


@pytest.mark.parametrize("name", ["bunsenbench_chemistry_mcq", "iheval", "blackjack", "spartqa"])
def test_both_readers_join_alike(gate: Gate, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _, fast = gate_pair(gate, name)
    (gate.path / "summary.json").unlink()
    shutil.rmtree(gate.path / name)
    monkeypatch.setenv("PARITY_PARSER", "full")
    _, full = gate_pair(gate, name)
    assert fast["counts"] == full["counts"] and fast["join"] == full["join"] and fast["notes"] == full["notes"]


def _reworded(rows: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    """The rows with one phrase of the shared instruction reworded in every prompt."""
    out = json.loads(json.dumps(rows))
    for row in out:
        message = row["responses_create_params"]["input"][-1]
        assert old in message["content"]
        message["content"] = message["content"].replace(old, new)
    return out


def test_a_uniform_template_change_joins_on_the_index(gate: Gate) -> None:
    """spartqa's old run against itself under a new server that words one line of the shared
    instruction its own way: every prompt differs by the same edit, so the index still names the
    same task; a careful reader finds 2 identical tasks and 3 flips."""
    old = rows_of(side_file("spartqa", "old"))
    new = _reworded(old, "one concise final answer", "one short final answer")
    for row in new[:3]:
        row["reward"] = 1.0 - row["reward"]
    result = gate.run(*gate.pair(old, new), "--parity-json=summary.json")
    data = json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))
    assert data["join"]["old_key"] == data["join"]["new_key"] == "_ng_task_index"
    assert (data["counts"]["identical"], data["counts"]["flipped"]) == (2, 3)
    assert data["nothing_compared"] is None
    assert any(
        note.startswith('every prompt differs by the same edit: "concise" → "short" in message 1 (5 of 5')
        for note in data["notes"]
    ), data["notes"]
    assert result.ret == 1


def test_edits_that_differ_index_by_index_keep_the_index_apart(gate: Gate) -> None:
    old = rows_of(side_file("spartqa", "old"))
    new = _reworded(old, "one concise final answer", "one short final answer")
    new[0] = _reworded([new[0]], "Final answer:", "Answer:")[0]  # a second edit on one index only
    gate.run(*gate.pair(old, new), "--parity-json=summary.json")
    data = json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))
    assert data["compared"] == 0 and "the runs read different input files" in data["nothing_compared"]

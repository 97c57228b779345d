"""Every real example rollouts file gates with no key: against a copy of itself, against a copy with
changed rewards, and the calendar migration pair (tests/data/real_files/README.md).

The expected task counts are what NeMo Gym counts: distinct `_ng_task_index` where every row has
one, else distinct prompts; the test computes them from the file itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import Gate, dump, output_lines, section

REAL = Path(__file__).resolve().parents[1] / "data" / "real_files"
PROMPT = "responses_create_params.input"
#: each file and the identity the gate keys it on (the README beside the files says why)
KEYS = {
    "benchmarks/flores200/data/example_rollouts.jsonl": "_ng_task_index",
    "environments/calendar/data/example_rollouts.jsonl": PROMPT,
    "environments/prime_agent_reasoning_gym/data/example_rollouts.jsonl": "_ng_task_index",  # task_name: a category
    # its own `id` (example_0...) on every row, one prompt each: inferred as the id
    "resources_servers/abstention/data/example_rollouts.jsonl": "id",
    "resources_servers/bigcodebench/data/example_rollouts.jsonl": "task_id",
    "resources_servers/calendar/data/example_rollouts.jsonl": PROMPT,
    # task_name: knights_knaves on five problems and no _ng_task_index: only the prompt tells them apart
    "resources_servers/reasoning_gym/data/example_rollouts.jsonl": PROMPT,
    "environments/reasoning_gym/data/example_rollouts.jsonl": PROMPT,
    # its task_name is a category in the whole dataset, but on one task index each in these five rows
    "resources_servers/structeval/data/example_rollouts.jsonl": "task_name",
    "responses_api_agents/anyswe_agent/data/example_rollouts_opencode.jsonl": "responses_create_params.metadata.instance_id",
    "responses_api_agents/harbor_agent/example/example_output.jsonl": "metadata.task_name",
    # resources_servers/multichallenge holds input rows (no reward at all): test_wrong_file.py names it
}
FILES = sorted(KEYS)
CHANGED_TASKS = 3


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def nemo_gym_task(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's task as NeMo Gym counts it: its task index, else its prompt."""
    if all("_ng_task_index" in r for r in rows):
        return [str(r["_ng_task_index"]) for r in rows]
    return [json.dumps(r["responses_create_params"]["input"], sort_keys=True) for r in rows]


def with_changed_rewards(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows with every reward of the first few tasks moved away from the task's mean."""
    tasks = nemo_gym_task(rows)
    changed = list(dict.fromkeys(tasks))[:CHANGED_TASKS]
    out = [dict(r) for r in rows]
    for task in changed:
        members = [i for i, t in enumerate(tasks) if t == task]
        mean = sum(rows[i]["reward"] for i in members) / len(members)
        for i in members:
            out[i]["reward"] = 0.0 if mean > 0.5 else 1.0
    return out, len(changed)


def gate_json(gate: Gate, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = gate.run(*args, "--parity-json=summary.json", "-p", "no:cacheprovider")
    return result, json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rel", FILES)
def test_a_real_file_against_its_copy(gate: Gate, rel: str) -> None:
    rows = read_rows(REAL / rel)
    tasks = len(set(nemo_gym_task(rows)))
    args = gate.pair((REAL / rel).read_bytes().decode("utf-8"), (REAL / rel).read_bytes().decode("utf-8"))
    result, summary = gate_json(gate, *args)
    # a copy is no evidence about the new server: every task passes, the copy item fails
    assert result.ret == 1, output_lines(result)
    result.assert_outcomes(passed=tasks, failed=1)
    assert summary["verdict"] == "inconclusive" and [d["code"] for d in summary["decided_by"]] == ["copy"]
    assert summary["counts"]["tasks"] == summary["counts"]["identical"] == tasks
    meant, _ = gate_json(gate, *args, "--parity-allow-copy")
    assert meant.ret == 0, output_lines(meant)
    assert summary["join"]["old_key"] == summary["join"]["new_key"] == KEYS[rel]


@pytest.mark.parametrize("rel", FILES)
def test_a_real_file_against_a_copy_with_changed_rewards(gate: Gate, rel: str) -> None:
    rows = read_rows(REAL / rel)
    tasks = len(set(nemo_gym_task(rows)))
    changed_rows, changed = with_changed_rewards(rows)
    args = gate.pair((REAL / rel).read_bytes().decode("utf-8"), dump(changed_rows))
    result, summary = gate_json(gate, *args)
    result.assert_outcomes(passed=tasks - changed, failed=changed)
    counts = summary["counts"]
    assert (counts["tasks"], counts["identical"], counts["flipped"]) == (tasks, tasks - changed, changed)


def test_the_calendar_migration_pair_joins_on_the_prompt(gate: Gate) -> None:
    old, new = (
        REAL / "resources_servers/calendar/data/example_rollouts.jsonl",
        REAL / "environments/calendar/data/example_rollouts.jsonl",
    )
    for side, path in (("old", old), ("new", new)):
        (gate.path / side).mkdir()
        shutil.copyfile(path, gate.path / side / "rollouts.jsonl")
    result, summary = gate_json(gate, "--parity-old=old/rollouts.jsonl", "--parity-new=new/rollouts.jsonl")
    tasks = len(set(nemo_gym_task(read_rows(old))))
    # the public pair is a byte copy: every task passes, and the copy item fails (no evidence)
    result.assert_outcomes(passed=tasks, failed=1)
    assert summary["copies"] is not None and summary["verdict"] == "inconclusive"
    assert summary["join"]["old_key"] == summary["join"]["new_key"] == PROMPT
    assert any(
        line.startswith("new: ") and "key responses_create_params.input (the prompt: " in line
        for line in result.outlines
    )


def test_the_reasoning_gym_pair_with_two_problems_swapped_fails_both_without_a_key(gate: Gate) -> None:
    old = REAL / "resources_servers/reasoning_gym/data/example_rollouts.jsonl"
    rows = read_rows(REAL / "environments/reasoning_gym/data/example_rollouts.jsonl")
    assert (rows[1]["reward"], rows[2]["reward"]) == (1.0, 0.0)
    rows[1]["reward"], rows[2]["reward"] = 0.0, 1.0
    result, summary = gate_json(gate, *gate.pair(old.read_bytes().decode("utf-8"), dump(rows)))
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=2)
    assert (summary["counts"]["flipped_old_win"], summary["counts"]["flipped_new_win"]) == (1, 1)
    assert any(
        line.endswith("key responses_create_params.input (task_name passed over: a category)")
        for line in result.outlines
    ), result.outlines


def test_index_join_of_runs_on_inputs_in_another_order_joins_on_the_prompt(gate: Gate) -> None:
    rel = "benchmarks/flores200/data/example_rollouts.jsonl"
    rows = read_rows(REAL / rel)
    shuffled = [dict(r) for r in rows]  # input rows 1 and 2 read in the other order
    for r in shuffled:
        if r["_ng_task_index"] in (1, 2):
            r["_ng_task_index"] = 3 - r["_ng_task_index"]
    args = gate.pair((REAL / rel).read_bytes().decode("utf-8"), dump(shuffled))
    result = gate.run(*args)
    result.assert_outcomes(passed=len(set(nemo_gym_task(rows))))
    body = section(result)
    assert any(
        line.startswith("note: the runs list the same prompts at different _ng_task_index values (2 of 5")
        for line in body
    ), body
    assert any(line.startswith("new: ") and "key responses_create_params.input" in line for line in body), body
    trusted = gate.run(*args, "--parity-key=_ng_task_index")  # then indices 1 and 2 join different tasks
    assert trusted.ret != 0


def test_a_category_task_name_is_passed_over_with_a_note(gate: Gate) -> None:
    rel = "environments/prime_agent_reasoning_gym/data/example_rollouts.jsonl"
    args = gate.pair((REAL / rel).read_bytes().decode("utf-8"), (REAL / rel).read_bytes().decode("utf-8"))
    result = gate.run(*args)
    body = section(result)
    assert any(
        line.startswith("new: ") and line.endswith("key _ng_task_index (task_name passed over: a category)")
        for line in body
    ), body
    assert (
        "note: both sides: task_name is not a task id here: 'knights_knaves' holds 5 different prompts "
        "(5 rows; _ng_task_index 0, 1, 2, 3, 4); passed over" in body
    )


def test_one_task_at_two_input_indices_keeps_its_id_and_a_real_flip_shows(gate: Gate) -> None:
    rel = "resources_servers/bigcodebench/data/example_rollouts.jsonl"
    rows = read_rows(REAL / rel)
    new = [dict(r) for r in rows]
    duplicate = dict(rows[0], _ng_task_index=len(rows))  # the new dataset lists this task twice
    new.append(duplicate)
    flipped = next(r for r in new if r["reward"] == 1.0 and r["task_id"] != duplicate["task_id"])
    flipped["reward"] = 0.0
    result, summary = gate_json(gate, *gate.pair((REAL / rel).read_bytes().decode("utf-8"), dump(new)))
    assert result.ret == 1
    assert summary["join"]["old_key"] == summary["join"]["new_key"] == "task_id"
    assert summary["counts"]["flipped"] == 1 and summary["counts"]["missing"] == 0
    result.stdout.fnmatch_lines([f"FAILED new/rollouts.jsonl::{flipped['task_id']} - new regressed*"])


def test_a_category_on_one_side_is_a_category_on_the_other(gate: Gate) -> None:
    """The old side shows `task_name: knights_knaves` to be a category (five problems); the new side
    holds one of them, where the field would name one task. Passed over there too, the new row
    joins its problem on the old side by the prompt."""
    rows = read_rows(REAL / "resources_servers/reasoning_gym/data/example_rollouts.jsonl")
    result = gate.run(*gate.pair(rows, [rows[2]]), "--parity-max-missing=off", "--parity-max-uncompared=off")
    result.assert_outcomes(passed=1, xfailed=4)
    result.stdout.fnmatch_lines(
        [
            "new:*key responses_create_params.input (*",
            "*the new side's task_name is passed over too: the old side shows it is a category*",
        ]
    )


ANYSWE = REAL / "responses_api_agents/anyswe_agent/data/example_rollouts_opencode.jsonl"


def _run_with(rows: list[dict[str, Any]], **request: Any) -> list[dict[str, Any]]:
    return [dict(row, responses_create_params=dict(row["responses_create_params"], **request)) for row in rows]


def test_the_sides_conditions_are_shown_and_a_difference_named(gate: Gate) -> None:
    rows = read_rows(ANYSWE)
    result = gate.run(*gate.pair(rows, _run_with(rows, temperature=1.0)), "--parity-json=s.json")
    conditions = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))["conditions"]
    assert conditions["old"].startswith("model Qwen/Qwen3-Coder-30B-A3B-Instruct, temperature 0.7, ")
    assert conditions["new"].startswith("model Qwen/Qwen3-Coder-30B-A3B-Instruct, temperature 1.0, ")
    result.stdout.fnmatch_lines(
        [
            "old: *; model Qwen/Qwen3-Coder-30B-A3B-Instruct, temperature 0.7, top_p 0.8, max_output_tokens 12288, "
            "5 rollout(s) a task",
            "new: *; model Qwen/Qwen3-Coder-30B-A3B-Instruct, temperature 1.0, top_p 0.8, max_output_tokens 12288, "
            "5 rollout(s) a task",
            "note: the sides ran under different conditions (old against new): temperature 0.7 against 1.0",
        ]
    )
    assert "different models" not in result.stdout.str()


def test_a_different_model_is_said_in_the_verdict_line(gate: Gate) -> None:
    rows = read_rows(ANYSWE)
    result = gate.run(*gate.pair(rows, _run_with(rows, model="Qwen/Qwen3-Coder-480B-A35B-Instruct")))
    result.stdout.fnmatch_lines(
        [
            "parity: *; different models: old Qwen/Qwen3-Coder-30B-A3B-Instruct, new "
            "Qwen/Qwen3-Coder-480B-A35B-Instruct (the run compares the models too, not the server alone)",
            "*note: the sides ran under different conditions (old against new): model Qwen/Qwen3-Coder-30B-A3B-Instruct "
            "against Qwen/Qwen3-Coder-480B-A35B-Instruct",
        ]
    )


def test_a_different_number_of_rollouts_a_task_is_named(gate: Gate) -> None:
    rows = read_rows(ANYSWE)  # one task, five rollouts
    result = gate.run(*gate.pair(rows[:1], rows))
    result.stdout.fnmatch_lines(
        [
            "old: *, max_output_tokens 12288, 1 rollout(s) a task",
            "new: *, max_output_tokens 12288, 5 rollout(s) a task",
            "*different conditions (old against new): rollouts a task 1 against 5",
        ]
    )

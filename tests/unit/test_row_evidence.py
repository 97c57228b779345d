"""docs/semantics.md, "A flip's evidence": the losing row's own evidence, one real row per shape.

The real rows are the lowest-reward rows of the example files in tests/data/real_files (NeMo Gym at
07d6b0d07, untouched); the shapes no bundled file has (rubric and validation lists, a judge's plain
rationale, test output of a container or a compiler, an episode's state) are built with the field
names the NeMo Gym servers write.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity import compare_files, compare_rollouts
from pytest_rollout_parity.core.judging.classify import first_disagreement
from pytest_rollout_parity.core.judging.row_context import (
    EVIDENCE_CHARS,
    EVIDENCE_ITEMS,
    EVIDENCE_LINE_CHARS,
    EVIDENCE_LINES,
    row_evidence,
)
from pytest_rollout_parity.core.judging.verifier_output import LogRoots, scored_row
from pytest_rollout_parity.core.model import per_side
from pytest_rollout_parity.core.reports.item_outcome import flip_evidence


def flip_message(*args: Any, **kwargs: Any) -> str:
    """The whole flip message (the text of :func:`flip_evidence`)."""
    return flip_evidence(*args, **kwargs).text


REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"


def lowest_row(path: str) -> dict[str, Any]:
    """The file's first row with the lowest numeric reward (the row a flip against it would show)."""
    rows = [json.loads(line) for line in (REAL_FILES / path).read_text(encoding="utf-8").splitlines()]
    scored = [row for row in rows if isinstance(row.get("reward"), (int, float))]
    return min(scored, key=lambda row: row["reward"])


REAL_SHAPES = {
    "expected vs extracted answer": (
        "resources_servers/math_with_judge/data/example_rollouts.jsonl",
        [
            'expected_answer="\\\\(\\\\frac{333}{1997}\\\\)" vs extracted_answer="83/499"',
            "library_reward=0.0",
            "judge_evaluations[0].response: The AI assistants' answers are different: [[A!=B]]",
        ],
    ),
    "a judge transcript inside a Responses object": (
        "resources_servers/equivalence_llm_judge/data/example_rollouts.jsonl",
        [
            'expected_answer="amino", judge_evaluations[0].verdict_label="[[A!=B]]"',
            "judge_evaluations[0].response: [... cut] actly with the GOLD. Although the context is correct, "
            "strict equivalence is required. / [[A!=B]] they are not equivalent",
        ],
    ),
    "a judge's verdict as plain strings": (
        "resources_servers/abstention/data/example_rollouts.jsonl",
        [
            'ground_truth="Ransen Kamangar" vs extracted_answer="[IDK]"',
            'verdict="abstain", is_correct=0.0, is_abstain=1.0, is_incorrect=0.0',
        ],
    ),
    "per-check booleans beside the checks' names": (
        "resources_servers/instruction_following/data/example_rollouts.jsonl",
        ["follow_instruction_list: 2/3 passed; first failing: count:lowercase_counting"],
    ),
    "a failure code": (
        "resources_servers/swe_pivot/data/example_rollouts.jsonl",
        ["failure_reason: model_output_invalid", 'model_output="(no function_call in response)"'],
    ),
    "test tracebacks by test": (
        "resources_servers/bigcodebench/data/example_rollouts.jsonl",
        [
            'extracted_model_output="return f\\"Process found. Restarting {process_name}.\\" / ```", status="fail"',
            "details.test_process_found_restarts_process: AssertionError: 'Process not found. Starting notepad.' "
            "!= 'Process found. Restarting notepad.'",
            "details.test_process_not_found_starts_process: AssertionError: expected call not found.",
            "details.test_process_terminates_and_restarts_multiple_instances: AssertionError: "
            "'Process not found. Starting multi_instance.' != 'Process found. Restarting multi_instance.'",
        ],
    ),
    "metric scores": (
        "resources_servers/structeval/data/example_rollouts.jsonl",
        ["rendering=false, render_score=1.0, key_validation_score=0.533333, raw_output_score=0.0"],
    ),
    "test statuses of a coding agent": (
        "responses_api_agents/anyswe_agent/data/example_rollouts_opencode.jsonl",
        [
            "agent_error_kind: other",
            "resolved=false, patch_exists=true, agent_timed_out=false, eval_timed_out=false",
        ],
    ),
    # the answer is the model's whole reasoning (2,801 characters): its last line, where it concludes
    "an extracted answer and a score": (
        "resources_servers/reasoning_gym/data/example_rollouts.jsonl",
        ['score=0.0, extracted_answer="**Mason is an altruist, and Jack is an egoist**."'],
    ),
}


@pytest.mark.parametrize("shape", sorted(REAL_SHAPES))
def test_a_real_row_of_each_shape_shows_its_block(shape: str) -> None:
    path, expected = REAL_SHAPES[shape]
    assert row_evidence(lowest_row(path)) == expected


BUILT_SHAPES = {
    "rubric evaluations": (
        {
            "reward": 0.0,
            "rubric_evaluations": [
                {"criterion_id": "C1", "verdict": "MET", "explanation": "cites the source"},
                {"criterion_id": "C2", "verdict": "NOT_MET", "explanation": "gives no date"},
                {"criterion_id": "C3", "verdict": "MET", "explanation": "short"},
            ],
        },
        ["rubric_evaluations: 2/3 passed; first failing: C2 - gives no date"],
    ),
    "validation results": (
        {
            "reward": 0.0,
            "validation_results": [
                {"passed": True, "message": "valid JSON"},
                {"passed": False, "message": "missing key 'total'"},
            ],
        },
        ["validation_results: 1/2 passed; first failing: #2 - missing key 'total'"],
    ),
    "a judge's rationale": (
        {
            "reward": 0.0,
            "answer_judgment": {"verdict": "incorrect", "rationale": "Step 1 is right.\nThe final sum is off by one."},
        },
        [
            'answer_judgment.verdict="incorrect"',
            "answer_judgment.rationale: Step 1 is right. / The final sum is off by one.",
        ],
    ),
    "container and compiler output": (
        {
            "reward": 0.0,
            "f2p_passed": 1,
            "f2p_total": 3,
            "container_stderr": "make: *** [all] Error 2\nsim.v:12: syntax error\n",
            "compiler_output": 'Traceback (most recent call last):\n  File "t.py", line 3\nValueError: bad width\n',
        },
        [
            "f2p_passed=1, f2p_total=3",
            "container_stderr: sim.v:12: syntax error",
            "compiler_output: ValueError: bad width",
        ],
    ),
    # an answer of several lines: its last exception line, else its last lines
    "a program's output against the expected one": (
        {
            "reward": 0.0,
            "tests": {
                "expected_output": "ok",
                "actual_output": "Traceback (most recent call last):\n  File x\nValueError: bad\nmore\nlines",
            },
        },
        ['tests.expected_output="ok" vs tests.actual_output="ValueError: bad"'],
    ),
    "an episode's state": (
        {"reward": 0.0, "info": {"result": "loss", "moves": 9}, "terminated": True, "truncated": False},
        ['info.result="loss", info.moves=9, terminated=true, truncated=false'],
    ),
}


@pytest.mark.parametrize("shape", sorted(BUILT_SHAPES))
def test_the_other_shapes_show_their_blocks(shape: str) -> None:
    row, expected = BUILT_SHAPES[shape]
    assert row_evidence(row) == expected


def test_the_block_keeps_its_order_whatever_the_row_order() -> None:
    row = {
        "details": {"test_a": "AssertionError: 1 != 2"},
        "judge_output": "B",
        "score": 0.0,
        "checks": [True, False],
        "check_names": ["a", "b"],
        "extracted_answer": "4",
        "expected_answer": "5",
        "error": "timeout after 30s",
    }
    assert row_evidence(row) == [
        "error: timeout after 30s",
        'expected_answer="5" vs extracted_answer="4"',
        "checks: 1/2 passed; first failing: b",
        "score=0.0",
        "judge_output: B",
        "details.test_a: AssertionError: 1 != 2",
    ]


def test_a_row_with_only_ids_tokens_and_the_trajectory_shows_no_block(tmp_path: Path) -> None:
    row = {
        "task_id": "t-1",
        "uuid": "9f0c",
        "_ng_task_index": 4,
        "_ng_rollout_index": 0,
        "agent_ref": {"name": "simple_agent"},
        "started_at": "2026-02-26T06:45:03Z",
        "agent_run_time": 12.5,
        "usage": {"input_tokens": 535, "output_tokens": 58},
        "responses_create_params": {"input": [{"role": "user", "content": "What is 2+2?"}]},
        "response": {"output": [{"type": "message", "role": "assistant", "content": [{"text": "4"}]}]},
    }
    assert row_evidence(row) == []
    (task,) = compare_rollouts([{**row, "reward": 1.0}], [{**row, "reward": 0.0}]).tasks
    message = flip_message(task, 15, LogRoots(tmp_path, tmp_path, tmp_path))
    assert "evidence" not in message
    assert "row's last assistant message" in message


def test_the_block_comes_before_the_last_messages_and_is_escaped(tmp_path: Path) -> None:
    forged = "ok\n::error::forged\x1b[2J"
    old = {"task_id": "t", "reward": 1.0, "verdict": "correct"}
    new = {
        "task_id": "t",
        "reward": 0.0,
        "verdict": "wrong",
        "failure_reason": forged,
        "response": {"output": [{"type": "message", "role": "assistant", "content": [{"text": "5"}]}]},
    }
    (task,) = compare_rollouts([old], [new]).tasks
    lines = flip_message(task, 15, LogRoots(tmp_path, tmp_path, tmp_path)).split("\n")
    assert lines[1:4] == [
        "    new (losing) row's evidence:",
        "    | failure_reason: ::error::forged\\x1b[2J",
        '    | verdict="wrong"',
    ]
    assert lines[4] == "    new (losing) row's last assistant message:"
    assert "\x1b" not in "\n".join(lines)


def test_a_path_a_row_names_is_never_opened(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    row = {"reward": 0.0, "stderr_file": str(secret), "test_log": str(secret), "error_log_path": str(secret)}
    shown = "\n".join(row_evidence(row))
    assert "TOP-SECRET" not in shown


def test_the_block_is_bounded() -> None:
    row = {f"score_{i}": i / 7 for i in range(400)}
    row.update({f"error_{i}": "x" * 5000 for i in range(40)})
    row["checks"] = [True] * (EVIDENCE_ITEMS + 5) + [False]
    row["deep"] = {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"score": 1.0}}}}}}}}
    shown = row_evidence(row)
    assert len(shown) <= EVIDENCE_LINES
    assert shown[-1].startswith("[... ") and shown[-1].endswith("more line(s) of evidence cut]")
    assert all(len(line) <= EVIDENCE_LINE_CHARS + 40 for line in shown)
    assert sum(map(len, shown)) <= EVIDENCE_CHARS + EVIDENCE_LINE_CHARS
    assert row_evidence(row["deep"]) == []  # deeper than the walk goes
    assert len(row_evidence(row, 3)) == 3
    checks = row_evidence({"checks": row["checks"]})
    assert checks == [f"checks: {EVIDENCE_ITEMS}/{EVIDENCE_ITEMS} passed (the first {EVIDENCE_ITEMS} of 56)"]


# --- measured on the bundled real files ----------------------------------------------------------

#: the fields through which a NeMo Gym server records why it scored a row so (issue 35's survey of
#: the repository's example files); the test's own list: the rule itself knows no field names
EVIDENCE_FIELDS = [
    "expected_answer",
    "extracted_answer",
    "expected_output",
    "predicted_output",
    "target",
    "extracted",
    "library_reward",
    "judge_evaluations",
    "verdict_label",
    "verdict",
    "judge_output",
    "answer_judgment",
    "rubric_evaluations",
    "follow_instruction_list",
    "validation_results",
    "failure_reason",
    "details",
    "status",
    "container_stderr",
    "compiler_output",
    "resolved",
    "f2p_passed",
    "info",
    "terminated",
    "score",
    "comet_score",
    "sentence_chrf",
    "sentence_spbleu",
    "render_score",
    "key_validation_score",
    "raw_output_score",
    "ground_truth",
    "is_correct",
]


def _shows(message: str, row: dict[str, Any], field: str) -> bool:
    """The message names the field with its value (a scalar as `field=value`, text as `field: ...`)."""
    value = row[field]
    if value is None or value in ({}, [], ""):
        return False
    if isinstance(value, (dict, list)):
        return f"{field}[" in message or f"{field}." in message or f"{field}: " in message
    if isinstance(value, bool):
        return f"{field}={json.dumps(value)}" in message
    if isinstance(value, (int, float)):
        return f"{field}=" in message and math.isfinite(value)
    return (f"{field}=" in message and json.dumps(value.strip(), ensure_ascii=False)[1:40] in message) or (
        f"{field}: " in message
    )


def test_at_least_95_percent_of_flips_on_real_files_show_the_losing_rows_evidence(tmp_path: Path) -> None:
    flips = shown = 0
    for path in sorted(REAL_FILES.rglob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        if not any(field in row for row in rows for field in EVIDENCE_FIELDS):
            continue
        for index, row in enumerate(rows):
            if not isinstance(row.get("reward"), (int, float)):
                continue
            changed = list(lines)
            changed[index] = json.dumps({**row, "reward": 0.0 if row["reward"] >= 0.5 else 1.0})
            old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
            old.write_text("\n".join(lines) + "\n", encoding="utf-8")
            new.write_text("\n".join(changed) + "\n", encoding="utf-8")
            (task,) = [task for task in compare_files(old, new).tasks if task.category == "flipped"]
            message = flip_message(task, 15, LogRoots(tmp_path, tmp_path, tmp_path))
            loser = task.side(task.loser)  # type: ignore[arg-type]
            # the copy holds the same trajectories: a verifier disagreement shows its rescored rollout's rows
            pair = first_disagreement(task)
            losing = loser.read_row(scored_row(loser) if pair is None else per_side(task.loser, pair.old, pair.new))
            flips += 1
            shown += any(_shows(message, losing, field) for field in EVIDENCE_FIELDS if field in losing)
    assert flips >= 60
    assert shown / flips >= 0.95, f"{shown}/{flips}"

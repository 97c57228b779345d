"""Verdicts to trust through the plugin: superseded attempts, omissions and judge failures
(docs/semantics.md, "Reading a side and its sidecar" and "Categories")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Gate, failure_record, harbor_row, markdown_as_read


def test_a_late_older_attempt_invents_no_flip(gate: Gate) -> None:
    old = [
        harbor_row("fix-git", 1.0, _ng_run_id="r1", _ng_attempt_index=0),
        harbor_row("regex-log", 1.0, index=1, _ng_run_id="r1", _ng_attempt_index=0),
    ]
    new = [
        harbor_row("fix-git", 1.0, _ng_run_id="r2", _ng_attempt_index=1),
        harbor_row("regex-log", 1.0, index=1, _ng_run_id="r2", _ng_attempt_index=0),
        harbor_row("fix-git", 0.0, _ng_run_id="r2", _ng_attempt_index=0),
    ]  # attempt 0's late result
    result = gate.run(*gate.pair(old, new))
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*new side: 1 superseded attempt(s) left out*"])


def test_an_omission_and_a_judge_failure_are_masked_not_scored(gate: Gate) -> None:
    old = [harbor_row("fix-git", 1.0), harbor_row("regex-log", 1.0, index=1), harbor_row("gdpval-7", 1.0, index=2)]
    new = [harbor_row("fix-git", 1.0), harbor_row("gdpval-7", 0.0, index=2, invalid_judge_response=True)]
    args = gate.pair(old, new)
    gate.write(
        "new/rollouts_failures.jsonl",
        [
            {
                "_ng_failure_class": "intentionally_omitted",
                "_ng_omitted": True,
                "_ng_task_index": 1,
                "_ng_rollout_index": 0,
                "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "regex-log"},
            },
        ],
    )
    result = gate.run(*args, "-rx", "--parity-max-masked=off", "--parity-max-uncompared=off")
    result.assert_outcomes(passed=1, xfailed=2)
    result.stdout.fnmatch_lines_random(["*gdpval-7*judge invalid*", "*regex-log*omitted on purpose*"])


def _ten_and_one() -> tuple[list[dict], list[dict]]:
    names = [f"task-{i}" for i in range(10)]
    old = [harbor_row(name, 1.0, index=i) for i, name in enumerate(names)]
    return old, old[:1]


def test_a_new_run_that_covered_a_tenth_fails_the_coverage_item(gate: Gate) -> None:
    from .conftest import junit_cases, junit_properties

    old, new = _ten_and_one()
    result = gate.run(*gate.pair(old, new), "--junitxml=out.xml", "--parity-json=summary.json")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=1, xfailed=9)
    data = json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))["coverage"]
    assert (data["old_tasks"], data["missing"], data["masked"], data["passed"]) == (10, 9, 0, False)
    assert data["max_missing"] == {"text": "20%", "count": None, "percent": 20.0}
    result.stdout.fnmatch_lines(
        [
            "*_ parity-coverage _*",
            "9 of 10 old task(s) not compared (9 missing) (over the limit 20% = 2); "
            "9 of 10 old task(s) missing from the new side (over the limit 20% = 2)",
            "    0 of 10 old task(s) masked on the new side (the limit 30% = 3)",
        ]
    )
    result.stdout.fnmatch_lines(["FAILED new/rollouts.jsonl::parity-coverage - 9 of 10 old task(s) not compared*"])
    case = junit_cases(gate.path / "out.xml")["parity-coverage"]
    assert junit_properties(case)["parity_coverage"].startswith("9 of 10 old task(s) not compared")
    assert case.find("failure") is not None


def test_the_limits_switch_off_and_come_from_the_ini_file(gate: Gate) -> None:
    old, new = _ten_and_one()
    args = gate.pair(old, new)
    off = gate.run(*args, "--parity-max-missing=off", "--parity-max-uncompared=off")
    assert off.ret == 0
    off.assert_outcomes(passed=1, xfailed=9)
    gate.write("pytest.ini", "[pytest]\nparity_max_missing = 9\nparity_max_uncompared = 9\n")
    within = gate.run(*args)
    assert within.ret == 0 and "parity-coverage" not in within.stdout.str()
    over = gate.run(*args, "--parity-max-missing=80%")  # the option wins over the ini key
    assert over.ret == 1
    over.stdout.fnmatch_lines(["*9 of 10 old task(s) missing from the new side (over the limit 80% = 8)"])


def test_a_bad_limit_is_a_usage_error(gate: Gate) -> None:
    old, new = _ten_and_one()
    result = gate.run(*gate.pair(old, new), "--parity-max-masked=lots")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [
            "ERROR: --parity-max-masked: must be a count of tasks (3), a percentage of the "
            "old side's tasks (10%) or off, got 'lots'"
        ]
    )


def test_a_task_named_like_the_coverage_item_keeps_its_own_node_id(gate: Gate) -> None:
    old = [harbor_row("parity-coverage", 1.0)] + [harbor_row(f"t{i}", 1.0, index=i + 1) for i in range(4)]
    result = gate.run(*gate.pair(old, old[:1]), "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert "new/rollouts.jsonl::parity-coverage" in ids
    assert any(i.startswith("new/rollouts.jsonl::parity-coverage-") for i in ids), ids


def test_a_copy_is_named_and_fails_its_own_item(gate: Gate) -> None:
    from .conftest import junit_cases, section

    rows = [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)]
    args = gate.pair(rows, rows)
    plain = gate.run(*args, "--parity-json=summary.json", "--parity-markdown=summary.md")
    assert plain.ret == 1  # a copy is no evidence: its item fails by default
    plain.assert_outcomes(passed=2, failed=1)
    note = "the new file's rows are identical to the old file's (the same bytes): was the new server run?"
    assert f"note: {note}" in section(plain)
    assert json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))["copies"] == note
    assert (
        section(plain)[0] == "parity: INCONCLUSIVE: no flip in 2 compared tasks; both files hold the same rows: "
        "was the new server run?"
    )
    markdown = markdown_as_read(gate.path / "summary.md")  # as GitHub renders it
    assert "no flip in 2 compared tasks; both files hold the same rows: was the new server run?" in markdown
    assert "(the same bytes): was the new server run?" in markdown
    strict = gate.run(*args, "--parity-strict", "--junitxml=out.xml")
    assert strict.ret == 1
    strict.assert_outcomes(passed=2, failed=1)
    strict.stdout.fnmatch_lines([f"FAILED new/rollouts.jsonl::parity-copy - {note[:40]}*"])
    assert junit_cases(gate.path / "out.xml")["parity-copy"].find("failure") is not None


def test_a_narrowed_run_says_its_counts_are_the_whole_files(gate: Gate) -> None:
    from .conftest import section

    args = gate.mixed()
    narrowed = gate.run(*args, "-k", "fix-git")
    assert narrowed.ret == 0
    assert section(narrowed)[0].startswith(
        "partial: 1 of 7 items ran here, none failed; tasks 1 of 7; "
        "the whole file: INCONCLUSIVE (merge the parts for its verdict): "
    )
    collected = gate.run(*args, "--collect-only")
    assert section(collected)[0].endswith("; counts of the whole file (7 tasks): collected only, no item ran")
    whole = gate.run(*args)
    assert section(whole)[0].startswith("parity: ")


def test_margin_mode_names_the_flips_that_fail_and_those_within_noise(gate: Gate) -> None:
    from .conftest import section

    # t0 lost all 8 rollouts (not noise: it fails); t1 lost one of 8 (within noise: it xfails)
    old = [harbor_row(f"t{i}", 1.0, index=i, rollout=r) for i in range(4) for r in range(8)]
    new = [
        harbor_row(f"t{i}", 0.0 if i == 0 else (0.0 if (i == 1 and r == 0) else 1.0), index=i, rollout=r)
        for i in range(4)
        for r in range(8)
    ]
    result = gate.run(*gate.pair(old, new), "--parity-margin=0.5")
    assert section(result)[0].startswith(
        "parity: FAIL: 1 flip fails (2 regressed, 0 improved; 1 within noise); 2 identical"
    )
    result.stdout.fnmatch_lines(["FAILED new/rollouts.jsonl::t0 - *"])


SPARTQA = Path(__file__).resolve().parents[1] / "data" / "real_history_pairs" / "spartqa"


def _spartqa(version: str) -> list[dict]:
    return [json.loads(line) for line in (SPARTQA / version / "example_rollouts.jsonl").read_text().splitlines()]


def _two_runs(regressed: bool) -> list[dict]:
    """Run A (spartqa's old five tasks) and run B (its new five), each numbering its tasks 0-4;
    the old side has A's task 0 right and B's task 0 wrong, the new side the other way round."""
    run_a = [dict(row, _ng_run_id="A") for row in _spartqa("old")]
    run_b = [dict(row, _ng_run_id="B") for row in _spartqa("new")]
    run_a[0]["reward"], run_b[0]["reward"] = (0.0, 1.0) if regressed else (1.0, 0.0)
    return run_a + run_b


def test_two_runs_in_one_file_are_not_joined_across_runs(gate: Gate) -> None:
    """Keyed on the index, A's regression and B's improvement at index 0 cancel in the mean and
    the pair passes; each run's task 0 is its own task, so the gate fails with both."""
    result = gate.run(*gate.pair(_two_runs(False), _two_runs(True)), "-rf")
    assert result.ret == 1
    result.assert_outcomes(passed=8, failed=2)
    result.stdout.fnmatch_lines(
        [
            "parity: FAIL: 1 task regressed, 1 improved (2 verifier disagreements: *); 8 identical",
            "*both sides: the side holds several runs: its rows carry 2 _ng_run_id values (A, B); _ng_task_index names*",
        ]
    )


REAL_ROWS = Path(__file__).resolve().parents[1] / "data" / "real_rows"


@pytest.mark.parametrize("key", [[], ["--parity-key=task_id"]], ids=["detected", "given"])
def test_a_failure_record_without_the_task_id_finds_its_task_by_index(gate: Gate, key: list[str]) -> None:
    """deepswe rows name their task by `task_id`; the collector's record of a failed rollout carries
    only the index stamps, which the main file maps to that task, whether the key is detected or
    given by the option."""
    scored = json.loads((REAL_ROWS / "deepswe_opencode_trimmed.jsonl").read_text().splitlines()[0])
    old = [scored, dict(scored, _ng_rollout_index=1)]
    args = gate.pair(old, [scored])
    gate.write(
        "new/rollouts_failures.jsonl",
        [failure_record(index=scored["_ng_task_index"], rollout=1), failure_record(index=999, rollout=0)],
    )
    result = gate.run(*args, *key, "--parity-max-masked=off", "--parity-max-uncompared=off")
    result.assert_outcomes(passed=1, xfailed=1)  # the task, and the record that maps to no task
    result.stdout.fnmatch_lines(
        [
            "*new side: 1 failure record(s) without task_id placed in their task by the main file's rows of the "
            "same _ng_task_index*"
        ]
    )
    assert "unknown (new) #2" not in result.stdout.str()


def test_a_token_capture_mask_is_a_training_mask_and_the_reward_stands(gate: Gate) -> None:
    """NeMo Gym's token-id capture sets `mask_sample` (with `_ng_token_capture`) on a verified
    rollout whose token chain it could not build: training leaves it out, the reward stands."""
    old = _spartqa("old")
    new = [dict(row) for row in old]
    new[0].update(reward=0.0, mask_sample=True, _ng_token_capture={"n_calls": 0, "error": "nothing recorded"})
    new[1].update(mask_sample=True, failure_kind="agent_run_error")  # a failure's mask still masks
    result = gate.run(*gate.pair(old, new), "--parity-max-masked=off", "--parity-max-uncompared=off")
    result.assert_outcomes(passed=3, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(
        ["*new side: 1 row(s) with mask_sample set by NeMo Gym's token-id capture (_ng_token_capture) are scored*"]
    )


AUDIO_QUESTIONS = [
    "Tell me about the movie Star Wars.",
    "What instrument plays the melody in this clip?",
    "How many speakers can you hear?",
    "What emotion does the speaker convey?",
    "Which city is mentioned in the recording?",
    "Summarize what the speaker says about the weather.",
    "What language is being spoken?",
    "Is the speaker asking or telling something?",
    "What sound is heard at the end of the clip?",
]


def _audiobench_row(question: str, reward: float) -> dict:
    """An audiobench-shaped row: the same message on every row (the audio travels elsewhere), the
    question asked in a free-text field."""
    return {
        "responses_create_params": {
            "input": [
                {"role": "system", "content": "You are a helpful assistant that listens to audio."},
                {"role": "user", "content": "Answer the question about the audio clip.", "type": "message"},
            ],
            "temperature": 0.0,
        },
        "question": question,
        "expected_answer": "see reference",
        "reward": reward,
        "agent_ref": {"type": "responses_api_agents", "name": "audiobench_simple_agent"},
    }


def test_a_free_text_question_is_the_prompt_where_the_messages_are_one(gate: Gate) -> None:
    old = [_audiobench_row(q, 0.0) for q in AUDIO_QUESTIONS[:5]]
    new = [_audiobench_row(q, 0.0) for q in AUDIO_QUESTIONS[:1] + AUDIO_QUESTIONS[5:]]
    result = gate.run(*gate.pair(old, new), "--parity-max-missing=off", "--parity-max-uncompared=off", "-rx")
    result.assert_outcomes(passed=1, xfailed=8)  # Star Wars joined; four tasks on each side alone
    result.stdout.fnmatch_lines(
        [
            "parity: PASS: 0 tasks regressed, 0 improved, 8 missing; 1 identical",
            "*both sides: the messages are the same on every row, so the question field, which varies as a prompt "
            "does, is read as the prompt*",
        ]
    )

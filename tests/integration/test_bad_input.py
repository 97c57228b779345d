"""Unusable inputs stop the gate with one line naming the file (and line); odd but valid bytes load."""

from __future__ import annotations

import json

import pytest

from .conftest import Gate, all_text, dump, harbor_row, legacy_row, output_lines

GOOD_OLD = [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0), legacy_row("build-cython-ext", 0.0)]
GOOD_NEW = [
    harbor_row("fix-git", 1.0),
    harbor_row("regex-log", 0.0, index=1),
    harbor_row("build-cython-ext", 0.0, index=2),
]


def line_of(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"


def assert_input_error(gate: Gate, result: pytest.RunResult, *needles: str) -> str:
    lines = output_lines(result)
    assert result.ret in (2, 3, 4), (result.ret, lines)
    assert len(lines) == 1, lines
    text = all_text(result)
    assert "Traceback" not in text
    assert "collected" not in text and "passed" not in text and "failed" not in text
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def run_with_new(gate: Gate, new: str | bytes, old: str | bytes | None = None) -> pytest.RunResult:
    args = gate.pair(dump(GOOD_OLD) if old is None else old, new)
    return gate.run(*args)


# --- files that cannot be read --------------------------------------------------------------------


@pytest.mark.parametrize("side", ["old", "new"])
def test_missing_file(gate: Gate, side: str) -> None:
    args = gate.pair(GOOD_OLD, GOOD_NEW)
    (gate.path / f"{side}/rollouts.jsonl").unlink()
    assert_input_error(gate, gate.run(*args), f"{side}/rollouts.jsonl")


def test_directory(gate: Gate) -> None:
    gate.write("old/rollouts.jsonl", GOOD_OLD)
    (gate.path / "new" / "dir.jsonl").mkdir(parents=True)
    result = gate.run("--parity-old=old/rollouts.jsonl", "--parity-new=new/dir.jsonl")
    assert_input_error(gate, result, "new/dir.jsonl")


def test_unreadable_file(gate: Gate, make_unreadable) -> None:
    args = gate.pair(GOOD_OLD, GOOD_NEW)
    make_unreadable(gate.path / "new/rollouts.jsonl")
    result = gate.run(*args)
    assert_input_error(gate, result, "new/rollouts.jsonl")
    assert "new/rollouts.jsonl: cannot read: Permission denied" in all_text(result)


# --- lines that are not rows ----------------------------------------------------------------------


def test_invalid_json_mid_file(gate: Gate) -> None:
    text = (
        line_of(GOOD_NEW[0])
        + '{"_ng_task_id": {"taskset": "t", "task_id": "x"}, "reward": 1.0,,}\n'
        + line_of(GOOD_NEW[1])
    )
    assert_input_error(gate, run_with_new(gate, text), "new/rollouts.jsonl:2")


def test_invalid_json_mid_file_old_side(gate: Gate) -> None:
    text = line_of(GOOD_OLD[0]) + "\n" + line_of(GOOD_OLD[1]) + "not json at all\n" + line_of(GOOD_OLD[2])
    args = gate.pair(text, GOOD_NEW)
    assert_input_error(gate, gate.run(*args), "old/rollouts.jsonl:4")


@pytest.mark.parametrize("value", ["[1, 2]", '"a string"', "42", "null", "true"])
def test_non_object_line(gate: Gate, value: str) -> None:
    text = line_of(GOOD_NEW[0]) + value + "\n" + line_of(GOOD_NEW[1])
    assert_input_error(gate, run_with_new(gate, text), "new/rollouts.jsonl:2")


def test_json_nested_deeper_than_a_parser_goes_is_read_or_refused_cleanly(gate: Gate) -> None:
    """5,000 nested arrays: whether they parse depends on the interpreter (3.13's stdlib reads them, 3.11's
    does not). Either the row loads like any other, or one ERROR line names file:line and the exit is 4."""
    deep = line_of(GOOD_NEW[0])[:-2] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}\n"
    result = run_with_new(gate, deep + dump(GOOD_NEW[1:]))
    if result.ret == 4:
        assert_input_error(gate, result, "new/rollouts.jsonl:1: JSON nested too deeply to read")
    else:
        result.assert_outcomes(passed=2, failed=1)  # the same as GOOD_NEW without the deep field
        assert "Traceback" not in all_text(result)


def test_truncated_last_line(gate: Gate) -> None:
    text = line_of(GOOD_NEW[0]) + line_of(GOOD_NEW[1]) + line_of(GOOD_NEW[2])[:40]
    message = assert_input_error(gate, run_with_new(gate, text), "new/rollouts.jsonl:3")
    assert "truncat" in message.lower()


@pytest.mark.parametrize("reward", ["1.0", True, False, {"value": 1.0}, [1.0]])
def test_bad_reward_type(gate: Gate, reward: object) -> None:
    rows = [GOOD_NEW[0], harbor_row("regex-log", reward, index=1), GOOD_NEW[2]]
    message = assert_input_error(gate, run_with_new(gate, dump(rows)), "new/rollouts.jsonl:2")
    assert "reward" in message
    assert "terminal-bench-2-1/regex-log" in message  # the row's task, taskset/task_id where known


def test_bad_reward_type_old_legacy_row(gate: Gate) -> None:
    rows = [GOOD_OLD[0], GOOD_OLD[1], legacy_row("build-cython-ext", "0.0")]
    args = gate.pair(rows, GOOD_NEW)
    message = assert_input_error(gate, gate.run(*args), "old/rollouts.jsonl:3")
    assert "build-cython-ext" in message


def test_parity_key_missing_on_a_row(gate: Gate) -> None:
    old = [dict(r, instance_id=f"terminal_bench::{r['task_name'].split('/')[1]}") for r in GOOD_OLD]
    new = [dict(r, instance_id=f"terminal_bench::{r['_ng_task_id']['task_id']}") for r in GOOD_NEW]
    del new[1]["instance_id"]
    args = gate.pair(old, new)
    message = assert_input_error(gate, gate.run(*args, "--parity-key=instance_id"), "new/rollouts.jsonl:2")
    assert "instance_id" in message


def test_no_key_at_all(gate: Gate) -> None:
    rows = [{"reward": 1.0, "response": {"output": []}}, {"reward": 0.0, "response": {"output": []}}]
    message = assert_input_error(gate, run_with_new(gate, dump(rows)), "new/rollouts.jsonl")
    assert "--parity-key" in message


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_file(gate: Gate, content: str) -> None:
    assert_input_error(gate, run_with_new(gate, content), "new/rollouts.jsonl")


def test_malformed_sidecar(gate: Gate) -> None:
    args = gate.pair(GOOD_OLD, GOOD_NEW)
    gate.write(
        "new/rollouts_failures.jsonl",
        '{"_ng_failure_class": "agent_run_error", "_ng_task_index": 3, "_ng_rollout_index": 0}\n'
        '{"_ng_failure_class": "agent_run_err\n',
    )
    assert_input_error(gate, gate.run(*args), "new/rollouts_failures.jsonl:2")


def test_sidecar_non_object(gate: Gate) -> None:
    args = gate.pair(GOOD_OLD, GOOD_NEW)
    gate.write("old/rollouts_failures.jsonl", "[]\n")
    assert_input_error(gate, gate.run(*args), "old/rollouts_failures.jsonl:1")


# --- odd bytes that still load -------------------------------------------------------------------


def loads(gate: Gate, new: str | bytes) -> dict:
    args = gate.pair(GOOD_OLD, new)
    result = gate.run(*args, "--parity-json=s.json")
    assert result.ret in (0, 1), output_lines(result)
    assert "Traceback" not in all_text(result)
    data = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))
    return {t["task"]: t for t in data["tasks"]}


def expect_normal(tasks: dict) -> None:
    assert {k: v["category"] for k, v in tasks.items()} == {
        "fix-git": "identical",
        "regex-log": "flipped",
        "build-cython-ext": "identical",
    }


def test_undecodable_bytes(gate: Gate) -> None:
    raw = dump(GOOD_NEW).encode("utf-8").replace(b'"status": "completed"', b'"status": "compl\xff\xfeted"', 1)
    assert b"\xff" in raw
    expect_normal(loads(gate, raw))


def test_utf8_bom(gate: Gate) -> None:
    expect_normal(loads(gate, b"\xef\xbb\xbf" + dump(GOOD_NEW).encode("utf-8")))


def test_crlf(gate: Gate) -> None:
    expect_normal(loads(gate, dump(GOOD_NEW).replace("\n", "\r\n")))


def test_blank_lines(gate: Gate) -> None:
    expect_normal(loads(gate, "\n" + dump(GOOD_NEW).replace("\n", "\n\n")))


def test_last_line_complete_without_newline(gate: Gate) -> None:
    expect_normal(loads(gate, dump(GOOD_NEW).rstrip("\n")))


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_inside_strings(gate: Gate, sep: str) -> None:
    rows = [dict(r, failure_reason=f"first{sep}second") for r in GOOD_NEW]
    text = dump(rows)
    assert sep in text
    tasks = loads(gate, text)
    expect_normal(tasks)
    assert tasks["fix-git"]["new"]["rows"] == 1


@pytest.mark.parametrize("token,reason", [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")])
def test_nan_infinity_tokens_mask(gate: Gate, token: str, reason: str) -> None:
    text = dump(GOOD_NEW).replace('"reward": 0.0', f'"reward": {token}', 1)
    assert token in text
    tasks = loads(gate, text)
    assert tasks["regex-log"]["category"] == "masked"
    assert reason in tasks["regex-log"]["new"]["masked"]
    assert tasks["fix-git"]["category"] == "identical"

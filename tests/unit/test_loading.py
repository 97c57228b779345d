"""docs/semantics.md, "Reading a side and its sidecar" (main file only; the sidecar is in test_sidecar.py)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rollout_parity import CompareInputError, compare_rollouts, load_rollouts


def _assert_contains_row(loaded: dict, original: dict) -> None:
    for key, value in original.items():
        assert key in loaded, key
        assert loaded[key] == value, key


# --- real rows -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, count",
    [
        ("harbor_agent_terminal_bench_daytona.jsonl", 2),
        ("harbor_agent_scientific_trimmed.jsonl", 1),
        ("biomnibench_da_harbor_trimmed.jsonl", 1),
        ("anyterminal_hermes_trimmed.jsonl", 1),
        ("anyswe_hermes_repeats_trimmed.jsonl", 2),
        ("deepswe_opencode_trimmed.jsonl", 1),
    ],
)
def test_real_files_load_row_by_row(name, count, real_rows, real_path):
    rows = load_rollouts(real_path(name))
    expected = real_rows(name)
    assert len(rows) == count == len(expected)
    for loaded, original in zip(rows, expected):
        assert isinstance(loaded, dict)
        _assert_contains_row(loaded, original)


def test_load_accepts_str_path(write_jsonl):
    path = write_jsonl("r.jsonl", [{"task_id": "a", "reward": 1.0}])
    rows = load_rollouts(str(path))
    assert [r["task_id"] for r in rows] == ["a"]
    assert rows[0]["reward"] == 1.0


def test_real_row_keeps_escaped_control_chars_and_ellipsis(real_path):
    rows = load_rollouts(real_path("deepswe_opencode_trimmed.jsonl"))
    assert "\u001b" in rows[0]["opencode_run_stdout"]
    assert "\u2026<trimmed:" in rows[0]["opencode_run_stdout"]


# --- bytes on disk ---------------------------------------------------------------------------


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_inside_strings_never_split_a_row(sep, write_jsonl):
    # Gym's orjson writer leaves these raw; splitlines() would break the row.
    text = (
        '{"task_id": "a", "reward": 1.0, "note": "x' + sep + 'y"}\n'
        '{"task_id": "b", "reward": 0.0, "note": "' + sep + '"}\n'
    )
    path = write_jsonl("r.jsonl", text)
    assert sep.encode("utf-8") in path.read_bytes()
    rows = load_rollouts(path)
    assert [r["task_id"] for r in rows] == ["a", "b"]
    assert rows[0]["note"] == "x" + sep + "y"
    assert rows[1]["note"] == sep


def test_undecodable_bytes_are_replaced_not_fatal(write_jsonl):
    raw = b'{"task_id": "a", "reward": 1.0, "note": "bad \xff\xfe byte"}\n'
    path = write_jsonl("r.jsonl", raw)
    rows = load_rollouts(path)
    assert len(rows) == 1
    assert rows[0]["task_id"] == "a"
    assert "\ufffd" in rows[0]["note"]
    assert rows[0]["note"].startswith("bad ")
    assert rows[0]["note"].endswith(" byte")


def test_blank_lines_are_skipped(write_jsonl):
    text = '\n{"task_id": "a", "reward": 1.0}\n\n   \n{"task_id": "b", "reward": 0.0}\n\n'
    rows = load_rollouts(write_jsonl("r.jsonl", text))
    assert [r["task_id"] for r in rows] == ["a", "b"]


def test_complete_last_line_without_final_newline_is_read(write_jsonl):
    # swebench / gpqa_diamond files lack a final newline; the last row is whole.
    text = '{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "reward": 0.5}'
    rows = load_rollouts(write_jsonl("r.jsonl", text))
    assert [r["task_id"] for r in rows] == ["a", "b"]
    assert rows[1]["reward"] == 0.5


def test_int_null_and_absent_rewards_are_accepted(write_jsonl):
    text = (
        '{"task_id": "a", "reward": 1}\n'
        '{"task_id": "b", "reward": null}\n'
        '{"task_id": "c"}\n'
        '{"task_id": "d", "reward": -100.0}\n'
    )
    rows = load_rollouts(write_jsonl("r.jsonl", text))
    assert [r["task_id"] for r in rows] == ["a", "b", "c", "d"]
    assert rows[0]["reward"] == 1
    assert rows[1].get("reward") is None
    assert rows[2].get("reward") is None
    assert rows[3]["reward"] == -100.0


def test_nan_and_infinity_tokens_parse(write_jsonl):
    text = (
        '{"task_id": "a", "reward": NaN}\n{"task_id": "b", "reward": Infinity}\n{"task_id": "c", "reward": -Infinity}\n'
    )
    rows = load_rollouts(write_jsonl("r.jsonl", text))
    assert [r["task_id"] for r in rows] == ["a", "b", "c"]
    assert math.isnan(rows[0]["reward"])
    assert rows[1]["reward"] == math.inf
    assert rows[2]["reward"] == -math.inf


# --- input errors ----------------------------------------------------------------------------


def test_invalid_json_names_path_and_physical_line(write_jsonl):
    # line 1 ok, line 2 blank, line 3 broken, line 4 ok
    text = '{"task_id": "a", "reward": 1.0}\n\n{"task_id": "b", "reward": \n{"task_id": "c", "reward": 1.0}\n'
    path = write_jsonl("r.jsonl", text)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    assert f"{path}:3" in str(exc.value)


@pytest.mark.parametrize("line", ["[1, 2]", '"fix-git"', "3", "null", "true"])
def test_non_object_line_is_an_input_error(line, write_jsonl):
    text = '{"task_id": "a", "reward": 1.0}\n' + line + "\n"
    path = write_jsonl("r.jsonl", text)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    assert f"{path}:2" in str(exc.value)


def test_truncated_last_line_is_an_error_that_says_so(write_jsonl):
    text = '{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "rew'
    path = write_jsonl("r.jsonl", text)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    message = str(exc.value)
    assert f"{path}:2" in message
    assert re.search(r"truncat|cut short|incomplete|hard kill", message, re.I), message


def test_truncated_line_in_the_middle_is_an_error_too(write_jsonl):
    text = '{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "rew\n{"task_id": "c", "reward": 1.0}\n'
    path = write_jsonl("r.jsonl", text)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    assert f"{path}:2" in str(exc.value)


@pytest.mark.parametrize("reward_json", ['"1.0"', "true", "false"])
def test_string_or_bool_reward_is_an_error_naming_line_and_task(reward_json, write_jsonl):
    text = (
        '{"_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "regex-log"}, "reward": 1.0}\n'
        '{"_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "fix-git"}, "reward": ' + reward_json + "}\n"
    )
    path = write_jsonl("r.jsonl", text)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    message = str(exc.value)
    assert f"{path}:2" in message
    assert "terminal-bench-2-1/fix-git" in message


def test_string_reward_error_names_plain_task_id(write_jsonl, real_rows):
    rows = real_rows("deepswe_opencode_trimmed.jsonl")
    rows[0]["reward"] = "1.0"
    path = write_jsonl("r.jsonl", "\n" + json.dumps(rows[0], ensure_ascii=False) + "\n")  # the row is on line 2
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    message = str(exc.value)
    assert f"{path}:2" in message
    assert "ts-pattern-match-each" in message


def test_missing_file_is_an_input_error_naming_it(tmp_path):
    path = tmp_path / "nope" / "rollouts.jsonl"
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    assert str(path) in str(exc.value)


def test_compare_input_error_is_an_exception():
    assert issubclass(CompareInputError, Exception)


# --- the API does not need pytest ------------------------------------------------------------


@pytest.mark.slow
def test_core_imports_and_compares_without_pytest(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"task_id": "a", "reward": 1.0}\n', encoding="utf-8")
    code = (
        "import sys\n"
        "sys.modules['pytest'] = None\n"
        "sys.modules['_pytest'] = None\n"
        "sys.modules['pluggy'] = None\n"
        "import pytest_rollout_parity as p\n"
        f"rows = p.load_rollouts({str(path)!r})\n"
        "res = p.compare_rollouts(rows, rows)\n"
        "print(res.counts()['identical'], res.counts()['tasks'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=str(Path(__file__).parents[2])
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1"]


@pytest.mark.slow
def test_importing_the_core_does_not_import_pytest():
    code = "import sys\nimport pytest_rollout_parity\nprint('pytest' in sys.modules, '_pytest' in sys.modules)\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=str(Path(__file__).parents[2])
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_load_then_compare_round_trip(write_jsonl, real_rows):
    old = real_rows("deepswe_opencode_trimmed.jsonl")
    new = real_rows("deepswe_opencode_trimmed.jsonl")
    new[0]["reward"] = 0.0
    res = compare_rollouts(
        load_rollouts(write_jsonl("old/r.jsonl", old)), load_rollouts(write_jsonl("new/r.jsonl", new))
    )
    assert [(t.task, t.category, t.winner) for t in res.tasks] == [("ts-pattern-match-each", "flipped", "old")]
    assert json.loads(json.dumps(res.counts()))["flipped_old_win"] == 1


@pytest.mark.parametrize("content", [b"", b"\n\n   \n"])
def test_file_without_rows_is_an_input_error_naming_it(content, write_jsonl):
    # docs/semantics.md, "Reading a side and its sidecar": "no rows at all" is an input error
    path = write_jsonl("r.jsonl", content)
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(path)
    assert str(path) in str(exc.value)

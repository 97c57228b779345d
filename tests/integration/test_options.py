"""Options from the command line and the ini file, path resolution, usage errors, and no-op runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import Gate, all_text, harbor_row, legacy_row, output_lines


def tail_lines(result: pytest.RunResult) -> list[str]:
    """The lines of each verifier log tail (not those of a row's evidence block)."""
    lines, in_log = [], False
    for line in result.outlines:
        if not line.startswith("    | "):
            in_log = "verifier output (last" in line
        elif in_log:
            lines.append(line)
    return lines


def flip(
    gate: Gate, old_path: str = "old/rollouts.jsonl", new_path: str = "new/rollouts.jsonl", logs_dir: str = "logs/s1"
) -> list[str]:
    """One identical task and one flip whose losing (new) row points at a 30-line log."""
    old = [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)]
    new = [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1, logs_dir=logs_dir)]
    return gate.pair(old, new, old_path, new_path)


def categories_by_key(gate: Gate) -> list[str]:
    """Rows whose `task_name` is a category (structeval-style) and whose real id is `task_id`."""
    old = [legacy_row("x", 1.0, task_name="Text to CSV", task_id=f"00020{i}") for i in range(3)]
    new = [harbor_row("x", 1.0, index=i, task_name="Text to CSV", task_id=f"00020{i}") for i in range(3)]
    for row in new:
        del row["_ng_task_id"]
    return gate.pair(old, new)


# --- each option from the command line -----------------------------------------------------------


def test_cli_key(gate: Gate) -> None:
    args = categories_by_key(gate)
    result = gate.run(*args, "--collect-only", "-q")
    assert "3 tests collected" not in result.stdout.str()  # detected key: task_name, one task
    result = gate.run(*args, "--parity-key=task_id", "--parity-json=s.json")
    result.assert_outcomes(passed=3)
    summary = json.loads((gate.path / "s.json").read_text())
    assert summary["join"]["old_key"] == summary["join"]["new_key"] == "task_id"
    assert [t["task"] for t in summary["tasks"]] == ["000200", "000201", "000202"]


def test_cli_dotted_key(gate: Gate) -> None:
    """anyterminal-style rows: the id lives only in responses_create_params.metadata.instance_id."""

    def row(task: str, reward: float) -> dict:
        return {
            "responses_create_params": {
                "input": [],
                "metadata": {"instance_id": f"terminal_bench::{task}", "task_name": task},
            },
            "response": {"output": []},
            "reward": reward,
        }

    args = gate.pair([row("fix-git", 1.0), row("regex-log", 1.0)], [row("fix-git", 1.0), row("regex-log", 0.0)])
    result = gate.run(*args, "--parity-key=responses_create_params.metadata.instance_id", "-rf", "-vv")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["FAILED new/rollouts.jsonl::terminal_bench_regex-log - new regressed: old=1.0 new=0.0"]
    )


@pytest.mark.parametrize("tail", [0, 1, 4, 100])
def test_cli_tail(gate: Gate, tail: int) -> None:
    gate.log("new/logs/s1", [f"log {i}" for i in range(1, 31)])
    result = gate.run(*flip(gate), f"--parity-tail={tail}")
    assert result.ret == 1
    expected = [f"    | log {i}" for i in range(max(1, 31 - tail), 31)] if tail else []
    assert tail_lines(result) == expected
    if tail:
        assert f"(last {tail} lines of " in result.stdout.str()


def test_default_tail_is_15(gate: Gate) -> None:
    gate.log("new/logs/s1", [f"log {i}" for i in range(1, 31)])
    result = gate.run(*flip(gate))
    assert tail_lines(result) == [f"    | log {i}" for i in range(16, 31)]


def test_cli_logs_root_repeatable(gate: Gate) -> None:
    gate.log("rootA/sA", ["from root A"])
    gate.log("rootB/sB", ["from root B"])
    old = [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)]
    new = [harbor_row("fix-git", 0.0, logs_dir="sA"), harbor_row("regex-log", 0.0, index=1, logs_dir="sB")]
    args = gate.pair(old, new)
    result = gate.run(*args, "--parity-logs-root=rootA", "--parity-logs-root", "rootB")
    assert result.ret == 1
    assert sorted(tail_lines(result)) == ["    | from root A", "    | from root B"]
    result = gate.run(*args, "--parity-logs-root=rootB")
    assert tail_lines(result) == ["    | from root B"]
    result.stdout.fnmatch_lines(["    new verifier output unavailable: sA not found under *"])


def test_cli_json_and_strict(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-json=s.json", "--parity-strict")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=6)
    assert json.loads((gate.path / "s.json").read_text())["counts"]["tasks"] == 7


# --- ini ----------------------------------------------------------------------------------------

INI_BODY = """\
parity_old = old/rollouts.jsonl
parity_new = new/rollouts.jsonl
parity_key = task_id
parity_tail = 2
parity_logs_root =
    rootA
    rootB
parity_strict = true
parity_max_uncompared = 1
parity_max_missing = 40%
"""


def ini_files(gate: Gate) -> None:
    gate.log("rootA/sA", ["a1", "a2", "a3"])
    gate.log("rootB/sB", ["b1", "b2", "b3"])
    old = [legacy_row(t, 1.0, task_id=t) for t in ("fix-git", "regex-log", "old-only")]
    new = [
        harbor_row("fix-git", 0.0, logs_dir="sA", task_id="fix-git"),
        harbor_row("regex-log", 0.0, index=1, logs_dir="sB", task_id="regex-log"),
    ]
    gate.pair(old, new)


def check_ini_run(gate: Gate, result: pytest.RunResult) -> None:
    assert result.ret == 1
    result.assert_outcomes(failed=3)  # strict: the missing task fails too
    assert sorted(tail_lines(result)) == ["    | a2", "    | a3", "    | b2", "    | b3"]
    assert "key task_id" in result.stdout.str()


@pytest.mark.parametrize("style", ["pytest.ini", "tox.ini", "pyproject.toml", "pyproject-native-types"])
def test_all_options_from_ini(gate: Gate, style: str) -> None:
    ini_files(gate)
    if style == "pytest.ini":
        gate.write("pytest.ini", "[pytest]\n" + INI_BODY)
    elif style == "tox.ini":
        gate.write("tox.ini", "[pytest]\n" + INI_BODY)
    elif style == "pyproject-native-types":
        body = "\n".join(
            [
                "[tool.pytest.ini_options]",
                'parity_old = "old/rollouts.jsonl"',
                'parity_new = "new/rollouts.jsonl"',
                'parity_key = "task_id"',
                "parity_tail = 2",
                'parity_logs_root = ["rootA", "rootB"]',
                "parity_strict = true",
                'parity_max_uncompared = "1"',
                'parity_max_missing = "40%"',
            ]
        )
        gate.write("pyproject.toml", body + "\n")
    else:
        body = "\n".join(
            [
                "[tool.pytest.ini_options]",
                'parity_old = "old/rollouts.jsonl"',
                'parity_new = "new/rollouts.jsonl"',
                'parity_key = "task_id"',
                'parity_tail = "2"',
                'parity_logs_root = ["rootA", "rootB"]',
                'parity_strict = "true"',
                'parity_max_uncompared = "1"',
                'parity_max_missing = "40%"',
            ]
        )
        gate.write("pyproject.toml", body + "\n")
    check_ini_run(gate, gate.run())


PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9


@pytest.mark.skipif(not PYTEST_9, reason="native [tool.pytest] configuration and strict mode are pytest 9's")
def test_all_options_from_native_toml_in_strict_mode(gate: Gate) -> None:
    """pytest 9's own TOML table (typed values) and `strict = true` (strict markers, config, xfail,
    parametrize ids): the gate's keys are known keys, its items use no unknown mark, its xfails stay xfails."""
    ini_files(gate)
    body = "\n".join(
        [
            "[tool.pytest]",
            "strict = true",
            'parity_old = "old/rollouts.jsonl"',
            'parity_new = "new/rollouts.jsonl"',
            'parity_key = "task_id"',
            "parity_tail = 2",
            'parity_logs_root = ["rootA", "rootB"]',
            "parity_strict = true",
            'parity_max_uncompared = "1"',
            'parity_max_missing = "40%"',
        ]
    )
    gate.write("pyproject.toml", body + "\n")
    check_ini_run(gate, gate.run())
    # and without parity_strict: the missing task xfails under pytest's strict mode too
    gate.write("pyproject.toml", body.replace("parity_strict = true", "parity_strict = false") + "\n")
    result = gate.run()
    result.assert_outcomes(failed=2, xfailed=1)


def test_cli_wins_over_ini(gate: Gate) -> None:
    ini_files(gate)
    gate.write(
        "other/new.jsonl",
        [harbor_row("fix-git", 1.0, task_id="fix-git"), harbor_row("regex-log", 1.0, index=1, task_id="regex-log")],
    )
    ini = INI_BODY.replace("parity_strict = true", "parity_strict = false").replace("= task_id", "= no.such.field")
    gate.write("pytest.ini", "[pytest]\n" + ini)
    result = gate.run("--parity-tail=1", "--parity-logs-root=rootB", "--parity-key=task_id")
    assert sorted(tail_lines(result)) == ["    | b3"]
    result.stdout.fnmatch_lines(["*new verifier output unavailable: sA not found under*"])
    result.assert_outcomes(failed=2, xfailed=1)
    result = gate.run("--parity-new=other/new.jsonl", "--parity-strict", "--parity-key=task_id")
    result.assert_outcomes(passed=2, failed=1)


def test_one_side_cli_other_ini(gate: Gate) -> None:
    args = flip(gate)
    gate.write("pytest.ini", "[pytest]\nparity_new = new/rollouts.jsonl\n")
    result = gate.run(args[0])
    result.assert_outcomes(passed=1, failed=1)


def test_ini_paths_resolve_against_ini_dir(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    ini_files(gate)
    gate.write("pytest.ini", "[pytest]\n" + INI_BODY)
    sub = gate.path / "sub" / "deeper"
    sub.mkdir(parents=True)
    # decoys next to the invocation dir: must not be used
    gate.write("sub/deeper/old/rollouts.jsonl", "not json\n")
    monkeypatch.chdir(sub)
    check_ini_run(gate, gate.run())


def test_cli_paths_resolve_against_invocation_dir(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    gate.log("rootA/sA", ["a1", "a2", "a3"])
    old = [legacy_row("fix-git", 1.0)]
    new = [harbor_row("fix-git", 0.0, logs_dir="sA")]
    gate.pair(old, new, "data/old.jsonl", "data/new.jsonl")
    gate.write("pytest.ini", "[pytest]\n")
    sub = gate.path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = gate.run(
        "--parity-old=../data/old.jsonl",
        "--parity-new=../data/new.jsonl",
        "--parity-logs-root=../rootA",
        "--parity-json=s.json",
    )
    assert result.ret == 1
    assert tail_lines(result) == ["    | a1", "    | a2", "    | a3"]
    assert (sub / "s.json").is_file()
    assert not (gate.path / "s.json").exists()


# --- usage errors -------------------------------------------------------------------------------


def assert_usage_error(result: pytest.RunResult, *needles: str) -> None:
    lines = output_lines(result)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("ERROR: "), lines
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in all_text(result)


@pytest.mark.parametrize("given", ["--parity-old", "--parity-new"])
def test_only_one_side_cli(gate: Gate, given: str) -> None:
    flip(gate)
    path = "old/rollouts.jsonl" if given == "--parity-old" else "new/rollouts.jsonl"
    other = "--parity-new" if given == "--parity-old" else "--parity-old"
    assert_usage_error(gate.run(f"{given}={path}"), given, other)


def test_a_toml_list_for_one_value_is_a_usage_error(gate: Gate) -> None:
    """Found by review: a TOML list given to `parity_new` ended in a traceback from the path code."""
    flip(gate)
    body = '[tool.pytest.ini_options]\nparity_old = "old/rollouts.jsonl"\nparity_new = ["new/rollouts.jsonl"]\n'
    gate.write("pyproject.toml", body)
    assert_usage_error(gate.run(), "parity_new: one value, not a TOML list")


def test_only_one_side_ini(gate: Gate) -> None:
    flip(gate)
    gate.write("pytest.ini", "[pytest]\nparity_new = new/rollouts.jsonl\n")
    assert_usage_error(gate.run(), "parity_new", "--parity-old")


@pytest.mark.parametrize("value", ["-1", "abc", "1.5", ""])
def test_bad_tail_cli(gate: Gate, value: str) -> None:
    args = flip(gate)
    assert_usage_error(gate.run(*args, f"--parity-tail={value}"), "--parity-tail")


@pytest.mark.parametrize("value", ["-3", "many"])
def test_bad_tail_ini(gate: Gate, value: str) -> None:
    args = flip(gate)
    gate.write("pytest.ini", f"[pytest]\nparity_tail = {value}\n")
    assert_usage_error(gate.run(*args), "parity_tail")


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_bad_strict_ini(gate: Gate, value: str) -> None:
    args = flip(gate)
    gate.write("pytest.ini", f"[pytest]\nparity_strict = {value}\n")
    assert_usage_error(gate.run(*args), "parity_strict")


def test_bad_strict_cli_value(gate: Gate) -> None:
    """`--parity-strict` is a flag: a value given to it is pytest's own usage error, exit 4, no traceback.

    (A flag that took an optional value would swallow a following test path; argparse owns this one.)
    """
    args = flip(gate)
    result = gate.run(*args, "--parity-strict=yes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = all_text(result)
    assert "argument --parity-strict: ignored explicit argument 'yes'" in text
    assert "Traceback" not in text


def test_blank_key(gate: Gate) -> None:
    args = flip(gate)
    assert_usage_error(gate.run(*args, "--parity-key="), "--parity-key")


def test_strict_ini_false_values(gate: Gate) -> None:
    args = gate.mixed()
    for value in ("false", "0", "no"):
        gate.write("pytest.ini", f"[pytest]\nparity_strict = {value}\n")
        gate.run(*args).assert_outcomes(passed=1, failed=2, xfailed=4)


# --- no parity options: nothing changes ---------------------------------------------------------

NORMAL_TESTS = """
import pytest

def test_ok():
    assert True

def test_bad():
    assert 1 == 2

@pytest.mark.xfail(reason="known")
def test_known():
    assert False

def test_skip():
    pytest.skip("nope")
"""


def test_without_options_nothing_changes(gate: Gate) -> None:
    gate.pytester.makepyfile(test_normal=NORMAL_TESTS)
    gate.write("new/rollouts.jsonl", [harbor_row("fix-git", 1.0)])
    gate.write("old/rollouts.jsonl", [legacy_row("fix-git", 1.0)])
    gate.write("rollouts.jsonl", "not even json\n")
    with_plugin = gate.run("-rA")
    without = gate.run("-rA", "-p", "no:rollout_parity")
    with_plugin.assert_outcomes(passed=1, failed=1, xfailed=1, skipped=1)
    without.assert_outcomes(passed=1, failed=1, xfailed=1, skipped=1)
    assert with_plugin.ret == without.ret == 1
    assert "rollout parity" not in with_plugin.stdout.str()
    assert "jsonl" not in with_plugin.stdout.str()

    def summary(result: pytest.RunResult) -> list[str]:
        return [line for line in result.outlines if line.split(" ")[0] in ("PASSED", "FAILED", "XFAIL", "SKIPPED")]

    assert summary(with_plugin) == summary(without)
    collected = gate.run("--collect-only", "-q")
    assert [line for line in collected.outlines if "::" in line] == [
        "test_normal.py::test_ok",
        "test_normal.py::test_bad",
        "test_normal.py::test_known",
        "test_normal.py::test_skip",
    ]


def test_without_options_fixture_and_hook_registered_only(gate: Gate) -> None:
    """The options are shown in --help; an ini without parity_old/new changes nothing."""
    gate.write("pytest.ini", "[pytest]\nparity_tail = 3\nparity_strict = true\n")
    gate.pytester.makepyfile(test_normal="def test_ok():\n    pass\n")
    result = gate.run()
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert "rollout parity" not in result.stdout.str()
    helptext = gate.run("--help").stdout.str()
    for option in (
        "--parity-old",
        "--parity-new",
        "--parity-key",
        "--parity-tail",
        "--parity-logs-root",
        "--parity-json",
        "--parity-strict",
    ):
        assert option in helptext


def test_gate_beside_normal_tests(gate: Gate) -> None:
    """Test paths given on the command line are kept; the new file is collected beside them."""
    gate.pytester.makepyfile(test_normal="def test_ok():\n    pass\n")
    args = flip(gate)
    result = gate.run(*args, "test_normal.py", "-q", "--collect-only")
    assert [line for line in result.outlines if "::" in line] == [
        "test_normal.py::test_ok",
        "new/rollouts.jsonl::fix-git",
        "new/rollouts.jsonl::regex-log",
    ]
    assert os.path.exists(Path(gate.path, "new/rollouts.jsonl"))


def test_logs_root_that_is_not_a_directory(gate: Gate) -> None:
    """A mistyped --parity-logs-root is named at once instead of silently finding no logs."""
    args = flip(gate)
    assert_usage_error(gate.run(*args, "--parity-logs-root=no-such-dir"), "--parity-logs-root", "no-such-dir")

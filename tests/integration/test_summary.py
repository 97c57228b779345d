"""The `rollout parity` terminal section, the --parity-json file, and 'nothing compared'."""

from __future__ import annotations

import json

import pytest

from .conftest import SMALL_RUN_BUDGET, Gate, all_text, failure_record, harbor_row, legacy_row, output_lines, section

COUNT_KEYS = {
    "tasks",
    "identical",
    "flipped",
    "flipped_old_win",
    "flipped_new_win",
    "flipped_agent_error",
    "masked",
    "masked_old",
    "masked_new",
    "missing",
    "missing_old_only",
    "missing_new_only",
}
JOIN_KEYS = {
    "old_key",
    "new_key",
    "old_key_reason",
    "new_key_reason",
    "old_prefix_stripped",
    "new_prefix_stripped",
    "keyed_by_taskset",
}
SIDE_KEYS = {"reward", "rows", "masked", "agent_error", "failure_kind"}


def test_terminal_section(gate: Gate) -> None:
    args = gate.mixed()
    lines = section(gate.run(*args))
    text = "\n".join(lines)
    old_line = next(line for line in lines if line.startswith("old: "))
    new_line = next(line for line in lines if line.startswith("new: "))
    assert "old/rollouts.jsonl" in old_line and "6 tasks" in old_line and "6 rows" in old_line
    assert "task_name" in old_line and "terminal-bench/" in old_line  # key and stripped prefix
    assert "new/rollouts.jsonl" in new_line and "6 tasks" in new_line and "6 rows" in new_line
    assert "1 masked" in new_line and "_ng_task_id" in new_line
    table = {
        line.split()[0]: line.split()[1]
        for line in lines
        if line.split()
        and line.split()[0] in ("identical", "flipped", "flipped_agent_error", "masked", "missing", "tasks")
        and len(line.split()) > 1
        and line.split()[1].isdigit()
    }
    assert table == {
        "identical": "1",
        "flipped": "2",
        "flipped_agent_error": "1",
        "masked": "1",
        "missing": "2",
        "tasks": "7",
    }
    assert "new regressed 1, new improved 1" in text
    assert "old only 1, new only 1" in text
    assert "category" in text and "-------" in text  # a tabulate table with headers


def test_notes_in_section(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0, rollout=0), harbor_row("fix-git", 1.0, rollout=1)]
    )
    lines = section(gate.run(*args))
    assert any("several rows on a side" in line and "fix-git" in line for line in lines)


def test_long_lists_capped_with_pointer(gate: Gate) -> None:
    tasks = [f"task-{i:02d}" for i in range(25)]
    args = gate.pair([legacy_row(t, 1.0) for t in tasks], [harbor_row(t, 0.0, index=i) for i, t in enumerate(tasks)])
    result = gate.run(*args, "-q")
    lines = section(result)
    flipped = [line for line in lines if "task-" in line]
    assert flipped, lines
    assert all(len(line) < 400 for line in lines)
    assert "task-24" not in "\n".join(lines)
    assert "--parity-json" in "\n".join(lines)


def test_json_keys(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-json=summary.json")
    assert result.ret == 1
    data = json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))
    assert COUNT_KEYS <= set(data["counts"])
    assert all(type(data["counts"][k]) is int for k in COUNT_KEYS)
    assert data["counts"]["tasks"] == 7
    assert {k: data["counts"][k] for k in COUNT_KEYS} == {
        "tasks": 7,
        "identical": 1,
        "flipped": 2,
        "flipped_old_win": 1,
        "flipped_new_win": 1,
        "flipped_agent_error": 1,
        "masked": 1,
        "masked_old": 0,
        "masked_new": 1,
        "missing": 2,
        "missing_old_only": 1,
        "missing_new_only": 1,
    }
    assert JOIN_KEYS <= set(data["join"])
    assert data["join"]["old_key"] == "task_name" and data["join"]["new_key"] == "_ng_task_id"
    assert data["join"]["old_prefix_stripped"] in ("terminal-bench/", "terminal-bench")
    assert data["join"]["new_prefix_stripped"] is None
    assert data["join"]["keyed_by_taskset"] is False
    assert isinstance(data["notes"], list) and all(isinstance(n, str) for n in data["notes"])
    tasks = data["tasks"]
    assert [t["task"] for t in tasks] == sorted(t["task"] for t in tasks)
    by = {t["task"]: t for t in tasks}
    for t in tasks:
        assert {"task", "category", "winner", "old", "new"} <= set(t)
        for side in ("old", "new"):
            assert t[side] is None or SIDE_KEYS <= set(t[side])
    assert by["regex-log"]["category"] == "flipped" and by["regex-log"]["winner"] == "old"
    assert by["regex-log"]["new"]["reward"] == 0.0 and by["regex-log"]["new"]["rows"] == 1
    assert by["old-only"]["new"] is None and by["new-only"]["old"] is None
    assert by["build-cython-ext"]["new"]["masked"] == "mask_sample (failure_kind=provider_unavailable)"
    assert by["git-multibranch"]["new"]["agent_error"] == "terminus2_error_type=TimeoutError"


def test_json_raw_labels_and_taskset_keying(gate: Gate) -> None:
    rows = [harbor_row("fix git", 1.0), harbor_row("fix git", 1.0, index=1, taskset="weather:train")]
    args = gate.pair(rows, rows)
    gate.write("old/rollouts_failures.jsonl", [failure_record()])
    result = gate.run(*args, "--parity-json=s.json", *SMALL_RUN_BUDGET)
    assert result.ret == 0
    data = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))
    assert [t["task"] for t in data["tasks"]] == [
        "terminal-bench-2-1/fix git",
        "unknown (old) #1",
        "weather:train/fix git",
    ]
    assert data["join"]["keyed_by_taskset"] is True


@pytest.mark.parametrize("error", ["input", "usage"])
def test_existing_json_untouched_on_input_error(gate: Gate, error: str) -> None:
    gate.write("summary.json", '{"previous": "run"}\n')
    bad_new = '{"_ng_task_id": {"taskset": "t", "task_id": "a"}, "reward": 1}\n{oops\n'
    if error == "input":
        args = gate.pair([legacy_row("fix-git", 1.0)], bad_new)
    else:
        args = [*gate.mixed(), "--parity-tail=-2"]
    result = gate.run(*args, "--parity-json=summary.json")
    assert result.ret in (2, 3, 4)
    assert (gate.path / "summary.json").read_text() == '{"previous": "run"}\n'
    assert [p.name for p in gate.path.iterdir() if p.name.startswith(".summary")] == []


@pytest.mark.parametrize("target", ["missing-dir/summary.json", "missing-dir/deeper/summary.json"])
def test_unwritable_json_path_parent_not_created(gate: Gate, target: str) -> None:
    args = gate.mixed()
    result = gate.run(*args, f"--parity-json={target}")
    assert result.ret not in (0, 1)
    lines = output_lines(result)
    assert any(target in line or str(gate.path / target) in line for line in lines), lines
    assert not (gate.path / "missing-dir").exists()
    assert "Traceback" not in all_text(result)


def test_json_path_is_directory(gate: Gate) -> None:
    args = gate.mixed()
    (gate.path / "adir").mkdir()
    result = gate.run(*args, "--parity-json=adir")
    assert result.ret not in (0, 1)
    assert any("adir" in line for line in output_lines(result))
    assert list((gate.path / "adir").iterdir()) == []


def test_nothing_compared_no_shared_task(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0), legacy_row("regex-log", 0.0)], [harbor_row("swe-task-1", 1.0, taskset="swe-bench")]
    )
    result = gate.run(*args, "--parity-json=s.json", "-rx")
    # the items still run and report as usual; parity-coverage fails: nothing compared is no evidence
    result.assert_outcomes(xfailed=3, failed=1)
    assert result.ret == 1  # never 2, pytest's "interrupted"
    text = "\n".join(section(result))
    assert "no task was compared" in text
    assert "share no task" in text
    assert section(result)[0].startswith("parity: INCONCLUSIVE: nothing compared in 3 tasks")
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["missing"] == 3
    assert data["verdict"] == "inconclusive" and "nothing_compared" in [d["code"] for d in data["decided_by"]]


def test_nothing_compared_every_shared_task_masked(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0), legacy_row("regex-log", None), legacy_row("old-only", 1.0)],
        [
            harbor_row("fix-git", 0.0, mask_sample=True, failure_kind="verifier_error"),
            harbor_row("regex-log", 1.0, index=1),
        ],
    )
    result = gate.run(*args)
    result.assert_outcomes(xfailed=3, failed=1)
    assert result.ret == 1
    text = "\n".join(section(result))
    assert "no task was compared" in text
    assert "masked" in text


def test_nothing_compared_under_strict(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("regex-log", 1.0)])
    result = gate.run(*args, "--parity-strict")
    result.assert_outcomes(failed=3)  # both missing tasks, and parity-coverage
    assert result.ret == 1


def test_summary_under_k_says_selected(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "-k", "fix-git", "--parity-json=s.json")
    assert result.ret == 0
    lines = section(result)
    assert any("1 of 7" in line for line in lines)
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["tasks"] == 7  # the classification, not the selection


@pytest.mark.parametrize(
    ("target", "wording"),
    [
        ("README.md/x.md", "cannot write {path}/README.md/x.md: {path}/README.md is a file, not a directory"),
        ("README.md/sub/x.md", "cannot write {path}/README.md/sub/x.md: {path}/README.md is a file, not a directory"),
        (
            "missing-dir/deeper/x.md",
            "cannot write {path}/missing-dir/deeper/x.md: directory {path}/missing-dir does not exist",
        ),
        ("adir", "{path}/adir is a directory, not a file"),
    ],
)
@pytest.mark.parametrize("option", ["--parity-json", "--parity-markdown"])
def test_an_output_path_says_what_is_wrong_before_anything_is_read(
    gate: Gate, option: str, target: str, wording: str
) -> None:
    gate.write("README.md", "# mine\n")
    (gate.path / "adir").mkdir()
    args = gate.mixed()
    gate.write("new/rollouts.jsonl", "{oops\n")  # never read: the output is checked first
    result = gate.run(*args, f"{option}={target}")
    assert result.ret == 4
    lines = output_lines(result)
    assert lines == [f"ERROR: {option}: {wording.format(path=gate.path)}"], lines
    assert (gate.path / "README.md").read_text() == "# mine\n"
    assert [p.name for p in gate.path.rglob(".*.probe")] == []


def test_an_existing_report_is_replaced_whole_and_its_probe_leaves_nothing(gate: Gate) -> None:
    gate.write("s.json", '{"previous": "run"}\n')
    args = gate.mixed()
    result = gate.run(*args, "--parity-json=s.json", "-q")
    assert result.ret == 1
    assert json.loads((gate.path / "s.json").read_text())["counts"]["tasks"] == 7
    assert sorted(p.name for p in gate.path.iterdir() if p.name.startswith(".s.json")) == []


def test_a_report_failing_at_the_end_is_an_error_on_a_line_of_its_own(
    gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_rollout_parity import core

    def disk_full(path: object, text: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(core, "write_output", disk_full)
    args = gate.mixed()
    result = gate.run(*args, "--parity-json=s.json", "-q")
    assert result.ret == 4
    message = f"ERROR: --parity-json: cannot write {gate.path / 's.json'}: No space left on device"
    assert message in result.outlines, result.outlines

"""Every folder in conftest_examples/ runs against the bundled pair, so none of them can rot."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OLD = "--parity-old=../../examples/old/rollouts.jsonl"
NEW = "--parity-new=../../examples/new/rollouts.jsonl"


@pytest.fixture
def workspace(pytester: pytest.Pytester) -> Path:
    """A copy of the bundled pair and of the examples, laid out as in the repository."""
    shutil.copytree(REPO / "examples", pytester.path / "examples", ignore=shutil.ignore_patterns("*.py"))
    shutil.copytree(REPO / "conftest_examples", pytester.path / "conftest_examples")
    return pytester.path


def test_known_flips_hook_passes_the_reviewed_flips(
    pytester: pytest.Pytester, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace / "conftest_examples" / "known_flips")
    result = pytester.runpytest(OLD, NEW, "-rA", "--parity-json=summary.json")
    # the third flip fails, and parity-coverage: the bundled pair lost half its old tasks
    result.assert_outcomes(passed=5, failed=2, xfailed=7)
    result.stdout.fnmatch_lines(
        ["PASSED *::gpt2-codegolf", "PASSED *::nginx-request-logging", "FAILED *::crack-7z-hash*"]
    )
    result.stdout.fnmatch_lines(
        ["pytest_parity_verdict hooks changed 2 verdict(s):", "    gpt2-codegolf (flipped): passed: *"]
    )
    summary = json.loads(Path("summary.json").read_text())
    categories = {t["task"]: t["category"] for t in summary["tasks"]}
    assert categories["gpt2-codegolf"] == "flipped"  # the data's category stays
    assert summary["counts"]["flipped"] == 3
    assert summary["run"]["verdicts_changed_by_hook"] == 2


def test_rollout_pair_checks_run_per_task(pytester: pytest.Pytester, workspace: Path) -> None:
    result = pytester.runpytest(
        "conftest_examples/rollout_pair_checks",
        "--parity-old=examples/old/rollouts.jsonl",
        "--parity-new=examples/new/rollouts.jsonl",
        "-rfs",
    )
    # 13 parity items (3 flips) and parity-coverage + 13 log checks (1 skipped: old only)
    # + 13 token checks (2 skipped: missing)
    result.assert_outcomes(passed=3 + 12 + 10, failed=3 + 1 + 1, xfailed=7, skipped=1 + 2)
    result.stdout.fnmatch_lines(
        [
            "*openssl-selfsigned-cert: 57690 tokens per row on the new side vs 22680 on the old*",
            "FAILED *test_tokens_per_task_do_not_grow[[]openssl-selfsigned-cert[]]*",
        ]
    )
    assert "test_new_side_keeps_its_verifier_log" not in "\n".join(
        line for line in result.outlines if line.startswith("FAILED")
    )


def test_rollout_pair_log_check_catches_a_lost_log(pytester: pytest.Pytester, workspace: Path) -> None:
    logs = sorted((workspace / "examples" / "new" / "verifier").iterdir())
    shutil.rmtree(logs[0])
    result = pytester.runpytest(
        "conftest_examples/rollout_pair_checks/test_rollout_pair_checks.py::test_new_side_keeps_its_verifier_log",
        "--parity-old=examples/old/rollouts.jsonl",
        "--parity-new=examples/new/rollouts.jsonl",
        "-p",
        "no:cacheprovider",
    )
    result.stdout.fnmatch_lines([f"*{logs[0].name}/test-stdout.txt is missing*"])


def test_ci_ini_sets_everything(pytester: pytest.Pytester, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace / "conftest_examples" / "ci_ini")
    result = pytester.runpytest()
    result.assert_outcomes(passed=3, failed=3 + 1, xfailed=7)  # the flips and parity-coverage
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*new verifier output (last 25 lines of *test-stdout.txt):"])
    summary = json.loads(Path("reports/parity-summary.json").read_text())
    assert summary["counts"]["tasks"] == 13


def test_ci_ini_command_line_wins(pytester: pytest.Pytester, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workspace / "conftest_examples" / "ci_ini")
    result = pytester.runpytest("--parity-strict", "--parity-tail=2")
    result.assert_outcomes(passed=3, failed=3 + 7 + 1)
    result.stdout.fnmatch_lines(["*new verifier output (last 2 lines of *test-stdout.txt):"])


@pytest.mark.slow
def test_own_repo_runs_the_gate_alone_when_the_new_file_is_the_test_path(tmp_path: Path) -> None:
    """In a repository with `testpaths`, naming the new file runs the gate's items and none of its tests."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "conftest_examples" / "own_repo", repo)
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    sides = ["--parity-old=../examples/old/rollouts.jsonl", "--parity-new=../examples/new/rollouts.jsonl"]
    run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--co"]
    alone = subprocess.run(
        [*run, "../examples/new/rollouts.jsonl", *sides],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    ids = [line for line in alone.stdout.splitlines() if "::" in line]
    assert alone.returncode == 0 and ids and all("examples/new/rollouts.jsonl::" in line for line in ids)
    assert "test_own" not in alone.stdout
    beside = subprocess.run([*run, *sides], cwd=repo, capture_output=True, text=True, timeout=300, check=False)
    assert "tests/test_own.py::test_own_code" in beside.stdout  # plain pytest: testpaths runs the suite too

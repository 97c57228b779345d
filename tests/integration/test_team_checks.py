"""A team's own checks (tests that request `rollout_pair`) decide the verdict with the gate's items.

A check that fails in setup, call or teardown makes the verdict `fail`, named in every report and in
the merge of a split run; a skip or an xfail does not; the team's unrelated tests fail pytest as
usual and leave the parity verdict alone.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_rollout_parity.__main__ import main as merge_main

from .conftest import Gate, harbor_row, junit_properties, legacy_row, section

TASKS = ("build-cython-ext", "cancel-async-tasks", "fix-git", "regex-log")

#: the team's check: a task's new rollouts may use at most 20% more tokens than its old ones (here: one task fails)
CHECKS = """
import pytest

def test_tokens(rollout_pair):
    assert rollout_pair.task != "fix-git", "fix-git: new rollouts use 35% more tokens"
"""


def agreeing(gate: Gate) -> list[str]:
    """A pair whose rewards agree on every task (four identical tasks)."""
    old = [legacy_row(task, 1.0) for task in TASKS]
    new = [harbor_row(task, 1.0, index=index) for index, task in enumerate(TASKS)]
    return [*gate.pair(old, new), "-p", "no:cacheprovider"]


def _json(gate: Gate, name: str) -> dict[str, Any]:
    return json.loads((gate.path / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_a_failing_check_fails_the_verdict_and_is_named_everywhere(gate: Gate) -> None:
    args = agreeing(gate)
    gate.pytester.makepyfile(test_checks=CHECKS)
    result = gate.run(
        "test_checks.py",
        *args,
        "--parity-json=s.json",
        "--parity-markdown=s.md",
        "--parity-html=s.html",
        "--junitxml=junit.xml",
    )
    assert result.ret == 1
    failed = "test_checks.py::test_tokens[fix-git]"
    lines = section(result)
    assert lines[0] == f"parity: FAIL: no flip in 4 compared tasks; 1 of your checks failed: {failed}"
    assert f"your checks failed (1): {failed}" in lines
    data = _json(gate, "s.json")
    assert data["verdict"] == "fail"
    assert [d["code"] for d in data["decided_by"]] == ["checks_failed"]
    checks = {check["nodeid"]: check for check in data["run"]["checks"]}
    assert len(checks) == 4 and checks[failed] == {"nodeid": failed, "task": "fix-git", "outcome": "failed"}
    assert {check["outcome"] for name, check in checks.items() if name != failed} == {"passed"}
    markdown = (gate.path / "s.md").read_text(encoding="utf-8")
    assert markdown.startswith("## rollout parity\n\n**rollout parity: FAIL**: no flip in 4 compared tasks; 1 of your ")
    assert "### your checks failed (1)" in markdown and "test\\_tokens\\[fix-git\\]" in markdown
    assert f"1 of your checks failed: {failed}" in (gate.path / "s.html").read_text(encoding="utf-8")
    from xml.etree import ElementTree

    suite = ElementTree.parse(gate.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert junit_properties(suite)["parity_checks_failed"] == failed


@pytest.mark.parametrize("when", ["setup", "teardown"])
def test_a_check_failing_in_setup_or_teardown_fails_the_verdict(gate: Gate, when: str) -> None:
    args = agreeing(gate)
    failing = "raise RuntimeError('no token counts')" if when == "setup" else "yield\n        raise RuntimeError('x')"
    gate.pytester.makepyfile(
        test_checks=f"""
import pytest

@pytest.fixture
def tokens(rollout_pair):
    if rollout_pair.task == "regex-log":
        {failing}
    else:
        yield

def test_tokens(tokens):
    pass
"""
    )
    result = gate.run("test_checks.py", *args, "--parity-json=s.json")
    assert result.ret == 1
    assert section(result)[0].endswith("1 of your checks failed: test_checks.py::test_tokens[regex-log]")
    assert _json(gate, "s.json")["verdict"] == "fail"


def test_skipped_and_xfailed_checks_do_not_decide(gate: Gate) -> None:
    args = agreeing(gate)
    gate.pytester.makepyfile(
        test_checks="""
import pytest

def test_skips(rollout_pair):
    pytest.skip("no token counts in these rows")

@pytest.mark.xfail(reason="known: fix-git's prompt grew")
def test_tokens(rollout_pair):
    assert rollout_pair.task != "fix-git"
"""
    )
    result = gate.run("test_checks.py", *args, "--parity-json=s.json")
    assert result.ret == 0
    assert section(result)[0] == "parity: PASS: no difference in 4 compared tasks"
    outcomes = sorted(check["outcome"] for check in _json(gate, "s.json")["run"]["checks"])
    assert outcomes == ["skipped"] * 4 + ["xfailed"] + ["xpassed"] * 3


def test_an_unrelated_failing_test_fails_pytest_but_not_the_verdict(gate: Gate) -> None:
    args = agreeing(gate)
    gate.pytester.makepyfile(test_other="def test_other():\n    assert False\n")
    result = gate.run("test_other.py", *args, "--parity-json=s.json")
    assert result.ret == 1
    assert section(result)[0] == "parity: PASS: no difference in 4 compared tasks"
    data = _json(gate, "s.json")
    assert data["verdict"] == "pass" and data["run"]["checks"] == []


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    capsys.readouterr()
    try:
        status = merge_main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    return status, capsys.readouterr().out.splitlines()


def test_a_split_run_merges_a_failing_check_into_fail(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pytest_split")
    args = agreeing(gate)
    gate.pytester.makepyfile(test_checks=CHECKS)
    whole = gate.run("test_checks.py", *args, "--parity-json=whole.json")
    statuses = {}
    for group in (1, 2, 3):
        part = gate.run("test_checks.py", *args, "--splits=3", f"--group={group}", f"--parity-json=part{group}.json")
        statuses[group] = part.ret
        first = section(part)[0]
        assert first.startswith("partial: ") and "; the whole file: " in first, first
    parts = [str(gate.path / f"part{group}.json") for group in (1, 2, 3)]
    status, out = _merge(capsys, "merge", *parts, f"--json={gate.path / 'merged.json'}")
    assert status == whole.ret == 1 and sorted(statuses.values()) == [0, 0, 1]
    assert (
        out[0].startswith("parity: FAIL: ")
        and "1 of your checks failed: test_checks.py::test_tokens[fix-git]" in out[0]
    )
    merged = _json(gate, "merged.json")
    assert {key: value for key, value in merged.items() if key != "merge"} == _json(gate, "whole.json")
    # a check that no part ran is a gap, like a task
    outcomes = {
        group: [check["outcome"] for check in _json(gate, f"part{group}.json")["run"]["checks"]] for group in (1, 2, 3)
    }
    failing = next(group for group, found in outcomes.items() if "failed" in found)
    status, out = _merge(capsys, "merge", *[parts[group - 1] for group in (1, 2, 3) if group != failing])
    assert status == 1 and not out[0].startswith("parity: PASS")
    assert any(line.startswith("ran in no part (") and "test_tokens[fix-git]" in line for line in out)


@pytest.mark.slow
def test_under_xdist_the_controller_sees_the_workers_checks(gate: Gate) -> None:
    pytest.importorskip("xdist")
    args = agreeing(gate)
    gate.pytester.makepyfile(test_checks=CHECKS)
    result = gate.run("test_checks.py", *args, "--parity-json=s.json", "-n", "2")
    assert result.ret == 1
    assert section(result)[0].endswith("1 of your checks failed: test_checks.py::test_tokens[fix-git]")
    outcomes = sorted(check["outcome"] for check in _json(gate, "s.json")["run"]["checks"])
    assert outcomes == ["failed", "passed", "passed", "passed"]

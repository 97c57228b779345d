"""`pytest_parity_verdict` in a conftest.py: verdicts change outcomes, never categories."""

from __future__ import annotations

import json

import pytest

from .conftest import Gate, junit_cases, junit_properties, section
from .test_selection import ran

NEW = "new/rollouts.jsonl"

CONFTEST = """
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    if comparison.task == "regex-log":
        return Verdict.passed("reviewed in #123: flaky upstream test")
    if comparison.task == "cancel-async-tasks":
        return Verdict.xfail("known: new side wins, tracked in #7")
    if comparison.task == "fix-git":
        return Verdict.failed("fix-git: blocked by policy")
    if comparison.task == "build-cython-ext":
        return Verdict.xfail("masked anyway")  # same outcome as the default: not a change
    return None
"""


def test_verdicts_change_outcomes(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makeconftest(CONFTEST)
    result = gate.run(*args, "-rA", "-vv", "--parity-json=s.json")
    assert ran(result) == {
        f"{NEW}::regex-log": "PASSED",
        f"{NEW}::cancel-async-tasks": "XFAIL",
        f"{NEW}::fix-git": "FAILED",
        f"{NEW}::build-cython-ext": "XFAIL",
        f"{NEW}::git-multibranch": "XFAIL",
        f"{NEW}::new-only": "XFAIL",
        f"{NEW}::old-only": "XFAIL",
    }
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"FAILED {NEW}::fix-git - blocked by policy"])
    # pytest 8.0 writes "- reason: <reason>", later releases "- <reason>"
    result.stdout.fnmatch_lines([f"XFAIL {NEW}::cancel-async-tasks - *known: new side wins, tracked in #7"])
    assert "Traceback" not in result.stdout.str()
    # three verdicts differ from the default outcome
    summary = json.loads((gate.path / "s.json").read_text())
    categories = {t["task"]: t["category"] for t in summary["tasks"]}
    assert categories == {
        "build-cython-ext": "masked",
        "cancel-async-tasks": "flipped",
        "fix-git": "identical",
        "git-multibranch": "flipped_agent_error",
        "new-only": "missing",
        "old-only": "missing",
        "regex-log": "flipped",
    }
    assert summary["counts"]["flipped"] == 2 and summary["counts"]["identical"] == 1
    assert any("3" in line and "verdict" in line for line in result.outlines if "hook" in line)
    result.stdout.fnmatch_lines(["*pytest_parity_verdict*changed 3 verdict*"])


def test_hook_can_pass_every_flip(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makeconftest("""
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    if comparison.category == "flipped":
        return Verdict.passed("accepted")
""")
    result = gate.run(*args)
    result.assert_outcomes(passed=3, xfailed=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["flipped: cancel-async-tasks, regex-log", "*changed 2 verdict*"])


def test_hook_returning_none_keeps_default(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makeconftest("""
seen = []

def pytest_parity_verdict(comparison, config):
    seen.append(comparison.task)
    assert config.getoption("parity_new")
    return None
""")
    result = gate.run(*args)
    result.assert_outcomes(passed=1, failed=2, xfailed=4)
    assert result.ret == 1
    assert "verdict" not in "\n".join(line for line in result.outlines if "hook" in line)


def test_hook_sees_strict_defaults(gate: Gate) -> None:
    """Under --parity-strict a hook's xfail counts as a change from the strict default (failed)."""
    args = gate.mixed()
    gate.pytester.makeconftest("""
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    if comparison.category == "missing":
        return Verdict.xfail("missing is fine here")
""")
    result = gate.run(*args, "--parity-strict")
    result.assert_outcomes(passed=1, failed=4, xfailed=2)
    result.stdout.fnmatch_lines(["*changed 2 verdict*"])


@pytest.mark.slow
def test_hook_under_xdist(gate: Gate) -> None:
    pytest.importorskip("xdist")
    args = gate.mixed()
    gate.pytester.makeconftest(CONFTEST)
    result = gate.run(*args, gate.beside(), "-n", "2", "-rA", "-vv")
    assert ran(result)[f"{NEW}::regex-log"] == "PASSED"
    assert ran(result)[f"{NEW}::fix-git"] == "FAILED"
    result.stdout.fnmatch_lines(["*pytest_parity_verdict*changed 3 verdict*"])


AUDIT = [
    "pytest_parity_verdict hooks changed 3 verdict(s):",
    "    cancel-async-tasks (flipped): xfail: known: new side wins, tracked in #7",
    "    fix-git (identical): failed: fix-git: blocked by policy",
    "    regex-log (flipped): passed: reviewed in #123: flaky upstream test",
]


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)], ids=["serial", "xdist"])
def test_every_changed_verdict_is_auditable(gate: Gate, workers: list[str]) -> None:
    """Terminal list, JSON per task, JUnit property and the -rA passes section name each change."""
    if workers:
        pytest.importorskip("xdist")
    args = gate.mixed()
    gate.pytester.makeconftest(CONFTEST)
    beside = [gate.beside()] if workers else []
    result = gate.run(
        *args, *workers, *beside, "-rA", "--parity-json=s.json", "--junitxml=j.xml", "--parity-markdown=s.md"
    )
    lines = section(result)
    start = lines.index(AUDIT[0])
    assert lines[start : start + len(AUDIT)] == AUDIT
    page = (gate.path / "s.md").read_text(encoding="utf-8").splitlines()
    start = page.index("### pytest_parity_verdict hooks changed 3 verdict(s)")
    assert page[start + 2 : start + 5] == [
        "- <code>cancel-async-tasks</code> (flipped): xfail: known: new side wins, tracked in \\#7",
        "- <code>fix-git</code> (identical): failed: fix-git: blocked by policy",
        "- <code>regex-log</code> (flipped): passed: reviewed in \\#123: flaky upstream test",
    ]
    summary = json.loads((gate.path / "s.json").read_text())
    accepted = sum(1 for t in summary["tasks"] if t["outcome"] == "accepted")
    assert accepted == 2  # regex-log passed and cancel-async-tasks xfailed by a hook; fix-git made to fail is not
    assert summary["accepted_flips"] == [{"source": "hook", "count": 2, "path": None, "sha256": None}]
    assert any(
        line.endswith("; 2 verdicts accepted by pytest_parity_verdict hooks")
        for line in lines
        if line.startswith("parity: ")
    )
    tasks = {t["task"]: t["hook_verdict"] for t in summary["tasks"]}
    assert tasks == {
        "regex-log": {"outcome": "passed", "reason": "reviewed in #123: flaky upstream test", "source": "hook"},
        "cancel-async-tasks": {"outcome": "xfail", "reason": "known: new side wins, tracked in #7", "source": "hook"},
        "fix-git": {"outcome": "failed", "reason": "fix-git: blocked by policy", "source": "hook"},
        "build-cython-ext": None,
        "git-multibranch": None,
        "new-only": None,
        "old-only": None,
    }
    properties = junit_properties(junit_cases(gate.path / "j.xml")["regex-log"])
    assert properties["parity_verdict_changed"] == "passed: reviewed in #123: flaky upstream test"
    # the passed item says why it passed, under the PASSES heading of -rA
    assert (
        "regex-log (flipped) passed by a pytest_parity_verdict hook: reviewed in #123: flaky upstream test"
        in result.outlines
    )


def test_hook_verdict_list_is_capped(gate: Gate) -> None:
    from .conftest import harbor_row, legacy_row

    names = [f"t{i:02d}" for i in range(12)]
    args = gate.pair([legacy_row(n, 1.0) for n in names], [harbor_row(n, 0.0, index=i) for i, n in enumerate(names)])
    gate.pytester.makeconftest(
        "from pytest_rollout_parity import Verdict\n"
        "def pytest_parity_verdict(comparison, config):\n"
        "    return Verdict.passed()\n"
    )
    lines = section(gate.run(*args))
    start = lines.index("pytest_parity_verdict hooks changed 12 verdict(s):")
    assert lines[start + 1] == "    t00 (flipped): passed: (no reason given)"
    assert lines[start + 11] == "    ... and 2 more (see --parity-json)"


def test_hookspec_registered(gate: Gate) -> None:
    """A conftest implementing the hook without the gate options is accepted (no unknown-hook error)."""
    gate.pytester.makeconftest("def pytest_parity_verdict(comparison, config):\n    return None\n")
    gate.pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = gate.run()
    result.assert_outcomes(passed=1)


def test_hook_returning_something_else_fails_that_item_clearly(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makeconftest("def pytest_parity_verdict(comparison, config):\n    return 'pass it'\n")
    result = gate.run(*args, "-k", "fix-git")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*fix-git: pytest_parity_verdict returned 'pass it'; return None or a pytest_rollout_parity.Verdict*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_no_state_of_pytest_or_the_interpreter_is_edited(gate: Gate) -> None:
    """No gc.freeze around the user's own tests; the terminal reporter keeps every report of the gate's items."""
    args = gate.mixed()
    gate.write("test_user.py", "import gc\n\ndef test_gc_as_configured():\n    assert gc.get_freeze_count() == 0\n")
    gate.write(
        "conftest.py",
        (
            "def pytest_terminal_summary(terminalreporter):\n"
            "    quiet = [r for r in terminalreporter.stats.get('', []) if r.nodeid.startswith('new/')]\n"
            "    terminalreporter.write_line(f'quiet gate reports: {len(quiet)}')\n"
        ),
    )
    result = gate.run(*args, "test_user.py")
    assert result.ret == 1
    result.assert_outcomes(passed=2, failed=2, xfailed=4)
    # a passed setup and a passed teardown report for each of the 7 gate items, as for any test
    assert "quiet gate reports: 14" in result.outlines


@pytest.mark.parametrize("style", ["auto", "long", "short", "line", "native"])
def test_an_error_in_a_hook_keeps_its_traceback(gate: Gate, style: str) -> None:
    """A hook's own exception is an error in code, not a finding: pytest reports it as any test's."""
    args = gate.mixed()
    gate.pytester.makeconftest(
        "def pytest_parity_verdict(comparison, config):\n"
        "    table = {}\n"
        "    if comparison.task == 'fix-git':\n"
        "        return table['no-such-key']\n"
        "    return None\n"
    )
    result = gate.run(*args, f"--tb={style}")
    assert result.ret == 1
    text = result.stdout.str()
    assert "KeyError" in text and "no-such-key" in text
    if style != "line":  # --tb=line shows one line a failure, for any test: where it was raised
        assert "return table['no-such-key']" in text
    else:
        result.stdout.fnmatch_lines(["*conftest.py:4: KeyError*"])
    # the gate's own findings in the same run keep their message-only form
    assert f"{NEW}::fix-git" in text


def test_a_users_xfail_strict_changes_no_gate_outcome(gate: Gate) -> None:
    args = gate.mixed()
    plain = ran(gate.run(*args, "-rA", "-vv"))
    gate.pytester.makeini("[pytest]\nxfail_strict = true\n")
    strict = gate.run(*args, "-rA", "-vv")
    assert ran(strict) == plain
    assert "XFAIL" in plain.values()

"""`--parity-known-flips`: reviewed flips pass from a file under review, audited like a hook's verdicts."""

from __future__ import annotations

import hashlib
import json

import pytest

from .conftest import Gate, junit_cases, junit_properties, markdown_as_read, output_lines
from .test_selection import ran

NEW = "new/rollouts.jsonl"

KNOWN = """\
# Flips reviewed by a person: task  # why it is accepted
regex-log      # the Harbor image ships the newer grep; reviewed in MIGRATION-42

fix-git        # was flaky, fixed since
no-such-task   # removed from the taskset
"""


def test_listed_flip_passes_with_its_reason_everywhere(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("known_flips.txt", KNOWN)
    result = gate.run(
        *args,
        "--parity-known-flips=known_flips.txt",
        "-rA",
        "-vv",
        "--parity-json=s.json",
        "--parity-markdown=s.md",
        "--junitxml=j.xml",
    )
    outcomes = ran(result)
    assert outcomes[f"{NEW}::regex-log"] == "PASSED"
    assert outcomes[f"{NEW}::cancel-async-tasks"] == "FAILED"  # a flip not listed still fails
    assert outcomes[f"{NEW}::fix-git"] == "PASSED"  # listed but identical: its default outcome
    assert result.ret == 1
    reason = "known flip (known_flips.txt:2): the Harbor image ships the newer grep; reviewed in MIGRATION-42"
    result.stdout.fnmatch_lines(
        [
            "pytest_parity_verdict hooks and the known-flips list changed 1 verdict(s):",
            f"    regex-log (flipped): passed: {reason}",
        ]
    )
    result.stdout.fnmatch_lines([f"*regex-log (flipped) passed by --parity-known-flips: {reason}"])
    summary = json.loads((gate.path / "s.json").read_text())
    tasks = {t["task"]: t for t in summary["tasks"]}
    assert tasks["regex-log"]["category"] == "flipped"  # the category stays what the data says
    assert tasks["regex-log"]["hook_verdict"] == {"outcome": "passed", "reason": reason, "source": "known_flips"}
    assert tasks["cancel-async-tasks"]["hook_verdict"] is None
    assert summary["run"]["known_flips"] == "known_flips.txt"
    assert summary["run"]["verdicts_changed_by_hook"] == 1
    case = junit_cases(gate.path / "j.xml")["regex-log"]
    assert junit_properties(case)["parity_verdict_changed"] == f"passed: {reason}"
    markdown = (gate.path / "s.md").read_text()
    assert "### pytest_parity_verdict hooks and the known-flips list changed 1 verdict(s)" in markdown
    assert "MIGRATION-42" in markdown


def test_stale_entries_are_notes(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("known_flips.txt", KNOWN)
    result = gate.run(*args, "--parity-known-flips=known_flips.txt", "--parity-json=s.json")
    notes = json.loads((gate.path / "s.json").read_text())["notes"]
    assert (
        "1 task(s) listed in known_flips.txt no longer flip (the list is stale): fix-git (identical, line 4)" in notes
    )
    assert "1 line(s) of known_flips.txt name no task of this run: no-such-task (line 5)" in notes
    text = result.stdout.str()
    assert "no longer flip (the list is stale): fix-git" in text and "name no task of this run: no-such-task" in text


def test_a_narrowed_run_still_notes_the_whole_list(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("known_flips.txt", KNOWN)
    result = gate.run(*args, "--parity-known-flips=known_flips.txt", "-k", "regex", "--parity-json=s.json")
    result.assert_outcomes(passed=1, deselected=6)
    assert result.ret == 0
    notes = json.loads((gate.path / "s.json").read_text())["notes"]
    assert any("no longer flip" in note for note in notes)


def test_ini_key_resolves_against_the_ini_file(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("review/known_flips.txt", "regex-log  # reviewed\ncancel-async-tasks  # reviewed too\n")
    gate.pytester.makeini("[pytest]\nparity_known_flips = review/known_flips.txt\n")
    sub = gate.path / "sub"
    sub.mkdir()
    result = gate.run(*args)
    result.assert_outcomes(passed=3, xfailed=4)
    assert result.ret == 0


def test_hook_verdict_wins_over_the_list(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("known_flips.txt", "regex-log  # reviewed\n")
    gate.pytester.makeconftest("""
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    if comparison.task == "regex-log":
        return Verdict.xfail("the hook decides")
""")
    result = gate.run(*args, "--parity-known-flips=known_flips.txt", "-rA", "-vv")
    assert ran(result)[f"{NEW}::regex-log"] == "XFAIL"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("regex-log\n", "known_flips.txt:1: a known flip needs a reason after the task label"),
        ("# header\n\nregex-log   #   \n", "known_flips.txt:3: a known flip needs a reason"),
        (
            "regex-log  # a\nfix-git # b\nregex-log  # again\n",
            "known_flips.txt:3: task 'regex-log' is listed twice (first on line 1)",
        ),
        (b"regex-log  # caf\xe9\n", "known_flips.txt:1: not UTF-8 text"),
    ],
)
def test_malformed_file_is_a_usage_error_naming_the_line(gate: Gate, content: str | bytes, needle: str) -> None:
    args = gate.mixed()
    gate.write("known_flips.txt", content)
    result = gate.run(*args, "--parity-known-flips=known_flips.txt")
    assert result.ret == 4
    lines = output_lines(result)
    assert len(lines) == 1 and needle in lines[0], lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        ("missing", "known_flips.txt: no such file"),
        ("directory", "known_flips.txt: is a directory"),
        pytest.param("fifo", "known_flips.txt: not a regular file", marks=pytest.mark.slow),
    ],
)
def test_unusable_file_is_a_usage_error(gate: Gate, make: str, needle: str) -> None:
    import os

    args = gate.mixed()
    target = gate.path / "known_flips.txt"
    if make == "directory":
        target.mkdir()
    elif make == "fifo":
        os.mkfifo(target)
    # a FIFO is run in a subprocess, so that a regression hangs that process and not this one
    run = gate.run_subprocess if make == "fifo" else gate.run
    result = run(*args, "--parity-known-flips=known_flips.txt")
    assert result.ret == 4
    assert any(needle in line for line in result.errlines + result.outlines), result.errlines + result.outlines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.slow
def test_under_xdist_workers_read_the_list_too(gate: Gate) -> None:
    pytest.importorskip("xdist")
    args = gate.mixed()
    beside = gate.beside()
    gate.write("known_flips.txt", "regex-log  # reviewed\ncancel-async-tasks  # reviewed too\n")
    result = gate.run(*args, beside, "-n", "2", "--parity-known-flips=known_flips.txt", "--parity-json=s.json")
    result.assert_outcomes(passed=4, xfailed=4)
    assert result.ret == 0
    summary = json.loads((gate.path / "s.json").read_text())
    assert summary["run"]["verdicts_changed_by_hook"] == 2


HOOK_LIKE_A_LIST = """
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    if comparison.task == "regex-log":
        return Verdict.passed("known flip (my own words): reviewed")
"""


def test_a_hook_is_named_as_the_hook_whatever_its_reason_says(gate: Gate) -> None:
    """Who changed a verdict is carried by the verdict, not read from its reason's wording."""
    args = gate.mixed()
    gate.pytester.makeconftest(HOOK_LIKE_A_LIST)
    result = gate.run(*args, "-rA")
    assert ran(result)[f"{NEW}::regex-log"] == "PASSED"
    result.stdout.fnmatch_lines(
        ["*regex-log (flipped) passed by a pytest_parity_verdict hook: known flip (my own words): reviewed"]
    )


@pytest.mark.parametrize("given", ["option", "ini"])
def test_a_list_that_decided_is_named_with_its_digest_in_every_verdict(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """A pull request can edit the list its own ini file names: every verdict line says that a list
    accepted flips, and which list (its path and SHA-256), so a reviewer sees what decided."""
    args = gate.mixed()
    listed = gate.write("known_flips.txt", KNOWN)
    digest = hashlib.sha256(listed.read_bytes()).hexdigest()
    step = gate.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    if given == "ini":
        gate.pytester.makeini("[pytest]\nparity_known_flips = known_flips.txt\n")
        shown = str(gate.path / "known_flips.txt")
    else:
        args = [*args, "--parity-known-flips=known_flips.txt"]
        shown = "known_flips.txt"
    result = gate.run(*args, "--parity-json=s.json", "--parity-markdown=s.md")
    words = f"1 flip accepted by {shown} (sha256 {digest[:12]}…)"
    verdicts = [line for line in result.outlines if line.startswith("parity: ")]
    assert verdicts and all(line.endswith(f"; {words}") for line in verdicts), verdicts
    summary = json.loads((gate.path / "s.json").read_text())
    assert summary["accepted_flips"] == [{"source": "known_flips", "count": 1, "path": shown, "sha256": digest}]
    for path in (gate.path / "s.md", step):
        raw = next(line for line in path.read_text().splitlines() if line.startswith("**rollout parity:"))
        line = next(line for line in markdown_as_read(path).splitlines() if line.startswith("**rollout parity:"))
        assert f"; {words}" in line.replace("<code>", "").replace("</code>", ""), line
        assert "<code>known\\_flips.txt</code>" in raw or given == "ini"  # the path escaped as a label is


def test_a_run_no_list_decided_names_none(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "--parity-json=s.json")
    assert not any("accepted by" in line for line in result.outlines)
    assert json.loads((gate.path / "s.json").read_text())["accepted_flips"] == []

"""A flip read on an 80-column terminal: direction and rewards first, each --tb style as pytest's own.

pytest cuts the short summary line at the terminal's width (not on CI), so the crash line leads
with the direction and the rewards and never repeats the task the node id already names.
"""

from __future__ import annotations

import re

import pytest

from .conftest import NEW, Gate, junit_cases, summary_lines

REGRESSED = "new regressed: old=1.0 new=0.0"
IMPROVED = "new improved: old=0.0 new=1.0"


@pytest.fixture(autouse=True)
def narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    """An 80-column terminal, not a CI log (pytest does not cut lines on CI)."""
    monkeypatch.setenv("COLUMNS", "80")
    for name in ("CI", "BUILD_NUMBER"):
        monkeypatch.delenv(name, raising=False)


def test_short_summary_fits_80_columns(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "-rf")
    failed = [line for line in result.outlines if line.startswith("FAILED ")]
    assert failed == [f"FAILED {NEW}::cancel-async-tasks - {IMPROVED}", f"FAILED {NEW}::regex-log - {REGRESSED}"]
    assert all(len(line) <= 80 for line in failed)


@pytest.mark.parametrize("flags", [["-rA"], ["-v", "-rf"], ["-q", "-rf"], ["--tb=no", "-rf"]])
def test_each_reporting_flag(gate: Gate, flags: list[str]) -> None:
    """-rA, -v, -q and --tb=no keep pytest's lines; the flips' summary lines carry the crash line."""
    result = gate.run(*gate.mixed(), *flags)
    result.assert_outcomes(passed=1, failed=2, xfailed=4)
    assert f"FAILED {NEW}::regex-log - {REGRESSED}" in result.outlines
    body = "regex-log: " + REGRESSED
    assert (body in result.outlines) == ("--tb=no" not in flags)
    if "-v" in flags:
        assert any(re.match(rf"{re.escape(NEW)}::regex-log FAILED +\[", line) for line in result.outlines)
    if "-rA" in flags:
        assert f"PASSED {NEW}::fix-git" in result.outlines
        assert any(line.startswith(f"XFAIL {NEW}::old-only - only the old side") for line in summary_lines(result))


def test_tb_line_is_one_line_per_flip_at_the_row(gate: Gate) -> None:
    """`--tb=line`: `<file>:<row line>: <header>`, no message body, no path into the plugin."""
    result = gate.run(*gate.mixed(), "--tb=line")
    start = next(i for i, line in enumerate(result.outlines) if " FAILURES " in line)
    end = next(i for i, line in enumerate(result.outlines) if " rollout parity " in line)
    assert result.outlines[start + 1 : end] == [f"{NEW}:3: {IMPROVED}", f"{NEW}:2: {REGRESSED}"]
    assert "pytest_rollout_parity" not in result.stdout.str()


def test_tb_short_is_the_header_alone(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "--tb=short")
    start = next(i for i, line in enumerate(result.outlines) if " FAILURES " in line)
    end = next(i for i, line in enumerate(result.outlines) if " rollout parity " in line)
    assert [line for line in result.outlines[start + 1 : end] if not line.startswith("_")] == [
        f"cancel-async-tasks: {IMPROVED}",
        f"regex-log: {REGRESSED}",
    ]
    assert "pytest_rollout_parity" not in result.stdout.str()


def test_junit_message_is_the_crash_line(gate: Gate) -> None:
    gate.run(*gate.mixed(), "--junitxml=j.xml")
    failure = junit_cases(gate.path / "j.xml")["regex-log"].find("failure")
    assert failure is not None and failure.get("message") == REGRESSED


def test_new_file_outside_the_rootdir_still_shows_rewards(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node id is then the absolute path; what room the line has left goes to the direction."""
    args = gate.mixed_outside_rootdir(monkeypatch)
    nodeid = f"{(gate.path / NEW).as_posix()}::regex-log"
    monkeypatch.setenv("COLUMNS", str(len(f"FAILED {nodeid} - ") + 24))
    result = gate.run(*args, "-rf")
    line = next(line for line in result.outlines if line.startswith(f"FAILED {nodeid}"))
    assert line.startswith(f"FAILED {nodeid} - new regressed: old=")

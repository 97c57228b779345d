"""A flip read on an 80-column terminal: direction and rewards first, each --tb style as pytest's own.

pytest cuts the short summary line at the terminal's width (not on CI), so the crash line leads
with the direction and the rewards and never repeats the task the node id already names.
"""

from __future__ import annotations

import re

import pytest

from .conftest import NEW, Gate, junit_cases, legacy_row, summary_lines

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
        assert any(line.startswith(f"XFAIL {NEW}::old-only - only in the old file") for line in summary_lines(result))


def test_tb_line_is_one_line_per_flip_at_the_row(gate: Gate) -> None:
    """`--tb=line`: `<file>:<row line>: <task>: <header>`, no message body, no path into the plugin."""
    result = gate.run(*gate.mixed(), "--tb=line")
    start = next(i for i, line in enumerate(result.outlines) if " FAILURES " in line)
    end = next(i for i, line in enumerate(result.outlines) if " rollout parity " in line)
    assert result.outlines[start + 1 : end] == [
        f"{NEW}:3: cancel-async-tasks: {IMPROVED}",
        f"{NEW}:2: regex-log: {REGRESSED}",
    ]
    assert "pytest_rollout_parity" not in result.stdout.str()


def test_tb_line_names_a_gate_level_item_at_the_new_file(gate: Gate) -> None:
    """The `parity-aggregate` item's line names it, at the new file, never at the plugin's source."""
    result = gate.run(*gate.mixed(), "--parity-margin=0.01", "--tb=line")
    aggregate = [line for line in result.outlines if line.startswith(f"{NEW}:0: parity-aggregate: ")]
    assert len(aggregate) == 1
    assert "collect.py" not in result.stdout.str() and "pytest_rollout_parity" not in result.stdout.str()


def test_tb_short_shows_the_whole_message(gate: Gate) -> None:
    """No traceback to shorten: `--tb=short` shows each flip's whole message, as the default does."""
    short = gate.run(*gate.mixed(), "--tb=short")
    default = gate.run(*gate.mixed())

    def failures(result: pytest.RunResult) -> list[str]:
        start = next(i for i, line in enumerate(result.outlines) if " FAILURES " in line)
        end = next(i for i, line in enumerate(result.outlines) if " rollout parity " in line)
        return result.outlines[start + 1 : end]

    shown = failures(short)
    assert shown == failures(default)
    assert f"cancel-async-tasks: {IMPROVED}" in shown and f"regex-log: {REGRESSED}" in shown
    assert len([line for line in shown if not line.startswith("_")]) > 2
    assert "pytest_rollout_parity" not in short.stdout.str()


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


# --- every line the gate writes, on a 30-task migration in margin mode ---------------------------

LONG_LOG_LINE = "E   AssertionError: expected the calendar event list to hold " + "a-rather-long-event-name " * 12


def _migration(gate: Gate) -> list[str]:
    """30 tasks, 8 rollouts each, on both sides: 3 regress 8/8 → 0/8 (they fail), 6 flip by a rollout
    (within noise), one is masked on the new side, one runs only on the old; every row carries a
    long log line."""
    old, new = [], []
    for task in range(30):
        name = f"calendar-scheduling-task-with-a-long-name-{task:02d}"
        for rollout in range(8):
            before = 1.0 if task < 3 or (task + rollout) % 3 else 0.0
            after = 0.0 if task < 3 else (1.0 - before if 3 <= task < 9 and rollout == 0 else before)
            output = f"== {name} ==\n{LONG_LOG_LINE}\nFAILED test_outputs.py::test_a\n"
            old.append(legacy_row(name, before, output=output, _ng_rollout_index=rollout))
            if task == 29:
                continue  # only in the old file
            extra = {"mask_sample": True, "failure_kind": "environment_server_failed"} if task == 28 else {}
            new.append(legacy_row(name, after, output=output, _ng_rollout_index=rollout, **extra))
    return gate.pair(old, new)


#: pytest's own lines (its header, the short summary, the separators), which are pytest's to fit
PYTESTS = re.compile(
    r"(platform|rootdir|plugins|configfile|collected|Running \d+ items|(FAILED|XFAIL|XPASS|ERROR|PASSED) )"
    r"|[=_]+ .* [=_]+$"
)


def _gate_lines(result: pytest.RunResult) -> list[str]:
    """Every line of the run but pytest's own."""
    return [line for line in result.outlines if not PYTESTS.match(line)]


@pytest.mark.parametrize("flags", [[], ["-rA"], ["--tb=long"], ["--parity-plan"]])
def test_every_gate_line_fits_80_columns(gate: Gate, flags: list[str]) -> None:
    args = _migration(gate)
    result = gate.run(*args, "--parity-margin=0.05", "--parity-alpha=0.05", *flags)
    lines = _gate_lines(result)
    assert any(line.startswith("parity: ") for line in lines)
    long = [line for line in lines if len(line) > 80]
    assert not long, "\n".join(long)
    if "--parity-plan" not in flags:
        assert result.ret == 1 and "    | FAILED test_outputs.py::test_a" in lines  # the flips' messages are here
        # a flip's log line is wrapped, not lost: its words are all there, continued under its `|`
        text = " ".join(line.strip().removeprefix("|").strip() for line in lines)
        assert "a-rather-long-event-name " * 11 in text + " "

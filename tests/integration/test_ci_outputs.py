"""Outputs that cannot be written safely, by one rule for the gate and the merge, and `$GITHUB_OUTPUT`.

A CI output that is a FIFO or a symbolic link is skipped with one warning line and the verdict
stands (never a hang, never a write through a link); one that names an input or a merge part is a
usage error, exit 4. Where `$GITHUB_OUTPUT` is set, the gate and the merge append `verdict=...`.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_rollout_parity.__main__ import main as merge_main

from .conftest import Gate, all_text, section
from .test_team_checks import agreeing

#: seconds before an in-process run counts as hung on an output (far above a run's time)
HANG_GUARD = 120


@pytest.fixture(autouse=True)
def never_hang() -> Iterator[None]:
    """A write that waits for a FIFO's reader ends the test with an error instead of hanging the suite."""

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError("an output write waited for a reader")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(HANG_GUARD)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    capsys.readouterr()
    try:
        status = merge_main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


def _warnings(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines + result.errlines if line.startswith("WARNING: ")]


def test_a_fifo_as_the_step_summary_is_skipped_and_the_verdict_stands(
    gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(_fifo(gate.path / "step.fifo")))
    result = gate.run(*agreeing(gate))
    assert result.ret == 0 and section(result)[0] == "parity: PASS: no difference in 4 compared tasks"
    (warning,) = _warnings(result)
    assert warning.startswith(f"WARNING: $GITHUB_STEP_SUMMARY: {gate.path / 'step.fifo'} skipped: not a regular file")
    assert warning.endswith("; the verdict stands")


@pytest.mark.parametrize("option", ["--parity-json", "--parity-markdown", "--parity-html", "$GITHUB_STEP_SUMMARY"])
def test_a_symlink_as_an_output_is_never_written_through(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    args = gate.mixed()
    elsewhere = gate.write("elsewhere/keep.txt", "kept\n")
    (gate.path / "out").symlink_to(elsewhere)
    if option.startswith("$"):
        monkeypatch.setenv(option[1:], str(gate.path / "out"))
    else:
        args.append(f"{option}=out")
    result = gate.run(*args)
    assert result.ret == 1 and section(result)[0].startswith("parity: FAIL: ")
    (warning,) = _warnings(result)
    assert warning.startswith(f"WARNING: {option}: ") and "skipped: a symbolic link" in warning
    assert elsewhere.read_text() == "kept\n" and (gate.path / "out").is_symlink()


def test_github_output_gets_the_verdict(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    step_output = gate.write("github_output", "earlier=1\n")
    monkeypatch.setenv("GITHUB_OUTPUT", str(step_output))
    assert gate.run(*gate.mixed()).ret == 1
    assert gate.run(*agreeing(gate)).ret == 0
    assert step_output.read_text() == "earlier=1\nverdict=fail\nverdict=pass\n"


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_ci_file_naming_an_input_is_a_usage_error(gate: Gate, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    args = gate.mixed()
    before = (gate.path / "new" / "rollouts.jsonl").read_bytes()
    monkeypatch.setenv(variable, str(gate.path / "new" / "rollouts.jsonl"))
    result = gate.run(*args)
    lines = [line for line in result.outlines + result.errlines if line.strip()]
    assert result.ret == 4 and len(lines) == 1
    assert lines[0].startswith(f"ERROR: ${variable}: ") and "an output never overwrites an input" in lines[0]
    assert (gate.path / "new" / "rollouts.jsonl").read_bytes() == before


def test_the_merge_follows_the_same_rule(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gate.run(*gate.mixed(), "--parity-json=whole.json").ret == 1
    part = str(gate.path / "whole.json")
    step_output = gate.write("github_output", "")
    monkeypatch.setenv("GITHUB_OUTPUT", str(step_output))
    # a FIFO with no reader as the job page: skipped with one warning, the verdict and its exit status stand
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(_fifo(gate.path / "step.fifo")))
    (gate.path / "merged.md").symlink_to(gate.write("elsewhere.md", "kept\n"))
    status, out, err = _merge(capsys, "merge", part, f"--markdown={gate.path / 'merged.md'}")
    assert status == 1 and out[0].startswith("parity: FAIL: ")
    assert len(err) == 2 and all(line.startswith("WARNING: ") and "skipped: " in line for line in err), err
    assert err[0].startswith("WARNING: --markdown: ") and err[1].startswith("WARNING: $GITHUB_STEP_SUMMARY: ")
    assert (gate.path / "elsewhere.md").read_text() == "kept\n"
    assert step_output.read_text() == "verdict=fail\n"
    # the job page naming a part: a usage error, and the part is left as it was
    before = Path(part).read_bytes()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", part)
    status, out, err = _merge(capsys, "merge", part)
    assert status == 4 and out == [] and len(err) == 1
    assert err[0] == f"ERROR: $GITHUB_STEP_SUMMARY: {part} is one of the parts: an output never overwrites an input"
    assert Path(part).read_bytes() == before and step_output.read_text() == "verdict=fail\n"
    assert "Traceback" not in "\n".join(err)


def test_a_fifo_as_an_output_of_the_gate_is_skipped_too(gate: Gate) -> None:
    _fifo(gate.path / "summary.json")
    result = gate.run(*agreeing(gate), "--parity-json=summary.json")
    assert result.ret == 0
    (warning,) = _warnings(result)
    assert warning.startswith("WARNING: --parity-json: ") and "not a regular file" in warning
    assert "Traceback" not in all_text(result)

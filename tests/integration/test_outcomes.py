"""Outcomes by category: identical passes, flips fail with the flip message, the rest xfail."""

from __future__ import annotations

import re

import pytest

from .conftest import NEW, Gate, all_text, harbor_row, junit_cases, junit_properties, legacy_row

REGEX_TAIL = [f"    | regex line {i}" for i in range(16, 31)]


def test_identical_passes_exit_0(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0), legacy_row("regex-log", 0.0)],
        [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)],
    )
    result = gate.run(*args)
    result.assert_outcomes(passed=2)
    assert result.ret == 0


def test_flip_fails_with_exact_message_and_no_traceback(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "-rfEX")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=2, xfailed=4)
    out = result.outlines
    start = out.index("regex-log: new regressed: old=1.0 new=0.0")
    expected = [
        "regex-log: new regressed: old=1.0 new=0.0",
        "    new verifier output (last 15 lines of <source>):",
        *REGEX_TAIL,
    ]
    got = out[start : start + len(expected)]
    prefix, source = got[1].split(" of ", 1)
    # <source> is the file read, absolute or relative to the invocation dir
    assert source.endswith("):")
    assert (gate.path / source[:-2]).resolve() == (gate.path / "new/logs/s-regex/test-stdout.txt").resolve()
    got[1] = prefix + " of <source>):"
    assert got == expected
    assert not out[start + len(expected)].startswith("    |")
    text = all_text(result)
    assert "Traceback" not in text
    assert "Failed:" not in text
    assert "runtest" not in text and "pytest.fail" not in text
    # nothing of the winner's output (the old row's embedded test_output)
    assert "PASSED test_outputs.py::test_a" not in text


def test_flip_won_by_new_shows_old_embedded_output(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "--parity-tail=1")
    out = result.outlines
    start = out.index("cancel-async-tasks: new improved: old=0.0 new=1.0")
    assert out[start + 1 : start + 3] == [
        "    old verifier output (last 1 lines of row field 'test_output'):",
        "    | old tail",
    ]


def test_flip_without_verifier_output_says_unavailable(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0)],
        [harbor_row("fix-git", 0.0, logs_dir="nowhere/s1", failure_kind="harbor:verifier_timeout")],
    )
    result = gate.run(*args)
    assert result.ret == 1
    out = result.outlines
    start = out.index("fix-git: new regressed: old=1.0 new=0.0")
    assert out[start + 1] == "    new scored with failure_kind=harbor:verifier_timeout (not masked)"
    assert out[start + 2].startswith("    new verifier output unavailable: nowhere/s1 not found under ")


def test_short_summary_line_is_header_alone(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "-rf", "-vv")
    failed = [line for line in result.outlines if line.startswith("FAILED ")]
    assert sorted(failed) == sorted(
        [
            "FAILED new/rollouts.jsonl::regex-log - new regressed: old=1.0 new=0.0",
            "FAILED new/rollouts.jsonl::cancel-async-tasks - new improved: old=0.0 new=1.0",
        ]
    )


def test_junit_message_is_header_and_parity_task_property(gate: Gate) -> None:
    args = gate.mixed()
    gate.run(*args, "--junitxml=junit.xml")
    cases = junit_cases(gate.path / "junit.xml")
    failure = cases["regex-log"].find("failure")
    assert failure is not None
    assert failure.get("message") == "new regressed: old=1.0 new=0.0"
    assert "| regex line 30" in (failure.text or "")
    assert "Traceback" not in (failure.text or "")
    assert junit_properties(cases["regex-log"])["parity_task"] == "regex-log"
    assert junit_properties(cases["fix-git"])["parity_task"] == "fix-git"


def test_junit_parity_task_is_raw_label(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix git", 1.0)], [harbor_row("fix git", 1.0)])
    gate.run(*args, "--junitxml=junit.xml")
    cases = junit_cases(gate.path / "junit.xml")
    assert list(cases) == ["fix_git"]
    assert junit_properties(cases["fix_git"])["parity_task"] == "fix git"


def test_xfail_reasons_name_the_side(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "-rx")
    assert result.ret == 1
    xfails = {line.split(" ")[1]: line for line in result.outlines if line.startswith("XFAIL ")}
    masked = xfails["new/rollouts.jsonl::build-cython-ext"]
    assert "new side masked" in masked and "provider_unavailable" in masked and "old side" not in masked
    agent = xfails["new/rollouts.jsonl::git-multibranch"]
    assert "new agent error: terminus2_error_type=TimeoutError" in agent and "rerun" in agent
    assert "only in the old file" in xfails["new/rollouts.jsonl::old-only"]
    assert "only in the new file" in xfails["new/rollouts.jsonl::new-only"]


def test_masked_on_old_side_names_old(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", None)],
        [harbor_row("fix-git", 1.0)],
    )
    result = gate.run(*args, "-rx")
    result.assert_outcomes(xfailed=1, failed=1)  # the one task masked: nothing compared fails parity-coverage
    (line,) = [line for line in result.outlines if line.startswith("XFAIL ")]
    assert "old side masked: no reward" in line and "new side" not in line


def test_masked_only_and_identical_exit_0(gate: Gate) -> None:
    """xfailed items do not fail the run while the tasks lost stay within the budget (20%: one of five)."""
    names = ["fix-git", "regex-log", "task-c", "task-d", "task-e"]
    old = [legacy_row(name, 1.0) for name in names]
    new = [harbor_row(name, 1.0, index=i) for i, name in enumerate(names[1:], start=1)]
    args = gate.pair(old, [harbor_row("fix-git", 0.0, mask_sample=True), *new])
    result = gate.run(*args)
    result.assert_outcomes(passed=4, xfailed=1)
    assert result.ret == 0
    # one of two tasks masked is 50% of the evidence lost: over the budget, whatever the other task says
    args = gate.pair(old[:2], [harbor_row("fix-git", 0.0, mask_sample=True), new[0]])
    result = gate.run(*args)
    result.assert_outcomes(passed=1, xfailed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*parity-coverage*1 of 2 old task(s) not compared (1 masked) (over the limit 20% = 0)*"]
    )


@pytest.mark.parametrize("how", ["cli", "ini"])
def test_strict_makes_masked_missing_agent_error_fail(gate: Gate, how: str) -> None:
    args = gate.mixed()
    if how == "cli":
        args.append("--parity-strict")
    else:
        gate.pytester.makeini("[pytest]\nparity_strict = true\n")
    result = gate.run(*args, "-rf")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=6)
    failed = {line.split(" ")[1] for line in result.outlines if line.startswith("FAILED ")}
    assert failed == {
        f"new/rollouts.jsonl::{n}"
        for n in ("regex-log", "cancel-async-tasks", "git-multibranch", "build-cython-ext", "old-only", "new-only")
    }
    assert "Traceback" not in all_text(result)


def test_strict_with_only_identical_exit_0(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0)])
    result = gate.run(*args, "--parity-strict")
    result.assert_outcomes(passed=1)
    assert result.ret == 0


def test_repeated_rows_reward_text(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", 1.0)],
        [
            harbor_row("fix-git", 1.0, rollout=0),
            harbor_row("fix-git", 0.0, rollout=1),
            harbor_row("fix-git", None, rollout=2),
        ],
    )
    result = gate.run(*args)
    # one of three rows masked (no reward): left out, the side compared on its two scored rows
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED *::fix-git - new regressed: old=1.0 new=0.5 (means of 1 vs 2 of 3 rows)"])
    args = gate.pair(
        [legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0, rollout=0), harbor_row("fix-git", 0.0, rollout=1)]
    )
    result = gate.run(*args, "-rf", "-vv")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAILED *::fix-git - new regressed: old=1.0 new=0.5 (means of 1 vs 2 rows)"])


def flip_block(result, header: str) -> list[str]:
    out = result.outlines
    start = out.index(header)
    block = [out[start]]
    for line in out[start + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line)
    return block


def test_tail_drops_trailing_newlines_and_reads_big_log(gate: Gate) -> None:
    log = gate.path / "new" / "logs" / "big" / "test-stdout.txt"
    log.parent.mkdir(parents=True)
    with open(log, "w", encoding="utf-8") as handle:
        for i in range(200_000):
            handle.write(f"progress {i:06d} " + "." * 20 + "\n")
        handle.write("AssertionError: expected 3 got 4\nFAILED test_outputs.py::test_x\n\n\n\n")
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 0.0, logs_dir="logs/big")])
    result = gate.run(*args, "--parity-tail=3")
    block = flip_block(result, "fix-git: new regressed: old=1.0 new=0.0")
    assert block[2:] == [
        "    | progress 199999 " + "." * 20,
        "    | AssertionError: expected 3 got 4",
        "    | FAILED test_outputs.py::test_x",
    ]


def test_losing_row_is_lowest_reward_and_winner_output_not_shown(gate: Gate) -> None:
    gate.log("new/logs/high", ["HIGH row log"])
    gate.log("new/logs/low", ["LOW row log"])
    gate.log("old/logs/win", ["WINNER log"])
    args = gate.pair(
        [legacy_row("fix-git", 1.0, verifier_logs_dir="logs/win", output="WINNER embedded")],
        [
            harbor_row("fix-git", 0.5, rollout=0, logs_dir="logs/high"),
            harbor_row("fix-git", 0.0, rollout=1, logs_dir="logs/low"),
            harbor_row("fix-git", None, rollout=2, mask_sample=False, reward_note="unscored"),
        ][:2],
    )
    result = gate.run(*args)
    block = flip_block(result, "fix-git: new regressed: old=1.0 new=0.25 (means of 1 vs 2 rows)")
    assert block[-1] == "    | LOW row log"
    text = all_text(result)
    assert "HIGH row log" not in text and "WINNER" not in text


def test_logs_dir_lookup_order(gate: Gate) -> None:
    """Relative verifier_logs_dir: the invocation dir first, then the side's own dir, then the roots."""
    gate.log("sess", ["from invocation dir"])
    gate.log("new/sess", ["from new file dir"])
    gate.log("root/sess", ["from logs root"])
    gate.log("new/only-here", ["own dir only"])
    gate.log("root/root-only", ["root only"])
    args = gate.pair(
        [legacy_row("a", 1.0), legacy_row("b", 1.0), legacy_row("c", 1.0)],
        [
            harbor_row("a", 0.0, logs_dir="sess"),
            harbor_row("b", 0.0, index=1, logs_dir="only-here"),
            harbor_row("c", 0.0, index=2, logs_dir="root-only"),
        ],
    )
    result = gate.run(*args, "--parity-logs-root=root")
    assert flip_block(result, "a: new regressed: old=1.0 new=0.0")[-1] == "    | from invocation dir"
    assert flip_block(result, "b: new regressed: old=1.0 new=0.0")[-1] == "    | own dir only"
    assert flip_block(result, "c: new regressed: old=1.0 new=0.0")[-1] == "    | root only"


def test_logs_dir_absolute_and_file(gate: Gate) -> None:
    log_dir = gate.log("elsewhere/s1", ["absolute dir"])
    single = gate.path / "elsewhere" / "plain.log"
    single.write_text("one\ntwo\n")
    args = gate.pair(
        [legacy_row("a", 1.0), legacy_row("b", 1.0)],
        [harbor_row("a", 0.0, logs_dir=str(log_dir)), harbor_row("b", 0.0, index=1, logs_dir=str(single))],
    )
    result = gate.run(*args)
    assert flip_block(result, "a: new regressed: old=1.0 new=0.0")[-1] == "    | absolute dir"
    # a logs dir naming a file: only a test-stdout.txt inside a directory is ever read
    block = flip_block(result, "b: new regressed: old=1.0 new=0.0")
    assert block[1:] == [
        f"    new verifier output unavailable: {single} is not a directory (only a test-stdout.txt inside it is read)",
        "    new (losing) row's evidence:",  # then what the row itself says
        "    | verifier_return_code=0",
    ]


def test_strict_agent_error_flip_message(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-strict", "-k", "git-multibranch")
    block = flip_block(result, "git-multibranch: new regressed: old=1.0 new=0.0")
    assert block[1] == "    new agent error: terminus2_error_type=TimeoutError"
    # its row names no verifier logs: the run says so once, in a note, not in the flip
    assert not any("verifier output" in line for line in block[2:])
    assert all_text(result).count("1 flip(s) have no verifier output: row has no verifier_logs_dir") == 1


def test_legacy_error_field_agent_error(gate: Gate) -> None:
    args = gate.pair(
        [
            legacy_row(
                "fix-git",
                0.0,
                error="Traceback (most recent call last):\n  ...\nRuntimeError: container exited 137\n\n",
            )
        ],
        [harbor_row("fix-git", 1.0)],
    )
    result = gate.run(*args, "-rx", "--parity-max-uncompared=1")
    result.assert_outcomes(xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["XFAIL *::fix-git - *old agent error: error: RuntimeError: container exited 137*"])


@pytest.mark.parametrize("tb", ["auto", "long", "short", "native", "line"])
def test_no_traceback_under_any_tb_style(gate: Gate, tb: str) -> None:
    """The full message under every style but line; the crash line alone, naming the task, for line."""
    result = gate.run(*gate.mixed(), f"--tb={tb}")
    assert result.ret == 1
    if tb == "line":
        # `<file>:<line of the task's row>: <task>: <header>`, as pytest writes a crash location
        assert f"{NEW}:2: regex-log: new regressed: old=1.0 new=0.0" in result.outlines
        assert not any(line.startswith("regex-log: ") for line in result.outlines)
    else:
        assert "regex-log: new regressed: old=1.0 new=0.0" in result.outlines
    assert ("    | regex line 30" in result.outlines) == (tb != "line")
    text = all_text(result)
    assert "Traceback" not in text and "pytest.fail" not in text
    assert not re.search(r"\.py:\d+", text)  # no source locations of a traceback


def test_reward_text_int_negative_and_rounding(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("blackjack", -1), legacy_row("tetris", 19.4), legacy_row("thirds", 1)],
        [harbor_row("blackjack", 1), harbor_row("tetris", 19.4, index=1), harbor_row("thirds", 1 / 3, index=2)],
    )
    result = gate.run(*args, "-rf", "-vv")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["FAILED *::blackjack - new improved: old=-1.0 new=1.0"])
    result.stdout.fnmatch_lines(["FAILED *::thirds - new regressed: old=1.0 new=0.3333"])


def test_masked_both_sides_reason_names_both(gate: Gate) -> None:
    args = gate.pair(
        [legacy_row("fix-git", float("nan")), legacy_row("regex-log", 1.0)],
        [
            harbor_row("fix-git", 0.0, mask_sample=True, failure_kind="verifier_error"),
            harbor_row("regex-log", 1.0, index=1),
        ],
    )
    result = gate.run(*args, "-rx", "-vv")
    (line,) = [line for line in result.outlines if line.startswith("XFAIL ")]
    assert "old side masked: non-finite reward (nan)" in line
    assert "new side masked: mask_sample (failure_kind=verifier_error)" in line


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)])
def test_durations_list_every_phase_of_the_parity_items(gate: Gate, workers: list[str]) -> None:
    """--durations still sees the items' setup and teardown, with flips rendered before it."""
    if workers:
        pytest.importorskip("xdist")
    beside = [gate.beside()] if workers else []
    result = gate.run(*gate.mixed(), *beside, "--durations=0", "--durations-min=0", "-rP", *workers)
    assert result.ret == 1
    out = result.outlines
    start = next(i for i, line in enumerate(out) if "slowest durations" in line)
    listed = {tuple(line.split()[1:3]) for line in out[start + 1 :] if re.match(r"\d+\.\d\ds ", line)}
    tasks = [
        "fix-git",
        "regex-log",
        "cancel-async-tasks",
        "git-multibranch",
        "build-cython-ext",
        "old-only",
        "new-only",
    ]
    for task in tasks:
        for phase in ("setup", "call", "teardown"):
            assert (phase, f"new/rollouts.jsonl::{task}") in listed, (phase, task)
    # the final stats line counts the items as before
    assert re.search(rf"= 2 failed, {1 + len(beside)} passed, 4 xfailed in ", out[-1])

"""The section opens with the verdict in words; masked and missing tasks are listed with side and reason."""

from __future__ import annotations

from typing import Any, Optional

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.summary import build_summary
from pytest_rollout_parity.core.reports.terminal import summary_lines


def _rows(pairs: dict[str, Optional[float]], **extra: Any) -> list[dict[str, Any]]:
    return [{"task_id": task, "reward": reward, **extra} for task, reward in pairs.items()]


def test_no_difference() -> None:
    rows = _rows({f"t{i}": 1.0 for i in range(12)})
    rerun = [dict(row, response_id=f"rerun-{i}") for i, row in enumerate(rows)]  # a real rerun: other rows
    summary = build_summary(compare_rollouts(rows, rerun))
    assert summary_lines(summary)[0] == "parity: PASS: no difference in 12 compared tasks"
    copy = build_summary(compare_rollouts(rows, rows))
    # a copy is no evidence: inconclusive, and never called "no difference"
    assert summary_lines(copy)[0] == (
        "parity: INCONCLUSIVE: no flip in 12 compared tasks; both files hold the same rows: was the new server run?"
    )


def test_every_kind_of_difference_in_words() -> None:
    old = _rows({"down": 1.0, "down2": 1.0, "up": 0.0, "same": 1.0, "gone": 1.0, "masked": 1.0})
    new = _rows({"down": 0.0, "down2": 0.0, "up": 1.0, "same": 1.0, "masked": None, "extra": 1.0})
    new += [{"task_id": "rerun", "reward": 0.0, "error": "TimeoutError"}]
    old += [{"task_id": "rerun", "reward": 1.0}]
    summary = build_summary(compare_rollouts(old, new))
    assert summary_lines(summary)[0] == (
        "parity: FAIL: 2 tasks regressed, 1 improved, 1 rerun candidate (agent errors), 1 masked, 2 missing; "
        "1 identical"
    )
    lines = summary_lines(summary)
    table_row = next(line for line in lines if line.startswith("flipped "))
    assert table_row.endswith("new regressed 2, new improved 1")
    start = lines.index("masked (1):")
    assert lines[start + 1] == "    masked: new side masked: no reward"
    start = lines.index("missing (2):")
    assert lines[start + 1 : start + 3] == ["    extra: only in the new file", "    gone: only in the old file"]


def test_nothing_compared_says_so_first() -> None:
    summary = build_summary(compare_rollouts(_rows({"a": 1.0}), _rows({"b": 1.0})))
    assert (
        summary_lines(summary)[0]
        == "parity: INCONCLUSIVE: nothing compared in 2 tasks (0 masked, 2 missing; see below)"
    )


def test_margin_decision_joins_the_verdict() -> None:
    # 100 tasks without spread: the resolution floor (1/100) keeps both bounds within ±0.05
    old = [{"task_id": f"t{i}", "reward": 1.0} for i in range(100)]
    new = [dict(row, response_id="rerun") for row in old]
    summary = build_summary(compare_rollouts(old, new), margin=0.05)
    assert summary_lines(summary)[0] == (
        "parity: PASS: no difference in 100 compared tasks; mean difference within the margin 0.05"
    )


def test_masked_and_missing_lists_are_capped() -> None:
    old = _rows({f"m{i:02d}": None for i in range(13)})
    new = _rows({f"m{i:02d}": 1.0 for i in range(13)})
    lines = summary_lines(build_summary(compare_rollouts(old, new)))
    start = lines.index("masked (13):")
    assert lines[start + 1] == "    m00: old side masked: no reward"
    assert lines[start + 11] == "    ... and 3 more (see --parity-json)"
    assert "m12" not in "\n".join(lines)


def test_only_a_failed_check_decides_and_a_check_not_run_narrows() -> None:
    """Every item that ran decides: a failed check fails a pair whose rewards agree, naming the first
    three; a skip, an xfail or an xpass does not decide; a check collected but not run narrows the run."""
    from pytest_rollout_parity.core.reports.summary import BySide, CheckRun, RunInfo, RunOutcome, SideFile

    rows = [{"task_id": t, "reward": 1.0} for t in "ab"]
    result = compare_rollouts(rows, [dict(row, extra=1) for row in rows])

    def decided(*outcomes: Optional[str]) -> tuple[str, list[str]]:
        checks = tuple(CheckRun(f"t.py::c[{i}]", "a", outcome) for i, outcome in enumerate(outcomes))
        run = RunInfo(BySide(SideFile("o"), SideFile("n")), RunOutcome(2, 0, {"passed": 2}, checks=checks))
        summary = build_summary(result, run)
        return summary.verdict, [f"{d.code}: {d.text}" for d in summary.decided_by]

    assert decided("passed", "skipped", "xfailed", "xpassed") == ("pass", ["passed: every check passed"])
    failed = ("failed", "passed", "failed", "failed", "failed")
    assert decided(*failed) == (
        "fail",
        ["checks_failed: 4 of your checks failed: t.py::c[0], t.py::c[2], t.py::c[3] and 1 more"],
    )
    assert decided("passed", None) == (
        "inconclusive",
        ["narrowed: 1 of your 2 checks not run: the verdict needs every item"],
    )

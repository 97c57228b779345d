"""Selecting parity items: -k, --lf, node ids, --collect-only, safe item names."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from .conftest import Gate, all_text, failure_record, harbor_row, legacy_row

NEW = "new/rollouts.jsonl"


def ran(result: pytest.RunResult) -> dict[str, str]:
    """node id -> outcome word, from a `-rA` short summary (run with -vv so nothing is cut)."""
    outcomes: dict[str, str] = {}
    for line in result.outlines:
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED", "XFAIL", "XPASS", "SKIPPED", "ERROR"):
            outcomes[rest.split(" - ")[0]] = word
    return outcomes


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith(" ")]


def test_k_selects_one_task(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "-k", "regex-log", "-rA", "-vv")
    assert ran(result) == {f"{NEW}::regex-log": "FAILED"}
    result.assert_outcomes(failed=1, deselected=6)
    assert result.ret == 1
    result = gate.run(*args, "-k", "fix-git", "-rA", "-vv")
    assert ran(result) == {f"{NEW}::fix-git": "PASSED"}
    assert result.ret == 0


def test_lf_reruns_exactly_the_flips(gate: Gate) -> None:
    args = gate.mixed()
    first = gate.run(*args)
    assert first.ret == 1
    again = gate.run(*args, "--lf", "-rA", "-vv")
    assert ran(again) == {f"{NEW}::regex-log": "FAILED", f"{NEW}::cancel-async-tasks": "FAILED"}
    # the new file is not a path pytest was given, so --lf keeps only the failures as it collects
    # them (as for any file it walks), and says so
    again.assert_outcomes(failed=2)
    again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 2 failures*"])
    # regex-log fixed on the new side: --lf runs both last failures, then only the remaining one
    new_rows = [json.loads(line) for line in (gate.path / NEW).read_text().splitlines()]
    fixed_row = next(row for row in new_rows if row["_ng_task_id"]["task_id"] == "regex-log")
    assert fixed_row["reward"] == 0.0
    fixed_row["reward"] = 1.0
    gate.write(NEW, new_rows)
    fixed = gate.run(*args, "--lf", "-rA", "-vv")
    assert ran(fixed) == {f"{NEW}::regex-log": "PASSED", f"{NEW}::cancel-async-tasks": "FAILED"}
    last = gate.run(*args, "--lf", "-rA", "-vv")
    assert ran(last) == {f"{NEW}::cancel-async-tasks": "FAILED"}


def test_rerun_by_node_id(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(f"{NEW}::regex-log", *args, "-rA", "-vv")
    assert ran(result) == {f"{NEW}::regex-log": "FAILED"}
    result.assert_outcomes(failed=1)
    result = gate.run(f"{NEW}::fix-git", f"{NEW}::old-only", *args, "-rA", "-vv")
    assert ran(result) == {f"{NEW}::fix-git": "PASSED", f"{NEW}::old-only": "XFAIL"}


def test_collect_only_lists_items_in_sorted_task_order(gate: Gate) -> None:
    tasks = ["zeta", "alpha", "Mid", "beta-2", "beta_1", "10-x", "9-x"]
    args = gate.pair(
        [legacy_row(t, 1.0) for t in reversed(tasks)], [harbor_row(t, 1.0, index=i) for i, t in enumerate(tasks)]
    )
    # natural order: numbers by magnitude (9 before 10), the rest by code point
    expected = [f"{NEW}::{t}" for t in ["9-x", "10-x", "Mid", "alpha", "beta-2", "beta_1", "zeta"]]
    first = gate.run(*args, "--collect-only", "-q")
    assert collected(first) == expected
    second = gate.run(*args, "--collect-only", "-q")
    assert collected(second) == expected
    assert first.ret == 0


# --- safe item names ------------------------------------------------------------------------------

RAW_LABELS = ["fix git", "fix_git", "café-crème", "a[1]", "x::y", "  lead?", "???", "a b", "a  b", "v1.2-rc"]


@pytest.fixture
def odd_names(gate: Gate) -> list[str]:
    old = [dict(legacy_row("t", 1.0), task_name=label) for label in RAW_LABELS]
    new = [harbor_row(label, 0.0 if label == "fix git" else 1.0, index=i) for i, label in enumerate(RAW_LABELS)]
    # legacy rows here carry the bare label (no prefix), like the new side's task ids
    args = gate.pair(old, new)
    gate.write("old/rollouts_failures.jsonl", [failure_record()])  # an anonymous sidecar record
    return args


def names_of(result: pytest.RunResult) -> list[str]:
    return [line.split("::", 1)[1] for line in collected(result)]


def test_item_names_made_safe(gate: Gate, odd_names: list[str]) -> None:
    result = gate.run(*odd_names, "--collect-only", "-q")
    names = names_of(result)
    # a safe label (`fix_git`, `café-crème`, `v1.2-rc`) keeps its name; the others lose what is unsafe
    assert {"fix_git", "café-crème", "unknown_old_1", "a_1", "x_y", "lead", "v1.2-rc"} - set(names) == set()
    hashed = [n for n in names if re.fullmatch(r"fix_git-[0-9a-z]+", n)]
    assert len(hashed) == 1  # `fix git` collides with `fix_git`
    a_b = sorted(n for n in names if n.startswith("a_b-"))
    assert len(a_b) == 2 and a_b[0] != a_b[1]
    assert "a_b" not in names
    alone = [n for n in names if re.fullmatch(r"[0-9a-f]{6,}", n)]
    assert len(alone) == 1  # `???`: nothing left, named by its hash alone
    assert len(names) == len(set(names)) == len(RAW_LABELS) + 1
    for name in names:
        assert not name.startswith("_") and not name.endswith("_")
        assert "[" not in name and "::" not in name and " " not in name
    # stable across runs
    assert names_of(gate.run(*odd_names, "--collect-only", "-q")) == names


def test_safe_names_select_with_k_nodeid_and_lf(gate: Gate, odd_names: list[str]) -> None:
    names = names_of(gate.run(*odd_names, "--collect-only", "-q"))
    (flip,) = [n for n in names if n.startswith("fix_git-")]
    first = gate.run(*odd_names, "--junitxml=j.xml", "-rA", "-vv")
    assert first.ret == 1
    assert {k for k, v in ran(first).items() if v == "FAILED"} == {f"{NEW}::{flip}"}
    assert ran(gate.run(*odd_names, "--lf", "-rA", "-vv")) == {f"{NEW}::{flip}": "FAILED"}
    assert ran(gate.run(f"{NEW}::{flip}", *odd_names, "-rA", "-vv")) == {f"{NEW}::{flip}": "FAILED"}
    assert ran(gate.run(*odd_names, "-k", "café-crème", "-rA", "-vv")) == {f"{NEW}::café-crème": "PASSED"}
    assert ran(gate.run(*odd_names, "-k", "unknown_old_1", "-rA", "-vv")) == {f"{NEW}::unknown_old_1": "XFAIL"}
    header = [line for line in first.outlines if line.startswith(f"FAILED {NEW}::{flip}")]
    assert header == [f"FAILED {NEW}::{flip} - new regressed: old=1.0 new=0.0"]


def test_taskset_labels_keep_slash(gate: Gate) -> None:
    rows_old = [
        harbor_row("fix-git", 1.0, index=0),
        harbor_row("regex-log", 1.0, index=1),
        harbor_row("fix-git", 1.0, index=2, taskset="weather:train"),
    ]
    rows_new = [
        harbor_row("fix-git", 0.0, index=0),
        harbor_row("regex-log", 1.0, index=1),
        harbor_row("fix-git", 1.0, index=2, taskset="weather:train"),
    ]
    args = gate.pair(rows_old, rows_new)
    names = names_of(gate.run(*args, "--collect-only", "-q"))
    assert names == ["terminal-bench-2-1/fix-git", "terminal-bench-2-1/regex-log", "weather_train/fix-git"]
    first = gate.run(*args, "-rA", "-vv")
    assert ran(first)[f"{NEW}::terminal-bench-2-1/fix-git"] == "FAILED"
    first.stdout.fnmatch_lines([f"FAILED {NEW}::terminal-bench-2-1/fix-git - new regressed: old=1.0 new=0.0"])
    assert ran(gate.run(*args, "--lf", "-rA", "-vv")) == {f"{NEW}::terminal-bench-2-1/fix-git": "FAILED"}
    assert ran(gate.run(f"{NEW}::terminal-bench-2-1/fix-git", *args, "-rA", "-vv")) == {
        f"{NEW}::terminal-bench-2-1/fix-git": "FAILED"
    }
    assert ran(gate.run(*args, "-k", "terminal-bench-2-1/regex-log", "-rA", "-vv")) == {
        f"{NEW}::terminal-bench-2-1/regex-log": "PASSED"
    }
    assert ran(gate.run(*args, "-k", "weather_train/fix-git", "-rA", "-vv")) == {
        f"{NEW}::weather_train/fix-git": "PASSED"
    }


# --- a new file outside the rootdir -------------------------------------------------------------


def test_new_file_outside_rootdir_lf(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    args = gate.mixed_outside_rootdir(monkeypatch)
    first = gate.run(*args, "-rA", "-vv")
    assert first.ret == 1
    failed = {k for k, v in ran(first).items() if v == "FAILED"}
    assert len(failed) == 2
    assert {f.rsplit("::", 1)[1] for f in failed} == {"regex-log", "cancel-async-tasks"}
    again = gate.run(*args, "--lf", "-rA", "-vv")
    assert ran(again) == {f: "FAILED" for f in failed}
    again.assert_outcomes(failed=2)
    for path in ("../new/rollouts.jsonl", str(gate.path / "new/rollouts.jsonl")):
        one = gate.run(f"{path}::regex-log", *args, "-rA", "-vv")
        one.assert_outcomes(failed=1)
        assert [k.rsplit("::", 1)[1] for k in ran(one)] == ["regex-log"]


# --- a -k rerun reads only its own log --------------------------------------------------------------


def three_flips(gate: Gate) -> list[str]:
    old = [legacy_row(t, 1.0) for t in ("alpha", "beta", "gamma")]
    new = [harbor_row(t, 0.0, index=i, logs_dir=f"logs/{t}") for i, t in enumerate(("alpha", "beta", "gamma"))]
    for t in ("alpha", "beta", "gamma"):
        gate.log(f"new/logs/{t}", [f"{t} says no"])
    return gate.pair(old, new)


def test_k_rerun_reads_only_its_log(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_rollout_parity.core.reading.bounded as verifier  # where a verifier log is opened

    args = three_flips(gate)
    opened: list[str] = []
    real_open = verifier.open if hasattr(verifier, "open") else open

    def spy_open(file, *a, **kw):
        opened.append(os.fspath(file))
        return real_open(file, *a, **kw)

    monkeypatch.setattr(verifier, "open", spy_open, raising=False)
    result = gate.run(*args, "-k", "beta")
    result.assert_outcomes(failed=1, deselected=2)
    assert "    | beta says no" in result.outlines
    logs = [p for p in opened if p.endswith("test-stdout.txt")]
    assert [Path(p).parent.name for p in logs] == ["beta"]


@pytest.mark.slow
def test_k_rerun_with_other_logs_fifos(gate: Gate) -> None:
    """Other flips' logs are FIFOs that would block a reader: a -k rerun of one flip finishes."""
    args = three_flips(gate)
    for t in ("alpha", "gamma"):
        log = gate.path / "new" / "logs" / t / "test-stdout.txt"
        log.unlink()
        os.mkfifo(log)
    result = gate.run_subprocess(*args, "-k", "beta")
    result.assert_outcomes(failed=1, deselected=2)
    assert "    | beta says no" in result.outlines


def test_k_rerun_with_other_logs_unreadable(gate: Gate, make_unreadable) -> None:
    args = three_flips(gate)
    for t in ("alpha", "gamma"):
        make_unreadable(gate.path / "new" / "logs" / t / "test-stdout.txt")
    result = gate.run(*args, "-k", "beta")
    result.assert_outcomes(failed=1, deselected=2)
    assert "cannot read" not in all_text(result)
    # the guard is real: the same run without -k reads those logs and says it cannot
    everything = gate.run(*args)
    assert all_text(everything).count("verifier output unavailable: cannot read") == 2

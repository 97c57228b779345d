"""Hardening: odd-sized inputs, odd verifier logs, every way pytest runs, results directories.

Only what the other modules do not cover already (bad reward types, -k/--lf/node ids, plain `-n 2`,
big but ordinary logs and FIFOs of *other* tasks' logs live in test_bad_input, test_selection,
test_xdist and test_outcomes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import SMALL_RUN_BUDGET, TASKSET, Gate, all_text, dump, failure_record, harbor_row, legacy_row, section
from .test_selection import ran

NEW = "new/rollouts.jsonl"
FLIPS = {"new/rollouts.jsonl::regex-log", "new/rollouts.jsonl::cancel-async-tasks"}


def flip_block(lines: list[str], header: str) -> list[str]:
    """The flip message starting at ``header``: the header and its indented lines."""
    start = lines.index(header)
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("    "):
            break
        block.append(line)
    return block


def summary_json(gate: Gate, name: str = "s.json") -> dict:
    return json.loads((gate.path / name).read_text(encoding="utf-8"))


# --- 1. inputs load and count normally ----------------------------------------------------------------


def test_single_50mb_row(gate: Gate) -> None:
    """A 50 MB row (a huge embedded test_output) loads, counts, and its tail is shown."""
    big = ("." * 99 + "\n") * 500_000 + "AssertionError: big row lost\nLAST LINE\n"
    assert len(big) > 50_000_000
    args = gate.pair(
        [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)],
        [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1, test_output=big)],
    )
    assert (gate.path / NEW).stat().st_size > 50_000_000
    result = gate.run(*args, "--parity-json=s.json", "--parity-tail=2")
    result.assert_outcomes(passed=1, failed=1)
    assert flip_block(result.outlines, "regex-log: new regressed: old=1.0 new=0.0")[1:] == [
        "    new verifier output (last 2 lines of row field 'test_output'):",
        "    | AssertionError: big row lost",
        "    | LAST LINE",
    ]
    data = summary_json(gate)
    assert data["rows"]["old"] == data["rows"]["new"] == 2
    assert data["counts"]["tasks"] == 2


def test_200k_small_rows(gate: Gate) -> None:
    """200,000 rows on the new side (1,000 tasks x 200 rollouts) load, count and average right (how fast:
    `python benchmarks/run.py --tasks 1000 --repeats 200 --row-kb 1`)."""
    tasks = [f"task-{i:04d}" for i in range(1000)]
    old = "".join(json.dumps({"task_name": f"terminal-bench/{t}", "reward": 1.0}) + "\n" for t in tasks)
    new = "".join(
        json.dumps(
            {
                "_ng_task_id": {"taskset": TASKSET, "task_id": t},
                "_ng_task_index": i,
                "_ng_rollout_index": r,
                "reward": 0.0 if (t == "task-0007" and r == 0) else 1.0,
            }
        )
        + "\n"
        for i, t in enumerate(tasks)
        for r in range(200)
    )
    args = gate.pair(old, new)
    assert (gate.path / NEW).read_bytes().count(b"\n") == 200_000
    result = gate.run(*args, "--parity-json=s.json", "-q")
    result.assert_outcomes(passed=999, failed=1)
    assert "task-0007: new regressed: old=1.0 new=0.995 (means of 1 vs 200 rows)" in result.outlines
    data = summary_json(gate)
    assert data["rows"]["new"] == 200_000 and data["rows"]["old"] == 1000
    assert data["counts"]["tasks"] == 1000 and data["counts"]["identical"] == 999
    new_line = next(line for line in section(result) if line.startswith("new: "))
    assert "1000 tasks" in new_line and "200000 rows" in new_line


def test_exact_duplicate_lines_count_as_repeats(gate: Gate) -> None:
    line = json.dumps(legacy_row("regex-log", 1.0), ensure_ascii=False) + "\n"
    old = dump([legacy_row("fix-git", 1.0)]) + line + line
    args = gate.pair(old, [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)])
    result = gate.run(*args, "--parity-json=s.json", "-rf", "-vv")
    result.assert_outcomes(passed=1, failed=1)
    header = "new regressed: old=1.0 new=0.0 (means of 2 vs 1 rows)"
    assert f"regex-log: {header}" in result.outlines
    assert f"FAILED {NEW}::regex-log - {header}" in result.outlines
    data = summary_json(gate)
    assert data["rows"]["old"] == 3
    assert {t["task"]: t["old"]["rows"] for t in data["tasks"]} == {"fix-git": 1, "regex-log": 2}
    assert any("several rows on a side" in note and "regex-log" in note for note in data["notes"])


@pytest.mark.parametrize("spelling", ["same path", "through a symlink"])
def test_same_file_both_sides(gate: Gate, spelling: str) -> None:
    rows = [
        harbor_row("fix-git", 1.0),
        harbor_row("regex-log", 0.0, index=1),
        harbor_row("cancel-async-tasks", 0.5, index=2),
    ]
    gate.write(NEW, rows)
    old = NEW
    if spelling == "through a symlink":
        (gate.path / "latest.jsonl").symlink_to(gate.path / NEW)
        old = "latest.jsonl"
    result = gate.run(f"--parity-old={old}", f"--parity-new={NEW}", "--parity-json=s.json", "--parity-allow-same-file")
    result.assert_outcomes(passed=3)
    assert result.ret == 0
    lines = section(result)
    assert "note: both sides are the same file" in lines
    data = summary_json(gate)
    assert "both sides are the same file" in data["notes"]
    assert data["counts"]["identical"] == data["counts"]["tasks"] == 3
    assert data["rows"]["old"] == data["rows"]["new"] == 3
    # each side under the name it was given
    assert data["files"]["old"]["file"] == old and data["files"]["new"]["file"] == NEW
    assert lines[1].startswith(f"old: {old}: 3 tasks") and lines[2].startswith(f"new: {NEW}: 3 tasks")


@pytest.mark.parametrize("spelling", ["second path", "symlink elsewhere", "link farm"])
def test_same_file_each_side_keeps_its_name_and_sidecar(gate: Gate, spelling: str) -> None:
    """A second name of the new file is the same file; its sidecar is the one beside that name,
    else (a symlink with none beside it) the one beside the file it links to."""
    gate.write(NEW, [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)])
    gate.write("new/rollouts_failures.jsonl", [failure_record("cancel-async-tasks", index=2, rollout=0)])
    if spelling == "second path":
        old = "new/../new/rollouts.jsonl"
    else:
        (gate.path / "latest.jsonl").symlink_to(gate.path / NEW)
        old = "latest.jsonl"
    if spelling == "link farm":  # its own sidecar beside the link wins over the target's
        gate.write("farm/latest_failures.jsonl", [failure_record("other-task", index=3, rollout=0)])
        (gate.path / "latest_failures.jsonl").symlink_to(gate.path / "farm/latest_failures.jsonl")
    result = gate.run(
        f"--parity-old={old}",
        f"--parity-new={NEW}",
        "--parity-json=s.json",
        "--parity-allow-same-file",
        *SMALL_RUN_BUDGET,
    )
    lines = section(result)
    data = summary_json(gate)
    assert data["files"]["old"]["file"] == old and data["files"]["new"]["file"] == NEW
    assert data["files"]["new"]["sidecar"] == "new/rollouts_failures.jsonl"
    assert lines[2].startswith(f"new: {NEW} (+ sidecar rollouts_failures.jsonl): 3 tasks, 3 rows (1 masked)")
    if spelling == "link farm":  # another sidecar: two reads, each its own masked task
        assert data["files"]["old"]["sidecar"] == "latest_failures.jsonl"
        assert lines[1].startswith(f"old: {old} (+ sidecar latest_failures.jsonl): 3 tasks, 3 rows (1 masked)")
        assert {t["task"] for t in data["tasks"]} >= {"other-task", "cancel-async-tasks"}
        return
    assert "note: both sides are the same file" in lines
    # the same sidecar too: beside a second path, under the name the user gave; found beside the
    # link's target, under its real path (no file of the link's name exists to open)
    if spelling == "second path":
        shown = Path(old).with_name("rollouts_failures.jsonl")
    else:
        shown = Path(os.path.realpath(gate.path / "new/rollouts_failures.jsonl"))
    assert data["files"]["old"]["sidecar"] == str(shown)
    assert lines[1].startswith(f"old: {old} (+ sidecar {shown.name}): 3 tasks, 3 rows (1 masked)")
    result.assert_outcomes(passed=2, xfailed=1)


# --- 2. nothing compared because nothing was selected -----------------------------------------------


def test_every_item_deselected_summary_still_appears(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "-k", "no-such-task", "--parity-json=s.json")
    result.assert_outcomes(deselected=7)
    lines = section(result)
    assert "selected: 0 of 7 parity items ran" in lines
    assert summary_json(gate)["run"]["selected"] == 0
    assert result.ret not in (0, 1)  # a gate that compared nothing must not pass


# --- 3. verifier logs of any kind --------------------------------------------------------------------


def bytes_read_by_this_process() -> int:
    """Bytes this process has read through read() calls so far (Linux's /proc/self/io `rchar`)."""
    try:
        io = Path("/proc/self/io").read_text(encoding="ascii")
    except OSError:
        pytest.skip("no /proc/self/io to count the bytes read")
    return int(next(line.split()[1] for line in io.splitlines() if line.startswith("rchar:")))


def test_sparse_multi_gigabyte_log_only_its_tail_is_read(gate: Gate) -> None:
    """Only the end of a 3 GiB log is read, counted in bytes rather than seconds: the in-process run
    reads the inputs, the log's tail and pytest's own files, far below the log's size."""
    log = gate.path / "new" / "logs" / "huge" / "test-stdout.txt"
    log.parent.mkdir(parents=True)
    last = [f"final line {i}" for i in range(1, 21)]
    with open(log, "wb") as handle:
        handle.truncate(3 * 2**30)
        handle.seek(0, os.SEEK_END)
        handle.write(("\n" + "\n".join(last) + "\n").encode())
    info = log.stat()
    if info.st_blocks * 512 >= 2**30:
        pytest.skip("the filesystem does not make sparse files")
    assert info.st_size > 3 * 2**30
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 0.0, logs_dir="logs/huge")])
    before = bytes_read_by_this_process()
    try:
        result = gate.run(*args)
    finally:
        read = bytes_read_by_this_process() - before
        log.unlink()  # sparse, but keep a 3 GiB file out of the kept basetemps anyway
    result.assert_outcomes(failed=1)
    block = flip_block(result.outlines, "fix-git: new regressed: old=1.0 new=0.0")
    assert block[1].startswith("    new verifier output (last 15 lines of ")
    assert block[2:] == [f"    | {line}" for line in last[-15:]]
    assert read < 2**28, read  # 256 MiB: a whole read of the log would be 3 GiB


SPECIAL_LOGS = ["fifo-in-dir", "fifo-itself", "dev-zero", "dev-null", "dangling-link", "dir-without-stdout"]


@pytest.mark.slow
def test_special_log_paths_never_hang_fall_back_or_say_why(gate: Gate) -> None:
    """Each losing row's own log is not a readable regular file: embedded output, else `unavailable`."""
    logs = gate.path / "new" / "logs"
    (logs / "fifo-in-dir").mkdir(parents=True)
    os.mkfifo(logs / "fifo-in-dir" / "test-stdout.txt")
    os.mkfifo(logs / "fifo-itself")
    (logs / "dangling-link").symlink_to(logs / "gone")
    (logs / "dir-without-stdout").mkdir()
    (logs / "dir-without-stdout" / "other.txt").write_text("not the log\n")
    where = {
        "fifo-in-dir": "logs/fifo-in-dir",
        "fifo-itself": "logs/fifo-itself",
        "dev-zero": "/dev/zero",
        "dev-null": "/dev/null",
        "dangling-link": "logs/dangling-link",
        "dir-without-stdout": "logs/dir-without-stdout",
    }
    old, new = [], []
    for index, kind in enumerate(SPECIAL_LOGS):
        old += [legacy_row(kind, 1.0), legacy_row(f"{kind}-embedded", 1.0)]
        new += [
            harbor_row(kind, 0.0, index=2 * index, logs_dir=where[kind]),
            harbor_row(
                f"{kind}-embedded",
                0.0,
                index=2 * index + 1,
                logs_dir=where[kind],
                test_output=f"earlier\nembedded output of {kind}\n",
            ),
        ]
    args = gate.pair(old, new)
    result = gate.run_subprocess(*args, "--parity-tail=1")
    result.assert_outcomes(failed=2 * len(SPECIAL_LOGS))
    text = all_text(result)
    assert "Traceback" not in text and "INTERNALERROR" not in text
    reasons = {
        "fifo-in-dir": "not a regular file",
        "fifo-itself": "is not a directory",
        "dev-zero": "is not a directory",
        "dev-null": "is not a directory",
        "dangling-link": "is a dangling symlink",
        "dir-without-stdout": "test-stdout.txt",
    }
    for kind in SPECIAL_LOGS:
        block = flip_block(result.outlines, f"{kind}-embedded: new regressed: old=1.0 new=0.0")
        assert block[1:] == [
            "    new verifier output (last 1 lines of row field 'test_output'):",
            f"    | embedded output of {kind}",
        ], (kind, block)
        block = flip_block(result.outlines, f"{kind}: new regressed: old=1.0 new=0.0")
        # the log is refused; the row's own evidence follows (its return code), never the log's bytes
        assert block[2:] == ["    new (losing) row's evidence:", "    | verifier_return_code=0"], (kind, block)
        assert block[1].startswith("    new verifier output unavailable: "), (kind, block)
        assert where[kind] in block[1] and reasons[kind] in block[1], (kind, block)


def test_undecodable_log_bytes_show_as_replacement_char(gate: Gate) -> None:
    log = gate.path / "new" / "logs" / "bad" / "test-stdout.txt"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"first\nbad \xff\xfe bytes\nlatin-1 caf\xe9\n")
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 0.0, logs_dir="logs/bad")])
    result = gate.run(*args, "--parity-tail=2")
    result.assert_outcomes(failed=1)
    assert flip_block(result.outlines, "fix-git: new regressed: old=1.0 new=0.0")[2:] == [
        "    | bad \ufffd\ufffd bytes",
        "    | latin-1 caf\ufffd",
    ]


# --- 4. every way pytest runs -----------------------------------------------------------------------


@pytest.mark.parametrize("stop", ["-x", "--maxfail=1"])
def test_stop_at_first_flip(gate: Gate, stop: str) -> None:
    args = gate.mixed()
    result = gate.run(*args, stop, "-rA", "-vv")
    # sorted order: build-cython-ext (masked, xfail), then cancel-async-tasks, the first flip
    assert ran(result) == {f"{NEW}::build-cython-ext": "XFAIL", f"{NEW}::cancel-async-tasks": "FAILED"}
    assert result.ret == 1
    assert "stopping after 1 failures" in result.stdout.str()
    assert "selected: 2 of 7 parity items ran" in section(result)


def test_ff_runs_flips_first(gate: Gate) -> None:
    args = gate.mixed()
    assert gate.run(*args).ret == 1
    result = gate.run(*args, "--ff", "-v")
    order = [line.split(" ")[0] for line in result.outlines if line.startswith(f"{NEW}::")]
    assert len(order) == 7
    assert set(order[:2]) == FLIPS
    assert order[2:] == [
        f"{NEW}::{t}" for t in ("build-cython-ext", "fix-git", "git-multibranch", "new-only", "old-only")
    ]
    result.assert_outcomes(passed=1, failed=2, xfailed=4)


def test_deselect_node_id(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--deselect", f"{NEW}::regex-log", "-rA", "-vv")
    outcomes = ran(result)
    assert f"{NEW}::regex-log" not in outcomes and len(outcomes) == 6
    assert outcomes[f"{NEW}::cancel-async-tasks"] == "FAILED"
    result.assert_outcomes(passed=1, failed=1, xfailed=4, deselected=1)
    assert "selected: 6 of 7 parity items ran" in section(result)


@pytest.mark.parametrize("disable", ["no:cacheprovider", "no:xdist"])
def test_plugins_disabled_same_outcomes(gate: Gate, disable: str) -> None:
    args = gate.mixed()
    result = gate.run(*args, "-p", disable, "-rA", "-vv")
    if disable == "no:cacheprovider":
        assert not (gate.path / ".pytest_cache").exists()
    serial = gate.run(*args, "-rA", "-vv")
    assert ran(result) == ran(serial) and len(ran(result)) == 7
    assert result.ret == serial.ret == 1
    assert section(result) == section(serial)


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["load", "loadscope", "worksteal"])
def test_xdist_dist_modes(gate: Gate, dist: str) -> None:
    pytest.importorskip("xdist")
    args = [*gate.mixed(), gate.beside()]
    serial = gate.run(*args, "-rA", "-vv")
    parallel = gate.run(*args, "-n", "2", "--dist", dist, "-rA", "-vv")
    assert "created: 2/2 workers" in parallel.stdout.str()
    assert ran(parallel) == ran(serial) and len(ran(serial)) == 8
    assert parallel.ret == serial.ret == 1
    assert sum(" rollout parity " in line for line in parallel.outlines) == 1
    assert section(parallel) == section(serial)


def test_runxfail_never_passes_masked_missing_agent_error(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--runxfail", "-rA", "-vv")
    assert ran(result) == {
        f"{NEW}::fix-git": "PASSED",
        f"{NEW}::regex-log": "FAILED",
        f"{NEW}::cancel-async-tasks": "FAILED",
        f"{NEW}::git-multibranch": "FAILED",
        f"{NEW}::build-cython-ext": "FAILED",
        f"{NEW}::old-only": "FAILED",
        f"{NEW}::new-only": "FAILED",
    }
    assert result.ret == 1
    failed = {line.split(" ")[1]: line for line in result.outlines if line.startswith("FAILED ")}
    assert "new side masked: mask_sample (failure_kind=provider_unavailable)" in failed[f"{NEW}::build-cython-ext"]
    assert "new agent error: terminus2_error_type=TimeoutError" in failed[f"{NEW}::git-multibranch"]
    assert "only in the old file" in failed[f"{NEW}::old-only"]
    assert "only in the new file" in failed[f"{NEW}::new-only"]
    assert "Traceback" not in all_text(result)


def short_summary(result: pytest.RunResult) -> list[str]:
    out = result.outlines
    (start,) = [i for i, line in enumerate(out) if line.startswith("=") and "short test summary info" in line]
    body = []
    for line in out[start + 1 :]:
        if line.startswith("="):
            break
        body.append(line)
    return body


@pytest.mark.parametrize("workers", [[], pytest.param(["-n", "2"], marks=pytest.mark.slow)])
def test_ci_short_summary_one_line_per_flip(gate: Gate, monkeypatch: pytest.MonkeyPatch, workers: list) -> None:
    if workers:
        pytest.importorskip("xdist")
    monkeypatch.setenv("CI", "1")
    monkeypatch.setenv("COLUMNS", "80")
    args = gate.mixed()
    result = gate.run(*args, "-rf", *workers, *([gate.beside()] if workers else []))
    assert sorted(short_summary(result)) == sorted(
        [
            f"FAILED {NEW}::cancel-async-tasks - new improved: old=0.0 new=1.0",
            f"FAILED {NEW}::regex-log - new regressed: old=1.0 new=0.0",
        ]
    )


# --- 5 and 6. run from inside a results directory ---------------------------------------------------

RESULT_TASKS = [f"task-{i:03d}" for i in range(300)]
RESULT_FLIPS = ("task-007", "task-123", "task-250")


def results_dir(gate: Gate, fifo: bool = True) -> Path:
    """A results directory: both rollout files, a sidecar, 300 trial dirs whose logs look like failing
    doctests (`test-stdout.txt` matches pytest's default doctest glob `test*.txt`), and a FIFO
    named `test-fifo.txt` (without it, an in-process run cannot hang on it)."""
    results = gate.path / "results"
    results.mkdir()
    for i, task in enumerate(RESULT_TASKS):
        trial = results / f"trial-{i:03d}"
        trial.mkdir()
        (trial / "test-stdout.txt").write_text(f"{task} verifier\n>>> 1 + 1\n3\n")
    if fifo:
        os.mkfifo(results / "test-fifo.txt")
    old = [legacy_row(task, 1.0) for task in RESULT_TASKS]
    new = [
        harbor_row(task, 0.0 if task in RESULT_FLIPS else 1.0, index=i, logs_dir=f"trial-{i:03d}")
        for i, task in enumerate(RESULT_TASKS)
    ]
    new.append(harbor_row("task-299", None, index=299, rollout=1, mask_sample=True, failure_kind="sandbox"))
    (results / "old_rollouts.jsonl").write_text(dump(old), encoding="utf-8")
    (results / "new_rollouts.jsonl").write_text(dump(new), encoding="utf-8")
    (results / "new_rollouts_failures.jsonl").write_text(
        json.dumps(
            {
                "_ng_failure_class": "agent_run_error",
                "_ng_failure_message": "boom",
                "_ng_task_index": 300,
                "_ng_rollout_index": 0,
                "_ng_task_id": {"taskset": TASKSET, "task_id": "task-300"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return results


def by_name(result: pytest.RunResult) -> dict[str, str]:
    return {nodeid.rsplit("::", 1)[1]: outcome for nodeid, outcome in ran(result).items()}


@pytest.mark.slow
def test_results_directory_behaves_like_empty_directory(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    results = results_dir(gate)
    empty = gate.path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    outside = gate.run_subprocess(
        "--parity-old=../results/old_rollouts.jsonl", "--parity-new=../results/new_rollouts.jsonl", "-rA", "-vv"
    )
    monkeypatch.chdir(results)
    inside = gate.run_subprocess("--parity-old=old_rollouts.jsonl", "--parity-new=new_rollouts.jsonl", "-rA", "-vv")
    expected = {task: "PASSED" for task in RESULT_TASKS}
    expected.update({task: "FAILED" for task in RESULT_FLIPS})
    expected["task-299"] = "PASSED"  # its masked second row is left out: compared on the row that scored
    expected["task-300"] = "XFAIL"
    assert by_name(outside) == expected
    assert by_name(inside) == expected
    assert inside.ret == outside.ret == 1
    for result in (inside, outside):
        result.assert_outcomes(passed=297, failed=3, xfailed=1)
        assert "collected 301 items" in result.stdout.str()
        text = all_text(result).lower()
        assert "doctest" not in text and "test-fifo" not in text and "traceback" not in text
        assert "    | >>> 1 + 1" in result.outlines and "    | 3" in result.outlines
    assert section(inside)[3:] == section(outside)[3:]  # the file lines differ only in how paths are spelled


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of every file and directory under ``root`` (not ``root`` itself), by path."""
    entries = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            info = path.lstat()
            entries[path.relative_to(root).as_posix()] = (info.st_size, info.st_mtime_ns)
    return entries


def test_inputs_directory_never_written_to(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate's only write is --parity-json (pytest's own cache is turned off here)."""
    results = results_dir(gate, fifo=False)
    monkeypatch.chdir(results)
    before = snapshot(results)
    args = [
        "--parity-old=old_rollouts.jsonl",
        "--parity-new=new_rollouts.jsonl",
        "--parity-json=summary.json",
        "-p",
        "no:cacheprovider",
    ]
    first = gate.run(*args)
    assert first.ret == 1
    after_first = snapshot(results)
    inode_first = (results / "summary.json").stat().st_ino
    rerun = gate.run(*args)
    assert rerun.ret == 1
    after = snapshot(results)
    assert set(after_first) - set(before) == {"summary.json"}, sorted(set(after_first) - set(before))
    assert set(after) - set(before) == {"summary.json"}, sorted(set(after) - set(before))
    del after["summary.json"]
    assert after == before
    # written through a temporary file and a rename: the rerun's summary is a new inode
    assert (results / "summary.json").stat().st_ino != inode_first
    assert json.loads((results / "summary.json").read_text())["counts"]["tasks"] == 301


def test_pytest_cache_stays_where_pytest_puts_it(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate does not move pytest's cache: run from a results directory, --lf finds it there."""
    results = results_dir(gate, fifo=False)
    home_cache = gate.path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home_cache))
    monkeypatch.chdir(results)
    args = ["--parity-old=old_rollouts.jsonl", "--parity-new=new_rollouts.jsonl"]
    assert gate.run(*args).ret == 1
    assert (results / ".pytest_cache" / "v" / "cache" / "lastfailed").is_file()
    rerun = gate.run(*args, "--lf", "-rA", "-vv")
    assert set(by_name(rerun)) == set(RESULT_FLIPS)
    # nothing is kept outside pytest's cache: a full or missing user cache directory cannot matter
    assert not home_cache.exists()


def test_a_cache_dir_the_user_configures_is_kept(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    results = results_dir(gate, fifo=False)
    monkeypatch.chdir(results)
    args = ["--parity-old=old_rollouts.jsonl", "--parity-new=new_rollouts.jsonl", "-o", "cache_dir=my-cache"]
    assert gate.run(*args).ret == 1
    assert (results / "my-cache" / "v" / "cache" / "lastfailed").is_file()
    assert not (results / ".pytest_cache").exists()


def test_without_pytest_s_terminal_plugin_the_verdict_is_still_written(gate: Gate) -> None:
    """`-p no:terminal` takes pytest's `--tb` option away with its plugin: the gate reads it as unset."""
    result = gate.run(*gate.mixed(), "-p", "no:terminal", "--parity-json=summary.json")
    assert result.ret == 1 and "INTERNALERROR" not in all_text(result)
    assert json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))["verdict"] == "fail"

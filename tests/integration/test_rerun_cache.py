"""Reruns read nothing twice: the loaded sides and their comparison kept in pytest's cache, and
found there by xdist workers.

Whether a run read a rollouts file is observed by counting :func:`loading.load_side` (the one
function a side is read through in the gate's process, which every caller looks up at call time);
xdist workers, separate processes, get a refusing replacement from a conftest.py.
"""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.core.reading import loading
from pytest_rollout_parity.core.reading.loaded_side import FACT_FIELDS, SideRequest
from pytest_rollout_parity.plugin import rerun_cache

from .conftest import SMALL_RUN_BUDGET, Gate, failure_record, harbor_row, legacy_row, section
from .test_selection import ran

NEW = "new/rollouts.jsonl"
ENTRIES = ".pytest_cache/d/rollout-parity"


def entries(gate: Gate) -> list[Path]:
    directory = gate.path / ENTRIES
    return sorted(directory.glob("pair-*.json")) if directory.is_dir() else []


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sides read in this process from now on (each by path); reading still works."""
    seen: list[str] = []
    real = loading.load_side

    def counting(request: SideRequest, progress: Any = None) -> Any:
        seen.append(Path(request.path).name)
        return real(request, progress)

    monkeypatch.setattr(loading, "load_side", counting)  # the one name every read goes through
    return seen


def test_rerun_reads_no_row_and_gives_the_same_outcomes(gate: Gate, reads: list[str]) -> None:
    args = gate.mixed()
    first = gate.run(*args, "-rA", "-vv")
    assert len(reads) == 2 and len(entries(gate)) == 1
    reads.clear()
    for again in (
        gate.run(*args, "-rA", "-vv"),
        gate.run(*args, "-k", "regex-log", "-rA", "-vv"),
        gate.run(*args, "--lf", "-rA", "-vv"),
        gate.run(*args, f"{NEW}::fix-git", "-rA", "-vv"),
        gate.run(*args, "--collect-only", "-q"),
    ):
        assert again.ret in (0, 1)
        assert reads == []
    rerun = gate.run(*args, "-rA", "-vv")
    assert ran(rerun) == ran(first) and section(rerun) == section(first)
    assert reads == []


def test_the_collector_pauses_only_inside_the_gate_s_own_work(gate: Gate) -> None:
    """The collector is off while the gate builds its run and summary (:func:`run.collector_paused`),
    on for every test and hook; a process that runs with it off keeps it off."""
    gate.pytester.makeconftest(
        "import gc\n\n"
        "def pytest_runtestloop(session):\n    print('running', gc.isenabled())\n\n"
        "def pytest_collectreport(report):\n    print('gc at collect', report.nodeid or '-', gc.isenabled())\n"
    )
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0)])
    for _ in range(2):  # the first run, then the rerun from the cache entry
        result = gate.run(*args, "-s")
        assert result.ret == 0 and "running True" in result.stdout.lines
        collected = [line for line in result.stdout.lines if line.startswith("gc at collect ")]
        assert any(NEW.split("/")[-1] in line for line in collected), collected  # the gate's file reported
        assert collected and all(line.endswith(" True") for line in collected), collected
        assert gc.isenabled()
    gc.disable()
    try:
        assert gate.run(*args).ret == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_in_place_edit_keeping_size_and_mtime_is_seen(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0)])
    assert gate.run(*args).ret == 0
    path = gate.path / NEW
    before = os.stat(path)
    text = path.read_bytes()
    assert text.count(b'"reward": 1.0') == 1
    with open(path, "r+b") as handle:  # same bytes count, same inode
        handle.write(text.replace(b'"reward": 1.0', b'"reward": 0.0'))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    result = gate.run(*args, "-rA", "-vv")
    assert ran(result) == {f"{NEW}::fix-git": "FAILED"}


def test_an_edited_sidecar_or_metrics_file_is_seen(gate: Gate, reads: list[str]) -> None:
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0)])
    gate.run(*args)
    reads.clear()
    gate.write("new/rollouts_failures.jsonl", [])
    gate.run(*args)
    assert len(reads) == 2  # the pair is read again
    reads.clear()
    gate.write("old/rollouts_aggregate_metrics.json", "[]")
    gate.run(*args)
    assert len(reads) == 2


def test_the_sidecar_beside_a_symlinks_target_is_in_the_key(gate: Gate, reads: list[str]) -> None:
    """A symlinked side reads the sidecar beside its target: an edit there is seen too."""
    gate.write(NEW, [harbor_row("fix-git", 1.0)])
    gate.write("new/rollouts_failures.jsonl", [failure_record("regex-log", index=1, rollout=0)])
    (gate.path / "link.jsonl").symlink_to(gate.path / NEW)
    args = ("--parity-old=old/rollouts.jsonl", "--parity-new=link.jsonl", *SMALL_RUN_BUDGET)
    gate.write("old/rollouts.jsonl", [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)])
    gate.run(*args).assert_outcomes(passed=1, xfailed=1)
    reads.clear()
    gate.write("new/rollouts_failures.jsonl", [])
    gate.run(*args).assert_outcomes(passed=1, xfailed=1)
    assert "link.jsonl" in reads


def test_an_option_that_changes_loading_is_a_new_entry(gate: Gate, reads: list[str]) -> None:
    args = gate.mixed()
    gate.run(*args)
    reads.clear()
    gate.run(*args, "--parity-margin=0.05")  # changes judgements, not what is read
    assert reads == []
    gate.run(*args, "--parity-new-key=_ng_task_id")
    assert len(reads) == 2


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "foreign",
        "empty",
        "stale",
        "another pair's",
        "not JSON",
        "deep",
        "another shape",
        "a reward as text",
        "an offset past any file",
        "a negative offset",
    ],
)
def test_a_damaged_entry_is_rebuilt_never_trusted(gate: Gate, reads: list[str], damage: str) -> None:
    """Whatever the entry holds, the run reads the files and gives the same outcomes: no error, no
    traceback; the last three keep the current key, so their bodies are parsed and rejected."""
    args = gate.mixed()
    first = gate.run(*args, "-rA", "-vv")
    (entry,) = entries(gate)
    data = entry.read_bytes()
    key = data.partition(b"\n")[0]
    if damage == "another pair's":  # a valid entry of other files, under this entry's name
        other = gate.write("other/rollouts.jsonl", [harbor_row("zzz", 0.0)])
        gate.run(f"--parity-old={other}", f"--parity-new={other}", "--parity-allow-same-file")
        (data,) = [path.read_bytes() for path in entries(gate) if path != entry]
    body = json.loads(data.partition(b"\n")[2])

    def row_changed(field: str, value: object) -> bytes:  # every row of the old side
        for row in body["sides"][0]["facts"]:
            row[FACT_FIELDS.index(field)] = value
        return key + b"\n" + json.dumps(body).encode()

    damaged = {
        "a reward as text": lambda: row_changed("reward", "x"),
        "an offset past any file": lambda: row_changed("offset", 10**40),
        "a negative offset": lambda: row_changed("offset", -5),
    }.get(damage, lambda: b"")()
    damaged = (
        damaged
        or {
            "truncated": data[: len(data) // 2],
            "foreign": b"PK\x03\x04" + data[4:],
            "empty": b"",
            "stale": b'["an older key"]\n' + data.partition(b"\n")[2],
            "another pair's": data,
            "not JSON": key + b"\n{'sides': nan",
            "deep": key + b"\n" + b"[" * 200_000,
            "another shape": key + b'\n{"sides": [[1, 2], {"path": 3}], "comparison": 7}',
        }[damage]
    )
    entry.write_bytes(damaged)
    reads.clear()
    again = gate.run(*args, "-rA", "-vv")
    assert ran(again) == ran(first) and section(again) == section(first)
    assert "Traceback" not in again.stdout.str() + again.stderr.str()
    assert len(reads) == 2
    reads.clear()
    gate.run(*args)  # rebuilt: the next run reads nothing
    assert reads == []


def test_a_cache_that_cannot_be_written_keeps_the_verdict(
    gate: Gate, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk (every write of an entry fails) means no cache: the same outcomes, no error."""
    import errno

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    args = gate.mixed()
    first = gate.run(*args, "-rA", "-vv")
    monkeypatch.setattr(rerun_cache.tempfile, "mkstemp", full)
    for path in entries(gate):
        path.unlink()
    reads.clear()
    for _ in range(2):
        again = gate.run(*args, "-rA", "-vv")
        assert ran(again) == ran(first) and section(again) == section(first)
        assert "INTERNALERROR" not in again.stdout.str() + again.stderr.str()
    assert len(reads) == 4 and entries(gate) == []


def test_cache_clear_reads_again(gate: Gate, reads: list[str]) -> None:
    args = gate.mixed()
    gate.run(*args)
    reads.clear()
    gate.run(*args, "--cache-clear")
    assert len(reads) == 2
    reads.clear()
    gate.run(*args)
    assert reads == []


def test_without_cacheprovider_nothing_is_kept(gate: Gate, reads: list[str]) -> None:
    args = gate.mixed()
    first = gate.run(*args, "-p", "no:cacheprovider", "-rA", "-vv")
    second = gate.run(*args, "-p", "no:cacheprovider", "-rA", "-vv")
    assert ran(first) == ran(second) and len(ran(first)) == 7
    assert len(reads) == 4
    assert not (gate.path / ".pytest_cache").exists()


def test_the_cache_is_never_beside_the_inputs(gate: Gate) -> None:
    args = gate.mixed()
    listing = sorted(p.relative_to(gate.path) for p in (gate.path / "new").rglob("*"))
    gate.run(*args)
    assert sorted(p.relative_to(gate.path) for p in (gate.path / "new").rglob("*")) == listing
    assert sorted(p.name for p in (gate.path / "old").iterdir()) == ["rollouts.jsonl"]


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The comparisons made in this process from now on (each by the new side's file); comparing still works."""
    seen: list[str] = []
    real = rerun_cache.compare_loaded

    def counting(old: Any, new: Any, **keys: Any) -> Any:
        seen.append(Path(new.path).name)
        return real(old, new, **keys)

    monkeypatch.setattr(rerun_cache, "compare_loaded", counting)
    return seen


def test_rerun_compares_no_task_again(gate: Gate, comparisons: list[str]) -> None:
    """The comparison is kept beside the sides: a rerun (whole, -k, --lf) classifies nothing and
    reports the same; a changed input is compared again."""
    args = gate.mixed()
    first = gate.run(*args, "-rA", "-vv")
    assert comparisons == ["rollouts.jsonl"] and len(entries(gate)) == 1
    comparisons.clear()
    again = gate.run(*args, "-rA", "-vv")
    narrowed = gate.run(*args, "-k", "regex-log", "-rA", "-vv")
    gate.run(*args, "--lf", "-rA", "-vv")
    assert comparisons == []
    assert ran(again) == ran(first) and section(again) == section(first)
    assert ran(narrowed) == {f"{NEW}::regex-log": ran(first)[f"{NEW}::regex-log"]}
    margin = gate.run(*args, "--parity-margin=0.5", "-rA", "-vv")  # the options that judge do not matter
    assert comparisons == [] and margin.ret in (0, 1)
    (gate.path / NEW).write_text((gate.path / NEW).read_text() + "\n")
    gate.run(*args)
    assert comparisons == ["rollouts.jsonl"]


def test_a_damaged_comparison_is_made_again(gate: Gate, comparisons: list[str]) -> None:
    """A comparison of another shape under the current key is compared again, the sides still serve."""
    args = gate.mixed()
    first = gate.run(*args, "-rA", "-vv")
    (entry,) = entries(gate)
    key, _, body = entry.read_bytes().partition(b"\n")
    stored = json.loads(body)
    asked, comparison = stored["comparison"]
    # a task's category, its winner, a side's reward or mask text of another kind
    odd = [json.loads(json.dumps(comparison)) for _ in range(4)]
    odd[0]["tasks"][0][1] = "bogus"
    odd[1]["tasks"][0][4] = "both"
    flipped = next(i for i, task in enumerate(comparison["tasks"]) if task[1] == "flipped")
    odd[2]["tasks"][flipped][2][1] = "1.0"
    odd[3]["tasks"][flipped][3][2] = 7
    for damaged in ([asked, "x"], 7, None, [[], []], *([asked, each] for each in odd)):
        stored["comparison"] = damaged
        entry.write_bytes(key + b"\n" + json.dumps(stored).encode())
        comparisons.clear()
        again = gate.run(*args, "-rA", "-vv")
        assert comparisons == ["rollouts.jsonl"]
        assert ran(again) == ran(first) and section(again) == section(first)


NOTHING_READ_OR_COMPARED_IN_WORKERS = """
import pytest
from pytest_rollout_parity.core.reading import loading
from pytest_rollout_parity.plugin import rerun_cache


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if hasattr(config, "workerinput"):
        def refuse_reading(request, progress=None):
            raise RuntimeError("an xdist worker read " + request.path)
        def refuse_comparing(old, new, **keys):
            raise RuntimeError("an xdist worker compared " + str(new.path))
        loading.load_side = refuse_reading
        rerun_cache.compare_loaded = refuse_comparing
"""


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["cache", "no cache"])
def test_xdist_workers_read_no_file_and_compare_no_task(
    gate: Gate, cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker takes its controller's sides and their comparison: the same outcomes and one
    summary, and no worker reads a rollouts file or classifies a task. Without the cacheprovider the
    controller's temporary directory is removed when the run ends."""
    import tempfile

    pytest.importorskip("xdist")
    (gate.path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(gate.path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(gate.path / "tmp"))
    args = [*gate.mixed(), gate.beside()]
    extra = ["-p", "no:cacheprovider"] if cache == "no cache" else []
    serial = gate.run(*args, *extra, "-rA", "-vv")
    gate.pytester.makeconftest(NOTHING_READ_OR_COMPARED_IN_WORKERS)
    parallel = gate.run(*args, *extra, "-rA", "-vv", "-n", "2")
    assert "an xdist worker" not in parallel.stdout.str() + parallel.stderr.str()
    assert "created: 2/2 workers" in parallel.stdout.str()
    assert ran(parallel) == ran(serial) and len(ran(serial)) == 8
    assert section(parallel) == section(serial)
    assert list((gate.path / "tmp").iterdir()) == []  # the hand-over directory is removed


def test_one_file_under_another_name_is_compared_again(gate: Gate, comparisons: list[str]) -> None:
    """The comparison's notes name the sides as given: a file read once for both sides, named
    otherwise on the next run, is compared again under the new name (its side entry still serves)."""
    gate.mixed()
    same = ["--parity-old=new/rollouts.jsonl", "--parity-allow-same-file", "--parity-json=s.json"]
    gate.run(*same, f"--parity-new={NEW}")
    gate.run(*same, f"--parity-new={NEW}")
    assert comparisons == ["rollouts.jsonl"]
    renamed = gate.run(*same, "--parity-new=new/./rollouts.jsonl")
    assert comparisons == ["rollouts.jsonl", "rollouts.jsonl"]
    assert renamed.ret in (0, 1) and "new/./rollouts.jsonl" in (gate.path / "s.json").read_text()

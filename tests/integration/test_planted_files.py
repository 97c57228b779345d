"""Files a pull request can plant, tried as an attacker would: links, the cache, names, numbers, a bomb.

Each case plants its file, runs the gate, and checks three things: the secret it reaches for is in
no output (the terminal, the JSON and Markdown summaries, the step summary), the run ends with its
documented status (4 for a refused input; the ordinary 0/1 when the planted file is ignored), and
no input changed. docs/untrusted-input.md lists what is defended.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_rollout_parity.core.reading import jsonl_lines, loading, shards
from pytest_rollout_parity.core.reading import sidecar as sidecar_rules
from pytest_rollout_parity.plugin import rerun_cache

from .conftest import NEW, OLD, Gate, all_text, harbor_row, legacy_row, output_lines

SECRET = "SECRET-7f3a"
OUTPUTS = ("s.json", "s.md", "step.md")


@pytest.fixture
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory outside the project, holding what the runner can read but the gate must not publish."""
    place = tmp_path_factory.mktemp("elsewhere")
    (place / "secret.jsonl").write_text(
        "".join(json.dumps(harbor_row(f"{SECRET}-{i}", 1.0, index=i)) + "\n" for i in range(3))
    )
    (place / "sidecar.jsonl").write_text(
        json.dumps(
            {
                "_ng_task_id": {"taskset": "t", "task_id": "fix-git"},
                "_ng_task_index": 0,
                "_ng_rollout_index": 0,
                "_ng_failure_class": "environment_server_failed",
                "_ng_failure_message": f"{SECRET} root password",
            }
        )
        + "\n"
    )
    (place / "secret.json").write_text(json.dumps({SECRET: 1, "expected": 1}))
    return place


@pytest.fixture
def step(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = gate.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    return path


def inputs(root: Path) -> dict[str, Any]:
    """Every input under ``root`` (links as their targets' names, files by content and mtime)."""
    found: dict[str, Any] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".pytest_cache", ".cache", "runpytest-")) or rel in (*OUTPUTS, "stdout", "stderr"):
            continue  # pytest's cache, the outputs, and what pytester's subprocess writes
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_file():
            found[rel] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return found


def published(gate: Gate, result: pytest.RunResult) -> str:
    """Everything the run showed or wrote."""
    written = [(gate.path / name).read_text(errors="replace") for name in OUTPUTS if (gate.path / name).is_file()]
    return "\n".join([all_text(result), *written])


def run_planted(gate: Gate, *args: str, subprocess: bool = False) -> tuple[pytest.RunResult, str]:
    before = inputs(gate.path)
    run = gate.run_subprocess if subprocess else gate.run
    result = run(*args, "--parity-json=s.json", "--parity-markdown=s.md", "-rA")
    assert inputs(gate.path) == before  # no input changed
    text = published(gate, result)
    assert SECRET not in text
    assert "Traceback" not in text and "INTERNALERROR" not in text
    return result, text


def one_error(result: pytest.RunResult) -> str:
    lines = output_lines(result)
    assert result.ret == 4, lines
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), lines
    return lines[0]


def two_shards(gate: Gate) -> list[str]:
    gate.write(OLD, [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)])
    gate.write("new/shard-0.jsonl", [harbor_row("fix-git", 1.0, index=0)])
    gate.write("new/shard-2.jsonl", [harbor_row("regex-log", 1.0, index=1)])
    return [f"--parity-old={OLD}", "--parity-new=new/*.jsonl"]


# --- links stay home ---------------------------------------------------------------------------


def test_a_shard_linked_elsewhere_is_refused(gate: Gate, step: Path, elsewhere: Path) -> None:
    args = two_shards(gate)
    (gate.path / "new" / "shard-1.jsonl").symlink_to(elsewhere / "secret.jsonl")
    result, _ = run_planted(gate, *args)
    line = one_error(result)
    assert "'new/shard-1.jsonl', a link leading out of 'new'" in line
    assert not step.exists()


@pytest.mark.parametrize("sharded", [False, True])
def test_a_sidecar_linked_elsewhere_is_refused_before_anything_is_read(
    gate: Gate, step: Path, elsewhere: Path, monkeypatch: pytest.MonkeyPatch, sharded: bool
) -> None:
    if sharded:
        args = two_shards(gate)
        sidecar = gate.path / "new" / "shard-0_failures.jsonl"
    else:
        args = gate.mixed()
        sidecar = gate.path / "new" / "rollouts_failures.jsonl"
    sidecar.symlink_to(elsewhere / "sidecar.jsonl")
    for reader in (loading, sidecar_rules):  # every module that reads a side's lines
        monkeypatch.setattr(reader, "iter_objects", lambda *a, **k: pytest.fail("a row was read"))
    result, _ = run_planted(gate, *args)
    line = one_error(result)
    assert f"{sidecar.relative_to(gate.path).as_posix()}: a link leading out of its side's directory" in line


@pytest.mark.parametrize("companion", ["rollouts_coverage.json", "rollouts_aggregate_metrics.json"])
def test_a_coverage_or_metrics_file_linked_elsewhere_is_refused(
    gate: Gate, step: Path, elsewhere: Path, companion: str
) -> None:
    args = gate.mixed()
    (gate.path / "new" / companion).symlink_to(elsewhere / "secret.json")
    result, _ = run_planted(gate, *args)
    assert f"new/{companion}: a link leading out of its side's directory" in one_error(result)


def test_a_path_the_user_typed_is_followed_with_its_companions(
    gate: Gate, tmp_path_factory: pytest.TempPathFactory, step: Path
) -> None:
    """CI stages `new.jsonl -> /mnt/artifacts/...`: that link, and the sidecar beside its target, are used."""
    artifacts = tmp_path_factory.mktemp("artifacts")
    (artifacts / "run.jsonl").write_text(
        json.dumps(harbor_row("fix-git", 1.0, index=0))
        + "\n"
        + json.dumps(harbor_row("regex-log", 0.0, index=1))
        + "\n"
    )
    (artifacts / "run_failures.jsonl").write_text(
        json.dumps(
            {
                "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "regex-log"},
                "_ng_task_index": 1,
                "_ng_rollout_index": 1,
                "_ng_failure_class": "environment_server_failed",
                "_ng_failure_message": "sandbox did not start",
            }
        )
        + "\n"
    )
    gate.write(OLD, [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)])
    (gate.path / "new.jsonl").symlink_to(artifacts / "run.jsonl")
    result, _ = run_planted(gate, f"--parity-old={OLD}", "--parity-new=new.jsonl")
    assert result.ret == 1
    assert json.loads((gate.path / "s.json").read_text())["files"]["new"]["sidecar"] == str(
        artifacts / "run_failures.jsonl"
    )


@pytest.mark.slow
def test_a_recursive_glob_never_enters_a_linked_directory(gate: Gate, step: Path) -> None:
    args = two_shards(gate)
    (gate.path / "new" / "a").symlink_to(".")
    (gate.path / "new" / "b").symlink_to("..")
    result, _ = run_planted(gate, f"--parity-old={OLD}", "--parity-new=new/**/*.jsonl", subprocess=True)
    assert args[0] == f"--parity-old={OLD}" and result.ret == 0
    assert json.loads((gate.path / "s.json").read_text())["files"]["new"]["shards"] == 2


def test_a_pattern_matching_too_many_files_is_refused(gate: Gate, step: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "MAX_MATCHES", 3)
    two_shards(gate)
    for i in range(3, 6):
        gate.write(f"new/shard-{i}.jsonl", [harbor_row(f"t{i}", 1.0, index=i)])
    result, _ = run_planted(gate, f"--parity-old={OLD}", "--parity-new=new/*.jsonl")
    assert "matches more than 3 files: name the shards by a narrower pattern" in one_error(result)


def test_the_documented_match_limit_is_the_code_s() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "untrusted-input.md").read_text()
    assert f"{shards.MAX_MATCHES:,}" in docs


# --- the cache cannot be turned into input --------------------------------------------------------


def test_a_planted_cache_entry_is_never_parsed(gate: Gate, step: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry's name and most of its key are computable offline, the inputs' inodes and change
    times are not: a planted entry keyed with a guess never reaches the JSON parser, the run reads
    the files, and the entry is rebuilt."""
    args = gate.mixed()
    first = gate.run(*args)
    directory = gate.path / ".pytest_cache" / "d" / "rollout-parity"
    (entry,) = directory.glob("pair-*.json")
    key = entry.read_bytes().partition(b"\n")[0]
    guessed = json.loads(key)
    for side in guessed[3]:
        for state in side:
            if len(state) == 7:
                state[3] += 1  # another inode: what a checkout of the planter's own files had
    bomb = json.dumps(guessed).encode() + b"\n" + b"[" * 100_000
    entry.write_bytes(bomb)
    parsed: list[Any] = []

    def watching(data: Any) -> Any:
        parsed.append(data)
        return json.loads(data)

    monkeypatch.setattr(rerun_cache, "json", SimpleNamespace(loads=watching, dumps=json.dumps))
    result, _ = run_planted(gate, *args)
    assert result.ret == 1 and result.parseoutcomes() == first.parseoutcomes()
    assert parsed == []  # the planted body was never parsed
    assert entry.read_bytes().partition(b"\n")[0] == key  # rebuilt under the real key
    gate.run(*args)
    assert len(parsed) == 1  # the watch sees a body the parser does read: the rebuilt entry's


# --- names are data ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["0\n::error title=Forged::all good.jsonl", "shard\u200b.jsonl", "shard\u202e.jsonl", "shard\U000e0041.jsonl"],
    ids=["workflow-command", "zero-width", "bidi-override", "tag"],
)
def test_a_shard_name_with_a_control_or_invisible_character_is_refused(gate: Gate, step: Path, name: str) -> None:
    two_shards(gate)
    gate.write(f"new/{name}", [harbor_row("regex-log", 1.0, index=1)])
    result, text = run_planted(gate, f"--parity-old={OLD}", "--parity-new=new/*.jsonl")
    line = one_error(result)
    assert "a name holding a control or invisible character" in line
    assert all(not raw.lstrip().startswith("::") for raw in text.splitlines())
    assert name not in line  # quoted escaped


def test_invisible_characters_in_task_ids_are_shown_escaped(gate: Gate, step: Path) -> None:
    old = [legacy_row("deploy", 1.0), legacy_row("deploy\u200b", 1.0), legacy_row("ship\u2060it\u00ad", 1.0)]
    new = [
        harbor_row("deploy", 1.0, index=0),
        harbor_row("deploy\u200b", 0.0, index=1),
        harbor_row("ship\u2060it\u00ad", 0.0, index=2),
    ]
    result, _ = run_planted(gate, *gate.pair(old, new))
    assert result.ret == 1
    terminal = result.stdout.str()
    assert "deploy\\u200b" in terminal and "ship\\u2060it\\xad" in terminal
    assert "\u200b" not in terminal and "\u2060" not in terminal and "\u00ad" not in terminal
    markdown = step.read_text()
    assert "\u200b" not in markdown and "deploy\\u200b" in html.unescape(markdown)
    tasks = {task["task"] for task in json.loads((gate.path / "s.json").read_text())["tasks"]}
    assert {"deploy\u200b", "ship\u2060it\u00ad"} <= tasks  # the JSON keeps ids as they are


# --- numbers and decompression bounded -----------------------------------------------------------


def test_a_coverage_count_out_of_range_is_a_note(gate: Gate, step: Path) -> None:
    args = gate.mixed()
    counts = dict.fromkeys(
        ("successful", "measured", "masked", "unscored", "failed", "intentionally_omitted", "unknown"), 0
    )
    body = json.dumps({**counts, "expected": 0}).replace('"expected": 0', '"expected": 1' + "0" * 400)
    gate.write("new/rollouts_coverage.json", body)
    result, _ = run_planted(gate, *args)
    assert result.ret == 1
    assert (
        "note: new side: new/rollouts_coverage.json ignored: `expected` is out of range (got a number of 401 "
        "digits, at most 1000000000000)" in result.outlines
    )


def test_a_recorded_mean_out_of_range_is_a_note(gate: Gate, step: Path) -> None:
    args = gate.mixed()
    gate.write("new/rollouts_aggregate_metrics.json", '[{"agent_metrics": {"mean/reward": 1' + "0" * 400 + "}}]")
    result, _ = run_planted(gate, *args)
    assert result.ret == 1
    assert any(
        line.startswith("note: new side: new/rollouts_aggregate_metrics.json ignored: its mean/reward is out of range")
        for line in result.outlines
    )


@pytest.mark.parametrize("side", ["old", "new"])
def test_a_compressed_side_of_one_huge_line_is_refused_at_the_cap(gate: Gate, step: Path, side: str) -> None:
    """A few hundred kilobytes of gzip that decompress to one line past the cap: an input error at
    the cap, not the line held whole (the old side is read in a child process, the new one here)."""
    old = [legacy_row("fix-git", 1.0)]
    new = [harbor_row("fix-git", 1.0, index=0)]
    args = gate.pair(old, new)
    line = b'{"x": "' + b"a" * (jsonl_lines.MAX_LINE + 1) + b'"}\n'
    target = OLD if side == "old" else NEW
    (gate.path / f"{target}.gz").write_bytes(gzip.compress(line, compresslevel=9))
    args = [a.replace(target, f"{target}.gz") for a in args]
    result, _ = run_planted(gate, *args)
    lines = output_lines(result)
    assert result.ret == 4, lines
    assert any(f"{target}.gz:1: a line longer than 64 MiB (counted decompressed)" in entry for entry in lines), lines

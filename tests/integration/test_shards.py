"""A side given as shards: a glob or comma-separated globs, each file read with its own sidecar."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    SMALL_RUN_BUDGET,
    Gate,
    assert_one_error,
    failure_record,
    harbor_row,
    legacy_row,
    markdown_as_read,
    output_lines,
    section,
)
from .test_rerun_cache import reads  # noqa: F401 - the fixture counting the sides read

REAL = Path(__file__).resolve().parents[1] / "data" / "real_files"
BIGCODEBENCH = REAL / "resources_servers" / "bigcodebench" / "data" / "example_rollouts.jsonl"
FLORES = REAL / "benchmarks" / "flores200" / "data" / "example_rollouts.jsonl"
#: the real file's rows split into three runs, as a sharded collection writes them
SPLIT = ((0, 2), (2, 4), (4, 5))


def real_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def failed_rollout(row: dict[str, Any], index: int) -> dict[str, Any]:
    """A failures-sidecar record of the row's task: a second rollout that did not finish."""
    record = {name: row[name] for name in ("task_id",) if name in row}
    record.update(
        {
            "_ng_task_index": index,
            "_ng_rollout_index": 1,
            "_ng_failure_class": "environment_server_failed",
            "_ng_failure_message": "sandbox did not start",
        }
    )
    return record


def write_whole_and_shards(gate: Gate, source: Path, side: str) -> tuple[str, str]:
    """``source``'s rows as one file with its sidecar, and as three shard files with theirs (task
    indices restarting at 0 in each, as each run numbers its own inputs). Returns both arguments."""
    rows = real_rows(source)
    records = [failed_rollout(rows[0], rows[0]["_ng_task_index"]), failed_rollout(rows[3], rows[3]["_ng_task_index"])]
    gate.write(f"{side}/whole.jsonl", rows)
    gate.write(f"{side}/whole_failures.jsonl", records)
    for number, (start, end) in enumerate(SPLIT):
        shard = [dict(row, _ng_task_index=i) for i, row in enumerate(rows[start:end])]
        gate.write(f"{side}/shards/part-{number}.jsonl", shard)
        own = [failed_rollout(row, i) for i, row in enumerate(rows[start:end]) if row is rows[0] or row is rows[3]]
        if own:
            gate.write(f"{side}/shards/part-{number}_failures.jsonl", own)
    return f"{side}/whole.jsonl", f"{side}/shards/part-*.jsonl"


def perturbed(source: Path) -> list[dict[str, Any]]:
    """The real rows with the third row's reward flipped and the fifth masked: a new run that differs."""
    rows = real_rows(source)
    rows[2]["reward"] = 1.0 - rows[2]["reward"]
    rows[4]["mask_sample"] = True
    return rows


def run_json(gate: Gate, old: str, new: str, name: str, *extra: str) -> tuple[int, dict[str, Any], list[str]]:
    result = gate.run(
        f"--parity-old={old}",
        f"--parity-new={new}",
        f"--parity-json={name}.json",
        f"--parity-markdown={name}.md",
        "-rA",
        *extra,
    )
    assert "Traceback" not in result.stdout.str()
    return int(result.ret), json.loads((gate.path / f"{name}.json").read_text()), result.outlines


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """What a sharded side must leave as it was: counts, rows, verdicts (not the files' names)."""
    return {
        name: summary[name] for name in ("counts", "rows", "tasks", "paired", "verdict", "coverage") if name in summary
    }


@pytest.mark.parametrize("source", [BIGCODEBENCH, FLORES], ids=["bigcodebench", "flores200"])
@pytest.mark.parametrize("sharded", ["old", "new"])
def test_a_real_file_in_three_shards_gives_the_verdict_of_the_whole_file(
    gate: Gate, source: Path, sharded: str
) -> None:
    whole, shards = write_whole_and_shards(gate, source, sharded)
    other = "new" if sharded == "old" else "old"
    gate.write(f"{other}/rollouts.jsonl", perturbed(source))
    pair = (
        (lambda mine: (mine, f"{other}/rollouts.jsonl"))
        if sharded == "old"
        else (lambda mine: (f"{other}/rollouts.jsonl", mine))
    )
    ret_whole, one, _ = run_json(gate, *pair(whole), "whole")
    ret_shards, split, lines = run_json(gate, *pair(shards), "shards")
    assert ret_shards == ret_whole == 1
    # the flip, the masked row and two tasks with a failed second rollout, in both forms alike: the
    # failed rollout is left out and its task compared on the rollout that scored
    assert one["counts"]["flipped"] == 1 and one["counts"]["masked"] == 1
    assert sorted(t[sharded]["masked_rows"] for t in one["tasks"] if t[sharded] is not None)[-2:] == [1, 1]
    assert one["rows"][sharded] == 7  # five rows and two sidecar records, in one file or across three
    if source == FLORES:  # indexed only: the shards join on the prompt, the one file on _ng_task_index
        assert any(line.endswith("_ng_task_index restarts in every shard)") for line in lines)
        for summary in (one, split):
            summary.pop("tasks")
            summary["counts"].pop("tasks", None)
    assert comparable(split) == comparable(one)
    assert split["files"][sharded]["shards"] == 3 and split["files"][sharded]["sidecars"] == 2
    assert one["files"][sharded]["shards"] == 1
    assert any(line.startswith(f"{sharded}: {shards} (3 shards, 2 sidecars): 5 tasks, 7 rows") for line in lines)
    markdown = markdown_as_read(gate.path / "shards.md")  # data is escaped as entities there
    assert f"- {sharded}: {shards} (3 shards, 2 sidecars): 5 tasks, 7 rows" in markdown


def test_task_indices_restart_in_every_shard(gate: Gate) -> None:
    """Index 0 of two shards names two tasks: the sharded side is keyed on the prompt, not merged."""
    rows = real_rows(FLORES)
    gate.write("old/a.jsonl", rows[:2])
    gate.write("old/b.jsonl", [dict(row, _ng_task_index=i) for i, row in enumerate(rows[2:])])
    gate.write("new/rollouts.jsonl", rows)
    ret, summary, lines = run_json(gate, "old/*.jsonl", "new/rollouts.jsonl", "s")
    assert ret == 0
    assert summary["counts"]["tasks"] == 5 and summary["counts"]["identical"] == 5
    assert any(
        "key responses_create_params.input (the prompt: no task id field on every row, and "
        "_ng_task_index restarts in every shard)" in line
        for line in lines
    )


def test_a_named_task_index_is_qualified_by_its_shard(gate: Gate) -> None:
    rows = real_rows(FLORES)
    for side in ("old", "new"):
        gate.write(f"{side}/a.jsonl", rows[:2])
        gate.write(f"{side}/b.jsonl", [dict(row, _ng_task_index=i) for i, row in enumerate(rows[2:])])
    ret, summary, _ = run_json(
        gate, "old/*.jsonl", "new/*.jsonl", "s", "--parity-key=_ng_task_index", "--parity-allow-copy"
    )  # both sides the same rows, on purpose
    assert ret == 0
    assert sorted(task["task"] for task in summary["tasks"]) == ["1:0", "1:1", "2:0", "2:1", "2:2"]


def test_literal_names_with_comma_star_and_bracket_are_taken_as_given(gate: Gate) -> None:
    odd = "old/run,a*[1].jsonl"
    gate.write(odd, [legacy_row("fix-git", 1.0), legacy_row("regex-log", 0.0)])
    gate.write("old/run,a-other[1].jsonl", [legacy_row("not-me", 1.0)])  # what the name as a pattern would match
    gate.write("new/rollouts.jsonl", [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)])
    ret, summary, lines = run_json(gate, odd, "new/rollouts.jsonl", "s")
    assert ret == 0
    assert summary["counts"]["tasks"] == 2 and summary["files"]["old"]["shards"] == 1
    assert summary["files"]["old"]["file"] == odd
    assert any(line.startswith(f"old: {odd}: 2 tasks") for line in lines)


def test_a_name_holding_a_comma_is_literal_only_as_the_whole_value(gate: Gate) -> None:
    gate.write("old/a,b.jsonl", [legacy_row("fix-git", 1.0)])
    gate.write("old/c.jsonl", [legacy_row("regex-log", 1.0)])
    gate.write("new/rollouts.jsonl", [harbor_row("fix-git", 1.0), harbor_row("regex-log", 1.0, index=1)])
    line = assert_one_error(gate, "--parity-old=old/c.jsonl,old/a,b.jsonl", "--parity-new=new/rollouts.jsonl")
    assert line == "ERROR: --parity-old: 'old/a' matches no rollouts file"
    ret, summary, _ = run_json(gate, "old/c.jsonl,old/a?b.jsonl", "new/rollouts.jsonl", "s")
    assert ret == 0 and summary["files"]["old"]["shards"] == 2 and summary["counts"]["identical"] == 2


def test_a_pattern_matching_nothing_is_a_usage_error(gate: Gate) -> None:
    gate.write("new/rollouts.jsonl", [harbor_row("fix-git", 1.0)])
    gate.write("old/a.jsonl", [legacy_row("fix-git", 1.0)])
    line = assert_one_error(gate, "--parity-old=old/nothing-*.jsonl", "--parity-new=new/rollouts.jsonl")
    assert line == "ERROR: --parity-old: 'old/nothing-*.jsonl' matches no rollouts file"
    line = assert_one_error(gate, "--parity-old=old/a.jsonl,old/gone-*.jsonl", "--parity-new=new/rollouts.jsonl")
    assert line == "ERROR: --parity-old: 'old/gone-*.jsonl' matches no rollouts file"


def test_artifacts_are_never_shards(gate: Gate) -> None:
    gate.write("old/run-0.jsonl", [harbor_row("fix-git", 1.0)])
    gate.write("old/run-1.jsonl", [harbor_row("regex-log", 0.0)])
    gate.write("old/run-1_failures.jsonl", [failure_record("regex-log", index=0, rollout=1)])
    for artifact in ("run-0_materialized_inputs.jsonl", "run-0_attempts.jsonl", "run-0_reward_profiling.jsonl"):
        gate.write(f"old/{artifact}", [{"responses_create_params": {"input": "x"}, "reward": 1.0}])
    for artifact in ("run-0_aggregate_metrics.json", "run-0_coverage.json", "run-0_manifest.json"):
        gate.write(f"old/{artifact}", "{}")
    gate.write("new/rollouts.jsonl", [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)])
    ret, summary, _ = run_json(gate, "old/*", "new/rollouts.jsonl", "s")
    assert ret == 0
    assert summary["files"]["old"]["shards"] == 2 and summary["files"]["old"]["sidecars"] == 1
    assert summary["rows"]["old"] == 3 and summary["counts"]["tasks"] == 2
    line = assert_one_error(gate, "--parity-old=old/*_*.json*", "--parity-new=new/rollouts.jsonl")
    assert line.startswith(
        "ERROR: --parity-old: 'old/*_*.json*' matches no rollouts file (only files that are "
        "no rollouts: old/run-0_aggregate_metrics.json, "
    )
    line = assert_one_error(
        gate, "--parity-old=old/run-0.jsonl,old/run-1_failures.jsonl", "--parity-new=new/rollouts.jsonl"
    )
    assert line == (
        "ERROR: --parity-old: 'old/run-1_failures.jsonl' is no rollouts file (a shard's sidecar is read with its shard)"
    )


def test_a_file_on_both_sides_is_the_same_file_error(gate: Gate) -> None:
    gate.write("runs/a.jsonl", [legacy_row("fix-git", 1.0)])
    gate.write("runs/b.jsonl", [legacy_row("regex-log", 1.0)])
    os.link(gate.path / "runs" / "b.jsonl", gate.path / "b-link.jsonl")
    line = assert_one_error(gate, "--parity-old=runs/*.jsonl", "--parity-new=b-link.jsonl")
    assert line == (
        "ERROR: --parity-old and --parity-new name the same file (b-link.jsonl): a file compared with "
        "itself shows nothing; give --parity-allow-same-file for a smoke test"
    )
    line = assert_one_error(gate, "--parity-old=runs/a.jsonl", "--parity-new=runs/b.jsonl,runs/a.jsonl")
    assert "name the same file (runs/a.jsonl)" in line


def test_flip_message_and_fixture_read_the_row_from_its_own_shard(gate: Gate) -> None:
    gate.log("new/logs/s-regex", [f"regex line {i}" for i in range(1, 31)])
    old = [legacy_row(name, 1.0) for name in ("fix-git", "regex-log")]
    gate.write("old/rollouts.jsonl", old)
    gate.write("new/shard-0.jsonl", [harbor_row("fix-git", 1.0, index=0, logs_dir="logs/none")])
    gate.write("new/shard-1.jsonl", [harbor_row("regex-log", 0.0, index=0, logs_dir="logs/s-regex")])
    gate.write(
        "test_pair.py",
        (
            "def test_pair(rollout_pair):\n"
            "    (row,) = rollout_pair.new.rows\n"
            "    assert row['_ng_task_id']['task_id'] == rollout_pair.task\n"
        ),
    )
    result = gate.run(
        "--parity-old=old/rollouts.jsonl", "--parity-new=new/shard-*.jsonl", "-rA", "test_pair.py", "new/shard-0.jsonl"
    )
    assert "regex-log: new regressed: old=1.0 new=0.0" in result.outlines
    assert "    | regex line 30" in result.outlines
    assert "Traceback" not in result.stdout.str()
    result.assert_outcomes(passed=3, failed=1)


def ran(result: pytest.RunResult) -> dict[str, str]:
    return {
        line.split(" ", 1)[1].split(" - ", 1)[0]: line.split(" ", 1)[0]
        for line in result.outlines
        if line.startswith(("PASSED ", "FAILED ", "XFAIL ", "SKIPPED ", "ERROR "))
    }


def test_reruns_and_cache_on_a_sharded_side(gate: Gate, reads: list[str]) -> None:  # noqa: F811
    gate.write("old/rollouts.jsonl", [legacy_row(name, 1.0) for name in ("fix-git", "cancel", "regex-log")])
    gate.write("new/shard-0.jsonl", [harbor_row("fix-git", 1.0, index=0), harbor_row("cancel", 1.0, index=1)])
    gate.write("new/shard-1.jsonl", [harbor_row("regex-log", 0.0, index=0)])
    args = ["--parity-old=old/rollouts.jsonl", "--parity-new=new/shard-*.jsonl", "-rA"]
    first = gate.run(*args)
    assert first.ret == 1
    assert ran(first) == {
        "new/shard-0.jsonl::fix-git": "PASSED",
        "new/shard-0.jsonl::cancel": "PASSED",
        "new/shard-0.jsonl::regex-log": "FAILED",
    }
    assert len(list((gate.path / ".pytest_cache" / "d" / "rollout-parity").glob("pair-*.json"))) == 1
    assert reads == ["rollouts.jsonl", "shard-0.jsonl"]
    reads.clear()
    assert ran(gate.run(*args, "--lf")) == {"new/shard-0.jsonl::regex-log": "FAILED"}
    assert ran(gate.run(*args, "-k", "cancel")) == {"new/shard-0.jsonl::cancel": "PASSED"}
    assert reads == []  # both sides from the cache
    # an edit to the second shard (not the first, whose path names the items) is seen
    gate.write("new/shard-1.jsonl", [harbor_row("regex-log", 1.0, index=0)])
    again = gate.run(*args, "--lf")
    assert again.ret == 0 and ran(again) == {"new/shard-0.jsonl::regex-log": "PASSED"}
    assert reads == ["rollouts.jsonl", "shard-0.jsonl"]  # the pair is read again
    # a shard's new sidecar too: its record joins the side as a masked row
    gate.write("new/shard-1_failures.jsonl", [failure_record("late", index=1, rollout=0)])
    assert gate.run(*args, "--parity-json=s.json").ret == 0
    assert json.loads((gate.path / "s.json").read_text())["rows"]["new"] == 4
    assert reads == ["rollouts.jsonl", "shard-0.jsonl"] * 2


@pytest.mark.slow
def test_xdist_on_sharded_sides(gate: Gate) -> None:
    gate.write("old/a.jsonl", [legacy_row("fix-git", 1.0), legacy_row("cancel", 1.0)])
    gate.write("old/b.jsonl", [legacy_row("regex-log", 1.0)])
    gate.write("new/shard-0.jsonl", [harbor_row("fix-git", 1.0, index=0)])
    gate.write("new/shard-1.jsonl", [harbor_row("cancel", 1.0, index=0), harbor_row("regex-log", 0.0, index=1)])
    args = [
        "--parity-old=old/a.jsonl,old/b.jsonl",
        "--parity-new=new/shard-*.jsonl",
        gate.beside(),
        "-rA",
        "-vv",
        "-p",
        "no:cacheprovider",
    ]
    serial = gate.run(*args, "--parity-json=serial.json")
    parallel = gate.run(*args, "--parity-json=xdist.json", "-n", "2")
    assert serial.ret == parallel.ret == 1
    assert "created: 2/2 workers" in parallel.stdout.str()
    assert ran(parallel) == ran(serial) and len(ran(serial)) == 4
    assert section(parallel) == section(serial)
    assert json.loads((gate.path / "xdist.json").read_text()) == json.loads((gate.path / "serial.json").read_text())
    assert "Traceback" not in parallel.stdout.str()


def test_ini_keys_take_globs_resolved_against_the_ini_file(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    gate.write("runs/old/a.jsonl", [legacy_row("fix-git", 1.0)])
    gate.write("runs/old/b.jsonl", [legacy_row("regex-log", 0.0)])
    gate.write("runs/new/a.jsonl", [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)])
    gate.write("pytest.ini", "[pytest]\nparity_old = runs/old/*.jsonl\nparity_new = runs/new/*.jsonl\n")
    sub = gate.path / "elsewhere"
    sub.mkdir()
    monkeypatch.chdir(sub)
    result = gate.run("-c", str(gate.path / "pytest.ini"), "--parity-json=s.json", "--rootdir", str(gate.path))
    assert result.ret == 0, output_lines(result)
    summary = json.loads((sub / "s.json").read_text())
    assert summary["files"]["old"]["shards"] == 2 and summary["files"]["new"]["shards"] == 1
    assert summary["files"]["old"]["file"] == "runs/old/*.jsonl"


def test_metrics_and_coverage_files_are_taken_per_shard(gate: Gate) -> None:
    def rows(rewards: dict[str, float]) -> list[dict[str, Any]]:
        return [{"task_id": t, "reward": r, "agent_ref": {"name": "simple_agent"}} for t, r in rewards.items()]

    def metrics(mean: float) -> str:
        return json.dumps([{"agent_ref": {"name": "simple_agent"}, "agent_metrics": {"mean/reward": mean}}])

    def coverage(measured: int, unknown: int = 0) -> str:
        return json.dumps(
            {
                "expected": measured + unknown,
                "successful": measured,
                "measured": measured,
                "masked": 0,
                "unscored": 0,
                "failed": 0,
                "intentionally_omitted": 0,
                "unknown": unknown,
            }
        )

    gate.write("old/rollouts.jsonl", rows({"a": 1.0, "b": 0.0, "c": 1.0}))
    gate.write("new/s-0.jsonl", rows({"a": 1.0, "b": 0.0}))
    gate.write("new/s-0_aggregate_metrics.json", metrics(0.5))
    gate.write("new/s-0_coverage.json", coverage(2))
    gate.write("new/s-1.jsonl", rows({"c": 1.0}))
    gate.write("new/s-1_aggregate_metrics.json", metrics(0.0))  # stale: its one row has 1.0
    gate.write("new/s-1_coverage.json", coverage(1, unknown=1))
    ret, summary, lines = run_json(
        gate, "old/rollouts.jsonl", "new/s-*.jsonl", "s", "--parity-allow-copy", *SMALL_RUN_BUDGET
    )
    assert ret == 0
    new = summary["aggregate_metrics"]["new"]
    assert new["file"] == "new/s-0_aggregate_metrics.json, new/s-1_aggregate_metrics.json"
    assert new["rows"] == 3 and new["computed_mean"] == pytest.approx(2 / 3)
    assert new["recorded_mean"] == pytest.approx(1 / 3)  # 0.5 over two rows, 0.0 over one
    assert new["note"].startswith(
        "new side: new/s-1_aggregate_metrics.json records a mean reward of 0.0, the rows give 1.0 over 1 row(s)"
    )
    inventory = summary["inventory"]["new"]
    assert inventory["files"] == ["new/s-0_coverage.json", "new/s-1_coverage.json"]
    counts = inventory["counts"]
    assert counts["measured"] == 3 and counts["unknown"] == 1 and counts["expected"] == 4
    assert any(line.startswith("note: new side: new/s-1_aggregate_metrics.json records") for line in lines)


def _health_check_run(gate: Gate) -> list[dict[str, Any]]:
    """new/ as `gym eval health-check` and other producers leave it: the rollouts (task 0 lost its
    reward), the health check's verdicts (task 0's rollout `unhealthy`) and summary, an `--echo`
    items file and a `--prompt` task file."""
    rows = real_rows(BIGCODEBENCH)
    new = [dict(rows[0], reward=0.0), *rows[1:]]
    gate.write("new/rollouts.jsonl", new)
    verdicts = [
        {"_ng_task_index": row["_ng_task_index"], "_ng_rollout_index": row.get("_ng_rollout_index", 0), "verdict": v}
        for row, v in zip(new, ["unhealthy"] + ["healthy"] * (len(new) - 1))
    ]
    gate.write("new/rollout_verdicts.jsonl", verdicts)
    gate.write("new/quality_summary.json", json.dumps({"run": {"verdicts": {}}, "tasks": {}}, indent=2))
    gate.write("new/rollouts_items.jsonl", [{"type": "message", "role": "assistant", "content": []}])
    gate.write("new/rollouts_task.jsonl", [{"responses_create_params": rows[0]["responses_create_params"]}])
    return rows


def test_a_glob_leaves_the_health_checks_files_out_and_its_verdicts_are_no_evidence(gate: Gate) -> None:
    rows = _health_check_run(gate)
    gate.write("old/rollouts.jsonl", rows)
    result = gate.run("--parity-old=old/rollouts.jsonl", "--parity-new=new/*.jsonl", "-p", "no:randomly")
    # the lost reward fails as a flip: an `unhealthy` verdict beside it masks nothing
    assert result.ret == 1
    result.assert_outcomes(passed=len(rows) - 1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*new side: its glob also matched files that are no rollouts, left out: new/rollout_verdicts.jsonl "
            "(the health check's per-rollout verdicts (gym eval health-check)); new/rollouts_items.jsonl (the --echo "
            "output*; new/rollouts_task.jsonl (the task written for --prompt*"
        ]
    )


@pytest.mark.parametrize(
    "name, what",
    [
        ("rollout_verdicts.jsonl", "the health check's per-rollout verdicts (gym eval health-check), not rollouts"),
        ("quality_summary.json", "the health check's quality summary (gym eval health-check), not rollouts"),
        ("rollouts_items.jsonl", "the --echo output (Responses API items, <stem>_items.jsonl), not rollouts"),
        ("rollouts_task.jsonl", "the task written for --prompt (<stem>_task.jsonl), not rollouts"),
    ],
)
def test_a_file_written_beside_the_rollouts_given_as_a_side_is_named(gate: Gate, name: str, what: str) -> None:
    gate.write("old/rollouts.jsonl", _health_check_run(gate))
    line = assert_one_error(gate, "--parity-old=old/rollouts.jsonl", f"--parity-new=new/{name}")
    assert line.startswith(f"ERROR: new/{name}: {what}"), line

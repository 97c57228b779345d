"""Expanding a side given as shards, and reading one: core/reading/shards.py and loading.load_side."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.core.errors import CompareInputError
from pytest_rollout_parity.core.reading import parallel
from pytest_rollout_parity.core.reading.loaded_side import SideRequest, plain_facts
from pytest_rollout_parity.core.reading.loading import load_side
from pytest_rollout_parity.core.reading.shards import ShardPatternError, expand, is_artifact

FLORES = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "real_files"
    / "benchmarks"
    / "flores200"
    / "data"
    / "example_rollouts.jsonl"
)


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_globs_and_lists_give_a_sorted_deduplicated_list(tmp_path: Path) -> None:
    for name in ("a/r-2.jsonl", "a/r-10.jsonl", "b/r-1.jsonl.gz", "a/r-2_failures.jsonl"):
        touch(tmp_path / name)
    files = expand("b/*.jsonl*,a/*.jsonl,a/r-2.jsonl,./a/r-2.jsonl", tmp_path)
    assert [shown for _, shown in files] == ["a/r-10.jsonl", "a/r-2.jsonl", "b/r-1.jsonl.gz"]
    assert files[0][0] == tmp_path / "a" / "r-10.jsonl"


def test_a_plain_path_is_one_file_whether_or_not_it_exists(tmp_path: Path) -> None:
    assert expand("gone.jsonl", tmp_path) == [(tmp_path / "gone.jsonl", "gone.jsonl")]
    odd = touch(tmp_path / "x,y*[1].jsonl")
    assert expand("x,y*[1].jsonl", tmp_path) == [(odd, "x,y*[1].jsonl")]
    assert expand(str(odd), Path("/nowhere")) == [(odd, str(odd))]


def test_absolute_patterns_and_no_match(tmp_path: Path) -> None:
    touch(tmp_path / "r.jsonl")
    assert expand(f"{tmp_path}/*.jsonl", Path("/nowhere")) == [(tmp_path / "r.jsonl", f"{tmp_path}/r.jsonl")]
    with pytest.raises(ShardPatternError, match=r"^'q\*\.jsonl' matches no rollouts file$"):
        expand("q*.jsonl", tmp_path)
    with pytest.raises(ShardPatternError, match="names no file"):
        expand(",", tmp_path)


@pytest.mark.parametrize(
    "name",
    [
        "r_failures.jsonl",
        "r_materialized_inputs.jsonl",
        "r_attempts.jsonl",
        "r_reward_profiling.jsonl",
        "r_aggregate_metrics.json",
        "r_coverage.json",
        "r_manifest.json",
        "r_failures.jsonl.gz",
    ],
)
def test_artifacts(name: str) -> None:
    assert is_artifact(name)


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz", "failures.jsonl", "r_failures.jsonl.bak"])
def test_not_artifacts(name: str) -> None:
    assert not is_artifact(name)


def test_each_shard_keeps_its_rows_sidecar_and_index_identity(tmp_path: Path) -> None:
    a = touch(
        tmp_path / "a.jsonl",
        "".join(
            json.dumps(
                {
                    "_ng_task_index": i,
                    "_ng_rollout_index": 0,
                    "reward": 1.0,
                    "responses_create_params": {"input": f"a{i}"},
                }
            )
            + "\n"
            for i in range(2)
        ),
    )
    b = touch(
        tmp_path / "b.jsonl",
        json.dumps(
            {"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 0.0, "responses_create_params": {"input": "b0"}}
        )
        + "\n",
    )
    touch(
        tmp_path / "b_failures.jsonl",
        json.dumps({"_ng_task_index": 0, "_ng_rollout_index": 1, "_ng_failure_class": "environment_server_failed"})
        + "\n",
    )
    side = load_side(SideRequest(str(a), display="*.jsonl", shards=((str(a), "a.jsonl"), (str(b), "b.jsonl"))))
    assert [f.shard for f in side.facts] == [0, 0, 1, 1]
    assert side.sidecar is None and side.shards[1][2] == str(tmp_path / "b_failures.jsonl")
    # index 0 of both shards: two tasks, told apart by their prompts; the record takes its shard's
    assert side.choice.key == "responses_create_params.input"
    labels = [ident[1].split("-")[0] if ident else None for ident in side.choice.values]
    assert labels == ["a0", "a1", "b0", "b0"] and side.choice.values[2] == side.choice.values[3]
    assert side.read_row(side.facts[2])["responses_create_params"]["input"] == "b0"
    assert side.read_row(side.facts[3])["_ng_failure_class"] == "environment_server_failed"
    assert [len(side.shard_facts(i)) for i in (0, 1)] == [2, 2]
    alone = load_side(SideRequest(str(b)))
    assert alone.choice.key == "_ng_task_index" and not alone.shards


def test_a_named_index_is_qualified_by_shard(tmp_path: Path) -> None:
    a = touch(tmp_path / "a.jsonl", json.dumps({"_ng_task_index": 0, "reward": 1.0}) + "\n")
    b = touch(tmp_path / "b.jsonl", json.dumps({"_ng_task_index": 0, "reward": 1.0}) + "\n")
    side = load_side(SideRequest(str(a), key="_ng_task_index", shards=((str(a), "a.jsonl"), (str(b), "b.jsonl"))))
    assert [ident[1] if ident else None for ident in side.choice.values] == ["1:0", "2:0"]
    unnamed = load_side(
        SideRequest(str(a), shards=((str(a), "a.jsonl"), (str(b), "b.jsonl")))
    )  # no prompt: the qualified index keys the side
    assert unnamed.choice.key == "_ng_task_index"
    assert [v[1] if v else None for v in unnamed.choice.values] == ["1:0", "2:0"]


def sharded_request(tmp_path: Path) -> SideRequest:
    """The real flores200 file in three shards (indices restarting), two with a sidecar record."""
    rows = [json.loads(line) for line in FLORES.read_text(encoding="utf-8").splitlines() if line.strip()]
    files = []
    for number, (start, end) in enumerate(((0, 2), (2, 4), (4, 5))):
        part = [dict(row, _ng_task_index=i) for i, row in enumerate(rows[start:end])]
        path = touch(tmp_path / f"part-{number}.jsonl", "".join(json.dumps(row) + "\n" for row in part))
        if number < 2:
            touch(
                tmp_path / f"part-{number}_failures.jsonl",
                json.dumps(
                    {"_ng_task_index": 1, "_ng_rollout_index": 1, "_ng_failure_class": "environment_server_failed"}
                )
                + "\n",
            )
        files.append((str(path), f"runs/part-{number}.jsonl"))
    return SideRequest(files[0][0], display="runs/part-*.jsonl", shards=tuple(files))


def test_the_reader_child_reads_a_sharded_side_as_this_process_does(
    tmp_path: Path, child_here: Callable[..., Any]
) -> None:
    request = sharded_request(tmp_path)
    serial = load_side(request)
    assert serial.choice.key == "responses_create_params.input" and len(serial.facts) == 7
    from_child = child_here(request)
    assert from_child is not None  # the child itself answered (no fallback)
    for name in ("path", "display", "sidecar", "agent", "shards", "choice"):
        assert getattr(from_child, name) == getattr(serial, name), name
    assert [plain_facts(f) for f in from_child.facts] == [plain_facts(f) for f in serial.facts]
    assert [f.shard for f in from_child.facts] == [0, 0, 0, 1, 1, 1, 2]
    assert parallel.worth_a_child(request, min_bytes=sum(os.path.getsize(p) for p, _ in request.shards))


def test_the_reader_child_names_a_bad_line_in_its_shard(tmp_path: Path, child_here: Callable[..., Any]) -> None:
    request = sharded_request(tmp_path)
    with open(request.shards[1][0], "a", encoding="utf-8") as handle:
        handle.write('{"reward": 1.0,,}\n')
    with pytest.raises(CompareInputError) as serial:
        load_side(request)
    assert str(serial.value).startswith("runs/part-1.jsonl:3: invalid JSON")
    with pytest.raises(CompareInputError) as child:
        child_here(request)
    assert str(child.value) == str(serial.value)


def test_a_glob_leaves_the_files_written_beside_the_rollouts_out_and_says_which(tmp_path: Path) -> None:
    names = ("run/rollouts.jsonl", "run/rollout_verdicts.jsonl", "run/quality_summary.json", "run/r_items.jsonl")
    for name in (*names, "run/r_task.jsonl.gz", "run/rollouts_failures.jsonl"):
        touch(tmp_path / name)
    left_out: list[tuple[str, str]] = []
    assert [shown for _, shown in expand("run/*", tmp_path, left_out)] == ["run/rollouts.jsonl"]
    assert [name for name, _ in left_out] == [
        "run/quality_summary.json",
        "run/r_items.jsonl",
        "run/r_task.jsonl.gz",
        "run/rollout_verdicts.jsonl",
    ]  # the sidecar is read with its shard: no note
    assert dict(left_out)["run/rollout_verdicts.jsonl"].startswith("the health check's per-rollout verdicts")
    with pytest.raises(ShardPatternError, match=r"no rollouts file \(the health check.s quality summary"):
        expand("run/rollouts.jsonl,run/quality_summary.json", tmp_path)

"""Compressed files read as they are; JSON arrays, pretty-printed JSON, sidecars and zstd are named."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity import CompareInputError, compare_files
from pytest_rollout_parity.core.reading.jsonl_lines import RowAt
from pytest_rollout_parity.core.reading.loaded_side import SideRequest
from pytest_rollout_parity.core.reading.loading import load_side
from pytest_rollout_parity.core.reading.sidecar import sidecar_path

ROWS = [
    {"task_id": f"t{i}", "reward": float(i % 2), "_ng_task_index": i, "_ng_rollout_index": 0, "note": "x" * i}
    for i in range(40)
]
FLIPPED = [dict(row, reward=1.0 - row["reward"]) if row["task_id"] == "t7" else row for row in ROWS]

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_compressed_file_reads_like_the_plain_one(tmp_path: Path, suffix: str) -> None:
    plain = tmp_path / "old.jsonl"
    plain.write_bytes(jsonl(ROWS))
    packed = tmp_path / f"new.jsonl.{suffix}"
    packed.write_bytes(COMPRESSORS[suffix](jsonl(FLIPPED)))
    result = compare_files(plain, packed)
    assert [t.task for t in result.tasks if t.category == "flipped"] == ["t7"]
    # rows are read again by their offset in the decompressed stream, in any order
    new_rows = [row for t in reversed(result.tasks) for row in t.new.rows]  # type: ignore[union-attr]
    assert sorted(new_rows, key=lambda r: r["_ng_task_index"]) == FLIPPED


def test_row_reader_goes_back_when_asked(tmp_path: Path) -> None:
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gzip.compress(b'{"a": 1}\n{"a": 2}\n{"a": 3}\n'))
    with closing(RowAt()) as reader:
        assert [reader.line(packed, offset) for offset in (9, 18, 0, 9)] == [
            b'{"a": 2}\n',
            b'{"a": 3}\n',
            b'{"a": 1}\n',
            b'{"a": 2}\n',
        ]


def test_sidecar_of_a_compressed_file_has_the_plain_name(tmp_path: Path) -> None:
    assert sidecar_path(tmp_path / "r.jsonl.gz") == tmp_path / "r_failures.jsonl"


def test_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    packed = tmp_path / "new.jsonl.gz"
    packed.write_bytes(gzip.compress(jsonl(ROWS))[:-30])
    with pytest.raises(CompareInputError, match=rf"^{packed}: cannot read: "):
        load_side(SideRequest(str(packed)))


def test_zstd_is_named_with_the_command(tmp_path: Path) -> None:
    packed = tmp_path / "new.jsonl.zst"
    packed.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    with pytest.raises(CompareInputError) as info:
        load_side(SideRequest(str(packed)))
    assert str(info.value) == (
        f"{packed}: a zstd-compressed file, which Python cannot read before 3.14: "
        f"decompress it first (zstd -d {packed}) and pass the .jsonl"
    )


@pytest.mark.parametrize("text", [json.dumps(ROWS), json.dumps(ROWS, indent=2), "\n  [\n"])
def test_json_array_is_named(tmp_path: Path, text: str) -> None:
    path = tmp_path / "new.jsonl"
    path.write_text(text)
    with pytest.raises(CompareInputError) as info:
        load_side(SideRequest(str(path)))
    line = 2 if text.startswith("\n") else 1
    assert str(info.value) == (
        f"{path}:{line}: a JSON array, not JSON Lines (one object per line): convert it with jq -c '.[]'"
    )


def test_pretty_printed_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(ROWS[0], indent=2) + "\n" + json.dumps(ROWS[1], indent=2))
    with pytest.raises(CompareInputError) as info:
        load_side(SideRequest(str(path)))
    assert str(info.value) == (
        f"{path}:1: pretty-printed JSON, not JSON Lines (one object per line): convert it with jq -c ."
    )


def test_sidecar_given_as_a_side_names_its_main_file(tmp_path: Path) -> None:
    sidecar = tmp_path / "rollouts_failures.jsonl"
    sidecar.write_text(
        json.dumps(
            {"_ng_failure_class": "agent_run_error", "_ng_task_index": 0, "_ng_rollout_index": 0, "task_id": "t0"}
        )
        + "\n"
    )
    with pytest.raises(CompareInputError) as info:
        load_side(SideRequest(str(sidecar)))
    assert str(info.value) == (
        f"{sidecar}: a failures sidecar (records of rollouts that failed), not a rollouts file: "
        f"give its main file {tmp_path / 'rollouts.jsonl'}; the sidecar beside it is read with it"
    )


def test_a_rollouts_file_named_like_a_sidecar_still_loads(tmp_path: Path) -> None:
    """Only failure records make a `_failures.jsonl` a sidecar; scored rows under that name are rollouts."""
    path = tmp_path / "my_failures.jsonl"
    path.write_bytes(jsonl(ROWS))
    assert len(load_side(SideRequest(str(path))).facts) == len(ROWS)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_progress_counts_bytes_of_the_file_up_to_its_size(tmp_path: Path, suffix: str) -> None:
    """The callback sees the bytes read of the file on disk (compressed bytes for a gzip file)."""
    rows = [dict(row, note="y" * 3000, task_id=f"t{i}") for i, row in enumerate(ROWS * 30)]
    path = tmp_path / f"r.jsonl{suffix}"
    path.write_bytes(gzip.compress(jsonl(rows)) if suffix else jsonl(rows))
    seen: list[tuple[int, int]] = []
    load_side(SideRequest(str(path)), progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert len(seen) >= (1 if suffix else 2)
    assert all(total == size for _, total in seen)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1] == (size, size)


def test_a_symlinked_side_finds_its_companions_beside_the_target(tmp_path: Path) -> None:
    from pytest_rollout_parity.core.judging.companions import metrics_path

    (tmp_path / "n").mkdir()
    real = tmp_path / "n" / "rollouts.jsonl"
    real.write_text("{}\n")
    for name in ("rollouts_failures.jsonl", "rollouts_aggregate_metrics.json"):
        (tmp_path / "n" / name).write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    assert sidecar_path(link) == tmp_path / "n" / "rollouts_failures.jsonl"
    assert metrics_path(link) == tmp_path / "n" / "rollouts_aggregate_metrics.json"
    (tmp_path / "link_failures.jsonl").write_text("")  # one beside the link is used first
    assert sidecar_path(link) == tmp_path / "link_failures.jsonl"
    # a plain file never looks elsewhere
    assert sidecar_path(tmp_path / "other.jsonl") == tmp_path / "other_failures.jsonl"

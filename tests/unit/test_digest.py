"""Each side's content digest: every byte of its files, taken while they are read.

The parts of a split run are joined only when they read the same inputs; the digest is what they
compare. It is checked against ``binascii.crc32`` of each file's bytes, computed here independently.
"""

from __future__ import annotations

import binascii
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.core.reading.loaded_side import SideRequest, side_from_plain, side_to_plain
from pytest_rollout_parity.core.reading.loading import load_side


def expected(*files: Path) -> str:
    """Each file's byte count and CRC-32, in reading order, under one CRC-32."""
    data = [path.read_bytes() for path in files]
    records = "\n".join(f"{len(held)}:{binascii.crc32(held):08x}" for held in data)
    return f"crc32:{binascii.crc32(records.encode()):08x}:{sum(map(len, data))}:{len(data)}"


@pytest.fixture
def side_files(real_rows: Callable[[str], list[dict[str, Any]]], write_jsonl: Callable[..., Path]) -> tuple[Path, Path]:
    rows = []
    for index in range(4):
        row = real_rows("deepswe_opencode_trimmed.jsonl")[0]
        row.update(_ng_task_index=index, _ng_rollout_index=0, reward=float(index % 2))
        rows.append(row)
    main = write_jsonl("new/rollouts.jsonl", rows)
    sidecar = write_jsonl(
        "new/rollouts_failures.jsonl",
        [
            {
                "_ng_task_index": 7,
                "_ng_rollout_index": 0,
                "_ng_failure_class": "SandboxError",
                "_ng_failure_message": "sandbox did not start",
            }
        ],
    )
    return main, sidecar


def test_a_side_digests_its_file_then_its_sidecar(side_files: tuple[Path, Path]) -> None:
    main, sidecar = side_files
    side = load_side(SideRequest(str(main), display="n.jsonl"))
    assert side.digest == expected(main, sidecar)


def test_a_row_moved_across_the_files_boundary_changes_the_digest(side_files: tuple[Path, Path]) -> None:
    """The main file's last row moved to the top of its sidecar: the same bytes in the same order, two
    other files (a scored row turned into a masked record)."""
    main, sidecar = side_files
    before = load_side(SideRequest(str(main), display="n.jsonl")).digest
    *kept, last = main.read_bytes().splitlines(keepends=True)
    main.write_bytes(b"".join(kept))
    sidecar.write_bytes(last + sidecar.read_bytes())
    assert load_side(SideRequest(str(main), display="n.jsonl")).digest not in (before, None)


def test_one_byte_changed_changes_the_digest(side_files: tuple[Path, Path]) -> None:
    main, _ = side_files
    before = load_side(SideRequest(str(main), display="n.jsonl")).digest
    main.write_bytes(main.read_bytes().replace(b'"reward": 0.0', b'"reward": 1.0', 1))
    assert load_side(SideRequest(str(main), display="n.jsonl")).digest != before


def test_a_compressed_side_digests_what_it_holds(side_files: tuple[Path, Path], tmp_path: Path) -> None:
    main, _ = side_files
    packed = tmp_path / "packed" / "rollouts.jsonl.gz"
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(main.read_bytes()))
    assert load_side(SideRequest(str(packed), display="p.jsonl.gz")).digest == expected(main)


def test_shards_digest_in_the_order_given(write_jsonl: Callable[..., Path]) -> None:
    first = write_jsonl("s/shard-1.jsonl", [{"task_id": "a", "reward": 1.0}])
    second = write_jsonl("s/shard-2.jsonl", [{"task_id": "b", "reward": 0.0}])
    request = SideRequest(
        str(first),
        display="s/shard-*.jsonl",
        shards=((str(first), "s/shard-1.jsonl"), (str(second), "s/shard-2.jsonl")),
    )
    assert load_side(request).digest == expected(first, second)


def test_the_reader_child_and_the_cache_keep_the_digest(
    side_files: tuple[Path, Path], child_here: Callable[..., Any]
) -> None:
    main, sidecar = side_files
    request = SideRequest(str(main), display="n.jsonl")
    from_child = child_here(request)
    assert from_child is not None
    assert from_child.digest == expected(main, sidecar)
    restored = side_from_plain(json.loads(json.dumps(side_to_plain(from_child))))
    assert restored is not None and restored.digest == from_child.digest

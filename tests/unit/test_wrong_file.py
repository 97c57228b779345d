"""Files that are not rollouts are named as what they most likely are."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rollout_parity import CompareInputError, compare_files, compare_rollouts

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
DATASET = REAL_FILES / "resources_servers" / "multichallenge" / "data" / "example_rollouts.jsonl"
BIGCODEBENCH = REAL_FILES / "resources_servers" / "bigcodebench" / "data" / "example_rollouts.jsonl"

LFS = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)


def test_real_input_dataset_is_named(tmp_path: Path) -> None:
    """multichallenge's example file: task_id on every row, `reward` on none."""
    with pytest.raises(CompareInputError) as info:
        compare_files(BIGCODEBENCH, DATASET)
    assert str(info.value) == f"{DATASET}: an input dataset, not rollouts (no row has a reward field)"


def test_dataset_rows_in_memory_are_named() -> None:
    with pytest.raises(CompareInputError, match=r"^old rows: an input dataset, not rollouts"):
        compare_rollouts([{"task_id": "a"}, {"task_id": "b"}], [{"task_id": "a", "reward": 1.0}])


def test_a_null_reward_is_a_reward_field() -> None:
    """Rows that carry `reward: null` are rollouts whose rows went unscored: masked, not a dataset."""
    result = compare_rollouts([{"task_id": "a", "reward": None}], [{"task_id": "a", "reward": 1.0}])
    assert result.counts()["masked"] == 1


def test_lfs_pointer_is_named(tmp_path: Path) -> None:
    pointer = tmp_path / "new.jsonl"
    pointer.write_text(LFS, encoding="utf-8")
    with pytest.raises(CompareInputError) as info:
        compare_files(BIGCODEBENCH, pointer)
    assert str(info.value) == f"{pointer}: a Git LFS pointer, not the file: run git lfs pull"

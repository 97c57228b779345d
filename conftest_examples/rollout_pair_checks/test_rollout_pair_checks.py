"""Per-task checks of your own, run beside the gate: one case per joined task via `rollout_pair`."""

from __future__ import annotations

from pathlib import Path

import pytest

MAX_TOKEN_GROWTH = 2.0


def _new_file(config: pytest.Config) -> Path:
    return Path(config.getoption("parity_new") or config.getini("parity_new"))


def _tokens(row: dict) -> int:
    usage = (row.get("response") or {}).get("usage") or {}
    return int(usage.get("total_tokens") or 0)


def test_new_side_keeps_its_verifier_log(rollout_pair, pytestconfig):
    """Every scored new-side row that names a verifier_logs_dir has it on disk."""
    if rollout_pair.new is None:
        pytest.skip("task not on the new side")
    new_dir = _new_file(pytestconfig).parent
    for row in rollout_pair.new.rows:
        logs_dir = row.get("verifier_logs_dir")
        if row.get("mask_sample") or not logs_dir:
            continue
        path = Path(logs_dir) if Path(logs_dir).is_absolute() else new_dir / logs_dir
        assert (path / "test-stdout.txt").is_file(), f"{rollout_pair.task}: {path}/test-stdout.txt is missing"


def test_tokens_per_task_do_not_grow(rollout_pair):
    """The new side spends at most MAX_TOKEN_GROWTH times the old side's mean tokens per row."""
    if rollout_pair.old is None or rollout_pair.new is None:
        pytest.skip(f"{rollout_pair.task} is {rollout_pair.category}")
    old_rows, new_rows = rollout_pair.old.rows, rollout_pair.new.rows
    old_mean = sum(map(_tokens, old_rows)) / len(old_rows)
    new_mean = sum(map(_tokens, new_rows)) / len(new_rows)
    assert new_mean <= MAX_TOKEN_GROWTH * old_mean, (
        f"{rollout_pair.task}: {new_mean:.0f} tokens per row on the new side vs {old_mean:.0f} on the old"
    )

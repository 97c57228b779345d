"""Per-side join keys and agent selection in the core API."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rollout_parity import CompareInputError, compare_files, compare_rollouts
from pytest_rollout_parity.core.reading.side_builder import NO_AGENT, AgentFilter, agent_of

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
ANYSWE = REAL_FILES / "responses_api_agents" / "anyswe_agent" / "data" / "example_rollouts_opencode.jsonl"


def test_old_key_and_new_key() -> None:
    old = [{"uid": "a", "reward": 1.0}]
    new = [{"instance": "a", "reward": 0.0}]
    result = compare_rollouts(old, new, old_key="uid", new_key="instance")
    assert (result.join.old_key, result.join.new_key) == ("uid", "instance")
    assert result.counts()["flipped"] == 1


def test_key_still_sets_both_and_a_side_key_wins() -> None:
    old = [{"uid": "a", "reward": 1.0}]
    new = [{"instance": "a", "uid": "zzz", "reward": 1.0}]
    assert compare_rollouts(old, new, key="uid").counts()["missing"] == 2
    result = compare_rollouts(old, new, key="uid", new_key="instance")
    assert result.counts()["identical"] == 1


def test_agent_of_and_filter() -> None:
    assert agent_of({"agent_ref": {"name": "x"}}) == "x"
    for row in ({}, {"agent_ref": None}, {"agent_ref": "x"}, {"agent_ref": {"type": "t"}}):
        assert agent_of(row) == NO_AGENT
    chooser = AgentFilter("x")
    assert chooser.keep({"agent_ref": {"name": "x"}}) and not chooser.keep({})
    assert chooser.keep_record({"_ng_failure_class": "c"})  # names no agent: kept
    assert not chooser.keep_record({"agent_ref": {"name": "y"}})


def test_mixed_agents_need_a_choice() -> None:
    old = [{"task_id": "a", "reward": 1.0, "agent_ref": {"name": "p"}}, {"task_id": "a", "reward": 0.0}]
    new = [{"task_id": "a", "reward": 1.0}]
    with pytest.raises(
        CompareInputError, match=r"^old rows: rows of 2 agents .*: \(no agent_ref\) \(1 row\), p \(1 row\)"
    ):
        compare_rollouts(old, new)
    assert compare_rollouts(old, new, old_agent="p").counts()["identical"] == 1
    assert compare_rollouts(old, new, old_agent=NO_AGENT).counts()["flipped"] == 1
    with pytest.raises(CompareInputError, match=r"^old_agent: no row of old rows has agent 'q'; agents present"):
        compare_rollouts(old, new, old_agent="q")


def test_real_file_agent_selected_by_name() -> None:
    key = "responses_create_params.metadata.instance_id"
    assert compare_files(ANYSWE, ANYSWE, key=key, agent="anyswe_opencode").counts()["identical"] == 1
    with pytest.raises(CompareInputError, match="agents present: anyswe_opencode \\(5 rows\\)"):
        compare_files(ANYSWE, ANYSWE, key=key, agent="anyswe_hermes")

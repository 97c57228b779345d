"""Per-side keys (--parity-old-key/--parity-new-key) and agent selection (--parity-*agent)."""

from __future__ import annotations

import json

import pytest

from .conftest import SMALL_RUN_BUDGET, Gate, all_text, assert_one_error, failure_record


def rows(key: str, tasks: dict[str, float], agent: str | None = None, **extra: object) -> list[dict]:
    out = []
    for task, reward in tasks.items():
        row: dict = {key: task, "reward": reward, **extra}
        if agent is not None:
            row["agent_ref"] = {"type": "responses_api_agents", "name": agent}
        out.append(row)
    return out


def summary(gate: Gate) -> dict:
    return json.loads((gate.path / "s.json").read_text(encoding="utf-8"))


# --- per-side keys ---------------------------------------------------------------------------------


def test_each_side_its_own_key(gate: Gate) -> None:
    # "task_name" is on both sides (a category): detection alone would join on it
    old = [{**r, "task_name": "cat"} for r in rows("uid", {"a": 1.0, "b": 1.0})]
    new = [{**r, "task_name": "cat"} for r in rows("instance", {"a": 1.0, "b": 0.0})]
    args = gate.pair(old, new)
    result = gate.run(*args, "--parity-old-key=uid", "--parity-new-key=instance", "--parity-json=s.json")
    result.assert_outcomes(passed=1, failed=1)
    data = summary(gate)
    assert (data["join"]["old_key"], data["join"]["new_key"]) == ("uid", "instance")


def test_per_side_key_wins_over_parity_key(gate: Gate) -> None:
    args = gate.pair(rows("uid", {"a": 1.0}), rows("instance", {"a": 0.0}))
    result = gate.run(*args, "--parity-key=uid", "--parity-new-key=instance", "--parity-json=s.json")
    result.assert_outcomes(failed=1)
    assert summary(gate)["join"]["new_key"] == "instance"


def test_ini_per_side_keys_and_command_line_over_ini(gate: Gate) -> None:
    args = gate.pair(rows("uid", {"a": 1.0}), rows("instance", {"a": 1.0}, uid="a"))
    gate.write("pytest.ini", "[pytest]\nparity_old_key = uid\nparity_new_key = instance\n")
    gate.run(*args, "--parity-json=s.json").assert_outcomes(passed=1)
    assert summary(gate)["join"]["new_key"] == "instance"
    # --parity-key on the command line wins over the ini file's per-side keys
    gate.run(*args, "--parity-key=uid", "--parity-json=s.json").assert_outcomes(passed=1)
    assert summary(gate)["join"]["new_key"] == "uid"


def test_missing_per_side_key_names_its_option(gate: Gate) -> None:
    args = gate.pair(rows("uid", {"a": 1.0}), rows("instance", {"a": 1.0}))
    line = assert_one_error(gate, *args, "--parity-key=uid")
    assert line == "ERROR: new/rollouts.jsonl:1: row has no 'uid' field (--parity-key uid)"
    line = assert_one_error(gate, *args, "--parity-old-key=uid", "--parity-new-key=nope")
    assert line == "ERROR: new/rollouts.jsonl:1: row has no 'nope' field (--parity-new-key nope)"


@pytest.mark.parametrize("option", ["--parity-old-key", "--parity-new-key", "--parity-agent", "--parity-old-agent"])
def test_blank_side_option_is_a_usage_error(gate: Gate, option: str) -> None:
    args = gate.pair(rows("uid", {"a": 1.0}), rows("uid", {"a": 1.0}))
    result = gate.run(*args, f"{option}= ")
    assert result.ret == 4
    assert option in all_text(result) and "Traceback" not in all_text(result)


# --- agents ----------------------------------------------------------------------------------------


def two_agents(gate: Gate) -> list[str]:
    old = rows("task_id", {"a": 1.0, "b": 1.0}, "alpha") + rows("task_id", {"a": 0.0, "b": 0.0, "c": 0.0}, "beta")
    new = rows("task_id", {"a": 1.0, "b": 0.0}, "alpha") + rows("task_id", {"a": 0.0, "b": 0.0, "c": 0.0}, "beta")
    return gate.pair(old, new)


def test_several_agents_stop_with_counts_and_how_to_choose(gate: Gate) -> None:
    line = assert_one_error(gate, *two_agents(gate))
    assert line == (
        "ERROR: old/rollouts.jsonl: rows of 2 agents (agent_ref.name): beta (3 rows), alpha (2 rows); "
        "choose one with --parity-agent NAME (both sides) or --parity-old-agent / --parity-new-agent NAME"
    )


def test_parity_agent_keeps_one_agent_on_both_sides(gate: Gate) -> None:
    args = two_agents(gate)
    gate.run(*args, "--parity-agent=alpha").assert_outcomes(passed=1, failed=1)
    # beta's rows are the same on both sides: a copy, which is meant here
    gate.run(*args, "--parity-agent=beta", "--parity-allow-copy").assert_outcomes(passed=4)


def test_per_side_agent(gate: Gate) -> None:
    old = rows("task_id", {"a": 1.0}, "legacy_agent")
    new = rows("task_id", {"a": 1.0}, "alpha") + rows("task_id", {"a": 0.0}, "beta")
    args = gate.pair(old, new)
    gate.run(*args, "--parity-new-agent=beta").assert_outcomes(failed=1)
    gate.write("pytest.ini", "[pytest]\nparity_new_agent = alpha\n")
    gate.run(*args).assert_outcomes(passed=1)


def test_rows_without_agent_ref_are_a_group_of_their_own(gate: Gate) -> None:
    new = rows("task_id", {"a": 1.0}, "alpha") + rows("task_id", {"a": 0.0})
    args = gate.pair(rows("task_id", {"a": 0.0}), new)
    line = assert_one_error(gate, *args)
    assert "(no agent_ref) (1 row), alpha (1 row)" in line
    # the rows without agent_ref are the old side's very rows: a copy, which is meant here
    gate.run(*args, "--parity-new-agent=(no agent_ref)", "--parity-allow-copy").assert_outcomes(passed=2)


def test_unknown_agent_lists_the_agents_present(gate: Gate) -> None:
    line = assert_one_error(gate, *two_agents(gate), "--parity-agent=gamma")
    assert line == (
        "ERROR: --parity-agent: no row of old/rollouts.jsonl has agent 'gamma'; "
        "agents present: beta (3 rows), alpha (2 rows)"
    )


def test_sidecar_records_of_another_agent_are_dropped(gate: Gate) -> None:
    old = rows("task_id", {"a": 1.0, "b": 1.0}, "alpha")
    new = rows("task_id", {"a": 1.0}, "alpha") + rows("task_id", {"a": 1.0}, "beta")
    args = [*gate.pair(old, new), *SMALL_RUN_BUDGET]
    beta_failure = {**failure_record(), "task_id": "b", "agent_ref": {"name": "beta"}}
    alpha_failure = {**failure_record(), "task_id": "b", "agent_ref": {"name": "alpha"}}
    gate.write("new/rollouts_failures.jsonl", [beta_failure])
    gate.run(*args, "--parity-agent=alpha", "-rx").assert_outcomes(passed=1, xfailed=1)  # b: missing
    assert "only in the old file" in all_text(gate.run(*args, "--parity-agent=alpha", "-rx"))
    gate.write("new/rollouts_failures.jsonl", [alpha_failure])
    result = gate.run(*args, "--parity-agent=alpha", "-rx")
    result.assert_outcomes(passed=1, xfailed=1)
    assert "new side masked" in all_text(result)

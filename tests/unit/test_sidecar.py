"""docs/semantics.md, "Reading a side and its sidecar", and anonymous rows ("Task identity and the join")."""

from __future__ import annotations

import pytest

from pytest_rollout_parity import CompareInputError, compare_rollouts, load_rollouts


def tid(task_id: str, taskset: str = "terminal-bench-2-1") -> dict:
    return {"taskset": taskset, "task_id": task_id}


def main_row(task: str, reward, ti: int, ri: int = 0, **extra) -> dict:
    row = {"_ng_task_id": tid(task), "reward": reward, "_ng_task_index": ti, "_ng_rollout_index": ri}
    row.update(extra)
    return row


def failure(task: str | None, cls: str, ti: int | None = None, ri: int | None = None, **extra) -> dict:
    rec: dict = {"_ng_failure_class": cls, "_ng_failure_message": f"{cls} happened"}
    if task is not None:
        rec["_ng_task_id"] = tid(task)
    if ti is not None:
        rec["_ng_task_index"] = ti
    if ri is not None:
        rec["_ng_rollout_index"] = ri
    rec.update(extra)
    return rec


def _failure_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if "_ng_failure_class" in r]


def _assert_masked_row(row: dict) -> None:
    assert row.get("mask_sample") is True
    assert row.get("reward") is None


def test_sidecar_path_is_stem_failures_jsonl(write_jsonl):
    main = write_jsonl("runs/r.jsonl", [main_row("fix-git", 1.0, 0)])
    # a file named after the full name (r.jsonl_failures.jsonl) is NOT the sidecar
    write_jsonl("runs/r.jsonl_failures.jsonl", [failure("wrong-file", "agent_run_error", 7, 0)])
    write_jsonl("runs/r_failures.jsonl", [failure("regex-log", "environment_server_failed", 1, 0)])
    rows = load_rollouts(main)
    assert len(rows) == 2
    assert rows[0]["_ng_task_id"] == tid("fix-git")
    folded = _failure_rows(rows)
    assert len(folded) == 1
    assert folded[0]["_ng_task_id"] == tid("regex-log")
    _assert_masked_row(folded[0])
    assert folded[0]["failure_kind"] == "environment_server_failed"


def test_no_sidecar_means_only_main_rows(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("fix-git", 1.0, 0), main_row("regex-log", 0.0, 1)])
    rows = load_rollouts(main)
    assert len(rows) == 2
    assert _failure_rows(rows) == []


def test_sidecar_failure_kind_precedence(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0)])
    write_jsonl(
        "r_failures.jsonl",
        [
            failure("b", "agent_run_error", 1, 0, failure_kind="verifier_error"),
            failure("c", "agent_request_failed", 2, 0),
            {"_ng_task_id": tid("d"), "_ng_task_index": 3, "_ng_rollout_index": 0},
            failure("e", "judge_failed", 4, 0, failure_kind=None),
        ],
    )
    rows = load_rollouts(main)
    folded = _failure_rows(rows) + [r for r in rows if r.get("_ng_task_id") == tid("d")]
    kinds = {r["_ng_task_id"]["task_id"]: r["failure_kind"] for r in folded}
    assert len(rows) == 5
    for r in folded:
        _assert_masked_row(r)
    assert kinds == {
        "b": "verifier_error",
        "c": "agent_request_failed",
        "d": "failure",
        "e": "judge_failed",
    }


def test_sidecar_record_with_a_reward_joins_with_no_reward(write_jsonl):
    # judge_failsafe records carry reward 0.0; a standing record is a masked row with no reward.
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0)])
    write_jsonl("r_failures.jsonl", [failure("b", "judge_failed", 1, 0, reward=0.0, mask_sample=False)])
    rows = load_rollouts(main)
    assert len(rows) == 2
    (folded,) = _failure_rows(rows)
    _assert_masked_row(folded)
    assert folded["failure_kind"] == "judge_failed"


def test_only_the_last_record_per_index_pair_stands(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0)])
    write_jsonl(
        "r_failures.jsonl",
        [
            failure("b", "transient", 1, 0),
            failure("b", "transient", 1, 1),
            failure("b", "timeout_exceeded", 1, 0),
            failure("b", "agent_run_error", 1, 1),
            failure("b", "permanent", 1, 0),
        ],
    )
    rows = _failure_rows(load_rollouts(main))
    assert sorted((r["_ng_rollout_index"], r["failure_kind"]) for r in rows) == [
        (0, "permanent"),
        (1, "agent_run_error"),
    ]


def test_records_superseded_by_a_main_row_are_dropped(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0, 0), main_row("b", 0.0, 1, 1)])
    write_jsonl(
        "r_failures.jsonl",
        [
            failure("a", "transient", 0, 0),  # retried, scored in the main file
            failure("b", "transient", 1, 1),  # retried, scored in the main file
            failure("b", "transient", 1, 0),  # stands: (1, 0) is not on a main row
            failure("a", "transient", 0, 1),  # stands
        ],
    )
    rows = load_rollouts(main)
    folded = _failure_rows(rows)
    assert len(rows) == 4
    assert sorted((r["_ng_task_index"], r["_ng_rollout_index"]) for r in folded) == [(0, 1), (1, 0)]


def test_a_record_of_another_run_stands_beside_a_main_row_of_its_index_pair(write_jsonl):
    """Without the stamp a record is still of its logical rollout, its run included."""
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0, 0, _ng_run_id="A")])
    write_jsonl(
        "r_failures.jsonl", [failure("a", "transient", 0, 0, _ng_run_id="A"), failure("a", "x", 0, 0, _ng_run_id="B")]
    )
    folded = _failure_rows(load_rollouts(main))
    assert [r["_ng_run_id"] for r in folded] == ["B"]


def test_records_lacking_an_index_are_all_kept(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0, 0)])
    write_jsonl(
        "r_failures.jsonl",
        [
            failure("a", "environment_server_failed", None, None),
            failure("a", "environment_server_failed", None, None),
            failure("a", "environment_server_failed", 0, None),  # task index alone: still lacks one
            failure("a", "environment_server_failed", None, 0),
        ],
    )
    rows = load_rollouts(main)
    assert len(_failure_rows(rows)) == 4
    for r in _failure_rows(rows):
        _assert_masked_row(r)


def test_broken_sidecar_line_is_an_error_naming_the_sidecar(write_jsonl):
    main = write_jsonl("r.jsonl", [main_row("a", 1.0, 0)])
    side = write_jsonl("r_failures.jsonl", '{"_ng_failure_class": "transient"}\n{"_ng_failure_class": \n')
    with pytest.raises(CompareInputError) as exc:
        load_rollouts(main)
    assert f"{side}:2" in str(exc.value)


# --- folded rows in the classification -------------------------------------------------------


def test_sidecar_failure_masks_the_task(write_jsonl):
    old = write_jsonl("old/r.jsonl", [main_row("fix-git", 1.0, 0), main_row("regex-log", 1.0, 1)])
    new = write_jsonl("new/r.jsonl", [main_row("regex-log", 1.0, 1)])
    write_jsonl("new/r_failures.jsonl", [failure("fix-git", "environment_server_failed", 0, 0)])
    res = compare_rollouts(load_rollouts(old), load_rollouts(new))
    by_task = {t.task: t for t in res.tasks}
    assert set(by_task) == {"fix-git", "regex-log"}
    t = by_task["fix-git"]
    assert t.category == "masked"
    assert t.new.masked == "mask_sample (failure_kind=environment_server_failed)"
    assert t.new.reward is None
    assert t.old.masked is None
    assert by_task["regex-log"].category == "identical"
    assert res.rows.new == 2
    assert res.rows.new_masked == 1
    assert res.rows.old == 2
    assert res.rows.old_masked == 0
    c = res.counts()
    assert (c["masked"], c["masked_new"], c["masked_old"], c["identical"]) == (1, 1, 0, 1)


def test_anonymous_sidecar_rows_are_listed_as_unknown_masked_tasks(write_jsonl):
    # A failed /run carries no task id, only index stamps. Main rows use the legacy task_name key.
    old = write_jsonl(
        "old/r.jsonl",
        [
            {"task_name": "terminal-bench/fix-git", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0},
        ],
    )
    write_jsonl("old/r_failures.jsonl", [failure(None, "agent_request_failed", 5, 0)])
    new = write_jsonl(
        "new/r.jsonl",
        [{"task_name": "terminal-bench/fix-git", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0}],
    )
    write_jsonl(
        "new/r_failures.jsonl",
        [failure(None, "agent_request_failed", 3, 0), failure(None, "agent_run_error", 4, 0)],
    )
    res = compare_rollouts(load_rollouts(old), load_rollouts(new))
    # anonymous rows do not vote: the key is still task_name on both sides
    assert res.join.old_key == "task_name"
    assert res.join.new_key == "task_name"
    labels = [t.task for t in res.tasks]
    assert sorted(labels) == labels
    assert set(labels) == {"terminal-bench/fix-git", "unknown (old) #1", "unknown (new) #1", "unknown (new) #2"}
    by_task = {t.task: t for t in res.tasks}
    assert by_task["terminal-bench/fix-git"].category == "identical"
    for label in ("unknown (old) #1", "unknown (new) #1", "unknown (new) #2"):
        assert by_task[label].category == "masked", label
    assert by_task["unknown (old) #1"].new is None
    assert by_task["unknown (old) #1"].old.masked == "mask_sample (failure_kind=agent_request_failed)"
    assert by_task["unknown (new) #1"].old is None
    assert by_task["unknown (new) #2"].new.masked == "mask_sample (failure_kind=agent_run_error)"
    c = res.counts()
    assert c["tasks"] == 4
    assert c["masked"] == 3
    assert c["missing"] == 0
    assert c["masked_old"] == 1
    assert c["masked_new"] == 2
    assert (res.rows.old, res.rows.old_masked, res.rows.new, res.rows.new_masked) == (2, 1, 3, 2)


def test_anonymous_rows_with_in_memory_rows(real_rows):
    # compare_rollouts accepts rows built in memory: a masked row naming no task is anonymous.
    old = real_rows("deepswe_opencode_trimmed.jsonl")
    new = real_rows("deepswe_opencode_trimmed.jsonl") + [
        {"_ng_failure_class": "agent_request_failed", "mask_sample": True, "failure_kind": "agent_request_failed"}
    ]
    res = compare_rollouts(old, new)
    assert res.join.new_key == "task_id"
    assert [(t.task, t.category) for t in res.tasks] == [
        ("ts-pattern-match-each", "identical"),
        ("unknown (new) #1", "masked"),
    ]


def test_sidecar_record_naming_the_task_by_the_sides_key_joins_it(write_jsonl):
    # legacy-keyed main file; the sidecar record carries the same task_name
    main = write_jsonl(
        "new/r.jsonl",
        [{"task_name": "fix-git", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0}],
    )
    write_jsonl(
        "new/r_failures.jsonl",
        [{"task_name": "fix-git", "_ng_failure_class": "agent_run_error", "_ng_task_index": 0, "_ng_rollout_index": 1}],
    )
    old = [{"task_name": "fix-git", "reward": 1.0}]
    res = compare_rollouts(old, load_rollouts(main))
    (t,) = res.tasks
    assert t.task == "fix-git"
    assert t.category == "identical"  # the sidecar's failed rollout is left out; the scored one is compared
    assert t.new.masked is None and t.new.masked_rows == 1
    assert t.new.reward == 1.0
    assert t.new.reward_text() == "1.0 (mean of 1 of 2 rows)"


def test_a_bad_main_line_is_named_before_a_bad_sidecar_line(write_jsonl) -> None:
    """The sidecar is glanced at first (for the pairs it names), but errors keep the reading order."""
    from pytest_rollout_parity.core.reading.loaded_side import SideRequest
    from pytest_rollout_parity.core.reading.loading import load_side

    main = write_jsonl(
        "r/rollouts.jsonl", '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "task_id": "a"}\n{oops\n'
    )
    write_jsonl("r/rollouts_failures.jsonl", "{also broken\n")
    with pytest.raises(CompareInputError, match=r"rollouts\.jsonl:2: "):
        load_side(SideRequest(str(main)))
    main.write_text('{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1.0, "task_id": "a"}\n')
    with pytest.raises(CompareInputError, match=r"rollouts_failures\.jsonl:1: "):
        load_side(SideRequest(str(main)))


def test_only_the_sidecars_pairs_are_kept_and_scored_retries_are_superseded(write_jsonl) -> None:
    """A record whose rollout the main file scored after all does not stand; the others do."""
    from pytest_rollout_parity.core.reading.loaded_side import SideRequest
    from pytest_rollout_parity.core.reading.loading import load_side

    rows = [main_row(f"t{i}", 1.0, i) for i in range(50)]
    main = write_jsonl("s/rollouts.jsonl", rows)
    write_jsonl(
        "s/rollouts_failures.jsonl", [failure("t3", "SandboxError", 3, 0), failure("t77", "SandboxError", 77, 0)]
    )
    side = load_side(SideRequest(str(main)))
    sidecar_rows = [f for f in side.facts if f.origin.value != "main"]
    assert len(side.facts) == 51 and len(sidecar_rows) == 1  # t3 was scored: superseded; t77 stands


@pytest.mark.parametrize("key", [None, "task_id"], ids=["detected", "given"])
def test_a_record_without_the_sides_id_is_placed_by_its_runs_index(key):
    """The main file maps each (run, index) to its task_id; a record lacking task_id takes it,
    whether the key is detected or given."""

    def scored(task: str, run: str, reward: float = 1.0) -> dict:
        return {"task_id": task, "reward": reward, "_ng_task_index": 0, "_ng_rollout_index": 0, "_ng_run_id": run}

    old = [scored("alpha", "A"), scored("beta", "B")]
    new = [scored("alpha", "A"), scored("beta", "B"), failure(None, "agent_run_error", 0, 1, _ng_run_id="B")]
    res = compare_rollouts(old, new, key=key)
    assert [t.task for t in res.tasks] == ["alpha", "beta"]
    beta = {t.task: t for t in res.tasks}["beta"]
    assert len(beta.new.rows) == 2 and beta.category == "identical"
    assert any("1 failure record(s) without task_id placed in their task" in note for note in res.notes)


@pytest.mark.parametrize("key", [None, "task_id"], ids=["detected", "given"])
def test_a_record_whose_index_maps_no_single_task_stays_anonymous(key):
    old = [{"task_id": t, "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": i} for i, t in enumerate("ab")]
    new = old + [failure(None, "agent_run_error", 0, 2), failure(None, "agent_run_error", 7, 0)]
    res = compare_rollouts(old, new, key=key)
    assert sorted(t.task for t in res.tasks) == ["a", "b", "unknown (new) #1", "unknown (new) #2"]


@pytest.mark.parametrize("key", [None, "task_id"], ids=["detected", "given"])
@pytest.mark.parametrize("reader", ["here", "child"])
def test_a_record_is_placed_within_its_shard(write_jsonl, child_here, key, reader) -> None:
    """Each shard numbers its tasks from 0: a record at index 0 of shard b is b's task, not a's."""
    from pytest_rollout_parity.core.reading.loaded_side import SideRequest
    from pytest_rollout_parity.core.reading.loading import load_side

    a = write_jsonl("s/a.jsonl", [{"task_id": "alpha", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0}])
    b = write_jsonl("s/b.jsonl", [{"task_id": "beta", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0}])
    write_jsonl("s/b_failures.jsonl", [failure(None, "agent_run_error", 0, 1)])
    request = SideRequest(str(a), display="s/*.jsonl", key=key, shards=((str(a), "a.jsonl"), (str(b), "b.jsonl")))
    side = child_here(request) if reader == "child" else load_side(request)
    assert [ident[1] if ident else None for ident in side.choice.values] == ["alpha", "beta", "beta"]
    assert any("1 failure record(s) without task_id placed in their task" in note for note in side.choice.notes)

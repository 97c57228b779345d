"""docs/semantics.md, "Task identity and the join"."""

from __future__ import annotations

import json

import pytest

from pytest_rollout_parity import CompareInputError, compare_rollouts

CANDIDATES = [
    "_ng_task_id",
    "task_name",
    "task_id",
    "verifier_metadata.task_id",
    "verifier_metadata.task_name",
    "verifier_metadata.instance_id",
    "verifier_metadata.id",
]


def set_path(row: dict, dotted: str, value) -> dict:
    parts = dotted.split(".")
    cur = row
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
    return row


def ng(task_id: str, taskset: str = "terminal-bench-2-1", reward=1.0) -> dict:
    return {"_ng_task_id": {"taskset": taskset, "task_id": task_id}, "reward": reward}


def labels(res) -> list[str]:
    return [t.task for t in res.tasks]


def cats(res) -> dict[str, str]:
    return {t.task: t.category for t in res.tasks}


# --- key detection ---------------------------------------------------------------------------


@pytest.mark.parametrize("index", range(len(CANDIDATES)))
def test_key_detection_takes_the_first_candidate_every_row_carries(index):
    # every row carries this candidate and all later ones; the earlier ones are absent
    rows = []
    for n in range(2):
        row = {"reward": 1.0}
        for j, field in enumerate(CANDIDATES[index:]):
            set_path(row, field, f"{'winner' if j == 0 else 'other' + str(j)}-{n}")
        rows.append(row)
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == CANDIDATES[index]
    assert res.join.new_key == CANDIDATES[index]
    assert labels(res) == ["winner-0", "winner-1"]


def test_appended_candidates_never_outrank_the_listed_ones(real_rows):
    # legacy harbor_agent rows carry instance_id and metadata.task_name (candidates that may be
    # appended); a listed candidate present on every row still wins.
    rows = real_rows("harbor_agent_terminal_bench_daytona.jsonl")
    for r, name in zip(rows, ["vm-one", "vm-two"]):
        r["verifier_metadata"] = {"id": name}
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "verifier_metadata.id"
    assert labels(res) == ["vm-one", "vm-two"]


def test_a_candidate_missing_or_null_on_one_row_does_not_qualify():
    old = [
        {"task_name": "knights_knaves", "task_id": "t1", "reward": 1.0},
        {"task_name": None, "task_id": "t2", "reward": 1.0},
        {"task_id": "t3", "reward": 0.0},
    ]
    res = compare_rollouts(old, old)
    assert res.join.old_key == "task_id"
    assert labels(res) == ["t1", "t2", "t3"]


def test_keys_are_detected_per_side(real_rows):
    old = real_rows("deepswe_opencode_trimmed.jsonl")  # task_id (and verifier_metadata.task_id)
    new = [{"verifier_metadata": {"task_id": "ts-pattern-match-each"}, "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "task_id"
    assert res.join.new_key == "verifier_metadata.task_id"
    assert cats(res) == {"ts-pattern-match-each": "identical"}


def test_no_candidate_is_an_input_error():
    rows = [{"reward": 1.0, "problem": "x"}, {"reward": 0.0, "problem": "y"}]
    with pytest.raises(CompareInputError) as exc:
        compare_rollouts(rows, rows)
    message = str(exc.value)
    # the spec's text, possibly with the side named in front of it
    assert "no task id field found; rows carry none of " in message
    for field in CANDIDATES:
        assert field in message
    assert message.endswith("(use key=)")


def test_no_candidate_on_one_row_is_an_input_error():
    old = [{"task_id": "a", "reward": 1.0}, {"reward": 1.0, "instance_id": "x"}]
    new = [{"task_id": "a", "reward": 1.0}]
    with pytest.raises(CompareInputError) as exc:
        compare_rollouts(old, new)
    assert "no task id field found" in str(exc.value)


def test_explicit_key_applies_to_both_sides(real_rows):
    old = real_rows("harbor_agent_terminal_bench_daytona.jsonl")
    new = real_rows("harbor_agent_terminal_bench_daytona.jsonl")
    new[1]["reward"] = 0.0
    res = compare_rollouts(old, new, key="instance_id")
    assert res.join.old_key == res.join.new_key == "instance_id"
    # "::" is never a namespace to strip
    assert cats(res) == {
        "terminal_bench::gpt2-codegolf": "identical",
        "terminal_bench::reshard-c4-data": "flipped",
    }
    assert res.join.old_prefix_stripped is None
    assert res.join.new_prefix_stripped is None


def test_explicit_dotted_key(real_rows):
    old = real_rows("harbor_agent_terminal_bench_daytona.jsonl")
    res = compare_rollouts(old, old, key="metadata.task_name")
    assert res.join.old_key == res.join.new_key == "metadata.task_name"
    assert labels(res) == ["gpt2-codegolf", "reshard-c4-data"]


def test_explicit_key_overrides_detection(real_rows):
    rows = real_rows("deepswe_opencode_trimmed.jsonl")
    rows[0]["verifier_metadata"]["task_id"] = "other-id"
    res = compare_rollouts(rows, rows, key="verifier_metadata.task_id")
    assert labels(res) == ["other-id"]
    assert res.join.old_key == "verifier_metadata.task_id"


def test_explicit_key_missing_on_a_row_is_an_error_naming_the_field(real_rows):
    old = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    new = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    del new[1]["responses_create_params"]["metadata"]["instance_id"]
    key = "responses_create_params.metadata.instance_id"
    assert compare_rollouts(old, old, key=key).tasks[0].task == "astropy__astropy-12907"
    with pytest.raises(CompareInputError) as exc:
        compare_rollouts(old, new, key=key)
    assert key in str(exc.value)


def test_a_side_with_no_rows_borrows_the_other_sides_key():
    new = [{"task_name": "a", "reward": 1.0}, {"task_name": "b", "reward": 0.0}]
    res = compare_rollouts([], new)
    assert res.join.old_key == "task_name"
    assert res.join.new_key == "task_name"
    assert cats(res) == {"a": "missing", "b": "missing"}
    c = res.counts()
    assert (c["missing_new_only"], c["missing_old_only"]) == (2, 0)
    assert all(t.old is None and t.new is not None for t in res.tasks)


def test_old_side_with_rows_lends_its_key_to_an_empty_new_side():
    res = compare_rollouts([{"verifier_metadata": {"id": "q1"}, "reward": 1.0}], [])
    assert res.join.old_key == res.join.new_key == "verifier_metadata.id"
    assert res.counts()["missing_old_only"] == 1


# --- id values -------------------------------------------------------------------------------


def test_dict_id_gives_taskset_and_task_id_single_taskset_is_plain():
    rows = [ng("regex-log"), ng("fix-git")]
    res = compare_rollouts(rows, rows)
    assert labels(res) == ["fix-git", "regex-log"]
    assert res.join.keyed_by_taskset is False


def test_dict_id_with_id_instead_of_task_id():
    old = [{"_ng_task_id": {"taskset": "weather:train", "id": "w-1"}, "reward": 1.0}]
    new = [{"_ng_task_id": {"taskset": "weather:train", "task_id": "w-1"}, "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert cats(res) == {"w-1": "identical"}


def test_dict_without_an_id_is_identified_by_canonical_json():
    old = [{"task_id": {"path": "tasks/x", "git_commit_id": "abc"}, "reward": 1.0}]
    new = [{"task_id": {"git_commit_id": "abc", "path": "tasks/x"}, "reward": 0.0}]
    res = compare_rollouts(old, new)
    assert len(res.tasks) == 1
    t = res.tasks[0]
    assert t.category == "flipped"
    assert json.loads(t.task) == {"path": "tasks/x", "git_commit_id": "abc"}
    assert t.task.index('"git_commit_id"') < t.task.index('"path"')  # sorted keys


def test_int_ids_join_string_ids_by_string_form():
    old = [{"task_id": 1, "reward": 1.0}, {"task_id": 2, "reward": 0.0}]
    new = [{"task_id": "1", "reward": 1.0}, {"task_id": "2", "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert cats(res) == {"1": "identical", "2": "flipped"}
    assert all(isinstance(t.task, str) for t in res.tasks)


def test_string_ng_task_id_is_a_plain_id():
    old = [{"_ng_task_id": "fix-git", "reward": 1.0}]
    new = [ng("fix-git")]
    res = compare_rollouts(old, new)
    assert cats(res) == {"fix-git": "identical"}


def test_slash_ids_are_whole_ids_when_both_sides_share_them():
    rows = [{"verifier_metadata": {"task_id": "HumanEval/0"}, "reward": 1.0}]
    res = compare_rollouts(rows, rows)
    assert cats(res) == {"HumanEval/0": "identical"}
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None


# --- tasksets --------------------------------------------------------------------------------


def test_both_sides_keyed_by_taskset():
    old = [ng("x", "terminal-bench-2-1"), ng("x", "weather:train"), ng("y", "terminal-bench-2-1")]
    new = [ng("x", "weather:train", 0.0), ng("x", "terminal-bench-2-1"), ng("y", "weather:train")]
    res = compare_rollouts(old, new)
    assert res.join.keyed_by_taskset is True
    assert cats(res) == {
        "terminal-bench-2-1/x": "identical",
        "terminal-bench-2-1/y": "missing",
        "weather:train/x": "flipped",
        "weather:train/y": "missing",
    }
    assert labels(res) == sorted(labels(res))
    assert (
        "both sides span several tasksets (terminal-bench-2-1, weather:train); "
        "tasks are keyed and listed as taskset/task_id"
    ) in res.notes


def test_one_side_keyed_matches_plain_ids_and_reports_ambiguous_ones():
    old = [
        ng("solo", "terminal-bench-2-1"),
        ng("other", "weather:train"),
        ng("dup-task", "terminal-bench-2-1"),
        ng("dup-task", "weather:train"),
    ]
    new = [
        {"task_name": "solo", "reward": 1.0},
        {"task_name": "other", "reward": 0.0},
        {"task_name": "dup-task", "reward": 1.0},
    ]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_id"
    assert res.join.new_key == "task_name"
    assert cats(res) == {
        "solo": "identical",
        "other": "flipped",
        "terminal-bench-2-1/dup-task": "missing",
        "weather:train/dup-task": "missing",
        "dup-task": "missing",
    }
    by = {t.task: t for t in res.tasks}
    assert by["terminal-bench-2-1/dup-task"].new is None
    assert by["dup-task"].old is None
    span_note = (
        "the old side spans several tasksets (terminal-bench-2-1, weather:train); "
        "its tasks are matched to the other side's plain ids on task_id"
    )
    assert span_note in res.notes
    others = [n for n in res.notes if n != span_note]
    assert any("dup-task" in n for n in others), res.notes
    assert not any("solo" in n for n in others), res.notes


def test_one_side_keyed_new_side():
    old = [{"task_id": "solo", "reward": 1.0}]
    new = [ng("solo", "b-set", 0.0), ng("elsewhere", "a-set")]
    res = compare_rollouts(old, new)
    assert cats(res)["solo"] == "flipped"
    assert (
        "the new side spans several tasksets (a-set, b-set); "
        "its tasks are matched to the other side's plain ids on task_id"
    ) in res.notes


def test_one_side_keyed_uses_the_plain_sides_taskset_to_resolve_a_recurring_id():
    old = [
        ng("solo", "terminal-bench-2-1"),
        ng("dup-task", "terminal-bench-2-1"),
        ng("dup-task", "weather:train", 0.0),
    ]
    # the plain side names one taskset: terminal-bench-2-1
    new = [ng("solo", "terminal-bench-2-1"), ng("dup-task", "terminal-bench-2-1")]
    res = compare_rollouts(old, new)
    assert cats(res) == {
        "dup-task": "identical",
        "solo": "identical",
        "weather:train/dup-task": "missing",
    }
    by = {t.task: t for t in res.tasks}
    assert by["dup-task"].old.reward == 1.0
    assert by["weather:train/dup-task"].old.reward == 0.0
    assert by["weather:train/dup-task"].new is None


# --- namespace prefix ------------------------------------------------------------------------


def test_prefix_stripped_from_the_one_prefixed_side():
    old = [
        {"task_name": "terminal-bench/fix-git", "reward": 1.0},
        {"task_name": "terminal-bench/regex-log", "reward": 0.0},
    ]
    new = [ng("fix-git"), ng("regex-log")]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped in ("terminal-bench", "terminal-bench/")
    assert res.join.new_prefix_stripped is None
    assert cats(res) == {"fix-git": "identical", "regex-log": "flipped"}


def test_prefix_stripped_from_the_new_side():
    old = [ng("fix-git")]
    new = [{"task_name": "terminal-bench/fix-git", "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert res.join.new_prefix_stripped in ("terminal-bench", "terminal-bench/")
    assert res.join.old_prefix_stripped is None
    assert cats(res) == {"fix-git": "identical"}


def test_no_strip_when_both_sides_carry_prefixes():
    old = [{"task_name": "ns-a/fix-git", "reward": 1.0}]
    new = [{"task_name": "ns-b/fix-git", "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None
    assert cats(res) == {"ns-a/fix-git": "missing", "ns-b/fix-git": "missing"}


def test_no_strip_when_neither_side_carries_a_prefix():
    old = [{"task_name": "fix-git", "reward": 1.0}]
    new = [{"task_name": "regex-log", "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None
    assert cats(res) == {"fix-git": "missing", "regex-log": "missing"}


def test_no_strip_when_the_sides_share_a_label():
    old = [
        {"task_name": "terminal-bench/fix-git", "reward": 1.0},
        {"task_name": "terminal-bench/regex-log", "reward": 1.0},
    ]
    new = [
        {"task_name": "terminal-bench/fix-git", "reward": 1.0},
        {"task_name": "regex-log", "reward": 1.0},
    ]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None
    assert cats(res) == {
        "regex-log": "missing",
        "terminal-bench/fix-git": "identical",
        "terminal-bench/regex-log": "missing",
    }


def test_no_strip_when_prefixes_differ_within_a_side():
    old = [{"task_name": "tb/fix-git", "reward": 1.0}, {"task_name": "swe/regex-log", "reward": 1.0}]
    new = [{"task_name": "fix-git", "reward": 1.0}, {"task_name": "regex-log", "reward": 1.0}]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None
    assert cats(res) == {
        "fix-git": "missing",
        "regex-log": "missing",
        "swe/regex-log": "missing",
        "tb/fix-git": "missing",
    }


def test_double_colon_is_never_stripped(real_rows):
    old = real_rows("harbor_agent_terminal_bench_daytona.jsonl")  # terminal_bench::<task>
    new = [{"instance_id": "gpt2-codegolf", "reward": 1.0}, {"instance_id": "reshard-c4-data", "reward": 1.0}]
    res = compare_rollouts(old, new, key="instance_id")
    assert res.join.old_prefix_stripped is None and res.join.new_prefix_stripped is None
    assert res.counts()["missing"] == 4


def test_no_strip_when_a_side_has_no_rows():
    res = compare_rollouts([{"task_name": "terminal-bench/fix-git", "reward": 1.0}], [])
    assert res.join.old_prefix_stripped is None
    assert labels(res) == ["terminal-bench/fix-git"]


def test_tasks_are_sorted_by_label():
    old = [{"task_id": t, "reward": 1.0} for t in ["m-task", "c-task", "x-task"]]
    new = [{"task_id": t, "reward": 1.0} for t in ["b-task", "x-task", "a-task"]]
    res = compare_rollouts(old, new)
    assert labels(res) == ["a-task", "b-task", "c-task", "m-task", "x-task"]


def test_falsy_ids_are_carried():
    rows = [{"task_id": 0, "reward": 1.0}, {"task_id": 1, "reward": 1.0}]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "task_id"
    assert labels(res) == ["0", "1"]


def test_explicit_key_null_on_a_row_is_an_error_naming_the_field():
    old = [{"problem_id": "p1", "reward": 1.0}, {"problem_id": None, "reward": 1.0}]
    new = [{"problem_id": "p1", "reward": 1.0}]
    with pytest.raises(CompareInputError) as exc:
        compare_rollouts(old, new, key="problem_id")
    assert "problem_id" in str(exc.value)


def test_explicit_top_level_key_outside_the_candidates():
    old = [{"problem_id": "p1", "reward": 1.0}, {"problem_id": "p2", "reward": 0.0}]
    new = [{"problem_id": "p1", "reward": 0.0}, {"problem_id": "p2", "reward": 0.0}]
    res = compare_rollouts(old, new, key="problem_id")
    assert cats(res) == {"p1": "flipped", "p2": "identical"}


def test_anonymous_rows_do_not_block_prefix_stripping():
    old = [
        {"task_name": "terminal-bench/fix-git", "reward": 1.0},
        {"_ng_failure_class": "agent_request_failed", "mask_sample": True, "failure_kind": "agent_request_failed"},
    ]
    new = [ng("fix-git")]
    res = compare_rollouts(old, new)
    assert res.join.old_prefix_stripped in ("terminal-bench", "terminal-bench/")
    assert cats(res) == {"fix-git": "identical", "unknown (old) #1": "masked"}


def test_numbers_in_labels_sort_by_value():
    rows = [{"task_id": t, "reward": 1.0} for t in ["task-10", "task-9", "10", "9", "task-09", "b"]]
    res = compare_rollouts(rows, rows)
    assert labels(res) == ["9", "10", "b", "task-09", "task-9", "task-10"]


def test_no_rows_on_either_side_is_an_input_error():
    # as the reference does: an empty comparison is not a report of zero tasks
    with pytest.raises(CompareInputError, match="no rows on either side"):
        compare_rollouts([], [])


def test_prefix_is_stripped_from_ids_before_tasksets_are_matched():
    # new: p/x in two tasksets and p/y in one; old: plain x and y
    old = [{"task_id": "x", "reward": 1.0}, {"task_id": "y", "reward": 1.0}]
    new = [ng("p/x", "set-a"), ng("p/x", "set-b"), ng("p/y", "set-a", 0.0)]
    res = compare_rollouts(old, new)
    assert res.join.new_prefix_stripped == "p/" and res.join.old_prefix_stripped is None
    assert cats(res) == {"y": "flipped", "x": "missing", "set-a/x": "missing", "set-b/x": "missing"}
    assert any("recur in several new tasksets" in note and note.endswith(": x") for note in res.notes), res.notes

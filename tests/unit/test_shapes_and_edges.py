"""Real shapes beyond the first seven key fields, and edges a crashed or merged producer leaves.

Every case is checked on both paths a user can take: rows in memory (`compare_rollouts` over
`load_rollouts`) and the streamed files (`compare_files`, what the plugin runs).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rollout_parity import CompareInputError, compare_files, compare_rollouts, load_rollouts, summary_dict


def both(old: Path, new: Path) -> dict:
    in_memory = summary_dict(compare_rollouts(load_rollouts(old), load_rollouts(new)))
    streamed = summary_dict(compare_files(old, new))
    assert in_memory == streamed
    return streamed


def harbor(task: str, reward: float) -> dict:
    return {"_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": task}, "reward": reward}


def test_legacy_harbor_agent_rows_join_harbor_path_rows(real_rows, write_jsonl) -> None:
    old = write_jsonl("old.jsonl", real_rows("harbor_agent_terminal_bench_daytona.jsonl"))
    new = write_jsonl("new.jsonl", [harbor("gpt2-codegolf", 1.0), harbor("reshard-c4-data", 0.0)])
    summary = both(old, new)
    assert summary["join"]["old_key"] == "metadata.task_name"
    assert {t["task"]: t["category"] for t in summary["tasks"]} == {
        "gpt2-codegolf": "identical",
        "reshard-c4-data": "flipped",
    }


def test_anyterminal_rows_key_on_the_request_metadata(real_rows, write_jsonl) -> None:
    old = write_jsonl("old.jsonl", real_rows("anyterminal_hermes_trimmed.jsonl"))
    new = write_jsonl("new.jsonl", [harbor("modernize-scientific-stack", 0.0)])
    summary = both(old, new)
    assert summary["join"]["old_key"] == "responses_create_params.metadata.task_name"
    assert [(t["task"], t["category"], t["winner"]) for t in summary["tasks"]] == [
        ("modernize-scientific-stack", "flipped", "old")
    ]


def test_anyswe_repeats_key_on_the_request_instance_id(real_rows, write_jsonl) -> None:
    rows = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    old = write_jsonl("old.jsonl", rows)
    new = write_jsonl("new.jsonl", [dict(rows[0], reward=1.0)])
    summary = both(old, new)
    assert summary["join"]["old_key"] == "responses_create_params.metadata.instance_id"
    (task,) = summary["tasks"]
    assert (task["task"], task["category"], task["old"]["reward"]) == ("astropy__astropy-12907", "flipped", 0.5)


def test_failure_record_in_a_merged_main_file_is_anonymous(write_jsonl) -> None:
    rows = [
        {"task_id": "a", "reward": 1.0},
        {"_ng_failure_class": "agent_request_failed", "_ng_task_index": 4, "_ng_rollout_index": 0},
    ]
    old = write_jsonl("old.jsonl", rows)
    new = write_jsonl("new.jsonl", rows[:1])
    summary = both(old, new)
    assert [(t["task"], t["category"]) for t in summary["tasks"]] == [
        ("a", "identical"),
        ("unknown (old) #1", "masked"),
    ]


def test_no_key_names_the_row_where_no_common_field_remains(write_jsonl) -> None:
    path = write_jsonl(
        "old.jsonl",
        [{"task_id": "a", "reward": 1.0}, {"task_id": "b", "reward": 0.0}, {"task_name": "c", "reward": 1.0}],
    )
    with pytest.raises(CompareInputError) as info:
        compare_files(path, path)
    assert str(info.value).startswith(f"{path}:3: no task id field found; rows carry none of _ng_task_id, task_name,")
    assert str(info.value).endswith("(use key=)")


def test_an_integer_reward_beyond_float_range_is_non_finite(write_jsonl) -> None:
    old = write_jsonl("old.jsonl", '{"task_id": "a", "reward": ' + "9" * 400 + "}\n")
    new = write_jsonl("new.jsonl", [{"task_id": "a", "reward": 1.0}])
    summary = both(old, new)
    assert summary["tasks"][0]["old"]["masked"] == "non-finite reward (inf)"


def test_a_line_cut_short_mid_file_says_so(write_jsonl) -> None:
    path = write_jsonl("cut.jsonl", '{"task_id": "a", "reward": 1.0, "x": {"y": 1\n{"task_id": "b", "reward": 1}\n')
    with pytest.raises(CompareInputError, match=r"cut\.jsonl:1: invalid JSON: the line ends before its object does"):
        compare_files(path, path)


def test_control_character_message_reads_cleanly(write_jsonl) -> None:
    path = write_jsonl("ctl.jsonl", b'{"task_id": "a\x01", "reward": 1}\n')
    with pytest.raises(CompareInputError) as info:
        compare_files(path, path)
    assert str(info.value).endswith("ctl.jsonl:1: invalid JSON: Invalid control character (column 15)")


def test_agent_error_of_a_masked_row_is_not_reported(write_jsonl) -> None:
    old = write_jsonl(
        "old.jsonl",
        [
            {"task_id": "a", "reward": 1.0},
            {"task_id": "a", "reward": 0.0, "mask_sample": True, "error": "RuntimeError: sandbox died"},
        ],
    )
    new = write_jsonl("new.jsonl", [{"task_id": "a", "reward": 1.0}])
    summary = both(old, new)
    assert summary["tasks"][0]["old"]["agent_error"] is None
    # the masked row is left out: the task is compared on the scored row
    assert summary["tasks"][0]["category"] == "identical" and summary["tasks"][0]["old"]["masked_rows"] == 1


def test_an_id_matched_through_the_plain_sides_taskset_is_not_called_unmatchable() -> None:
    new = [
        {"_ng_task_id": {"taskset": "A", "task_id": "x"}, "reward": 1.0},
        {"_ng_task_id": {"taskset": "B", "task_id": "x"}, "reward": 1.0},
        {"_ng_task_id": {"taskset": "B", "task_id": "y"}, "reward": 1.0},
    ]
    old = [
        {"_ng_task_id": {"taskset": "A", "task_id": "x"}, "reward": 1.0},
        {"_ng_task_id": {"taskset": "A", "task_id": "y"}, "reward": 1.0},
    ]
    result = compare_rollouts(old, new)
    assert {t.task: t.category for t in result.tasks}["x"] == "identical"
    assert not any("cannot be matched" in note for note in result.notes), result.notes


def test_ambiguity_note_survives_a_stripped_prefix() -> None:
    """Legacy `terminal-bench/<task>` against a Harbor side spanning tasksets: the recurring id is named."""
    old = [{"task_name": "terminal-bench/a", "reward": 1.0}, {"task_name": "terminal-bench/b", "reward": 1.0}]
    new = [
        {"_ng_task_id": {"taskset": "t1", "task_id": "a"}, "reward": 1.0},
        {"_ng_task_id": {"taskset": "t2", "task_id": "b"}, "reward": 1.0},
        {"_ng_task_id": {"taskset": "t1", "task_id": "b"}, "reward": 1.0},
    ]
    result = compare_rollouts(old, new)
    assert result.join.old_prefix_stripped == "terminal-bench/"
    assert {t.task: t.category for t in result.tasks} == {
        "a": "identical",
        "b": "missing",
        "t1/b": "missing",
        "t2/b": "missing",
    }
    assert result.notes[1] == (
        "1 task id(s) recur in several new tasksets and cannot be matched to the other side's plain ids; "
        "they are listed as taskset/task_id: b"
    )

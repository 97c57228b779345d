"""docs/semantics.md, "Reading a side and its sidecar": the newest attempt stands, omissions and
judge failures are masked. Rows are the real deepswe opencode row, re-stamped as the newest
collector stamps them."""

from __future__ import annotations

import gzip

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.api import compare_files

REAL = "deepswe_opencode_trimmed.jsonl"


@pytest.fixture
def stamped(real_rows):
    """stamped(task, reward, attempt=..., ti=..., ri=..., **extra) -> a real row re-stamped."""
    template = real_rows(REAL)[0]

    def make(task: str, reward, *, attempt=None, ti: int = 0, ri: int = 0, run="run-a", **extra) -> dict:
        row = dict(template, task_id=task, reward=reward, verifier_metadata={"task_id": task})
        row.update({"_ng_task_index": ti, "_ng_rollout_index": ri, "_ng_run_id": run})
        if attempt is not None:
            row["_ng_attempt_index"] = attempt
        row.update(extra)
        return row

    return make


def record(task: str, *, attempt=None, ti: int = 0, ri: int = 0, run="run-a", **extra) -> dict:
    """A sidecar record as the newest collector writes one."""
    rec = {
        "_ng_failure_class": "agent_run_error",
        "_ng_failure_message": "boom",
        "task_id": task,
        "_ng_task_index": ti,
        "_ng_rollout_index": ri,
        "_ng_run_id": run,
    }
    if attempt is not None:
        rec["_ng_attempt_index"] = attempt
    rec.update(extra)
    return rec


def _task(result, name):
    return next(t for t in result.tasks if t.task == name)


def test_a_late_result_of_an_older_attempt_does_not_count(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0, attempt=0)])
    # attempt 1 scored 1.0; attempt 0's late 0.0 was appended after it
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0, attempt=1), stamped("fix-git", 0.0, attempt=0)])
    result = compare_files(old, new)
    task = _task(result, "fix-git")
    assert task.category == "identical"
    assert task.new is not None and len(task.new.facts) == 1 and task.new.reward == 1.0
    assert any("new side: 1 superseded attempt(s) left out" in note for note in result.notes)


def test_without_the_stamp_every_row_is_a_repeat_as_before(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0), stamped("fix-git", 0.0)])
    result = compare_files(old, new)
    task = _task(result, "fix-git")
    assert task.category == "flipped" and task.new is not None and task.new.reward == 0.5
    assert not any("superseded" in note for note in result.notes)


def test_an_unstamped_row_is_attempt_zero_beside_stamped_ones(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0, attempt=2), stamped("fix-git", 0.0)])
    assert _task(compare_files(old, new), "fix-git").category == "identical"


def test_same_attempt_later_line_wins_and_rollouts_are_distinct(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 0.0, attempt=0, ri=0), stamped("fix-git", 0.0, ri=1)])
    new = write_jsonl(
        "new/r.jsonl",
        [
            stamped("fix-git", 1.0, attempt=0, ri=0),
            stamped("fix-git", 0.0, attempt=0, ri=0),  # same attempt, later line: stands
            stamped("fix-git", 0.0, attempt=0, ri=1),  # another rollout: its own sample
        ],
    )
    task = _task(compare_files(old, new), "fix-git")
    assert task.category == "identical"
    assert task.new is not None and len(task.new.facts) == 2


def test_other_runs_are_other_logical_rollouts(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = write_jsonl(
        "new/r.jsonl", [stamped("fix-git", 1.0, attempt=0, run="a"), stamped("fix-git", 0.0, attempt=0, run="b")]
    )
    task = _task(compare_files(old, new), "fix-git")
    assert task.new is not None and task.new.reward == 0.5


def test_a_newer_failure_in_the_sidecar_beats_an_older_scored_row(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0, attempt=0)])
    write_jsonl("new/r_failures.jsonl", [record("fix-git", attempt=1)])
    task = _task(compare_files(old, new), "fix-git")
    assert task.category == "masked"
    assert task.new is not None and task.new.masked == "mask_sample (failure_kind=agent_run_error)"


def test_at_the_same_attempt_the_main_row_beats_the_sidecar_record(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0, attempt=1)])
    write_jsonl("new/r_failures.jsonl", [record("fix-git", attempt=1), record("fix-git", attempt=0)])
    result = compare_files(old, new)
    assert _task(result, "fix-git").category == "identical"
    assert any("2 superseded attempt(s)" in note for note in result.notes)


def test_a_compressed_side_is_scanned_for_the_stamp(tmp_path, write_jsonl, stamped):
    from tests.unit.conftest import dump_rows

    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    new = tmp_path / "new" / "r.jsonl.gz"
    new.parent.mkdir()
    new.write_bytes(
        gzip.compress(dump_rows([stamped("fix-git", 1.0, attempt=1), stamped("fix-git", 0.0, attempt=0)]).encode())
    )
    assert _task(compare_files(old, new), "fix-git").category == "identical"


def test_an_omitted_record_is_masked_never_scored(write_jsonl, stamped):
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0), stamped("regex-log", 1.0, ti=1)])
    new = write_jsonl("new/r.jsonl", [stamped("fix-git", 1.0)])
    write_jsonl("new/r_failures.jsonl", [record("regex-log", ti=1, _ng_omitted=True, reward=0.0)])
    task = _task(compare_files(old, new), "regex-log")
    assert task.category == "masked"
    assert task.new is not None and task.new.masked == "omitted on purpose"


def test_a_judge_invalid_main_row_is_masked(real_rows):
    old = real_rows(REAL)
    new = real_rows(REAL)
    new[0].update(reward=0.0, invalid_judge_response=True)
    task = compare_rollouts(old, new).tasks[0]
    assert task.category == "masked"
    assert task.new is not None and task.new.masked == "judge invalid"


def test_a_judge_invalid_row_among_repeats_is_left_out_of_the_mean(real_rows):
    old = real_rows(REAL) * 2
    new = real_rows(REAL) + real_rows(REAL)
    new[1].update(reward=0.0, invalid_judge_response=True)
    task = compare_rollouts(old, new).tasks[0]
    assert task.category == "identical"  # compared on the one scored row; the judge's 0 is no score
    assert task.new is not None and task.new.masked is None and task.new.masked_rows == 1
    assert task.new.reward == task.old.reward and task.new.reward_text().endswith("(mean of 1 of 2 rows)")


def test_a_judge_invalid_majority_among_repeats_masks_the_side(real_rows):
    old = real_rows(REAL) + real_rows(REAL) + real_rows(REAL)
    new = real_rows(REAL) + real_rows(REAL) + real_rows(REAL)
    for row in new[1:]:
        row.update(reward=0.0, invalid_judge_response=True)
    task = compare_rollouts(old, new).tasks[0]
    assert task.category == "masked"
    assert task.new is not None
    assert task.new.masked == "2/3 rows masked: judge invalid (only 1 scored: too few to compare)"
    assert task.new.compared_rows == []  # a masked side is not compared, whatever its scored row


def test_invalid_judge_response_false_is_a_verdict(real_rows):
    old = real_rows(REAL)
    new = real_rows(REAL)
    new[0].update(reward=0.0, invalid_judge_response=False)
    assert compare_rollouts(old, new).tasks[0].category == "flipped"


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_the_reader_child_and_both_parsers_leave_out_the_same_attempts(
    write_jsonl, stamped, monkeypatch, parser, child_here
):
    from pytest_rollout_parity.core.reading.loaded_side import SideRequest
    from pytest_rollout_parity.core.reading.loading import load_side

    monkeypatch.setenv("PARITY_PARSER", parser)
    rows = [stamped("fix-git", 1.0, attempt=1), stamped("fix-git", 0.0, attempt=0)]
    path = write_jsonl("r.jsonl", rows)
    in_child, here = child_here(SideRequest(str(path))), load_side(SideRequest(str(path)))
    for side in (in_child, here):
        assert [f.reward for f in side.facts] == [1.0]
        assert any("1 superseded attempt(s)" in note for note in side.choice.notes)


@pytest.mark.parametrize("blank", ["\u00a0", "\u2028", "\u3000 \u2029", "\u2003", " \u0085\t"])
def test_a_line_of_non_ascii_whitespace_is_skipped_like_a_blank_line(write_jsonl, real_rows, blank):
    from tests.unit.conftest import dump_rows

    rows = real_rows(REAL)
    text = dump_rows(rows) + blank + "\n" + dump_rows(rows)
    old = write_jsonl("old/r.jsonl", text.encode("utf-8"))
    new = write_jsonl("new/r.jsonl", dump_rows(rows) + blank)  # also as the last line, without newline
    result = compare_files(old, new)
    assert result.rows.old == 2 and result.rows.new == 1
    assert result.tasks[0].category == "identical"


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_a_stamp_first_seen_late_still_supersedes_the_rows_before_it(write_jsonl, stamped, monkeypatch, parser):
    """The rows before the first stamp were not ranked while read: they are ranked on a second
    read, on the compared agent's rows only, at the places they took."""
    monkeypatch.setenv("PARITY_PARSER", parser)
    other = {"agent_ref": {"name": "other"}}
    mine = {"agent_ref": {"name": "mine"}}
    rows = [
        stamped("fix-git", 1.0, ti=0, **other),
        stamped("fix-git", 0.0, ti=0, **mine),  # unstamped: attempt 0, superseded by line 4
        stamped("crack-7z", 1.0, ti=1, **mine),
        stamped("fix-git", 1.0, attempt=1, ti=0, **mine),
    ]
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0, ti=0), stamped("crack-7z", 1.0, ti=1)])
    new = write_jsonl("new/r.jsonl", rows)
    result = compare_files(old, new, new_agent="mine")
    assert [(t.task, t.category, len(t.new.facts)) for t in result.tasks] == [
        ("crack-7z", "identical", 1),
        ("fix-git", "identical", 1),
    ]
    assert _task(result, "fix-git").new.facts[0].line == 4
    assert any("new side: 1 superseded attempt(s) left out" in note for note in result.notes)


def test_an_explicit_rollout_id_names_the_rollout_where_dispatches_reuse_indices(write_jsonl, stamped):
    """Two dispatches reuse task 0, rollout 0; `_ng_rollout_id` tells them apart, so neither's
    attempt supersedes the other's (and attempts of one id still do)."""
    new = [
        stamped("t", 1.0, attempt=0, _ng_rollout_id="step1-0-0"),
        stamped("t", 0.0, attempt=0, _ng_rollout_id="step2-0-0"),
        stamped("t", 1.0, attempt=1, _ng_rollout_id="step2-0-0"),
    ]
    res = compare_files(write_jsonl("old/r.jsonl", [stamped("t", 1.0, attempt=0)]), write_jsonl("new/r.jsonl", new))
    task = res.tasks[0]
    assert len(task.new.rows) == 2 and task.category == "identical"
    assert any("1 superseded attempt(s) left out" in note for note in res.notes)


def test_a_superseded_attempt_on_a_side_where_a_row_lacks_the_task_index(write_jsonl, stamped):
    """A row without `_ng_task_index` ends the index's column; a superseded attempt after it is
    still taken out (the runs kept for the index went with the column)."""
    row_b = {k: v for k, v in stamped("b", 1.0).items() if k not in ("_ng_task_index", "_ng_rollout_index")}
    rows = [stamped("a", 1.0, attempt=0), row_b, stamped("c", 1.0, attempt=0, ti=1), stamped("c", 0.0, attempt=1, ti=1)]
    path = write_jsonl("r.jsonl", rows)
    res = compare_files(path, write_jsonl("o.jsonl", rows[:2] + rows[3:]))
    assert [(t.task, t.category) for t in res.tasks] == [("a", "identical"), ("b", "identical"), ("c", "identical")]
    assert any("1 superseded attempt(s) left out" in note for note in res.notes)


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_an_unstamped_row_named_by_rollout_id_alone_is_ranked_once_the_stamp_shows(
    write_jsonl, stamped, monkeypatch, parser
):
    """A row naming its rollout by `_ng_rollout_id` only (no task or rollout index), read before the
    first stamp, is ranked on the second read like any other: a newer attempt of it supersedes it."""
    monkeypatch.setenv("PARITY_PARSER", parser)
    no_index = ("_ng_task_index", "_ng_rollout_index")
    older = {k: v for k, v in stamped("fix-git", 0.0, _ng_rollout_id="r-1").items() if k not in no_index}
    newer = {k: v for k, v in stamped("fix-git", 1.0, attempt=1, _ng_rollout_id="r-1").items() if k not in no_index}
    old = write_jsonl("old/r.jsonl", [stamped("fix-git", 1.0)])
    result = compare_files(old, write_jsonl("new/r.jsonl", [older, newer]))
    task = _task(result, "fix-git")
    assert task.category == "identical"
    assert [fact.line for fact in task.new.facts] == [2]

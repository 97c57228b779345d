"""docs/semantics.md, "Categories" (one row, one side, the category of a task) and "Counts"."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_rollout_parity import compare_rollouts, load_rollouts

COUNT_KEYS = {
    "tasks",
    "identical",
    "flipped",
    "flipped_old_win",
    "flipped_new_win",
    "flipped_agent_error",
    "masked",
    "masked_old",
    "masked_new",
    "missing",
    "missing_old_only",
    "missing_new_only",
    "verifier_disagreements",
}


def row(task: str, reward=1.0, **extra) -> dict:
    r = {"task_id": task}
    if reward is not ...:
        r["reward"] = reward
    r.update(extra)
    return r


def one(old_rows, new_rows, **kw):
    res = compare_rollouts(old_rows, new_rows, **kw)
    assert len(res.tasks) == 1, [t.task for t in res.tasks]
    return res.tasks[0]


def side(rows):
    """The TaskSide of `rows` (all for task "t"), compared against a plain reference.

    A scored row of another task rides along: a side none of whose rows has a reward field at all
    is an input dataset, not rollouts.
    """
    res = compare_rollouts([row("t", 1.0), row("other", 1.0)], [*rows, row("other", 1.0)])
    (t,) = [t for t in res.tasks if t.task == "t"]
    return t.new


# --- mask reasons ----------------------------------------------------------------------------


def test_unmasked_row_has_no_mask_reason():
    s = side([row("t", 0.0, mask_sample=False, failure_kind=None)])
    assert s.masked is None
    assert s.reward == 0.0


def test_mask_sample_true():
    assert side([row("t", 0.0, mask_sample=True)]).masked == "mask_sample"


def test_mask_sample_truthy_non_bool():
    assert side([row("t", 0.0, mask_sample=1)]).masked == "mask_sample"


def test_mask_sample_with_failure_kind():
    s = side([row("t", 0.0, mask_sample=True, failure_kind="provider_unavailable")])
    assert s.masked == "mask_sample (failure_kind=provider_unavailable)"


CAPTURE = {"n_calls": 0, "error": "nothing recorded"}


@pytest.mark.parametrize(
    "extra, masked, reward",
    [
        ({"reward": 0.0}, None, 0.0),  # a training mask: the verified reward stands
        ({"reward": 1.0}, None, 1.0),
        ({"reward": None}, "mask_sample", None),  # no reward: nothing to score
        ({"reward": float("nan")}, "mask_sample", None),
        ({"reward": 0.0, "failure_kind": "agent_run_error"}, "mask_sample (failure_kind=agent_run_error)", None),
    ],
)
def test_a_token_capture_mask_keeps_a_finite_reward(extra, masked, reward):
    r = dict(row("t", 0.0, mask_sample=True, _ng_token_capture=CAPTURE), **extra)
    s = side([r])
    assert (s.masked, s.reward) == (masked, reward)


def test_mask_sample_wins_over_no_reward():
    s = side([row("t", ..., mask_sample=True, failure_kind="verifier_error")])
    assert s.masked == "mask_sample (failure_kind=verifier_error)"


@pytest.mark.parametrize("reward", [None, ...])
def test_no_reward(reward):
    s = side([row("t", reward)])
    assert s.masked == "no reward"
    assert s.reward is None
    assert s.reward_rows == 0
    assert s.reward_text() == "none"


@pytest.mark.parametrize("reward", [None, ...])
def test_no_reward_wins_over_nothing_with_mask_sample_false(reward):
    assert side([row("t", reward, mask_sample=False)]).masked == "no reward"


@pytest.mark.parametrize(
    "token, reason",
    [
        ("NaN", "non-finite reward (nan)"),
        ("Infinity", "non-finite reward (inf)"),
        ("-Infinity", "non-finite reward (-inf)"),
    ],
)
def test_non_finite_reward_tokens_in_a_file_mask_the_row(token, reason, write_jsonl):
    old = write_jsonl("old/r.jsonl", '{"task_id": "t", "reward": 1.0}\n')
    new = write_jsonl("new/r.jsonl", '{"task_id": "t", "reward": ' + token + "}\n")
    t = one(load_rollouts(old), load_rollouts(new))
    assert t.new.masked == reason
    assert t.new.reward is None
    assert t.new.reward_rows == 0
    assert t.category == "masked"
    assert t.winner is None


@pytest.mark.parametrize(
    "value, reason",
    [
        (math.nan, "non-finite reward (nan)"),
        (math.inf, "non-finite reward (inf)"),
        (-math.inf, "non-finite reward (-inf)"),
    ],
)
def test_non_finite_reward_in_memory(value, reason):
    assert side([row("t", value)]).masked == reason


def test_failure_kind_without_mask_sample_does_not_mask():
    # Harbor verifier timeout: a scored zero that counts like any other.
    t = one([row("t", 1.0)], [row("t", 0.0, mask_sample=False, failure_kind="harbor:verifier_timeout")])
    assert t.new.masked is None
    assert t.new.failure_kind == "harbor:verifier_timeout"
    assert t.new.reward == 0.0
    assert t.category == "flipped"
    assert (t.winner, t.loser) == ("old", "new")


def test_failure_kind_only_labels_an_identical_task():
    t = one([row("t", 0.0)], [row("t", 0.0, failure_kind="harbor:missing_reward")])
    assert t.category == "identical"
    assert t.new.failure_kind == "harbor:missing_reward"
    assert t.old.failure_kind is None


def test_failure_kind_is_the_first_of_an_unmasked_row():
    s = side(
        [
            row("t", 0.0, mask_sample=True, failure_kind="verifier_error"),
            row("t", 0.0, failure_kind=None),
            row("t", 0.0, failure_kind="harbor:invalid_reward"),
            row("t", 0.0, failure_kind="harbor:verifier_timeout"),
        ]
    )
    assert s.failure_kind == "harbor:invalid_reward"


def test_failure_kind_none_when_only_masked_rows_carry_one():
    s = side([row("t", 0.0, mask_sample=True, failure_kind="verifier_error")])
    assert s.failure_kind is None


# --- masked text over several rows -----------------------------------------------------------


def test_several_rows_some_masked_first_reason_in_row_order():
    s = side(
        [
            row("t", 1.0),
            row("t", None),
            row("t", ..., mask_sample=True, failure_kind="provider_unavailable"),
        ]
    )
    assert s.masked == "2/3 rows masked: no reward (only 1 scored: too few to compare)"
    assert s.reward == 1.0
    assert s.reward_rows == 1
    assert s.repeated is True


def test_several_rows_all_masked():
    s = side([row("t", ..., mask_sample=True), row("t", math.nan)])
    assert s.masked == "2/2 rows masked: mask_sample"
    assert s.reward is None and s.reward_rows == 0
    assert s.reward_text() == "none"


def test_single_masked_row_gives_the_reason_itself():
    s = side([row("t", math.inf)])
    assert s.masked == "non-finite reward (inf)"
    assert s.repeated is False


# --- reward, reward_rows, repeated, reward text ----------------------------------------------


@pytest.mark.parametrize(
    "rewards, reward, text",
    [
        ([1.0], 1.0, "1.0"),
        ([0.0], 0.0, "0.0"),
        ([0.8], 0.8, "0.8"),
        ([1], 1.0, "1.0"),
        ([-100.0], -100.0, "-100.0"),
        ([19.4], 19.4, "19.4"),
        ([0.9999999999999998], 0.9999999999999998, "1.0"),
        ([0.123456], 0.123456, "0.1235"),
        ([0.0, 1.0], 0.5, "0.5 (mean of 2 rows)"),
        ([1.0, 0.0, 0.0], 1 / 3, "0.3333 (mean of 3 rows)"),
        ([1.0, 1.0, 0.0], 2 / 3, "0.6667 (mean of 3 rows)"),
        ([1, 1], 1.0, "1.0 (mean of 2 rows)"),
        ([1.0, None, 0.0], 0.5, "0.5 (mean of 2 of 3 rows)"),
        ([math.nan, 1.0], 1.0, "1.0 (mean of 1 of 2 rows)"),
        ([None, None], None, "none"),
    ],
)
def test_reward_and_reward_text(rewards, reward, text):
    s = side([row("t", r) for r in rewards])
    if reward is None:
        assert s.reward is None
    else:
        assert s.reward == pytest.approx(reward, abs=1e-12)
    assert s.reward_rows == sum(1 for r in rewards if r is not None and math.isfinite(r))
    assert s.repeated is (len(rewards) > 1)
    assert len(s.rows) == len(rewards)
    assert s.reward_text() == text


def test_rows_are_the_row_dicts():
    r1 = row("t", 0.0, extra_field="first")
    r2 = row("t", 1.0, extra_field="second")
    s = side([r1, r2])
    assert [r["extra_field"] for r in s.rows] == ["first", "second"]


# --- agent errors ----------------------------------------------------------------------------


def test_agent_error_from_error_last_non_blank_line():
    err = 'Traceback (most recent call last):\n  File "agent.py", line 3\nRuntimeError: sandbox died\n\n   \n'
    s = side([row("t", 0.0, error=err)])
    assert s.agent_error == "error: RuntimeError: sandbox died"


def test_agent_error_single_line():
    assert side([row("t", 0.0, error="agent crashed")]).agent_error == "error: agent crashed"


def test_agent_error_truncated_at_120_chars():
    line = "E" * 50 + "".join(chr(ord("a") + i % 26) for i in range(150))
    s = side([row("t", 0.0, error="first line\n" + line + "\n")])
    assert s.agent_error == "error: " + line[:120]


def test_agent_error_line_of_exactly_120_chars_is_whole():
    line = "x" * 119 + "!"
    assert side([row("t", 0.0, error=line)]).agent_error == "error: " + line


@pytest.mark.parametrize("value", ["", None])
def test_empty_error_is_no_agent_error(value):
    assert side([row("t", 0.0, error=value)]).agent_error is None


def test_agent_error_from_response_metadata_error_type():
    r = row("t", 0.0, response={"metadata": {"terminus2_completed": "false", "terminus2_error_type": "TimeoutError"}})
    assert side([r]).agent_error == "terminus2_error_type=TimeoutError"


@pytest.mark.parametrize("value", ["", None, False, 0])
def test_falsy_error_type_is_no_agent_error(value):
    r = row("t", 0.0, response={"metadata": {"terminus2_error_type": value, "terminus2_completed": "true"}})
    assert side([r]).agent_error is None


def test_metadata_names_must_end_in_error_type():
    r = row("t", 0.0, response={"metadata": {"error_types": "x", "error_type_hint": "y", "agent_error": "z"}})
    assert side([r]).agent_error is None


def test_legacy_error_wins_over_metadata_error_type():
    r = row("t", 0.0, error="boom", response={"metadata": {"terminus2_error_type": "TimeoutError"}})
    assert side([r]).agent_error == "error: boom"


def test_real_rows_report_no_agent_error(real_rows):
    # int 0 counters, metadata {}, agent_error_kind "other": none of these is an agent error
    daytona = real_rows("harbor_agent_terminal_bench_daytona.jsonl")
    res = compare_rollouts(daytona, daytona, key="instance_id")
    assert [t.old.agent_error for t in res.tasks] == [None, None]
    anyswe = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    t = one(anyswe, anyswe, key="responses_create_params.metadata.instance_id")
    assert t.old.agent_error is None
    assert t.category == "identical"


# --- categories ------------------------------------------------------------------------------


def test_missing_on_one_side():
    res = compare_rollouts([row("a"), row("b")], [row("b"), row("c", 0.0)])
    by = {t.task: t for t in res.tasks}
    assert by["a"].category == "missing" and by["a"].new is None and by["a"].winner is None
    assert by["c"].category == "missing" and by["c"].old is None and by["c"].loser is None
    c = res.counts()
    assert (c["missing"], c["missing_old_only"], c["missing_new_only"]) == (2, 1, 1)


def test_masked_on_one_side_only_is_masked_not_missing():
    t = one([row("t", 1.0)], [row("t", None)])
    assert t.category == "masked"
    assert t.old.masked is None
    assert t.new.masked == "no reward"


def test_masking_wins_over_a_reward_difference():
    t = one([row("t", 1.0)], [row("t", 0.0, mask_sample=True)])
    assert t.category == "masked"
    assert t.winner is None and t.loser is None


def test_a_masked_row_among_repeats_is_left_out_and_the_task_compared():
    t = one([row("t", 1.0)], [row("t", 1.0), row("t", 0.0, mask_sample=True)])
    assert t.category == "identical"  # the masked row's 0 is no score: the scored row is compared
    assert t.new is not None and t.new.reward == 1.0 and t.new.masked_rows == 1 and t.new.masked is None


def test_most_rows_masked_mask_the_side_and_say_how_many_scored():
    t = one([row("t", 1.0)] * 3, [row("t", 0.0), row("t", 0.0, mask_sample=True), row("t", None)])
    assert t.category == "masked"
    assert t.new is not None and t.new.masked == "2/3 rows masked: mask_sample (only 1 scored: too few to compare)"
    assert t.new.reward == 0.0  # the mean of the scored row alone, the masked row's 0 not in it


def test_masking_wins_over_an_agent_error_flip():
    t = one([row("t", 1.0, mask_sample=True)], [row("t", 0.0, error="boom")])
    assert t.category == "masked"


def test_missing_wins_over_masked():
    res = compare_rollouts([row("a", None)], [row("b")])
    assert {t.task: t.category for t in res.tasks} == {"a": "missing", "b": "missing"}


def test_identical_within_1e_9():
    t = one([row("t", 0.5)], [row("t", 0.5 + 5e-10)])
    assert t.category == "identical"
    assert t.winner is None and t.loser is None


def test_difference_above_1e_9_is_a_flip():
    t = one([row("t", 0.5)], [row("t", 0.5 + 1e-6)])
    assert t.category == "flipped"
    assert (t.winner, t.loser) == ("new", "old")


def test_agent_errors_do_not_matter_when_identical():
    t = one([row("t", 0.0, error="boom")], [row("t", 0.0, response={"metadata": {"x_error_type": "OOM"}})])
    assert t.category == "identical"
    assert t.old.agent_error == "error: boom"
    assert t.new.agent_error == "x_error_type=OOM"


def test_flip_won_by_the_higher_reward():
    t = one([row("t", -1.0)], [row("t", -0.5)])
    assert t.category == "flipped"
    assert (t.winner, t.loser) == ("new", "old")


@pytest.mark.parametrize("error_side", ["old", "new"])
def test_flip_with_an_agent_error_on_either_side(error_side):
    old = row("t", 1.0)
    new = row("t", 0.0)
    (old if error_side == "old" else new)["error"] = "Traceback...\nConnectionError: reset"
    res = compare_rollouts([old], [new])
    t = res.tasks[0]
    assert t.category == "flipped_agent_error"
    assert (t.winner, t.loser) == ("old", "new")
    c = res.counts()
    assert (c["flipped_agent_error"], c["flipped"], c["flipped_old_win"], c["flipped_new_win"]) == (1, 0, 0, 0)


def test_repeats_compared_on_the_mean_with_a_note(real_rows):
    key = "responses_create_params.metadata.instance_id"
    old = real_rows("anyswe_hermes_repeats_trimmed.jsonl")  # rewards 0.0 and 1.0
    new = real_rows("anyswe_hermes_repeats_trimmed.jsonl")[:1]
    new[0]["reward"] = 0.5
    new[0]["response"]["output"].pop()  # another run of the task: not the same trajectory
    t = one(old, new, key=key)
    assert t.category == "identical"
    assert t.old.repeated is True and t.new.repeated is False
    assert t.old.reward == 0.5
    assert t.old.reward_text() == "0.5 (mean of 2 rows)"
    res = compare_rollouts(old, new, key=key)
    assert (
        "1 task(s) have several rows on a side; they are compared on the mean reward: astropy__astropy-12907"
        in res.notes
    )


def test_repeats_note_lists_every_repeated_task():
    old = [row("alpha-task", 1.0), row("alpha-task", 1.0), row("beta-task", 1.0), row("gamma-task", 1.0)]
    new = [row("alpha-task", 1.0), row("beta-task", 0.0), row("gamma-task", 1.0), row("gamma-task", 0.0)]
    res = compare_rollouts(old, new)
    notes = [n for n in res.notes if "several rows" in n]
    assert len(notes) == 1
    assert notes[0].startswith("2 task(s) have several rows on a side; they are compared on the mean reward: ")
    listed = notes[0].split("mean reward: ", 1)[1]
    assert "alpha-task" in listed and "gamma-task" in listed and "beta-task" not in listed
    assert {t.task: t.category for t in res.tasks} == {
        "alpha-task": "identical",
        "beta-task": "flipped",
        "gamma-task": "flipped",
    }


def test_no_repeats_note_without_repeats():
    res = compare_rollouts([row("a"), row("b")], [row("a"), row("b", 0.0)])
    assert not any("several rows" in n for n in res.notes)


def test_real_fractional_reward_identical(real_rows):
    rows = real_rows("biomnibench_da_harbor_trimmed.jsonl")
    t = one(rows, real_rows("biomnibench_da_harbor_trimmed.jsonl"), key="instance_id")
    assert t.task == "biomnibench_da::da-1-4-r001"
    assert t.category == "identical"
    assert t.old.reward_text() == "0.8"


# --- counts ----------------------------------------------------------------------------------


def _mixed():
    old = [
        row("t-ident", 1.0),
        row("t-oldwin", 1.0),
        row("t-newwin1", 0.0),
        row("t-newwin2", 0.0),
        row("t-agent", 1.0),
        row("t-mask-old", 1.0, mask_sample=True),
        row("t-mask-both", None),
        row("t-mask-new", 1.0),
        row("t-old-only", 1.0),
    ]
    new = [
        row("t-ident", 1.0),
        row("t-oldwin", 0.0),
        row("t-newwin1", 1.0),
        row("t-newwin2", 0.5),
        row("t-agent", 0.0, error="boom"),
        row("t-mask-old", 1.0),
        row("t-mask-both", math.nan),
        row("t-mask-new", None),
        row("t-mask-new", None),
        row("t-new-only-1", 1.0),
        row("t-new-only-2", 0.0),
    ]
    return compare_rollouts(old, new)


def test_counts():
    res = _mixed()
    assert res.counts() == {
        "tasks": 11,
        "identical": 1,
        "flipped": 3,
        "flipped_old_win": 1,
        "flipped_new_win": 2,
        "flipped_agent_error": 1,
        "masked": 3,
        "masked_old": 2,
        "masked_new": 2,
        "missing": 3,
        "missing_old_only": 1,
        "missing_new_only": 2,
        "verifier_disagreements": 0,
    }
    assert set(res.counts()) == COUNT_KEYS


def test_rows_read_and_masked_per_side():
    res = _mixed()
    assert (res.rows.old, res.rows.old_masked) == (9, 2)
    assert (res.rows.new, res.rows.new_masked) == (11, 3)


def test_by_category():
    res = _mixed()
    assert [t.task for t in res.by_category("flipped")] == ["t-newwin1", "t-newwin2", "t-oldwin"]
    assert [t.task for t in res.by_category("flipped_agent_error")] == ["t-agent"]
    assert [t.task for t in res.by_category("masked")] == ["t-mask-both", "t-mask-new", "t-mask-old"]
    assert [t.task for t in res.by_category("missing")] == ["t-new-only-1", "t-new-only-2", "t-old-only"]
    assert [t.task for t in res.by_category("identical")] == ["t-ident"]


def test_categories_and_winners_of_the_mix():
    res = _mixed()
    got = {t.task: (t.category, t.winner, t.loser) for t in res.tasks}
    assert got == {
        "t-agent": ("flipped_agent_error", "old", "new"),
        "t-ident": ("identical", None, None),
        "t-mask-both": ("masked", None, None),
        "t-mask-new": ("masked", None, None),
        "t-mask-old": ("masked", None, None),
        "t-new-only-1": ("missing", None, None),
        "t-new-only-2": ("missing", None, None),
        "t-newwin1": ("flipped", "new", "old"),
        "t-newwin2": ("flipped", "new", "old"),
        "t-old-only": ("missing", None, None),
        "t-oldwin": ("flipped", "old", "new"),
    }
    assert [t.task for t in res.tasks] == sorted(got)


def test_rows_may_be_any_iterable():
    res = compare_rollouts((r for r in [row("a", 1.0)]), iter([row("a", 0.0)]))
    assert [(t.task, t.category, t.winner) for t in res.tasks] == [("a", "flipped", "old")]


# --- more edges ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rewards, text",
    [
        ([-1.0, 0.0, 0.0], "-0.3333 (mean of 3 rows)"),
        ([1e16], "1e+16"),
        ([0.00001], "0.0"),
        ([0.00005, 0.00005], "0.0001 (mean of 2 rows)"),
    ],
)
def test_reward_text_prints_like_a_python_float(rewards, text):
    assert side([row("t", r) for r in rewards]).reward_text() == text


def test_unscored_row_with_failure_kind_is_masked_and_has_no_failure_kind_label():
    s = side([row("t", None, mask_sample=False, failure_kind="harbor:missing_reward")])
    assert s.masked == "no reward"
    assert s.failure_kind is None


@pytest.mark.parametrize("bad", ["1.0", True, False])
def test_in_memory_string_or_bool_reward_is_an_input_error(bad):
    from pytest_rollout_parity import CompareInputError

    with pytest.raises(CompareInputError) as exc:
        compare_rollouts([row("fix-git", 1.0)], [row("fix-git", bad)])
    assert "fix-git" in str(exc.value)


def test_zero_reward_rows_are_scored_not_masked():
    t = one([row("t", 0)], [row("t", 0.0)])
    assert t.category == "identical"
    assert t.old.masked is None and t.old.reward == 0.0 and t.old.reward_rows == 1


def test_repeats_note_names_ten_tasks_then_counts_the_rest():
    names = [f"task-{n:03d}" for n in range(300)]
    old = [row(name, 1.0) for name in names for _ in range(2)]
    new = [row(name, 1.0) for name in names]
    res = compare_rollouts(old, new)
    (note,) = [n for n in res.notes if "several rows" in n]
    assert note == (
        "300 task(s) have several rows on a side; they are compared on the mean reward: "
        + ", ".join(names[:10])
        + " and 290 more (see --parity-json)"
    )


def test_a_mean_of_rewards_whose_sum_leaves_the_float_range(tmp_path: Path) -> None:
    """Found by the readers' property test: two rewards near -1.8e308 on one task overflowed the sum."""
    from pytest_rollout_parity.core.api import compare_files
    from pytest_rollout_parity.core.judging.classify import mean_reward

    huge = -8.98846567431158e307
    assert mean_reward([huge, huge]) == huge and mean_reward([0.25, 0.75]) == 0.5
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text('{"task_name": "t/a", "reward": 0}\n', encoding="utf-8")
    new.write_text(
        f'{{"task_name": "t/a", "reward": {huge!r}}}\n{{"task_name": "t/a", "reward": {huge!r}}}\n', encoding="utf-8"
    )
    (task,) = compare_files(old, new).tasks
    assert task.new is not None and task.new.reward == huge

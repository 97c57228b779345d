"""Task identity without an id field: `_ng_task_index`, then the prompt; the checks on those joins."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

import pytest

from pytest_rollout_parity import CompareInputError, compare_rollouts, summary_dict
from pytest_rollout_parity.core.api import compare_files
from pytest_rollout_parity.core.reports.summary import build_summary
from pytest_rollout_parity.core.reports.terminal import summary_lines

PROMPT_KEY = "responses_create_params.input"


def prompt(text: str, system: Optional[str] = None) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": text}]


def row(reward: float = 1.0, *, index: Optional[int] = None, text: Optional[str] = None, **extra: Any) -> dict:
    r: dict[str, Any] = {"reward": reward, **extra}
    if index is not None:
        r["_ng_task_index"] = index
        r["_ng_rollout_index"] = 0
    if text is not None:
        r["responses_create_params"] = {"input": prompt(text)}
    return r


def labels(res) -> list[str]:
    return [t.task for t in res.tasks]


def cats(res) -> dict[str, str]:
    return {t.task: t.category for t in res.tasks}


def expected_hash(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=16).hexdigest()[:12]


# --- which identity --------------------------------------------------------------------------


def test_no_id_field_keys_on_the_task_index_in_numeric_order():
    rows = [row(index=i, text=f"question {i}") for i in (11, 2, 0, 10, 1)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == res.join.new_key == "_ng_task_index"
    assert res.join.old_key_reason == "no task id field on every row"
    assert labels(res) == ["0", "1", "2", "10", "11"]


def test_an_id_field_wins_over_the_task_index_and_the_index_over_the_prompt():
    with_id = [row(index=i, text=f"q{i}", task_id=f"t-{i}") for i in range(2)]
    assert compare_rollouts(with_id, with_id).join.old_key == "task_id"
    with_index = [row(index=i, text=f"q{i}") for i in range(2)]
    assert compare_rollouts(with_index, with_index).join.old_key == "_ng_task_index"
    one_lacks_index = [row(index=0, text="q0"), row(text="q1")]
    assert compare_rollouts(one_lacks_index, one_lacks_index).join.old_key == PROMPT_KEY


def test_no_id_and_no_index_keys_on_the_prompt_with_a_readable_stable_label():
    text = "What time is my meeting with the design team tomorrow, please?"
    rows = [row(text=text), row(text="Cancel it.", reward=0.0)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == res.join.new_key == PROMPT_KEY
    assert res.join.old_key_reason == "the prompt: no task id field and no _ng_task_index on every row"
    label = f"what-time-is-my-meeting-with-the-{expected_hash(prompt(text))}"
    assert label in labels(res)
    assert f"cancel-it-{expected_hash(prompt('Cancel it.'))}" in labels(res)
    assert compare_rollouts(rows, rows).tasks[0].task == res.tasks[0].task


def test_the_prompt_label_is_the_last_user_message_and_the_hash_covers_the_whole_prompt():
    base = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "First ask"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "input_text", "text": "Second ask"}]},
    ]
    other_system = [dict(base[0], content="Be verbose.")] + base[1:]
    rows = [{"reward": 1.0, "responses_create_params": {"input": p}} for p in (base, other_system)]
    res = compare_rollouts(rows, rows)
    assert len(res.tasks) == 2  # same last question, different prompts: different tasks
    assert all(t.task.startswith("second-ask-") for t in res.tasks)
    assert {t.task for t in res.tasks} == {f"second-ask-{expected_hash(p)}" for p in (base, other_system)}


def test_the_same_prompt_spelled_differently_is_the_same_task():
    old = [{"reward": 1.0, "responses_create_params": {"input": [{"role": "user", "content": "Hi"}]}}]
    new = [{"reward": 0.0, "responses_create_params": {"input": [{"content": "Hi", "role": "user"}]}}]
    res = compare_rollouts(old, new)
    assert cats(res) == {f"hi-{expected_hash(old[0]['responses_create_params']['input'])}": "flipped"}


def test_a_string_prompt_and_a_prompt_without_text():
    rows = [
        {"reward": 1.0, "responses_create_params": {"input": "Plain string prompt"}},
        {"reward": 1.0, "responses_create_params": {"input": [{"role": "user", "content": [{"type": "image"}]}]}},
    ]
    res = compare_rollouts(rows, rows)
    assert sorted(t.task.rsplit("-", 1)[0] for t in res.tasks) == ["plain-string-prompt", "prompt"]


def test_a_huge_prompt_keeps_a_short_label():
    text = "word " * 50_000
    res = compare_rollouts([row(text=text)], [row(text=text)])
    assert len(res.tasks) == 1 and len(res.tasks[0].task) <= 32 + 1 + 12


def test_empty_prompts_identify_nothing():
    rows = [{"reward": 1.0, "responses_create_params": {"input": []}}]
    with pytest.raises(CompareInputError, match="neither _ng_task_index nor a prompt"):
        compare_rollouts(rows, rows)


def test_the_prompt_can_be_named_as_the_key():
    rows = [row(index=0, text="q0", task_id="a"), row(index=1, text="q1", task_id="b")]
    res = compare_rollouts(rows, rows, key=PROMPT_KEY)
    assert res.join.old_key == PROMPT_KEY and res.join.old_key_reason == "given"
    assert sorted(labels(res)) == sorted([f"q0-{expected_hash(prompt('q0'))}", f"q1-{expected_hash(prompt('q1'))}"])


# --- a candidate that is a category ------------------------------------------------------------


def test_a_category_candidate_is_passed_over_with_a_note():
    rows = [row(index=i, text=f"puzzle {i}", task_name="knights_knaves") for i in range(5)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == res.join.new_key == "_ng_task_index"
    assert res.join.old_key_reason == "task_name passed over: a category"
    assert len(res.tasks) == 5
    note = next(n for n in res.notes if "task_name" in n)
    assert (
        note == "both sides: task_name is not a task id here: 'knights_knaves' holds 5 different prompts "
        "(5 rows; _ng_task_index 0, 1, 2, 3, 4); passed over"
    )


def test_after_a_category_the_next_id_field_is_taken():
    rows = [row(index=i, task_name="Text to CSV", task_id=f"00{i}") for i in range(3)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "task_id" and labels(res) == ["000", "001", "002"]


def test_a_candidate_unique_per_index_is_an_id():
    rows = [row(index=i, task_name=name) for i, name in enumerate(["Text to CSV", "Text to XML"])]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "task_name"
    assert not any("passed over" in n for n in res.notes)


def test_repeated_rollouts_of_one_task_do_not_make_its_id_a_category():
    rows = [row(index=0, task_id="a"), row(index=0, task_id="a"), row(index=1, task_id="b")]
    assert compare_rollouts(rows, rows).join.old_key == "task_id"


def test_nemo_gyms_own_task_id_is_never_a_category():
    # a dataset listing one Harbor task twice: two input lines, one task
    rows = [row(index=i, _ng_task_id={"taskset": "tb", "task_id": "regex-log"}) for i in range(2)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "_ng_task_id" and labels(res) == ["regex-log"]


def test_indices_reused_by_merged_runs_do_not_overrule_an_id():
    # two runs merged: index 0 is task a in one and task b in the other; a is on indices 0 and 1
    rows = [row(index=0, task_id="a"), row(index=1, task_id="b"), row(index=1, task_id="a"), row(index=0, task_id="b")]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "task_id" and labels(res) == ["a", "b"]


def test_a_category_on_one_side_only_is_noted_for_that_side():
    old = [row(index=i, task_name="knights_knaves") for i in range(2)]
    new = [row(index=i) for i in range(2)]
    res = compare_rollouts(old, new)
    assert any(n.startswith("old side: task_name is not a task id here") for n in res.notes), res.notes
    assert cats(res) == {"0": "identical", "1": "identical"}


# --- joins on the index check the prompts ------------------------------------------------------


def test_an_index_whose_prompt_differs_is_two_tasks_and_the_rest_is_compared():
    old = [row(index=i, text=f"question {i}") for i in range(12)]
    new = [row(index=i, text=f"question {i}" if i not in (10, 3) else "something else") for i in range(12)]
    res = compare_rollouts(old, new)
    other = f"something-else-{expected_hash(prompt('something else'))}"
    assert cats(res)[f"3:question-3-{expected_hash(prompt('question 3'))}"] == "missing"
    assert cats(res)[f"3:{other}"] == "missing"
    assert cats(res)[f"10:{other}"] == "missing"
    assert sum(c == "identical" for c in cats(res).values()) == 10
    note = next(n for n in res.notes if "have a different prompt on each side" in n)
    assert note.startswith("2 of 12 _ng_task_index value(s)") and "3 (question-3-" in note
    assert res.unjoined is None


def test_most_indices_with_other_prompts_mean_other_inputs_and_nothing_is_joined():
    old = [row(index=i, text=f"question {i}") for i in range(4)]
    new = [row(index=i, text=f"question {i}" if i == 0 else f"other {i}") for i in range(4)]
    res = compare_rollouts(old, new)
    assert all(t.old is None or t.new is None for t in res.tasks) and len(res.tasks) == 8
    assert res.unjoined is not None and res.unjoined.startswith("the runs read different input files: 3 of 4")


def test_a_given_index_key_is_trusted():
    old = [row(index=0, text="one question")]
    new = [row(index=0, text="another question", reward=0.0)]
    res = compare_rollouts(old, new, key="_ng_task_index")
    assert cats(res) == {"0": "flipped"}


def test_the_prompt_check_needs_prompts_on_both_sides():
    old = [row(index=0, text="one question")]
    new = [row(index=0)]
    assert cats(compare_rollouts(old, new)) == {"0": "identical"}


def test_an_index_side_joins_a_prompt_side_on_its_prompts():
    old = [row(index=i, text=f"question {i}") for i in range(3)]
    new = [row(text=f"question {i}", reward=0.0 if i == 1 else 1.0) for i in (2, 1, 0)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == PROMPT_KEY
    assert res.join.old_key_reason == "the prompt, as the other side is keyed on it"
    assert sorted(cats(res).values()) == ["flipped", "identical", "identical"]
    assert any("keyed on the prompt too, to join the other side (the prompt: no task id" in n for n in res.notes)


def test_a_failure_record_with_only_a_task_index_joins_its_task():
    old = [row(index=0, text="q0"), row(index=1, text="q1")]
    record = {
        "_ng_failure_class": "environment_server_failed",
        "_ng_task_index": 1,
        "_ng_rollout_index": 0,
        "mask_sample": True,
    }
    new = [row(index=0, text="q0"), record]
    res = compare_rollouts(old, new)
    assert res.join.new_key == "_ng_task_index"
    assert cats(res) == {"0": "identical", "1": "masked"}


# --- the summary says how each side is keyed ---------------------------------------------------


def test_summary_names_each_sides_identity_and_why():
    old = [row(index=i, text=f"q{i}") for i in range(2)]
    new = [row(text=f"q{i}") for i in range(2)]
    calendar = compare_rollouts(new, new)
    summary = summary_dict(calendar)
    assert summary["join"]["old_key"] == PROMPT_KEY
    assert summary["join"]["old_key_reason"] == "the prompt: no task id field and no _ng_task_index on every row"
    lines = summary_lines(build_summary(calendar))
    assert lines[1].endswith(f"key {PROMPT_KEY} (the prompt: no task id field and no _ng_task_index on every row)")
    indexed = build_summary(compare_rollouts(old, old))
    assert summary_lines(indexed)[2].endswith("key _ng_task_index (no task id field on every row)")
    with_id = summary_dict(compare_rollouts([row(task_id="a")], [row(task_id="a")]))
    assert with_id["join"]["new_key_reason"] == "an id field every row carries"


def test_a_side_without_rows_says_it_borrowed_its_key():
    res = compare_rollouts([], [row(index=0)])
    assert res.join.old_key == "_ng_task_index"
    assert res.join.old_key_reason == "borrowed from the other side: no row names a task"


# --- both readers ------------------------------------------------------------------------------


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_both_readers_key_files_alike(parser: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PARITY_PARSER", parser)
    rows = [
        {
            "reward": 1.0,
            "response": {"output": [{"text": "x" * 1000}]},
            "responses_create_params": {"input": prompt(f"question {i}", system="s"), "metadata": {"a": 1}},
        }
        for i in range(3)
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = compare_files(path, path)
    assert res.join.old_key == PROMPT_KEY
    assert labels(res) == sorted(f"question-{i}-{expected_hash(prompt(f'question {i}', system='s'))}" for i in range(3))


# --- prompts of rows that name an id field are read only when needed ---------------------------


def test_a_category_side_still_checks_the_prompts():
    # the rows name task_name, so their prompts are hashed only once task_name is passed over;
    # the same prompts sit at other indices (the inputs in another order): joined on the prompt
    old = [row(index=i, text=f"puzzle {i}", task_name="knights_knaves") for i in range(3)]
    new = [row(index=i, text=f"puzzle {2 - i}", task_name="knights_knaves", reward=float(i == 0)) for i in range(3)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == PROMPT_KEY
    assert cats(res) == {
        f"puzzle-{i}-{expected_hash(prompt(f'puzzle {i}'))}": "identical" if i == 2 else "flipped" for i in range(3)
    }
    assert any("as inputs in another order do" in note for note in res.notes)


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_an_id_field_lost_late_falls_back_to_prompts_read_again_from_the_file(
    parser: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PARITY_PARSER", parser)
    rows = [row(text=f"question {i}", task_id=f"t{i}") for i in range(3)] + [row(text="question 3")]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    res = compare_files(path, path)
    assert res.join.old_key == PROMPT_KEY
    assert labels(res) == sorted(f"question-{i}-{expected_hash(prompt(f'question {i}'))}" for i in range(4))


# --- an id value that holds several prompts (the real reasoning_gym pair) ----------------------

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
REASONING_GYM = (
    "resources_servers/reasoning_gym/data/example_rollouts.jsonl",
    "environments/reasoning_gym/data/example_rollouts.jsonl",
)


def _real(rel: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (REAL_FILES / rel).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_the_real_reasoning_gym_pair_with_two_rewards_swapped_fails_those_two(
    parser: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PARITY_PARSER", parser)
    old_rows, new_rows = _real(REASONING_GYM[0]), _real(REASONING_GYM[1])
    assert {r["task_name"] for r in old_rows} == {"knights_knaves"} and old_rows[1]["reward"] == 1.0
    new_rows[1]["reward"], new_rows[2]["reward"] = new_rows[2]["reward"], new_rows[1]["reward"]
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_bytes((REAL_FILES / REASONING_GYM[0]).read_bytes())
    new.write_text("".join(json.dumps(r) + "\n" for r in new_rows), encoding="utf-8")
    res = compare_files(old, new)
    assert res.join.old_key == res.join.new_key == PROMPT_KEY
    assert res.join.old_key_reason == "task_name passed over: a category"
    assert len(res.tasks) == 5
    flips = {t.task: t.winner for t in res.by_category("flipped")}
    assert len(flips) == 2 and sorted(flips.values()) == ["new", "old"]
    swapped = {prompt_label_of(old_rows[1]): "old", prompt_label_of(old_rows[2]): "new"}
    assert flips == swapped
    assert any(
        "task_name is not a task id here: 'knights_knaves' holds 5 different prompts (5 rows)" in n for n in res.notes
    )


def prompt_label_of(r: dict[str, Any]) -> str:
    from pytest_rollout_parity.core.reading.task_idents import prompt_label

    label = prompt_label(r["responses_create_params"]["input"])
    assert label is not None
    return label


def test_repeats_of_several_problems_under_one_name_are_a_category():
    rows = [row(text=f"puzzle {i}", task_name="knights_knaves") for i in range(3) for _ in range(2)]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == PROMPT_KEY and len(res.tasks) == 3


def test_a_value_whose_prompts_recur_unevenly_is_kept_with_a_note():
    # task a: three rollouts, one of which was given a differently worded prompt
    rows = [
        row(text="a seed 1", task_id="a"),
        row(text="a seed 1", task_id="a"),
        row(text="a seed 2", task_id="a"),
        row(text="b", task_id="b"),
        row(text="b", task_id="b"),
    ]
    res = compare_rollouts(rows, rows)
    assert res.join.old_key == "task_id" and labels(res) == ["a", "b"]
    assert any("task_id 'a' holds 2 different prompts that do not recur as repeats do" in n for n in res.notes)


def test_one_task_at_two_input_indices_keeps_its_id_and_the_shared_tasks_compare():
    # the new run's dataset lists regex-log twice (indices 1 and 2); the old one once
    old = [row(0.0, index=0, text="fix git", task_id="fix-git"), row(1.0, index=1, text="regex", task_id="regex-log")]
    new = [
        row(1.0, index=0, text="fix git", task_id="fix-git"),
        row(1.0, index=1, text="regex", task_id="regex-log"),
        row(1.0, index=2, text="regex", task_id="regex-log"),
    ]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == "task_id"
    assert cats(res) == {"fix-git": "flipped", "regex-log": "identical"}


def test_without_prompts_one_task_at_two_indices_is_no_category():
    rows = [row(index=0, task_id="a"), row(index=1, task_id="b"), row(index=2, task_id="b")]
    assert compare_rollouts(rows, rows).join.old_key == "task_id"


# --- several runs in one side (docs/semantics.md, "Prompts and the task index") ------------------


def _run(run: Optional[str], texts: list[str], rewards: list[float]) -> list[dict]:
    extra = {} if run is None else {"_ng_run_id": run}
    return [row(reward, index=i, text=text, **extra) for i, (text, reward) in enumerate(zip(texts, rewards))]


def test_a_side_of_several_run_ids_is_keyed_on_the_prompt_and_joins_within_runs():
    old = _run("A", ["a0", "a1"], [1.0, 1.0]) + _run("B", ["b0", "b1"], [0.0, 1.0])
    new = _run("A", ["a0", "a1"], [0.0, 1.0]) + _run("B", ["b0", "b1"], [1.0, 1.0])
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == PROMPT_KEY
    assert sorted(cats(res).values()) == ["flipped", "flipped", "identical", "identical"]
    assert any("several runs: its rows carry 2 _ng_run_id values (A, B)" in note for note in res.notes)


def test_a_pair_recurring_with_another_prompt_is_another_run_even_without_run_ids():
    old = _run(None, ["a0", "a1"], [1.0, 1.0]) + _run(None, ["b0", "b1"], [0.0, 1.0])
    new = _run(None, ["a0", "a1"], [0.0, 1.0]) + _run(None, ["b0", "b1"], [1.0, 1.0])
    res = compare_rollouts(old, new)
    assert res.join.old_key == PROMPT_KEY
    assert any("_ng_task_index 0 with the same _ng_rollout_index recurs with another prompt" in n for n in res.notes)
    assert sorted(cats(res).values()) == ["flipped", "flipped", "identical", "identical"]


def test_a_legacy_append_files_retries_keep_the_index():
    """A retry repeats its (task index, rollout index) pair with the same prompt: one run."""
    old = _run(None, ["a0", "a1"], [1.0, 1.0])
    new = _run(None, ["a0", "a1"], [0.0, 1.0]) + _run(None, ["a0"], [1.0])
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == "_ng_task_index"
    assert not any("several runs" in note for note in res.notes)


def test_a_side_of_several_runs_against_one_run_joins_the_other_on_its_prompts():
    old = _run("A", ["a0", "a1"], [1.0, 1.0]) + _run("B", ["b0", "b1"], [1.0, 1.0])
    new = _run("C", ["b0", "b1"], [1.0, 0.0])
    res = compare_rollouts(old, new)
    assert res.join.new_key == PROMPT_KEY
    assert res.join.new_key_reason == "the prompt, as the other side is keyed on it"
    assert any(
        "to join the other side (the prompt: no task id field on every row, and the side holds several" in n
        for n in res.notes
    )
    assert sorted(cats(res).values()) == ["flipped", "identical", "missing", "missing"]


def test_several_runs_without_a_prompt_on_every_row_name_tasks_by_run_and_index():
    old = [row(1.0, index=0, _ng_run_id="A"), row(1.0, index=0, _ng_run_id="B")]
    new = [row(1.0, index=0, _ng_run_id="A"), row(0.0, index=0, _ng_run_id="B")]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_index"
    assert cats(res) == {"A:0": "identical", "B:0": "flipped"}


# --- a category on one side is a category on both ----------------------------------------------


def test_a_field_one_side_shows_to_be_a_category_is_passed_over_on_the_other():
    old = [row(1.0, index=i, text=f"puzzle {i}", task_name="knights_knaves") for i in range(5)]
    new = [row(0.0, index=2, text="puzzle 2", task_name="knights_knaves")]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == "_ng_task_index"
    assert res.join.new_key_reason == "task_name passed over: a category on the other side"
    assert cats(res)["2"] == "flipped"
    assert "new side's task_name is passed over too: the old side shows it is a category" in " ".join(res.notes)


def test_a_side_passing_over_the_other_sides_category_counts_its_runs():
    """Passed over, the field leaves the side to its own vote: two runs never join on a bare index."""
    old = [row(1.0, index=i, text=f"puzzle {i}", task_name="knights_knaves") for i in range(5)]
    new = [row(0.0, index=0, task_name="kk", _ng_run_id="A"), row(1.0, index=0, task_name="kk-b", _ng_run_id="B")]
    res = compare_rollouts(old, new)
    assert res.join.new_key == "_ng_task_index"
    assert res.join.new_key_reason == "task_name passed over: a category on the other side"
    assert {"A:0", "B:0"} <= set(cats(res)) and "flipped" not in cats(res).values()


def test_a_field_both_sides_key_on_is_kept():
    old = [row(1.0, index=i, text=f"puzzle {i}", task_name=f"t{i}") for i in range(3)]
    res = compare_rollouts(old, old[:1])
    assert res.join.old_key == res.join.new_key == "task_name"


# --- a uniform template change (docs/semantics.md, "Prompts and the task index") ----------------


def _templated(n: int, system: Optional[str] = None, before: str = "", after: str = "") -> list[dict]:
    return [
        {
            "reward": 1.0,
            "_ng_task_index": i,
            "_ng_rollout_index": 0,
            "responses_create_params": {
                "input": prompt(f"{before}A farmer has {i} fields of {i} rows each. How many rows?{after}", system)
            },
        }
        for i in range(n)
    ]


@pytest.mark.parametrize(
    "old, new, edit",
    [
        (_templated(4, "Use exec."), _templated(4, "Use bash."), '"exec" → "bash" in the system message'),
        (_templated(4), _templated(4, before="Think step by step. "), '"Think step by step. " added before message 1'),
        (_templated(3), _templated(3, after=" Answer briefly."), '" Answer briefly." added after message 1'),
        (_templated(3, after=" Be brief."), _templated(3), '" Be brief." removed from the end of message 1'),
    ],
)
def test_every_prompt_differing_by_one_edit_joins_on_the_index(old, new, edit):
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_index" and res.unjoined is None
    assert set(cats(res).values()) == {"identical"}
    assert any(note.startswith(f"every prompt differs by the same edit: {edit} (") for note in res.notes), res.notes


def test_one_edit_on_two_indices_is_too_few_to_join_them():
    res = compare_rollouts(_templated(2, "Use exec."), _templated(2, "Use bash."))
    assert res.unjoined is not None and "different input files" in res.unjoined


# --- the prompt where the prompt is a field ---------------------------------------------------


def _one_message(**fields: Any) -> dict:
    return {"reward": 1.0, "responses_create_params": {"input": prompt("Answer about the clip.")}, **fields}


def test_a_varying_free_text_field_is_read_as_the_prompt_where_the_messages_are_one():
    old = [_one_message(question=f"What is heard in clip {i}?") for i in range(3)]
    res = compare_rollouts(old, old[1:])
    assert res.join.new_key == PROMPT_KEY and "read from the question field" in res.join.new_key_reason
    assert sorted(cats(res).values()) == ["identical", "identical", "missing"]


@pytest.mark.parametrize(
    "questions",
    [
        ["same question here"] * 3,  # does not vary
        ["q1", "q2", "q3"],  # no free text
    ],
)
def test_a_field_that_is_no_prompt_is_not_read_as_one(questions):
    rows = [_one_message(question=q) for q in questions]
    res = compare_rollouts(rows, rows)
    assert any(note.startswith("both sides: the prompt is the same on every row") for note in res.notes)


def test_a_record_of_a_side_of_several_runs_finds_its_task_within_its_run():
    record = {"_ng_failure_class": "agent_run_error", "_ng_task_index": 1, "_ng_rollout_index": 1, "_ng_run_id": "B"}
    old = _run("A", ["a0", "a1"], [1.0, 1.0]) + _run("B", ["b0", "b1"], [1.0, 1.0])
    res = compare_rollouts(old, old + [record])
    assert res.join.new_key == PROMPT_KEY
    assert sorted(cats(res).values()) == ["identical"] * 4  # the record is in run B's task 1
    assert max(len(t.new.rows) for t in res.tasks) == 2


def test_a_side_of_several_runs_joins_on_an_id_field_its_rows_share():
    """Each run numbers its tasks from 0, so index 0 holds two uuids, one a run: still an id."""
    old = _run("A", ["a0", "a1"], [1.0, 1.0]) + _run("B", ["b0", "b1"], [1.0, 1.0])
    for row in old:
        row["uuid"] = "u-" + row["responses_create_params"]["input"][-1]["content"]
    new = [dict(row, reward=0.0) if row["uuid"] == "u-b0" else row for row in old]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == "uuid"
    assert cats(res) == {"u-a0": "identical", "u-a1": "identical", "u-b0": "flipped", "u-b1": "identical"}

"""Identity inferred from both sides' rows: which fields may name a task, which one wins, and what
the gate says about prompts that changed, per-rollout prompts, constant prompts and joins by
coincidence (docs/semantics.md, "Inferred id fields" and "Prompts and the task index")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.api import compare_files
from pytest_rollout_parity.core.reading.fields import inferred_candidates, names_an_identity
from pytest_rollout_parity.core.reports.summary import build_summary

PROMPT_KEY = "responses_create_params.input"
REAL = Path(__file__).resolve().parents[1] / "data" / "real_files"


def prompt(*texts: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You are a careful solver."}] + [
        {"role": "user", "content": text} for text in texts
    ]


def row(reward: float = 1.0, *, index: Optional[int] = None, texts: tuple[str, ...] = (), **extra: Any) -> dict:
    r: dict[str, Any] = {"reward": reward, **extra}
    if index is not None:
        r["_ng_task_index"] = index
        r["_ng_rollout_index"] = 0
    if texts:
        r["responses_create_params"] = {"input": prompt(*texts)}
    return r


def cats(res) -> dict[str, str]:
    return {t.task: t.category for t in res.tasks}


# --- which fields may name a task -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["uuid", "id", "scenario_id", "instance_id", "problem_id", "metadata.bunsen_id", "instanceId", "doc-id"]
)
def test_names_that_say_id(name: str) -> None:
    assert names_an_identity(name)


@pytest.mark.parametrize(
    "name",
    [
        "question",
        "task",
        "setting",
        "response_id",
        "rollout_id",
        "judge_id",
        "request_uuid",
        "model_id",
        "created_id",
        "run_id",
        "reward",
        "idea",
        "paid",
    ],
)
def test_names_of_outcomes_or_no_id_never_qualify(name: str) -> None:
    assert not names_an_identity(name)


def test_candidates_are_scalars_at_the_top_and_under_the_metadata_objects() -> None:
    r = {
        "uuid": "a-1",
        "score_id": 3,
        "doc_id": "has spaces in it",
        "flag_id": True,
        "obj_id": {"x": 1},
        "metadata": {"source_record_id": "r-9", "note": "x"},
        "_ng_task_id": "t",
        "task_id": "known",
        "verifier_metadata": {"id": 7},
        "responses_create_params": {"metadata": {"sample_id": "s"}},
    }
    assert inferred_candidates(r, frozenset({"task_id"})) == (
        "uuid",
        "metadata.source_record_id",
        "verifier_metadata.id",
    )


# --- the inferred field and the other identities ------------------------------------------------


def test_a_stable_id_beats_the_index_when_every_prompt_was_re_templated() -> None:
    old = [row(index=i, texts=(f"Solve {i}.",), uuid=f"q-{i}") for i in range(4)]
    new = [row(index=i, texts=(f"Please solve problem {i}.",), uuid=f"q-{i}", reward=float(i != 2)) for i in range(4)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == res.join.new_key == "uuid"
    assert cats(res) == {"q-0": "identical", "q-1": "identical", "q-2": "flipped", "q-3": "identical"}
    assert "joins 4 task(s)" in res.join.old_key_reason and "_ng_task_index joins 0" in res.join.old_key_reason
    assert any(n.startswith("the prompts changed between the runs: 4 of 4 task(s) joined on uuid") for n in res.notes)


def test_the_field_joining_most_wins_and_the_runners_up_are_named() -> None:
    old = [row(texts=(f"q{i}",), uuid=f"u{i}", problem_id=f"p{i % 3}" if i < 3 else f"x{i}") for i in range(5)]
    new = [row(texts=(f"Q{i}",), uuid=f"u{i}", problem_id=f"p{i % 3}" if i < 2 else f"y{i}") for i in range(5)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "uuid"
    assert "runners-up: problem_id (joins 2)" in res.join.old_key_reason


def test_ties_go_to_the_top_level_then_by_name() -> None:
    old = [row(texts=(f"q{i}",), zeta_id=f"z{i}", alpha_id=f"a{i}", metadata={"beta_id": f"b{i}"}) for i in range(3)]
    new = [row(texts=(f"Q{i}",), zeta_id=f"z{i}", alpha_id=f"a{i}", metadata={"beta_id": f"b{i}"}) for i in range(3)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "alpha_id"
    assert "zeta_id (joins 3), metadata.beta_id (joins 3)" in res.join.old_key_reason


def test_a_field_holding_two_tasks_is_no_identity() -> None:
    # iheval's own `id`: 1 on two different tasks
    old = [row(index=i, texts=(f"task {i}",), id=i // 2) for i in range(4)]
    new = [row(index=i, texts=(f"task {i}",), id=i // 2) for i in range(4)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_index"


def test_a_field_that_splits_a_task_index_names_rollouts_not_tasks() -> None:
    old = [row(index=i // 2, texts=(f"task {i // 2}",), gen_id=f"g{i}") for i in range(6)]
    new = [row(index=i // 2, texts=(f"task {i // 2}",), gen_id=f"g{i}") for i in range(6)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_index" and len(res.tasks) == 3


def test_a_known_id_field_is_never_overridden() -> None:
    old = [row(texts=(f"q{i}",), task_id=f"t{i}", uuid=f"u{i}") for i in range(3)]
    new = [row(texts=(f"q{i}",), task_id=f"t{i}", uuid=f"u{i}") for i in range(3)]
    assert compare_rollouts(old, new).join.old_key == "task_id"


def test_a_side_without_a_known_field_meets_the_other_sides_known_one_by_its_own_id() -> None:
    old = [row(index=i, texts=(f"Solve {i}.",), task_id=f"t{i}") for i in range(3)]
    new = [row(index=i, texts=(f"Please solve {i}.",), problem_id=f"t{i}", reward=float(i != 1)) for i in range(3)]
    res = compare_rollouts(old, new)
    assert (res.join.old_key, res.join.new_key) == ("task_id", "problem_id")
    assert cats(res) == {"t0": "identical", "t1": "flipped", "t2": "identical"}
    assert "joins 3 task(s) to the other side's task_id" in res.join.new_key_reason


def test_the_index_wins_when_it_joins_more() -> None:
    old = [row(index=i, texts=(f"q{i}",), uuid=f"u{i}") for i in range(4)]
    new = [row(index=i, texts=(f"q{i}",), uuid=f"u{i}" if i == 0 else f"v{i}") for i in range(4)]
    assert compare_rollouts(old, new).join.old_key == "_ng_task_index"


def test_rows_named_only_by_an_id_the_other_side_lacks_are_a_report_not_an_error() -> None:
    old = [{"reward": 1.0, "uuid": f"u{i}"} for i in range(3)]
    new = [{"reward": 1.0, "uuid": f"v{i}"} for i in range(3)]
    res = compare_rollouts(old, new)
    assert (
        res.join.old_key == res.join.new_key == "uuid"
        and "shares no value with the other side" in res.join.old_key_reason
    )
    assert build_summary(res).nothing_compared is not None


# --- prompts and the task index ----------------------------------------------------------------


def test_per_rollout_prompts_join_on_their_leading_messages() -> None:
    old = [row(float(k % 2), index=0, texts=("Deal me in.",)) for k in range(4)]
    new = [row(float(k < 3), index=0, texts=("Deal me in.", f"Your hand: [{k}, 5]")) for k in range(4)]
    res = compare_rollouts(old, new)
    assert cats(res) == {"0": "flipped"}


def test_per_rollout_prompts_whose_leading_messages_differ_are_two_tasks() -> None:
    old = [row(index=0, texts=("Deal me in.",)), row(index=1, texts=("b",)), row(index=2, texts=("c",))]
    new = [row(index=0, texts=("Shuffle first.", f"Your hand: {k}")) for k in range(3)] + [
        row(index=1, texts=("b",)),
        row(index=2, texts=("c",)),
    ]
    res = compare_rollouts(old, new)
    assert sorted(t.category for t in res.tasks) == ["identical", "identical", "missing", "missing"]


def test_a_prompt_the_same_on_every_row_is_no_identity() -> None:
    old = [row(float(i % 2), index=i, texts=("Play the level.",)) for i in range(4)]
    new = [row(float(i % 2), texts=("Play the level.",)) for i in range(4)]
    res = compare_rollouts(old, new)
    assert res.join.old_key == "_ng_task_index"
    assert any("prompt is the same on every row" in n and "keeps its _ng_task_index" in n for n in res.notes)
    assert any("cannot be told apart" in n for n in res.notes)


def test_a_different_inputs_run_is_a_report_not_an_error() -> None:
    old = [row(index=i, texts=(f"q{i}",)) for i in range(3)]
    new = [row(index=i, texts=(f"other {i}",)) for i in range(3)]
    res = compare_rollouts(old, new)
    summary = build_summary(res)
    assert summary.nothing_compared is not None
    assert summary.nothing_compared.startswith("no task was compared: the runs read different input files")


# --- no join by coincidence --------------------------------------------------------------------


def test_an_index_meeting_prefixed_ids_of_another_environment_is_not_compared() -> None:
    code = [
        json.loads(line)
        for line in (REAL / "resources_servers/bigcodebench/data/example_rollouts.jsonl").read_text().splitlines()
    ]
    calendar = [
        json.loads(line)
        for line in (REAL / "resources_servers/calendar/data/example_rollouts.jsonl").read_text().splitlines()
    ]
    numbers = [int(r["task_id"].rsplit("/", 1)[1]) for r in code]
    old = [dict(r, _ng_task_index=n) for r, n in zip(calendar, numbers)]
    res = compare_rollouts(old, code)
    assert res.join.old_key == "_ng_task_index" and res.join.new_key == "task_id"
    assert res.unjoined is not None and res.unjoined.startswith("the files look like different environments")
    assert all(t.old is None or t.new is None for t in res.tasks)


def test_keys_the_user_named_are_trusted_as_given() -> None:
    old = [row(index=i, texts=(f"q{i}",)) for i in range(3)]
    new = [row(texts=(f"other {i}",), task_id=f"bench/{i}") for i in range(3)]
    assert compare_rollouts(old, new).unjoined is not None
    res = compare_rollouts(old, new, old_key="_ng_task_index", new_key="task_id")
    assert res.unjoined is None and len(res.tasks) == 3


def test_per_rollout_prompts_that_begin_as_the_other_sides_meet_no_coincidence() -> None:
    """Prompts are told apart as the index check tells them: a task whose rollouts each add their
    own state after the question agrees with the other side's question alone."""
    old = [dict(row(index=i, texts=(f"q{i}", f"state {r}")), _ng_rollout_index=r) for i in range(3) for r in (0, 1)]
    new = [row(texts=(f"q{i}",), task_id=f"bench/{i}") for i in range(3)]
    res = compare_rollouts(old, new)
    assert res.unjoined is None and set(cats(res).values()) == {"identical"}


def test_a_prefixed_id_that_meets_the_index_with_the_same_prompts_is_compared() -> None:
    old = [row(index=i, texts=(f"q{i}",)) for i in range(3)]
    new = [row(texts=(f"q{i}",), task_id=f"bench/{i}") for i in range(3)]
    res = compare_rollouts(old, new)
    assert res.unjoined is None and set(cats(res).values()) == {"identical"}


# --- both readers ------------------------------------------------------------------------------


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
def test_a_file_read_by_either_reader_infers_the_same_field(
    parser: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARITY_PARSER", parser)
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text(
        "".join(json.dumps(row(index=i, texts=(f"q{i}",), metadata={"case_id": f"c{i}"})) + "\n" for i in range(3))
    )
    new.write_text(
        "".join(json.dumps(row(index=i, texts=(f"Q: q{i}",), metadata={"case_id": f"c{i}"})) + "\n" for i in range(3))
    )
    res = compare_files(old, new)
    assert res.join.old_key == "metadata.case_id" and set(cats(res).values()) == {"identical"}


@pytest.mark.parametrize("new_reward", [0.0, 1.0], ids=["a flip", "identical sides"])
def test_a_non_string_metadata_key_given_in_memory_crashes_nothing(new_reward: float) -> None:
    """Rows given to the API may hold keys JSON cannot: the id inference skips them, and sides that
    do not sort to canonical JSON are not shown to be a copy (found by review)."""

    def rows(reward: float) -> list[dict]:
        return [
            {"reward": reward, "metadata": {1: "x", "task_id": "t1"}, "responses_create_params": {"input": "q1"}},
            {"reward": 1.0, "metadata": {"task_id": "t2"}, "responses_create_params": {"input": "q2"}},
        ]

    result = compare_rollouts(rows(1.0), rows(new_reward))
    assert [(task.task, task.category) for task in result.tasks] == [
        ("t1", "identical" if new_reward else "flipped"),
        ("t2", "identical"),
    ]

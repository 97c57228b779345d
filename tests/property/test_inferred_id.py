"""Where a stable id field joins the tasks, neither its name nor the prompts' template decide a
verdict: renaming the field (same values, to another name that says it holds an id and no outcome)
or re-templating every prompt of one side changes no task's category."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reading.fields import OUTCOME_WORDS

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8).filter(lambda w: w not in OUTCOME_WORDS)
ID_NAMES = st.one_of(
    st.sampled_from(["uuid", "id", "guid"]),
    st.builds(lambda word, end: f"{word}_{end}", WORD, st.sampled_from(["id", "uuid"])),
)
IDS = st.lists(st.from_regex(r"[a-z]{1,6}-[0-9]{1,3}", fullmatch=True), min_size=1, max_size=8, unique=True)
REWARD = st.sampled_from([0.0, 1.0, 0.5])


@st.composite
def sides(draw: st.DrawFn) -> tuple[list[str], list[list[float]], list[list[float]], bool]:
    """Task ids, each task's rewards on either side (1-3 repeats), and whether rows carry an index."""
    ids = draw(IDS)
    old = [draw(st.lists(REWARD, min_size=1, max_size=3)) for _ in ids]
    new = [draw(st.lists(REWARD, min_size=1, max_size=3)) for _ in ids]
    return ids, old, new, draw(st.booleans())


def rows(ids: list[str], rewards: list[list[float]], field: str, template: str, indexed: bool) -> list[dict[str, Any]]:
    out = []
    for index, (task, task_rewards) in enumerate(zip(ids, rewards)):
        for repeat, reward in enumerate(task_rewards):
            row: dict[str, Any] = {
                "responses_create_params": {"input": [{"role": "user", "content": template.format(task=task)}]},
                "reward": reward,
                field: task,
            }
            if indexed:
                row["_ng_task_index"], row["_ng_rollout_index"] = index, repeat
            out.append(row)
    return out


def verdicts(result: Any) -> list[str]:
    return sorted(t.category for t in result.tasks)


@settings(max_examples=80, deadline=None)
@given(sides(), ID_NAMES)
def test_renaming_the_id_field_changes_no_verdict(drawn: tuple, name: str) -> None:
    ids, old, new, indexed = drawn
    template = "Solve {task}."
    base = compare_rollouts(rows(ids, old, "uuid", template, indexed), rows(ids, new, "uuid", template, indexed))
    renamed = compare_rollouts(rows(ids, old, name, template, indexed), rows(ids, new, name, template, indexed))
    assert verdicts(renamed) == verdicts(base)
    assert sum(1 for t in base.tasks if t.old is not None and t.new is not None) == len(ids)


@settings(max_examples=80, deadline=None)
@given(sides(), ID_NAMES, st.sampled_from(["Please work on {task} carefully.", "Task {task}: answer below.", "{task}"]))
def test_re_templating_every_prompt_changes_no_verdict(drawn: tuple, name: str, template: str) -> None:
    ids, old, new, indexed = drawn
    before = compare_rollouts(
        rows(ids, old, name, "Solve {task}.", indexed), rows(ids, new, name, "Solve {task}.", indexed)
    )
    after = compare_rollouts(rows(ids, old, name, "Solve {task}.", indexed), rows(ids, new, name, template, indexed))
    assert verdicts(after) == verdicts(before)
    assert after.join.old_key == after.join.new_key == name

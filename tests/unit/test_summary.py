"""docs/json.md (the JSON summary), via summary_dict(result), and the Verdict API."""

from __future__ import annotations

import dataclasses
import json

from pytest_rollout_parity import Verdict, compare_rollouts, load_rollouts, summary_dict

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
JOIN_KEYS = {
    "old_key",
    "new_key",
    "old_key_reason",
    "new_key_reason",
    "old_prefix_stripped",
    "new_prefix_stripped",
    "keyed_by_taskset",
}
SIDE_KEYS = {"reward", "rows", "masked", "agent_error", "failure_kind"}


def _result():
    old = [
        {"task_name": "terminal-bench/fix-git", "reward": 1.0},
        {"task_name": "terminal-bench/regex-log", "reward": 1.0},
        {"task_name": "terminal-bench/regex-log", "reward": 0.0},
        {"task_name": "terminal-bench/old-only", "reward": 1.0},
        {"task_name": "terminal-bench/masked-one", "reward": 1.0},
        {"task_name": "terminal-bench/agent-err", "reward": 1.0},
    ]
    new = [
        {
            "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "fix-git"},
            "reward": 0.0,
            "failure_kind": "harbor:verifier_timeout",
            "mask_sample": False,
        },
        {"_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "regex-log"}, "reward": 0.5},
        {"_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "new-only"}, "reward": 1.0},
        {
            "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "masked-one"},
            "reward": 0.0,
            "mask_sample": True,
            "failure_kind": "provider_unavailable",
        },
        {
            "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "agent-err"},
            "reward": 0.0,
            "response": {"metadata": {"terminus2_error_type": "TimeoutError"}},
        },
    ]
    return compare_rollouts(old, new)


def test_summary_top_level_shape():
    s = summary_dict(_result())
    assert isinstance(s, dict)
    assert {"counts", "join", "notes", "tasks"} <= set(s)
    assert set(s["counts"]) == COUNT_KEYS
    assert all(type(v) is int for v in s["counts"].values())
    assert set(s["join"]) >= JOIN_KEYS
    assert isinstance(s["notes"], list) and all(isinstance(n, str) for n in s["notes"])


def test_summary_counts_match_the_result():
    res = _result()
    s = summary_dict(res)
    assert s["counts"] == res.counts()
    assert s["counts"] == {
        "tasks": 6,
        "identical": 1,
        "flipped": 1,
        "flipped_old_win": 1,
        "flipped_new_win": 0,
        "flipped_agent_error": 1,
        "masked": 1,
        "masked_old": 0,
        "masked_new": 1,
        "missing": 2,
        "missing_old_only": 1,
        "missing_new_only": 1,
        "verifier_disagreements": 0,
    }


def test_summary_join():
    res = _result()
    join = summary_dict(res)["join"]
    assert join["old_key"] == "task_name" == res.join.old_key
    assert join["new_key"] == "_ng_task_id" == res.join.new_key
    assert join["old_prefix_stripped"] in ("terminal-bench", "terminal-bench/")
    assert join["old_prefix_stripped"] == res.join.old_prefix_stripped
    assert join["new_prefix_stripped"] is None
    assert join["keyed_by_taskset"] is False


def test_summary_notes_are_the_results_notes():
    res = _result()
    s = summary_dict(res)
    assert s["notes"] == list(res.notes)
    assert "1 task(s) have several rows on a side; they are compared on the mean reward: regex-log" in s["notes"]


def test_summary_tasks_sorted_with_sides():
    s = summary_dict(_result())
    tasks = s["tasks"]
    assert [t["task"] for t in tasks] == ["agent-err", "fix-git", "masked-one", "new-only", "old-only", "regex-log"]
    by = {t["task"]: t for t in tasks}
    for t in tasks:
        assert {"task", "category", "winner", "old", "new"} <= set(t)
        for name in ("old", "new"):
            assert t[name] is None or SIDE_KEYS <= set(t[name])

    assert by["fix-git"]["category"] == "flipped"
    assert by["fix-git"]["winner"] == "old"
    assert by["fix-git"]["old"]["reward"] == 1.0
    assert by["fix-git"]["new"]["reward"] == 0.0
    assert by["fix-git"]["new"]["failure_kind"] == "harbor:verifier_timeout"
    assert by["fix-git"]["new"]["masked"] is None
    assert by["fix-git"]["old"]["failure_kind"] is None
    assert by["fix-git"]["old"]["agent_error"] is None

    assert by["regex-log"]["category"] == "identical"
    assert by["regex-log"]["winner"] is None
    assert by["regex-log"]["old"]["reward"] == 0.5
    assert by["regex-log"]["old"]["rows"] == 2
    assert by["regex-log"]["new"]["rows"] == 1

    assert by["old-only"]["category"] == "missing"
    assert by["old-only"]["new"] is None
    assert by["old-only"]["winner"] is None
    assert by["new-only"]["old"] is None
    assert by["new-only"]["new"]["reward"] == 1.0

    assert by["masked-one"]["category"] == "masked"
    assert by["masked-one"]["new"]["masked"] == "mask_sample (failure_kind=provider_unavailable)"
    assert by["masked-one"]["winner"] is None

    assert by["agent-err"]["category"] == "flipped_agent_error"
    assert by["agent-err"]["winner"] == "old"
    assert by["agent-err"]["new"]["agent_error"] == "terminus2_error_type=TimeoutError"


def test_summary_is_strict_json_even_with_non_finite_rewards(write_jsonl):
    old = write_jsonl("old/r.jsonl", '{"task_id": "a", "reward": NaN}\n{"task_id": "b", "reward": Infinity}\n')
    new = write_jsonl("new/r.jsonl", '{"task_id": "a", "reward": 1.0}\n{"task_id": "b", "reward": -Infinity}\n')
    res = compare_rollouts(load_rollouts(old), load_rollouts(new))
    s = summary_dict(res)
    text = json.dumps(s, allow_nan=False)  # raises on NaN / Infinity
    back = json.loads(text)
    by = {t["task"]: t for t in back["tasks"]}
    assert by["a"]["category"] == "masked"
    assert by["a"]["old"]["reward"] is None
    assert by["a"]["old"]["masked"] == "non-finite reward (nan)"
    assert by["b"]["new"]["masked"] == "non-finite reward (-inf)"
    assert back["counts"]["masked_old"] == 2 and back["counts"]["masked_new"] == 1


def test_summary_of_real_rows_round_trips(real_rows):
    old = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    new = real_rows("anyswe_hermes_repeats_trimmed.jsonl")
    new[0]["reward"] = 1.0
    res = compare_rollouts(old, new, key="responses_create_params.metadata.instance_id")
    s = json.loads(json.dumps(summary_dict(res), allow_nan=False))
    (task,) = s["tasks"]
    assert task["task"] == "astropy__astropy-12907"
    assert task["category"] == "flipped"
    assert task["winner"] == "new"
    assert task["old"]["reward"] == 0.5 and task["new"]["reward"] == 1.0
    assert s["join"]["old_key"] == "responses_create_params.metadata.instance_id"
    assert s["counts"]["flipped_new_win"] == 1


def test_summary_with_anonymous_sidecar_task():
    new = [
        {"task_id": "a", "reward": 1.0},
        {"_ng_failure_class": "agent_request_failed", "mask_sample": True, "failure_kind": "agent_request_failed"},
    ]
    s = summary_dict(compare_rollouts([{"task_id": "a", "reward": 1.0}], new))
    by = {t["task"]: t for t in s["tasks"]}
    assert by["unknown (new) #1"]["category"] == "masked"
    assert by["unknown (new) #1"]["old"] is None
    assert s["counts"]["masked"] == 1 and s["counts"]["missing"] == 0


# --- Verdict ---------------------------------------------------------------------------------


def _field_values(obj) -> list:
    if dataclasses.is_dataclass(obj):
        return [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    if hasattr(obj, "model_dump"):
        return list(obj.model_dump().values())
    if hasattr(obj, "__dict__"):
        return list(vars(obj).values())
    return [getattr(obj, n) for n in getattr(type(obj), "__slots__", ())]


def test_verdict_constructors_carry_their_text_and_differ():
    p = Verdict.passed("looks fine")
    f = Verdict.failed("fix-git: new regressed: old=1.0 new=0.0")
    x = Verdict.xfail("known flaky")
    assert all(isinstance(v, Verdict) for v in (p, f, x))
    assert "looks fine" in _field_values(p)
    assert "fix-git: new regressed: old=1.0 new=0.0" in _field_values(f)
    assert "known flaky" in _field_values(x)
    same = [Verdict.passed("same"), Verdict.failed("same"), Verdict.xfail("same")]
    assert len({repr(_field_values(v)) for v in same}) == 3


def _conditioned(task: str, reward: float, **request: object) -> dict:
    return {"task_id": task, "reward": reward, "responses_create_params": {"input": "q", **request}}


def test_the_conditions_each_side_ran_under_and_their_differences():
    from pytest_rollout_parity.core.reports.summary import build_summary
    from pytest_rollout_parity.core.reports.terminal import summary_lines

    old = [_conditioned(t, 1.0, model="m-small", temperature=0.6, max_output_tokens=4096) for t in "ab"]
    new = [_conditioned(t, 1.0, model="m-large", temperature=0.6) for t in "ab"]
    res = compare_rollouts(old, new)
    assert res.conditions == (
        "model m-small, temperature 0.6, max_output_tokens 4096",
        "model m-large, temperature 0.6",
    )
    assert res.models == ("m-small", "m-large")
    # only what both sides record is compared: max_output_tokens is on one side alone
    assert "the sides ran under different conditions (old against new): model m-small against m-large" in res.notes
    assert "different models: old m-small, new m-large" in summary_lines(build_summary(res))[0]


def test_sides_under_the_same_conditions_have_no_note():
    rows = [_conditioned(t, 1.0, model="m", top_p=0.95) for t in "ab"]
    res = compare_rollouts(rows, rows)
    assert res.conditions == ("model m, top_p 0.95", "model m, top_p 0.95") and res.models == ("", "")
    assert not any("different conditions" in note for note in res.notes)


def test_a_model_name_from_the_rows_cannot_mark_up_the_markdown_verdict_line():
    from pytest_rollout_parity.core.reports.markdown import verdict_line
    from pytest_rollout_parity.core.reports.summary import build_summary

    hostile = "**PASS** [x](http://evil) <b>|"
    old = [_conditioned(t, 1.0, model="m") for t in "ab"]
    new = [_conditioned(t, 1.0, model=hostile) for t in "ab"]
    line = verdict_line(build_summary(compare_rollouts(old, new)))
    assert "different models: old <code>m</code>, new <code>" in line
    assert hostile not in line and "<b>" not in line

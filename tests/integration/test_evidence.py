"""No pass without evidence: the verdicts pass, fail and inconclusive, the evidence budget, and the plan.

Each case is a pair a careless or hostile contributor could hand the gate, in real-shaped rows
(the old side the TB 2.1 legacy server, the new side the Harbor path).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from .conftest import Gate, harbor_row, junit_cases, legacy_row, section


def _summary(gate: Gate) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((gate.path / "summary.json").read_text(encoding="utf-8"))
    return data


def _with_id(row: dict[str, Any], response_id: str) -> dict[str, Any]:
    row["response"] = dict(row["response"], id=response_id)
    return row


def _legacy(task: str, reward: float, response_id: str) -> dict[str, Any]:
    return _with_id(legacy_row(task, reward), response_id)


def _old(tasks: int, reward: float = 1.0, repeats: int = 1) -> list[dict[str, Any]]:
    return [_legacy(f"task-{t:02d}", reward, f"resp_old_{t}_{r}") for t in range(tasks) for r in range(repeats)]


def _new(task: int, reward: float, rollout: int = 0, **extra: Any) -> dict[str, Any]:
    return _with_id(
        harbor_row(f"task-{task:02d}", reward, index=task, rollout=rollout, **extra), f"resp_new_{task}_{rollout}"
    )


def test_every_new_task_an_agent_error_is_inconclusive_and_names_both_rates(gate: Gate) -> None:
    new = [_new(t, 0.0, evaluation_completed=False) for t in range(10)]
    args = gate.pair(_old(10), new)
    result = gate.run(*args, "--parity-json=summary.json")
    assert result.ret == 1
    result.assert_outcomes(failed=1, xfailed=10)
    result.stdout.fnmatch_lines(
        [
            "*10 of 10 old task(s) not compared (10 agent error) (over the limit 20% = 2)*",
            "*agent-error rate 10/10 rows (100.0%) on the new side, clearly above 0/10 (0.0%) on the old side*",
        ]
    )
    data = _summary(gate)
    assert data["verdict"] == "inconclusive"
    assert [d["code"] for d in data["decided_by"]] == ["evidence"]
    assert data["task_outcomes"]["agent_error"] == 10
    assert section(result)[0].startswith("parity: INCONCLUSIVE: ")


def test_a_rate_not_clearly_above_is_still_shown(gate: Gate) -> None:
    """Four tasks whose new rows all carry an agent error and the old rewards: too few rows for the
    rate test to reach its level, so the run passes, and its summary still names both rates."""
    new = [_new(t, 1.0, agent_timed_out=True) for t in range(4)]
    result = gate.run(*gate.pair(_old(4), new))
    assert result.ret == 0
    p = stats.fisher_exact([[4, 0], [0, 4]], alternative="greater").pvalue
    result.stdout.fnmatch_lines(
        [
            f"note: agent-error rate 4/4 rows (100.0%) on the new side, not clearly above 0/4 (0.0%)"
            f" on the old side (one-sided Fisher p = {p:.3g}, level 0.01)"
        ]
    )


def test_the_agent_error_rate_test_alone_fails_the_item(gate: Gate) -> None:
    """With the budget off, the rate test still holds: 12 of 40 rows err on the new side, 0 of 40 on the old."""
    new = [_new(t, 0.0 if t < 12 else 1.0, **({"agent_timed_out": True} if t < 12 else {})) for t in range(40)]
    args = gate.pair(_old(40), new)
    result = gate.run(*args, "--parity-max-uncompared=off", "--parity-max-masked=off")
    assert result.ret == 1
    p = stats.fisher_exact([[12, 28], [0, 40]], alternative="greater").pvalue
    result.stdout.fnmatch_lines(
        [
            f"*agent-error rate 12/40 rows (30.0%) on the new side, clearly above 0/40 (0.0%)"
            f" on the old side (one-sided Fisher p = {p:.3g}, level 0.01)*"
        ]
    )


def test_half_the_tasks_hidden_fails(gate: Gate) -> None:
    """Five of ten regress; two are deleted and three get an extra mask_sample row: the masked rows
    are left out, the three are compared on their scored row and fail; the budget counts the two."""
    new = [_new(t, 1.0) for t in range(5)]
    for t in (5, 6, 7):
        new += [_new(t, 0.0), _new(t, 0.0, rollout=1, mask_sample=True, failure_kind="environment_server_failed")]
    args = gate.pair(_old(10), new)
    result = gate.run(*args, "--parity-json=summary.json")
    assert result.ret == 1
    result.assert_outcomes(passed=5, failed=3, xfailed=2)
    data = _summary(gate)
    assert data["verdict"] == "fail"
    masked_rows = {t["task"]: t["new"]["masked_rows"] for t in data["tasks"] if t["new"] is not None}
    assert masked_rows["task-05"] == 1 and data["counts"]["masked"] == 0
    assert section(result)[0].startswith("parity: FAIL: 3 tasks regressed, 0 improved, 2 missing")


@pytest.mark.parametrize("margin", [None, "0.05"])
def test_one_masked_row_does_not_hide_a_regressed_task(gate: Gate, margin: Any) -> None:
    """Six of 40 tasks go from 5/5 to 0/4 with one mask_sample row each: they fail, in margin mode too."""
    new = []
    for t in range(40):
        if t < 6:
            new += [_new(t, 0.0, rollout=r) for r in range(4)]
            new.append(_new(t, 0.0, rollout=4, mask_sample=True, failure_kind="verifier_error"))
        else:
            new += [_new(t, 1.0, rollout=r) for r in range(5)]
    args = gate.pair(_old(40, repeats=5), new)
    extra = [f"--parity-margin={margin}"] if margin else []
    result = gate.run(*args, *extra, "--parity-json=summary.json")
    assert result.ret == 1
    data = _summary(gate)
    assert data["verdict"] == "fail" and data["task_outcomes"]["failed"] == 6
    sixth = next(t for t in data["tasks"] if t["task"] == "task-05")
    assert sixth["new"]["reward"] == 0.0 and sixth["new"]["masked_rows"] == 1  # the masked row's reward is no score
    if margin:
        # 5/5 against 0/4, Fisher's exact test; BH over the six flips, the only tests that can reach alpha
        p = stats.fisher_exact([[5, 0], [0, 4]]).pvalue
        assert sixth["p_value"] == pytest.approx(p) and sixth["adjusted_p"] == pytest.approx(p)
        assert data["aggregate"]["passed"] is False
    left = data["paired"]["left_out"]
    assert (left["new_rows"], left["old_rows"]) == (6, 0)


def test_a_copy_fails_unless_it_is_meant(gate: Gate) -> None:
    rows = [harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1)]
    args = gate.pair(rows, rows)
    copy = gate.run(*args, "--parity-json=summary.json", "--junitxml=out.xml")
    assert copy.ret == 1
    copy.assert_outcomes(passed=2, failed=1)
    copy.stdout.fnmatch_lines(
        [
            "*no evidence about the new server: run the new server on the same tasks and give its "
            "rollouts as --parity-new; --parity-allow-copy passes*"
        ]
    )
    assert _summary(gate)["verdict"] == "inconclusive"
    assert junit_cases(gate.path / "out.xml")["parity-copy"].find("failure") is not None
    meant = gate.run(*args, "--parity-allow-copy", "--parity-json=summary.json")
    assert meant.ret == 0
    meant.assert_outcomes(passed=3)
    assert _summary(gate)["verdict"] == "pass"


def _unverified(row: dict[str, Any]) -> dict[str, Any]:
    """The row as +skip_verification leaves it: no field a verifier writes."""
    return {k: v for k, v in row.items() if "verifier" not in k and k not in ("test_output", "judge_evaluations")}


def test_a_constant_side_is_named_as_maybe_never_verified(gate: Gate) -> None:
    old = [_legacy(f"task-{t:02d}", float(t % 2), f"resp_old_{t}") for t in range(6)]
    new = [_unverified(_new(t, 0.0)) for t in range(6)]
    result = gate.run(*gate.pair(old, new))
    result.stdout.fnmatch_lines(
        [
            "note: the new side's reward is 0 on every one of its 6 scored rows while the old "
            "side's vary: was it run with +skip_verification*"
        ]
    )


@pytest.mark.parametrize(
    "evidence",
    [
        {"judge_evaluations": [{"verdict": "incorrect", "judge_model": "gpt-oss-120b"}]},
        {"library_reward": 0.0},
        {"verifier_return_code": 1},
    ],
)
def test_a_constant_side_whose_rows_show_a_verifier_ran_is_not_named(gate: Gate, evidence: dict[str, Any]) -> None:
    """The skip-verification note needs a side none of whose rows carries verification evidence."""
    old = [_legacy(f"task-{t:02d}", float(t % 2), f"resp_old_{t}") for t in range(6)]
    new = [dict(_unverified(_new(t, 0.0)), **evidence) for t in range(6)]
    result = gate.run(*gate.pair(old, new))
    assert "skip_verification" not in result.stdout.str()


IFEVAL = Path(__file__).resolve().parents[1] / "data/real_files/resources_servers/instruction_following/data"


def test_the_note_reads_evidence_as_the_flip_messages_do(gate: Gate) -> None:
    """instruction_following's real rows carry their checks (`follow_instruction_list`), no field of the
    old list: a constant side of them was verified, and is not named; the same rows stripped of their
    checks, keeping a field named like a verifier that holds only its configuration, are named."""
    template = json.loads((IFEVAL / "example_rollouts.jsonl").read_text(encoding="utf-8").splitlines()[0])
    old = [_legacy(f"task-{t:02d}", float(t % 2), f"resp_old_{t}") for t in range(6)]
    new = [dict(template, _ng_task_id={"taskset": "terminal-bench-2-1", "task_id": f"task-{t:02d}"}) for t in range(6)]
    for row in new:
        row["reward"] = 0.0
    verified = gate.run(*gate.pair(old, new, new_path="verified/rollouts.jsonl"))
    assert "skip_verification" not in verified.stdout.str()
    checks = ("follow_all_instructions", "follow_instruction_list")
    bare = [dict({k: v for k, v in row.items() if k not in checks}, verifier_config={"url": "http://x"}) for row in new]
    named = gate.run(*gate.pair(old, bare, new_path="bare/rollouts.jsonl"))
    named.stdout.fnmatch_lines(["note: the new side's reward is 0 on every one of its 6 scored rows*"])


def test_a_side_without_verifier_output_and_an_unsafe_file_are_named(gate: Gate) -> None:
    old = [harbor_row(f"task-{t}", 1.0, index=t) for t in range(3)]
    new = [{k: v for k, v in row.items() if k != "verifier_return_code"} for row in old]
    for row in new:
        row["response"] = dict(row["response"], id=row["response"]["id"] + "-new")
    result = gate.run(*gate.pair(old, new, new_path="new/unsafe_rollouts.jsonl"))
    result.stdout.fnmatch_lines(
        [
            "note: the new side's rows carry no verifier output where the old side's do: was it run with "
            "+skip_verification?",
            "note: new/unsafe_rollouts.jsonl is named with an unsafe_ prefix*",
        ]
    )


def test_a_small_margin_mode_run_is_inconclusive_with_a_plan(gate: Gate) -> None:
    """One task with five rollouts a side, the same rewards: nothing is wrong, and nothing is shown."""
    rewards = [1.0, 1.0, 0.0, 1.0, 1.0]
    old = [_legacy("task-00", r, f"resp_old_{i}") for i, r in enumerate(rewards)]
    new = [_new(0, r, rollout=i) for i, r in enumerate(reversed(rewards))]
    args = gate.pair(old, new)
    result = gate.run(*args, "--parity-margin=0.05", "--parity-json=summary.json")
    assert result.ret == 1
    lines = section(result)
    assert lines[0].startswith("parity: INCONCLUSIVE: no flip in 1 compared task")
    assert not any("no difference" in line for line in lines)
    plan = _summary(gate)["plan"]
    assert plan["tasks"] == 1 and plan["by_rollouts"] is None and plan["by_tasks"]["tasks"] > 2
    # a single flip at one compared task: 2 / C(2r, r) < 0.05 first at r = 4
    assert plan["flip_repeats"] == 4 and stats.fisher_exact([[4, 0], [0, 4]]).pvalue < 0.05
    assert stats.fisher_exact([[3, 0], [0, 3]]).pvalue >= 0.05
    result.stdout.fnmatch_lines(
        [
            "plan (80% power to show equivalence at a true difference of 0, from the observed variances):",
            "    equivalence within ±0.05, either lever (*",
            "        more rollouts: no number up to 1000 suffices with 1 compared task(s)",
            "        more tasks: * tasks (* more than the 1 compared, from the same input dataset) at 5 rollout(s)*",
        ]
    )


def test_the_plan_alone_runs_no_item_and_exits_0(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-margin=0.1", "--parity-plan", "--parity-json=summary.json")
    assert result.ret == 0
    result.assert_outcomes()
    result.stdout.fnmatch_lines(["--parity-plan: no item ran*", "plan (80% power*", "    rerun 5 task(s): *"])
    assert _summary(gate)["plan"] is not None


def test_nothing_compared_is_inconclusive_with_exit_1(gate: Gate) -> None:
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("regex-log", 1.0)])
    result = gate.run(*args, "--parity-json=summary.json", "--parity-max-uncompared=off", "--parity-max-missing=off")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*parity-coverage - no task was compared: there is no evidence either way*"])
    assert _summary(gate)["verdict"] == "inconclusive"


def test_a_margin_no_reward_can_exceed_is_a_usage_error(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-margin=5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["ERROR: --parity-margin: 5 is at or above the range of the rewards, ?0, 1?: no mean difference*"]
    )


def test_the_junit_file_carries_the_verdict_and_each_outcome(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--junitxml=out.xml")
    assert result.ret == 1
    import xml.etree.ElementTree as ET

    root = ET.parse(gate.path / "out.xml").getroot()
    suite = {p.get("name"): p.get("value") for p in root.iter("property") if p.get("name") == "parity_verdict"}
    assert suite == {"parity_verdict": "fail"}
    cases = junit_cases(gate.path / "out.xml")
    outcome = {
        name: {p.get("name"): p.get("value") for p in case.iter("property")}.get("parity_outcome")
        for name, case in cases.items()
    }
    assert outcome["fix-git"] == "passed" and outcome["regex-log"] == "failed"
    assert outcome["git-multibranch"] == "agent_error" and outcome["build-cython-ext"] == "masked"

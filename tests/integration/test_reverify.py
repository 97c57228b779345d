"""Same trajectories on both sides (a re-verification): the rows pair per rollout, and a reward that
differs on the same trajectory is a verifier disagreement, which fails in plain and in margin mode.

The rows are gpqa_diamond's real rows (tests/data/real_files), 40 tasks x 4 rollouts, each rollout's
trajectory its own (its output items' ids made unique, as a model server's are).
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.plugin.reporting import ANNOTATE_FAILURES

from .conftest import Gate, all_text, section

REAL = (
    Path(__file__).resolve().parents[1] / "data/real_files/resources_servers/gpqa_diamond/data/example_rollouts.jsonl"
)
TASKS, ROLLOUTS = 40, 4
#: the two trajectories the new verifier scores the other way: (task index, rollout index)
CHANGED = ((3, 1), (17, 2))


def old_rows() -> list[dict[str, Any]]:
    """40 tasks x 4 rollouts shaped as the real rows; rewards 0/1 drawn with a fixed seed."""
    templates = [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    draw = random.Random(35)
    rows = []
    for task in range(TASKS):
        for rollout in range(ROLLOUTS):
            row = copy.deepcopy(templates[task % len(templates)])
            row["responses_create_params"]["input"][0]["content"] += f" (problem {task})"
            for item in row["response"]["output"]:
                item["id"] = f"{item['id']}-{task}-{rollout}"
            row["_ng_task_index"], row["_ng_rollout_index"] = task, rollout
            row["reward"] = float(draw.random() < 0.5)
            rows.append(row)
    return rows


def reverified(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same rows scored again: the changed trajectories get the other reward and answer."""
    new = copy.deepcopy(rows)
    for row in new:
        if (row["_ng_task_index"], row["_ng_rollout_index"]) in CHANGED:
            row["reward"] = 1.0 - row["reward"]
            row["extracted_answer"] = "A" if row["expected_answer"] != "A" else "B"
    return new


def test_two_rescored_trajectories_fail_margin_mode_as_verifier_disagreements(gate: Gate) -> None:
    old = old_rows()
    args = gate.pair(old, reverified(old))
    result = gate.run(*args, "--parity-margin=0.05", "--parity-json=s.json")
    text = all_text(result)
    assert result.ret == 1, text
    verdict = next(line for line in section(result) if line.startswith("parity: "))
    assert verdict.startswith("parity: FAIL: 2 flips fail (2 verifier disagreements: the same trajectories"), verdict
    assert "verifier disagreement: 1 rollout of the same trajectories scored differently" in text
    # both sides' evidence, side by side, for the rescored rollout
    assert "the same trajectory (_ng_rollout_index 1) scored by each side's verifier, the losing side first:" in text
    # the scenario: the new verifier reads another answer out of the same trajectory
    assert "(losing) row's evidence:" in text and "(winning) row's evidence:" in text
    assert 'extracted_answer="A"' in text and 'extracted_answer="B"' in text
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["verifier_disagreements"] == 2
    flagged = {t["task"]: t["verifier_disagreements"] for t in data["tasks"] if t["verifier_disagreements"]}
    assert flagged == {"3": 1, "17": 1}
    assert {t["task"]: t["outcome"] for t in data["tasks"] if t["task"] in flagged} == {"3": "failed", "17": "failed"}


def test_plain_mode_fails_them_too(gate: Gate) -> None:
    old = old_rows()
    result = gate.run(*gate.pair(old, reverified(old)))
    assert result.ret == 1
    result.assert_outcomes(passed=TASKS - 2, failed=2)
    verdict = next(line for line in section(result) if line.startswith("parity: "))
    assert "(2 verifier disagreements: the same trajectories scored differently)" in verdict, verdict


def test_independent_reruns_are_not_verifier_disagreements(gate: Gate) -> None:
    """Rows whose trajectories differ (a real rerun) are judged on their repeats as before."""
    old = old_rows()
    new = reverified(old)
    for row in new:
        row["response"]["output"][-1]["id"] += "-rerun"
    result = gate.run(*gate.pair(old, new), "--parity-margin=0.05", "--parity-json=s.json")
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["verifier_disagreements"] == 0
    assert data["counts"]["flipped"] == 2
    assert {t["outcome"] for t in data["tasks"] if t["category"] == "flipped"} == {"within_noise"}, all_text(result)


def test_a_deliberate_copy_passes_margin_mode_even_on_one_task(gate: Gate) -> None:
    """Byte-equal rows under --parity-allow-copy: every rollout agrees with itself, so the aggregate
    passes without a spread to test (one task has none)."""
    rows = old_rows()[:ROLLOUTS]
    result = gate.run(*gate.pair(rows, rows), "--parity-margin=0.05", "--parity-allow-copy", "--parity-json=s.json")
    assert result.ret == 0, all_text(result)
    data = json.loads((gate.path / "s.json").read_text())
    assert data["verdict"] == "pass"
    assert data["copies"] is not None
    assert data["aggregate"]["passed"] is True


def test_a_reverification_whose_verifier_fields_differ_is_no_copy(gate: Gate) -> None:
    """Every reward agrees, but the new verifier wrote its own fields: the rows are not a copy, and
    margin mode passes."""
    old = old_rows()
    new = copy.deepcopy(old)
    for row in new:
        row["extracted_answer"] = f" {row['extracted_answer']}"
    result = gate.run(*gate.pair(old, new), "--parity-margin=0.05", "--parity-json=s.json")
    data = json.loads((gate.path / "s.json").read_text())
    assert data["copies"] is None
    assert data["verdict"] == "pass", all_text(result)
    assert data["counts"]["verifier_disagreements"] == 0


def test_the_fixture_offers_the_pairs_of_a_reverified_task(gate: Gate) -> None:
    old = old_rows()[: 4 * ROLLOUTS]
    new = reverified(old)
    new[-1]["response"]["output"][-1]["id"] += "-rerun"  # task 3's last rollout ran again: no pairs
    args = gate.pair(old, new)
    gate.write(
        "test_pairs.py",
        "from pytest_rollout_parity import rollout_pairs\n"
        "def test_pairs(rollout_pair):\n"
        "    pairs = rollout_pairs(rollout_pair)\n"
        "    shown = None if pairs is None else [(p.rollout, p.agrees, rollout_pair.new.read_row(p.new)['reward'])"
        " for p in pairs]\n"
        "    print('PAIRS', rollout_pair.task, shown, repr(pairs[0]) if pairs else None)\n",
    )
    result = gate.run(*args, "test_pairs.py", "-s", "-p", "no:randomly")
    printed = [line[line.index("PAIRS ") :] for line in result.outlines if "PAIRS " in line]
    shown = {line.split()[1]: line for line in printed}
    assert set(shown) == {"0", "1", "2", "3"}, all_text(result)
    assert "[(0, True, " in shown["0"] and "RolloutPair(rollout=0, old_reward=" in shown["0"]
    assert shown["3"] == "PAIRS 3 None None"


def test_the_merge_of_two_parts_names_the_disagreements(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_rollout_parity.__main__ import main as merge_main

    old = old_rows()
    args = [*gate.pair(old, reverified(old)), "--parity-margin=0.05", "-p", "no:cacheprovider"]
    for group in (1, 2):
        gate.run(*args, "--splits=2", f"--group={group}", f"--parity-json=part{group}.json")
    capsys.readouterr()
    merged = gate.path / "merged.json"
    try:
        status = merge_main(["merge", str(gate.path / "part1.json"), str(gate.path / "part2.json"), f"--json={merged}"])
    except SystemExit as exc:
        status = int(exc.code or 0)
    captured = capsys.readouterr()
    out = captured.out
    assert status == 1, out + captured.err
    assert "2 verifier disagreements: the same trajectories scored differently" in out
    data = json.loads(merged.read_text(encoding="utf-8"))
    assert data["verdict"] == "fail" and data["counts"]["verifier_disagreements"] == 2
    assert sorted(t["task"] for t in data["tasks"] if t["verifier_disagreements"]) == ["17", "3"]


def test_a_listed_disagreement_is_accepted_as_one(gate: Gate) -> None:
    old = old_rows()
    gate.write("known.txt", "3  # the new judge reads boxed answers\n17  # likewise\n")
    args = gate.pair(old, reverified(old))
    result = gate.run(*args, "--parity-margin=0.05", "--parity-known-flips=known.txt", "-rA")
    assert result.ret == 0, all_text(result)
    assert "known verifier disagreement (1 rollout(s) of the same trajectories) (known.txt:1)" in all_text(result)


def swapped(rows: list[dict[str, Any]], task: int) -> list[dict[str, Any]]:
    """The same rows scored again, the new verifier scoring one passed and one failed rollout of
    ``task`` the other way: the task's mean stays, two of its rollouts disagree."""
    new = copy.deepcopy(rows)
    own = [row for row in new if row["_ng_task_index"] == task]
    passed = next(row for row in own if row["reward"] == 1.0)
    failed = next(row for row in own if row["reward"] == 0.0)
    for row in (passed, failed):
        row["reward"] = 1.0 - row["reward"]
        row["extracted_answer"] = "A" if row["expected_answer"] != "A" else "B"
    return new


@pytest.mark.parametrize("margin", [None, "0.05"])
def test_disagreements_that_cancel_in_the_mean_fail(gate: Gate, margin: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task whose two rescored rollouts cancel (its mean unchanged) is found and fails, in plain and
    in margin mode, with both sides' evidence side by side; every report's headline names it."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    old = old_rows()
    task = next(t for t in range(TASKS) if len({r["reward"] for r in old if r["_ng_task_index"] == t}) == 2)
    extra = [f"--parity-margin={margin}"] if margin else []
    args = (*gate.pair(old, swapped(old, task)), *extra, "--parity-json=s.json", "--parity-markdown=s.md")
    result = gate.run(*args, "-p", f"no:{ANNOTATE_FAILURES}")
    text = all_text(result)
    mean = sum(r["reward"] for r in old if r["_ng_task_index"] == task) / ROLLOUTS
    headline = f"verifiers disagree: old={mean} new={mean} (verifier disagreement on 2 of 4 rollouts)"
    assert f"{task}: {headline}" in text
    assert f"<strong>failed</strong>: {headline}" in (gate.path / "s.md").read_text()
    assert f"::error title={task} failed::{headline}" in result.outlines
    assert not any("told from noise" in line for line in result.outlines)
    assert result.ret == 1, text
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["verifier_disagreements"] == 1 and data["counts"]["flipped"] == 1
    (flagged,) = [t for t in data["tasks"] if t["verifier_disagreements"]]
    assert flagged["task"] == str(task) and flagged["verifier_disagreements"] == 2
    assert flagged["old"]["reward"] == flagged["new"]["reward"] and flagged["winner"] is None
    assert flagged["outcome"] == "failed"
    assert "(verifier disagreement on 2 of 4 rollouts)" in text
    assert "the same trajectory (_ng_rollout_index " in text
    assert "(losing) row's evidence:" in text and "(winning) row's evidence:" in text
    verdict = next(line for line in section(result) if line.startswith("parity: "))
    assert "1 verifier disagreement: the same trajectories scored differently" in verdict, verdict


def test_reused_indices_pair_by_the_capture_id(gate: Gate) -> None:
    """Dispatches that reuse the rollout index (every row `_ng_rollout_index` 0) and two rollouts of a
    task that hold the same trajectory: only `_ng_rollout_id` pairs them, and the rescored one is a
    verifier disagreement."""
    old = old_rows()[: 10 * ROLLOUTS]
    for row in old:
        row["_ng_rollout_id"] = f"{row['_ng_task_index']}:{row['_ng_rollout_index']}"
        row["_ng_rollout_index"] = 0
    twins = [row for row in old if row["_ng_task_index"] == 3][:2]
    twins[1]["response"]["output"] = copy.deepcopy(twins[0]["response"]["output"])
    twins[1]["reward"] = twins[0]["reward"]
    new = copy.deepcopy(old)
    rescored = next(row for row in new if row["_ng_rollout_id"] == twins[1]["_ng_rollout_id"])
    rescored["reward"] = 1.0 - rescored["reward"]
    result = gate.run(*gate.pair(old, new), "--parity-json=s.json")
    assert result.ret == 1, all_text(result)
    data = json.loads((gate.path / "s.json").read_text())
    assert {t["task"]: t["verifier_disagreements"] for t in data["tasks"] if t["verifier_disagreements"]} == {"3": 1}
    assert "(verifier disagreement on 1 of 4 rollouts)" in all_text(result)
    for row in old + new:
        del row["_ng_rollout_id"]
    result = gate.run(*gate.pair(old, new), "--parity-json=s.json")
    data = json.loads((gate.path / "s.json").read_text())
    assert data["counts"]["verifier_disagreements"] == 0 and data["counts"]["flipped"] == 1  # no id: no pairs


def test_a_rescored_rollout_beside_an_agent_error_fails_as_a_disagreement(gate: Gate) -> None:
    """One rollout rescored 1 -> 0 (a net regression) in a task whose other rollout broke on the new
    side: a verifier disagreement, which fails, not a rerun candidate that lets the run pass; the
    broken rollout takes no part."""
    old = old_rows()
    task = next(t for t in range(TASKS) if [r["reward"] for r in old if r["_ng_task_index"] == t].count(1.0) >= 2)
    new = copy.deepcopy(old)
    rescored, broken = [r for r in new if r["_ng_task_index"] == task and r["reward"] == 1.0][:2]
    rescored["reward"] = 0.0
    broken["error"] = "RuntimeError: sandbox died"
    result = gate.run(*gate.pair(old, new), "--parity-json=s.json")
    assert result.ret == 1, all_text(result)
    data = json.loads((gate.path / "s.json").read_text())
    (flagged,) = [t for t in data["tasks"] if t["task"] == str(task)]
    assert (flagged["category"], flagged["outcome"], flagged["verifier_disagreements"]) == ("flipped", "failed", 1)
    assert "new agent error: error: RuntimeError: sandbox died" in all_text(result)

"""Margin mode (--parity-margin): the parity-aggregate item, flips judged on their repeats, the JSON."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from .conftest import Gate, all_text, harbor_row, legacy_row, section, summary_lines
from .test_options import assert_usage_error
from .test_selection import ran

AGGREGATE = "new/rollouts.jsonl::parity-aggregate"

STABLE = {f"stable-{i:02d}": (1.0 if i % 2 else 0.0) for i in range(18)}
NOISE = {"noisy-up": ([1, 1, 0, 0, 0], [1, 1, 1, 0, 0]), "noisy-down": ([1, 1, 1, 0, 0], [1, 1, 0, 0, 0])}


def sides(tasks: dict[str, tuple[list[float], list[float]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Legacy rows on the old side, Harbor rows on the new, one row per listed reward."""
    old = [legacy_row(task, float(r)) for task, (olds, _) in tasks.items() for r in olds]
    new = [
        harbor_row(task, float(r), index=i, rollout=k)
        for i, (task, (_, news)) in enumerate(tasks.items())
        for k, r in enumerate(news)
    ]
    return old, new


def scenario(gate: Gate, changed: Optional[dict[str, tuple[list[float], list[float]]]] = None) -> list[str]:
    """18 stable tasks (5 rows a side), 2 noise flips (3/5 vs 2/5), plus ``changed``."""
    tasks: dict[str, tuple[list[float], list[float]]] = {t: ([r] * 5, [r] * 5) for t, r in STABLE.items()}
    tasks.update({t: (list(map(float, o)), list(map(float, n))) for t, (o, n) in NOISE.items()})
    tasks.update(changed or {})
    return gate.pair(*sides(tasks))


REGRESSED = {f"broken-{i}": ([1.0] * 5, [0.0] * 5) for i in range(3)}
IMPROVED = {f"lenient-{i}": ([0.0] * 5, [1.0] * 5) for i in range(3)}


def test_noise_only_passes_the_aggregate_and_xfails_the_flips(gate: Gate) -> None:
    args = scenario(gate)
    result = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv", "--parity-json=s.json")
    assert result.ret == 0
    result.assert_outcomes(passed=19, xfailed=2)
    outcomes = ran(result)
    assert outcomes[AGGREGATE] == "PASSED"
    xfails = [line for line in summary_lines(result) if line.startswith("XFAIL ")]
    assert any(
        "noisy-up - flipped within noise: p = 1.000, 2/5 vs 3/5; BH-adjusted p = 1.000 >= alpha 0.05 "
        "(BH over the 2 of 20 tested task(s) that can reach it)" in line
        for line in xfails
    ), xfails
    lines = section(result)
    assert any(
        line.startswith("aggregate at margin ±0.05: PASSED (equivalent): one-sided 95% bounds [") for line in lines
    ), lines
    data = json.loads((gate.path / "s.json").read_text())
    aggregate = data["aggregate"]
    assert set(aggregate) == {"margin", "lower_bound", "upper_bound", "passed"}
    assert aggregate["margin"] == 0.05 and aggregate["passed"] is True
    assert -0.05 <= aggregate["lower_bound"] <= 0 <= aggregate["upper_bound"] <= 0.05
    # the counts take in the aggregate item: 19 passed (18 tasks and the aggregate) and 2 xfailed
    assert data["run"]["selected"] == 21 and data["run"]["outcomes"] == {"passed": 19, "xfailed": 2}
    assert [item["item"] for item in data["run"]["gate"]] == ["parity-aggregate"] and data["counts"]["tasks"] == 20
    assert data["flip_tests"] == {"alpha": 0.05, "tests": 20, "counted": 2}
    assert not any(line.startswith("selected:") for line in lines)  # every item ran


def test_regression_fails_the_aggregate_on_the_lower_side_and_the_regressed_tasks(gate: Gate) -> None:
    args = scenario(gate, REGRESSED)
    result = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv")
    assert result.ret == 1
    result.assert_outcomes(passed=18, failed=4, xfailed=2)
    outcomes = ran(result)
    assert outcomes[AGGREGATE] == "FAILED"
    assert {node for node, word in outcomes.items() if word == "FAILED"} == {
        AGGREGATE,
        *(f"new/rollouts.jsonl::broken-{i}" for i in range(3)),
    }
    message = next(line for line in result.outlines if line.startswith("not shown equivalent"))
    assert message.startswith("not shown equivalent within margin ±0.05: lower bound ")
    assert f"FAILED {AGGREGATE} - {message}" in result.outlines  # the short summary: the verdict, no name again
    assert "the new side may score lower than the margin allows" in message
    assert "upper bound" not in message.split(";")[0]
    assert "n = 23" in message and "Δ = -0.1304" in message
    # the regressed task's message carries its noise and why it is not noise
    start = result.outlines.index("broken-0: new regressed: old=1.0 new=0.0 (p = 0.008, 5/5 vs 0/5)")
    assert result.outlines[start + 1] == (
        "    not noise: BH-adjusted p = 0.013 < alpha 0.05 (BH over the 5 of 23 tested task(s) that can reach it)"
    )
    assert "Traceback" not in all_text(result)


def test_improvement_fails_the_aggregate_on_the_upper_side(gate: Gate) -> None:
    args = scenario(gate, IMPROVED)
    result = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv")
    assert result.ret == 1
    outcomes = ran(result)
    assert outcomes[AGGREGATE] == "FAILED"
    assert all(outcomes[f"new/rollouts.jsonl::lenient-{i}"] == "FAILED" for i in range(3))
    message = next(line for line in result.outlines if line.startswith("not shown equivalent within margin ±0.05: "))
    assert "upper bound" in message and "> +0.05" in message and "score higher" in message
    assert "lower bound" not in message.split(";")[0]


def test_alpha_decides_which_flips_fail(gate: Gate) -> None:
    args = scenario(gate, REGRESSED)
    result = gate.run(*args, "--parity-margin=0.05", "--parity-alpha=0.01", "-rA", "-vv")
    outcomes = ran(result)
    assert [node for node, word in outcomes.items() if word == "FAILED"] == [AGGREGATE]
    assert any(
        "broken-0 - flipped within noise: p = 0.008, 5/5 vs 0/5; BH-adjusted p = 0.013" in line
        and ">= alpha 0.01" in line
        for line in summary_lines(result)
    )


def test_without_a_margin_every_flip_fails_and_no_aggregate(gate: Gate) -> None:
    args = scenario(gate, REGRESSED)
    result = gate.run(*args, "-rA", "-vv", "--parity-json=s.json")
    assert result.ret == 1
    outcomes = ran(result)
    assert AGGREGATE not in outcomes
    assert sum(word == "FAILED" for word in outcomes.values()) == 5  # 3 regressed + 2 noise flips
    # the flip message carries the per-task noise in both modes
    assert "broken-1: new regressed: old=1.0 new=0.0 (p = 0.008, 5/5 vs 0/5)" in result.outlines
    data = json.loads((gate.path / "s.json").read_text())
    assert "aggregate" not in data
    assert not any(line.startswith("aggregate at margin") for line in section(result))


def test_single_rows_flips_are_judged_in_the_aggregate(gate: Gate) -> None:
    tasks = {f"t{i}": ([1.0], [1.0]) for i in range(30)} | {"up": ([0.0], [1.0]), "down": ([1.0], [0.0])}
    args = gate.pair(*sides(tasks))
    result = gate.run(*args, "--parity-margin=0.1", "-rA", "-vv", "--parity-json=s.json")
    assert result.ret == 0, result.outlines
    assert ran(result)[AGGREGATE] == "PASSED"
    xfails = [line for line in summary_lines(result) if line.startswith("XFAIL ")]
    assert "XFAIL new/rollouts.jsonl::up - flipped; single row a side: judged in the aggregate" in xfails
    data = json.loads((gate.path / "s.json").read_text())
    assert data["paired"]["table"] == {"both_pass": 30, "old_only": 1, "new_only": 1, "both_fail": 0}
    assert all(task["p_value"] is None for task in data["tasks"])
    assert gate.run(*args, "-rA").ret == 1  # without the margin both flips fail


def test_strict_keeps_its_meaning_in_margin_mode(gate: Gate) -> None:
    tasks = {f"t{i}": ([1.0], [1.0]) for i in range(10)}
    old, new = sides(tasks)
    old.append(legacy_row("masked-one", 1.0))
    new.append(harbor_row("masked-one", 0.0, index=99, mask_sample=True))
    args = gate.pair(old, new)
    # 10 tasks without spread: the resolution floor (1/10) shows equivalence within ±0.2, not ±0.05
    lenient = gate.run(*args, "--parity-margin=0.2", "-rA", "-vv")
    assert lenient.ret == 0 and ran(lenient)["new/rollouts.jsonl::masked-one"] == "XFAIL"
    strict = gate.run(*args, "--parity-margin=0.2", "--parity-strict", "-rA", "-vv")
    assert strict.ret == 1 and ran(strict)["new/rollouts.jsonl::masked-one"] == "FAILED"
    assert ran(strict)[AGGREGATE] == "PASSED"


def test_too_few_tasks_fail_the_aggregate_with_the_reason(gate: Gate) -> None:
    args = gate.pair([legacy_row("only", 1.0)], [harbor_row("only", 1.0)])
    result = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv", "--parity-json=s.json")
    assert result.ret == 1
    assert ran(result)[AGGREGATE] == "FAILED"
    assert (
        "no decision at margin ±0.05: 1 compared task: at least 2 are needed for a spread; "
        "no task left out (masked or missing) on either side" in result.outlines
    )
    data = json.loads((gate.path / "s.json").read_text())
    assert data["aggregate"] == {"margin": 0.05, "lower_bound": None, "upper_bound": None, "passed": False}
    paired = data["paired"]
    assert paired["n"] == 1 and paired["delta"] is None and paired["ci95"] is None
    assert paired["absent"] == "1 compared task: at least 2 are needed for a spread"


def test_aggregate_selects_with_k_and_node_id_and_reruns_with_lf(gate: Gate) -> None:
    args = scenario(gate, REGRESSED)
    only = gate.run(*args, "--parity-margin=0.05", "-k", "parity-aggregate", "-rA", "-vv", "--parity-json=k.json")
    assert ran(only) == {AGGREGATE: "FAILED"}
    # 23 task items and the aggregate collected, the aggregate alone ran: the counts say so
    assert "selected: 1 of 24 parity items ran" in section(only)
    run = json.loads((gate.path / "k.json").read_text())["run"]
    assert (run["selected"], run["outcomes"]) == (1, {"failed": 1})
    by_id = gate.run(*args, "--parity-margin=0.05", AGGREGATE, "-rA", "-vv")
    assert ran(by_id) == {AGGREGATE: "FAILED"}
    assert gate.run(*args, "--parity-margin=0.05").ret == 1
    again = gate.run(*args, "--parity-margin=0.05", "--lf", "-rA", "-vv")
    assert ran(again) == {AGGREGATE: "FAILED", **{f"new/rollouts.jsonl::broken-{i}": "FAILED" for i in range(3)}}
    assert sum(" rollout parity " in line for line in again.outlines) == 1


@pytest.mark.slow
def test_aggregate_under_xdist(gate: Gate) -> None:
    pytest.importorskip("xdist")
    args = [*scenario(gate, REGRESSED), gate.beside()]
    serial = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv", "--parity-json=serial.json")
    parallel = gate.run(*args, "--parity-margin=0.05", "-rA", "-vv", "-n", "2", "--parity-json=xdist.json")
    assert serial.ret == parallel.ret == 1
    assert ran(parallel) == ran(serial)
    assert section(parallel) == section(serial)
    assert json.loads((gate.path / "xdist.json").read_text()) == json.loads((gate.path / "serial.json").read_text())


def test_task_named_like_the_aggregate_takes_the_collision_suffix(gate: Gate) -> None:
    tasks = {f"t{i}": ([1.0], [1.0]) for i in range(5)} | {"parity-aggregate": ([1.0], [1.0])}
    args = gate.pair(*sides(tasks))
    result = gate.run(*args, "--parity-margin=0.05", "--collect-only", "-q")
    items = [line for line in result.outlines if "::" in line]
    assert AGGREGATE in items
    renamed = [item for item in items if item.startswith("new/rollouts.jsonl::parity-aggregate-")]
    assert len(renamed) == 1 and len(items) == 7
    # the same name without a margin: node ids do not depend on the mode
    plain = gate.run(*args, "--collect-only", "-q")
    assert renamed[0] in plain.outlines and AGGREGATE not in plain.outlines


def test_margin_from_ini(gate: Gate) -> None:
    args = scenario(gate, REGRESSED)
    gate.write("pytest.ini", "[pytest]\nparity_margin = 0.05\nparity_alpha = 0.01\n")
    result = gate.run(*args, "-rA", "-vv")
    assert [node for node, word in ran(result).items() if word == "FAILED"] == [AGGREGATE]


@pytest.mark.parametrize("value", ["-0.1", "abc", "nan", "inf", ""])
def test_bad_margin(gate: Gate, value: str) -> None:
    args = scenario(gate)
    assert_usage_error(gate.run(*args, f"--parity-margin={value}"), "--parity-margin")


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.05", "x"])
def test_bad_alpha(gate: Gate, value: str) -> None:
    args = scenario(gate)
    assert_usage_error(gate.run(*args, "--parity-margin=0.05", f"--parity-alpha={value}"), "--parity-alpha")


def test_bad_margin_ini(gate: Gate) -> None:
    args = scenario(gate)
    gate.write("pytest.ini", "[pytest]\nparity_margin = wide\n")
    assert_usage_error(gate.run(*args), "parity_margin")

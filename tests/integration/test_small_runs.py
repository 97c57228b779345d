"""Small runs in margin mode: no pass on zero spread, the plan's two levers, any finite reward."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from .conftest import Gate, harbor_row, legacy_row

MARGIN = "--parity-margin=0.05"


def _same(gate: Gate, rewards: list[float]) -> list[str]:
    """One row a side a task, the same reward on both sides (legacy rows old, Harbor rows new: no copy)."""
    old = [legacy_row(f"task-{i:03d}", r) for i, r in enumerate(rewards)]
    new = [harbor_row(f"task-{i:03d}", r, index=i) for i, r in enumerate(rewards)]
    return gate.pair(old, new)


def _summary(gate: Gate, *args: str) -> tuple[int, dict[str, Any]]:
    result = gate.run(*args, MARGIN, "--parity-json=s.json", "-q")
    return int(result.ret), json.loads((gate.path / "s.json").read_text())


def test_two_tasks_with_the_same_rewards_are_inconclusive_not_a_pass(gate: Gate) -> None:
    status, data = _summary(gate, *_same(gate, [1.0, 0.0]))
    assert data["verdict"] == "inconclusive" and status == 1
    aggregate = data["aggregate"]
    assert not aggregate["passed"] and aggregate["lower_bound"] < -0.05 < 0.05 < aggregate["upper_bound"]
    plan = data["plan"]
    # none of the 2 row pairs differed: the plan takes -ln(0.2) = 1.6 of them at their 80% upper
    # confidence limit (one would be the gate's own floor)
    assert plan["rollout_variance"] == pytest.approx(-math.log(0.2) / 2) and plan["decided"] is None
    assert plan["by_rollouts"] is None  # 2 tasks: t(1) leaves no number of rollouts up to 1,000 enough
    assert plan["by_tasks"]["tasks"] > 2 and plan["by_tasks"]["power"] >= 0.8


def test_ten_tasks_all_passing_are_inconclusive(gate: Gate) -> None:
    status, data = _summary(gate, *_same(gate, [1.0] * 10))
    assert data["verdict"] == "inconclusive" and status == 1 and not data["aggregate"]["passed"]
    plan = data["plan"]
    for lever in (plan["by_rollouts"], plan["by_tasks"]):
        assert lever["power"] >= 0.8 and 0.0 < lever["regression_power"] < 1.0
    assert plan["by_rollouts"]["tasks"] == 10 and plan["by_rollouts"]["repeats"] > 1
    assert plan["by_tasks"]["tasks"] > 10 and plan["by_tasks"]["repeats"] == 1


def test_five_hundred_tasks_all_passing_pass(gate: Gate) -> None:
    status, data = _summary(gate, *_same(gate, [1.0] * 500))
    assert data["verdict"] == "pass" and status == 0 and data["aggregate"]["passed"]


def test_a_failing_run_is_not_planned_for_equivalence(gate: Gate) -> None:
    rewards = [1.0] * 40
    old = [legacy_row(f"task-{i:03d}", r) for i, r in enumerate(rewards)]
    new = [harbor_row(f"task-{i:03d}", 0.0 if i < 20 else 1.0, index=i) for i in range(40)]
    # --parity-plan: the plan of the data, asked for though the verdict is decided
    result = gate.run(*gate.pair(old, new), MARGIN, "--parity-json=s.json", "--parity-plan", "-q")
    data = json.loads((gate.path / "s.json").read_text())
    assert data["verdict"] == "fail"
    plan = data["plan"]
    assert plan["by_rollouts"] is None and plan["by_tasks"] is None
    assert "the mean difference lies wholly outside the margin" in plan["decided"]
    assert any("decided: the run fails" in line for line in result.outlines)


def test_extreme_finite_rewards_give_every_report(gate: Gate) -> None:
    # a flip from 1e200 to 0 and one from 1.7e308 to -1.7e308, beside ordinary tasks
    old = [legacy_row("huge", 1e200), legacy_row("edge", 1.7e308)] + [legacy_row(f"t{i}", 1.0) for i in range(5)]
    new = [harbor_row("huge", 0.0, index=0), harbor_row("edge", -1.7e308, index=1)] + [
        harbor_row(f"t{i}", 1.0, index=i + 2) for i in range(5)
    ]
    args = gate.pair(old, new)
    result = gate.run(*args, MARGIN, "--parity-json=s.json", "--parity-html=s.html", "--parity-markdown=s.md")
    assert result.ret == 1
    text = "\n".join(result.outlines)
    assert "rollout parity" in text and "Traceback" not in text and "OverflowError" not in text
    data = json.loads((gate.path / "s.json").read_text())
    assert data["verdict"] in ("fail", "inconclusive") and data["paired"]["delta"] is not None
    assert (gate.path / "s.html").read_text() and (gate.path / "s.md").read_text()

"""Margin mode as a user meets it: 300 tasks x 5 repeats a side from examples/make_noise_pairs.py.

Noise alone passes at a margin of 0.05 (its flips xfail); a tenth of the tasks going from 5/5 to
0/5, or from 0/5 to 5/5, fails the aggregate and exactly those tasks. Without a margin every flip
fails, noise included.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from .conftest import Gate, example_module
from .test_selection import ran


@pytest.fixture(scope="module")
def make_pairs() -> ModuleType:
    return example_module("make_noise_pairs")


def gate_args(gate: Gate, make_pairs: ModuleType, scenario: str) -> list[str]:
    old, new = make_pairs.write_pair(gate.path / "pairs", scenario)
    return [f"--parity-old={old.relative_to(gate.path)}", f"--parity-new={new.relative_to(gate.path)}", "-rA", "-vv"]


def by_outcome(result: pytest.RunResult) -> dict[str, set[str]]:
    grouped: dict[str, set[str]] = {}
    for node, word in ran(result).items():
        grouped.setdefault(word, set()).add(node.split("::", 1)[1])
    return grouped


def changed(make_pairs: ModuleType, scenario: str) -> set[str]:
    tasks = make_pairs.changed_tasks(make_pairs.pass_rates(300, 0), scenario, 0)
    return {f"tb-task-{task:03d}" for task in tasks}


def test_noise_fails_without_a_margin_and_passes_with_one(gate: Gate, make_pairs: ModuleType) -> None:
    args = gate_args(gate, make_pairs, "noise")
    plain = by_outcome(gate.run(*args))
    flips = plain["FAILED"]
    assert 0.12 * 300 <= len(flips) <= 0.2 * 300  # about 15% of the tasks flip by chance
    result = gate.run(*args, "--parity-margin=0.05")
    assert result.ret == 0
    outcomes = by_outcome(result)
    assert "FAILED" not in outcomes
    assert outcomes["XFAIL"] == flips
    assert "parity-aggregate" in outcomes["PASSED"]


@pytest.mark.parametrize(("scenario", "side"), [("regressed", "lower"), ("improved", "upper")])
def test_a_tenth_of_tasks_moving_fails_the_aggregate_and_those_tasks(
    gate: Gate, make_pairs: ModuleType, scenario: str, side: str
) -> None:
    args = gate_args(gate, make_pairs, scenario)
    assert gate.run(*args).ret == 1
    result = gate.run(*args, "--parity-margin=0.05")
    assert result.ret == 1
    moved = changed(make_pairs, scenario)
    assert len(moved) == 30
    outcomes = by_outcome(result)
    assert outcomes["FAILED"] == moved | {"parity-aggregate"}
    assert outcomes["XFAIL"]  # the noise flips are still judged as noise
    message = next(line for line in result.outlines if line.startswith("not shown equivalent"))
    assert message.startswith(f"not shown equivalent within margin ±0.05: {side} bound ")

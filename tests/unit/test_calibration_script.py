"""benchmarks/calibration.py: its simulation moves the pass rates as documented, and it runs end to end."""

from __future__ import annotations

import importlib.util
import random
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration.py"


def _script(name: str) -> ModuleType:
    """A benchmarks/ script, imported by its path under its own name."""
    spec = importlib.util.spec_from_file_location(name, SCRIPT.parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def calibration() -> ModuleType:
    return _script("calibration")


@pytest.mark.parametrize("distribution", ["beta-0.5", "beta-2", "mix"])
@pytest.mark.parametrize("shift", [-0.05, 0.0, 0.05])
def test_the_true_difference_is_the_shift(calibration: ModuleType, distribution: str, shift: float) -> None:
    # E[moved(p, h) - p] over the distribution is h: checked by a large sample (its mean is 0.5)
    rng = random.Random(1)
    rates = [calibration.rate(rng, distribution) for _ in range(50_000)]
    mean_shift = sum(calibration.moved(p, shift) - p for p in rates) / len(rates)
    assert mean_shift == pytest.approx(shift, abs=0.002)
    assert all(0.0 <= calibration.moved(p, shift) <= 1.0 for p in rates[:1000])


@pytest.mark.parametrize("shape", ["equal", "1..G", "half"])
def test_taskset_sizes(calibration: ModuleType, shape: str) -> None:
    sizes = calibration.sizes(shape, 300, 30)
    assert sum(sizes) == 300 and len(sizes) == 30 and min(sizes) >= 1
    if shape == "equal":
        assert set(sizes) == {10}
    if shape == "half":
        assert sizes[0] == 150


def test_a_small_run_prints_the_table(calibration: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert calibration.main(["--reps", "2", "--k", "1,3", "--jobs", "1", "--tasks", "40", "--groups", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("| mix") or line.startswith("| beta")]
    assert len(rows) == 2 * 8  # 6 mix cells and 2 others, for each K
    assert all(row.count("|") == 10 for row in rows)
    assert all(row.split("|")[7].strip() == "n/a" for row in rows if row.split("|")[2].strip() == "1")


def test_planted_regressions_are_found_by_their_labels(calibration: ModuleType) -> None:
    # 8 rows a side: 8/8 -> 0/8 has p = 0.00016, far below what BH needs over the few dozen tasks that
    # can reach 0.05 in the README's mix, so all 3 planted tasks fail (labels carry the taskset)
    cell = calibration.Cell("mix", 8, "equal", 0.0)
    old, new, planted = calibration.pair(random.Random(1), cell, 0.0, 300, 30, planted=3)
    data = calibration.summary(old, new, 0.05, 0.05)
    assert any("/" in task["task"] for task in data["tasks"])
    assert len(planted) == 3 and calibration.failed_flips(data, 0.05) >= planted
    assert calibration.plain_bh_failures(data["tasks"], 0.05) >= planted


@pytest.fixture(scope="module")
def small_runs(calibration: ModuleType) -> ModuleType:  # after calibration.py, whose `moved` it reads
    return _script("small_runs")


@pytest.mark.parametrize("kind", ["binary-2", "binary-0.3", "continuous"])
@pytest.mark.parametrize(("tasks", "k"), [(10, 1), (10, 5), (20, 3)])
def test_the_vectorised_decision_is_the_gates(small_runs: ModuleType, kind: str, tasks: int, k: int) -> None:
    import numpy as np

    # raises on any run whose decision differs from summary_dict's, at -M, 0 and +M
    small_runs.check_against_the_gate(np.random.default_rng([7, tasks, k]), small_runs.Cell(kind, tasks, k), 4)


def test_the_true_difference_of_the_small_runs_grid_is_d(small_runs: ModuleType) -> None:
    import numpy as np

    for kind in small_runs.KINDS:
        cell = small_runs.Cell(kind, 300, 2)
        old, new = small_runs.draw(np.random.default_rng(3), cell, 0.05, 200)
        assert float((new - old).mean()) == pytest.approx(0.05, abs=0.005)
        assert 0.0 <= float(old.min()) and float(new.max()) <= 1.0


def test_a_small_grid_prints_its_table_and_pooled_figures(
    small_runs: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    status = small_runs.main(["--reps", "40", "--tasks", "10,20", "--k", "1,3", "--check", "1", "--plans", "0"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| binary") or line.startswith("| continuous")]
    assert len(rows) == 3 * 2 * 2 and all(row.count("|") == 7 for row in rows)
    assert all(row.split("|")[4].strip() == "0.2" for row in rows)  # M at 10 and 20 tasks
    found = re.search(r"pooled pass at ±M: ([\d.]+)% .*\(limit ([\d.]+)%\); .* errors: (.*)$", out, re.MULTILINE)
    assert found is not None
    # the exit status says whether the printed figures keep the bounds
    assert status == (0 if float(found[1]) <= float(found[2]) and found[3] == "none" else 1)


def test_the_plans_check_simulates_each_lever(small_runs: ModuleType) -> None:
    tallies = small_runs.check_plans(small_runs.Cell("binary-2", 20, 3), pilots=2, runs=30, seed=1)
    assert set(tallies) == {"rollouts", "tasks"}
    for tally in tallies.values():
        assert tally.runs + 30 * tally.skipped == 60  # each pilot's lever simulated, or skipped
        assert 0 <= tally.passed <= tally.runs and 0 <= tally.failed <= tally.runs
        # every planned size keeps at least the pilot's tasks and rollouts
        assert all(tasks >= 20 and repeats >= 3 for tasks, repeats in tally.sizes)

"""benchmarks/calibration.py: its simulation moves the pass rates as documented, and it runs end to end."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "calibration.py"


@pytest.fixture(scope="module")
def calibration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibration", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["calibration"] = module
    spec.loader.exec_module(module)
    return module


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

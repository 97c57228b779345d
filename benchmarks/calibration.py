"""How often does margin mode decide right? Simulated pairs through the public API, with Monte Carlo errors.

    python benchmarks/calibration.py                 # the default grid, 60 runs a cell (~10 min on 2 cores)
    python benchmarks/calibration.py --reps 400      # tighter figures (scales linearly)
    python benchmarks/calibration.py --full          # every distribution x taskset shape x effect x K
    python benchmarks/calibration.py --jobs 1 --reps 20 --k 5   # a quick look

Each simulated run is a pair of rollout files held in memory: T tasks (300) in G tasksets (30),
K rollouts a task a side, binary rewards. A task's old pass rate p is drawn from one of:

    beta-0.5   Beta(0.5, 0.5): most tasks nearly always or nearly never pass
    beta-2     Beta(2, 2): most tasks are flaky, around 0.5
    mix        the README's pairs: 40% always pass, 40% never, 20% flaky (uniform 0.2-0.8)

The new side's pass rate moves by h = D + e_g: D is the true difference (0 or +-M), e_g a shared
taskset effect, uniform on [-0.05, 0.05] in the cells that have one (else 0). A move up takes a task
from p to p + (1 - p) h / (1 - mean p), a move down to p - p |h| / mean p, so every rate stays in
[0, 1] and the expected difference over tasks is exactly D (the mean pass rate is 0.5 under all three
distributions). Taskset shapes: `equal` (10 tasks each), `1..G` (sizes proportional to 1, 2, ..., G)
and `half` (one taskset holds half the tasks, the other 29 share the rest).

Every run goes through `compare_rollouts` and `summary_dict(result, margin=M, alpha=A)`, the way a
user's code would, and reads the `aggregate` decision and each flip's `adjusted_p` from the summary.
Per cell it prints, each with its Monte Carlo standard error:

    pass at +-M     the aggregate passes although the true difference is +M or -M (half the runs
                    each): the equivalence test's error; at most 5% is its promise
    pass at 0       the aggregate passes when the servers are the same: its power
    false failure   the share of runs with pure noise (D = 0) in which any flip failed
    caught          the share of 3 planted tasks that went from always to never passing (K/K to 0/K,
                    added to a D = 0 run) that fail
    caught, plain   the same with plain Benjamini-Hochberg over the flipped tasks (the gate before
                    it counted only the tests that can reach alpha), for comparison

With K = 1 there is no per-task test (one row a side), and those columns read n/a.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_rollout_parity import compare_rollouts, summary_dict

DISTRIBUTIONS = ("beta-0.5", "beta-2", "mix")
SHAPES = ("equal", "1..G", "half")
EFFECT = 0.05
PLANTED = 3
MEAN_RATE = 0.5


@dataclass(frozen=True)
class Cell:
    distribution: str
    k: int
    shape: str
    effect: float


@dataclass
class Tally:
    runs: int = 0
    boundary_passed: int = 0
    null_passed: int = 0
    false_failure: int = 0
    caught: list[float] | None = None
    caught_plain: list[float] | None = None


def rate(rng: random.Random, distribution: str) -> float:
    if distribution == "beta-0.5":
        return rng.betavariate(0.5, 0.5)
    if distribution == "beta-2":
        return rng.betavariate(2.0, 2.0)
    kind = rng.random()
    if kind < 0.4:
        return 1.0
    if kind < 0.8:
        return 0.0
    return 0.2 + 0.6 * rng.random()


def sizes(shape: str, tasks: int, groups: int) -> list[int]:
    """Taskset sizes summing to ``tasks``, each at least 1."""
    weights = {"equal": [1] * groups, "1..G": list(range(1, groups + 1)), "half": [groups - 1] + [1] * (groups - 1)}[
        shape
    ]
    total = sum(weights)
    exact = [tasks * w / total for w in weights]
    counts = [max(1, int(x)) for x in exact]
    order = sorted(range(groups), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    i = 0
    while sum(counts) < tasks:
        counts[order[i % groups]] += 1
        i += 1
    while sum(counts) > tasks:
        biggest = max(range(groups), key=lambda j: counts[j])
        counts[biggest] -= 1
    return counts


def moved(p: float, h: float) -> float:
    """The new pass rate of a task at ``p`` moved by ``h`` (in expectation over tasks)."""
    if h >= 0:
        return p + (1.0 - p) * h / (1.0 - MEAN_RATE)
    return p + p * h / MEAN_RATE


def pair(
    rng: random.Random, cell: Cell, difference: float, tasks: int, groups: int, planted: int = 0
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """The rows of one simulated pair, and the labels of the planted regressions."""
    old: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    index = 0
    rates: list[tuple[str, str, float, float]] = []
    for g, size in enumerate(sizes(cell.shape, tasks, groups)):
        shift = difference + (rng.uniform(-cell.effect, cell.effect) if cell.effect else 0.0)
        for _ in range(size):
            p = rate(rng, cell.distribution)
            rates.append((f"ts-{g:02d}", f"task-{index:04d}", p, moved(p, shift)))
            index += 1
    chosen = set(rng.sample(range(len(rates)), planted)) if planted else set()
    planted_labels: set[str] = set()
    for i, (taskset, task, p, q) in enumerate(rates):
        if i in chosen:
            p, q = 1.0, 0.0
            planted_labels.add(task)
        ident = {"taskset": taskset, "task_id": task}
        old.extend({"_ng_task_id": ident, "reward": float(rng.random() < p)} for _ in range(cell.k))
        new.extend({"_ng_task_id": ident, "reward": float(rng.random() < q)} for _ in range(cell.k))
    return old, new, planted_labels


def plain_bh_failures(tasks: Sequence[dict[str, Any]], alpha: float) -> set[str]:
    """The flipped tasks plain BH over every flipped task's p-value would fail (the former rule)."""
    tested = sorted((t["p_value"], t["task"]) for t in tasks if t["p_value"] is not None)
    m = len(tested)
    cut = max((rank for rank, (p, _) in enumerate(tested, start=1) if p * m / rank < alpha), default=0)
    return {task_id(task) for _, task in tested[:cut]}


def summary(old: list[dict[str, Any]], new: list[dict[str, Any]], margin: float, alpha: float) -> dict[str, Any]:
    return summary_dict(compare_rollouts(old, new), margin=margin, alpha=alpha)


def task_id(label: str) -> str:
    """The task id in a label (labels carry the taskset, `ts-03/task-0032`, when tasksets differ)."""
    return label.rsplit("/", 1)[-1]


def failed_flips(data: dict[str, Any], alpha: float) -> set[str]:
    return {task_id(t["task"]) for t in data["tasks"] if t["adjusted_p"] is not None and t["adjusted_p"] < alpha}


def simulate(job: tuple[Cell, int, int, argparse.Namespace]) -> tuple[Cell, Tally]:
    """``reps`` runs of one cell from the seed ``start``."""
    cell, start, reps, options = job
    tally = Tally(caught=[], caught_plain=[])
    assert tally.caught is not None and tally.caught_plain is not None
    margin, alpha = options.margin, options.alpha
    for rep in range(start, start + reps):
        rng = random.Random(f"{options.seed}-{cell}-{rep}")
        sign = 1.0 if rep % 2 else -1.0
        boundary = summary(*pair(rng, cell, sign * margin, options.tasks, options.groups)[:2], margin, alpha)
        null = summary(*pair(rng, cell, 0.0, options.tasks, options.groups)[:2], margin, alpha)
        tally.runs += 1
        tally.boundary_passed += boundary["aggregate"]["passed"]
        tally.null_passed += null["aggregate"]["passed"]
        tally.false_failure += bool(failed_flips(null, alpha))
        if cell.k >= 2:
            old, new, planted = pair(rng, cell, 0.0, options.tasks, options.groups, planted=PLANTED)
            data = summary(old, new, margin, alpha)
            tally.caught.append(len(failed_flips(data, alpha) & planted) / len(planted))
            tally.caught_plain.append(len(plain_bh_failures(data["tasks"], alpha) & planted) / len(planted))
    return cell, tally


def merge(into: Tally, part: Tally) -> None:
    into.runs += part.runs
    into.boundary_passed += part.boundary_passed
    into.null_passed += part.null_passed
    into.false_failure += part.false_failure
    assert into.caught is not None and into.caught_plain is not None
    into.caught.extend(part.caught or [])
    into.caught_plain.extend(part.caught_plain or [])


def proportion(hits: int, runs: int) -> str:
    share = hits / runs
    error = math.sqrt(max(share * (1 - share), 1 / runs) / runs)  # never a zero error at 0% or 100%
    return f"{100 * share:.1f}% ± {100 * error:.1f}"


def mean_share(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    n = len(values)
    mean = math.fsum(values) / n
    spread = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    error = math.sqrt(max(spread, mean * (1 - mean) / PLANTED, 1 / PLANTED) / n)
    return f"{100 * mean:.1f}% ± {100 * error:.1f}"


def grid(options: argparse.Namespace) -> Iterator[Cell]:
    ks = [int(k) for k in options.k.split(",")]
    if options.full:
        for distribution in DISTRIBUTIONS:
            for k in ks:
                for shape in SHAPES:
                    for effect in (0.0, EFFECT):
                        yield Cell(distribution, k, shape, effect)
        return
    # every taskset shape and effect on the README's mix; the other two distributions on equal tasksets
    for k in ks:
        for shape in SHAPES:
            for effect in (0.0, EFFECT):
                yield Cell("mix", k, shape, effect)
        for distribution in ("beta-0.5", "beta-2"):
            yield Cell(distribution, k, "equal", 0.0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=60, help="simulated runs a cell (default 60)")
    parser.add_argument("--tasks", type=int, default=300, help="tasks a run (default 300)")
    parser.add_argument("--groups", type=int, default=30, help="tasksets a run (default 30)")
    parser.add_argument("--k", default="1,3,5,8", help="rollouts a task a side, comma-separated (default 1,3,5,8)")
    parser.add_argument("--margin", type=float, default=0.05, help="--parity-margin (default 0.05)")
    parser.add_argument("--alpha", type=float, default=0.05, help="--parity-alpha (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--full", action="store_true", help="every distribution x shape x effect x K")
    options = parser.parse_args(argv)
    cells = list(grid(options))
    chunk = max(1, min(20, options.reps))
    jobs = [
        (cell, start, min(chunk, options.reps - start), options)
        for cell in cells
        for start in range(0, options.reps, chunk)
    ]
    tallies = {cell: Tally(caught=[], caught_plain=[]) for cell in cells}
    began = time.perf_counter()
    if options.jobs > 1:
        with multiprocessing.Pool(options.jobs) as pool:
            for cell, part in pool.imap_unordered(simulate, jobs):
                merge(tallies[cell], part)
    else:
        for job in jobs:
            cell, part = simulate(job)
            merge(tallies[cell], part)
    elapsed = time.perf_counter() - began
    print(
        f"T = {options.tasks} tasks in {options.groups} tasksets, margin ±{options.margin:g}, alpha {options.alpha:g}, "
        f"{options.reps} runs a cell, {PLANTED} planted K/K -> 0/K tasks, taskset effect uniform ±{EFFECT:g}; "
        f"{elapsed:.0f} s"
    )
    print()
    print(
        "| rewards | K | tasksets | taskset effect | pass at ±M | pass at 0 | false failure | caught | caught, plain BH |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for cell in cells:
        t = tallies[cell]
        per_task = cell.k >= 2
        print(
            f"| {cell.distribution} | {cell.k} | {cell.shape} | {'±' + format(cell.effect, 'g') if cell.effect else 'none'} "
            f"| {proportion(t.boundary_passed, t.runs)} | {proportion(t.null_passed, t.runs)} "
            f"| {proportion(t.false_failure, t.runs) if per_task else 'n/a'} "
            f"| {mean_share(t.caught or []) if per_task else 'n/a'} | {mean_share(t.caught_plain or []) if per_task else 'n/a'} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

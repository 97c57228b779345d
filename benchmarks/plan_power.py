"""Does the plan keep its promise? Pairs simulated at the planned size reach 80% power.

For each scenario: a pilot pair is simulated (T tasks, r rollouts a side, every task's true
difference 0: both sides draw a task's 0/1 rewards with the same pass rate, the rates spread over
the tasks as `--rates` says); the gate's plan is computed from the pilot through the public core
(``plan(result, margin, alpha)``); then ``--reps`` pairs are simulated at the planned size (the
pilot's tasks with the planned rollouts, or the planned number of tasks at the pilot's rollouts;
new tasks take the pilot's tasks' pass rates in turn)
and run through ``compare_rollouts`` and ``summary_dict(result, margin=M)``. The share whose
aggregate passes is the achieved power, printed with its Monte Carlo standard error. The plan
holds when the achieved power reaches 80% within ``--tolerance`` (default 5 points: at least 75%)
on the scenarios whose pilot is large enough to give the true variance (they check the formula) and
on the worst case (a pilot where nothing varied). The power the formula gives at the planned
(whole) size is printed beside it. Two small-pilot rows show, unheld, what a pilot's noisy
variance estimate costs.

The flip plan is checked exactly: a task at the planned repeats going from r/r to 0/r among the
pilot's other tasks (all identical) must fail in margin mode, and at one repeat fewer must not.

    python benchmarks/plan_power.py                 # the four scenarios, 200 pairs each
    python benchmarks/plan_power.py --reps 400      # tighter figures
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_rollout_parity import compare_rollouts, summary_dict
from pytest_rollout_parity.core.statistics.plan import POWER, plan, tost_power


@dataclass(frozen=True)
class Scenario:
    name: str
    tasks: int
    repeats: int
    margin: float
    #: every task's pass rate, when the scenario fixes one (else drawn as `rates` does)
    rate: float | None = None
    #: held to the tolerance: a pilot large enough that its variance is the true one, so the row
    #: checks the plan's formula; a small pilot's row shows what its estimate's noise costs
    gated: bool = True


SCENARIOS = (
    Scenario("rollouts: 50 tasks, pilot of 100", 50, 100, 0.05),
    Scenario("rollouts: 20 tasks, pilot of 100", 20, 100, 0.1),
    Scenario("tasks: 1 task at 0.7, pilot of 200", 1, 200, 0.05, rate=0.7),
    Scenario("tasks: 1 task at 0.4, pilot of 200", 1, 200, 0.1, rate=0.4),
    # a pilot in which no reward varies: the plan takes the worst case, so it promises at least 80%
    Scenario("worst case: 5 tasks at 0.9, pilot of 1, nothing varies", 5, 1, 0.1, rate=0.9),
    # small pilots, as real runs have: the plan is only as good as their variance estimate
    Scenario("small pilot: 50 tasks, pilot of 5", 50, 5, 0.05, gated=False),
    Scenario("small pilot: 1 task at 0.7, pilot of 20", 1, 20, 0.1, rate=0.7, gated=False),
)


def rates(tasks: int, rng: random.Random) -> list[float]:
    """Each task's pass rate: a mix of easy, hard and middling tasks (as real agentic runs have)."""
    found = []
    for _ in range(tasks):
        kind = rng.random()
        if kind < 0.3:
            found.append(rng.uniform(0.85, 1.0))
        elif kind < 0.6:
            found.append(rng.uniform(0.0, 0.15))
        else:
            found.append(rng.uniform(0.2, 0.8))
    return found


def sides(
    task_rates: list[float], repeats: int, rng: random.Random
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both sides of a pair with a true difference of 0 on every task."""
    old, new = [], []
    for task, rate in enumerate(task_rates):
        for _ in range(repeats):
            old.append({"task_id": f"t{task}", "reward": float(rng.random() < rate)})
            new.append({"task_id": f"t{task}", "reward": float(rng.random() < rate)})
    return old, new


def achieved(task_rates: list[float], repeats: int, margin: float, reps: int, rng: random.Random) -> float:
    passed = 0
    for _ in range(reps):
        old, new = sides(task_rates, repeats, rng)
        data = summary_dict(compare_rollouts(old, new), margin=margin)
        passed += bool(data["aggregate"]["passed"])
    return passed / reps


def flip_check(tasks: int, repeats: int, alpha: float) -> tuple[bool, bool]:
    """(a 1.0 -> 0.0 flip fails at ``repeats``, it fails at ``repeats - 1``), among ``tasks`` compared tasks."""

    def fails(r: int) -> bool:
        # the other tasks pass half their rollouts on both sides: each can reach alpha and is counted
        half = [1.0] * (r // 2) + [0.0] * (r - r // 2)
        old = [{"task_id": "t0", "reward": 1.0} for _ in range(r)]
        new = [{"task_id": "t0", "reward": 0.0} for _ in range(r)]
        for t in range(1, tasks):
            old += [{"task_id": f"t{t}", "reward": reward} for reward in half]
            new += [{"task_id": f"t{t}", "reward": reward} for reward in half]
        data = summary_dict(compare_rollouts(old, new), margin=0.5, alpha=alpha)
        return data["tasks"][0]["outcome"] == "failed"

    return fails(repeats), fails(repeats - 1) if repeats > 1 else False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=200, help="pairs simulated at the planned size (default 200)")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--tolerance", type=float, default=0.05, help="how far from 80%% the power may be (0.05)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(
        f"python {sys.version.split()[0]}; {args.reps} pairs a scenario; seed {args.seed}; "
        f"tolerance ±{args.tolerance:.0%}"
    )
    print("| scenario | margin | plan | planned size | promised power | achieved power | within tolerance |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for scenario in SCENARIOS:
        start = time.perf_counter()
        task_rates = rates(scenario.tasks, rng) if scenario.rate is None else [scenario.rate] * scenario.tasks
        pilot_old, pilot_new = sides(task_rates, scenario.repeats, rng)
        if scenario.name.startswith("worst case"):  # the pilot happened to pass everything
            pilot_old = pilot_new = [dict(row, reward=1.0) for row in pilot_old]
        planned = plan(compare_rollouts(pilot_old, pilot_new), scenario.margin, 0.05)
        if planned.rollouts_needed is not None:
            what = f"{planned.rollouts_needed} rollouts a task a side"
            size = f"{scenario.tasks} x {planned.rollouts_needed}"
            power = achieved(task_rates, planned.rollouts_needed, scenario.margin, args.reps, rng)
            tasks, per_task = scenario.tasks, planned.rollouts_needed
        elif planned.tasks_needed is not None:
            what = f"{planned.tasks_needed} tasks at {planned.repeats} rollouts"
            size = f"{planned.tasks_needed} x {planned.repeats}"
            # the planned tasks are new tasks: drawn from the pilot's tasks' rates (the plan's variance is theirs)
            more = [task_rates[i % len(task_rates)] for i in range(planned.tasks_needed)]
            power = achieved(more, planned.repeats, scenario.margin, args.reps, rng)
            tasks, per_task = planned.tasks_needed, planned.repeats
        else:
            print(f"| {scenario.name} | ±{scenario.margin:g} | none | - | - | - | no |")
            ok = False
            continue
        error = math.sqrt(power * (1 - power) / args.reps)
        assert planned.rollout_variance is not None
        # the power the formula gives at the planned (whole) size: at least 80%, more where one task or
        # rollout fewer falls short by a wide step
        promised = tost_power(tasks, planned.rollout_variance / per_task, scenario.margin)
        # the plan promises at least 80%: it holds when the achieved power reaches it within the tolerance
        within = power >= POWER - args.tolerance
        ok = ok and (within or not scenario.gated)
        print(
            f"| {scenario.name} | ±{scenario.margin:g} | {what} | {size} | {promised:.1%} | {power:.1%} ± {error:.1%} | "
            f"{('yes' if within else 'NO') if scenario.gated else 'not held (pilot noise)'} |",
            flush=True,
        )
        print(
            f"  ({time.perf_counter() - start:.0f} s; one rollout's difference: variance "
            f"{planned.rollout_variance:.4f}, {planned.variance_source})",
            file=sys.stderr,
        )
    for tasks in (1, 10, 100):
        repeats = plan(
            compare_rollouts(
                [{"task_id": f"t{t}", "reward": 1.0} for t in range(tasks)],
                [{"task_id": f"t{t}", "reward": 1.0} for t in range(tasks)],
            ),
            None,
            0.05,
        ).flip_repeats
        at, below = flip_check(tasks, repeats, 0.05)
        ok = ok and at and not below
        print(
            f"flip plan over {tasks} task(s): {repeats} rollouts a side; a 1.0 -> 0.0 flip fails at {repeats}: "
            f"{at}; at {repeats - 1}: {below}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Write pairs of runs where flips are noise, or not, to try margin mode on (deterministic, stdlib only).

    python examples/make_noise_pairs.py OUT_DIR [--tasks 300] [--repeats 5] [--seed 0]

Each pair is two runs of one agent on the same tasks, ``--repeats`` rollouts a task a side: the old
side through the legacy TB 2.1 resources server (``task_name: "terminal-bench/<task>"``), the new
side through the Harbor path (``_ng_task_id``, rows in completion order). Every task has a true pass
rate: 40% of the tasks always pass, 40% always fail, and 20% are flaky (a rate between 0.2 and 0.8),
so about 15% of the tasks flip between two runs by chance alone. Writes, under ``OUT_DIR``:

    noise/{old,new}.jsonl      the same server on both sides: every flip is noise
    regressed/{old,new}.jsonl  as noise, plus a tenth of the tasks going from always to never passing
    improved/{old,new}.jsonl   as noise, plus a tenth of the tasks going from never to always passing

The rows of a task are drawn from one seeded stream per (task, side, rollout), so the three pairs
share every draw and differ only in the tasks the scenario changes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

TASKSET = "terminal-bench-2-1"
SCENARIOS = ("noise", "regressed", "improved")


def _uniform(seed: int, *parts: object) -> float:
    """A draw in [0, 1) that depends only on the seed and the parts (not on draw order)."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pass_rates(tasks: int, seed: int) -> list[float]:
    """Each task's true pass rate: always (1.0), never (0.0), or flaky (between 0.2 and 0.8)."""
    rates = []
    for task in range(tasks):
        kind = _uniform(seed, "kind", task)
        if kind < 0.4:
            rates.append(1.0)
        elif kind < 0.8:
            rates.append(0.0)
        else:
            rates.append(0.2 + 0.6 * _uniform(seed, "rate", task))
    return rates


def changed_tasks(rates: Sequence[float], scenario: str, seed: int) -> dict[int, float]:
    """The tasks the new server changes, with their new pass rate (a tenth of all tasks)."""
    if scenario == "noise":
        return {}
    source, target = (1.0, 0.0) if scenario == "regressed" else (0.0, 1.0)
    candidates = [task for task, rate in enumerate(rates) if rate == source]
    chosen = random.Random(f"{seed}-{scenario}").sample(candidates, len(rates) // 10)
    return {task: target for task in chosen}


def _name(task: int) -> str:
    return f"tb-task-{task:03d}"


def legacy_row(name: str, reward: Any, *, response_id: str, test_output: str, **extra: Any) -> dict[str, Any]:
    """A row of the legacy TB 2.1 resources server: ``task_name`` and the embedded ``test_output``."""
    row: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": f"Solve {name}."}]},
        "response": {"id": response_id, "object": "response", "status": "completed", "metadata": {}, "output": []},
        "agent_ref": {"type": "responses_api_agents", "name": "remote_agent"},
        "task_name": f"terminal-bench/{name}",
        "reward": reward,
        "evaluation_completed": True,
        "test_output": test_output,
    }
    row.update(extra)
    return row


def harbor_row(
    name: str, reward: Any, *, response_id: str, index: int, rollout: int, taskset: str = TASKSET, **extra: Any
) -> dict[str, Any]:
    """A row of the Harbor path: ``_ng_task_id``, the task and rollout indices, mask_sample/failure_kind."""
    row: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": f"Solve {name}."}]},
        "response": {
            "id": response_id,
            "object": "response",
            "status": "completed",
            "metadata": {"terminus2_completed": "true"},
            "output": [],
        },
        "agent_ref": {"type": "responses_api_agents", "name": "terminus_2_sandboxed_agent"},
        "_ng_task_index": index,
        "_ng_rollout_index": rollout,
        "_ng_task_id": {"taskset": taskset, "task_id": name},
        "_ng_environment_server": f"harbor_{taskset}_environment",
        "reward": reward,
        "mask_sample": False,
        "failure_kind": None,
        "failure_reason": None,
        "verifier_return_code": 0,
    }
    row.update(extra)
    return row


def old_row(task: int, rollout: int, reward: float) -> dict[str, Any]:
    """One rollout of a task through the legacy server."""
    name = _name(task)
    verdict = "PASSED" if reward else "FAILED"
    return legacy_row(
        name,
        reward,
        response_id=f"resp_old_{task}_{rollout}",
        test_output=f"== {name} rollout {rollout} ==\n{verdict} tests/test_outputs.py::test_solution\n",
    )


def new_row(task: int, rollout: int, reward: float) -> dict[str, Any]:
    """One rollout of a task through the Harbor path."""
    return harbor_row(
        _name(task),
        reward,
        response_id=f"resp_new_{task}_{rollout}",
        index=task,
        rollout=rollout,
        verifier_return_code=0 if reward else 1,
    )


def write_pair(out: Path, scenario: str, tasks: int = 300, repeats: int = 5, seed: int = 0) -> tuple[Path, Path]:
    """Write ``out/<scenario>/old.jsonl`` and ``new.jsonl``; returns both paths."""
    rates = pass_rates(tasks, seed)
    changed = changed_tasks(rates, scenario, seed)
    old_rows, new_rows = [], []
    for task, rate in enumerate(rates):
        new_rate = changed.get(task, rate)
        for rollout in range(repeats):
            old_rows.append(old_row(task, rollout, float(_uniform(seed, "old", task, rollout) < rate)))
            new_rows.append(new_row(task, rollout, float(_uniform(seed, "new", task, rollout) < new_rate)))
    random.Random(f"{seed}-order").shuffle(new_rows)  # the Harbor path writes rows as they complete
    folder = out / scenario
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "old.jsonl", folder / "new.jsonl"
    for path, rows in zip(paths, (old_rows, new_rows)):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return paths


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for scenario in SCENARIOS:
        old, new = write_pair(args.out, scenario, args.tasks, args.repeats, args.seed)
        print(f"{scenario}: pytest --parity-old={old} --parity-new={new} [--parity-margin=0.05]")


if __name__ == "__main__":
    main()

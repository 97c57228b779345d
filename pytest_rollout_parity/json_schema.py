"""The JSON summary (`--parity-json`, and the merge command's `--json`) as a pydantic model.

The core writes the file from plain dicts (:mod:`.core.reports.json_file`) and never imports this
module, so a gate run pays nothing for it. It is the file's published layout: docs/json.md shows
:meth:`ParitySummaryFile.model_json_schema` as :func:`schema_text` lays it out (`python -m
pytest_rollout_parity.json_schema` prints it), and the test suite validates every summary its runs
write against it. Every model forbids keys it does not name, so a new key is added here first.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

Category = Literal["identical", "flipped", "flipped_agent_error", "masked", "missing"]
TaskOutcome = Literal["passed", "failed", "within_noise", "accepted", "agent_error", "masked", "missing", "not_run"]
Side = Literal["old", "new"]
#: a low and a high end
Pair = Annotated[list[float], Field(min_length=2, max_length=2)]
#: a known flip: its task and the reason it is accepted
KnownFlip = Annotated[list[str], Field(min_length=2, max_length=2)]


class _Closed(BaseModel):
    """A JSON object with exactly the keys its model names."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class Decider(_Closed):
    code: str
    text: str


class TaskOutcomes(_Closed):
    passed: int
    failed: int
    within_noise: int
    accepted: int
    agent_error: int
    masked: int
    missing: int
    not_run: int


class AcceptedFlips(_Closed):
    source: Literal["known_flips", "hook"]
    count: int
    path: Optional[str]
    sha256: Optional[str]


class Counts(_Closed):
    tasks: int
    identical: int
    flipped: int
    flipped_old_win: int
    flipped_new_win: int
    flipped_agent_error: int
    masked: int
    masked_old: int
    masked_new: int
    missing: int
    missing_old_only: int
    missing_new_only: int


class Join(_Closed):
    old_key: str
    new_key: str
    old_key_reason: str
    new_key_reason: str
    old_prefix_stripped: Optional[str]
    new_prefix_stripped: Optional[str]
    keyed_by_taskset: bool


class Rows(_Closed):
    old: int
    new: int
    old_masked: int
    new_masked: int


class SignTest(_Closed):
    better: int
    worse: int
    p: float


class PassFailTable(_Closed):
    both_pass: int
    old_only: int
    new_only: int
    both_fail: int


class LeftOut(_Closed):
    tasks: int
    old: int
    new: int
    old_share: float
    new_share: float
    range_tasks: int
    reward_range: Pair
    delta_range: Optional[Pair]
    old_rows: int
    new_rows: int


class Paired(_Closed):
    n: int
    old_mean: Optional[float]
    new_mean: Optional[float]
    delta: Optional[float]
    ci95: Optional[Pair]
    df: Optional[float]
    clustered_by: Optional[Literal["taskset"]]
    sign_test: Optional[SignTest]
    table: Optional[PassFailTable]
    absent: Optional[str]
    left_out: LeftOut


class TaskSide(_Closed):
    reward: Optional[float]
    rows: int
    reward_rows: int
    masked: Optional[str]
    agent_error: Optional[str]
    failure_kind: Optional[str]
    masked_rows: int


class HookVerdict(_Closed):
    """The outcome a `pytest_parity_verdict` hook or the known-flips list gave a task's item."""

    outcome: Literal["passed", "failed", "xfail"]
    reason: str
    source: Literal["hook", "known_flips"]


class Task(_Closed):
    task: str
    category: Category
    winner: Optional[Side]
    old: Optional[TaskSide]
    new: Optional[TaskSide]
    p_value: Optional[float]
    adjusted_p: Optional[float]
    outcome: TaskOutcome
    hook_verdict: Optional[HookVerdict]
    #: null outside a pytest run
    ran_here: Optional[bool]
    #: the item's pytest outcome when it ran here (passed, failed, xfailed, skipped)
    item_outcome: Optional[str]
    #: a flip's report text whatever --tb shows (its message with the evidence, or its expected-failure reason)
    evidence: Optional[str]


class Rerun(_Closed):
    task: str
    why: str


class Plan(_Closed):
    margin: Optional[float]
    power: float
    tasks: int
    repeats: int
    rollout_variance: Optional[float]
    variance_source: str
    rollouts_needed: Optional[int]
    tasks_needed: Optional[int]
    flip_repeats: int
    alpha: float
    rerun: list[Rerun]


class Equivalence(_Closed):
    """Margin mode's equivalence decision (the key `aggregate`)."""

    margin: float
    lower_bound: Optional[float]
    upper_bound: Optional[float]
    passed: bool


class Limit(_Closed):
    text: str
    count: Optional[int]
    percent: Optional[float]


class ErrorRates(_Closed):
    old_errors: int
    old_rows: int
    new_errors: int
    new_rows: int
    p_value: float
    level: float


class Coverage(_Closed):
    old_tasks: int
    missing: int
    masked: int
    max_missing: Limit
    max_masked: Limit
    passed: bool
    message: str
    uncompared: int
    max_uncompared: Limit
    agent_errors: int
    error_rates: Optional[ErrorRates]
    nothing_compared: bool


class FlipTests(_Closed):
    alpha: float
    tests: int
    counted: int


class Files(_Closed):
    old: str
    new: str
    old_sidecar: Optional[str]
    new_sidecar: Optional[str]
    old_shards: int
    new_shards: int
    old_sidecars: int
    new_sidecars: int


class MetricsCheck(_Closed):
    """One side's `<stem>_aggregate_metrics.json` against the rows."""

    file: str
    agent: Optional[str]
    recorded_mean: Optional[float]
    computed_mean: Optional[float]
    rows: int
    note: Optional[str]


class PerSideMetrics(_Closed):
    old: Optional[MetricsCheck]
    new: Optional[MetricsCheck]


class Inventory(_Closed):
    """One side's `<stem>_coverage.json` counts."""

    files: list[str]
    expected: int
    successful: int
    measured: int
    masked: int
    unscored: int
    failed: int
    intentionally_omitted: int
    unknown: int
    gate_measured: int
    unfinished: bool


class PerSideInventory(_Closed):
    old: Optional[Inventory]
    new: Optional[Inventory]


class SplitGroup(_Closed):
    engine: str
    index: int
    count: int


class Part(_Closed):
    partial: bool
    items: int
    items_ran: int
    tasks: int
    tasks_ran: int
    gate_items_ran: list[str]
    group: Optional[SplitGroup]


class GateItem(_Closed):
    item: str
    ran_here: bool
    item_outcome: Optional[str]


class Inputs(_Closed):
    old: Optional[str]
    new: Optional[str]


class Options(_Closed):
    """The settings that decide outcomes: the parts of a split run merge only when theirs are equal."""

    margin: Optional[float]
    alpha: float
    strict: bool
    max_missing: str
    max_masked: str
    max_uncompared: str
    allow_copy: bool
    old_key: Optional[str]
    new_key: Optional[str]
    old_agent: Optional[str]
    new_agent: Optional[str]
    #: the known flips as [task, reason] pairs
    known_flips: Optional[list[KnownFlip]]


class Run(_Closed):
    """What the pytest run did: present in a pytest run only."""

    selected: Optional[int]
    verdicts_changed_by_hook: int
    outcomes: dict[str, int]
    known_flips: Optional[str]
    gate_items: list[str]
    part: Optional[Part]
    gate: list[GateItem]
    inputs: Inputs
    options: Options


class MergedPart(_Closed):
    file: str
    group: Optional[SplitGroup]
    items_ran: int
    tasks_ran: int
    gate_items_ran: int
    failed: int


class Merge(_Closed):
    """The merge command's own key: the merged verdict, its exit status, the parts and the gaps."""

    verdict: Literal["pass", "fail", "inconclusive"]
    exit_status: int
    parts: list[MergedPart]
    gaps: list[str]


class ParitySummaryFile(_Closed):
    """The JSON summary a run writes (`--parity-json`); the keys that default to absent appear only
    in margin mode (`aggregate`, `flip_tests`, `failing_flips`), in a pytest run (`coverage`,
    `files`, `aggregate_metrics`, `run`), for sides with a coverage file (`inventory`) or in a merged
    run (`merge`)."""

    verdict: Literal["pass", "fail", "inconclusive"]
    decided_by: list[Decider]
    task_outcomes: TaskOutcomes
    accepted_flips: list[AcceptedFlips]
    counts: Counts
    join: Join
    rows: Rows
    compared: int
    nothing_compared: Optional[str]
    notes: list[str]
    copies: Optional[str]
    paired: Paired
    tasks: list[Task]
    plan: Optional[Plan]
    aggregate: Optional[Equivalence] = None
    coverage: Optional[Coverage] = None
    flip_tests: Optional[FlipTests] = None
    failing_flips: Optional[int] = None
    files: Optional[Files] = None
    aggregate_metrics: Optional[PerSideMetrics] = None
    inventory: Optional[PerSideInventory] = None
    run: Optional[Run] = None
    merge: Optional[Merge] = None


#: the widest line :func:`schema_text` writes where an object or a list can be broken
SCHEMA_WIDTH = 110


def schema_text() -> str:
    """The JSON Schema of :class:`ParitySummaryFile`, each object on one line when it fits."""
    return _laid_out(ParitySummaryFile.model_json_schema(), 0, 0)


def _laid_out(value: Any, indent: int, used: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if indent + used + len(flat) <= SCHEMA_WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        body = [f"{pad}{json.dumps(k)}: {_laid_out(v, indent + 2, len(json.dumps(k)) + 3)}" for k, v in value.items()]
    else:
        body = [f"{pad}{_laid_out(v, indent + 2, 1)}" for v in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + "\n" + ",\n".join(body) + "\n" + " " * indent + closing


if __name__ == "__main__":
    print(schema_text())

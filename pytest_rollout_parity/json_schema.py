"""The JSON summary (`--parity-json`, and the merge command's `--json`) as a pydantic model.

The core writes the file from plain dicts (:mod:`.core.reports.json_file`) and never imports this
module, so a gate run pays nothing for it. It is the file's published layout: docs/json.md shows
:meth:`ParitySummaryFile.model_json_schema` as :func:`schema_text` lays it out (`python -m
pytest_rollout_parity.json_schema` prints it), the merge command holds every part to it
(:func:`check`), and the test suite validates every summary its runs write against it. A section
the file holds as the core's dataclass holds it (counts, the join, the coverage, a task's side...)
is that dataclass itself, closed by its ``__pydantic_config__`` (:data:`.core.model.CLOSED`): one
definition. Every model forbids keys it does not name, so a new key is added here first.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from .core.judging.completeness import Coverage, ErrorRates, Limit
from .core.judging.metrics_file import AggregateCheck
from .core.model import Join, RowCounts
from .core.reports.summary import AcceptedFlips, Counts, Decider, Files, FlipTests, SideSummary, SplitGroup
from .core.statistics.paired_tests import McNemarTable, SignTest
from .core.statistics.plan import Lever, Plan, Rerun

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


class Conditions(_Closed):
    """What each side's rows record they ran under (model, sampling, rollouts a task), as its side
    line shows it; `""` when its rows record none."""

    old: str
    new: str


class TaskOutcomes(_Closed):
    passed: int
    failed: int
    within_noise: int
    accepted: int
    agent_error: int
    masked: int
    missing: int
    not_run: int


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
    table: Optional[McNemarTable]
    absent: Optional[str]
    left_out: LeftOut


class HookVerdict(_Closed):
    """The outcome a `pytest_parity_verdict` hook or the known-flips list gave a task's item."""

    outcome: Literal["passed", "failed", "xfail"]
    reason: str
    source: Literal["hook", "known_flips"]


class Task(_Closed):
    task: str
    category: Category
    winner: Optional[Side]
    old: Optional[SideSummary]
    new: Optional[SideSummary]
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
    #: rollouts whose same trajectory the two verifiers scored differently (0: the rows do not pair per rollout)
    verifier_disagreements: int


class Equivalence(_Closed):
    """Margin mode's equivalence decision (the key `aggregate`)."""

    margin: float
    lower_bound: Optional[float]
    upper_bound: Optional[float]
    passed: bool


class PerSideMetrics(_Closed):
    old: Optional[AggregateCheck]
    new: Optional[AggregateCheck]


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


class Part(_Closed):
    partial: bool
    items: int
    items_ran: int
    tasks: int
    tasks_ran: int
    gate_items_ran: list[str]
    group: Optional[SplitGroup]
    checks: int = 0
    checks_ran: int = 0


class Check(_Closed):
    """One of the team's own checks (a test that requests `rollout_pair`) and its outcome here."""

    nodeid: str
    task: str
    #: `passed`, `failed`, `skipped`, `xfailed`, `xpassed`; null: collected, not run here
    outcome: Optional[str]


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
    checks: list[Check] = []


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
    rows: RowCounts
    conditions: Conditions
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


# pydantic 2.5 resolves a nested dataclass's annotations here rather than in its own module
ParitySummaryFile.model_rebuild(
    _types_namespace={"Limit": Limit, "ErrorRates": ErrorRates, "Lever": Lever, "Rerun": Rerun}
)


def check(data: Any) -> ParitySummaryFile:
    """``data`` (a parsed summary) held to the layout; raises pydantic's ``ValidationError``.

    Validated as JSON text, where an object may stand for the core's dataclasses and strict types
    still hold; a lone surrogate (the gate writes one as its escape, which pydantic's JSON parser
    refuses) is checked as any other character of its string.
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")
    return ParitySummaryFile.model_validate_json(text)


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

"""The summary as typed data, built once, which every report and the exit status read: none disagrees.

The dataclasses are also the JSON file's layout, field for field in order (``metadata`` ``alias``
where the names differ): pydantic writes, reads back and publishes it, closed by :data:`..model.CLOSED`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Generic, Literal, Optional, TypeVar, Union

from ..identity.item_names import listed
from ..judging.companions import AggregateCheck, Inventory, InventoryRead
from ..judging.completeness import Coverage
from ..judging.verdicts import Verdict
from ..judging.verifier_output import NO_OUTPUT
from ..model import (
    CLOSED,
    TASK_OUTCOMES,
    Category,
    CompareResult,
    Counts,
    Join,
    RowCounts,
    RunVerdict,
    Side,
    TaskComparison,
    TaskOutcome,
    TaskSide,
    per_side,
)
from ..statistics.margin import Equivalence, FlipJudgement, equivalence, judge_flips
from ..statistics.paired import LeftOut, PairedSection, paired_section
from ..statistics.paired_tests import DiscreteFdr, McNemarTable, SignTest
from ..statistics.plan import Plan, plan

DEFAULT_ALPHA = 0.05
"""The default false discovery rate of margin mode's per-task tests."""
#: the categories that flip: a counted flip, and a rerun candidate (an agent error on a side)
FLIPS: tuple[Category, ...] = ("flipped", "flipped_agent_error")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BySide(Generic[T]):
    """A value for each side."""

    old: T
    new: T

    def side(self, name: Side) -> T:
        return per_side(name, self.old, self.new)


@dataclass(frozen=True, slots=True)
class AcceptedFlips:
    """Verdicts a known-flips list or hooks accepted: the reviewer sees that not the data decided them."""

    source: Literal["known_flips", "hook"]
    count: int
    #: the list as messages name it, and the SHA-256 (hex) of its bytes as read; None for hooks
    path: Optional[str] = None
    sha256: Optional[str] = None


@dataclass(frozen=True, slots=True)
class SplitGroup:
    """The group of a test splitter this run is: ``engine``'s group ``index`` (from 1) of ``count``."""

    engine: str
    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.engine} group {self.index} of {self.count}"


@dataclass(frozen=True, slots=True)
class CheckRun:
    """A test requesting `rollout_pair`: its task and outcome here (None: not run); only `failed` decides."""

    nodeid: str
    task: str
    outcome: Optional[str]


@dataclass(frozen=True, slots=True)
class SideFile:
    """A side's file (and sidecar) as the user named it."""

    file: str
    sidecar: Optional[str] = None
    #: how many shard files the side was read from (1: one file), and how many had a sidecar
    shards: int = 1
    sidecars: int = 0


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What the pytest run adds to the classification; the summary counts ``outcome``'s ``part``."""

    files: BySide[SideFile]
    outcome: RunOutcome = field(default_factory=lambda: RunOutcome(None, 0, {}))
    same_file: bool = False
    #: each side's `<stem>_aggregate_metrics.json` checked against its rows, when the file exists
    aggregate: Mapping[str, AggregateCheck] = field(default_factory=dict)
    #: the verdicts hooks changed, by task label (from the items' reports, so xdist workers' too)
    hook_verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    #: the SHA-256 (hex) of the known-flips list's bytes, as the run read them
    known_flips_sha256: Optional[str] = None
    #: what the run itself notes (a stale known-flips list)
    notes: tuple[str, ...] = ()
    #: each side's `<stem>_coverage.json` inventory, when the side has one
    inventory: Mapping[str, InventoryRead] = field(default_factory=dict)
    #: each flip's report text (failure message or expected-failure reason), by task label, from the items' reports
    evidence: Mapping[str, str] = field(default_factory=dict)
    #: how many flips' losing rows carry no verifier output at all (noted once for the run)
    no_output: int = 0
    #: the listed flips' prompt excerpts, by task label, when a side is keyed on index or prompt
    excerpts: Mapping[str, str] = field(default_factory=dict)
    #: the labels of the task items that ran; None: every task's item ran (or no run is known)
    ran_tasks: Optional[frozenset[str]] = None
    #: each task item that ran here and its last outcome, by task label
    task_outcomes: Mapping[str, str] = field(default_factory=dict)
    group: Optional[SplitGroup] = None
    #: the session's failed items (any test's), and whether the traceback style in use rescans for each
    session_failures: int = 0
    failure_section_rescans: bool = False


@dataclass(frozen=True, slots=True)
class Part:
    """What of the whole file this run ran. A ``partial`` run (a selection, a splitter group, a stop
    after failures) holds its part's outcomes; the whole file's verdict is the merge's."""

    partial: bool
    items: int
    items_ran: int
    tasks: int
    tasks_ran: int
    gate_items_ran: tuple[str, ...]
    group: Optional[SplitGroup]
    #: the team's own checks collected here, and how many of them ran
    checks: int = 0
    checks_ran: int = 0

    @classmethod
    def of(
        cls,
        tasks: Sequence[TaskSummary],
        gate: Sequence[GateItem],
        checks: Sequence[CheckRun],
        group: Optional[SplitGroup],
    ) -> Part:
        tasks_ran = sum(1 for task in tasks if task.ran_here)
        gate_ran = tuple(item.item for item in gate if item.ran_here)
        checks_ran = sum(1 for check in checks if check.outcome is not None)
        partial = tasks_ran < len(tasks) or len(gate_ran) < len(gate) or checks_ran < len(checks)
        items, items_ran = len(tasks) + len(gate), tasks_ran + len(gate_ran)
        return cls(partial, items, items_ran, len(tasks), tasks_ran, gate_ran, group, len(checks), checks_ran)


#: past this many failures, pytest's failure section (rescanning every stored report for each) outcosts the run
MANY_FAILURES = 1000


@dataclass(frozen=True, slots=True)
class SideSummary:
    """One side of one task: its reward and why it may not count."""

    reward: Optional[float]
    rows: int
    reward_rows: int
    masked: Optional[str]
    agent_error: Optional[str]
    failure_kind: Optional[str]
    #: masked rows left out of the side's mean (all of them, when the side is masked)
    masked_rows: int = 0
    #: the scored rows that passed (reward 1) when every scored reward is 0 or 1, else None
    passed: Optional[int] = None
    #: the scored rewards' lowest and highest (None: none scored)
    reward_range: Optional[tuple[float, float]] = None


@dataclass(frozen=True, slots=True)
class TaskSummary:
    """One joined task as every report shows it; a side absent from its file is None."""

    task: str
    category: Category
    winner: Optional[Side]
    old: Optional[SideSummary]
    new: Optional[SideSummary]
    #: the p-value of the old rows against the new (a flip with 2+ rows a side, else None)
    p_value: Optional[float] = None
    #: margin mode: the BH-adjusted p-value of a flip counted in the per-task tests (None: not counted)
    adjusted_p: Optional[float] = None
    #: what became of the task, in the one vocabulary of every report (docs/semantics.md, "Outcomes")
    outcome: TaskOutcome = "passed"
    #: the verdict a hook or the known-flips list gave instead of the default (None: none did)
    hook_verdict: Optional[Verdict] = None
    #: in a pytest run, whether the task's item ran here (None: no pytest run)
    ran_here: Optional[bool] = None
    #: in a pytest run, the task item's outcome when it ran here (None: it did not, or no run)
    item_outcome: Optional[str] = None
    #: a flip's report text whatever --tb shows (its failure message with the evidence, or its
    #: expected-failure reason); None: not a flip, or its item did not report here
    evidence: Optional[str] = None
    #: rollouts whose same trajectory the two verifiers scored differently (0: the rows do not pair per
    #: rollout, or the task is no flip)
    verifier_disagreements: int = 0
    #: a listed flip's prompt start when keyed on its index or prompt: the reports show it, the JSON does not
    excerpt: Optional[str] = field(default=None, metadata={"exclude": True})

    def side(self, name: Side) -> Optional[SideSummary]:
        return per_side(name, self.old, self.new)


@dataclass(frozen=True, slots=True)
class Paired:
    """The paired figures over the compared tasks (d = new - old of the task means).

    The figures are None when ``absent`` says why; ``sign_test`` is None when no task was compared,
    ``table`` unless every compared task has one binary row a side. ``df`` is the t degrees of
    freedom behind the interval; ``left_out`` what the figures miss (masked and missing tasks) and
    how far it could move delta.
    """

    n: int
    old_mean: Optional[float]
    new_mean: Optional[float]
    delta: Optional[float]
    ci95: Optional[tuple[float, float]]
    df: Optional[float]
    clustered_by: Optional[str]
    sign_test: Optional[SignTest]
    table: Optional[McNemarTable]
    absent: Optional[str]
    left_out: LeftOut


@dataclass(frozen=True, slots=True)
class FlipTests:
    """Margin mode's per-task tests: of ``tests`` tested, ``counted`` can reach ``alpha`` and enter BH."""

    alpha: float
    tests: int
    counted: int


@dataclass(frozen=True, slots=True)
class GateItem:
    """A gate-level item the run collects, and its outcome here (None: it did not run here)."""

    item: str
    ran_here: bool
    item_outcome: Optional[str]


@dataclass(frozen=True, slots=True)
class Options:
    """The settings that decide outcomes: parts merge only when theirs are equal, and decide under them."""

    margin: Optional[float]
    alpha: float
    strict: bool
    max_missing: str
    max_masked: str
    max_uncompared: str
    allow_copy: bool
    #: each side's join field and agent as given (None: not given)
    key: BySide[Optional[str]]
    agent: BySide[Optional[str]]
    #: the known flips as (task, reason) pairs
    known_flips: Optional[tuple[tuple[str, str], ...]]


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What the pytest run did; ``selected`` and ``outcomes`` count the task and ``gate`` items that ran."""

    selected: Optional[int]
    verdicts_changed_by_hook: int
    outcomes: Mapping[str, int]
    #: the known-flips list, whose accepted flips count among the changed verdicts
    known_flips: Optional[str] = None
    #: what of the whole file ran here (None: --collect-only)
    part: Optional[Part] = None
    #: each gate-level item the run collects (`parity-aggregate` in margin mode), with its outcome here
    gate: tuple[GateItem, ...] = ()
    #: each side's content digest, and the settings that decide outcomes (None: not recorded)
    inputs: Mapping[str, Optional[str]] = field(default_factory=dict)
    options: Optional[Options] = None
    #: the team's own checks (tests requesting `rollout_pair`) this run collected, in collection order
    checks: tuple[CheckRun, ...] = ()
    collect_only: bool = field(default=False, metadata={"exclude": True})


@dataclass(frozen=True, slots=True)
class Decider:
    """One thing that decided the run's verdict: a stable ``code`` and the words reports show."""

    code: str
    text: str


#: The codes of what decides a verdict (docs/semantics.md, "Verdicts"), by the verdict they give.
FAIL_CODES = ("failed_tasks", "checks_failed", "aggregate_outside")


@dataclass(frozen=True, slots=True)
class PartRun:
    """One part of a merge: its file as given, what it ran (counted anew from its items) and how many failed."""

    file: str
    ran: Part
    failed: int


@dataclass(frozen=True, slots=True)
class MergeRecord:
    """What only a merge of parts knows (its verdict is the summary's)."""

    exit_status: int
    parts: tuple[PartRun, ...]
    gaps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Summary:
    """Everything the gate reports; ``files`` and ``run`` are None outside a pytest run."""

    __pydantic_config__ = CLOSED

    #: the run's verdict (`pass`, `fail`, `inconclusive`) and what decided it (:func:`decided`)
    verdict: RunVerdict
    decided_by: tuple[Decider, ...]
    #: tasks per outcome, every outcome of the vocabulary present (0 when none)
    task_outcomes: Mapping[TaskOutcome, int]
    #: the verdicts a known-flips list or hooks accepted, by who accepted them (none: the data decided)
    accepted: tuple[AcceptedFlips, ...] = field(metadata={"alias": "accepted_flips"})
    counts: Counts
    join: Join
    rows: RowCounts
    #: the conditions each side ran under, as its side line shows them; the sides' models when they differ
    conditions: BySide[str]
    models: BySide[str]
    compared: int
    #: why nothing was compared (no shared task, or every shared one masked), or None
    nothing_compared: Optional[str]
    notes: tuple[str, ...]
    #: the note that both sides hold the same rows (docs/semantics.md, "Copies"), or None
    copies: Optional[str]
    paired: Paired
    tasks: tuple[TaskSummary, ...]
    #: what to run next: for an `inconclusive` verdict (or when asked for), else None
    plan: Optional[Plan]
    #: margin mode's equivalence decision; None without a margin
    equivalence: Optional[Equivalence] = field(default=None, metadata={"alias": "aggregate"})
    #: in a pytest run, the new side's coverage of the old side's tasks against the limits
    coverage: Optional[Coverage] = None
    #: margin mode's per-task tests, and how many flips were shown not to be noise (they fail)
    flip_tests: Optional[FlipTests] = None
    failing_flips: Optional[int] = None
    files: Optional[BySide[SideFile]] = None
    #: each side's recorded mean reward beside the rows' (None: the side has no such file)
    aggregate_metrics: Optional[BySide[Optional[AggregateCheck]]] = None
    #: the runs' own inventories (`<stem>_coverage.json`); None when neither side has one
    inventory: Optional[BySide[Optional[Inventory]]] = None
    run: Optional[RunOutcome] = None
    #: a merge of parts' own record
    merge: Optional[MergeRecord] = None

    @property
    def checks(self) -> tuple[CheckRun, ...]:
        """The team's own checks of a pytest run, in collection order."""
        return self.run.checks if self.run is not None else ()

    @property
    def failed_checks(self) -> list[str]:
        """The node ids of the team's checks that failed."""
        return [check.nodeid for check in self.checks if check.outcome == "failed"]

    @property
    def flips(self) -> list[TaskSummary]:
        """The flips and rerun candidates, in task order."""
        return [task for task in self.tasks if task.category in FLIPS]

    def labels(self, category: Category) -> list[str]:
        """The task labels of one category, in task order."""
        return [task.task for task in self.tasks if task.category == category]


def nothing_compared(result: CompareResult) -> Optional[str]:
    """Why no task has a counted reward on both sides, or None when at least one has."""
    if result.compared:
        return None
    shared = [t for t in result.tasks if t.old is not None and t.new is not None]
    if not shared and result.unjoined:
        return f"no task was compared: {result.unjoined}"
    if not shared:
        old_only = sum(1 for t in result.tasks if t.new is None)
        new_only = sum(1 for t in result.tasks if t.old is None)
        return (
            f"no task was compared: the files share no task ({old_only} only in old, {new_only} only in new); "
            "wrong file, another benchmark, or a key that differs between the sides?"
        )
    masked_old = sum(1 for t in shared if t.old is not None and t.old.masked)
    masked_new = sum(1 for t in shared if t.new is not None and t.new.masked)
    return (
        f"no task was compared: every one of the {len(shared)} shared task(s) is masked "
        f"({masked_old} on the old side, {masked_new} on the new side); was the infrastructure down?"
    )


def _side(side: Optional[TaskSide]) -> Optional[SideSummary]:
    if side is None:
        return None
    rewards = side.rewards
    binary = rewards and all(reward in (0.0, 1.0) for reward in rewards)
    return SideSummary(  # by position: built for every task on every run
        side.reward,
        len(side.facts),
        len(rewards),
        side.masked,
        side.agent_error,
        side.failure_kind,
        side.masked_rows,
        rewards.count(1.0) if binary else None,
        (min(rewards), max(rewards)) if rewards else None,
    )


def task_outcome(
    task: Union[TaskComparison, TaskSummary],
    judgement: Optional[FlipJudgement],
    hook_verdict: Optional[Verdict],
    ran: bool = True,
) -> TaskOutcome:
    """The task's outcome (docs/semantics.md, "Outcomes"): the one rule, by which the run and the
    merge (re-deriving each part's claim) both decide."""
    if not ran:
        return "not_run"
    if hook_verdict is not None:
        return "failed" if hook_verdict.outcome == "failed" else "accepted"
    category = task.category
    if category == "identical":
        return "passed"
    if category == "flipped":
        return "within_noise" if judgement is not None and not judgement.regression else "failed"
    if category == "flipped_agent_error":
        return "agent_error"
    return category


def task_summary(
    task: TaskComparison,
    p_value: Optional[float] = None,
    adjusted_p: Optional[float] = None,
    judgement: Optional[FlipJudgement] = None,
    run: Optional[RunInfo] = None,
) -> TaskSummary:
    """The task as the summary holds it (with no run and no figures: as its own item shows it)."""
    verdict = run.hook_verdicts.get(task.task) if run is not None else None
    ran = run is None or (not run.outcome.collect_only and (run.ran_tasks is None or task.task in run.ran_tasks))
    item_outcome = run.task_outcomes.get(task.task) if run is not None else None
    return TaskSummary(
        task=task.task,
        category=task.category,
        winner=task.winner,
        old=_side(task.old),
        new=_side(task.new),
        p_value=p_value,
        adjusted_p=adjusted_p if task.category == "flipped" else None,
        outcome=task_outcome(task, judgement, verdict, ran=ran),
        hook_verdict=verdict,
        ran_here=item_outcome is not None if run is not None else None,
        item_outcome=item_outcome,
        evidence=run.evidence.get(task.task) if run is not None else None,
        verifier_disagreements=task.disagreements,
        excerpt=run.excerpts.get(task.task) if run is not None else None,
    )


#: how many names a verdict line spells out before it counts the rest
NAMED = 3


def _outside(decision: Equivalence) -> bool:
    """The aggregate's interval lies wholly outside [-M, +M]: the data show a difference."""
    low, high = decision.lower_bound, decision.upper_bound
    return low is not None and high is not None and (low > decision.margin or high < -decision.margin)


def decided(summary: Summary, *, strict: bool, allow_copy: bool, known_flips_sha256: Optional[str]) -> Summary:
    """The summary with its verdict decided from every item that ran (docs/semantics.md, "Verdicts"):
    the one verdict function, by which the run and the merge of parts both decide."""
    tasks, checks, run, nothing = summary.tasks, summary.checks, summary.run, summary.nothing_compared
    aggregate, coverage = summary.equivalence, summary.coverage
    collected_only = run is not None and run.collect_only
    counts: dict[TaskOutcome, int] = dict.fromkeys(TASK_OUTCOMES, 0) | Counter(task.outcome for task in tasks)
    found: list[Decider] = []
    if counts["failed"]:
        found.append(Decider("failed_tasks", f"{counts['failed']} task(s) failed"))
    if failed_checks := summary.failed_checks:
        found.append(
            Decider("checks_failed", f"{len(failed_checks)} of your checks failed: {listed(failed_checks, NAMED, '')}")
        )
    if aggregate is not None and _outside(aggregate):
        found.append(
            Decider("aggregate_outside", f"the mean difference lies wholly outside the margin ±{aggregate.margin:g}")
        )
    if collected_only:
        found.append(Decider("collect_only", "collected only: no item ran"))
    if nothing is not None:
        found.append(Decider("nothing_compared", "no task was compared"))
    if coverage is not None and not coverage.passed:
        found.append(Decider("evidence", coverage.message.split("\n", 1)[0]))
    if summary.copies is not None and not allow_copy:
        found.append(Decider("copy", "both files hold the same rows: the new server may never have run"))
    if aggregate is not None and not aggregate.passed and not _outside(aggregate) and nothing is None:
        found.append(
            Decider("aggregate_undecided", f"the mean difference is not shown within the margin ±{aggregate.margin:g}")
        )
    uncompared = counts["agent_error"] + counts["masked"] + counts["missing"]
    if strict and uncompared:
        found.append(Decider("strict_uncompared", f"{uncompared} task(s) not compared fail under strict mode"))
    checks_not_run = sum(1 for check in checks if check.outcome is None)
    if counts["not_run"] and not collected_only:
        not_run = f"{counts['not_run']} of {len(tasks)} task(s) not run: the verdict needs every task"
        found.append(Decider("narrowed", not_run))
    elif checks_not_run and not collected_only:
        found.append(
            Decider("narrowed", f"{checks_not_run} of your {len(checks)} checks not run: the verdict needs every item")
        )
    if run is not None and not found and run.outcomes.get("failed", 0):
        found.append(Decider("item_failed", f"{run.outcomes['failed']} parity item(s) failed"))
    verdict: RunVerdict = "fail" if any(d.code in FAIL_CODES for d in found) else "inconclusive" if found else "pass"
    # who accepted which verdicts: the known-flips list (with its path and digest), then hooks
    accepted = [task.hook_verdict for task in tasks if task.outcome == "accepted" and task.hook_verdict is not None]
    known = sum(1 for given in accepted if given.source == "known_flips")
    by = [AcceptedFlips("known_flips", known, run.known_flips if run else None, known_flips_sha256)] if known else []
    by += [AcceptedFlips("hook", len(accepted) - known)] if len(accepted) > known else []
    return replace(
        summary,
        verdict=verdict,
        decided_by=tuple(found) or (Decider("passed", "every check passed"),),
        task_outcomes=counts,
        accepted=tuple(by),
    )


@dataclass(frozen=True)
class MarginDecisions:
    """Margin mode's decisions, made once for the items, the summary and every report (none without a
    margin); ``judgements`` by task index."""

    fdr: Optional[DiscreteFdr]
    judgements: tuple[Optional[FlipJudgement], ...]
    equivalence: Optional[Equivalence]


def margin_decisions(
    section: PairedSection,
    tasks: list[TaskComparison],
    margin: Optional[float],
    alpha: float = DEFAULT_ALPHA,
    *,
    copy: bool = False,
) -> MarginDecisions:
    """The decisions at ``margin``. A deliberate ``copy`` (both sides the same rows) is equivalent
    whatever the number of tasks: every rollout pairs with itself, Δ = 0 with no noise left to test."""
    if margin is None:
        return MarginDecisions(None, (None,) * len(tasks), None)
    fdr = section.fdr(alpha)
    judged = tuple(judge_flips(section, tasks, fdr))
    if not copy:
        return MarginDecisions(fdr, judged, equivalence(section.stats, margin, section.left_out))
    same = (
        f"equivalent within margin ±{margin:g}: both sides hold the same rows, so every rollout's reward "
        "agrees (Δ = 0 on each, no sampling noise to test)"
    )
    return MarginDecisions(fdr, judged, Equivalence(margin, 0.0, 0.0, True, same))


def build_summary(
    result: CompareResult,
    run: Optional[RunInfo] = None,
    *,
    paired: Optional[PairedSection] = None,
    margin: Optional[float] = None,
    coverage: Optional[Coverage] = None,
    alpha: float = DEFAULT_ALPHA,
    strict: bool = False,
    allow_copy: bool = False,
    with_plan: bool = False,
    decisions: Optional[MarginDecisions] = None,
) -> Summary:
    """The summary of a comparison and, in a pytest run, of what the run did. ``paired`` and
    ``decisions`` are passed when the caller has them (the items read the same); an `inconclusive`
    verdict (or ``with_plan``) adds the plan of what to run next."""
    section = paired if paired is not None else paired_section(result)
    if decisions is None:
        decisions = margin_decisions(section, result.tasks, margin, alpha, copy=result.copies is not None)
    fdr = decisions.fdr
    judged: list[Optional[FlipJudgement]] = list(decisions.judgements)
    adjusted = fdr.adjusted if fdr is not None else (None,) * len(result.tasks)
    tasks = tuple(
        task_summary(task, p, adjusted_p, judgement, run)
        for task, p, adjusted_p, judgement in zip(result.tasks, section.p_values, adjusted, judged)
    )
    notes = list(result.notes)
    inventory: Optional[BySide[Optional[Inventory]]] = None
    outcome = run.outcome if run is not None else None
    if run is not None:
        if outcome is not None and not outcome.collect_only and outcome.selected is not None:
            # what of the whole file ran here, tasks and gate-level items apart
            outcome = replace(outcome, part=Part.of(tasks, outcome.gate, outcome.checks, run.group))
        if run.same_file:
            notes.append("both sides are the same file")
        notes.extend(check.note for check in run.aggregate.values() if check.note)
        notes.extend(run.notes)
        if run.no_output:
            notes.append(
                f"{run.no_output} flip(s) have no verifier output: {NO_OUTPUT}; "
                "each flip shows its losing row's evidence and its rows' last assistant messages instead"
            )
        # the sides' inventories; their notes (unfinished, disagreeing, unusable) join the notes
        reads = [run.inventory.get(side) for side in ("old", "new")]
        for side, read in zip(("old", "new"), reads):
            notes.extend([read.note] if read is not None and read.note else [])
            notes.extend(read.inventory.notes(side) if read is not None and read.inventory is not None else [])
        if run.inventory:
            inventory = BySide(*(read.inventory if read is not None else None for read in reads))
        if run.failure_section_rescans and run.session_failures > MANY_FAILURES:
            notes.append(
                f"{run.session_failures} failures: pytest's failure section compares each "
                "with every stored report, which grows with items times failures; "
                "--tb=line or --tb=no keeps a large run linear (the JSON and HTML reports keep every detail)"
            )
    if coverage is not None and coverage.passed and coverage.error_rates is not None:
        notes.append(coverage.error_rates.text)  # an item over its limit shows it; a passing run, here
    summary = Summary(
        verdict="pass",
        decided_by=(),
        task_outcomes={},
        accepted=(),
        counts=Counts(**result.counts()),
        join=result.join,
        rows=result.rows,
        conditions=BySide(*result.conditions),
        models=BySide(*result.models),
        compared=result.compared,
        nothing_compared=nothing_compared(result),
        notes=tuple(notes),
        copies=result.copies,
        paired=Paired(
            **{f.name: getattr(section.stats, f.name) for f in fields(Paired) if hasattr(section.stats, f.name)},
            sign_test=section.sign,
            table=section.table,
            left_out=section.left_out,
        ),
        tasks=tasks,
        plan=None,
        equivalence=decisions.equivalence,
        coverage=coverage,
        flip_tests=FlipTests(alpha, fdr.tests, len(fdr.counted)) if fdr is not None else None,
        failing_flips=sum(1 for j in judged if j is not None and j.regression) if fdr is not None else None,
        files=run.files if run is not None else None,
        aggregate_metrics=BySide(run.aggregate.get("old"), run.aggregate.get("new")) if run is not None else None,
        inventory=inventory,
        run=outcome,
    )
    sha256 = run.known_flips_sha256 if run is not None else None
    summary = decided(summary, strict=strict, allow_copy=allow_copy, known_flips_sha256=sha256)
    if not with_plan and summary.verdict != "inconclusive":
        return summary
    fails = "; ".join(d.text for d in summary.decided_by if d.code in FAIL_CODES) if summary.verdict == "fail" else None
    return replace(summary, plan=plan(result, margin, alpha, judged, decided=fails))

"""The classification result as data. A side's rows are kept as :class:`RowFacts` (a few small
fields and where the row sits in its file), never as full rows: ``TaskSide.rows`` reads them again."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Optional, TypeVar, get_args

#: rewards closer than this are the same reward (a task whose means differ by no more is identical)
REWARD_TOLERANCE = 1e-9
#: pydantic's configuration of the JSON summary's dataclasses (a plain dict: defining it imports no
#: pydantic): where a summary is read, an unknown key, a value of another type, NaN or an infinity
#: is refused (`reports/json_file.py`)
CLOSED: dict[str, object] = {"extra": "forbid", "strict": True, "allow_inf_nan": False}

Category = Literal["identical", "flipped", "flipped_agent_error", "masked", "missing"]
#: the categories whose two sides were compared (the paired figures' tasks)
COMPARED_CATEGORIES: tuple[Category, ...] = ("identical", "flipped", "flipped_agent_error")
CATEGORIES: tuple[Category, ...] = get_args(Category)
Side = Literal["old", "new"]
T = TypeVar("T")


def per_side(side: Side, old: T, new: T) -> T:
    return old if side == "old" else new


#: What became of one task, one word for every report (docs/semantics.md, "Outcomes"): `passed`, a
#: failing flip (`failed`), a flip its repeats do not tell from noise (`within_noise`), a verdict a known-flips
#: list or a hook gave (`accepted`), the uncompared (`agent_error`, `masked`, `missing`), not selected (`not_run`).
TaskOutcome = Literal["passed", "failed", "within_noise", "accepted", "agent_error", "masked", "missing", "not_run"]
TASK_OUTCOMES: tuple[TaskOutcome, ...] = get_args(TaskOutcome)

#: How a run ends (docs/semantics.md, "Verdicts"): `pass` (every check passed on enough evidence),
#: `fail` (the data show a difference), `inconclusive` (the gate cannot decide either way).
RunVerdict = Literal["pass", "fail", "inconclusive"]


class RowOrigin(enum.Enum):
    """Which file of a side a row was read from."""

    MAIN = "main"  # the rollouts file itself (or rows given in memory)
    SIDECAR = "sidecar"  # its `<stem>_failures.jsonl`; the row is the record folded into a masked row


#: The offset of a row that was not read from a file (given in memory): it is kept in ``row``.
NO_OFFSET: Optional[int] = None


@dataclass(slots=True, eq=False, repr=False)
class RowFacts:
    """One row reduced, as it is read, to what the classification needs; the rest (its verifier logs
    dir, embedded output, trajectory) is read again from its file when a flip or a test needs it, so
    memory does not grow with row size. ``offset``: its line's byte offset in the file ``origin`` and
    ``shard`` name (:data:`NO_OFFSET` for rows given in memory, kept in ``row``). Built positionally:
    one per row read, and keywords cost several times more.
    """

    line: int
    offset: Optional[int]
    origin: RowOrigin
    reward: Optional[float]
    mask: Optional[str]
    agent_error: Optional[str]
    failure_kind: Optional[str]
    row: Optional[dict[str, Any]] = None
    #: which file of a sharded side holds the row (its place in the side's sorted files; 0 for one file)
    shard: int = 0
    #: the row's `_ng_rollout_index` (which of its task's rollouts it is), or None
    rollout: Optional[int] = None
    #: a CRC-32 of the row's `response.id` (the model call's own id), or None: rows whose ids differ
    #: are two model calls, so pairing tells a rerun from a re-verification without reading a row again
    response: Optional[int] = None

    @property
    def scored(self) -> bool:
        """The row's reward counts: it is not masked and its reward is a finite number."""
        return self.mask is None and self.reward is not None and math.isfinite(self.reward)

    @property
    def place(self) -> tuple[int, bool, int]:
        """Where the row sits among its side's files, in reading order: its shard, the main file
        before the sidecar, its offset. Rows read again in this order pass over each file once."""
        return self.shard, self.origin is RowOrigin.SIDECAR, self.offset or 0

    def __repr__(self) -> str:
        return (
            f"RowFacts(line={self.line}, origin={self.origin.value!r}, reward={self.reward!r}, mask={self.mask!r}, "
            f"agent_error={self.agent_error!r}, failure_kind={self.failure_kind!r})"
        )


RowReader = Callable[[RowFacts], "dict[str, Any]"]


def _row_of(facts: RowFacts) -> dict[str, Any]:
    if facts.row is None:
        raise LookupError("row was not kept in memory and no reader was given")
    return facts.row


def scored_rewards(facts: Sequence[RowFacts]) -> tuple[float, ...]:
    """The rewards a side's mean is taken over: its scored rows' (unmasked, finite), in row order."""
    return tuple(f.reward for f in facts if f.scored and f.reward is not None)


@dataclass(slots=True, eq=False, repr=False)
class TaskSide:
    """One side's rows for one task, reduced to what the comparison needs."""

    facts: Sequence[RowFacts]
    reward: Optional[float]
    masked: Optional[str]
    agent_error: Optional[str]
    failure_kind: Optional[str]
    #: reads a row's full dict again from its file (None: only rows kept in memory can be read)
    reader: Optional[RowReader] = None
    #: the scored rows' rewards in row order, and how many rows are masked: counted once for every reader
    rewards: tuple[float, ...] = field(init=False)
    masked_rows: int = field(init=False)

    def __post_init__(self) -> None:
        self.facts = tuple(self.facts)
        self.rewards = scored_rewards(self.facts)
        self.masked_rows = sum(1 for f in self.facts if f.mask is not None)

    @property
    def reward_rows(self) -> int:
        """How many rows the side's mean is taken over."""
        return len(self.rewards)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every row of the side as its full dict, sidecar records and masked rows included."""
        return [self.read_row(f) for f in self.facts]

    @property
    def compared_rows(self) -> list[dict[str, Any]]:
        """The rows the gate compared: those whose rewards make the side's mean (no masked row, no
        sidecar record, no row without a finite reward); none when the side is masked."""
        return [] if self.masked else [self.read_row(f) for f in self.facts if f.scored]

    def read_row(self, facts: RowFacts) -> dict[str, Any]:
        """The full dict of one of this side's rows."""
        return (self.reader or _row_of)(facts)

    @property
    def repeated(self) -> bool:
        """More than one row for this task on this side."""
        return len(self.facts) > 1

    def reward_text(self) -> str:
        """`none`, or the reward to 4 places, with the mean's row counts for repeated sides."""
        if self.reward is None:
            return "none"
        text = repr(round(self.reward, 4))
        if self.repeated:
            counted = "" if self.reward_rows == len(self.facts) else f"{self.reward_rows} of "
            text += f" (mean of {counted}{len(self.facts)} rows)"
        return text

    def __repr__(self) -> str:
        return (
            f"TaskSide(reward={self.reward!r}, rows={len(self.facts)}, masked={self.masked!r}, "
            f"agent_error={self.agent_error!r}, failure_kind={self.failure_kind!r})"
        )


@dataclass(frozen=True, repr=False)
class RolloutPair:
    """One rollout on both sides, holding the same trajectory: the old and the new row's facts."""

    old: RowFacts
    new: RowFacts

    @property
    def rollout(self) -> Optional[int]:
        """The pair's `_ng_rollout_index` (None: paired by `_ng_rollout_id` or an equal trajectory)."""
        return self.old.rollout if self.old.rollout == self.new.rollout else None

    @property
    def agrees(self) -> bool:
        """Both verifiers gave the trajectory the same reward (a pair holds scored rows only)."""
        return abs((self.old.reward or 0.0) - (self.new.reward or 0.0)) <= REWARD_TOLERANCE

    @property
    def loser(self) -> Side:
        """The side whose verifier gave the trajectory the lower reward."""
        return "new" if (self.new.reward or 0.0) < (self.old.reward or 0.0) else "old"

    def __repr__(self) -> str:
        return f"RolloutPair(rollout={self.rollout!r}, old_reward={self.old.reward!r}, new_reward={self.new.reward!r})"


@dataclass(frozen=True)
class TaskComparison:
    """The comparison of one joined task."""

    task: str
    category: Category
    old: Optional[TaskSide] = None
    new: Optional[TaskSide] = None
    winner: Optional[Side] = None
    #: the taskset the task's rows name (the new side's first, else the old side's), or None
    taskset: Optional[str] = None
    #: the task's scored rows paired rollout by rollout where both sides hold the same trajectories
    #: (a re-verification; docs/semantics.md, "Verifier disagreements"), else None
    pairs: Optional[tuple[RolloutPair, ...]] = None

    @property
    def disagreements(self) -> int:
        """How many of the task's rollouts the two verifiers scored differently."""
        return sum(1 for pair in self.pairs if not pair.agrees) if self.pairs else 0

    @property
    def loser(self) -> Optional[Side]:
        """The side that lost a flip, or None."""
        if self.winner is None:
            return None
        return "new" if self.winner == "old" else "old"

    def side(self, name: Side) -> Optional[TaskSide]:
        """The old or the new side of the task."""
        return self.old if name == "old" else self.new


@dataclass(frozen=True, slots=True)
class Join:
    """How the sides were joined: each side's task field (and why it), the prefix stripped from its
    labels, and whether labels were split by taskset. The judging stage decides it once; the result
    and the summary hold this one value."""

    old_key: str
    new_key: str
    old_key_reason: str = ""
    new_key_reason: str = ""
    old_prefix_stripped: Optional[str] = None
    new_prefix_stripped: Optional[str] = None
    keyed_by_taskset: bool = False


@dataclass(frozen=True, slots=True)
class RowCounts:
    """Rows read per side (sidecar records included), and how many of them are masked."""

    old: int
    new: int
    old_masked: int = 0
    new_masked: int = 0


@dataclass(frozen=True, slots=True)
class Counts:
    """Tasks per category, with each category's breakdown."""

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
    #: flips whose rows hold the same trajectories on both sides, scored differently (docs/semantics.md,
    #: "Verifier disagreements"); they fail in margin mode too
    verifier_disagreements: int = 0


@dataclass(frozen=True)
class CompareResult:
    """Every joined task, sorted by label, and how the join was made."""

    tasks: list[TaskComparison]
    join: Join
    rows: RowCounts
    notes: list[str] = field(default_factory=list)
    #: the note saying both sides hold the same rows (docs/semantics.md, "Copies"), or None
    copies: Optional[str] = None
    #: why no task is joined although both sides name tasks (the runs read different inputs, or the
    #: files look like different environments), or None
    unjoined: Optional[str] = None
    #: (old, new): the conditions each side ran under, as its side line shows them (`""`: unrecorded)
    conditions: tuple[str, str] = ("", "")
    #: (old, new): the sides' models when they differ, else empty
    models: tuple[str, str] = ("", "")

    def by_category(self, category: Category) -> list[TaskComparison]:
        """The tasks of one category, in task order."""
        return [t for t in self.tasks if t.category == category]

    def counts(self) -> dict[str, int]:
        """The counts (docs/semantics.md, "Counts"), keyed as in the JSON summary."""
        counts = dict.fromkeys((f.name for f in fields(Counts)), 0)
        for t in self.tasks:
            counts["tasks"] += 1
            counts[t.category] += 1
            if t.category == "flipped":
                if t.winner is not None:  # none: disagreements that cancel in the mean
                    counts[f"flipped_{t.winner}_win"] += 1
                counts["verifier_disagreements"] += bool(t.disagreements)
            elif t.category == "masked":
                counts["masked_old"] += bool(t.old is not None and t.old.masked)
                counts["masked_new"] += bool(t.new is not None and t.new.masked)
            elif t.category == "missing":
                counts["missing_old_only" if t.new is None else "missing_new_only"] += 1
        return counts

    @property
    def compared(self) -> int:
        """Tasks with a counted reward on both sides (identical or flipped)."""
        return sum(1 for t in self.tasks if t.category in COMPARED_CATEGORIES)

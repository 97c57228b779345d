"""Building one side from its rows: facts, key vote, anonymous records, the one agent it compares.

Every row enters the core through :meth:`SideBuilder.prepare` (the streaming loader, the in-memory
API and :func:`.loading.load_rollouts` alike), so a file and the same rows as dicts classify and
fail alike. A side mixing agents (`agent_ref.name`; native Harbor rows have none: :data:`NO_AGENT`)
would compare a mean over different agents, so it stops unless one is chosen (:class:`AgentFilter`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import CompareInputError, Place
from ..model import NO_OFFSET, RowFacts, RowOrigin, RowReader
from .fields import AGENT_NAME, AGENT_REF, CONDITIONS, REQUEST, REWARD, TASK_INDEX, TOKEN_CAPTURE
from .files import HEALTH_CHECK_FILES, written_beside
from .jsonl_lines import ContentDigest
from .key_vote import NO_KEY, KeyChoice, KeyVote, RowAt
from .row_facts import RewardTypeError, fold_failure_record, reduce_row, training_mask
from .sidecar import is_failure_record
from .task_idents import describe_row_task, ident_of

#: What a file whose rows never carry `reward` most likely is, when neither its name nor its first row tells.
NOT_ROLLOUTS = "an input dataset, not rollouts (no row has a reward field)"
#: The health check's verdict of one rollout (a `rollout_verdicts.jsonl` row, whatever its file is called).
VERDICTS = ("healthy", "unhealthy", "unobserved")
HEALTH_VERDICTS = HEALTH_CHECK_FILES["rollout_verdicts.jsonl"]


def what_rows_are(row: dict[str, Any], name: str = "") -> str:
    """What a file whose rows have no reward field is, by its name or what its first row holds."""
    beside = written_beside(name) or (HEALTH_VERDICTS if row.get("verdict") in VERDICTS else "")
    if beside:
        return f"{beside}, not rollouts (no row has a reward field): give the rollouts file beside it"
    keys = [key for key in row if isinstance(key, str)]
    if "expected_num_rollouts" in keys or "rollout_infos" in keys or any(key.endswith("/reward") for key in keys):
        return (
            "a per-task reward profile (gym eval profile's mean/reward, max/reward, expected_num_rollouts), "
            "not rollouts (no row has a reward field): give the rollouts file the profile was made from"
        )
    if "messages" in keys or ("role" in keys and "content" in keys):
        return "a chat transcript (rows of messages), not rollouts (no row has a reward field)"
    if keys and sum("/" in key or key.startswith(("mean", "avg", "pass@")) for key in keys) * 2 > len(keys):
        return "aggregate metrics (one figure per metric, no task rows), not rollouts (no row has a reward field)"
    return NOT_ROLLOUTS


def names_no_task(row: dict[str, Any], key: Optional[str]) -> bool:
    """The row carries neither the key nor any candidate field."""
    return describe_row_task(row, key) is None and describe_row_task(row, None) is None


def vote_again(facts: Sequence[RowFacts], row_at: RowAt, *, sharded: bool, passed_over: Collection[str]) -> KeyChoice:
    """A side's key chosen again from its rows as its builder chose it, the id fields ``passed_over``
    left out (those the other side showed to be categories: :mod:`..identity.join`)."""
    builder = SideBuilder(None, sharded=sharded)
    for name in passed_over:
        builder.vote.columns.pop(name, None)
    for index, row_facts in enumerate(facts):
        builder.shard = row_facts.shard + 1 if sharded else None
        builder.add(builder.prepare(row_at(index), Place(""), row_facts.origin, None, keep=False))
    return builder.vote.choose(row_at)


#: The group of rows that carry no `agent_ref.name` (select it by this name).
NO_AGENT = "(no agent_ref)"

_NAME = AGENT_NAME.split(".", 1)[1]


def agent_of(row: dict[str, Any]) -> str:
    """The row's `agent_ref.name`, or :data:`NO_AGENT`."""
    ref = row.get(AGENT_REF)
    if isinstance(ref, dict):
        name = ref.get(_NAME)
        if isinstance(name, str) and name:
            return name
    return NO_AGENT


class AgentFilter:
    """Counts the agents of a side's rows as they stream by and keeps the chosen one's rows."""

    def __init__(self, wanted: Optional[str] = None, option: str = "agent") -> None:
        self.wanted = wanted
        self.option = option
        self.counts: dict[str, int] = {}

    def keep(self, row: dict[str, Any]) -> bool:
        """Count a rollouts-file row; True when it belongs to the compared agent."""
        name = agent_of(row)
        self.counts[name] = self.counts.get(name, 0) + 1
        return self.wanted is None or name == self.wanted

    def keep_record(self, record: dict[str, Any]) -> bool:
        """A failure record is filtered only when it names its agent (many records do not)."""
        return self.wanted is None or AGENT_REF not in record or agent_of(record) == self.wanted

    def check(self, display: str) -> None:
        """Raise when the side mixes agents and none was chosen, or the chosen one has no row."""
        ordered = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))  # most rows first
        listing = ", ".join(f"{name} ({count} row{'s' if count != 1 else ''})" for name, count in ordered)
        if self.wanted is None and len(self.counts) > 1:  # the surface adds how to choose one (`setting`)
            raise CompareInputError(
                display, f"rows of {len(self.counts)} agents (agent_ref.name): {listing}", setting="agent"
            )
        if self.wanted is not None and self.counts and self.wanted not in self.counts:
            raise CompareInputError(
                display, f"no row of {display} has agent {self.wanted!r}; agents present: {listing}", where=self.option
            )

    @property
    def compared(self) -> Optional[str]:
        """The agent whose rows the side compares (None for a side with no rows)."""
        return self.wanted if self.wanted is not None else next(iter(self.counts), None)


@dataclass
class PendingRow:
    """A reduced row waiting to join its side (sidecar records wait until it is known they stand)."""

    place: Place
    facts: RowFacts
    names: dict[str, Any]
    anonymous: bool
    has_reward_field: bool = True


class SideBuilder:
    """Accumulates one side: each row's facts and join value; errors name the row's location."""

    def __init__(self, key: Optional[str], key_option: str = "key", *, sharded: bool = False) -> None:
        self.key = key
        self.vote = KeyVote(key, key_option, index_restarts=sharded)
        #: the shard being read (1 for the first) on a sharded side, whose task indices it qualifies
        self.shard: Optional[int] = None
        self.facts: list[RowFacts] = []
        self._lost_last_field_at: Optional[Place] = None
        self._rows_with_reward_field = 0
        #: executions of a logical rollout left out because a newer attempt stands (:class:`.sidecar.Attempts`)
        self.superseded = 0
        self._anonymous: set[int] = set()  # places of rows that name no task (they do not vote)
        self._training_masks: set[int] = set()  # places of rows scored through a token-capture mask
        #: each distinct [model, temperature, top_p, max_output_tokens] the side's rows were run with, as JSON
        self.conditions: list[str] = []
        self._last_conditions: tuple[Any, ...] = ()
        self._shape: Optional[str] = None  # what the first main row says the file is, if no rollouts
        self.digest = ContentDigest()

    def prepare(
        self, row: dict[str, Any], place: Place, origin: RowOrigin, offset: Optional[int], *, keep: bool
    ) -> PendingRow:
        """Reduce a row, a sidecar record folded into the masked row it stands for; ``keep`` holds on
        to the dict, else it is read again from its file on demand."""
        sidecar = origin is RowOrigin.SIDECAR
        try:
            facts = reduce_row(
                fold_failure_record(row) if sidecar else row,
                line=place.line or 0,
                offset=offset,
                origin=origin,
                keep=keep,
            )
        except RewardTypeError as exc:
            task = describe_row_task(row, self.key)
            raise place.error(f"{exc}" + (f" (task {task})" if task else "")) from None
        anonymous = (sidecar or is_failure_record(row)) and names_no_task(row, self.key)
        names = self.vote.candidate_values(row, anonymous=anonymous)
        if self.shard is not None:
            facts.shard = self.shard - 1
            if names.get(TASK_INDEX) is not None:  # it restarts at 0 in every run: `2:17` is shard 2's 17
                names[TASK_INDEX] = f"{self.shard}:{ident_of(names[TASK_INDEX])[1]}"
        return PendingRow(place, facts, names, anonymous, sidecar or REWARD in row)

    def add(self, pending: PendingRow) -> None:
        """Join a prepared row to the side; its key value votes unless it is anonymous."""
        had_fields = bool(self.vote.columns)
        error = self.vote.add(pending.names, anonymous=pending.anonymous)
        if error:
            raise pending.place.error(error)
        if had_fields and not self.vote.columns:
            self._lost_last_field_at = pending.place
        if pending.anonymous:
            self._anonymous.add(len(self.facts))
        self.facts.append(pending.facts)
        if pending.facts.origin is RowOrigin.MAIN and pending.has_reward_field:
            self._rows_with_reward_field += 1

    def drop(self, places: Sequence[int]) -> None:
        """Take rows out again: executions a newer attempt superseded (:class:`.sidecar.Attempts`).
        Their key values leave the vote with them; a field a dropped row lacked stays ruled out as
        the key, and a reward field it had still shows the file holds rollouts (facts of the file)."""
        gone = set(places)
        if not gone:
            return
        kept = [place for place in range(len(self.facts)) if place not in gone]
        self.facts = [self.facts[place] for place in kept]
        vote = self.vote
        vote.drop_rows(kept)
        vote.voters -= len(gone - self._anonymous)
        self._anonymous = {new for new, old in enumerate(kept) if old in self._anonymous}
        self._training_masks = {new for new, old in enumerate(kept) if old in self._training_masks}

    def add_row(self, row: dict[str, Any], place: Place, offset: Optional[int] = NO_OFFSET, *, keep: bool) -> None:
        """Prepare and join a main row at once (only the standing sidecar records join), noting what
        only main rows show: what a file of no rollouts is, a training mask, the run's conditions."""
        if not self.facts and self._shape is None and REWARD not in row:
            self._shape = what_rows_are(row, place.path)
        pending = self.prepare(row, place, RowOrigin.MAIN, offset, keep=keep)
        facts = pending.facts
        if TOKEN_CAPTURE in row and facts.mask is None and training_mask(row, facts.reward):
            self._training_masks.add(len(self.facts))
        request = row.get(REQUEST)
        if request.__class__ is dict:
            conditions = tuple(map(request.get, CONDITIONS))
            if conditions != self._last_conditions:  # most rows repeat the row before: nothing to do
                self._last_conditions = conditions
                shown = json.dumps(conditions)
                if shown not in self.conditions:
                    self.conditions.append(shown)
        self.add(pending)

    def finish(self, display: str, reader: Optional[RowReader] = None) -> KeyChoice:
        """How the side is keyed (key None when no row names a task: it borrows the other's);
        ``reader`` reads a row again (rows not kept in memory) when deferred prompts are needed."""
        if self.facts and not self._rows_with_reward_field and any(f.origin is RowOrigin.MAIN for f in self.facts):
            raise CompareInputError(display, self._shape or NOT_ROLLOUTS)
        read = reader or (lambda facts: facts.row or {})
        choice = self.vote.choose(lambda index: read(self.facts[index]))
        if self.superseded:
            choice.notes.append(
                f"{self.superseded} superseded attempt(s) left out: executions of a logical rollout "
                "(_ng_run_id, _ng_task_index, _ng_rollout_index) that a newer _ng_attempt_index replaced"
            )
        if self._training_masks:
            choice.notes.append(
                f"{len(self._training_masks)} row(s) with mask_sample set by NeMo Gym's token-id capture "
                "(_ng_token_capture) are scored: the mask leaves a rollout out of training, and its reward stands"
            )
        if choice.key is None and self.vote.voters and not choice.inferred:
            raise (self._lost_last_field_at or Place(display)).error(NO_KEY, "key")
        if choice.key is None:
            choice.values = [None] * len(self.facts)
        return choice

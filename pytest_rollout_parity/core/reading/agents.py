"""Which agent's rows a side compares: a file may hold the rollouts of several agents.

NeMo Gym stamps each row with the agent that ran it (`agent_ref.name`); native Harbor rows carry
no `agent_ref` and form one group of their own, named :data:`NO_AGENT`. Mixing agents on one side
would compare a mean over different agents, so a side with several stops unless one is chosen.
"""

from __future__ import annotations

from typing import Any, Optional

from ..errors import CompareInputError
from .fields import AGENT_NAME, AGENT_REF

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
        if self.wanted is not None:
            return self.wanted
        return next(iter(self.counts), None)

"""One side's request: what to read (a file or its shards) and how (key, agent, the names errors cite).

Built once per side, by the Python API or by the plugin, then handed on unchanged: to
:func:`.loading.load_side`, to the reader child and into the rerun cache's key, so it holds only
strings and tuples of strings (hashable, and carried by ``marshal`` and JSON alike).
"""

from __future__ import annotations

import os
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any, Optional


@dataclass(frozen=True)
class SideRequest:
    """What is read for one side, and the names its errors give for where the key and agent came from."""

    #: the side's file (a sharded side's first file)
    path: str
    #: the join field asked for; None lets the side's rows choose it
    key: Optional[str] = None
    #: the side's name in messages (as the user gave it); None shows ``path``
    display: Optional[str] = None
    #: the agent (`agent_ref.name`) whose rows are kept; None keeps a side of one agent whole
    agent: Optional[str] = None
    #: where ``key`` and ``agent`` were given (an option, an ini key or an API argument), for messages
    key_option: str = "key"
    agent_option: str = "agent"
    #: a sharded side's files, each (path, name shown), ``path`` the first; empty for one file
    shards: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_arguments(
        cls,
        side: str,
        path: str | os.PathLike[str],
        key: Optional[str] = None,
        own_key: Optional[str] = None,
        agent: Optional[str] = None,
        own_agent: Optional[str] = None,
    ) -> SideRequest:
        """The request of the API's ``side`` ("old" or "new"): its own key and agent win over the shared
        ones, and errors name the API's argument (``old_key``, ``new_agent``...)."""
        return cls(
            str(Path(path)),
            own_key or key,
            agent=own_agent or agent,
            key_option=f"{side}_key",
            agent_option=f"{side}_agent",
        )

    @property
    def shown(self) -> str:
        return self.display or (self.shards[0][1] if self.shards else self.path)

    def files(self) -> list[str]:
        """Every file the side is read from: its shards, or its one file."""
        return [path for path, _ in self.shards] or [self.path]

    def plain(self) -> tuple[Any, ...]:
        """The fields in order: ``SideRequest(*plain)`` is the request again (``marshal`` keeps tuples)."""
        return astuple(self)

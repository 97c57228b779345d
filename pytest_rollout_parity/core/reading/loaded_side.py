"""A loaded side: its row facts in file order, how its rows are keyed, and its rows read again.

What :mod:`.loading` gives for one side, what the rerun cache stores as plain values
(:mod:`.snapshot`) and what the join reads. Only the rows' facts are kept: a row's full dict
is read again from its file when a report needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..model import RowFacts, RowOrigin
from .files import RowAt
from .jsonl_lines import read_object_at
from .key_vote import KeyChoice
from .row_facts import fold_failure_record
from .task_idents import TaskIdent


@dataclass
class LoadedSide:
    """One side streamed: its row facts in file order (sidecar last) and how its rows are keyed."""

    path: Path
    display: str
    sidecar: Optional[Path]
    choice: KeyChoice
    facts: list[RowFacts] = field(default_factory=list)
    #: the agent (`agent_ref.name`) whose rows the side holds, and each agent's rows in the file
    agent: Optional[str] = None
    agent_rows: dict[str, int] = field(default_factory=dict)
    #: a sharded side's files in order, each (path, name shown, its sidecar's path or None); empty
    #: for a side of one file (``path``, ``display`` and ``sidecar`` are then the whole side)
    shards: tuple[tuple[str, str, Optional[str]], ...] = ()
    #: what the side's files held, as read (:mod:`.digest`); None for rows given in memory
    digest: Optional[str] = None
    #: each distinct [model, temperature, top_p, max_output_tokens] its rows were run with, as JSON
    conditions: tuple[str, ...] = ()

    @property
    def key(self) -> Optional[str]:
        """The side's join field; None when no row names a task."""
        return self.choice.key

    @property
    def values(self) -> list[Optional[TaskIdent]]:
        """Each row's join value (None: anonymous)."""
        return self.choice.values

    def read_row(self, facts: RowFacts) -> dict[str, Any]:
        """Re-read one row's full dict from its file (its own shard's, on a sharded side)."""
        if self.shards:
            path, _, sidecar = self.shards[facts.shard]
            return read_row_at(Path(path), Path(sidecar) if sidecar else None, facts)
        return read_row_at(self.path, self.sidecar, facts)

    @property
    def files(self) -> list[tuple[Path, str, Optional[Path]]]:
        """Each file of the side as (path, name shown, sidecar or None): one, or each shard's."""
        if not self.shards:
            return [(self.path, self.display, self.sidecar)]
        return [(Path(path), shown, Path(sidecar) if sidecar else None) for path, shown, sidecar in self.shards]

    def shard_facts(self, index: int) -> list[RowFacts]:
        """The rows read from file ``index`` of the side (:attr:`files`) and its sidecar."""
        if not self.shards:
            return self.facts
        return [facts for facts in self.facts if facts.shard == index]


def read_row_at(
    path: Path,
    sidecar: Optional[Path],
    facts: RowFacts,
    main_at: Optional[RowAt] = None,
    sidecar_at: Optional[RowAt] = None,
) -> dict[str, Any]:
    """A row's full dict (a sidecar record folded), kept in memory or read again from its file.

    ``main_at`` and ``sidecar_at`` keep each file's stream open across reads that move forward.
    """
    if facts.row is not None:
        return facts.row
    if facts.offset is None:
        raise LookupError("a row that was neither kept nor read from a file")
    if facts.origin is RowOrigin.MAIN:
        return read_object_at(path, facts.offset, main_at)
    if sidecar is None:
        raise LookupError("a sidecar row without a sidecar file")
    return fold_failure_record(read_object_at(sidecar, facts.offset, sidecar_at))

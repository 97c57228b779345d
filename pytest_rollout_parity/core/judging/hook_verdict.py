"""What a `pytest_parity_verdict` hook returns to change an item's outcome."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, Optional, get_args

Outcome = Literal["passed", "failed", "xfail"]
#: Who decided an outcome: a conftest's `pytest_parity_verdict` hook, the reviewed known-flips list,
#: or the task's category itself (the default outcome).
Source = Literal["hook", "known_flips", "category"]


@dataclass(frozen=True)
class Verdict:
    """An item outcome decided by a conftest hook; the task's category stays what the data says."""

    outcome: Outcome
    #: the JSON summary's `reason`
    text: str = field(default="", metadata={"alias": "reason"})
    #: who decided it; a report naming who changed an item's outcome reads it
    source: Source = "hook"

    @classmethod
    def read(cls, outcome: object, text: object, source: object) -> Optional[Verdict]:
        """The verdict a report or a JSON summary recorded (its outcome, text and source as written
        there), or None when they are not a verdict's; a source other than the list's is a hook."""
        if outcome not in get_args(Outcome) or not isinstance(text, str):
            return None
        return cls(outcome, text, "known_flips" if source == "known_flips" else "hook")  # type: ignore[arg-type]

    def by(self, source: Source) -> Verdict:
        """The same outcome and text, decided by ``source``."""
        return replace(self, source=source)

    @classmethod
    def passed(cls, reason: str = "") -> Verdict:
        """The item passes; ``reason`` goes into its JUnit properties."""
        return cls("passed", reason)

    @classmethod
    def failed(cls, message: str) -> Verdict:
        """The item fails with ``message`` as its report (its first line is the crash line)."""
        return cls("failed", message)

    @classmethod
    def xfail(cls, reason: str) -> Verdict:
        """The item is an expected failure, for ``reason``."""
        return cls("xfail", reason)

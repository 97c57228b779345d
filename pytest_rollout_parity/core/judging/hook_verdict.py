"""What a `pytest_parity_verdict` hook returns to change an item's outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["passed", "failed", "xfail"]


@dataclass(frozen=True)
class Verdict:
    """An item outcome decided by a conftest hook; the task's category stays what the data says."""

    outcome: Outcome
    text: str = ""

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
        """The item xfails with ``reason``."""
        return cls("xfail", reason)

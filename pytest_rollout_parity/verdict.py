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
    def passed(cls, reason: str = "") -> "Verdict":
        return cls("passed", reason)

    @classmethod
    def failed(cls, message: str) -> "Verdict":
        return cls("failed", message)

    @classmethod
    def xfail(cls, reason: str) -> "Verdict":
        return cls("xfail", reason)

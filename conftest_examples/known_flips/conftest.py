"""Accept flips that a person has reviewed: listed, with the reason, in known_flips.txt.

A listed task that flipped passes with its reason; everything else keeps the gate's default outcome,
and the summary counts how many verdicts this hook changed. Point PARITY_KNOWN_FLIPS at another
file to use a different list.
"""

from __future__ import annotations

import os
from pathlib import Path

from pytest_rollout_parity import Verdict

KNOWN_FLIPS_FILE = Path(os.environ.get("PARITY_KNOWN_FLIPS", Path(__file__).with_name("known_flips.txt")))


def read_known_flips(path: Path) -> dict[str, str]:
    """`task  # reason` per line; blank lines and lines starting with # are skipped."""
    known: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        task, _, reason = line.partition("#")
        if task.strip():
            known[task.strip()] = reason.strip() or "reviewed"
    return known


KNOWN_FLIPS = read_known_flips(KNOWN_FLIPS_FILE)


def pytest_parity_verdict(comparison, config):
    if comparison.category == "flipped" and comparison.task in KNOWN_FLIPS:
        return Verdict.passed(f"known flip: {KNOWN_FLIPS[comparison.task]}")
    return None

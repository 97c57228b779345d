"""Invariants of the verdict and the outcomes over random pairs: a pass needs evidence, a failure fails."""

from __future__ import annotations

import math
from typing import Any, Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.completeness import coverage, parse_limit
from pytest_rollout_parity.core.reports.summary import build_summary
from pytest_rollout_parity.core.reports.wording import verdict_words

REWARD = st.one_of(st.sampled_from([0.0, 1.0]), st.none(), st.floats(0, 1))
ROW = st.tuples(st.sampled_from(["a", "b", "c", "d"]), REWARD, st.booleans(), st.booleans())


def _rows(spec: list[tuple[str, Optional[float], bool, bool]], side: str) -> list[dict[str, Any]]:
    rows = []
    for i, (task, reward, masked, errored) in enumerate(spec):
        row: dict[str, Any] = {"task_id": task, "reward": reward, "response_id": f"{side}-{i}"}
        if masked:
            row["mask_sample"] = True
        if errored:
            row["agent_timed_out"] = True
        rows.append(row)
    return rows


@given(
    old=st.lists(ROW, min_size=1, max_size=12),
    new=st.lists(ROW, min_size=1, max_size=12),
    margin=st.one_of(st.none(), st.sampled_from([0.05, 0.3])),
)
@settings(max_examples=150, deadline=None)
def test_a_pass_has_evidence_and_a_failure_never_passes(
    old: list[Any], new: list[Any], margin: Optional[float]
) -> None:
    result = compare_rollouts(_rows(old, "old"), _rows(new, "new"))
    cover = coverage(result, parse_limit("20%"), parse_limit("30%"), max_uncompared=parse_limit("20%"))
    summary = build_summary(result, margin=margin, coverage=cover)
    outcomes = [task.outcome for task in summary.tasks]
    if "failed" in outcomes:
        assert summary.verdict == "fail"
    if summary.verdict == "pass":
        assert summary.nothing_compared is None and summary.copies is None and cover.passed
        assert summary.equivalence is None or summary.equivalence.passed
    if "no difference" in verdict_words(summary):
        assert summary.verdict == "pass"
    assert (summary.plan is not None) == (summary.verdict == "inconclusive")
    for task in result.tasks:
        for side in (task.old, task.new):
            if side is None or side.masked:
                continue
            scored = [
                f.reward for f in side.facts if f.mask is None and f.reward is not None and math.isfinite(f.reward)
            ]
            # a masked row's reward is never part of a side's mean
            assert side.reward is not None and math.isclose(side.reward, math.fsum(scored) / len(scored))

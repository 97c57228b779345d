"""Any finite reward, however large or small, gives every report and decision (no overflow)."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.reports.html_page import render_html
from pytest_rollout_parity.core.reports.json_file import json_dict
from pytest_rollout_parity.core.reports.markdown import render_markdown
from pytest_rollout_parity.core.reports.summary import build_summary
from pytest_rollout_parity.core.reports.terminal import summary_lines

BIG = sys.float_info.max
EXTREME = st.one_of(
    st.sampled_from([BIG, -BIG, 1e200, -1e200, 1.7e308, -1.7e308, 5e-324, 0.0, 1.0]),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _rows(rewards: list[list[float]], side: str) -> list[dict[str, Any]]:
    return [
        {"task_id": f"t{task}", "reward": reward, "response_id": f"{side}-{task}-{k}"}
        for task, rolls in enumerate(rewards)
        for k, reward in enumerate(rolls)
    ]


@given(
    data=st.data(),
    tasks=st.integers(1, 5),
    repeats=st.integers(1, 3),
    margin=st.one_of(st.none(), st.sampled_from([0.05, 1.0, 1e300])),
)
@settings(max_examples=120, deadline=None)
def test_every_report_and_decision_holds_for_any_finite_reward(
    data: st.DataObject, tasks: int, repeats: int, margin: Optional[float]
) -> None:
    side = st.lists(st.lists(EXTREME, min_size=repeats, max_size=repeats), min_size=tasks, max_size=tasks)
    old, new = data.draw(side), data.draw(side)
    result = compare_rollouts(_rows(old, "old"), _rows(new, "new"))
    summary = build_summary(result, margin=margin, with_plan=True)
    text = json.dumps(json_dict(summary), allow_nan=False)  # no inf or nan reaches the JSON
    assert summary.verdict in text
    assert summary_lines(summary)
    assert render_markdown(summary)
    assert render_html(summary)
    assert summary.plan is not None and summary.plan.lines()
    if summary.equivalence is not None and summary.equivalence.lower_bound is not None:
        low, high = summary.equivalence.lower_bound, summary.equivalence.upper_bound
        assert high is not None and low <= high
        delta = summary.paired.delta
        assert delta is not None and low <= delta <= high


def test_a_flip_across_the_whole_float_range_fails_the_aggregate() -> None:
    # 1.7e308 -> -1.7e308: a difference past the float range, still decided (the interval lies below -M)
    old = _rows([[1.7e308]] * 20, "old")
    new = _rows([[-1.7e308]] * 19 + [[-1.6e308]], "new")
    summary = build_summary(compare_rollouts(old, new), margin=0.05, with_plan=True)
    assert summary.verdict == "fail"
    assert summary.equivalence is not None and not summary.equivalence.passed
    # the difference (-3.39e308) is past the float range: the figures read as the largest float
    assert summary.paired.delta == -BIG and summary.equivalence.upper_bound is not None
    assert summary.equivalence.upper_bound < -0.05
    assert summary.plan is not None and summary.plan.decided is not None

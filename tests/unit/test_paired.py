"""The paired section of a comparison (core.statistics.paired) and margin mode's decisions (core.statistics.margin).

Small cases are worked by hand; the figures behind them are also checked against scipy.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Optional

import pytest
from scipy import stats as sps

from pytest_rollout_parity.core.api import compare_rollouts
from pytest_rollout_parity.core.identity.item_names import item_names
from pytest_rollout_parity.core.model import CompareResult
from pytest_rollout_parity.core.statistics.margin import EQUIVALENCE_ITEM, equivalence, judge_flip, judge_flips
from pytest_rollout_parity.core.statistics.paired import (
    format_p,
    noise_text,
    paired_section,
    permutation_test,
)
from pytest_rollout_parity.core.statistics.paired_tests import PairedStats, paired_stats
from pytest_rollout_parity.plugin.collect import default_verdict


def row(task: str, reward: Any, taskset: Optional[str] = "ts-a", **extra: Any) -> dict[str, Any]:
    ident: Any = {"taskset": taskset, "task_id": task} if taskset is not None else task
    return {"_ng_task_id": ident, "reward": reward, **extra}


def compare(old: dict[str, list[float]], new: dict[str, list[float]], taskset: Optional[str] = "ts-a") -> CompareResult:
    return compare_rollouts(
        [row(t, r, taskset) for t, rewards in old.items() for r in rewards],
        [row(t, r, taskset) for t, rewards in new.items() for r in rewards],
    )


def index_of(result: CompareResult, task: str) -> int:
    return [t.task for t in result.tasks].index(task)


SINGLE_OLD = {"t1": [1.0], "t2": [1.0], "t3": [0.0], "t4": [0.0], "t5": [1.0]}
SINGLE_NEW = {"t1": [1.0], "t2": [0.0], "t3": [0.0], "t4": [1.0], "t5": [0.0]}


def test_single_binary_rows_by_hand() -> None:
    section = paired_section(compare(SINGLE_OLD, SINGLE_NEW))
    s = section.stats
    # d = 0, -1, 0, +1, -1: mean -0.2, sd sqrt(2.8 / 4), se sd / sqrt(5), t(0.975, 4)
    assert (s.n, s.old_mean, s.new_mean) == (5, 0.6, 0.4)
    assert s.delta == pytest.approx(-0.2, abs=1e-12)
    se = math.sqrt(0.7) / math.sqrt(5)
    assert s.se == pytest.approx(se, abs=1e-12)
    assert s.df == 4 and s.clustered_by is None and s.absent is None
    assert s.ci95 is not None
    assert s.ci95[0] == pytest.approx(-0.2 - sps.t.ppf(0.975, 4) * se, abs=1e-6)
    assert s.ci95[1] == pytest.approx(-0.2 + sps.t.ppf(0.975, 4) * se, abs=1e-6)
    # the one-sided bounds: t at 4 df less the excess kurtosis's share, moved by Hall's skewness
    # term G1 (2 t^2 + 1) / (6 sqrt(n))
    d = [0, -1, 0, 1, -1]
    t = sps.t.ppf(0.95, 2 / (2 / 4 + max(sps.kurtosis(d), 0) / 5))
    shift = sps.skew(d, bias=False) * (2 * t**2 + 1) / (6 * math.sqrt(5))
    assert s.lower_bound == pytest.approx(-0.2 - (t - shift) * se, abs=1e-6)
    assert s.upper_bound == pytest.approx(-0.2 + (t + shift) * se, abs=1e-6)
    # 1 better, 2 worse: 2 * P(X <= 1 | n=3) = 2 * 4/8 = 1
    assert section.sign is not None
    assert (section.sign.better, section.sign.worse, section.sign.p) == (1, 2, 1.0)
    assert section.table is not None
    assert (section.table.both_pass, section.table.old_only, section.table.new_only, section.table.both_fail) == (
        1,
        2,
        1,
        1,
    )
    assert section.p_values == (None,) * 5


def test_masked_missing_and_agent_error_tasks() -> None:
    old = [row("a", 1.0), row("b", 0.0), row("gone", 1.0), row("m", 1.0), row("err", 1.0)]
    new = [
        row("a", 1.0),
        row("b", 1.0),
        row("m", 0.0, mask_sample=True),
        row("err", 0.0, response={"metadata": {"terminus2_error_type": "TimeoutError"}}),
    ]
    result = compare_rollouts(old, new)
    assert result.tasks[index_of(result, "err")].category == "flipped_agent_error"
    s = paired_section(result).stats
    # compared: a (0), b (+1), err (-1); masked and missing tasks are left out
    assert s.n == 3 and s.delta == pytest.approx(0.0, abs=1e-12)


def test_repeats_give_per_task_p_values_and_no_table() -> None:
    old = {"reg": [1.0] * 5, "noisy": [1.0, 0.0, 1.0, 0.0, 1.0], "few": [1.0], "same": [1.0, 0.0]}
    new = {"reg": [0.0] * 5, "noisy": [0.0, 1.0, 0.0, 0.0, 1.0], "few": [0.0, 0.0, 0.0], "same": [0.0, 1.0]}
    result = compare(old, new)
    section = paired_section(result)
    assert section.table is None  # repeats: a task mean is not a pass or a fail
    p = {t.task: section.p_values[i] for i, t in enumerate(result.tasks)}
    assert p["few"] is None  # one row on the old side
    assert p["same"] is None  # identical: nothing to test
    assert p["reg"] == pytest.approx(sps.fisher_exact([[5, 0], [0, 5]]).pvalue, abs=1e-9)
    assert p["noisy"] == pytest.approx(sps.fisher_exact([[3, 2], [2, 3]]).pvalue, abs=1e-9)
    assert len(section.p_values) - section.p_values.count(None) == 2
    # the family: every compared task with 2+ rows a side, "same" (identical, p = 1) included;
    # "noisy" (6 passes in 10 rows: at best 5/5 against 1/5, p = 0.048) can reach 0.05, and "same"
    # (2 passes in 4 rows: at best 2/2 against 0/2, p = 0.33) cannot, so BH runs over reg and noisy
    fdr = section.fdr(0.05)
    assert fdr.tests == 3 and [result.tasks[i].task for i in fdr.counted] == ["noisy", "reg"]
    expected = sps.false_discovery_control([p["reg"], p["noisy"]])
    adjusted = {t.task: fdr.adjusted[i] for i, t in enumerate(result.tasks)}
    assert adjusted["reg"] == pytest.approx(expected[0], abs=1e-12)
    assert adjusted["noisy"] == pytest.approx(expected[1], abs=1e-12)
    assert adjusted["few"] is None and adjusted["same"] is None


def test_non_binary_repeats_use_the_seeded_permutation_test() -> None:
    olds = [0.9, 0.8, 0.85, 0.95, 0.7, 0.9, 0.88, 0.91, 0.6]
    news = [0.3, 0.5, 0.4, 0.45, 0.2, 0.35, 0.1, 0.5, 0.42]
    result = compare({"cont": olds}, {"cont": news})
    first = paired_section(result).p_values[0]
    assert first is not None
    # C(18, 9) = 48620 splits: exact, whatever the seed
    assert first == pytest.approx(permutation_test(olds, news, seed=0)[0], abs=1e-12)
    big_old, big_new = olds * 2, news * 2  # C(36, 18) > 100,000: Monte Carlo, seeded from the label
    big = compare({"cont": big_old}, {"cont": big_new})
    p = paired_section(big).p_values[0]
    # the seed is a hash of the label's bytes, not Python's salted hash(): the same in every process
    assert p == permutation_test(big_old, big_new, seed=int(hashlib.sha1(b"cont").hexdigest()[:8], 16))[0]
    assert p == paired_section(big).p_values[0]


def test_tasksets_cluster_the_standard_error() -> None:
    old = [
        row("a", 1.0, "alpha"),
        row("b", 0.0, "alpha"),
        row("c", 1.0, "beta"),
        row("d", 1.0, "beta"),
        row("e", 0.0, "gamma"),
    ]
    new = [
        row("a", 0.0, "alpha"),
        row("b", 0.0, "alpha"),
        row("c", 1.0, "beta"),
        row("d", 0.0, "beta"),
        row("e", 1.0, "gamma"),
    ]
    result = compare_rollouts(old, new)
    assert result.join.keyed_by_taskset
    s = paired_section(result).stats
    # tasksets of 2, 2 and 1 tasks: CR2 with Bell-McCaffrey degrees of freedom (fewer than G - 1 = 2)
    assert (s.clustered_by, s.clusters) == ("taskset", 3) and s.df is not None and 1.0 <= s.df < 2.0
    pairs = [(1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)]
    assert s == paired_stats(pairs, ["alpha", "alpha", "beta", "beta", "gamma"])


def test_one_keyed_side_still_clusters_on_its_tasksets() -> None:
    old = [{"task_name": t, "reward": r} for t, r in (("a", 1.0), ("b", 0.0), ("c", 1.0))]
    new = [row("a", 0.0, "alpha"), row("b", 0.0, "alpha"), row("c", 1.0, "beta")]
    result = compare_rollouts(old, new)
    assert not result.join.keyed_by_taskset
    assert [t.taskset for t in result.tasks] == ["alpha", "alpha", "beta"]
    s = paired_section(result).stats
    assert (s.clustered_by, s.clusters) == ("taskset", 2)


@pytest.mark.parametrize("taskset", ["ts-a", None])
def test_one_taskset_or_none_is_not_clustered(taskset: Optional[str]) -> None:
    s = paired_section(compare(SINGLE_OLD, SINGLE_NEW, taskset)).stats
    assert s.clustered_by is None and s.df == 4


def test_fewer_than_two_compared_tasks_say_why() -> None:
    one = paired_section(compare({"a": [1.0]}, {"a": [0.0]}))
    assert one.stats.n == 1 and one.stats.delta is None and one.stats.ci95 is None
    assert one.stats.absent is not None and "at least 2" in one.stats.absent
    assert one.sign is not None and (one.sign.worse, one.sign.p) == (1, 1.0)
    none = paired_section(compare({"a": [1.0]}, {"b": [0.0]}))
    assert none.stats.n == 0 and none.stats.absent == "no compared tasks"
    assert none.sign is None and none.table is None


def test_noise_text() -> None:
    result = compare({"reg": [1.0] * 5, "cont": [0.8, 0.9]}, {"reg": [0.0] * 5, "cont": [0.2, 0.3]})
    assert noise_text(result.tasks[index_of(result, "reg")], 2 / 252) == "p = 0.008, 5/5 vs 0/5"
    assert noise_text(result.tasks[index_of(result, "cont")], 1 / 3) == "p = 0.333, means 0.85 vs 0.25"
    assert format_p(0.0004) == "4.0e-04"


def _stats(delta: float, low: float, high: float) -> PairedStats:
    return PairedStats(300, 0.5, 0.5 + delta, delta, 0.01, 299, (low, high), low, high, None, None, None)


def test_aggregate_passes_inside_the_margin() -> None:
    decision = equivalence(_stats(-0.004, -0.016, 0.008), 0.05)
    assert decision.passed and (decision.lower_bound, decision.upper_bound) == (-0.016, 0.008)
    assert decision.message.startswith("equivalent within margin ±0.05: Δ = -0.0040")
    assert "n = 300" in decision.message and "±0.05" in decision.message


@pytest.mark.parametrize(
    ("low", "high", "broken"),
    [
        (-0.12, -0.06, ["lower bound -0.1200 < -0.05"]),
        (0.06, 0.12, ["upper bound 0.1200 > +0.05"]),
        (-0.07, 0.07, ["lower bound -0.0700 < -0.05", "upper bound 0.0700 > +0.05"]),
    ],
)
def test_aggregate_names_the_side_that_broke(low: float, high: float, broken: list[str]) -> None:
    decision = equivalence(_stats((low + high) / 2, low, high), 0.05)
    assert not decision.passed
    for text in broken:
        assert text in decision.message
    assert ("lower bound" in decision.message) == any("lower" in b for b in broken)
    assert ("upper bound" in decision.message) == any("upper" in b for b in broken)
    assert "Δ = " in decision.message and "n = 300" in decision.message


def test_aggregate_on_the_boundary_passes() -> None:
    assert equivalence(_stats(0.0, -0.05, 0.05), 0.05).passed


def test_aggregate_without_statistics_fails_with_the_reason() -> None:
    decision = equivalence(paired_stats([(1.0, 0.0)]), 0.05)
    assert not decision.passed and decision.lower_bound is None and decision.upper_bound is None
    assert "no decision" in decision.message and "at least 2" in decision.message


def test_bh_decides_which_flips_are_regressions() -> None:
    # 6 tasks 5/5 -> 0/5 among 30 noise flips 3/5 -> 2/5: only the six stand out
    old = {f"reg-{i}": [1.0] * 5 for i in range(6)} | {f"noise-{i}": [1.0, 1.0, 1.0, 0.0, 0.0] for i in range(30)}
    new = {f"reg-{i}": [0.0] * 5 for i in range(6)} | {f"noise-{i}": [1.0, 1.0, 0.0, 0.0, 0.0] for i in range(30)}
    old["single"], new["single"] = [1.0], [0.0]
    result = compare(old, new)
    section = paired_section(result)
    judged = judge_flips(section, result.tasks, section.fdr(0.05))
    by_task = {t.task: j for t, j in zip(result.tasks, judged)}
    assert all(j is not None for j in judged)
    regressions = sorted(t for t, j in by_task.items() if j is not None and j.regression)
    assert regressions == [f"reg-{i}" for i in range(6)]
    reg = by_task["reg-0"]
    assert reg is not None and reg.text == (
        "not noise: BH-adjusted p = 0.048 < alpha 0.05 (BH over the 36 of 36 tested task(s) that can reach it)"
    )
    noise = by_task["noise-0"]
    assert noise is not None and noise.text.startswith("flipped within noise: p = 1.000, 3/5 vs 2/5;")
    single = by_task["single"]
    assert single is not None and single.text == "flipped; single row a side: judged in the aggregate"
    # at alpha 0.01 even the six are not shown to be regressions
    assert not any(j is not None and j.regression for j in judge_flips(section, result.tasks, section.fdr(0.01)))


def test_judge_flip_with_uneven_rows() -> None:
    result = compare({"a": [1.0]}, {"a": [0.0, 0.0, 0.0]})
    judged = judge_flip(result.tasks[0], None, None, paired_section(result).fdr(0.05))
    assert judged.text == "flipped; 1 row(s) old, 3 new: too few repeats for a per-task test: judged in the aggregate"


def test_default_verdict_follows_the_judgement() -> None:
    result = compare({"reg": [1.0] * 5, "x": [1.0]}, {"reg": [0.0] * 5, "x": [0.0]})
    section = paired_section(result)
    judged = judge_flips(section, result.tasks, section.fdr(0.05))
    reg, single = result.tasks[index_of(result, "reg")], result.tasks[index_of(result, "x")]
    assert (
        default_verdict(reg, lambda: "boom", strict=False, judgement=judged[index_of(result, "reg")]).outcome
        == "failed"
    )
    verdict = default_verdict(single, lambda: "boom", strict=False, judgement=judged[index_of(result, "x")])
    assert verdict.outcome == "xfail" and "judged in the aggregate" in verdict.text
    assert default_verdict(single, lambda: "boom", strict=False).outcome == "failed"  # no margin: every flip fails


def test_reserved_item_name_pushes_a_colliding_task_aside() -> None:
    names = item_names(["fix-git", "parity-aggregate", "parity aggregate"], reserved=[EQUIVALENCE_ITEM])
    assert names[0] == "fix-git"
    assert names[1].startswith("parity-aggregate-") and names[2].startswith("parity_aggregate")
    assert EQUIVALENCE_ITEM not in names and len(set(names)) == 3
    assert item_names(["parity-aggregate"]) == ["parity-aggregate"]


PAIRED_KEYS = {
    "n",
    "old_mean",
    "new_mean",
    "delta",
    "ci95",
    "df",
    "clustered_by",
    "sign_test",
    "table",
    "absent",
    "left_out",
}


def test_summary_json_shape() -> None:
    from pytest_rollout_parity.core.api import summary_dict

    result = compare(
        {"reg": [1.0] * 5, "a": [1.0] * 5, "b": [0.0] * 5}, {"reg": [0.0] * 5, "a": [1.0] * 5, "b": [0.0] * 5}
    )
    summary = summary_dict(result)
    paired = summary["paired"]
    assert set(paired) == PAIRED_KEYS
    assert paired["n"] == 3 and paired["delta"] == pytest.approx(-1 / 3)
    assert isinstance(paired["ci95"], list) and len(paired["ci95"]) == 2
    assert paired["sign_test"] == {"better": 0, "worse": 1, "p": 1.0}
    assert paired["table"] is None and paired["clustered_by"] is None and paired["absent"] is None
    p_values = {task["task"]: task["p_value"] for task in summary["tasks"]}
    assert p_values["reg"] == pytest.approx(2 / 252) and p_values["a"] is None and p_values["b"] is None
    assert "aggregate" not in summary
    with_margin = summary_dict(result, margin=0.05)
    assert set(with_margin["aggregate"]) == {"margin", "lower_bound", "upper_bound", "passed"}
    assert with_margin["aggregate"]["passed"] is False


def test_summary_lines_show_the_paired_section_and_clustering() -> None:
    from pytest_rollout_parity.core.reports.summary import build_summary
    from pytest_rollout_parity.core.reports.terminal import summary_lines

    old = [row("a", 1.0, "alpha"), row("b", 0.0, "alpha"), row("c", 1.0, "beta"), row("d", 0.0, "beta")]
    new = [row("a", 0.0, "alpha"), row("b", 0.0, "alpha"), row("c", 1.0, "beta"), row("d", 1.0, "beta")]
    summary = build_summary(compare_rollouts(old, new), margin=0.5)
    assert summary.paired.clustered_by == "taskset"
    lines = summary_lines(summary)
    start = lines.index("paired over 4 compared tasks (d = new - old of the task means):")
    assert lines[start + 1].startswith("    old mean 0.5000, new mean 0.5000, delta 0.0000, 95% CI [")
    assert lines[start + 1].endswith(", standard error clustered by taskset (CR2, 1.0 degrees of freedom)")
    assert lines[start + 2] == "    sign test: 1 better, 1 worse, p = 1.000"
    assert lines[start + 3] == "    old x new pass/fail: both pass 1, old only 1, new only 1, both fail 1"
    # two tasksets: t with 1 degree of freedom, far too wide for a margin of 0.5
    assert lines[start + 4].startswith("aggregate at margin ±0.5: FAILED (not shown equivalent)")


def test_summary_lines_when_figures_are_absent() -> None:
    from pytest_rollout_parity.core.reports.summary import build_summary
    from pytest_rollout_parity.core.reports.terminal import summary_lines

    lines = summary_lines(build_summary(compare({"a": [1.0]}, {"b": [1.0]}), margin=0.1))
    start = lines.index("paired over 0 compared tasks (d = new - old of the task means):")
    assert lines[start + 1 : start + 4] == [
        "    figures absent: no compared tasks",
        "    left out (masked or missing): 50.0% of 2 tasks on the old side, 50.0% on the new side; had every "
        "task left out on the new side scored 0 or 1 there, Δ over the 1 tasks with an old reward would lie in "
        "[-1.0000, 0.0000]",
        "aggregate at margin ±0.1: FAILED, no decision: no compared tasks",
    ]


def test_left_out_tasks_and_the_sensitivity_range_by_hand() -> None:
    from pytest_rollout_parity.core.api import summary_dict

    old = [row("a", 1.0), row("b", 0.0), row("c", 1.0), row("d", 0.0), row("e", 1.0)]
    new = [row("a", 0.0), row("b", 0.0), row("c", 1.0, mask_sample=True), row("d", 1.0), row("f", 1.0)]
    result = compare_rollouts(old, new)
    left = paired_section(result).left_out
    # compared a (-1), b (0), d (+1); c is masked and e missing on the new side, f missing on the old
    assert (left.tasks, left.old, left.new) == (6, 1, 2)
    # over a, b, d, c, e (an old reward each): c and e score 0 on the new side: (0 - 1 - 1) / 5;
    # they score 1: (0 + 0 + 0) / 5
    assert left.range_tasks == 5 and left.reward_range == (0.0, 1.0)
    assert left.delta_range == (pytest.approx(-0.4), pytest.approx(0.0))
    decision = equivalence(paired_section(result).stats, 0.05, left)
    assert decision.message.endswith(
        "; left out (masked or missing): 16.7% of 6 tasks on the old side, 33.3% on the new side; had every task "
        "left out on the new side scored 0 or 1 there, Δ over the 5 tasks with an old reward would lie in "
        "[-0.4000, 0.0000]"
    )
    data = summary_dict(result, margin=0.05)["paired"]["left_out"]
    assert data == {
        "tasks": 6,
        "old": 1,
        "new": 2,
        "range_tasks": 5,
        "reward_range": [0.0, 1.0],
        "delta_range": [pytest.approx(-0.4), pytest.approx(0.0)],
        "old_rows": 0,
        "new_rows": 0,
    }


def test_nothing_left_out_gives_no_range() -> None:
    result = compare({"a": [1.0], "b": [0.0]}, {"a": [0.0], "b": [0.0]})
    left = paired_section(result).left_out
    assert (left.old, left.new, left.delta_range) == (0, 0, None)
    assert (
        "no task left out (masked or missing) on either side"
        in equivalence(paired_section(result).stats, 0.5, left).message
    )

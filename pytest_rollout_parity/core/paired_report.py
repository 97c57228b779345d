"""The paired section and the aggregate in the summary: their JSON objects and terminal lines.

The terminal lines are rendered from the JSON objects, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Any, Optional

from .margin import Aggregate
from .paired import PairedSection, format_p


def paired_dict(section: PairedSection) -> dict[str, Any]:
    """`"paired"`: n, means, Δ, its 95% interval, the clustering, the sign test, the 2x2 table."""
    s = section.stats
    return {
        "n": s.n,
        "old_mean": s.old_mean,
        "new_mean": s.new_mean,
        "delta": s.delta,
        "ci95": list(s.ci95) if s.ci95 is not None else None,
        "clustered_by": s.clustered_by,
        "sign_test": (
            {"better": section.sign.better, "worse": section.sign.worse, "p": section.sign.p}
            if section.sign is not None else None
        ),
        "table": (
            {"both_pass": section.table.both_pass, "old_only": section.table.old_only,
             "new_only": section.table.new_only, "both_fail": section.table.both_fail}
            if section.table is not None else None
        ),
        "absent": s.absent,
    }


def aggregate_dict(decision: Aggregate) -> dict[str, Any]:
    """`"aggregate"` (margin mode): the margin, the one-sided 95% bounds and the decision."""
    return {
        "margin": decision.margin,
        "lower_bound": decision.lower_bound,
        "upper_bound": decision.upper_bound,
        "passed": decision.passed,
    }


def _num(value: float) -> str:
    return f"{value:.4f}"


def paired_lines(paired: dict[str, Any], aggregate: Optional[dict[str, Any]], tested: int) -> list[str]:
    """The paired statistics, the sign test, the table, per-task noise and the aggregate, as lines."""
    n = paired["n"]
    lines = [f"paired over {n} compared task{'' if n == 1 else 's'} (d = new - old of the task means):"]
    if paired["absent"]:
        lines.append(f"    figures absent: {paired['absent']}")
    else:
        low, high = paired["ci95"]
        lines.append(
            f"    old mean {_num(paired['old_mean'])}, new mean {_num(paired['new_mean'])}, "
            f"delta {_num(paired['delta'])}, 95% CI [{_num(low)}, {_num(high)}]"
            + (f", standard error clustered by {paired['clustered_by']}" if paired["clustered_by"] else "")
        )
    sign = paired["sign_test"]
    if sign is not None:
        lines.append(f"    sign test: {sign['better']} better, {sign['worse']} worse, p = {format_p(sign['p'])}")
    table = paired["table"]
    if table is not None:
        lines.append(
            f"    old x new pass/fail: both pass {table['both_pass']}, old only {table['old_only']}, "
            f"new only {table['new_only']}, both fail {table['both_fail']}"
        )
    if tested:
        lines.append(f"    per-task noise: {tested} flipped task(s) with 2+ rows a side tested (p_value in --parity-json)")
    if aggregate is not None:
        margin = f"{aggregate['margin']:g}"
        if aggregate["lower_bound"] is None:
            lines.append(f"aggregate at margin ±{margin}: FAILED, no decision: {paired['absent']}")
        else:
            verdict = "PASSED (equivalent)" if aggregate["passed"] else "FAILED (not shown equivalent)"
            lines.append(
                f"aggregate at margin ±{margin}: {verdict}: one-sided 95% bounds "
                f"[{_num(aggregate['lower_bound'])}, {_num(aggregate['upper_bound'])}] against [-{margin}, +{margin}]"
            )
    return lines

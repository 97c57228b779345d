"""The terminal lines of the summary's paired section and of margin mode's equivalence decision."""

from __future__ import annotations

from typing import Optional

from ..statistics.margin import Equivalence, left_out_text
from ..statistics.paired import format_p
from .summary import FlipTests, Paired


def _num(value: float) -> str:
    return f"{value:.4f}"


def paired_lines(
    paired: Paired, equivalence: Optional[Equivalence], flip_tests: Optional[FlipTests] = None
) -> list[str]:
    """The paired statistics, the sign test, the table, per-task noise, what is left out and the
    equivalence decision, as lines."""
    n = paired.n
    lines = [f"paired over {n} compared task{'' if n == 1 else 's'} (d = new - old of the task means):"]
    if (
        paired.absent
        or paired.ci95 is None
        or paired.old_mean is None
        or paired.new_mean is None
        or paired.delta is None
    ):
        lines.append(f"    figures absent: {paired.absent}")
    else:
        low, high = paired.ci95
        lines.append(
            f"    old mean {_num(paired.old_mean)}, new mean {_num(paired.new_mean)}, "
            f"delta {_num(paired.delta)}, 95% CI [{_num(low)}, {_num(high)}]"
            + (
                f", standard error clustered by {paired.clustered_by} (CR2, {paired.df:.1f} degrees of freedom)"
                if paired.clustered_by and paired.df is not None
                else ""
            )
        )
    sign = paired.sign_test
    if sign is not None:
        lines.append(f"    sign test: {sign.better} better, {sign.worse} worse, p = {format_p(sign.p)}")
    table = paired.table
    if table is not None:
        lines.append(
            f"    old x new pass/fail: both pass {table.both_pass}, old only {table.old_only}, "
            f"new only {table.new_only}, both fail {table.both_fail}"
        )
    if paired.tested:
        lines.append(
            f"    per-task noise: {paired.tested} flipped task(s) with 2+ rows a side tested (p_value in --parity-json)"
        )
    if flip_tests is not None and flip_tests.tests:
        lines.append(
            f"    per-task tests: {flip_tests.counted} of {flip_tests.tests} task(s) with 2+ rows a side "
            f"can reach alpha {flip_tests.alpha:g} and are counted in the BH correction"
        )
    left = paired.left_out
    if left.old or left.new:
        lines.append(f"    {left_out_text(left)}")
    if equivalence is not None:
        margin = f"{equivalence.margin:g}"
        if equivalence.lower_bound is None or equivalence.upper_bound is None:
            lines.append(f"aggregate at margin ±{margin}: FAILED, no decision: {paired.absent}")
        else:
            verdict = "PASSED (equivalent)" if equivalence.passed else "FAILED (not shown equivalent)"
            lines.append(
                f"aggregate at margin ±{margin}: {verdict}: one-sided 95% bounds "
                f"[{_num(equivalence.lower_bound)}, {_num(equivalence.upper_bound)}] against [-{margin}, +{margin}]"
            )
    return lines

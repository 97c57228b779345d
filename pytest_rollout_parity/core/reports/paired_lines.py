"""The summary's paired statistics and margin mode's equivalence decision: as labelled rows (the
HTML report's table) and as the terminal's lines, one made from the other."""

from __future__ import annotations

from typing import Optional

from ..statistics.margin import Equivalence, left_out_text
from ..statistics.paired import format_p
from .summary import FlipTests, Paired

#: the rows the terminal shows on one line, `old mean 0.5833, new mean 0.5208, ...`
FIGURES = ("old mean", "new mean", "delta", "95% CI")
LEFT_OUT = "left out"
AGGREGATE = "aggregate at margin"


def _num(value: float) -> str:
    return f"{value:.4f}"


def paired_heading(paired: Paired) -> str:
    n = paired.n
    return f"paired over {n} compared task{'' if n == 1 else 's'} (d = new - old of the task means)"


def paired_rows(
    paired: Paired, equivalence: Optional[Equivalence], flip_tests: Optional[FlipTests] = None
) -> list[tuple[str, str]]:
    """(label, value) of each figure: the means and the interval, the sign test, the table, per-task
    noise, what is left out and the equivalence decision."""
    rows: list[tuple[str, str]] = []
    if (
        paired.absent
        or paired.ci95 is None
        or paired.old_mean is None
        or paired.new_mean is None
        or paired.delta is None
    ):
        rows.append(("figures absent", str(paired.absent)))
    else:
        low, high = paired.ci95
        rows += [
            ("old mean", _num(paired.old_mean)),
            ("new mean", _num(paired.new_mean)),
            ("delta", _num(paired.delta)),
            ("95% CI", f"[{_num(low)}, {_num(high)}]"),
        ]
        if paired.clustered_by and paired.df is not None:
            rows.append(
                ("standard error", f"clustered by {paired.clustered_by} (CR2, {paired.df:.1f} degrees of freedom)")
            )
    sign = paired.sign_test
    if sign is not None:
        rows.append(("sign test", f"{sign.better} better, {sign.worse} worse, p = {format_p(sign.p)}"))
    table = paired.table
    if table is not None:
        rows.append(
            (
                "old x new pass/fail",
                f"both pass {table.both_pass}, old only {table.old_only}, new only {table.new_only}, "
                f"both fail {table.both_fail}",
            )
        )
    if paired.tested:
        rows.append(
            (
                "per-task noise",
                f"{paired.tested} flipped task(s) with 2+ rows a side tested (p_value in the JSON summary)",
            )
        )
    if flip_tests is not None and flip_tests.tests:
        rows.append(
            (
                "per-task tests",
                f"{flip_tests.counted} of {flip_tests.tests} task(s) with 2+ rows a side "
                f"can reach alpha {flip_tests.alpha:g} and are counted in the BH correction",
            )
        )
    left = paired.left_out
    if left.old or left.new:
        rows.append((LEFT_OUT, left_out_text(left)))
    if equivalence is not None:
        margin = f"{equivalence.margin:g}"
        label = f"{AGGREGATE} ±{margin}"
        if equivalence.lower_bound is None or equivalence.upper_bound is None:
            rows.append((label, f"FAILED, no decision: {paired.absent}"))
        else:
            verdict = "PASSED (equivalent)" if equivalence.passed else "FAILED (not shown equivalent)"
            rows.append(
                (
                    label,
                    f"{verdict}: one-sided 95% bounds [{_num(equivalence.lower_bound)}, "
                    f"{_num(equivalence.upper_bound)}] against [-{margin}, +{margin}]",
                )
            )
    return rows


def paired_lines(
    paired: Paired, equivalence: Optional[Equivalence], flip_tests: Optional[FlipTests] = None
) -> list[str]:
    """The rows as lines: the heading, the figures on one line, each other row `label: value`."""
    lines = [f"{paired_heading(paired)}:"]
    rows = paired_rows(paired, equivalence, flip_tests)
    figures = [f"{label} {value}" for label, value in rows if label in FIGURES]
    if figures:
        clustered = [f"standard error {value}" for label, value in rows if label == "standard error"]
        lines.append("    " + ", ".join(figures + clustered))
    for label, value in rows:
        if label in FIGURES or label == "standard error":
            continue
        if label == LEFT_OUT:
            lines.append(f"    {value}")
        elif label.startswith(AGGREGATE):
            lines.append(f"{label}: {value}")
        else:
            lines.append(f"    {label}: {value}")
    return lines

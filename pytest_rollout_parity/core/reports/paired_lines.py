"""The summary's paired statistics and margin mode's equivalence decision: as labelled rows (the
HTML report's table) and as the terminal's lines, one made from the other."""

from __future__ import annotations

from ..statistics.margin import left_out_text
from ..statistics.paired import format_p
from .summary import Summary

#: the rows the terminal shows on one line, `old mean 0.5833, new mean 0.5208, ...`
FIGURES = ("old mean", "new mean", "delta", "95% CI", "standard error")
LEFT_OUT = "left out"
AGGREGATE = "aggregate at margin"


def paired_heading(summary: Summary) -> str:
    n = summary.paired.n
    return f"paired over {n} compared task{'' if n == 1 else 's'} (d = new - old of the task means)"


def paired_rows(summary: Summary) -> list[tuple[str, str]]:
    """(label, value) of each figure: the means and the interval, the sign test, the table, per-task
    noise, what is left out and the equivalence decision."""
    paired, equivalence, flip_tests = summary.paired, summary.equivalence, summary.flip_tests
    rows: list[tuple[str, str]] = []
    means = (paired.old_mean, paired.new_mean, paired.delta)
    if paired.absent or paired.ci95 is None or None in means:
        rows.append(("figures absent", str(paired.absent)))
    else:
        rows += [(label, f"{value:.4f}") for label, value in zip(FIGURES, means)]
        rows.append(("95% CI", f"[{paired.ci95[0]:.4f}, {paired.ci95[1]:.4f}]"))
        if paired.clustered_by and paired.df is not None:
            clustered = f"clustered by {paired.clustered_by} (CR2, {paired.df:.1f} degrees of freedom)"
            rows.append(("standard error", clustered))
    sign, table = paired.sign_test, paired.table
    if sign is not None:
        rows.append(("sign test", f"{sign.better} better, {sign.worse} worse, p = {format_p(sign.p)}"))
    if table is not None:
        both = f"both pass {table.both_pass}, old only {table.old_only}, new only {table.new_only}, "
        rows.append(("old x new pass/fail", f"{both}both fail {table.both_fail}"))
    tested = sum(1 for task in summary.tasks if task.p_value is not None)  # a flip's, with 2+ rows a side
    if tested:
        rows.append(
            ("per-task noise", f"{tested} flipped task(s) with 2+ rows a side tested (p_value in --parity-json)")
        )
    if flip_tests is not None and flip_tests.tests:
        counted = f"{flip_tests.counted} of {flip_tests.tests} task(s) with 2+ rows a side can reach alpha "
        rows.append(("per-task tests", f"{counted}{flip_tests.alpha:g} and are counted in the BH correction"))
    if paired.left_out.old or paired.left_out.new:
        rows.append((LEFT_OUT, left_out_text(paired.left_out)))
    if equivalence is not None:
        margin = f"{equivalence.margin:g}"
        low, high = equivalence.lower_bound, equivalence.upper_bound
        if low is None or high is None:
            decided = f"FAILED, no decision: {paired.absent}"
        else:
            verdict = "PASSED (equivalent)" if equivalence.passed else "FAILED (not shown equivalent)"
            decided = f"{verdict}: one-sided 95% bounds [{low:.4f}, {high:.4f}] against [-{margin}, +{margin}]"
        rows.append((f"{AGGREGATE} ±{margin}", decided))
    return rows


def paired_lines(summary: Summary) -> list[str]:
    """The rows as lines: the heading, the figures on one line, each other row `label: value` (what is
    left out unlabelled, the margin's decision unindented)."""
    rows = paired_rows(summary)
    figures = [f"{label} {value}" for label, value in rows if label in FIGURES]
    lines = [f"{paired_heading(summary)}:", *(["    " + ", ".join(figures)] if figures else [])]
    for label, value in rows:
        if label == LEFT_OUT:
            lines.append(f"    {value}")
        elif label.startswith(AGGREGATE):
            lines.append(f"{label}: {value}")
        elif label not in FIGURES:
            lines.append(f"    {label}: {value}")
    return lines

"""pytest-html: the report's summary holds the parity counts, each flip's row its rewards and log tail."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from .conftest import Gate, all_text

pytest.importorskip("pytest_html")


def _report_text(path: str) -> str:
    """The report with its escaping undone (rows are JSON in an HTML attribute, extras HTML in it)."""
    text = Path(path).read_text(encoding="utf-8")
    for _ in range(3):
        text = html.unescape(text)
    return text


def test_report_holds_counts_and_flip_extras(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--html=report.html")
    assert result.ret == 1
    text = _report_text(str(gate.path / "report.html"))
    assert '<span class="verdict v-fail">FAIL</span>' in text
    assert "<p>1 task regressed, 1 improved, 1 rerun candidate (agent errors), 1 masked, 2 missing; 1 identical" in text
    assert re.search(r'<td>flipped</td><td class="n">2</td><td>new regressed 1, new improved 1</td>', text)
    # the summary's flip table: each flip once, with its means, repeats and outcome
    assert text.count('<tr class="flip">') == 3
    assert re.search(
        r'<code>regex-log</code></td><td class="n">1/1 → 0/1</td><td class="o-failed">failed</td>',
        text,
    )
    assert "<svg" in text and "<circle" in text  # the pictures
    # the failed flips' messages are in their rows' logs, once: no extra repeats them
    assert text.count("| regex line 30") == 1
    # the agent-error flip xfails: its row carries its message with the evidence as an extra
    assert "git-multibranch: new regressed: old=1.0 new=0.0" in text
    assert text.count("rollout-parity-flip") == 1


@pytest.mark.slow
def test_report_under_xdist_keeps_the_extras(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, gate.beside(), "--html=report.html", "-n", "2")
    assert result.ret == 1
    text = _report_text(str(gate.path / "report.html"))
    assert "| regex line 30" in text
    assert text.count('<span class="verdict v-fail">FAIL</span>') == 1


def test_without_pytest_html_nothing_changes(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "-p", "no:html", "-p", "no:html_fixtures")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=2, xfailed=4)
    assert "Traceback" not in all_text(result) and not list(gate.path.glob("*.html"))


def test_pytest_html_without_a_report_is_left_alone(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args)
    assert result.ret == 1
    assert not list(gate.path.glob("*.html"))


def test_every_report_carries_the_same_facts(gate: Gate) -> None:
    """Keys and why, masked and missing reasons, notes: terminal, JSON, Markdown and HTML alike."""
    import json

    args = gate.mixed()
    gate.write(
        "new/rollouts_coverage.json",
        json.dumps(
            {
                "expected": 6,
                "successful": 5,
                "measured": 4,
                "masked": 1,
                "unscored": 0,
                "failed": 1,
                "intentionally_omitted": 0,
                "unknown": 0,
            }
        ),
    )
    result = gate.run(*args, "--html=report.html", "--parity-json=s.json", "--parity-markdown=s.md")
    assert result.ret == 1
    summary = json.loads((gate.path / "s.json").read_text())
    reports = {
        "terminal": result.stdout.str(),
        "markdown": re.sub(r"\\(.)", r"\1", html.unescape((gate.path / "s.md").read_text())),
        "html": _report_text(str(gate.path / "report.html")),
        "json": json.dumps(summary, ensure_ascii=False),
    }
    facts = [
        f"key {summary['join']['old_key']} ({summary['join']['old_key_reason']})",
        f"key {summary['join']['new_key']} ({summary['join']['new_key_reason']})",
        "new side masked: mask_sample (failure_kind=provider_unavailable)",
        "only in the old file",
        "the new run did not finish",
        *summary["notes"],
    ]
    for name, text in reports.items():
        if name == "json":  # the JSON holds the same facts as fields
            assert summary["join"]["old_key_reason"] and summary["inventory"]["new"]["counts"]["failed"] == 1
            continue
        for fact in facts:
            assert fact in text, (name, fact)

"""A flip's evidence, the same in every report whatever --tb says (docs/report.md, "--tb").

The pair is a real NeMo Gym file (math_with_judge, which writes no verifier logs) against a copy
whose first row lost its reward: the flip's evidence is the losing row's own fields.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import NEW, Gate

REAL = Path(__file__).resolve().parents[1] / "data" / "real_files" / "resources_servers" / "math_with_judge" / "data"


def _pair(gate: Gate) -> list[str]:
    lines = (REAL / "example_rollouts.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    changed = [dict(rows[1], reward=0.0, library_reward=0.0), *rows[2:]]
    return gate.pair([rows[1], *rows[2:]], changed)


def _reports(gate: Gate, style: str) -> tuple[dict[str, Any], str, str, pytest.RunResult]:
    result = gate.run(
        *_pair(gate), f"--tb={style}", "--parity-json=s.json", "--parity-markdown=s.md", "--parity-html=s.html"
    )
    data = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))
    markdown = (gate.path / "s.md").read_text(encoding="utf-8")
    html = (gate.path / "s.html").read_text(encoding="utf-8")
    return data, markdown, html, result


def test_the_reports_hold_the_same_evidence_under_every_tb_style(gate: Gate) -> None:
    default = _reports(gate, "auto")
    (flip,) = [task for task in default[0]["tasks"] if task["category"] == "flipped"]
    evidence = flip["evidence"]
    assert "    new (losing) row's evidence:" in evidence
    assert "    | library_reward=0.0" in evidence
    assert "    | expected_answer=" in evidence and " vs extracted_answer=" in evidence
    assert "library_reward=0.0" in default[1] and "library_reward=0.0" in default[2]
    for style in ("short", "line", "no", "long"):
        data, markdown, html, _ = _reports(gate, style)
        assert [task["evidence"] for task in data["tasks"]] == [task["evidence"] for task in default[0]["tasks"]]
        assert markdown == default[1]
        assert "library_reward=0.0" in html


@pytest.mark.parametrize("style", ["auto", "short", "long"])
def test_the_terminal_shows_the_evidence_under_each_style_but_line(gate: Gate, style: str) -> None:
    result = _reports(gate, style)[3]
    assert "    new (losing) row's evidence:" in result.outlines
    assert "    | library_reward=0.0" in result.outlines


def test_tb_line_names_the_task_and_its_row(gate: Gate) -> None:
    data, _, _, result = _reports(gate, "line")
    (flip,) = [task for task in data["tasks"] if task["category"] == "flipped"]
    crash = [line for line in result.outlines if line.startswith(f"{NEW}:")]
    # the new side rescores the same trajectory: a verifier disagreement
    assert crash == [
        f"{NEW}:1: {flip['task']}: new regressed: old=1.0 new=0.0 (verifier disagreement on 1 of 1 rollouts)"
    ]
    assert "    | library_reward=0.0" not in result.outlines


@pytest.mark.slow
def test_the_evidence_crosses_from_xdist_workers(gate: Gate) -> None:
    pytest.importorskip("xdist")
    default = _reports(gate, "auto")[0]
    result = gate.run(*_pair(gate), "-n", "2", "--tb=line", "--parity-json=x.json")
    assert result.ret == 1
    data = json.loads((gate.path / "x.json").read_text(encoding="utf-8"))
    assert [task["evidence"] for task in data["tasks"]] == [task["evidence"] for task in default["tasks"]]

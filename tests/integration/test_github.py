"""CI reports: the Markdown summary (`--parity-markdown`, `$GITHUB_STEP_SUMMARY`) and GitHub annotations."""

from __future__ import annotations

import pytest

from pytest_rollout_parity.plugin.reporting import ANNOTATE_FAILURES

from .conftest import Gate, all_text, output_lines


def test_markdown_file_holds_verdict_counts_and_flip_tails(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-markdown=summary.md")
    assert result.ret == 1
    text = (gate.path / "summary.md").read_text(encoding="utf-8")
    assert (
        "**rollout parity: FAIL**: 1 task regressed, 1 improved, 1 rerun candidate (agent errors), 1 masked, 2 missing; 1 identical"
        in text
    )
    assert "(exit status 1)" in text
    assert "| flipped | 2 | new regressed 1, new improved 1 |" in text
    # regex-log's tail comes from its report: the last lines of the new side's verifier log
    assert "<summary><code>regex-log</code>: <strong>failed</strong>: new regressed: old=1.0 new=0.0</summary>" in text
    assert "| regex line 30" in text  # data escaped for Markdown: `|` as its character reference
    assert "<summary><code>git-multibranch</code>" in text  # the xfail reason of an agent-error flip
    assert "paired over" in text


def test_step_summary_appended_once_and_same_as_file(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    step = gate.write("step-summary.md", "earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    args = gate.mixed()
    gate.run(*args, "--parity-markdown=summary.md")
    written = (gate.path / "summary.md").read_text(encoding="utf-8")
    assert step.read_text(encoding="utf-8") == "earlier step\n" + written


@pytest.mark.slow
def test_step_summary_under_xdist_written_once(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    step = gate.write("step-summary.md", "")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    args = gate.mixed()
    result = gate.run(*args, gate.beside(), "-n", "2")
    assert result.ret == 1
    text = step.read_text(encoding="utf-8")
    assert text.count("## rollout parity") == 1
    assert "| regex line 30" in text


def test_no_markdown_without_being_asked(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args)
    assert result.ret == 1
    assert not list(gate.path.glob("*.md"))
    assert "::error" not in all_text(result)


@pytest.mark.parametrize("target", ["missing-dir/summary.md", "adir"])
def test_unwritable_markdown_path_is_a_usage_error(gate: Gate, target: str) -> None:
    (gate.path / "adir").mkdir()
    args = gate.mixed()
    result = gate.run(*args, f"--parity-markdown={target}")
    assert result.ret == 4
    assert any(line.startswith("ERROR: --parity-markdown:") for line in output_lines(result)), output_lines(result)
    assert "Traceback" not in all_text(result)
    assert not (gate.path / "missing-dir").exists() and list((gate.path / "adir").iterdir()) == []


def test_annotations_under_github_actions(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    args = gate.mixed()
    result = gate.run(*args, "-p", f"no:{ANNOTATE_FAILURES}")
    errors = [line for line in result.outlines if line.startswith("::error")]
    # the two failed flips; the agent-error flip xfails and is no error
    assert errors == [
        "::error title=cancel-async-tasks failed::new improved: old=0.0 new=1.0",
        "::error title=regex-log failed::new regressed: old=1.0 new=0.0",
    ]
    # the agent-error flip: a warning titled with its outcome
    assert "::warning title=git-multibranch agent_error::new regressed: old=1.0 new=0.0" in result.outlines


@pytest.mark.slow
def test_annotations_step_aside_for_annotate_failures(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-github-actions-annotate-failures annotates every failed item: each flip once, by it."""
    pytest.importorskip("pytest_github_actions_annotate_failures")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = gate.run_subprocess(*gate.mixed())
    assert result.ret == 1
    assert not any(line.startswith("::error") for line in result.outlines)  # not the gate's own
    theirs = [line for line in result.errlines if line.startswith("::error")]
    assert len(theirs) == 2
    assert sum("regex-log" in line and "new regressed: old=1.0 new=0.0" in line for line in theirs) == 1
    assert sum("cancel-async-tasks" in line and "new improved: old=0.0 new=1.0" in line for line in theirs) == 1


def test_unwritable_step_summary_warns_and_keeps_the_verdict(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(gate.path / "no-such-dir" / "step.md"))
    args = gate.mixed()
    for flags in ([], ["-q"]):  # -q leaves the progress line open when the session finishes
        result = gate.run(*args, *flags)
        assert result.ret == 1
        assert any(line.startswith("WARNING: $GITHUB_STEP_SUMMARY: cannot append") for line in result.outlines)
        assert not any("]WARNING" in line for line in result.outlines), result.outlines


def test_lone_surrogate_label_in_markdown_annotations_and_html(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    step = gate.write("step.md", "")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    old = '{"task_id": "t\\ud800", "reward": 1.0}\n{"task_id": "ok", "reward": 1.0}\n'
    new = '{"task_id": "t\\ud800", "reward": 0.0}\n{"task_id": "ok", "reward": 1.0}\n'
    pytest.importorskip("pytest_html")
    result = gate.run(
        *gate.pair(old, new), "--parity-markdown=s.md", "--html=report.html", "-p", f"no:{ANNOTATE_FAILURES}"
    )
    assert "Traceback" not in all_text(result)
    assert result.ret == 1
    for name in ("s.md", "step.md", "report.html"):
        assert "\\ud800" in (gate.path / name).read_bytes().decode("utf-8"), name
    assert any(line.startswith("::error title=t\\ud800 failed::") for line in result.outlines)


def test_annotations_carry_outcomes_and_the_gate_items(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """In margin mode the aggregate is annotated like a flip, and so is a failing coverage item."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    args = gate.mixed()
    result = gate.run(*args, "--parity-margin=0.1", "--parity-max-uncompared=0", "-p", f"no:{ANNOTATE_FAILURES}")
    commands = [line for line in result.outlines if line.startswith("::")]
    titles = [line.split("::", 2)[1] for line in commands]
    assert "warning title=git-multibranch agent_error" in titles
    assert any(title.startswith("error title=parity-aggregate failed") for title in titles), commands
    assert any(title.startswith("error title=parity-coverage failed") for title in titles), commands
    aggregate = next(line for line in commands if "parity-aggregate" in line)
    assert "against [-0.1, +0.1]" in aggregate or "no decision" in aggregate

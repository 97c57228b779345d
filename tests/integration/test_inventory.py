"""`<stem>_coverage.json` beside a side: the run's own inventory next to the gate's counts."""

from __future__ import annotations

import json
import os

import pytest

from .conftest import Gate, harbor_row, legacy_row, markdown_as_read

OLD_ROWS = [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0), legacy_row("build-cython-ext", 0.0)]
NEW_ROWS = [
    harbor_row("fix-git", 1.0),
    harbor_row("regex-log", 1.0, index=1),
    harbor_row("build-cython-ext", 0.0, index=2),
]


def counts(measured: int, failed: int = 0, unknown: int = 0, masked: int = 0) -> dict[str, int]:
    return {
        "expected": measured + failed + unknown + masked,
        "successful": measured + masked,
        "measured": measured,
        "masked": masked,
        "unscored": 0,
        "failed": failed,
        "intentionally_omitted": 0,
        "unknown": unknown,
    }


def run(gate: Gate, coverage: object, *extra: str) -> tuple[dict, str, str]:
    args = gate.pair(OLD_ROWS, NEW_ROWS)
    content = coverage if isinstance(coverage, (str, bytes)) else json.dumps(coverage)
    gate.write("new/rollouts_coverage.json", content)
    result = gate.run(*args, "--parity-json=s.json", "--parity-markdown=s.md", *extra)
    assert "Traceback" not in result.stdout.str()
    markdown = markdown_as_read(gate.path / "s.md")  # escaped for Markdown: read as rendered
    return json.loads((gate.path / "s.json").read_text()), result.stdout.str(), markdown


def test_a_finished_run_shows_its_inventory_without_a_note(gate: Gate) -> None:
    summary, out, markdown = run(gate, counts(measured=3))
    assert summary["inventory"]["old"] is None
    new = summary["inventory"]["new"]
    assert new["counts"]["measured"] == 3 and new["gate_measured"] == 3 and new["counts"]["failed"] == 0
    assert new["files"] == ["new/rollouts_coverage.json"]
    line = (
        "new coverage (new/rollouts_coverage.json): expected 3, successful 3, measured 3, masked 0, "
        "unscored 0, failed 0, intentionally_omitted 0, unknown 0; the gate scored 3 rows"
    )
    assert line in out
    assert line in markdown
    assert not any("coverage" in note for note in summary["notes"])


def test_an_unfinished_run_is_noted(gate: Gate) -> None:
    summary, out, markdown = run(gate, counts(measured=3, failed=1, unknown=2))
    note = (
        "new side: new/rollouts_coverage.json counts 1 failed and 2 unknown of 6 expected rollouts: "
        "the new run did not finish"
    )
    assert note in summary["notes"]
    assert f"note: {note}" in out
    assert "the new run did not finish" in markdown


def test_measured_disagreeing_with_the_rows_is_noted(gate: Gate) -> None:
    summary, _, _ = run(gate, counts(measured=5))
    assert (
        "new side: new/rollouts_coverage.json counts 5 measured rollouts, the gate scored 3 row(s): "
        "a partial or filtered file, or a stale coverage file?"
    ) in summary["notes"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object of counts"),
        (json.dumps({**counts(3), "failed": -1}), "`failed` is not a count"),
        (json.dumps({**counts(3), "expected": 99}), "`expected` (99) is not the sum of its parts (3)"),
        (" " * (64 * 1024 + 1), "larger than 64 KiB"),
    ],
)
def test_an_unusable_coverage_file_is_a_note_never_an_error(gate: Gate, content: str, reason: str) -> None:
    summary, _, _ = run(gate, content)
    assert summary["inventory"]["new"] is None
    assert any(
        note.startswith("new side: new/rollouts_coverage.json ignored: ") and reason in note
        for note in summary["notes"]
    ), summary["notes"]


@pytest.mark.slow
def test_a_fifo_in_its_place_is_a_note_not_a_hang(gate: Gate) -> None:
    args = gate.pair(OLD_ROWS, NEW_ROWS)
    os.mkfifo(gate.path / "new" / "rollouts_coverage.json")
    result = gate.run_subprocess(*args, "--parity-json=s.json")
    assert result.ret == 0
    notes = json.loads((gate.path / "s.json").read_text())["notes"]
    assert "new side: new/rollouts_coverage.json ignored: not a regular file" in notes


def test_the_completeness_item_holds_the_runs_own_unreported_rollouts_against_the_missing_limit(gate: Gate) -> None:
    """Every task answered, but the new run's inventory says 2 of 5 rollouts failed or never came back."""
    summary, out, _ = run(gate, counts(measured=3, failed=1, unknown=1), "-rf")
    assert summary["coverage"]["passed"] is False
    assert (
        "2 of 5 expected rollout(s) failed or never reported (the new run's coverage file) (over the limit 20% = 1)"
    ) in out
    assert "parity-coverage" in out


def test_unreported_rollouts_within_the_limit_or_with_the_limit_off_pass(gate: Gate) -> None:
    summary, _, _ = run(gate, counts(measured=3, unknown=1), "--parity-max-missing=off")
    assert summary["coverage"]["passed"] is True
    assert "the new run did not finish" in " ".join(summary["notes"])  # still a note

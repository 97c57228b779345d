"""Reading a known-flips list: entries, reasons, the lines that are not entries, and stale notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rollout_parity.core.errors import CompareInputError
from pytest_rollout_parity.core.judging.verdicts import MAX_BYTES, read_known_flips

EXAMPLE = Path(__file__).resolve().parents[2] / "conftest_examples" / "known_flips" / "known_flips.txt"


def test_the_example_list_reads() -> None:
    known = read_known_flips(EXAMPLE, "known_flips.txt")
    assert set(known.entries) == {"gpt2-codegolf", "nginx-request-logging"}
    entry = known.entries["gpt2-codegolf"]
    assert entry.line == 2
    assert entry.reason == "the Harbor image ships the newer tokenizer; reviewed in MIGRATION-42"


def test_labels_keep_inner_hashes_and_reasons_keep_theirs(tmp_path: Path) -> None:
    path = tmp_path / "k.txt"
    path.write_text("\ufeffknights_knaves#3\t# swapped answers, see #42  \n  # indented comment\n", encoding="utf-8")
    known = read_known_flips(path, "k.txt")
    assert list(known.entries) == ["knights_knaves#3"]
    assert known.entries["knights_knaves#3"].reason == "swapped answers, see #42"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task-a\n", "k.txt:1: a known flip needs a reason"),
        ("task-a #\n", "k.txt:1: a known flip needs a reason"),
        ("task-a # x\n\ntask-a # y\n", "k.txt:3: task 'task-a' is listed twice (first on line 1)"),
    ],
)
def test_malformed_lines_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "k.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CompareInputError, match=None) as info:
        read_known_flips(path, "k.txt")
    assert str(info.value).startswith(message)


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "k.txt"
    with open(path, "wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: no need to write the bytes
    with pytest.raises(CompareInputError, match="larger than 4 MiB"):
        read_known_flips(path, "k.txt")


def test_each_verdict_says_who_decided_it(tmp_path: Path) -> None:
    from pytest_rollout_parity import Verdict, compare_rollouts
    from pytest_rollout_parity.plugin.collect import default_verdict

    row = {"task_id": "t1", "_ng_task_index": 0, "_ng_rollout_index": 0}
    flip = compare_rollouts([dict(row, reward=1.0)], [dict(row, reward=0.0)]).tasks[0]
    path = tmp_path / "k.txt"
    path.write_text("t1  # reviewed\n", encoding="utf-8")
    listed = read_known_flips(path, "k.txt").verdict(flip)
    assert listed is not None and (listed.outcome, listed.source) == ("passed", "known_flips")
    assert listed.text == "known flip (k.txt:1): reviewed"
    assert Verdict.passed("known flip (k.txt:1): reviewed").source == "hook"
    assert default_verdict(flip, lambda: "regressed", strict=False).source == "category"

"""A run split over CI jobs: each part says it is one, and the parts merge into the unsplit run's verdict.

The splitters are the real plugins (pytest-split, pytest-shard, both in the test extras); the
merge is the documented command, `python -m pytest_rollout_parity merge`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.__main__ import main as merge_main

from .conftest import Gate, section, summaries_checked

pytest.importorskip("pytest_split")

KNOWN = "known_flips.txt"


def _json(gate: Gate, name: str) -> dict[str, Any]:
    return json.loads((gate.path / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _margin_args(gate: Gate, margin: bool = True) -> list[str]:
    """The mixed pair (7 tasks, every category) in margin mode, so a gate-level item (`parity-aggregate`)
    runs in one of the parts, with a known-flips list, so the audit has an entry."""
    gate.write(KNOWN, "cancel-async-tasks  # reviewed: the new image fixed the race\n")
    mode = ["--parity-margin=0.05"] if margin else []
    return [*gate.mixed(), *mode, f"--parity-known-flips={KNOWN}", "-p", "no:cacheprovider"]


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    capsys.readouterr()
    try:
        with summaries_checked(args, "--json"):  # the merged run's JSON has the summary's layout
            status = merge_main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


def _without_merge(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "merge"}


@pytest.mark.parametrize("margin", [True, False], ids=["margin", "plain"])
def test_three_split_groups_merge_into_exactly_the_unsplit_run(
    gate: Gate, capsys: pytest.CaptureFixture[str], margin: bool
) -> None:
    args = _margin_args(gate, margin)
    items = 8 if margin else 7
    whole = gate.run(*args, "--parity-json=whole.json")
    statuses = []
    for group in (1, 2, 3):
        part = gate.run(
            *args,
            "--splits=3",
            f"--group={group}",
            f"--parity-json=part{group}.json",
            f"--parity-markdown=part{group}.md",
        )
        statuses.append(part.ret)
        first = section(part)[0]
        assert first.startswith("partial: "), first
        assert f"; pytest-split group {group} of 3; " in first
        assert "; the whole file: " in first and " (merge the parts for its verdict): " in first
        # this run's own outcome first: it never contradicts the part's exit status
        own = first.split("; ", 1)[0]
        assert own.endswith(" ran here, none failed") if part.ret == 0 else not own.endswith("none failed"), own
        markdown = (gate.path / f"part{group}.md").read_text(encoding="utf-8")
        assert "\n**partial: " in markdown and f"pytest-split group {group} of 3" in markdown
        data = _json(gate, f"part{group}.json")
        part_run = data["run"]["part"]
        assert part_run["partial"] is True and part_run["group"] == {
            "engine": "pytest-split",
            "index": group,
            "count": 3,
        }
        ran_tasks = sum(task["ran_here"] for task in data["tasks"])
        assert part_run["tasks_ran"] == ran_tasks and part_run["tasks"] == 7 and part_run["items"] == items
        assert all(task["outcome"] == "not_run" for task in data["tasks"] if not task["ran_here"])
        assert data["verdict"] != "pass"  # a part never passes the whole file: its own failures fail it
    parts = [str(gate.path / f"part{group}.json") for group in (1, 2, 3)]
    merged = str(gate.path / "merged.json")
    status, out, err = _merge(capsys, "merge", *parts, f"--markdown={gate.path / 'merged.md'}", f"--json={merged}")
    assert err == []
    unsplit = _json(gate, "whole.json")
    together = json.loads(Path(merged).read_text(encoding="utf-8"))
    # the verdict, the counts, every task's outcome and the audit (hook and known-flips verdicts) are the unsplit run's
    assert status == whole.ret == 1 and 1 in statuses
    assert _without_merge(together) == unsplit
    assert together["verdict"] == unsplit["verdict"] and together["decided_by"] == unsplit["decided_by"]
    assert together["run"]["verdicts_changed_by_hook"] == unsplit["run"]["verdicts_changed_by_hook"] == 1
    assert together["merge"]["gaps"] == [] and sum(p["ran"]["items_ran"] for p in together["merge"]["parts"]) == items
    head = unsplit["verdict"].upper()
    assert out[0].startswith(f"parity: {head}: ")
    assert (
        (gate.path / "merged.md")
        .read_text(encoding="utf-8")
        .startswith(f"## rollout parity\n\n**rollout parity: {head}**")
    )


def test_pytest_shard_parts_merge_too(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pytest_shard")
    args = _margin_args(gate)
    gate.run(*args, "--parity-json=whole.json")
    for shard in (0, 1):
        part = gate.run(*args, "--num-shards=2", f"--shard-id={shard}", f"--parity-json=shard{shard}.json")
        assert f"; pytest-shard group {shard + 1} of 2; " in section(part)[0]
    merged = str(gate.path / "merged.json")
    status, _, _ = _merge(
        capsys, "merge", str(gate.path / "shard0.json"), str(gate.path / "shard1.json"), f"--json={merged}"
    )
    assert status == 1
    assert _without_merge(json.loads(Path(merged).read_text(encoding="utf-8"))) == _json(gate, "whole.json")


def test_gate_items_are_never_counted_as_tasks(gate: Gate) -> None:
    args = _margin_args(gate)
    result = gate.run(*args, "-k", "fix-git or parity-aggregate", "--parity-json=k.json")
    first = section(result)[0]
    assert first.startswith("partial: 2 of 8 items ran here, 1 failed; tasks 1 of 7; gate items 1 of 1; "), first
    part = _json(gate, "k.json")["run"]["part"]
    assert (part["items_ran"], part["tasks_ran"], part["gate_items_ran"]) == (2, 1, ["parity-aggregate"])


def test_a_whole_run_is_not_a_part(gate: Gate) -> None:
    result = gate.run(*gate.mixed(), "--parity-json=s.json", "-p", "no:cacheprovider")
    assert section(result)[0].startswith("parity: ")
    part = _json(gate, "s.json")["run"]["part"]
    assert part["partial"] is False and part["group"] is None and part["items_ran"] == part["items"] == 7


def _two_groups(gate: Gate, args: list[str]) -> list[str]:
    for group in (1, 2):
        gate.run(*args, "--splits=2", f"--group={group}", f"--parity-json=g{group}.json")
    return [str(gate.path / "g1.json"), str(gate.path / "g2.json")]


def test_gaps_are_named_and_never_pass(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    gate.run(*args, "-k", "fix-git", "--parity-json=one.json")
    status, out, _ = _merge(capsys, "merge", str(gate.path / "one.json"), f"--json={gate.path / 'm.json'}")
    assert status == 1  # one task passed, six ran nowhere: the merge does not pass them
    assert any(line.startswith("ran in no part (6): ") and "regex-log" in line for line in out)
    merged = _json(gate, "m.json")
    assert merged["verdict"] == "inconclusive" and len(merged["merge"]["gaps"]) == 6


def test_an_item_two_parts_ran_is_refused(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    gate.run(*args, "-k", "fix-git or regex-log", "--parity-json=a.json")
    gate.run(*args, "-k", "fix-git", "--parity-json=b.json")
    target = gate.path / "merged.md"
    status, out, err = _merge(
        capsys, "merge", str(gate.path / "a.json"), str(gate.path / "b.json"), f"--markdown={target}"
    )
    assert status == 4 and out == []
    assert len(err) == 1 and err[0].startswith("ERROR: 1 item(s) ran in more than one part: 'fix-git' (")
    assert not target.exists()


def test_parts_of_other_inputs_or_options_are_refused(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    first, _ = _two_groups(gate, args)
    margin = [str(gate.path / "m.json")]
    gate.run(*args, "--parity-margin=0.05", "--splits=2", "--group=2", "--parity-json=m.json")
    status, _, err = _merge(capsys, "merge", first, *margin)
    assert status == 4 and len(err) == 1 and "hold different classifications of the whole file" in err[0]
    assert err[0].endswith("first at run.options.margin (0.05 against None)")
    new = gate.path / "new" / "rollouts.jsonl"
    new.write_bytes(new.read_bytes().replace(b'"reward": 0.0', b'"reward": 1.0', 1))
    gate.run(*args, "--splits=2", "--group=2", "--parity-json=changed.json")
    status, _, err = _merge(capsys, "merge", first, str(gate.path / "changed.json"))
    assert status == 4 and len(err) == 1 and "first at run.inputs.new (" in err[0]


@pytest.mark.parametrize(
    "content, needle",
    [
        ('{"counts": ', ":1: invalid JSON: "),
        ("[1, 2]", "the top level: input should be "),
        ('{"counts": {}}', "verdict: field required"),
    ],
)
def test_a_file_that_is_not_a_part_is_one_error_line(
    gate: Gate, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    path = gate.write("bad.json", content)
    status, out, err = _merge(capsys, "merge", str(path))
    assert status == 4 and out == [] and len(err) == 1
    assert err[0].startswith(f"ERROR: {path}") and needle in err[0]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            lambda data: data["tasks"][0]["old"].update(reward="high"),
            "tasks.0.old.reward: input should be a valid number",
        ),
        (lambda data: data.update(surprise=True), "surprise: a key the layout does not name"),
    ],
    ids=["wrong-type", "unknown-key"],
)
def test_a_part_outside_the_published_layout_is_one_error_line(
    gate: Gate, capsys: pytest.CaptureFixture[str], change: Any, needle: str
) -> None:
    first, second = _two_groups(gate, [*gate.mixed(), "-p", "no:cacheprovider"])
    data = json.loads(Path(second).read_text(encoding="utf-8"))
    change(data)
    Path(second).write_text(json.dumps(data), encoding="utf-8")
    status, out, err = _merge(capsys, "merge", first, second, f"--json={gate.path / 'm.json'}")
    assert status == 4 and out == [] and len(err) == 1, err
    assert err[0].startswith(f"ERROR: {second}: {needle}") and err[0].endswith(": not a --parity-json summary")
    assert not (gate.path / "m.json").exists()


def test_a_collect_only_run_is_not_a_part(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    gate.run(*gate.mixed(), "--collect-only", "--parity-json=c.json", "-p", "no:cacheprovider")
    status, _, err = _merge(capsys, "merge", str(gate.path / "c.json"))
    assert status == 4 and "no item ran in this run" in err[0]


def test_an_output_over_a_part_is_refused(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    first, second = _two_groups(gate, args)
    before = Path(first).read_bytes()
    status, _, err = _merge(capsys, "merge", first, second, f"--markdown={first}")
    assert status == 4 and "is one of the parts" in err[0]
    assert Path(first).read_bytes() == before


@pytest.mark.slow
def test_the_documented_command_runs_as_a_module(gate: Gate) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    parts = _two_groups(gate, args)
    result = gate.pytester.run(
        sys.executable, "-m", "pytest_rollout_parity", "merge", *parts, f"--markdown={gate.path / 'summary.md'}"
    )
    assert result.ret == 1
    assert result.outlines[0].startswith("parity: FAIL: ")
    assert (gate.path / "summary.md").exists()


def test_many_failures_under_a_rescanning_tb_style_say_how_to_stay_linear(
    gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_rollout_parity.core.reports import summary

    monkeypatch.setattr(summary, "MANY_FAILURES", 1)  # the mixed pair's two failures stand for thousands
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    noted = [line for line in section(gate.run(*args)) if "--tb=line or --tb=no keeps a large run linear" in line]
    assert len(noted) == 1 and noted[0].startswith("note: 2 failures: ")
    for style in ("line", "no"):
        assert not any("keeps a large run linear" in line for line in section(gate.run(*args, f"--tb={style}")))


def test_a_parts_step_summary_says_it_is_a_part(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    step = gate.path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    gate.run(*gate.mixed(), "-p", "no:cacheprovider", "--splits=2", "--group=2")
    page = step.read_text(encoding="utf-8")
    assert "\n**partial: " in page and "; pytest-split group 2 of 2; " in page
    assert "**rollout parity: " not in page


def _merged_by_selection(
    gate: Gate, capsys: pytest.CaptureFixture[str], args: list[str], selections: list[str]
) -> tuple[int, dict[str, Any]]:
    """The parts `-k` ``selections`` run, merged in that order: the merge's status and JSON."""
    parts = []
    for index, selection in enumerate(selections):
        gate.run(*args, "-k", selection, f"--parity-json=sel{index}.json")
        parts.append(str(gate.path / f"sel{index}.json"))
    status, _, err = _merge(capsys, "merge", *parts, f"--json={gate.path / 'sel.json'}")
    assert err == []
    return status, _without_merge(_json(gate, "sel.json"))


def test_a_known_flip_accepted_in_a_later_part_keeps_the_lists_path_and_digest(
    gate: Gate, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _margin_args(gate, margin=False)
    whole = gate.run(*args, "--parity-json=whole.json")
    unsplit = _json(gate, "whole.json")
    status, together = _merged_by_selection(gate, capsys, args, ["not cancel", "cancel"])
    assert (status, together) == (whole.ret, unsplit)
    listed = [entry for entry in together["accepted_flips"] if entry["source"] == "known_flips"]
    assert listed[0]["count"] == 1 and listed[0]["path"] == KNOWN and len(listed[0]["sha256"]) == 64


def test_a_deliberate_copy_merges_into_the_unsplit_pass(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"task_id": f"t{i}", "reward": float(i % 2)} for i in range(4)]
    args = [*gate.pair(rows, rows), "--parity-allow-copy", "-p", "no:cacheprovider"]
    whole = gate.run(*args, "--parity-json=whole.json")
    status, together = _merged_by_selection(gate, capsys, args, ["t0 or t1", "not t0 and not t1"])
    assert (status, together["verdict"]) == (whole.ret, "pass") == (0, "pass")
    assert together == _json(gate, "whole.json")
    args.remove("--parity-allow-copy")
    status, together = _merged_by_selection(gate, capsys, args, ["t0 or t1", "not t0 and not t1"])
    assert (status, together["verdict"]) == (1, "inconclusive")


def test_the_inputs_at_hand_check_the_parts_digests(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    parts = _two_groups(gate, args)
    sides = [f"--old={gate.path / 'old' / 'rollouts.jsonl'}", f"--new={gate.path / 'new' / 'rollouts.jsonl'}"]
    status, out, err = _merge(capsys, "merge", *parts, *sides)
    assert (status, err) == (1, []) and out[0].startswith("parity: FAIL: ")
    new = gate.path / "new" / "rollouts.jsonl"
    new.write_bytes(new.read_bytes() + b"\n")  # one blank line more: the same rows, another file
    status, out, err = _merge(capsys, "merge", *parts, *sides, f"--json={gate.path / 'm.json'}")
    assert status == 4 and out == [] and len(err) == 1
    assert err[0].startswith(f"ERROR: --new: {new} is not the new side the parts read (digest crc32:")
    assert not (gate.path / "m.json").exists()


def test_parts_edited_alike_do_not_pass_for_the_files_at_hand(gate: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    """Every part turns the same flip into an identical task, outcome and counts included: the parts
    agree, so only the files can tell, and with --old/--new the merge reads them and refuses."""
    args = [*gate.mixed(), "-p", "no:cacheprovider"]
    parts = _two_groups(gate, args)
    for part in parts:
        data = json.loads(Path(part).read_text(encoding="utf-8"))
        flip = next(task for task in data["tasks"] if task["task"] == "regex-log")
        assert flip["category"] == "flipped"
        data["counts"]["flipped"] -= 1
        data["counts"][f"flipped_{flip['winner']}_win"] -= 1
        data["counts"]["identical"] += 1
        flip.update(category="identical", winner=None)
        if flip["ran_here"]:
            flip.update(outcome="passed", item_outcome="passed", evidence=None)
        Path(part).write_text(json.dumps(data), encoding="utf-8")
    status, _, err = _merge(capsys, "merge", *parts)
    assert status in (0, 1) and err == []  # the parts alone cannot show it
    sides = [f"--old={gate.path / 'old' / 'rollouts.jsonl'}", f"--new={gate.path / 'new' / 'rollouts.jsonl'}"]
    status, out, err = _merge(capsys, "merge", *parts, *sides)
    assert (status, out) == (4, [])
    assert err == [
        "ERROR: --old/--new: these files classify task 'regex-log' otherwise than the parts "
        "(flipped against identical, or other rewards): an edited part?"
    ]

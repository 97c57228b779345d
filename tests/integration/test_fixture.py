"""The `rollout_pair` fixture: one case per joined task, the comparison's attributes, full rows."""

from __future__ import annotations

import json

import pytest

from .conftest import Gate, failure_record, harbor_row, legacy_row

USER_TEST = """
import json

def _side(side):
    if side is None:
        return None
    return {"rows": side.rows, "reward": side.reward, "masked": side.masked, "agent_error": side.agent_error,
            "failure_kind": side.failure_kind, "reward_rows": side.reward_rows, "repeated": side.repeated,
            "compared_rows": side.compared_rows, "facts": [repr(facts) for facts in side.facts]}

def test_pair(rollout_pair):
    record = {"task": rollout_pair.task, "category": rollout_pair.category, "winner": rollout_pair.winner,
              "loser": rollout_pair.loser, "old": _side(rollout_pair.old), "new": _side(rollout_pair.new)}
    with open("pairs.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\\n")
"""


def pairs(gate: Gate) -> dict[str, dict]:
    lines = (gate.path / "pairs.jsonl").read_text(encoding="utf-8").split("\n")
    return {record["task"]: record for record in map(json.loads, filter(None, lines))}


def test_parametrized_per_task_with_ids(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    result = gate.run("test_pairs.py", *args, "--collect-only", "-q")
    listed = [line for line in result.outlines if line.startswith("test_pairs.py::")]
    assert listed == [
        f"test_pairs.py::test_pair[{t}]"
        for t in sorted(
            [
                "fix-git",
                "regex-log",
                "cancel-async-tasks",
                "git-multibranch",
                "build-cython-ext",
                "old-only",
                "new-only",
            ]
        )
    ]


def test_attributes(gate: Gate) -> None:
    args = gate.mixed()
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    result = gate.run("test_pairs.py", *args)
    result.assert_outcomes(passed=8, failed=2, xfailed=4)  # 7 fixture cases + the parity items
    got = pairs(gate)
    assert len(got) == 7
    regex = got["regex-log"]
    assert (regex["category"], regex["winner"], regex["loser"]) == ("flipped", "old", "new")
    assert regex["old"]["reward"] == 1.0 and regex["new"]["reward"] == 0.0
    assert regex["new"]["reward_rows"] == 1 and regex["new"]["repeated"] is False
    assert regex["new"]["masked"] is None
    cancel = got["cancel-async-tasks"]
    assert (cancel["winner"], cancel["loser"]) == ("new", "old")
    same = got["fix-git"]
    assert (same["category"], same["winner"], same["loser"]) == ("identical", None, None)
    agent = got["git-multibranch"]
    assert agent["category"] == "flipped_agent_error"
    assert agent["new"]["agent_error"] == "terminus2_error_type=TimeoutError"
    masked = got["build-cython-ext"]
    assert masked["category"] == "masked"
    assert masked["new"]["masked"] == "mask_sample (failure_kind=provider_unavailable)"
    assert masked["new"]["reward"] is None  # a masked row's reward is no score
    assert masked["new"]["compared_rows"] == [] and len(masked["new"]["rows"]) == 1
    assert got["old-only"]["new"] is None and got["old-only"]["category"] == "missing"
    assert got["new-only"]["old"] is None


def test_rows_are_full_dicts_from_disk(gate: Gate) -> None:
    big = {"output": [{"type": "message", "content": "x" * 50_000, "note": "caf\u00e9 \u2028 line"}]}
    old = [legacy_row("fix-git", 1.0, response=big)]
    new = [
        harbor_row("fix-git", 1.0, rollout=0, failure_kind="harbor:verifier_timeout"),
        harbor_row("fix-git", 0.0, rollout=1, nested={"a": [1, 2, {"b": None}]}),
        harbor_row("regex-log", 1.0, index=1),
    ]
    args = gate.pair([*old, legacy_row("regex-log", 1.0)], new)
    gate.write("new/rollouts_failures.jsonl", [failure_record("regex-log", index=1, rollout=1)])
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    result = gate.run("test_pairs.py", *args)
    assert result.ret == 1
    got = pairs(gate)
    fix = got["fix-git"]
    assert fix["old"]["rows"] == old
    assert fix["new"]["rows"] == new[:2]
    assert fix["new"]["repeated"] is True and fix["new"]["reward"] == 0.5 and fix["new"]["reward_rows"] == 2
    assert fix["new"]["failure_kind"] == "harbor:verifier_timeout"
    assert fix["new"]["compared_rows"] == new[:2]
    regex = got["regex-log"]
    # the sidecar's failed rollout is left out: the task is compared on the one that scored
    assert regex["category"] == "identical" and regex["new"]["reward_rows"] == 1
    assert len(regex["new"]["rows"]) == 2
    assert regex["new"]["rows"][0] == new[2]
    assert regex["new"]["rows"][1]["_ng_failure_class"] == "environment_server_failed"
    # the rows the gate compared: masking applied, as the mean took them
    assert regex["new"]["compared_rows"] == [new[2]]
    assert regex["new"]["facts"] == [
        "RowFacts(line=3, origin='main', reward=1.0, mask=None, agent_error=None, failure_kind=None)",
        "RowFacts(line=1, origin='sidecar', reward=None, mask='mask_sample (failure_kind=environment_server_failed)', "
        "agent_error=None, failure_kind='environment_server_failed')",
    ]


def test_rows_reread_after_load(gate: Gate) -> None:
    """`.rows` reads the rows again from the file (they are not kept in memory)."""
    args = gate.pair([legacy_row("fix-git", 1.0)], [harbor_row("fix-git", 1.0)])
    gate.pytester.makepyfile(
        test_pairs="""
import json, pathlib

def test_pair(rollout_pair):
    path = pathlib.Path("new/rollouts.jsonl")
    row = json.loads(path.read_text())
    row["marker"] = "written after load"
    text = json.dumps(row)
    # same length keeps the byte offset valid
    original = path.read_text()
    padded = text[:-1] + " " * max(0, len(original) - 1 - len(text)) + "}" + "\\n"
    path.write_text(padded)
    assert rollout_pair.new.rows[0]["marker"] == "written after load"
"""
    )
    original = (gate.path / "new/rollouts.jsonl").read_text()
    gate.write("new/rollouts.jsonl", original.rstrip("\n") + " " * 60 + "\n")
    result = gate.run("test_pairs.py", *args, "-k", "test_pair")
    result.assert_outcomes(passed=1)


def test_skipped_without_options(gate: Gate) -> None:
    gate.pytester.makepyfile(test_pairs=USER_TEST + "\ndef test_other():\n    pass\n")
    result = gate.run("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == 0
    (line,) = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert "--parity-old" in line and "--parity-new" in line
    assert not (gate.path / "pairs.jsonl").exists()


@pytest.mark.slow
def test_fixture_under_xdist(gate: Gate) -> None:
    pytest.importorskip("xdist")
    args = gate.mixed()
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    result = gate.run("test_pairs.py", *args, "-n", "2")
    result.assert_outcomes(passed=8, failed=2, xfailed=4)
    assert set(pairs(gate)) == {
        "fix-git",
        "regex-log",
        "cancel-async-tasks",
        "git-multibranch",
        "build-cython-ext",
        "old-only",
        "new-only",
    }


def test_ids_are_task_labels(gate: Gate) -> None:
    """ids = task labels (README.md, "The `rollout_pair` fixture"), also for labels that item names alter."""
    labels = ["fix git", "fix-git", "unknown (old) #1"]
    args = gate.pair(
        [dict(legacy_row("t", 1.0), task_name=label) for label in labels[:2]],
        [harbor_row(label, 1.0, index=i) for i, label in enumerate(labels[:2])],
    )
    gate.write("old/rollouts_failures.jsonl", [failure_record()])  # anonymous: `unknown (old) #1`
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    result = gate.run("test_pairs.py", *args, "--collect-only", "-q")
    listed = [line for line in result.outlines if line.startswith("test_pairs.py::")]
    assert listed == [f"test_pairs.py::test_pair[{label}]" for label in sorted(labels)]


def test_sidecar_rows_match_load_rollouts(gate: Gate) -> None:
    """A standing sidecar record is one of the side's rows, folded in as docs/semantics.md says ("Reading a
    side and its sidecar": masked, no reward, its failure kind), the same dict `load_rollouts` gives for it."""
    from pytest_rollout_parity import load_rollouts

    new = [harbor_row("fix-git", 1.0)]
    args = gate.pair([legacy_row("fix-git", 1.0)], new)
    gate.write("new/rollouts_failures.jsonl", [failure_record("fix-git", index=0, rollout=1)])
    gate.pytester.makepyfile(test_pairs=USER_TEST)
    gate.run("test_pairs.py", *args)
    rows = pairs(gate)["fix-git"]["new"]["rows"]
    expected = json.loads(json.dumps(load_rollouts(gate.path / "new/rollouts.jsonl")))
    assert rows == expected
    assert rows[1]["mask_sample"] is True and rows[1]["reward"] is None
    assert rows[1]["failure_kind"] == "environment_server_failed"

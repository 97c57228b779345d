"""Verdicts to trust through the plugin: superseded attempts, omissions and judge failures
(docs/semantics.md, "Reading a side and its sidecar" and "Categories")."""

from __future__ import annotations

from .conftest import Gate, harbor_row


def test_a_late_older_attempt_invents_no_flip(gate: Gate) -> None:
    old = [harbor_row("fix-git", 1.0, _ng_run_id="r1", _ng_attempt_index=0),
           harbor_row("regex-log", 1.0, index=1, _ng_run_id="r1", _ng_attempt_index=0)]
    new = [harbor_row("fix-git", 1.0, _ng_run_id="r2", _ng_attempt_index=1),
           harbor_row("regex-log", 1.0, index=1, _ng_run_id="r2", _ng_attempt_index=0),
           harbor_row("fix-git", 0.0, _ng_run_id="r2", _ng_attempt_index=0)]  # attempt 0's late result
    result = gate.run(*gate.pair(old, new))
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*new side: 1 superseded attempt(s) left out*"])


def test_an_omission_and_a_judge_failure_are_masked_not_scored(gate: Gate) -> None:
    old = [harbor_row("fix-git", 1.0), harbor_row("regex-log", 1.0, index=1), harbor_row("gdpval-7", 1.0, index=2)]
    new = [harbor_row("fix-git", 1.0),
           harbor_row("gdpval-7", 0.0, index=2, invalid_judge_response=True)]
    args = gate.pair(old, new)
    gate.write("new/rollouts_failures.jsonl", [
        {"_ng_failure_class": "intentionally_omitted", "_ng_omitted": True, "_ng_task_index": 1,
         "_ng_rollout_index": 0, "_ng_task_id": {"taskset": "terminal-bench-2-1", "task_id": "regex-log"}},
    ])
    result = gate.run(*args, "-rx")
    result.assert_outcomes(passed=1, xfailed=2)
    result.stdout.fnmatch_lines_random(["*gdpval-7*judge invalid*", "*regex-log*omitted on purpose*"])

"""The side is read once and superseded executions are taken out afterwards: whatever the order of
rows and records, the rows that stand are those the rule picks when it sees the whole side first
(docs/semantics.md, "Reading a side and its sidecar"), in this process and in the reader child,
with either parser, for one file and for shards."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity.core import SideRequest
from pytest_rollout_parity.core.reading.loading import load_side

EXECUTION = st.tuples(
    st.integers(0, 2),  # task index
    st.integers(0, 1),  # rollout index
    st.one_of(st.none(), st.integers(0, 2)),  # attempt stamp, or none
)


def _row(ti: int, ri: int, attempt: Optional[int], reward: float) -> dict[str, Any]:
    row: dict[str, Any] = {
        "task_id": f"task-{ti}",
        "_ng_task_index": ti,
        "_ng_rollout_index": ri,
        "_ng_run_id": "run-a",
        "reward": reward,
    }
    if attempt is not None:
        row["_ng_attempt_index"] = attempt
    return row


def _record(ti: int, ri: int, attempt: Optional[int]) -> dict[str, Any]:
    record: dict[str, Any] = {
        "_ng_failure_class": "agent_run_error",
        "task_id": f"task-{ti}",
        "_ng_task_index": ti,
        "_ng_rollout_index": ri,
        "_ng_run_id": "run-a",
    }
    if attempt is not None:
        record["_ng_attempt_index"] = attempt
    return record


def expected(
    main: list[tuple[int, int, Optional[int]]], sidecar: list[tuple[int, int, Optional[int]]]
) -> set[tuple[str, int]]:
    """(origin, line) of every standing row, the rule applied to the whole side at once."""
    if any(attempt is not None for *_, attempt in main + sidecar):
        best: dict[tuple[int, int], tuple[int, int, int]] = {}
        ranked = [(("main", line), (ti, ri), (attempt or 0, 1, line)) for line, (ti, ri, attempt) in enumerate(main, 1)]
        ranked += [
            (("sidecar", line), (ti, ri), (attempt or 0, 0, line)) for line, (ti, ri, attempt) in enumerate(sidecar, 1)
        ]
        for _, key, rank in ranked:
            best[key] = max(best.get(key, rank), rank)
        return {where for where, key, rank in ranked if best[key] == rank}
    scored = {(ti, ri) for ti, ri, _ in main}
    last = {(ti, ri): line for line, (ti, ri, _) in enumerate(sidecar, 1)}
    standing = {("main", line) for line in range(1, len(main) + 1)}
    return standing | {
        ("sidecar", line)
        for line, (ti, ri, _) in enumerate(sidecar, 1)
        if last[(ti, ri)] == line and (ti, ri) not in scored
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _standing(side: Any) -> set[tuple[str, int]]:
    return {(f.origin.value, f.line) for f in side.facts}


@pytest.mark.parametrize("parser", ["pydantic-core", "full"])
@settings(max_examples=30, deadline=None)
@given(
    main=st.lists(EXECUTION, min_size=1, max_size=8),
    sidecar=st.lists(EXECUTION, max_size=5),
    rewards=st.lists(st.sampled_from([0.0, 1.0]), min_size=8, max_size=8),
)
def test_one_pass_leaves_out_what_the_whole_side_rule_leaves_out(parser, main, sidecar, rewards, child_here) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setenv("PARITY_PARSER", parser)
        old, new = Path(tmp, "old.jsonl"), Path(tmp, "new.jsonl")
        for path in (old, new):
            _write(path, [_row(ti, ri, attempt, rewards[i]) for i, (ti, ri, attempt) in enumerate(main)])
            if sidecar:
                _write(path.with_name(f"{path.stem}_failures.jsonl"), [_record(*execution) for execution in sidecar])
        in_child, here = child_here(SideRequest(str(old))), load_side(SideRequest(str(new)))
        want = expected(main, sidecar)
        assert _standing(here) == want
        assert _standing(in_child) == want
        left_out = len(main) + len(sidecar) - len(want) if any(a is not None for *_, a in main + sidecar) else 0
        notes = " ".join(here.choice.notes)
        assert (f"{left_out} superseded attempt(s)" in notes) == (left_out > 0)

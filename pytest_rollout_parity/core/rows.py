"""Reducing one row dict to its :class:`RowFacts`: reward, mask reason, agent error, failure kind.

The same reduction serves the streaming loader and rows given in memory, so both classify alike.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Optional

from .model import RowFacts

#: Join-field candidates, in the order they are tried (SEMANTICS.md §2). Append, never reorder.
KEY_CANDIDATES: tuple[str, ...] = (
    "_ng_task_id",
    "task_name",
    "task_id",
    "verifier_metadata.task_id",
    "verifier_metadata.task_name",
    "verifier_metadata.instance_id",
    "verifier_metadata.id",
    # Appended real shapes (ROLLOUT-FORMATS.md §2.2): the legacy harbor_agent keeps the task folder
    # name only in its trial metadata, anyterminal and anyswe only in the request metadata.
    "metadata.task_name",
    "responses_create_params.metadata.task_name",
    "responses_create_params.metadata.instance_id",
)

#: NeMo Gym's stamp of the input row a rollout came from (restarts at 0 in every run).
TASK_INDEX_KEY = "_ng_task_index"

#: Where a row carries its task's prompt.
PROMPT_KEY = "responses_create_params.input"

#: What identifies a task when no id candidate is on every row, in the order tried (SEMANTICS.md §2).
IDENTITY_FALLBACKS: tuple[str, ...] = (TASK_INDEX_KEY, PROMPT_KEY)

EMBEDDED_OUTPUT_FIELDS: tuple[str, ...] = ("test_output", "verifier_stdout", "verifier_output")

AGENT_ERROR_MAX_CHARS = 120

_MISSING = object()


class RewardTypeError(ValueError):
    """The row's reward is neither absent, null nor a number."""


def lookup(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted path, or None. A literal key holding the dots wins over descending."""
    value = row.get(path, _MISSING)
    if value is not _MISSING:
        return value
    if "." not in path:
        return None
    node: Any = row
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
        if node is None:
            return None
    return node


def reward_of(row: dict[str, Any]) -> Optional[float]:
    """The row's reward as a float (NaN and infinities kept), or None; raise for any other type."""
    reward = row.get("reward")
    if reward is None:
        return None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise RewardTypeError(f"reward must be a number or null, got {_json_type(reward)} {_short(reward)}")
    try:
        return float(reward)
    except OverflowError:  # an integer beyond float range: as non-finite as a 1e400 literal
        return math.inf if reward > 0 else -math.inf


def mask_reason(row: dict[str, Any], reward: Optional[float]) -> Optional[str]:
    """Why a row does not count; a ``failure_kind`` without ``mask_sample`` labels a scored reward."""
    if row.get("mask_sample"):
        kind = row.get("failure_kind")
        return f"mask_sample (failure_kind={kind})" if kind else "mask_sample"
    if reward is None:
        return "no reward"
    if not math.isfinite(reward):
        if math.isnan(reward):
            return "non-finite reward (nan)"
        return "non-finite reward (inf)" if reward > 0 else "non-finite reward (-inf)"
    return None


#: The legacy `harbor_agent`'s 0/1 counters of agent failures; 1 is an agent error.
AGENT_ERROR_COUNTERS: tuple[str, ...] = (
    "context_length_exceeded_error",
    "memory_limit_exceeded_error",
    "agent_timeout_error",
)

#: Every top-level field an agent error is read from (the skeleton reader decodes them all).
AGENT_ERROR_FIELDS: tuple[str, ...] = (
    "error", *AGENT_ERROR_COUNTERS, "agent_timed_out", "evaluation_completed", "agent_error",
)


def _last_line(value: Any) -> str:
    """The last non-blank line of an error text, cut to a readable length."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:AGENT_ERROR_MAX_CHARS] if lines else "(whitespace only)"


def _counter_set(value: Any) -> bool:
    """A 0/1 counter that is on: true, or a number of at least 1."""
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value >= 1


def agent_error(row: dict[str, Any], reward: Optional[float] = None) -> Optional[str]:
    """An agent-level error the row reports while still scored, named by the field that says so.

    Legacy `error` (any non-empty value, whitespace too), `response.metadata.*error_type`, the
    legacy `harbor_agent` counters, anyswe's `agent_timed_out`, `evaluation_completed: false` on a
    reward-0 row (an infrastructure failure, not a real 0) and browsecomp's `agent_error` text.
    `agent_error_kind` alone is not one: it is also set on rows that scored 1.0.
    """
    error = row.get("error")
    if error:
        return f"error: {_last_line(error)}"
    response = row.get("response")
    if isinstance(response, dict):
        metadata = response.get("metadata")
        if isinstance(metadata, dict):
            for name, value in metadata.items():
                if value and isinstance(name, str) and name.endswith("error_type"):
                    return f"{name}={value}"
    for name in AGENT_ERROR_COUNTERS:
        if _counter_set(row.get(name)):
            return f"{name}={json.dumps(row[name])}"
    if row.get("agent_timed_out") is True:
        return "agent_timed_out=true"
    if row.get("evaluation_completed") is False and reward == 0:
        return "evaluation_completed=false on a reward-0 row (the evaluation did not run)"
    text = row.get("agent_error")
    if isinstance(text, str) and text:
        return f"agent_error: {_last_line(text)}"
    return None


def reduce_row(row: dict[str, Any], line: int, offset: int, origin: int, keep: bool) -> RowFacts:
    """The facts of a rollouts-file row; ``keep`` holds on to the dict (rows given in memory)."""
    reward = reward_of(row)
    mask = mask_reason(row, reward)
    kind = row.get("failure_kind")
    return RowFacts(
        line,
        offset,
        origin,
        reward,
        _interned(mask),
        agent_error(row, reward),
        _interned(kind) if isinstance(kind, str) and kind else None,
        row if keep else None,
    )


def failure_kind_of_record(record: dict[str, Any]) -> str:
    """The failure kind a sidecar record is masked with: its own kind, else its class."""
    for name in ("failure_kind", "_ng_failure_class"):
        value = record.get(name)
        if isinstance(value, str) and value:
            return value
    return "failure"


def fold_failure_record(record: dict[str, Any]) -> dict[str, Any]:
    """A standing sidecar record as the masked row it joins its side as (SEMANTICS.md §1)."""
    folded = dict(record)
    folded.update(reward=None, mask_sample=True, failure_kind=failure_kind_of_record(record))
    folded.setdefault("_ng_failure_class", folded["failure_kind"])
    return folded


def logs_dir_of(row: dict[str, Any]) -> Optional[str]:
    """The row's `verifier_logs_dir`, when it names one."""
    value = row.get("verifier_logs_dir")
    return value if isinstance(value, str) and value else None


def _interned(text: Optional[str]) -> Optional[str]:
    """Mask reasons and failure kinds repeat across thousands of rows: keep one copy of each."""
    return None if text is None else sys.intern(text)


def embedded_output(row: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(field name, text) of the first non-blank embedded verifier output field."""
    for name in EMBEDDED_OUTPUT_FIELDS:
        value = row.get(name)
        if isinstance(value, str) and value.strip():
            return name, value
    return None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."

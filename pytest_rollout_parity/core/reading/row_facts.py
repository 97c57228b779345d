"""Reducing one row to its :class:`RowFacts`, the same for the streaming loader and for rows given
in memory, so both classify alike."""

from __future__ import annotations

import json
import math
import sys
import zlib
from typing import Any, Optional

from ..model import NO_OFFSET, RowFacts, RowOrigin
from .fields import (
    AGENT_ERROR_COUNTERS,
    AGENT_ERROR_TEXT,
    AGENT_TIMED_OUT,
    EMBEDDED_OUTPUT_FIELDS,
    ERROR,
    EVALUATION_COMPLETED,
    FAILURE_CLASS,
    FAILURE_KIND,
    INVALID_JUDGE,
    MASK_SAMPLE,
    OMITTED,
    RESPONSE_ID,
    RESPONSE_METADATA,
    REWARD,
    ROLLOUT_INDEX,
    TOKEN_CAPTURE,
    VERIFIER_LOGS_DIR,
)

AGENT_ERROR_MAX_CHARS = 120
_RESPONSE, _METADATA = RESPONSE_METADATA.split(".")


class RewardTypeError(ValueError):
    """The row's reward is neither absent, null nor a number."""


def lookup(row: dict[str, Any], path: str) -> Any:
    """The value at a dotted path, or None. A literal key holding the dots wins over descending."""
    if path in row or "." not in path:
        return row.get(path)
    node: Any = row
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def reward_of(row: dict[str, Any]) -> Optional[float]:
    """The row's reward as a float (NaN and infinities kept), or None; raise for any other type."""
    reward = row.get(REWARD)
    if reward is None:
        return None
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        text = json.dumps(reward, ensure_ascii=False)
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise RewardTypeError(f"reward must be a number or null, got {json_kind(reward)} {shown}")
    try:
        value = float(reward)
    except OverflowError:  # an integer beyond float range: as non-finite as a 1e400 literal
        return math.inf if reward > 0 else -math.inf
    if value == 1.0:
        return 1.0  # one shared object for the common binary rewards (24 bytes a row otherwise)
    if value == 0.0 and math.copysign(1.0, value) > 0:
        return 0.0
    return value


def training_mask(row: dict[str, Any], reward: Optional[float]) -> bool:
    """`mask_sample` set by NeMo Gym's token-id capture on a rollout with a finite reward and no failure
    kind: it leaves the rollout out of training only, so the row is scored (docs/semantics.md, "Categories")."""
    return (
        row.get(TOKEN_CAPTURE) is not None
        and not row.get(FAILURE_KIND)
        and reward is not None
        and math.isfinite(reward)
        and bool(row.get(MASK_SAMPLE))
    )


def mask_reason(row: dict[str, Any], reward: Optional[float]) -> Optional[str]:
    """Why a row does not count; a ``failure_kind`` without ``mask_sample`` labels a scored reward."""
    if row.get(OMITTED) is True:
        return "omitted on purpose"
    if row.get(INVALID_JUDGE) is True:
        return "judge invalid"
    if row.get(MASK_SAMPLE) and not training_mask(row, reward):
        kind = row.get(FAILURE_KIND)
        return f"mask_sample (failure_kind={kind})" if kind else "mask_sample"
    if reward is None:
        return "no reward"
    if not math.isfinite(reward):
        return f"non-finite reward ({reward})"  # nan, inf or -inf
    return None


def _last_line(value: Any) -> str:
    """The last non-blank line of an error text, cut to a readable length."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:AGENT_ERROR_MAX_CHARS] if lines else "(whitespace only)"


def agent_error(row: dict[str, Any], reward: Optional[float] = None) -> Optional[str]:
    """An agent-level error the row reports while still scored, named by its field (docs/semantics.md,
    "Agent errors"); `agent_error_kind` alone is none: rows that scored 1.0 carry it too."""
    error = row.get(ERROR)
    if error:
        return f"error: {_last_line(error)}"
    response = row.get(_RESPONSE)
    metadata = response.get(_METADATA) if isinstance(response, dict) else None
    if isinstance(metadata, dict):
        for name, value in metadata.items():
            if value and isinstance(name, str) and name.endswith("error_type"):
                return f"{name}={value}"
    for name in AGENT_ERROR_COUNTERS:
        value = row.get(name)
        if isinstance(value, (int, float)) and value >= 1:  # a 0/1 counter that is on (true is 1)
            return f"{name}={json.dumps(value)}"
    if row.get(AGENT_TIMED_OUT) is True:
        return f"{AGENT_TIMED_OUT}=true"
    if row.get(EVALUATION_COMPLETED) is False and reward == 0:
        return f"{EVALUATION_COMPLETED}=false on a reward-0 row (the evaluation did not run)"
    text = row.get(AGENT_ERROR_TEXT)
    if isinstance(text, str) and text:
        return f"{AGENT_ERROR_TEXT}: {_last_line(text)}"
    return None


def reduce_row(
    row: dict[str, Any],
    *,
    line: int,
    offset: Optional[int] = NO_OFFSET,
    origin: RowOrigin = RowOrigin.MAIN,
    keep: bool = False,
) -> RowFacts:
    """The facts of a row as it stands (a sidecar record already folded); ``keep`` holds on to it."""
    reward = reward_of(row)
    mask = mask_reason(row, reward)
    kind = row.get(FAILURE_KIND)
    rollout = row.get(ROLLOUT_INDEX)
    response = lookup(row, RESPONSE_ID)
    return RowFacts(
        line,
        offset,
        origin,
        reward,
        # mask reasons and failure kinds repeat across thousands of rows: one copy of each
        None if mask is None else sys.intern(mask),
        agent_error(row, reward),
        sys.intern(kind) if isinstance(kind, str) and kind else None,
        row if keep else None,
        0,
        rollout if type(rollout) is int else None,
        zlib.crc32(response.encode("utf-8", "surrogatepass")) if isinstance(response, str) else None,
    )


def fold_failure_record(record: dict[str, Any]) -> dict[str, Any]:
    """A standing sidecar record as the masked row it joins its side as: masked with its own
    failure kind, else its class (the rule is in docs/semantics.md, "Reading a side and its sidecar")."""
    kinds = (record.get(name) for name in (FAILURE_KIND, FAILURE_CLASS))
    kind = next((value for value in kinds if isinstance(value, str) and value), "failure")
    folded = {**record, REWARD: None, MASK_SAMPLE: True, FAILURE_KIND: kind}
    folded.setdefault(FAILURE_CLASS, kind)
    return folded


def logs_dir_of(row: dict[str, Any]) -> Optional[str]:
    """The row's `verifier_logs_dir`, when it names one."""
    value = row.get(VERIFIER_LOGS_DIR)
    return value if isinstance(value, str) and value else None


def embedded_output(row: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(field name, text) of the first non-blank embedded verifier output field."""
    for name in EMBEDDED_OUTPUT_FIELDS:
        value = row.get(name)
        if isinstance(value, str) and value.strip():
            return name, value
    return None


_KINDS = {bool: "a boolean", type(None): "null", dict: "an object", list: "an array", str: "a string"}


def json_kind(value: Any) -> str:
    """What a JSON value is, for a message: "an object", "a string", "null", "a number"..."""
    return _KINDS.get(type(value), "a number")

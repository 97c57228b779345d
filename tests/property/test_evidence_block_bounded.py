"""A row's evidence block is bounded whatever the row holds (docs/semantics.md, "A flip's evidence")."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_rollout_parity.core.judging.row_context import (
    EVIDENCE_CHARS,
    EVIDENCE_LINE_CHARS,
    EVIDENCE_LINES,
    row_evidence,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=20), inner, max_size=8),
    max_leaves=60,
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=20), JSON, max_size=12))
def test_any_row_gives_a_bounded_block(row: dict[str, Any]) -> None:
    shown = row_evidence(row)
    assert len(shown) <= EVIDENCE_LINES
    assert all(isinstance(line, str) and len(line) <= EVIDENCE_LINE_CHARS + 40 for line in shown)
    assert sum(map(len, shown)) <= EVIDENCE_CHARS + EVIDENCE_LINE_CHARS

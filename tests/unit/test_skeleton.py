"""The skeleton reader (pydantic-core's validator of the fields loading reads) classifies exactly
like the full parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_rollout_parity import summary_dict
from pytest_rollout_parity.core.api import compare_files
from pytest_rollout_parity.core.reading.jsonl_lines import _core_decoder, iter_objects, reader_name, skeleton_decoder
from pytest_rollout_parity.core.reading.row_facts import reduce_row
from pytest_rollout_parity.core.reading.task_idents import is_prompt, prompt_label

REPO = Path(__file__).resolve().parents[2]
REAL_ROWS = REPO / "tests" / "data" / "real_rows"

EDGE_ROWS = [
    {"task_name": "terminal-bench/a", "reward": 1, "response": None},
    {"task_name": "terminal-bench/b", "reward": None, "mask_sample": True, "failure_kind": "verifier_error"},
    {
        "task_name": "terminal-bench/c",
        "reward": 0.0,
        "response": {
            "metadata": {"terminus2_error_type": "TimeoutError"},
            "output": [{"type": "message", "text": "x" * 5000}],
        },
    },
    {
        "task_name": "terminal-bench/d",
        "reward": 0.5,
        "error": "Traceback (most recent call last):\n  boom\nValueError: bad\n",
    },
    {"task_name": "terminal-bench/e", "reward": 1.0, "response": "not an object"},
    {"task_name": "terminal-bench/f", "reward": 2**70},
    {"task_name": "terminal-bench/g", "reward": 0.25, "failure_kind": "harbor:verifier_timeout", "mask_sample": False},
    {
        "task_name": "terminal-bench/h",
        "_ng_task_index": 3,
        "_ng_rollout_index": 1,
        "reward": 1.0,
        "verifier_metadata": {"task_id": "vm-h", "other": [1, 2]},
    },
]


@pytest.fixture(autouse=True)
def skeleton(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test compares the skeleton with the full parse, whatever PARITY_PARSER the suite runs under."""
    monkeypatch.delenv("PARITY_PARSER", raising=False)


def _facts(path: Path, key: str | None, fast: bool) -> list[tuple]:
    decode = skeleton_decoder(key) if fast else None
    return [
        (line, offset, "nan" if f.reward != f.reward else f.reward, f.mask, f.agent_error, f.failure_kind)
        for line, offset, row in iter_objects(path, str(path), decode)
        for f in [reduce_row(row, line=line, offset=offset)]
    ]


def _write(path: Path, rows: list[dict], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + extra, encoding="utf-8")
    return path


def test_skeleton_decoder_is_available_here() -> None:
    assert skeleton_decoder(None) is not None


def test_the_default_reader_is_a_skeleton_and_full_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reader_name() == "pydantic-core"
    monkeypatch.setenv("PARITY_PARSER", "FULL")
    assert reader_name() == "full" and skeleton_decoder(None) is None


@pytest.mark.parametrize("name", sorted(p.name for p in REAL_ROWS.glob("*.jsonl")))
def test_real_rows_reduce_alike(name: str) -> None:
    path = REAL_ROWS / name
    for key in (None, "responses_create_params.metadata.instance_id", "instance_id", "metadata.task_name"):
        assert _facts(path, key, fast=True) == _facts(path, key, fast=False)


def test_edge_rows_reduce_alike(tmp_path: Path) -> None:
    path = _write(tmp_path / "edge.jsonl", EDGE_ROWS, extra='{"task_name": "terminal-bench/nan", "reward": NaN}\n')
    fast, full = _facts(path, None, fast=True), _facts(path, None, fast=False)
    assert fast == full
    assert full[-1][3] == "non-finite reward (nan)"
    assert full[2][4] == "terminus2_error_type=TimeoutError"


def test_literal_dotted_key_reads_the_same(tmp_path: Path) -> None:
    rows = [{"task.name": "lit", "task": {"name": "nested"}, "reward": 1.0}]
    path = _write(tmp_path / "dotted.jsonl", rows)
    decode = skeleton_decoder("task.name")
    assert decode is not None
    ((_, _, skeleton),) = iter_objects(path, "dotted.jsonl", decode)
    assert skeleton["task.name"] == "lit" and "response" not in skeleton


def test_example_pair_summary_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = REPO / "examples/old/rollouts.jsonl", REPO / "examples/new/rollouts.jsonl"
    fast = summary_dict(compare_files(old, new))
    monkeypatch.setenv("PARITY_PARSER", "full")
    full = summary_dict(compare_files(old, new))
    assert fast == full
    assert fast["counts"]["flipped"] == 3


def test_literal_dotted_candidate_is_detected_by_both_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"verifier_metadata.task_id": "x", "reward": 1}, {"verifier_metadata.task_id": "y", "reward": 0}]
    path = _write(tmp_path / "dotted.jsonl", rows)
    decode = skeleton_decoder(None)
    assert decode is not None
    assert [row for _, _, row in iter_objects(path, "dotted.jsonl", decode)] == rows
    fast = summary_dict(compare_files(path, path))
    monkeypatch.setenv("PARITY_PARSER", "full")
    assert summary_dict(compare_files(path, path)) == fast
    assert fast["join"]["old_key"] == "verifier_metadata.task_id" and fast["counts"]["identical"] == 2


def test_the_prompt_is_read_whole_and_labels_alike(tmp_path: Path) -> None:
    prompt = [{"role": "user", "content": "Could we set the performance for Friday?", "weight": 0.1}]
    rows = [
        {"_ng_task_id": "a", "reward": 1, "responses_create_params": {"input": prompt, "metadata": {"task_name": "t"}}},
        {"reward": 0, "responses_create_params": {"input": []}},
    ]
    path = _write(tmp_path / "prompts.jsonl", rows)
    decode = skeleton_decoder(None)
    assert decode is not None
    first, second = (row for _, _, row in iter_objects(path, "prompts.jsonl", decode))
    assert first["responses_create_params"] == {"input": prompt, "metadata": {"task_name": "t"}}
    assert prompt_label(first["responses_create_params"]["input"]).startswith("could-we-set-the")
    assert not is_prompt(second["responses_create_params"]["input"])


def test_a_field_another_path_reads_inside_is_an_object_of_fields() -> None:
    row = b'{"a.b": 1, "a": {"b": {"c": 2, "d": 3}, "x": 4}, "y": 5}'
    assert _core_decoder(("a.b",))(row) == {"a.b": 1, "a": {"b": {"c": 2, "d": 3}}}
    for paths in (("a.b", "a.b.c"), ("a.b.c", "a.b")):  # whichever comes first, a.b is taken whole
        assert _core_decoder(paths)(row)["a"] == {"b": {"c": 2, "d": 3}}
    assert _core_decoder(("a.b.c",))(row)["a"] == {"b": {"c": 2}}
    assert _core_decoder(("a.b", "a"))(row)["a"] == {"b": {"c": 2, "d": 3}, "x": 4}


def test_the_trajectory_is_left_undecoded_and_a_non_object_kept_whole(tmp_path: Path) -> None:
    """A non-object where a path descends is kept whole, as the full parse has it."""
    rows = [
        {"task_name": "t/a", "reward": 1.0, "response": {"metadata": {"k": "v"}, "output": [{"text": "x" * 100}]}},
        {"task_name": "t/b", "reward": 0.0, "response": "not an object", "agent_ref": ["odd"]},
    ]
    path = _write(tmp_path / "shapes.jsonl", rows)
    decode = skeleton_decoder(None)
    assert decode is not None
    one, two = path.read_bytes().splitlines()
    assert decode(one)["response"] == {"metadata": {"k": "v"}}  # no output: it was never built
    second = decode(two)
    assert second["response"] == "not an object" and second["agent_ref"] == ["odd"]

"""The skeleton reader classifies exactly like the full parse, with either backend: msgspec (the
`fast` extra) and pydantic-core (every install)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pytest_rollout_parity import summary_dict
from pytest_rollout_parity.core.api import compare_files
from pytest_rollout_parity.core.reading.jsonl_lines import iter_objects
from pytest_rollout_parity.core.reading.row_facts import reduce_row
from pytest_rollout_parity.core.reading.skeleton import DecodeError, EncodedJSON, reader_name, skeleton_decoder
from pytest_rollout_parity.core.reading.task_idents import decoded, is_prompt, prompt_label

HAS_MSGSPEC = importlib.util.find_spec("msgspec") is not None

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


@pytest.fixture(autouse=True, params=["msgspec", "pydantic-core"])  # msgspec's skip: tests/conftest.py
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test compares one skeleton backend with the full parse, whatever PARITY_PARSER the
    suite runs under."""
    monkeypatch.setenv("PARITY_PARSER", request.param)
    assert reader_name() == request.param
    return str(request.param)


@pytest.fixture
def msgspec_only(reader: str) -> None:
    """The test is of what msgspec keeps encoded (pydantic-core decodes the prompt whole)."""
    if reader != "msgspec":
        pytest.skip("of msgspec's encoded prompt")


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
    monkeypatch.delenv("PARITY_PARSER")
    assert reader_name() == ("msgspec" if HAS_MSGSPEC else "pydantic-core")
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


def test_prompt_stays_encoded_and_labels_alike(tmp_path: Path, msgspec_only: None) -> None:
    prompt = [{"role": "user", "content": "Could we set the performance for Friday?", "weight": 0.1}]
    rows = [
        {"_ng_task_id": "a", "reward": 1, "responses_create_params": {"input": prompt, "metadata": {"task_name": "t"}}},
        {"reward": 0, "responses_create_params": {"input": []}},
    ]
    path = _write(tmp_path / "prompts.jsonl", rows)
    decode = skeleton_decoder(None)
    assert decode is not None
    first, second = (row for _, _, row in iter_objects(path, "prompts.jsonl", decode))
    encoded = first["responses_create_params"]["input"]
    assert isinstance(encoded, EncodedJSON) and decoded(encoded) == prompt
    assert first["responses_create_params"]["metadata"] == {"task_name": "t"}
    assert prompt_label(encoded) == prompt_label(prompt) and prompt_label(encoded).startswith("could-we-set-the")
    assert not is_prompt(second["responses_create_params"]["input"])


def test_an_encoded_field_another_path_reads_inside_is_decoded_whole(msgspec_only: None) -> None:
    from typing import Any

    from pytest_rollout_parity.core.reading.skeleton import _tree

    assert _tree(["a.b"], ["a.b"]) == {"a.b": EncodedJSON, "a": {"b": EncodedJSON}}
    for paths in (["a.b", "a.b.c"], ["a.b.c", "a.b"]):  # whichever comes first
        assert _tree(paths, ["a.b"])["a"] == {"b": Any}
    assert _tree(["a.b", "a"], ["a.b"])["a"] is Any


def test_a_prompt_msgspec_refuses_to_decode_labels_as_the_full_reader_does(tmp_path: Path, msgspec_only: None) -> None:
    text = '{"reward": 1, "responses_create_params": {"input": [{"role": "user", "content": "hi", "t": 1e400}]}}\n'
    path = tmp_path / "odd.jsonl"
    path.write_text(text, encoding="utf-8")
    decode = skeleton_decoder(None)
    assert decode is not None
    ((_, _, fast),) = iter_objects(path, "odd.jsonl", decode)
    ((_, _, full),) = iter_objects(path, "odd.jsonl")
    encoded, value = fast["responses_create_params"]["input"], full["responses_create_params"]["input"]
    assert isinstance(encoded, EncodedJSON)  # the skeleton took the line; only the prompt is odd
    assert prompt_label(encoded) == prompt_label(value) and prompt_label(value).startswith("hi-")


def test_the_trajectory_is_left_undecoded_and_a_non_object_kept_whole(tmp_path: Path, reader: str) -> None:
    """pydantic-core keeps a non-object whole where a path descends; msgspec leaves the line to the
    full parse."""
    rows = [
        {"task_name": "t/a", "reward": 1.0, "response": {"metadata": {"k": "v"}, "output": [{"text": "x" * 100}]}},
        {"task_name": "t/b", "reward": 0.0, "response": "not an object", "agent_ref": ["odd"]},
    ]
    path = _write(tmp_path / "shapes.jsonl", rows)
    decode = skeleton_decoder(None)
    assert decode is not None
    one, two = path.read_bytes().splitlines()
    assert decode(one)["response"] == {"metadata": {"k": "v"}}  # no output: it was never built
    if reader == "msgspec":
        with pytest.raises(DecodeError):
            decode(two)
        return
    second = decode(two)
    assert second["response"] == "not an object" and second["agent_ref"] == ["odd"]

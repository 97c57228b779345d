"""CompareInputError carries the file, the line and the reason as attributes; its text stays one line.

And a side's request (core/reading/loaded_side.py) is one frozen object from the API to the child.
"""

from __future__ import annotations

import dataclasses
import json
import marshal
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity import CompareInputError, compare_files, compare_rollouts
from pytest_rollout_parity.core.judging.verdicts import read_known_flips
from pytest_rollout_parity.core.reading.loaded_side import SideRequest
from pytest_rollout_parity.core.reading.loading import load_side

ROW = {"task_id": "t1", "reward": 1.0, "_ng_task_index": 0, "_ng_rollout_index": 0}


def rollouts(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_bad_line_names_its_file_and_line(tmp_path: Path) -> None:
    bad = rollouts(tmp_path / "old.jsonl", json.dumps(ROW), "{not json")
    good = rollouts(tmp_path / "new.jsonl", json.dumps(ROW))
    with pytest.raises(CompareInputError) as caught:
        compare_files(bad, good)
    error = caught.value
    assert (error.path, error.line) == (str(bad), 2)
    assert error.reason.startswith("invalid JSON")
    assert str(error) == f"{bad}:2: {error.reason}"
    assert "\n" not in str(error)


def test_an_error_about_the_whole_file_has_no_line(tmp_path: Path) -> None:
    good = rollouts(tmp_path / "new.jsonl", json.dumps(ROW))
    with pytest.raises(CompareInputError) as caught:
        compare_files(tmp_path / "absent.jsonl", good)
    error = caught.value
    assert (error.path, error.line, error.reason) == (str(tmp_path / "absent.jsonl"), None, "no such file")
    assert str(error) == f"{tmp_path / 'absent.jsonl'}: no such file"


def test_rows_given_in_memory_are_named_by_their_index() -> None:
    with pytest.raises(CompareInputError) as caught:
        compare_rollouts([ROW], [ROW, "not a row"])  # type: ignore[list-item]
    error = caught.value
    assert (error.path, error.line, error.reason) == ("new rows", 2, "expected a dict, got str")
    assert str(error) == "new rows: row 2: expected a dict, got str"


def test_an_error_found_by_the_option_is_shown_under_the_option(tmp_path: Path) -> None:
    old = rollouts(tmp_path / "old.jsonl", json.dumps(dict(ROW, agent_ref={"name": "a"})))
    with pytest.raises(CompareInputError) as caught:
        compare_files(old, old, old_agent="b")
    error = caught.value
    assert error.path == str(old) and error.line is None
    assert str(error) == f"old_agent: {error.reason}"
    assert error.reason.startswith(f"no row of {old} has agent 'b'")


def test_a_known_flips_line(tmp_path: Path) -> None:
    listing = tmp_path / "known.txt"
    listing.write_text("# reviewed\nt1\n", encoding="utf-8")
    with pytest.raises(CompareInputError) as caught:
        read_known_flips(listing, "known.txt")
    error = caught.value
    assert (error.path, error.line) == ("known.txt", 2)
    assert str(error) == f"known.txt:2: {error.reason}"


def test_the_reader_child_hands_the_same_attributes_over(tmp_path: Path, child_here: Callable[..., Any]) -> None:
    bad = rollouts(tmp_path / "old.jsonl", json.dumps(ROW), json.dumps(ROW)[:-1])
    request = SideRequest(str(bad), display="runs/old.jsonl")
    with pytest.raises(CompareInputError) as here:
        load_side(request)
    with pytest.raises(CompareInputError) as child:
        child_here(request)
    for error in (here.value, child.value):
        assert (error.path, error.line) == ("runs/old.jsonl", 2)
    assert (str(child.value), child.value.reason) == (str(here.value), here.value.reason)


def test_the_error_survives_pickling() -> None:
    error = CompareInputError("a.jsonl", "invalid JSON", 3)
    again = pickle.loads(pickle.dumps(error))
    assert (again.path, again.line, again.reason, str(again)) == (
        "a.jsonl",
        3,
        "invalid JSON",
        "a.jsonl:3: invalid JSON",
    )


def test_a_request_is_frozen_and_travels_as_plain_values() -> None:
    request = SideRequest(
        "a.jsonl",
        "task_id",
        "runs/*.jsonl",
        "agent",
        "--parity-old-key",
        "parity_agent",
        (("a.jsonl", "runs/a.jsonl"), ("b.jsonl", "runs/b.jsonl")),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.key = "other"  # type: ignore[misc]
    plain = request.plain()
    assert all(isinstance(value, (str, tuple)) for value in plain)
    assert SideRequest(*marshal.loads(marshal.dumps(plain))) == request  # as the reader child takes it
    assert request.files() == ["a.jsonl", "b.jsonl"] and request.shown == "runs/*.jsonl"


def test_the_api_arguments_make_each_sides_request(tmp_path: Path) -> None:
    """A side's own key wins over the shared one, and an error names the API's argument."""
    old = rollouts(tmp_path / "old.jsonl", json.dumps(ROW))
    new = rollouts(tmp_path / "new.jsonl", json.dumps({**ROW, "id": "t1"}))
    result = compare_files(old, new, "task_id", new_key="id")
    assert (result.join.old_key, result.join.new_key) == ("task_id", "id")
    with pytest.raises(CompareInputError) as caught:
        compare_files(old, new, "id", new_key="task_id")
    assert caught.value.reason == "row has no 'id' field (old_key id)"


def test_a_sides_own_agent_wins_over_the_shared_one(tmp_path: Path) -> None:
    rows = [{**ROW, "reward": reward, "agent_ref": {"name": name}} for name, reward in (("a", 1.0), ("b", 0.0))]
    old = rollouts(tmp_path / "old.jsonl", "\n".join(json.dumps(row) for row in rows))
    new = rollouts(tmp_path / "new.jsonl", json.dumps(rows[0]))
    kept = compare_files(old, new, agent="a", old_agent="b")  # the old side keeps agent b's rows
    assert [(task.old.reward, task.new.reward) for task in kept.tasks if task.old and task.new] == [(0.0, 1.0)]
    assert [task.category for task in compare_files(old, new, agent="a").tasks] == ["identical"]

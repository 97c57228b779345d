"""The skeleton reader (pydantic-core) and the full parse read every row shape alike.

The same generated rows go through both readers: each row's decoded fields, its reduction
(:class:`RowFacts`) and its join values must match, and for whole files (with their failures
sidecars) both sides' facts and join values and the whole :class:`CompareResult` must match, or
both readers must reject the input with the same message.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from pytest_rollout_parity.core.api import compare_loaded
from pytest_rollout_parity.core.errors import CompareInputError
from pytest_rollout_parity.core.model import CompareResult, RowFacts, TaskSide
from pytest_rollout_parity.core.reading.fields import (
    AGENT_ERROR_COUNTERS,
    KEY_CANDIDATES,
    PROMPT,
    REWARD,
    TASK_INDEX,
    inferred_candidates,
    load_paths,
)
from pytest_rollout_parity.core.reading.jsonl_lines import DecodeError, parse_line, reader_name, skeleton_decoder
from pytest_rollout_parity.core.reading.key_vote import KNOWN_FIELDS, KeyVote
from pytest_rollout_parity.core.reading.loaded_side import LoadedSide, SideRequest
from pytest_rollout_parity.core.reading.loading import load_side
from pytest_rollout_parity.core.reading.row_facts import RewardTypeError, lookup, reduce_row
from pytest_rollout_parity.core.reading.side_builder import NO_AGENT, agent_of, names_no_task
from pytest_rollout_parity.core.reading.sidecar import index_pair, is_failure_record
from pytest_rollout_parity.core.reading.task_idents import ident_of, prompt_label

#: The skeleton's backend (every install has pydantic-core)
SKELETONS = ["pydantic-core"]

# --- generated rows ----------------------------------------------------------------------------

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
TASK_IDS = st.one_of(
    st.sampled_from(["fix-git", "terminal-bench/fix-git", "café-crème", "タスク", "a.b", "x y"]),
    TEXT.filter(str.strip),
)
TASKSETS = st.sampled_from(["tb", "swe-bench", "weather:train", "ß"])
REWARDS = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 0.5, -0.0, 2**70, 1e-10]),
    st.floats(allow_nan=True, allow_infinity=True),
)
AGENTS = ["alpha", "beta"]
#: Declared paths that another shape may hold as a literal dotted key.
DOTTED = [path for path in KEY_CANDIDATES if "." in path]
#: What a side's rows may be keyed on: an id candidate, or (no id field at all) the task index or the prompt.
KEYINGS = [*KEY_CANDIDATES, TASK_INDEX, PROMPT]
#: fields no known candidate names that the gate may infer as the id
INFERRED = [
    "uuid",
    "scenario_id",
    "metadata.case_id",
    "verifier_metadata.id",
    "responses_create_params.metadata.problem_id",
    "response_id",
]
FILLER = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


def one_in(draw: st.DrawFn, n: int) -> bool:
    """True about once in ``n`` draws (a middle value: hypothesis favours the ends of a range)."""
    return bool(draw(st.integers(0, n - 1)) == n // 2)


def _nest(value: Any, depth: int) -> Any:
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def _put(row: dict[str, Any], path: str, value: Any, literal: bool) -> None:
    """Set ``path`` in ``row``: as one literal dotted key, or descending (creating objects)."""
    if literal:
        row[path] = value
        return
    node = row
    *parents, last = path.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[last] = value


@st.composite
def key_value(draw: st.DrawFn, task: str, path: str) -> Any:
    """A task's value under a join field: plain id, number, or a `{taskset, task_id|id}` object."""
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(st.integers(0, 5))
    if shape <= 3 and path == "_ng_task_id":
        id_name = draw(st.sampled_from(["task_id", "task_id", "id"]))
        return {"taskset": draw(TASKSETS), id_name: task}
    if shape == 4:
        return {"name": task}  # an object naming no id: identified by its JSON
    return task


@st.composite
def prompts(draw: st.DrawFn, task: str, empty: bool = True) -> Any:
    """A task's prompt in the shapes rows carry it; now and then (``empty``) one that is no prompt."""
    if empty and one_in(draw, 8):
        return draw(st.sampled_from([None, "", [], {}]))
    ask = f"Please do {task} now"
    shape = draw(st.integers(0, 4))
    if shape == 0:
        return ask
    if shape == 1:
        return [{"role": "user", "content": [{"type": "input_text", "text": ask}]}]
    if shape == 2:  # numbers, unicode and nesting: the label hashes the canonical JSON of all of it
        return [
            {"role": "system", "content": "be brief ✓", "weight": 0.1, "n": 2**70},
            {"role": "user", "content": ask},
        ]
    if shape == 3:
        return {"messages": [{"role": "user", "content": ask}], "extra": draw(FILLER)}
    return [{"role": "user", "content": ask}]


@st.composite
def rows(draw: st.DrawFn, tasks: list[str], ids: bool = True) -> dict[str, Any]:
    """One row of any shape the readers meet (``ids``: it may carry id candidates)."""
    row: dict[str, Any] = {}
    task = draw(st.sampled_from(tasks))
    for path in draw(st.lists(st.sampled_from(KEY_CANDIDATES), max_size=2, unique=True)) if ids else ():
        literal = "." in path and draw(st.booleans())
        _put(row, path, draw(key_value(task, path)), literal)
    if ids and one_in(draw, 10):  # a literal dotted key and a nested one disagreeing
        path = draw(st.sampled_from(DOTTED))
        _put(row, path, draw(key_value(task + "-nested", path)), False)
        _put(row, path, draw(key_value(task, path)), True)
    if ids and one_in(draw, 3):  # a field the gate may infer as the id (read whole only on a side's first row)
        path = draw(st.sampled_from(INFERRED))
        value = draw(st.one_of(st.just(task), st.integers(0, 3), st.sampled_from(["a b", "", True, None, 2.5])))
        _put(row, path, value, "." in path and one_in(draw, 5))
    if one_in(draw, 15):  # an intermediate object that is not one
        row[draw(st.sampled_from(["verifier_metadata", "metadata", "responses_create_params"]))] = draw(
            st.sampled_from([None, "text", [1], 3])
        )
    if not one_in(draw, 10):
        row["reward"] = draw(REWARDS)
    if one_in(draw, 200):
        row["reward"] = draw(st.sampled_from(["1.0", True]))  # an input error, for both readers
    if one_in(draw, 4):
        row["mask_sample"] = draw(st.sampled_from([True, False, 0, 1, "", None]))
    if one_in(draw, 4):
        row["failure_kind"] = draw(st.sampled_from(["verifier_error", "harbor:verifier_timeout", "", None, 3]))
    if one_in(draw, 5):
        row["error"] = draw(
            st.sampled_from(["Traceback...\n  boom\nValueError: bad\n", " ", "", None, {"msg": "x"}, ["é"]])
        )
    if one_in(draw, 6):  # the legacy harbor_agent's counters, on, off or odd
        row[draw(st.sampled_from(AGENT_ERROR_COUNTERS))] = draw(st.sampled_from([1, 0, True, False, 2, 0.5, "1", None]))
    if one_in(draw, 6):
        row["agent_timed_out"] = draw(st.sampled_from([True, False, "true", None, 1]))
    if one_in(draw, 6):
        row["evaluation_completed"] = draw(st.sampled_from([False, True, None, 0, "false"]))
    if one_in(draw, 6):
        row["agent_error"] = draw(st.sampled_from(["Traceback\nTimeoutError: step\n", " ", "", None, 3, ["x"]]))
    if one_in(draw, 8):
        row["agent_error_kind"] = draw(st.sampled_from(["other", "timeout"]))
    if one_in(draw, 60):  # an agent stamp of an odd shape, or spelled as a literal dotted key
        shape = draw(st.sampled_from([None, "alpha", {"type": "t"}, {"name": 3}, {"name": ""}, "literal"]))
        if shape == "literal":
            row["agent_ref.name"] = draw(st.sampled_from(AGENTS))
        else:
            row["agent_ref"] = shape
    if one_in(draw, 3):
        metadata = draw(
            st.sampled_from([{"terminus2_error_type": "TimeoutError"}, {"x_error_type": None}, {}, "text", None])
        )
        row["response"] = draw(
            st.sampled_from(
                [
                    {"metadata": metadata, "output": _nest(["x" * 50], draw(st.integers(0, 60)))},
                    {"metadata": metadata},
                    None,
                    "not an object",
                ]
            )
        )
    if one_in(draw, 3):  # a prompt beside whatever else names the task (hashed only if it keys the side)
        _put(row, PROMPT, draw(prompts(task)), "." in PROMPT and one_in(draw, 5))
    if draw(st.booleans()):
        row["_ng_task_index"] = draw(st.integers(0, 3))
        if not one_in(draw, 5):
            row["_ng_rollout_index"] = draw(st.integers(0, 2))
    if one_in(draw, 15):  # a failure record in the main file
        row["_ng_failure_class"] = draw(st.sampled_from(["AgentTimeout", "SandboxError"]))
    if one_in(draw, 3):
        row[draw(TEXT)] = _nest(draw(FILLER), draw(st.integers(0, 60)))
    return row


@st.composite
def sidecar_records(draw: st.DrawFn, tasks: list[str], path: str) -> dict[str, Any]:
    """A failures-sidecar record: a class, a message, usually both indexes, maybe the task."""
    record: dict[str, Any] = {
        "_ng_failure_class": draw(st.sampled_from(["AgentTimeout", "SandboxError", ""])),
        "_ng_failure_message": draw(TEXT),
    }
    if not one_in(draw, 5):
        record["_ng_task_index"] = draw(st.integers(0, 3))
    if not one_in(draw, 5):
        record["_ng_rollout_index"] = draw(st.integers(0, 2))
    if draw(st.booleans()):  # the task, named mostly as the side's rows name it
        path = draw(st.one_of(st.just(path), st.just(path), st.sampled_from(KEYINGS)))
        _put(record, path, draw(_naming(draw(st.sampled_from(tasks)), tasks, path)), False)
    if one_in(draw, 4):
        record["failure_kind"] = draw(st.sampled_from(["infra", ""]))
    if one_in(draw, 4):  # a record that names its agent (a filter drops another agent's)
        record["agent_ref"] = {"name": draw(st.sampled_from(AGENTS))}
    return record


@st.composite
def _naming(draw: st.DrawFn, task: str, tasks: list[str], path: str) -> Any:
    """The value naming ``task`` under ``path``: an id, the task's index, or its prompt."""
    if path == TASK_INDEX:
        return tasks.index(task)
    if path == PROMPT:
        return draw(prompts(task))
    return draw(key_value(task, path))


def _line(row: dict[str, Any], ascii_only: bool) -> str:
    return json.dumps(row, ensure_ascii=ascii_only, allow_nan=True) + "\n"


@st.composite
def side(draw: st.DrawFn, tasks: list[str], path: str, agents: list[str]) -> tuple[str, str]:
    """A side's main file text (rows naming their task under ``path``, mostly, stamped with one of
    ``agents``) and its sidecar text.

    Keyed on `_ng_task_index` or the prompt, the rows carry no id field; keyed on the prompt, the
    task index is dropped from some rows (else it would key the side) or numbers the rows apart
    from their tasks (then the index is no task's identity either).
    """
    fallback = path in (TASK_INDEX, PROMPT)
    main = draw(st.lists(rows(tasks, ids=not fallback), min_size=1, max_size=6))
    literal = "." in path and draw(st.booleans())
    no_reward = one_in(draw, 25)  # an input dataset: no row has a reward field
    # every row carrying its task's prompt: an index join then checks both sides' prompts agree,
    # and an id-keyed side that falls back to the index reads its deferred prompts again
    with_prompts = path != PROMPT and draw(st.booleans())
    for row in main:
        task = draw(st.sampled_from(tasks))
        if not one_in(draw, 30):
            _put(row, path, draw(_naming(task, tasks, path)), literal)
        if path == PROMPT and draw(st.booleans()):
            row.pop(TASK_INDEX, None)
        if with_prompts:
            asked = draw(st.sampled_from(tasks)) if one_in(draw, 10) else task  # now and then another task's
            _put(row, PROMPT, draw(prompts(asked, empty=False)), False)
        if agents and "agent_ref" not in row:
            row["agent_ref"] = {"type": "responses_api_agents", "name": draw(st.sampled_from(agents))}
        if no_reward:
            row.pop(REWARD, None)
    records = draw(st.lists(sidecar_records(tasks, path), max_size=3))
    ascii_only = draw(st.booleans())
    blank = "\n" if one_in(draw, 6) else ""
    return (
        blank.join(_line(row, ascii_only) for row in main),
        "".join(_line(record, ascii_only) for record in records),
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[tuple[str, str], tuple[str, str], Optional[str], Optional[str]]:
    """Two sides sharing a pool of tasks, each keyed its own way or both alike, a key and an agent."""
    tasks = draw(st.lists(TASK_IDS, min_size=1, max_size=4, unique=True))
    old_path = draw(st.one_of(st.sampled_from(KEY_CANDIDATES), st.sampled_from([TASK_INDEX, PROMPT])))
    new_path = draw(st.one_of(st.just(old_path), st.just(old_path), st.sampled_from(KEYINGS)))
    key = draw(st.sampled_from([None, None, old_path]))
    # the agents the sides' rows are stamped with and the one chosen: mostly a valid choice
    valid = [([], None), ([], NO_AGENT), (["alpha"], None), (["alpha"], "alpha"), (AGENTS, "alpha"), (AGENTS, "beta")]
    wrong = [(AGENTS, None), (["alpha"], "beta")]  # input errors: several agents and none chosen; no such agent
    agents, agent = draw(st.sampled_from(valid * 3 + wrong))
    return draw(side(tasks, old_path, agents)), draw(side(tasks, new_path, agents)), key, agent


# --- comparing what each reader makes of them ------------------------------------------------


@contextmanager
def parser(name: str) -> Iterator[None]:
    """Run with PARITY_PARSER set to a reader, which must then be the one used."""
    before = os.environ.get("PARITY_PARSER")
    os.environ["PARITY_PARSER"] = name
    try:
        assert reader_name() == name
        yield
    finally:
        if before is None:
            del os.environ["PARITY_PARSER"]
        else:
            os.environ["PARITY_PARSER"] = before


def _same(value: Any) -> Any:
    """A value comparable with ``==`` although it may hold NaN (NaN != NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _same(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_same(v) for v in value]
    return value


def _facts(facts: RowFacts) -> tuple[Any, ...]:
    return tuple(_same(getattr(facts, name)) for name in RowFacts.__slots__)


def _side(side: Optional[TaskSide]) -> Any:
    if side is None:
        return None
    fields = ("reward", "masked", "agent_error", "failure_kind", "reward_rows", "repeated")
    return {name: _same(getattr(side, name)) for name in fields} | {"facts": [_facts(f) for f in side.facts]}


def _result(result: CompareResult) -> dict[str, Any]:
    """Every field of a CompareResult, its tasks and their sides' row facts included."""
    plain = {name: _same(getattr(result, name)) for name in result.__dataclass_fields__ if name != "tasks"}
    plain["tasks"] = [
        (task.task, task.category, task.winner, _side(task.old), _side(task.new)) for task in result.tasks
    ]
    return plain


def _loaded(side: LoadedSide) -> tuple[Any, ...]:
    return (
        side.choice.key,
        side.sidecar,
        [_facts(f) for f in side.facts],
        side.choice.values,
        side.agent,
    )


def _read_both(old: Path, new: Path, key: Optional[str], agent: Optional[str]) -> Any:
    """What one reader makes of the pair: the loaded sides and the result, or the error text."""
    try:
        loaded_old, loaded_new = (
            load_side(SideRequest(str(old), key, agent=agent)),
            load_side(SideRequest(str(new), key, agent=agent)),
        )
        return _loaded(loaded_old), _loaded(loaded_new), _result(compare_loaded(loaded_old, loaded_new))
    except CompareInputError as exc:
        return f"error: {exc}"


def _reduced(row: dict[str, Any]) -> Any:
    try:
        return _facts(reduce_row(row, line=1, offset=0))
    except RewardTypeError as exc:
        return f"error: {exc}"


# --- the properties ------------------------------------------------------------------------


@pytest.mark.parametrize("reader", SKELETONS)
@settings(max_examples=400, deadline=None)
@given(
    st.lists(TASK_IDS, min_size=1, max_size=3, unique=True).flatmap(rows),
    st.one_of(st.none(), st.sampled_from(KEYINGS)),
    st.booleans(),
)
def test_a_row_decodes_and_reduces_alike(
    reader: str, row: dict[str, Any], key: Optional[str], ascii_only: bool
) -> None:
    raw = _line(row, ascii_only).encode("utf-8")
    full = parse_line(raw, "row")
    # a side's first row is read in full: the fields it shows as inferred candidates are then
    # decoded by the skeleton from every later row
    inferred = inferred_candidates(full, KNOWN_FIELDS) if key is None else ()
    with parser(reader):
        decode = skeleton_decoder(key, inferred)
    assert decode is not None
    try:
        skeleton_row = decode(raw)
    except DecodeError:  # pydantic-core takes every valid JSON object
        raise AssertionError("the skeleton refused a valid row") from None
    event("the skeleton decoded the row")
    for path in load_paths(key, inferred):
        value, expected = lookup(skeleton_row, path), lookup(full, path)
        assert _same(value) == _same(expected), path
    assert _reduced(skeleton_row) == _reduced(full)
    for name in (key,) if key else KEY_CANDIDATES + (TASK_INDEX, PROMPT):
        value, expected = lookup(skeleton_row, name), lookup(full, name)
        if name == PROMPT:
            value, expected = prompt_label(value), prompt_label(expected)
        assert (value is None) == (expected is None), name
        if expected is not None:
            assert ident_of(value) == ident_of(expected), name
    assert KeyVote(key).candidate_values(skeleton_row) == KeyVote(key).candidate_values(full)
    assert index_pair(skeleton_row) == index_pair(full)
    assert agent_of(skeleton_row) == agent_of(full)
    assert (REWARD in skeleton_row) == (REWARD in full)  # a file none of whose rows has it is no rollouts file
    assert is_failure_record(skeleton_row) == is_failure_record(full)
    assert names_no_task(skeleton_row, key) == names_no_task(full, key)


def _error_kind(message: str) -> str:
    for marker, kind in (
        ("agent", "agents"),
        ("input dataset", "no reward field"),
        ("different prompt", "prompt check"),
        ("no task id field", "no key"),
        ("has no", "lacks the given key"),
    ):
        if marker in message:
            return kind
    return "other"


@pytest.mark.parametrize("reader", SKELETONS)
@settings(max_examples=200, deadline=None)
@given(pairs())
def test_files_compare_alike(
    reader: str, pair: tuple[tuple[str, str], tuple[str, str], Optional[str], Optional[str]]
) -> None:
    old, new, key, agent = pair
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, (main, sidecar) in (("old", old), ("new", new)):
            path = Path(folder) / f"{name}.jsonl"
            path.write_text(main, encoding="utf-8")
            if sidecar:
                (Path(folder) / f"{name}_failures.jsonl").write_text(sidecar, encoding="utf-8")
            paths.append(path)
        with parser(reader):
            fast = _read_both(*paths, key, agent)
        with parser("full"):
            full = _read_both(*paths, key, agent)
    if isinstance(full, str):
        event("input error: " + _error_kind(full))
    else:
        for side_key in (full[2]["join"].old_key, full[2]["join"].new_key):
            event("a side keyed on " + (side_key if side_key in (TASK_INDEX, PROMPT) else "an id field"))
    assert fast == full

"""A loaded side as plain values (the rerun cache's JSON) and the reader child.

Both must give back exactly what reading the file here gives: the same facts, join values, key
reason and notes, and for a bad input the same `file:line` message.
"""

from __future__ import annotations

import inspect
import io
import json
import marshal
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity.core.errors import CompareInputError
from pytest_rollout_parity.core.model import RowFacts, RowOrigin
from pytest_rollout_parity.core.reading import loaded_side as snapshot
from pytest_rollout_parity.core.reading import parallel
from pytest_rollout_parity.core.reading.loaded_side import LoadedSide, SideRequest
from pytest_rollout_parity.core.reading.loading import load_side
from pytest_rollout_parity.core.reading.parallel import load_sides

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def described(side: LoadedSide) -> tuple[Any, ...]:
    """Everything a side holds, as comparable values."""
    facts = [tuple(getattr(f, name) for name in snapshot.FACT_FIELDS) for f in side.facts]
    choice = side.choice
    return (
        side.path,
        side.display,
        side.sidecar,
        facts,
        side.agent,
        choice.key,
        choice.values,
        choice.reason,
        choice.notes,
        choice.prompts,
    )


@pytest.fixture
def real_pair(real_rows: Callable[[str], list[dict[str, Any]]], write_jsonl: Callable[..., Path]) -> tuple[Path, Path]:
    """An old and a new file of real rows (three repeats of several tasks), the new one with a sidecar."""
    old_rows, new_rows = [], []
    for index, name in enumerate(
        [
            "deepswe_opencode_trimmed.jsonl",
            "anyterminal_hermes_trimmed.jsonl",
            "harbor_agent_terminal_bench_daytona.jsonl",
        ]
    ):
        for repeat in range(3):
            for rows, reward in ((old_rows, 1.0), (new_rows, float(repeat != 0 or index != 1))):
                row = real_rows(name)[0]
                row.update(_ng_task_index=index, _ng_rollout_index=repeat, reward=reward, agent_ref={"name": "agent"})
                rows.append(row)
    old = write_jsonl("old/rollouts.jsonl", old_rows)
    new = write_jsonl("new/rollouts.jsonl", new_rows)
    write_jsonl(
        "new/rollouts_failures.jsonl",
        [
            {
                "_ng_task_index": 9,
                "_ng_rollout_index": 0,
                "_ng_failure_class": "SandboxError",
                "_ng_failure_message": "sandbox did not start",
            },
        ],
    )
    return old, new


@pytest.mark.parametrize("pair", ["examples", "real"])
def test_snapshot_round_trip(pair: str, real_pair: tuple[Path, Path]) -> None:
    paths = (
        [EXAMPLES / "old" / "rollouts.jsonl", EXAMPLES / "new" / "rollouts.jsonl"]
        if pair == "examples"
        else list(real_pair)
    )
    for path in paths:
        side = load_side(SideRequest(str(path), display="shown.jsonl"))
        again = snapshot.side_from_plain(json.loads(json.dumps(snapshot.side_to_plain(side))))
        assert described(again) == described(side)
        assert len(side.facts) > 0


def test_row_facts_are_rebuilt_from_their_fields_in_constructor_order() -> None:
    """The snapshot passes a row's field values positionally: RowFacts takes them in its slots' order."""
    parameters = list(inspect.signature(RowFacts.__init__).parameters)[1:]
    assert tuple(parameters) == snapshot.FACT_FIELDS == RowFacts.__slots__
    facts = RowFacts(7, 120, RowOrigin.SIDECAR, 0.5, "masked", "boom", "timeout", None, 2, 3, 99)
    again = snapshot.facts_from_plain(snapshot.plain_facts(facts))
    assert [getattr(again, name) for name in snapshot.FACT_FIELDS] == [
        7,
        120,
        RowOrigin.SIDECAR,
        0.5,
        "masked",
        "boom",
        "timeout",
        None,
        2,
        3,
        99,
    ]


@pytest.mark.parametrize(
    "damage",
    [
        lambda plain: {**plain, "conditions": None},  # a field of another type
        lambda plain: {name: value for name, value in plain.items() if name != "display"},  # a field short
        lambda plain: {**plain, "extra": 1},  # a field too many
        lambda plain: {**plain, "facts": [[1, 2]]},  # a row of two facts
        lambda plain: {**plain, "facts": [[0, 0, "elsewhere", 1.0, None, None, None, None, 0]]},  # no such origin
        lambda plain: {**plain, "choice": {**plain["choice"], "values": [[1, 2, 3]]}},  # an ident of three parts
        lambda plain: {"path": 1},
        lambda plain: list(plain.values()),
        lambda plain: None,
    ],
)
def test_another_shape_is_refused(real_pair: tuple[Path, Path], damage: Any) -> None:
    """What the cache parsed is rebuilt field by field: any other shape raises, and the cache reads
    the files again."""
    plain = json.loads(json.dumps(snapshot.side_to_plain(load_side(SideRequest(str(real_pair[1]))))))
    with pytest.raises((ValueError, TypeError, KeyError, IndexError)):
        snapshot.side_from_plain(damage(plain))


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["examples", "real"])
def test_child_reads_what_the_serial_path_reads(pair: str, real_pair: tuple[Path, Path]) -> None:
    old, new = (
        (EXAMPLES / "old" / "rollouts.jsonl", EXAMPLES / "new" / "rollouts.jsonl") if pair == "examples" else real_pair
    )
    requests = SideRequest(str(old), display="o.jsonl"), SideRequest(str(new), display="n.jsonl")
    serial = [load_side(r) for r in requests]
    child = parallel.start_child(requests[0])
    assert child is not None
    assert child.stdout is not None
    with child.stdout:
        from_child = parallel.read_answer(child.stdout)
    assert child.wait() == 0
    assert from_child is not None  # the child itself answered (no fallback)
    assert described(from_child) == described(serial[0])
    both = load_sides(requests, min_bytes=0)
    assert [described(s) for s in both] == [described(s) for s in serial]


def bad_line(write_jsonl: Callable[..., Path], rel: str) -> Path:
    good = json.dumps({"task_id": "a", "reward": 1.0})
    return write_jsonl(rel, f'{good}\n{good}\n{{"task_id": "b", "reward": 1.0,,}}\n')


def test_child_reports_a_bad_line_as_the_serial_path_does(
    write_jsonl: Callable[..., Path], child_here: Callable[..., Any]
) -> None:
    bad = bad_line(write_jsonl, "bad/old.jsonl")
    request = SideRequest(str(bad), display="bad/old.jsonl")
    with pytest.raises(CompareInputError) as serial:
        load_side(request)
    assert "bad/old.jsonl:3: invalid JSON" in str(serial.value)
    with pytest.raises(CompareInputError) as child:
        child_here(request)
    assert str(child.value) == str(serial.value)


@pytest.mark.slow
def test_two_bad_sides_report_the_old_one_first(write_jsonl: Callable[..., Path]) -> None:
    old = SideRequest(str(bad_line(write_jsonl, "o.jsonl")), display="o.jsonl")
    new = SideRequest(str(bad_line(write_jsonl, "n.jsonl")), display="n.jsonl")
    with pytest.raises(CompareInputError, match=r"^o\.jsonl:3: "):
        load_sides([old, new], min_bytes=0)
    good = write_jsonl("g.jsonl", [{"task_id": "a", "reward": 1.0}])
    with pytest.raises(CompareInputError, match=r"^n\.jsonl:3: "):
        load_sides([SideRequest(str(good)), new], min_bytes=0)


@pytest.mark.slow
def test_a_failing_child_changes_nothing(real_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    requests = SideRequest(str(real_pair[0])), SideRequest(str(real_pair[1]))
    serial = [described(load_side(r)) for r in requests]
    monkeypatch.setattr(parallel, "CHILD_MODULE", "pytest_rollout_parity.core.no_such_module")
    assert [described(s) for s in load_sides(requests, min_bytes=0)] == serial


@pytest.mark.slow
def test_an_answer_refused_midway_leaves_no_child_waiting(
    write_jsonl: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child still writing its answer (more than a pipe holds) when the parent refuses it is
    stopped, not waited on, and its side is read here."""
    old = write_jsonl("o.jsonl", [{"task_id": f"t{i}", "reward": 1.0} for i in range(20000)])
    requests = SideRequest(str(old)), SideRequest(str(write_jsonl("n.jsonl", [{"task_id": "t0", "reward": 0.0}])))
    monkeypatch.setattr(parallel, "read_answer", lambda stream: parallel._message(stream) and None)
    assert [described(s) for s in load_sides(requests, min_bytes=0)] == [described(load_side(r)) for r in requests]


def test_serial_with_one_cpu_or_a_small_file(real_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    request = SideRequest(str(real_pair[0]))
    assert not parallel.worth_a_child(request)  # a few kilobytes: not worth an interpreter
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 1)
    assert not parallel.worth_a_child(request, min_bytes=0)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 2)
    assert parallel.worth_a_child(request, min_bytes=0)
    assert not parallel.worth_a_child(SideRequest("/no/such/file"), min_bytes=0)


REAL_FILES = sorted((Path(__file__).resolve().parents[1] / "data" / "real_files").rglob("*.jsonl"))


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_childs_answer_rebuilds_every_real_file(path: Path, child_here: Callable[..., Any]) -> None:
    """Id-keyed, index-keyed and prompt-keyed files (deferred prompt labels) alike."""
    request = SideRequest(str(path), display="shown.jsonl")
    try:
        serial: Any = described(load_side(request))
    except CompareInputError as exc:
        serial = str(exc)
    try:
        side = child_here(request)
        streamed: Any = described(side) if side is not None else None
    except CompareInputError as exc:
        streamed = str(exc)
    assert streamed == serial


def test_an_answer_cut_short_is_not_a_side(real_pair: tuple[Path, Path]) -> None:
    """A torn answer (a killed child) gives no side, never part of one: the parent reads it again."""
    side = load_side(SideRequest(str(real_pair[0]), display="o.jsonl"))
    facts = [snapshot.plain_facts(row) for row in side.facts]
    messages = [["side", snapshot.side_to_plain(replace(side, facts=[])), len(facts)]]
    messages += [facts[start : start + 2] for start in range(0, len(facts), 2)]
    answer = b"".join(marshal.dumps(marshal.dumps(message)) for message in messages)
    whole = parallel.read_answer(io.BytesIO(answer))
    assert whole is not None and described(whole) == described(side)
    for cut in (len(answer) - 1, len(answer) // 2, 3, 0):
        assert parallel.read_answer(io.BytesIO(answer[:cut])) is None
    assert parallel.read_answer(io.BytesIO(marshal.dumps(marshal.dumps(["other", 1])))) is None


def test_a_key_error_mid_file_reads_as_the_serial_path_does(
    write_jsonl: Callable[..., Path], child_here: Callable[..., Any]
) -> None:
    """The child votes as the parent would: a row lacking the explicit key stops it at that row."""
    rows = [{"task_id": f"t{i}", "reward": 1.0} for i in range(5000)]
    rows[4321] = {"reward": 1.0}
    path = write_jsonl("keyed.jsonl", rows)
    request = SideRequest(str(path), key="task_id", display="keyed.jsonl")
    with pytest.raises(CompareInputError) as serial:
        load_side(request)
    assert "keyed.jsonl:4322:" in str(serial.value)
    with pytest.raises(CompareInputError) as streamed:
        child_here(request)
    assert str(streamed.value) == str(serial.value)


@pytest.mark.slow
def test_a_test_directory_first_on_sys_path_cannot_shadow_the_childs_imports(
    real_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """pytest puts test directories first on sys.path; the child is not started on that path."""
    (tmp_path / "dataclasses.py").write_text("raise ImportError('shadowed')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    request = SideRequest(str(real_pair[0]))
    child = parallel.start_child(request)
    assert child is not None
    assert child.stdout is not None
    with child.stdout:
        side = parallel.read_answer(child.stdout)
    assert child.wait() == 0
    assert side is not None  # the child answered: no fallback
    assert described(side) == described(load_side(request))


def test_a_corrupt_gzip_file_is_one_error_line(write_jsonl: Callable[..., Path], tmp_path: Path) -> None:
    """A gzip stream with bad data is an input error; a bad main line is still named before a corrupt
    gzip sidecar."""
    import gzip

    body = bytearray(gzip.compress(b'{"task_id": "a", "reward": 1.0}\n' * 200))
    body[15:25] = b"\xff" * 10
    (tmp_path / "c.jsonl.gz").write_bytes(bytes(body))
    with pytest.raises(CompareInputError, match=r"c\.jsonl\.gz: cannot read: "):
        load_side(SideRequest(str(tmp_path / "c.jsonl.gz"), display="c.jsonl.gz"))
    main = write_jsonl(
        "m/o.jsonl", '{"_ng_task_index": 0, "_ng_rollout_index": 0, "reward": 1, "task_id": "a"}\n{bad\n'
    )
    (tmp_path / "m" / "o_failures.jsonl").write_bytes(bytes(body))
    with pytest.raises(CompareInputError, match=r"o\.jsonl:2: "):
        load_side(SideRequest(str(main), display="o.jsonl"))


@pytest.mark.slow
def test_the_reader_child_imports_the_reading_stage_only() -> None:
    """The child's program, started as the parent starts it, loads no module of a later stage."""
    import ast
    import subprocess

    command = parallel.child_command()
    boot = command.index("-c") + 1
    command[boot] = command[boot].replace(
        f"from {parallel.CHILD_MODULE} import main; sys.exit(main())",
        f"import {parallel.CHILD_MODULE}; print(sorted(sys.modules))",
    )
    assert command[boot] != parallel.CHILD_BOOT.format(module=parallel.CHILD_MODULE)
    shown = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    core = [name for name in ast.literal_eval(shown) if name.startswith("pytest_rollout_parity.core.")]
    assert "pytest_rollout_parity.core.reading.parallel" in core
    assert [name for name in core if name.split(".")[2] not in ("reading", "errors", "model")] == []

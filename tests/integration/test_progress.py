"""Progress on long loads: on a terminal only, never under -q, in a CI log or on an xdist worker."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

import pytest

from pytest_rollout_parity.core.reading import parallel
from pytest_rollout_parity.plugin import activate
from pytest_rollout_parity.plugin.activate import LoadProgress, progress_for

from .conftest import Gate


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_updates_in_place_at_most_every_interval_then_the_time() -> None:
    stream, clock = io.StringIO(), Clock()
    shown = LoadProgress(stream, clock=clock, show_from=1000, interval=0.25)
    report = shown.side("old")
    report(100, 2000)
    clock.now = 0.1
    report(500, 2000)  # too soon: not written
    clock.now = 0.3
    report(1000, 2000)
    clock.now = 2.5
    report(2000, 2000)  # the end is always written
    shown.finished("old")
    writes = stream.getvalue().split("\r")[1:]
    assert [w.rstrip() for w in writes] == [
        "reading old: 100 B of 2.0 KB (5%)",
        "reading old: 1.0 KB of 2.0 KB (50%)",
        "reading old: 2.0 KB of 2.0 KB (100%)",
        "old: read 2.0 KB in 2.5 s",
    ]
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_small_sides_print_nothing() -> None:
    stream = io.StringIO()
    shown = LoadProgress(stream, clock=Clock(), show_from=1000)
    shown.side("old")(10, 999)
    shown.finished("old")
    assert stream.getvalue() == ""


@pytest.mark.parametrize(
    ("worker", "verbosity", "tty", "shown"),
    [
        (False, 0, True, True),
        (False, 1, True, True),
        (False, -1, True, False),
        (False, 0, False, False),
        (True, 0, True, False),
    ],
)
def test_who_sees_progress(
    monkeypatch: pytest.MonkeyPatch, worker: bool, verbosity: int, tty: bool, shown: bool
) -> None:
    monkeypatch.setattr(activate, "stderr_is_tty", lambda: tty)
    config = SimpleNamespace(getoption=lambda name, default: verbosity, **({"workerinput": {}} if worker else {}))
    assert (progress_for(config) is not None) is shown  # type: ignore[arg-type]


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every side counts as large, so a small pair shows progress when a terminal watches."""
    monkeypatch.setattr(activate, "SHOW_FROM", 1)


@pytest.mark.parametrize(
    ("tty", "flags", "shown"),
    [(True, [], True), (True, ["-q"], False), (False, [], False)],
    ids=["terminal", "quiet", "ci-log"],
)
def test_gate_run(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, big: None, tty: bool, flags: list[str], shown: bool
) -> None:
    monkeypatch.setattr(activate, "stderr_is_tty", lambda: tty)
    result = gate.run(*gate.mixed(), *flags)
    assert result.ret == 1
    err = "\n".join(result.errlines)
    finished = [line.split("\r")[-1] for line in result.errlines if "read " in line]
    if shown:
        assert [line.split(": read ")[0] for line in finished] == ["old", "new"]
        assert "reading old: " in err
    else:
        assert finished == [] and "reading" not in err


@pytest.mark.slow
def test_the_old_side_read_by_a_child_shows_its_time(gate: Gate, monkeypatch: pytest.MonkeyPatch, big: None) -> None:
    """On 2+ cores the old side is read by a child process: no bytes to show, but its time when it is in."""
    monkeypatch.setattr(activate, "stderr_is_tty", lambda: True)
    monkeypatch.setattr(parallel, "worth_a_child", lambda request, min_bytes=0: True)
    spawned: list[object] = []
    real_start = parallel.start_child
    monkeypatch.setattr(parallel, "start_child", lambda request: spawned.append(request) or real_start(request))
    result = gate.run(*gate.mixed())
    assert result.ret == 1 and len(spawned) == 1
    finished = [line.split("\r")[-1] for line in result.errlines if ": read " in line]
    assert [line.split(": read ")[0] for line in finished] == ["new", "old"]
    assert re.fullmatch(r"old: read [\d.]+ [KMG]?B in \d+\.\d s *", finished[1]), finished


def test_input_error_starts_on_its_own_line(gate: Gate, monkeypatch: pytest.MonkeyPatch, big: None) -> None:
    monkeypatch.setattr(activate, "stderr_is_tty", lambda: True)
    args = gate.pair("".join(f'{{"task_id": "t{i}", "reward": 1.0}}\n' for i in range(3)), '{"task_id": "t0", "re\n')
    result = gate.run(*args)
    assert result.ret == 4
    assert any(line.startswith("ERROR: new/rollouts.jsonl:1: ") for line in result.errlines)

"""docs/semantics.md, "Verifier output lookup", and the flip message ("Categories")."""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.core.judging.verifier_output import LINE_CHARS, TAIL_BYTES, LogRoots
from pytest_rollout_parity.core.reports.item_outcome import flip_evidence


def flip_message(*args: Any, **kwargs: Any) -> str:
    """The whole flip message (the text of :func:`flip_evidence`)."""
    return flip_evidence(*args, **kwargs).text


NO_LOG = "row has no verifier_logs_dir and no embedded verifier output"


def assistant(text: str) -> dict:
    """A NeMo Gym `response` whose output ends with an assistant message (after a reasoning item)."""
    return {
        "output": [
            {"type": "reasoning", "summary": [{"text": "thinking"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
        ]
    }


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    d = {name: tmp_path / name for name in ("inv", "old", "new", "extra1", "extra2", "abs")}
    for p in d.values():
        p.mkdir()
    return d


def roots(dirs, extra=("extra1", "extra2")) -> LogRoots:
    return LogRoots(
        invocation_dir=dirs["inv"],
        old_dir=dirs["old"],
        new_dir=dirs["new"],
        extra=tuple(dirs[e] for e in extra),
    )


def numbered(prefix: str, n: int = 20) -> str:
    return "".join(f"{prefix} line {i}\n" for i in range(1, n + 1))


def put_log(base: Path, rel: str, text: str) -> Path:
    """A verifier_logs_dir at base/rel holding test-stdout.txt; returns the file's path."""
    d = base / rel
    d.mkdir(parents=True, exist_ok=True)
    f = d / "test-stdout.txt"
    f.write_text(text, encoding="utf-8")
    return f


def flip(new_extra=None, old_extra=None, old_reward=1.0, new_reward=0.0, category="flipped"):
    old = [{"task_id": "fix-git", "reward": old_reward, **(old_extra or {})}]
    new = [{"task_id": "fix-git", "reward": new_reward, **(new_extra or {})}]
    res = compare_rollouts(old, new)
    (t,) = res.tasks
    assert t.category == category
    return t


def lines(msg: str) -> list[str]:
    return msg.rstrip("\n").split("\n")


# --- the message -----------------------------------------------------------------------------


def test_flip_message_from_an_absolute_logs_dir(dirs):
    f = put_log(dirs["abs"], "sess-1", numbered("new") + "\n\n")
    t = flip({"verifier_logs_dir": str(f.parent)})
    msg = flip_message(t, 3, roots(dirs))
    assert lines(msg) == [
        "fix-git: new regressed: old=1.0 new=0.0",
        f"    new verifier output (last 3 lines of {f}):",
        "    | new line 18",
        "    | new line 19",
        "    | new line 20",
    ]


def test_flip_message_new_wins_reads_the_old_sides_log(dirs):
    f = put_log(dirs["abs"], "sess-old", numbered("old"))
    t = flip(
        old_extra={"verifier_logs_dir": str(f.parent)},
        new_extra={"test_output": "WINNER OUTPUT"},
        old_reward=0.0,
        new_reward=1.0,
    )
    msg = flip_message(t, 2, roots(dirs))
    assert lines(msg) == [
        "fix-git: new improved: old=0.0 new=1.0",
        f"    old verifier output (last 2 lines of {f}):",
        "    | old line 19",
        "    | old line 20",
    ]
    assert "WINNER" not in msg


@pytest.mark.parametrize("relative", [False, True])
def test_a_logs_dir_naming_a_file_gives_a_reason_and_none_of_its_content(dirs, relative):
    # `gym dev compare` reads only test-stdout.txt: a row naming any other file (.git/config,
    # /etc/passwd) as its logs dir must not publish it
    f = dirs["new"] / "secret.cfg"
    f.write_text("extraheader = AUTHORIZATION: basic SECRET-TOKEN\n", encoding="utf-8")
    t = flip({"verifier_logs_dir": "secret.cfg" if relative else str(f), "test_output": "EMBEDDED"})
    got = lines(flip_message(t, 5, roots(dirs)))
    assert "SECRET-TOKEN" not in "\n".join(got)
    # the embedded output is the row's own: shown in place of the refused file
    assert got[1:] == ["    new verifier output (last 5 lines of row field 'test_output'):", "    | EMBEDDED"]
    t = flip({"verifier_logs_dir": "secret.cfg" if relative else str(f)})
    got = lines(flip_message(t, 5, roots(dirs)))
    assert (
        got[1]
        == f"    new verifier output unavailable: {f} is not a directory (only a test-stdout.txt inside it is read)"
    )
    assert len(got) == 2


def test_header_shows_reward_texts_of_repeated_sides(dirs):
    old = [{"task_id": "fix-git", "reward": 1.0}]
    new = [
        {"task_id": "fix-git", "reward": 1.0},
        {"task_id": "fix-git", "reward": 0.0},
        {"task_id": "fix-git", "reward": None},
    ]
    (t,) = compare_rollouts(old, [new[0], new[1]]).tasks
    assert lines(flip_message(t, 5, roots(dirs)))[0] == "fix-git: new regressed: old=1.0 new=0.5 (means of 1 vs 2 rows)"
    # a row without reward is left out of the mean: the flip is over the two scored rows
    (t2,) = compare_rollouts(old, new).tasks
    assert t2.category == "flipped"
    assert lines(flip_message(t2, 5, roots(dirs)))[0] == (
        "fix-git: new regressed: old=1.0 new=0.5 (means of 1 vs 2 of 3 rows)"
    )


def test_header_rounds_to_four_places(dirs):
    (t,) = compare_rollouts(
        [
            {"task_id": "fix-git", "reward": 1.0},
            {"task_id": "fix-git", "reward": 1.0},
            {"task_id": "fix-git", "reward": 0.0},
        ],
        [{"task_id": "fix-git", "reward": 0.123456}],
    ).tasks
    assert lines(flip_message(t, 1, roots(dirs)))[0] == (
        "fix-git: new regressed: old=0.6667 new=0.1235 (means of 3 vs 1 rows)"
    )


def test_agent_error_line(dirs):
    f = put_log(dirs["abs"], "s", "x\ny\n")
    t = flip(
        {"verifier_logs_dir": str(f.parent), "response": {"metadata": {"terminus2_error_type": "TimeoutError"}}},
        category="flipped_agent_error",
    )
    assert lines(flip_message(t, 1, roots(dirs))) == [
        "fix-git: new regressed: old=1.0 new=0.0",
        "    new agent error: terminus2_error_type=TimeoutError",
        f"    new verifier output (last 1 lines of {f}):",
        "    | y",
    ] or lines(flip_message(t, 1, roots(dirs))) == [
        "fix-git: new regressed: old=1.0 new=0.0",
        "    new agent error: terminus2_error_type=TimeoutError",
        f"    new verifier output (last 1 line of {f}):",
        "    | y",
    ]


def test_winner_agent_error_line_names_the_winner(dirs):
    t = flip(
        old_extra={"error": "Traceback\nValueError: late"},
        new_extra={"test_output": "loser says\nFAILED test_x"},
        category="flipped_agent_error",
    )
    got = lines(flip_message(t, 1, roots(dirs)))
    assert got[0] == "fix-git: new regressed: old=1.0 new=0.0"
    assert got[1].startswith("    old agent error: ")
    assert got[1].endswith("ValueError: late")
    assert got[-1] == "    | FAILED test_x"
    assert "new verifier output" in got[-2] and "row field 'test_output'" in got[-2]


def test_failure_kind_line(dirs):
    t = flip({"failure_kind": "harbor:verifier_timeout", "mask_sample": False, "test_output": "t1\nt2\nt3\n"})
    assert lines(flip_message(t, 2, roots(dirs))) == [
        "fix-git: new regressed: old=1.0 new=0.0",
        "    new scored with failure_kind=harbor:verifier_timeout (not masked)",
        "    new verifier output (last 2 lines of row field 'test_output'):",
        "    | t2",
        "    | t3",
    ]


def test_agent_error_line_comes_before_failure_kind_line(dirs):
    t = flip(
        {"failure_kind": "harbor:verifier_timeout", "error": "boom", "test_output": "t1\nt2\n"},
        category="flipped_agent_error",
    )
    got = lines(flip_message(t, 1, roots(dirs)))
    assert got[0] == "fix-git: new regressed: old=1.0 new=0.0"
    assert got[1].startswith("    new agent error: ") and got[1].endswith("boom")
    assert got[2] == "    new scored with failure_kind=harbor:verifier_timeout (not masked)"
    assert got[-1] == "    | t2"


# --- lookup order ----------------------------------------------------------------------------


def test_relative_dir_tried_under_invocation_dir_first(dirs):
    f = put_log(dirs["inv"], "logs/sess-1", "from invocation\n")
    put_log(dirs["new"], "logs/sess-1", "from new file dir\n")
    put_log(dirs["extra1"], "logs/sess-1", "from extra1\n")
    t = flip({"verifier_logs_dir": "logs/sess-1", "test_output": "embedded"})
    got = lines(flip_message(t, 5, roots(dirs)))
    assert got[1].startswith("    new verifier output (last ")
    assert got[1].endswith(f" of {f}):")
    assert got[2:] == ["    | from invocation"]


def test_relative_dir_then_the_sides_own_file_dir(dirs):
    put_log(dirs["old"], "logs/sess-1", "from old file dir\n")
    f = put_log(dirs["new"], "logs/sess-1", "from new file dir\n")
    put_log(dirs["extra1"], "logs/sess-1", "from extra1\n")
    t = flip({"verifier_logs_dir": "logs/sess-1"})
    msg = flip_message(t, 5, roots(dirs))
    assert f"of {f}):" in lines(msg)[1]
    assert lines(msg)[2:] == ["    | from new file dir"]


def test_old_loser_uses_the_old_files_dir(dirs):
    put_log(dirs["new"], "logs/sess-1", "from new file dir\n")
    f = put_log(dirs["old"], "logs/sess-1", "from old file dir\n")
    t = flip(old_extra={"verifier_logs_dir": "logs/sess-1"}, old_reward=0.0, new_reward=1.0)
    msg = flip_message(t, 5, roots(dirs))
    assert lines(msg)[0] == "fix-git: new improved: old=0.0 new=1.0"
    assert lines(msg)[1].startswith("    old verifier output (last ")
    assert f"of {f}):" in lines(msg)[1]
    assert lines(msg)[2:] == ["    | from old file dir"]


def test_relative_dir_then_extra_roots_in_order(dirs):
    f1 = put_log(dirs["extra1"], "logs/sess-1", "from extra1\n")
    put_log(dirs["extra2"], "logs/sess-1", "from extra2\n")
    t = flip({"verifier_logs_dir": "logs/sess-1"})
    msg = flip_message(t, 5, roots(dirs))
    assert f"of {f1}):" in lines(msg)[1]
    assert lines(msg)[2:] == ["    | from extra1"]


def test_relative_dir_found_only_under_the_last_extra_root(dirs):
    f2 = put_log(dirs["extra2"], "logs/sess-1", "from extra2\n")
    t = flip({"verifier_logs_dir": "logs/sess-1"})
    msg = flip_message(t, 5, roots(dirs))
    assert f"of {f2}):" in lines(msg)[1]
    assert lines(msg)[2:] == ["    | from extra2"]


def test_other_sides_dir_is_not_searched(dirs):
    put_log(dirs["old"], "logs/sess-1", "from old file dir\n")
    t = flip({"verifier_logs_dir": "logs/sess-1"})
    msg = flip_message(t, 5, roots(dirs))
    assert "from old file dir" not in msg
    line = lines(msg)[1]
    assert line.startswith("    new verifier output unavailable: logs/sess-1 not found under ")
    for name in ("inv", "new", "extra1", "extra2"):
        assert str(dirs[name]) in line, name
    assert str(dirs["old"]) not in line


def test_dir_without_test_stdout_falls_back_to_embedded(dirs):
    (dirs["abs"] / "sess-1").mkdir()
    (dirs["abs"] / "sess-1" / "reward.txt").write_text("0\n", encoding="utf-8")
    t = flip({"verifier_logs_dir": str(dirs["abs"] / "sess-1"), "verifier_stdout": "v1\nv2\n"})
    assert lines(flip_message(t, 2, roots(dirs)))[1:] == [
        "    new verifier output (last 2 lines of row field 'verifier_stdout'):",
        "    | v1",
        "    | v2",
    ]


def test_missing_logs_dir_falls_back_to_embedded(dirs):
    t = flip({"verifier_logs_dir": "logs/gone", "test_output": "e1\ne2\ne3\n"})
    assert lines(flip_message(t, 2, roots(dirs)))[1:] == [
        "    new verifier output (last 2 lines of row field 'test_output'):",
        "    | e2",
        "    | e3",
    ]


@pytest.mark.parametrize(
    "fields, source, text",
    [
        ({"test_output": "T1\nT2", "verifier_stdout": "S1\nS2", "verifier_output": "O1\nO2"}, "test_output", "T2"),
        ({"test_output": "  \n\n", "verifier_stdout": "S1\nS2", "verifier_output": "O1\nO2"}, "verifier_stdout", "S2"),
        ({"test_output": None, "verifier_stdout": "", "verifier_output": "O1\nO2"}, "verifier_output", "O2"),
        ({"verifier_output": "O1\nO2", "verifier_stdout": "S1\nS2"}, "verifier_stdout", "S2"),
    ],
)
def test_embedded_fields_first_non_blank_in_order(fields, source, text, dirs):
    t = flip(dict(fields))
    assert lines(flip_message(t, 1, roots(dirs)))[1:] == [
        f"    new verifier output (last 1 lines of row field '{source}'):",
        f"    | {text}",
    ] or lines(flip_message(t, 1, roots(dirs)))[1:] == [
        f"    new verifier output (last 1 line of row field '{source}'):",
        f"    | {text}",
    ]


def test_no_logs_dir_and_no_embedded_output(dirs):
    t = flip({"test_output": "   "})
    assert lines(flip_message(t, 15, roots(dirs))) == [
        "fix-git: new regressed: old=1.0 new=0.0",
    ]


def test_absolute_dir_not_found(dirs):
    gone = dirs["abs"] / "gone"
    t = flip({"verifier_logs_dir": str(gone)})
    line = lines(flip_message(t, 15, roots(dirs)))[1]
    assert line.startswith(f"    new verifier output unavailable: {gone} not found")


def test_not_found_without_extra_roots(dirs):
    t = flip({"verifier_logs_dir": "results/harbor/verifier/sess-9"})
    line = lines(flip_message(t, 15, roots(dirs, extra=())))[1]
    assert line.startswith("    new verifier output unavailable: results/harbor/verifier/sess-9 not found under ")
    assert str(dirs["inv"]) in line and str(dirs["new"]) in line
    assert str(dirs["extra1"]) not in line


# --- unreadable logs -------------------------------------------------------------------------


def make_unreadable(monkeypatch, target: Path) -> None:
    """chmod 000 (enough for non-root) and refuse opens of `target` (so it holds as root too)."""
    target.chmod(0)
    real = os.path.realpath(target)

    def hit(p) -> bool:
        if isinstance(p, int):
            return False
        try:
            return os.path.realpath(os.fsdecode(os.fspath(p))) == real
        except TypeError:
            return False

    real_open = builtins.open
    real_os_open = os.open

    def fake_open(file, *a, **k):
        if hit(file):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *a, **k)

    def fake_os_open(path, *a, **k):
        if hit(path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_os_open(path, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)


def test_unreadable_log_file_gives_cannot_read_and_none_of_its_content(dirs):
    f = put_log(dirs["abs"], "s", "SECRET-CONTENT-1\nSECRET-CONTENT-2\n")
    t = flip({"verifier_logs_dir": str(f.parent)})
    try:
        with pytest.MonkeyPatch.context() as mp:
            make_unreadable(mp, f)
            msg = flip_message(t, 15, roots(dirs))
    finally:
        f.chmod(0o644)
    got = lines(msg)
    assert got[0] == "fix-git: new regressed: old=1.0 new=0.0"
    assert len(got) == 2
    assert got[1].startswith(f"    new verifier output unavailable: cannot read {f}: ")
    assert "Permission denied" in got[1]
    assert "SECRET-CONTENT" not in msg


def test_unreadable_test_stdout_in_a_dir_does_not_fall_back_to_embedded(dirs):
    f = put_log(dirs["inv"], "logs/sess-1", "SECRET-CONTENT\n")
    t = flip({"verifier_logs_dir": "logs/sess-1", "test_output": "EMBEDDED-TEXT"})
    try:
        with pytest.MonkeyPatch.context() as mp:
            make_unreadable(mp, f)
            msg = flip_message(t, 15, roots(dirs))
    finally:
        f.chmod(0o644)
    got = lines(msg)
    assert len(got) == 2
    assert got[1].startswith(f"    new verifier output unavailable: cannot read {f}: ")
    assert "SECRET-CONTENT" not in msg
    assert "EMBEDDED-TEXT" not in msg


# --- the tail --------------------------------------------------------------------------------


def test_tail_zero_shows_no_lines(dirs):
    f = put_log(dirs["abs"], "s", numbered("log"))
    t = flip({"verifier_logs_dir": str(f.parent)})
    msg = flip_message(t, 0, roots(dirs))
    got = lines(msg)
    assert got[0] == "fix-git: new regressed: old=1.0 new=0.0"
    assert not any(line.lstrip().startswith("|") for line in got)
    assert "log line" not in msg


def test_tail_longer_than_the_text_shows_it_all(dirs):
    t = flip({"test_output": "first\nsecond\n\n\n"})
    got = lines(flip_message(t, 15, roots(dirs)))
    assert got[1].startswith("    new verifier output (last ")
    assert got[1].endswith(" of row field 'test_output'):")
    assert got[2:] == ["    | first", "    | second"]


def test_tail_is_exact_and_keeps_inner_blank_lines(dirs):
    t = flip({"test_output": "a\nb\n\nc\n\n"})
    got = lines(flip_message(t, 3, roots(dirs)))
    assert got[1] == "    new verifier output (last 3 lines of row field 'test_output'):"
    assert [g.rstrip() for g in got[2:]] == ["    | b", "    |", "    | c"]


def test_tail_one_of_a_log_with_no_trailing_newline(dirs):
    f = put_log(dirs["abs"], "s", "p\nq\nr")
    t = flip({"verifier_logs_dir": str(f.parent)})
    assert lines(flip_message(t, 1, roots(dirs)))[2:] == ["    | r"]


def test_tail_of_a_large_log(dirs):
    f = put_log(dirs["abs"], "s", numbered("big", 50000))
    t = flip({"verifier_logs_dir": str(f.parent)})
    got = lines(flip_message(t, 15, roots(dirs)))
    assert got[1] == f"    new verifier output (last 15 lines of {f}):"
    assert got[2:] == [f"    | big line {i}" for i in range(49986, 50001)]


# --- the losing row --------------------------------------------------------------------------


def test_losing_row_is_the_losers_lowest_finite_reward_row(dirs):
    f_hi = put_log(dirs["abs"], "hi", "from the 1.0 row\n")
    f_lo = put_log(dirs["abs"], "lo", "from the 0.0 row\n")
    f_mid = put_log(dirs["abs"], "mid", "from the 0.5 row\n")
    old = [{"task_id": "fix-git", "reward": 1.0, "test_output": "WINNER OUTPUT"}]
    new = [
        {"task_id": "fix-git", "reward": 1.0, "verifier_logs_dir": str(f_hi.parent)},
        {"task_id": "fix-git", "reward": 0.0, "verifier_logs_dir": str(f_lo.parent)},
        {"task_id": "fix-git", "reward": 0.5, "verifier_logs_dir": str(f_mid.parent)},
    ]
    (t,) = compare_rollouts(old, new).tasks
    assert t.category == "flipped" and t.loser == "new"
    msg = flip_message(t, 5, roots(dirs))
    assert lines(msg)[0] == "fix-git: new regressed: old=1.0 new=0.5 (means of 1 vs 3 rows)"
    assert f"of {f_lo}):" in lines(msg)[1]
    assert lines(msg)[2:] == ["    | from the 0.0 row"]
    assert "WINNER" not in msg
    assert "1.0 row" not in msg and "0.5 row" not in msg


def test_nothing_of_the_winners_output(dirs):
    f = put_log(dirs["inv"], "logs/win", "WINNER LOG\n")
    t = flip(old_extra={"verifier_logs_dir": "logs/win", "test_output": "WINNER EMBEDDED"})
    msg = flip_message(t, 15, roots(dirs))
    assert "WINNER" not in msg
    assert lines(msg) == [
        "fix-git: new regressed: old=1.0 new=0.0",
    ]
    assert f.exists()


@pytest.mark.parametrize("value", ["", None])
def test_unset_logs_dir_is_no_logs_dir(value, dirs):
    t = flip({"verifier_logs_dir": value})
    assert lines(flip_message(t, 15, roots(dirs))) == [
        "fix-git: new regressed: old=1.0 new=0.0",
    ]


def test_flip_message_has_no_winner_log_even_when_loser_has_none(dirs):
    f = put_log(dirs["abs"], "win", "WIN-LOG\n")
    t = flip(old_extra={"verifier_logs_dir": str(f.parent)}, new_extra={"verifier_logs_dir": str(dirs["abs"] / "nope")})
    msg = flip_message(t, 15, roots(dirs))
    assert "WIN-LOG" not in msg
    assert lines(msg)[1].startswith(f"    new verifier output unavailable: {dirs['abs'] / 'nope'} not found")


def test_trailing_crlf_newlines_are_dropped_before_the_tail(dirs):
    # "the last N lines of the text (trailing newlines dropped first)": a log written with CRLF
    # endings must not spend the tail on an empty last line.
    f = put_log(dirs["abs"], "s", "")
    f.write_bytes(b"first\r\nsecond\r\nthird\r\n\r\n")
    t = flip({"verifier_logs_dir": str(f.parent)})
    got = lines(flip_message(t, 2, roots(dirs)))
    assert [g.rstrip() for g in got[2:]] == ["    | second", "    | third"]


# --- only test-stdout.txt, and only under the roots ----------------------------------------------


def test_a_symlinked_test_stdout_is_followed_within_the_log_roots(dirs):
    real = put_log(dirs["extra1"], "kept", "from a shared log store\n")
    d = dirs["new"] / "logs" / "s1"
    d.mkdir(parents=True)
    (d / "test-stdout.txt").symlink_to(real)
    t = flip({"verifier_logs_dir": "logs/s1"})
    assert lines(flip_message(t, 3, roots(dirs)))[1:] == [
        f"    new verifier output (last 3 lines of {real}):",
        "    | from a shared log store",
    ]


@pytest.mark.parametrize("target", ["outside", "/dev/zero", "/etc/passwd", "up"])
def test_a_symlinked_test_stdout_leading_elsewhere_is_refused(dirs, tmp_path, target):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN\n", encoding="utf-8")
    d = dirs["new"] / "logs" / "s1"
    d.mkdir(parents=True)
    link = {
        "outside": str(secret),
        "/dev/zero": "/dev/zero",
        "/etc/passwd": "/etc/passwd",
        "up": "../../../secret.txt",
    }[target]
    (d / "test-stdout.txt").symlink_to(link)
    t = flip({"verifier_logs_dir": "logs/s1"})
    got = lines(flip_message(t, 3, roots(dirs)))
    assert got[1:] == [
        f"    new verifier output unavailable: {d / 'test-stdout.txt'} is a symlink leading outside the log roots"
    ]


def test_a_fifo_test_stdout_is_never_opened(dirs):
    d = dirs["new"] / "logs" / "s1"
    d.mkdir(parents=True)
    os.mkfifo(d / "test-stdout.txt")
    t = flip({"verifier_logs_dir": "logs/s1"})
    got = lines(flip_message(t, 3, roots(dirs)))
    assert got[1:] == [f"    new verifier output unavailable: {d / 'test-stdout.txt'} is not a regular file"]


# --- bounded by construction --------------------------------------------------------------------


def test_one_long_line_is_read_boundedly_and_cut_with_a_marker(dirs):
    f = put_log(dirs["abs"], "s", "")
    f.write_bytes(b"x" * (9 << 20))  # 9 MiB, no newline
    t = flip({"verifier_logs_dir": str(f.parent)})
    got = lines(flip_message(t, 15, roots(dirs)))
    assert len(got) == 3
    assert got[2] == f"    | [... cut] {'x' * LINE_CHARS} [... {TAIL_BYTES - LINE_CHARS} more characters cut]"


def test_many_long_lines_keep_the_asked_count_each_cut(dirs):
    f = put_log(dirs["abs"], "s", "".join(f"{i}:" + "y" * 5000 + "\n" for i in range(100)))
    t = flip({"verifier_logs_dir": str(f.parent)})
    got = lines(flip_message(t, 4, roots(dirs)))[2:]
    assert [line.split(":", 1)[0] for line in got] == ["    | 96", "    | 97", "    | 98", "    | 99"]
    assert all(len(line) < LINE_CHARS + 60 and line.endswith("more characters cut]") for line in got)


def test_an_embedded_output_is_cut_alike(dirs):
    t = flip({"test_output": "z" * 200_000})
    got = lines(flip_message(t, 15, roots(dirs)))
    assert got[2].startswith("    | [... cut] zzz") and got[2].endswith("more characters cut]")
    assert len(got) == 3


def test_control_characters_and_commands_in_a_log_are_shown_escaped(dirs):
    f = put_log(dirs["abs"], "s", "\x1b[2J\rclear\x07\x00\n::error::forged\n")
    t = flip({"verifier_logs_dir": str(f.parent)}, category="flipped")
    msg = flip_message(t, 2, roots(dirs))
    assert lines(msg)[2:] == ["    | \\x1b[2J\\rclear\\x07\\x00", "    | ::error::forged"]
    assert not any(c in msg for c in "\x1b\r\x07\x00")


# --- context without verifier logs ---------------------------------------------------------------


def test_without_logs_both_rows_last_assistant_messages_are_shown(dirs):
    t = flip({"response": assistant("I think the answer is 41")}, {"response": assistant("The answer is 42")})
    evidence = flip_evidence(t, 15, roots(dirs))
    assert evidence.no_output  # the report says it once for the run, not in each flip's message
    assert NO_LOG not in evidence.text
    assert lines(evidence.text) == [
        "fix-git: new regressed: old=1.0 new=0.0",
        "    new (losing) row's last assistant message:",
        "    | I think the answer is 41",
        "    old (winning) row's last assistant message:",
        "    | The answer is 42",
    ]


def test_a_last_message_is_bounded_and_escaped(dirs):
    long = "\n".join(f"step {i}" for i in range(100)) + "\n" + "x" * 5000 + "\x1b[2J"
    t = flip({"response": assistant(long)})
    text = flip_evidence(t, 15, roots(dirs)).text
    assert "\x1b" not in text and "\\x1b[2J" in text
    shown = lines(text)[2:]
    assert len(shown) == 1 and shown[0].startswith("    | [... cut] ") and len(shown[0]) < 700


def test_a_specific_unavailable_reason_stays_in_the_flip(dirs):
    t = flip({"verifier_logs_dir": str(dirs["abs"] / "gone"), "response": assistant("done")})
    evidence = flip_evidence(t, 15, roots(dirs))
    assert not evidence.no_output
    assert lines(evidence.text)[1].startswith("    new verifier output unavailable: ")
    assert lines(evidence.text)[2:] == ["    new (losing) row's last assistant message:", "    | done"]


def test_a_task_keyed_on_its_index_shows_its_prompt(dirs):
    prompt = {
        "input": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "What   is\nthe capital of France? " + "Explain. " * 40},
        ]
    }
    old = [{"_ng_task_index": 3, "reward": 1.0, "responses_create_params": prompt}]
    new = [{"_ng_task_index": 3, "reward": 0.0, "responses_create_params": prompt}]
    (t,) = compare_rollouts(old, new).tasks
    text = flip_evidence(t, 15, roots(dirs), excerpt=True).text
    line = lines(text)[1]
    assert line.startswith("    prompt: What is the capital of France? Explain.") and line.endswith(" …")
    assert len(line) < 140
    assert "prompt:" not in flip_evidence(t, 15, roots(dirs)).text

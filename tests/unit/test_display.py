"""Display escaping (core/escaping.py) and bounded reads of files the gate did not write (core/reading/bounded.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_rollout_parity.core.escaping import (
    html_text,
    markdown_text,
    terminal_line,
    terminal_text,
    visible,
)
from pytest_rollout_parity.core.reading.bounded import NotRegular, TooLarge, open_regular, read_capped, read_end
from pytest_rollout_parity.core.reports.json_file import write_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain-task_1/a.b", "plain-task_1/a.b"),
        ("a\nb", "a\\nb"),
        ("\x1b[31mred\r\x07\x00\x7f", "\\x1b[31mred\\r\\x07\\x00\\x7f"),
        ("tab\there", "tab\\there"),
        ("nel\x85 ls\u2028 rlo\u202e", "nel\\x85 ls\\u2028 rlo\\u202e"),
        ("caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"),
    ],
)
def test_visible_keeps_text_on_one_line(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_visible_keeps_tabs_in_log_lines_when_asked() -> None:
    assert visible("a\tb\rc", keep_tabs=True) == "a\tb\\rc"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("::error::x", "\\x3a:error::x"),
        ("   ::warning::x", "   \\x3a:warning::x"),
        ("\t::stop-commands::t", "\t\\x3a:stop-commands::t"),
        ("a ::error::x", "a ::error::x"),
        (":single", ":single"),
        ("parity: PASS: forged", "parity\\x3a PASS: forged"),
        ("  partial: 1 of 2", "  partial\\x3a 1 of 2"),
        ("a parity: PASS", "a parity: PASS"),
    ],
)
def test_no_line_starts_a_workflow_command(line: str, shown: str) -> None:
    assert terminal_line(line, keep_tabs=True) == shown


def test_terminal_text_guards_each_line_and_keeps_the_structure() -> None:
    text = terminal_text("head\n::error::x\n    | \x1b[2Jlog")
    assert text.split("\n") == ["head", "\\x3a:error::x", "    | \\x1b[2Jlog"]
    assert terminal_line("ok\n::x") == "ok\\n::x"


SPECIALS = set("\\`*_{}[]<>#+!|~&$@^")  # `(` and `)` need no escape: `[` always has one


def _unescaped(shown: str) -> str:
    """What is left of a Markdown text once every backslash escape is taken out."""
    return re.sub(r"\\.", "", shown)


def test_markdown_text_is_literal_in_markdown_and_readable() -> None:
    shown = markdown_text("[a](http://x) **b** <i>&` | #h www.evil.example @user\nnext")
    assert shown == ("\\[a\\](http\\://x) \\*\\*b\\*\\* \\<i\\>\\&\\` \\| \\#h www\\.evil.example \\@user\\\\nnext")
    assert not SPECIALS & set(_unescaped(shown)) and "http://" not in shown and "www." not in shown
    # what the reader saw entity-escaped now reads as written
    assert markdown_text("resources_servers/calendar: 3 tasks") == "resources\\_servers/calendar: 3 tasks"


@given(st.text())
def test_markdown_text_escapes_every_special_and_hides_nothing(text: str) -> None:
    shown = markdown_text(text)
    assert not SPECIALS & set(_unescaped(shown))
    assert re.sub(r"\\(.)", r"\1", shown) == visible(text)  # taking the escapes out gives the text back


def test_html_text_is_literal_in_html() -> None:
    assert html_text("</pre><script>&amp;\x1b") == "&lt;/pre&gt;&lt;script&gt;&amp;amp;\\x1b"
    assert html_text("a\n<b>", lines=True) == "a\n&lt;b&gt;"


# --- bounded reads ---------------------------------------------------------------------------------


def test_open_regular_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotRegular):
        open_regular(fifo)


def test_open_regular_refuses_a_link_when_not_following(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"x")
    link = tmp_path / "link"
    link.symlink_to(real)
    with open_regular(link) as handle:
        assert handle.read() == b"x"
    with pytest.raises(NotRegular):
        open_regular(link, follow=False)
    dev = tmp_path / "dev"
    dev.symlink_to("/dev/zero")
    with pytest.raises(NotRegular):
        open_regular(dev)


def test_read_capped_refuses_a_larger_file_unread(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(1 << 40)  # sparse: 1 TiB
    with pytest.raises(TooLarge):
        read_capped(big, 1 << 20)
    small = tmp_path / "small"
    small.write_bytes(b"abc")
    assert read_capped(small, 3) == b"abc"


def test_read_end_reads_only_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a" * 100 + b"tail")
    with open_regular(path) as handle:
        assert read_end(handle, 4) == (b"tail", True)
    with open_regular(path) as handle:
        assert read_end(handle, 1000) == (b"a" * 100 + b"tail", False)


def test_an_interrupted_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "summary.json"

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text(target, "{}")
    assert list(tmp_path.iterdir()) == []

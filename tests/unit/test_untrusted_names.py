"""Names and files the gate finds: escaping as a class of characters, globs that stay home, companions."""

from __future__ import annotations

import glob
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_rollout_parity.core.errors import CompareInputError
from pytest_rollout_parity.core.escaping import has_invisible, markdown_text, terminal_line, visible
from pytest_rollout_parity.core.judging.companions import check_companions
from pytest_rollout_parity.core.reading import shards
from pytest_rollout_parity.core.reading.shards import ShardPatternError, expand

HIDDEN = ("Cc", "Cf", "Zl", "Zp")
EVERY_HIDDEN = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in HIDDEN]


def test_every_control_format_and_separator_character_is_escaped() -> None:
    """The class, not a list: each such character of this Python's Unicode database."""
    missed = [f"U+{ord(char):04X}" for char in EVERY_HIDDEN if visible(char) == char or not has_invisible(char)]
    assert missed == []
    assert visible("a\tb", keep_tabs=True) == "a\tb"
    for char in ("\u200b", "\u2060", "\ufeff", "\u061c", "\u00ad", "\U000e0041", "\u202e", "\u2028"):
        assert visible(f"deploy{char}") != "deploy" and visible(f"deploy{char}").startswith("deploy\\")


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_no_hidden_character_survives_escaping(text: str) -> None:
    for shown in (visible(text), terminal_line(text), markdown_text(text)):
        assert not any(unicodedata.category(char) in HIDDEN for char in shown)
    assert has_invisible(text) == any(unicodedata.category(char) in HIDDEN for char in text)


@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), max_size=40))
def test_visible_text_is_shown_as_it_is(text: str) -> None:
    assert visible(text) == text and not has_invisible(text)


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    return path


def test_a_recursive_glob_over_linked_directories_ends_with_the_real_files(tmp_path: Path) -> None:
    touch(tmp_path / "run" / "s-0.jsonl")
    touch(tmp_path / "run" / "deep" / "s-1.jsonl")
    (tmp_path / "run" / "a").symlink_to(".")
    (tmp_path / "run" / "b").symlink_to(tmp_path)
    (tmp_path / "run" / "deep" / "up").symlink_to("..")
    shown = [name for _, name in expand("run/**/*.jsonl", tmp_path)]
    assert shown == ["run/deep/s-1.jsonl", "run/s-0.jsonl"]


def test_a_glob_without_links_finds_what_the_standard_library_finds(tmp_path: Path) -> None:
    for name in (
        "run/s-0.jsonl",
        "run/x/s-1.jsonl",
        "run/x/y/s-2.jsonl.gz",
        "run/.hidden/s-3.jsonl",
        "run/.s-4.jsonl",
        "run/x/s-1_failures.jsonl",
        "other/s-5.jsonl",
    ):
        touch(tmp_path / name)
    for pattern in (
        "run/**/*.jsonl*",
        "run/*/*.jsonl",
        "run/**",
        "*/s-[05].jsonl",
        "run/.*.jsonl",
        "**/s-?.jsonl",
        "run/**/**/*.jsonl",
        "**/x/**/*",
    ):
        expected = sorted(
            {
                name
                for name in glob.glob(pattern, root_dir=tmp_path, recursive=True)
                if (tmp_path / name).is_file() and not shards.is_artifact(Path(name).name)
            }
        )
        assert [name for _, name in expand(pattern, tmp_path)] == expected, pattern


def test_a_match_linked_out_of_its_pattern_s_directory_is_refused(tmp_path: Path) -> None:
    secret = touch(tmp_path / "elsewhere" / "secret.jsonl")
    touch(tmp_path / "run" / "s-0.jsonl")
    (tmp_path / "run" / "s-1.jsonl").symlink_to(secret)
    with pytest.raises(ShardPatternError, match=r"'run/s-1.jsonl', a link leading out of 'run'"):
        expand("run/*.jsonl", tmp_path)
    (tmp_path / "run" / "s-1.jsonl").unlink()
    (tmp_path / "run" / "s-1.jsonl").symlink_to(tmp_path / "run" / "s-0.jsonl")  # a link that stays home
    assert [name for _, name in expand("run/*.jsonl", tmp_path)] == ["run/s-0.jsonl", "run/s-1.jsonl"]
    # a pattern whose own directory is a link: the link is the user's, its target the home
    (tmp_path / "staged").symlink_to(tmp_path / "run")
    assert [name for _, name in expand("staged/*.jsonl", tmp_path)] == ["staged/s-0.jsonl", "staged/s-1.jsonl"]


@pytest.mark.parametrize("char", ["\n", "\x1b", "\u200b", "\u2066", "\U000e0020"])
def test_a_matched_name_with_a_hidden_character_is_refused_quoted_escaped(tmp_path: Path, char: str) -> None:
    touch(tmp_path / "run" / f"s{char}.jsonl")
    with pytest.raises(ShardPatternError) as raised:
        expand("run/*.jsonl", tmp_path)
    assert "a name holding a control or invisible character" in str(raised.value)
    assert char not in str(raised.value)


def test_more_matches_than_the_limit_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "MAX_MATCHES", 4)
    for i in range(4):
        touch(tmp_path / f"s-{i}.jsonl")
    assert len(expand("*.jsonl", tmp_path)) == 4
    touch(tmp_path / "s-4.jsonl")
    with pytest.raises(ShardPatternError, match="matches more than 4 files"):
        expand("*.jsonl", tmp_path)


@pytest.mark.parametrize("companion", ["r_failures.jsonl", "r_aggregate_metrics.json", "r_coverage.json"])
def test_a_companion_linked_out_of_its_side_is_refused(tmp_path: Path, companion: str) -> None:
    main = touch(tmp_path / "run" / "r.jsonl")
    secret = touch(tmp_path / "elsewhere" / "secret.json")
    check_companions(main, "run/r.jsonl")  # none there
    (tmp_path / "run" / companion).symlink_to(secret)
    with pytest.raises(CompareInputError, match=f"^run/{companion}: a link leading out of its side's directory"):
        check_companions(main, "run/r.jsonl")


def test_a_side_named_by_a_link_keeps_the_companions_beside_its_target(tmp_path: Path) -> None:
    target = touch(tmp_path / "artifacts" / "r.jsonl")
    touch(tmp_path / "artifacts" / "r_failures.jsonl")
    touch(tmp_path / "artifacts" / "r_coverage.json")
    (tmp_path / "new.jsonl").symlink_to(target)
    (tmp_path / "new_coverage.json").symlink_to(tmp_path / "artifacts" / "r_coverage.json")  # a farm of links
    check_companions(tmp_path / "new.jsonl", "new.jsonl")

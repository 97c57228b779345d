"""Shared helpers for the unit tests of the pure classification core.

The real rows under ``tests/data/real_rows/`` are trimmed upstream NeMo Gym rows (see
``tests/data/real_rows/README.md``); tests copy them and change rewards / ids.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

REAL_ROWS_DIR = Path(__file__).resolve().parent.parent / "data" / "real_rows"


def _read_real(name: str) -> list[dict[str, Any]]:
    text = (REAL_ROWS_DIR / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


@pytest.fixture
def real_rows() -> Callable[[str], list[dict[str, Any]]]:
    """``real_rows("deepswe_opencode_trimmed.jsonl")`` -> fresh deep copies of the file's rows."""

    def load(name: str) -> list[dict[str, Any]]:
        return copy.deepcopy(_read_real(name))

    return load


@pytest.fixture
def real_path() -> Callable[[str], Path]:
    """``real_path(name)`` -> the path of a real-rows file."""
    return lambda name: REAL_ROWS_DIR / name


def dump_rows(rows: Iterable[dict[str, Any]]) -> str:
    """Rows as orjson-like JSONL text (raw UTF-8, one row per ``\\n``-terminated line)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """``write_jsonl("old/r.jsonl", rows_or_text_or_bytes)`` -> the written path under tmp_path."""

    def write(rel: str, content: Any) -> Path:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(dump_rows(content).encode("utf-8"))
        return path

    return write


@pytest.fixture(autouse=True)
def _neutral_cwd(tmp_path_factory, monkeypatch) -> None:
    """Run every test from an empty directory that contains none of the test's files.

    Messages may show a path relative to the working directory when the file lies under it; the
    spec does not fix that display, so the tests must not depend on where pytest was started.
    """
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))

"""Every code block of README.md, docs/ and conftest_examples/ runs as pasted on the bundled pair.

The convention the documents follow (README.md, "Examples in this README"):

- ```sh / ```bash blocks are commands, one a line, run with bash from the repository root. A line's
  trailing comment may say `exit N` (its expected status) and `prints: TEXT` (text its output holds).
  The quick start's `python3 -m venv .venv && .venv/bin/pip install ... &&` is replaced by the
  installed plugin (the test runs in the environment that has it).
- ```python blocks run as a script from the repository root, or, with `file PATH`, are saved there.
- ```ini / ```toml blocks are saved to their `file PATH`, which must match the repository's file.
- An HTML comment right above a block, `<!-- example: clause; clause -->`, sets for the whole block
  `exit N`, `prints "TEXT"`, `file PATH`, `cwd DIR` and `run COMMAND`; `illustration (why)` marks
  one of the few blocks that are not run.
- Blocks in json, yaml, text or no language are output or data shown, not run (the workflow has
  its own test, test_readme_workflow.py).

Each block runs in a fresh copy of `examples/` and `conftest_examples/`, and may leave behind only
files that git ignores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "conftest_examples").rglob("*.md"))]
RUN = {"sh", "bash", "python", "ini", "toml"}
SHOWN = {"", "text", "json", "yaml"}
MAX_ILLUSTRATIONS = 3
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"^\s*<!-- example: (?P<clauses>.*?) -->\s*$")
VENV_PREFIX = re.compile(r"python3 -m venv \.venv && \.venv/bin/pip install -q \S+ && ")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    body: str
    marker: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}"


def _marker(text: str) -> dict[str, str]:
    clauses: dict[str, str] = {}
    for clause in text.split("; "):
        word, _, rest = clause.strip().partition(" ")
        clauses[word] = rest.strip().strip('"')
    return clauses


def _blocks(doc: Path) -> list[Block]:
    text = doc.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        before = [line for line in text[: match.start()].splitlines() if line.strip()]
        marker = MARKER.match(before[-1]) if before else None
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines()) + "\n"
        blocks.append(
            Block(
                doc,
                text.count("\n", 0, match.start()) + 1,
                match.group("lang"),
                body,
                _marker(marker.group("clauses")) if marker else {},
            )
        )
    return blocks


ALL = [block for doc in DOCS for block in _blocks(doc)]
RUNNABLE = [block for block in ALL if block.lang in RUN and "illustration" not in block.marker]


def test_every_block_is_run_or_shown() -> None:
    unknown = [(block.name, block.lang) for block in ALL if block.lang not in RUN | SHOWN]
    assert not unknown, "a code block in a language the examples test neither runs nor shows"
    illustrations = [block.name for block in ALL if "illustration" in block.marker]
    assert len(illustrations) <= MAX_ILLUSTRATIONS, illustrations
    assert len(RUNNABLE) >= 8


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "PYTEST_XDIST", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST"))
    }
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["COLUMNS"] = "200"
    return env


def _workspace(root: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache")
    shutil.copytree(REPO / "examples", root / "examples", ignore=ignore)
    shutil.copytree(REPO / "conftest_examples", root / "conftest_examples", ignore=ignore)
    return root


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _commands(body: str) -> list[tuple[str, Optional[int], Optional[str]]]:
    """(command, expected status, expected text) per command line of a shell block."""
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command, _, comment = line.partition(" # ")
        status = re.search(r"\bexit (\d+)", comment)
        prints = re.search(r"prints: (.*)$", comment)
        command = VENV_PREFIX.sub("", command.strip()).replace(".venv/bin/", "")
        commands.append(
            (command, int(status.group(1)) if status else None, prints.group(1).strip() if prints else None)
        )
    return commands


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)


def _check(done: subprocess.CompletedProcess[str], status: int, prints: Optional[str], what: str) -> str:
    output = done.stdout + done.stderr
    assert done.returncode == status, f"{what}: exit {done.returncode}, expected {status}\n{output}"
    if prints:
        assert prints in output, f"{what}: {prints!r} not in its output\n{output}"
    return output


def _ignored(paths: list[str]) -> list[str]:
    """The paths (relative to the repository) that git ignores, by the repository's .gitignore files."""
    done = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(paths) + "\n",
        capture_output=True,
        text=True,
    )
    return done.stdout.splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=[block.name for block in RUNNABLE])
def test_block_runs_as_pasted(block: Block, tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    before = _files(root)
    marker = block.marker
    status = int(marker.get("exit", "0"))
    cwd = root / marker.get("cwd", ".")
    written = marker.get("file")
    outputs = []
    if written:
        target = root / written
        if block.lang in ("ini", "toml") and (REPO / written).exists():
            assert block.body == (REPO / written).read_text(encoding="utf-8"), f"{block.name} differs from {written}"
        target.write_text(block.body, encoding="utf-8")
    elif block.lang in ("ini", "toml"):
        pytest.fail(f"{block.name}: a config block needs `file PATH` in its example marker")
    if block.lang in ("sh", "bash"):
        for command, line_status, prints in _commands(block.body):
            done = _run(["bash", "-c", command], cwd)
            outputs.append(_check(done, status if line_status is None else line_status, prints, command))
    elif block.lang == "python" and not written:
        outputs.append(_check(_run([sys.executable, "-c", block.body], cwd), status, None, block.name))
    if "run" in marker:
        outputs.append(_check(_run(["bash", "-c", marker["run"]], cwd), status, None, marker["run"]))
    assert outputs, f"{block.name}: nothing ran"
    if "prints" in marker:
        assert any(marker["prints"] in output for output in outputs), (marker["prints"], outputs)
    left = sorted(_files(root) - before - ({written} if written else set()))
    if left and (REPO / ".git").exists() and shutil.which("git"):
        assert sorted(_ignored(left)) == left, f"{block.name} wrote files git does not ignore"

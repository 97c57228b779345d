"""Shared builders for the pytester integration tests.

Rows are shaped like real NeMo Gym rows (see tests/data/real_rows/README.md): the old side is the
TB 2.1 legacy resources server (`task_name: "terminal-bench/<task>"`, embedded `test_output`), the
new side the Harbor path (`_ng_task_id: {"taskset", "task_id"}`, `verifier_logs_dir`,
mask_sample/failure_kind).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Optional, Union

import pytest

try:  # pragma: no cover - only a speed-up
    # An in-process pytester run forgets every module it imported. Hypothesis's pytest plugin
    # (installed beside this one) imports hypothesis in each inner run, which then re-imports and
    # re-rewrites ~70 modules (~1 s a run). Imported here once, the inner runs reuse it.
    import hypothesis  # noqa: F401
except ImportError:  # pragma: no cover
    pass

# The plugin imports the gate (pydantic, the core) only in runs that give a parity option. Imported
# here once, every in-process run reuses the same modules instead of importing them afresh, and
# `make_unreadable` patches the very modules those runs read with.
import pytest_rollout_parity.plugin.activate  # noqa: F401
from pytest_rollout_parity.core.reports.json_file import read_summary

TASKSET = "terminal-bench-2-1"
OLD = "old/rollouts.jsonl"
BESIDE = "test_beside.py"
NEW = "new/rollouts.jsonl"
# A fixture of two or three tasks that loses one (masked, missing, an agent error) is over the default
# 20% budgets, whose share rounds down; a test about something else allows that one task.
SMALL_RUN_BUDGET = ("--parity-max-uncompared=1", "--parity-max-masked=1", "--parity-max-missing=1")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

Content = Union[str, bytes, Iterable[dict[str, Any]]]


def example_module(name: str) -> ModuleType:
    """A generator script of `examples/` (stdlib only), imported once by its path."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# The row builders of the margin-mode pairs' generator: one definition of a real-shaped row.
_ROWS = example_module("make_noise_pairs")


def legacy_row(task: str, reward: Any, *, output: Optional[str] = None, **extra: Any) -> dict[str, Any]:
    """A TB 2.1 legacy resources-server row."""
    output = output if output is not None else f"== {task} ==\nPASSED test_outputs.py::test_a\n"
    return _ROWS.legacy_row(task, reward, response_id=f"resp_{task}", test_output=output, **extra)  # type: ignore[no-any-return]


def harbor_row(
    task: str,
    reward: Any,
    *,
    taskset: str = TASKSET,
    logs_dir: Optional[str] = None,
    index: int = 0,
    rollout: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A Harbor-path resources-server row."""
    if logs_dir is not None:
        extra["verifier_logs_dir"] = logs_dir
    return _ROWS.harbor_row(
        task,
        reward,
        response_id=f"resp_{task}",
        index=index,
        rollout=rollout,  # type: ignore[no-any-return]
        taskset=taskset,
        task_source="harbor_terminal_bench_2_1",
        **extra,
    )


def failure_record(
    task: Optional[str] = None,
    *,
    taskset: str = TASKSET,
    index: Optional[int] = None,
    rollout: Optional[int] = None,
    cls: str = "environment_server_failed",
) -> dict[str, Any]:
    """A failures-sidecar record (`<stem>_failures.jsonl`)."""
    record: dict[str, Any] = {"_ng_failure_class": cls, "_ng_failure_message": "sandbox did not start"}
    if task is not None:
        record["_ng_task_id"] = {"taskset": taskset, "task_id": task}
    if index is not None:
        record["_ng_task_index"] = index
    if rollout is not None:
        record["_ng_rollout_index"] = rollout
    return record


def dump(rows: Iterable[dict[str, Any]]) -> str:
    """Rows as Gym writes them: raw UTF-8, one object per `\\n`-terminated line."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def markdown_as_read(path: Path) -> str:
    """A Markdown report's text as a reader sees it: backslash escapes and character references undone."""
    import html
    import re

    return html.unescape(re.sub(r"\\(.)", r"\1", path.read_text(encoding="utf-8")))


def output_lines(result: pytest.RunResult) -> list[str]:
    """The non-blank lines of stdout and stderr together."""
    return [line for line in result.outlines + result.errlines if line.strip()]


def summary_lines(result: pytest.RunResult) -> list[str]:
    """Output lines with pytest 8.0's short-summary form `- reason: <reason>` read as later releases' `- <reason>`."""
    return [line.replace(" - reason: ", " - ", 1) for line in result.outlines]


def all_text(result: pytest.RunResult) -> str:
    return "\n".join(result.outlines + result.errlines)


def junit_cases(path: Path) -> dict[str, ET.Element]:
    """JUnit `testcase` elements by name."""
    return {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}  # type: ignore[misc]


def junit_properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in case.iter("property")}  # type: ignore[misc]


# Seconds before a subprocess run counts as hung (a FIFO read forever): far above any run's time on a
# loaded machine, so it catches a hang and never a slow run.
HANG_GUARD = 300.0


def json_targets(args: Sequence[str], option: str = "--parity-json") -> list[Path]:
    """The files a run's arguments ask the JSON summary in (`--parity-json=PATH`, `--parity-json PATH`)."""
    found = [arg.split("=", 1)[1] for arg in args if arg.startswith(f"{option}=")]
    found += [after for arg, after in itertools.pairwise(args) if arg == option]
    return [Path.cwd() / target for target in found]


@contextmanager
def summaries_checked(args: Sequence[str], option: str = "--parity-json") -> Iterator[None]:
    """Each JSON summary the run writes (a file new or changed by it, named by ``option``) reads back
    into the summary's dataclasses, its layout (`core/reports/json_file.py`), which forbid keys they do
    not name."""
    targets = json_targets(args, option)
    before = {path: path.read_bytes() if path.is_file() else None for path in targets}
    yield
    for path, old in before.items():
        if path.is_file() and path.read_bytes() != old:
            read_summary(json.loads(path.read_bytes()))


class Gate:
    """Writes rollout files under the pytester dir and runs pytest on them."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def write(self, rel: str, content: Content) -> Path:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        else:
            path.write_bytes(dump(content).encode("utf-8"))
        return path

    def log(self, rel_dir: str, lines: Iterable[str]) -> Path:
        """A verifier logs dir holding `test-stdout.txt`; returns the directory."""
        path = self.path / rel_dir / "test-stdout.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return path.parent

    def pair(self, old: Content, new: Content, old_path: str = OLD, new_path: str = NEW) -> list[str]:
        self.write(old_path, old)
        self.write(new_path, new)
        return [f"--parity-old={old_path}", f"--parity-new={new_path}"]

    def run(self, *args: str) -> pytest.RunResult:
        # Plain runpytest, as a user's own pytester test would call it: an input error must not
        # exit with 2 (ExitCode.INTERRUPTED) before configure, which pytester cannot digest.
        with summaries_checked(args):
            return self.pytester.runpytest(*args)

    def run_subprocess(self, *args: str, timeout: float = HANG_GUARD) -> pytest.RunResult:
        with summaries_checked(args):
            return self.pytester.runpytest_subprocess(*args, timeout=timeout)

    def beside(self) -> str:
        """A test file of the user's own (one passing test), given beside the gate's file: a session
        that mixes the gate's items with the user's tests. Returns its path."""
        self.write(BESIDE, "def test_beside():\n    pass\n")
        return BESIDE

    def mixed(self) -> list[str]:
        """One task per category, plus a second flip won by the new side; returns the gate args.

        identical: fix-git; flipped (new regressed): regex-log (new log in new/logs/s-regex);
        flipped (new improved): cancel-async-tasks; flipped_agent_error: git-multibranch (new side);
        masked: build-cython-ext (new side, mask_sample); missing: old-only (old), new-only (new).

        Half of its old tasks are not compared (one a category), far past the evidence budget: the
        args switch the budget off (``--parity-max-uncompared=off``) so the tests of each category see
        its items alone; the budget has its own tests (test_evidence.py).
        """
        self.log("new/logs/s-regex", [f"regex line {i}" for i in range(1, 31)])
        old = [
            legacy_row("fix-git", 1.0),
            legacy_row("regex-log", 1.0),
            legacy_row("cancel-async-tasks", 0.0, output="FAILED test_outputs.py::test_cancel\nold tail\n"),
            legacy_row("git-multibranch", 1.0),
            legacy_row("build-cython-ext", 1.0),
            legacy_row("old-only", 1.0),
        ]
        new = [
            harbor_row("fix-git", 1.0, index=0),
            harbor_row("regex-log", 0.0, index=1, logs_dir="logs/s-regex"),
            harbor_row("cancel-async-tasks", 1.0, index=2),
            harbor_row(
                "git-multibranch", 0.0, index=3, response={"metadata": {"terminus2_error_type": "TimeoutError"}}
            ),
            harbor_row("build-cython-ext", 0.0, index=4, mask_sample=True, failure_kind="provider_unavailable"),
            harbor_row("new-only", 1.0, index=5),
        ]
        return [*self.pair(old, new), "--parity-max-uncompared=off"]

    def mixed_outside_rootdir(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """:meth:`mixed`, run from a project dir `proj/` beside the files (its own rootdir): the gate args."""
        self.mixed()
        proj = self.path / "proj"
        proj.mkdir()
        (proj / "pytest.ini").write_text("[pytest]\n")
        monkeypatch.chdir(proj)
        return [f"--parity-old=../{OLD}", f"--parity-new=../{NEW}", "--parity-max-uncompared=off"]


def assert_one_error(gate: Gate, *args: str) -> str:
    """Run the gate; it must end on one `ERROR:` line with exit status 4 and no traceback. Returns the line."""
    result = gate.run(*args)
    lines = output_lines(result)
    assert result.ret == 4, lines
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), lines
    assert "Traceback" not in all_text(result)
    return lines[0]


def section(result: pytest.RunResult) -> list[str]:
    """The lines of the `rollout parity` section (up to the next `===` separator); exactly one such section."""
    out = result.outlines
    starts = [i for i, line in enumerate(out) if line.startswith("=") and " rollout parity " in line]
    assert len(starts) == 1, starts
    body = []
    for line in out[starts[0] + 1 :]:
        if line.startswith("=" * 10):
            break
        body.append(line)
    return body


@pytest.fixture
def gate(pytester: pytest.Pytester) -> Gate:
    return Gate(pytester)


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest cuts short-summary lines to the terminal's width, and the gate fits its own lines to it
    (`COLUMNS` set): a terminal wide enough that assertions see every line whole."""
    monkeypatch.setenv("COLUMNS", "2000")


@pytest.fixture(autouse=True)
def outside_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite run as a GitHub Actions step must not append every inner run's summary to its page."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


@pytest.fixture
def make_unreadable(monkeypatch: pytest.MonkeyPatch):
    """``make_unreadable(path)``: reading ``path`` fails with EACCES, also when the tests run as root.

    chmod 000 does not stop root, so for root the plugin's own ``open`` (in-process runs) is made
    to refuse that path the way the kernel would for anyone else.
    """
    import builtins
    import errno
    import os

    from pytest_rollout_parity.core.reading import bounded
    from pytest_rollout_parity.core.reading import jsonl_lines as input_file

    denied: set[str] = set()
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):
        if os.path.abspath(os.fspath(file)) in denied:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    if hasattr(os, "geteuid") and os.geteuid() == 0:
        monkeypatch.setattr(input_file, "open", guarded_open, raising=False)
        monkeypatch.setattr(bounded, "open", guarded_open, raising=False)

    def make(path: Path) -> Path:
        denied.add(os.path.abspath(path))
        path.chmod(0)
        return path

    yield make
    for name in denied:
        if os.path.exists(name):
            os.chmod(name, 0o644)

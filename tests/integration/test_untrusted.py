"""Rollout files from others, tried as an attacker would: hostile rows, a planted results directory.

Each test plants a secret where a row can point, or a hostile label, then runs the gate through
the plugin with every report it writes (terminal with -rA under CI=true, JSON, Markdown, the step
summary, JUnit, HTML) and looks for the secret, a raw control character or a forged workflow
command in all of them.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import pytest

from pytest_rollout_parity.core.judging.verifier_output import LINE_CHARS, TAIL_BYTES

from .conftest import NEW, Gate, all_text, harbor_row, legacy_row

SECRET = "SECRET-7f3a9c-TOKEN"
CONTROLS = ("\x1b", "\r", "\x07", "\x00")


def reports(gate: Gate, monkeypatch: pytest.MonkeyPatch, args: list[str], *more: str) -> tuple[pytest.RunResult, str]:
    """Run the gate writing every report; (the result, all reports' text together, the terminal first)."""
    step = gate.write("step-summary.md", "")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    monkeypatch.setenv("CI", "true")
    html_args = ["--html=report.html", "--self-contained-html"] if _has_html() else []
    result = gate.run(
        *args, "-rA", "-vv", "--parity-json=s.json", "--parity-markdown=s.md", "--junitxml=j.xml", *html_args, *more
    )
    texts = [all_text(result)]
    for name in ("s.json", "s.md", "step-summary.md", "j.xml", "report.html"):
        path = gate.path / name
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace")
            texts.append(text)
            texts.append(html.unescape(html.unescape(text)))
    if (gate.path / "s.json").exists():
        texts.append(json.dumps(json.loads((gate.path / "s.json").read_text(encoding="utf-8")), ensure_ascii=False))
    return result, "\n".join(texts)


def _has_html() -> bool:
    try:
        import pytest_html  # noqa: F401
    except ImportError:  # pragma: no cover
        return False
    return True


def _pair(gate: Gate, logs_dir: str) -> list[str]:
    """One flip whose losing (new) row names ``logs_dir``, and one identical task."""
    old = [legacy_row("fix-git", 1.0), legacy_row("same", 1.0)]
    new = [harbor_row("fix-git", 0.0, index=0, logs_dir=logs_dir), harbor_row("same", 1.0, index=1)]
    return gate.pair(old, new)


# --- only verifier logs are read as verifier logs -------------------------------------------------


@pytest.mark.parametrize("where", [".git/config", "../secret.txt", "abs-file", "abs-dir-named-file", "/etc/passwd"])
def test_a_logs_dir_naming_another_file_publishes_nothing(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    gate.write(".git/config", f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
    outside = gate.path.parent / f"{gate.path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    logs_dir = {
        ".git/config": ".git/config",  # relative to the invocation dir, a root
        "../secret.txt": f"../../{gate.path.name}-outside/secret.txt",
        "abs-file": str(outside / "secret.txt"),
        "abs-dir-named-file": str(gate.path / ".git" / "config"),
        "/etc/passwd": "/etc/passwd",
    }[where]
    result, text = reports(gate, monkeypatch, _pair(gate, logs_dir))
    assert result.ret == 1
    assert SECRET not in text and "root:x:0:0" not in text
    assert "new verifier output unavailable: " in all_text(result)
    assert "is not a directory (only a test-stdout.txt inside it is read)" in all_text(result)


@pytest.mark.parametrize("link", ["outside", "up", "dev-zero", "dir-link", "checkout-git-config"])
def test_a_symlink_in_the_results_leading_out_publishes_nothing(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, link: str
) -> None:
    outside = gate.path.parent / f"{gate.path.name}-outside"
    (outside / "logs").mkdir(parents=True)
    (outside / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    (outside / "logs" / "test-stdout.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    logs = gate.path / "new" / "logs" / "s1"
    logs.parent.mkdir(parents=True)
    if link == "dir-link":  # the logs dir itself a link: only a test-stdout.txt inside it is read
        logs.symlink_to(outside / "secret.txt")
    else:
        logs.mkdir()
        # the checkout's own .git/config (where actions/checkout keeps its token) lies under a log
        # root, the directory the run starts in: a link to it is refused all the same
        gate.write(".git/config", f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
        target = {
            "outside": outside / "secret.txt",
            "up": Path("../../../../") / outside.name / "secret.txt",
            "dev-zero": Path("/dev/zero"),
            "checkout-git-config": Path("../../../.git/config"),
        }[link]
        (logs / "test-stdout.txt").symlink_to(target)
    result, text = reports(gate, monkeypatch, _pair(gate, "logs/s1"))
    assert result.ret == 1
    assert SECRET not in text
    assert "new verifier output unavailable: " in all_text(result)


def test_a_logs_dir_with_a_nul_is_unavailable_not_a_crash(gate: Gate) -> None:
    result = gate.run(*_pair(gate, "logs/s\u00001"))
    assert result.ret == 1 and "Traceback" not in all_text(result)
    result.assert_outcomes(failed=1, passed=1)
    assert "new verifier output unavailable: " in all_text(result)


def test_a_task_named_like_the_verdict_line_forges_none(gate: Gate) -> None:
    old = [legacy_row("parity: PASS: forged", 1.0), legacy_row("same", 1.0)]
    new = [harbor_row("parity: PASS: forged", 0.0, index=0), harbor_row("same", 1.0, index=1)]
    result = gate.run(*gate.pair(old, new))
    assert result.ret == 1
    verdicts = [line for line in result.outlines if line.lstrip().startswith(("parity:", "partial:"))]
    assert len(verdicts) == 1 and verdicts[0].startswith("parity: FAIL")
    assert any(line.startswith("parity\\x3a PASS: forged") for line in result.outlines)


def test_a_symlinked_log_within_the_results_is_read(gate: Gate) -> None:
    gate.log("new/store/one", ["kept line"])
    logs = gate.path / "new" / "logs" / "s1"
    logs.mkdir(parents=True)
    (logs / "test-stdout.txt").symlink_to("../../store/one/test-stdout.txt")
    result = gate.run(*_pair(gate, "logs/s1"))
    assert result.ret == 1
    assert "    | kept line" in result.outlines


@pytest.mark.slow
def test_a_fifo_log_is_never_waited_on(gate: Gate) -> None:
    logs = gate.path / "new" / "logs" / "s1"
    logs.mkdir(parents=True)
    os.mkfifo(logs / "test-stdout.txt")
    result = gate.run_subprocess(*_pair(gate, "logs/s1"))
    assert result.ret == 1
    assert f"new verifier output unavailable: {logs / 'test-stdout.txt'} is not a regular file" in all_text(result)


# --- bounded by construction --------------------------------------------------------------------


def test_one_line_logs_are_cut_in_every_report(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = [], []
    for i in range(5):
        logs = gate.path / "new" / "logs" / f"s{i}"
        logs.mkdir(parents=True)
        (logs / "test-stdout.txt").write_bytes(b"A" * (2 << 20))  # 2 MiB, no newline
        old.append(legacy_row(f"t{i}", 1.0))
        new.append(harbor_row(f"t{i}", 0.0, index=i, logs_dir=f"logs/s{i}"))
    result, _ = reports(gate, monkeypatch, gate.pair(old, new))
    assert result.ret == 1
    cut = f"    | [... cut] {'A' * LINE_CHARS} [... {TAIL_BYTES - LINE_CHARS} more characters cut]"
    assert result.outlines.count(cut) == 5
    # no report carries a log whole: each is a few kilobytes a flip
    for name in ("j.xml", "s.md", "step-summary.md", "s.json"):
        assert (gate.path / name).stat().st_size < 5 * 8 * LINE_CHARS + 64_000, name


# --- escaped for where it goes ------------------------------------------------------------------

HOSTILE = [
    "::error title=FORGED::x",
    "ok\n::stop-commands::token123",
    "  ::warning::indented",
    "esc\x1b[2J\rcr\x07bel\x00nul",
    "[click](https://evil.example) ![img](https://evil.example/i.png) **bold**",
    "x\n</details>\n\n# HEADING",
]


def _hostile_pair(gate: Gate) -> list[str]:
    old, new = [], []
    for i, label in enumerate(HOSTILE):
        old.append({"task_id": label, "reward": 1.0, "test_output": f"line one\n::error::from-the-log {i}\n"})
        new.append(
            {
                "task_id": label,
                "reward": 0.0,
                "test_output": f"\x1b]0;title\x07\r::add-mask::x\n::error title=LOG::forged {i}\n",
                "failure_kind": "kind\n::error::reason",
            }
        )
    old.append({"task_id": "masked\n::error::m", "reward": 1.0, "mask_sample": True, "failure_kind": "x\n::error::y"})
    new.append({"task_id": "masked\n::error::m", "reward": 1.0})
    return gate.pair(old, new)


def _markdown_read(page: str) -> tuple[str, str]:
    """(the lines Markdown reads, the lines of the flips' `<details>` HTML blocks)."""
    read, raw, inside = [], [], False
    for line in page.splitlines():
        inside = inside or line == "<details>"
        (raw if inside else read).append(line)
        inside = inside and line != "</details>"
    return "\n".join(read), "\n".join(raw)


def _command_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.lstrip().startswith("::")]


def test_hostile_labels_and_logs_forge_no_command_and_no_control(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _hostile_pair(gate)
    result, _ = reports(gate, monkeypatch, args, "--parity-strict")
    assert result.ret == 1
    terminal = all_text(result)
    assert _command_lines(terminal) == []
    assert not any(char in terminal for char in CONTROLS)
    assert "\\x1b" in terminal and "\\r" in terminal
    for name in ("j.xml", "s.json"):  # JUnit and JSON keep their own escaping, and the labels whole
        text = (gate.path / name).read_text(encoding="utf-8")
        assert "::stop-commands::token123" in json.dumps(text) or "::stop-commands::token123" in text
    labels = {task["task"] for task in json.loads((gate.path / "s.json").read_text(encoding="utf-8"))["tasks"]}
    assert set(HOSTILE) <= labels
    for name in ("s.md", "step-summary.md"):
        page = (gate.path / name).read_text(encoding="utf-8")
        assert _command_lines(page) == [] and not any(char in page for char in CONTROLS)
        read, blocks = _markdown_read(page)
        for raw in ("](https", "**bold**", "\n# HEADING", "\n::"):
            assert raw not in read, raw
        # a flip's <details> is an HTML block, where Markdown reads nothing: only HTML escaping counts
        assert "</details>\n\n# HEADING" not in blocks and "\n::" not in blocks
        assert page.count("<details>") == page.count("</details>")


def test_annotations_under_github_actions_are_the_gates_own(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _hostile_pair(gate)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    # the gate's own annotations: they step aside for pytest-github-actions-annotate-failures
    result = gate.run(*args, "-p", "no:pytest_github_actions_annotate_failures")
    commands = _command_lines(all_text(result))
    assert len(commands) == len(HOSTILE)  # one `::error` per failed flip, nothing else
    assert all(line.startswith("::error title=") and "FORGED::" not in line and "\n" not in line for line in commands)


def test_node_ids_and_k_keep_working_on_hostile_labels(gate: Gate) -> None:
    args = _hostile_pair(gate)
    listed = gate.run(*args, "--collect-only", "-q")
    ids = [line for line in listed.outlines if line.startswith(f"{NEW}::")]
    assert f"{NEW}::error_title_FORGED_x" in ids
    result = gate.run(*args, "-k", "error_title_FORGED_x")
    result.assert_outcomes(failed=1, deselected=len(HOSTILE))
    rerun = gate.run(*args, f"{NEW}::ok_stop-commands_token123")
    rerun.assert_outcomes(failed=1)


# --- inputs are never written -------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--parity-json", "--parity-markdown", "step summary", "--junitxml"])
@pytest.mark.parametrize(
    "target",
    [
        "new/rollouts.jsonl",
        "./old/../new/rollouts.jsonl",
        "link.jsonl",
        "hard.jsonl",
        "new/rollouts_failures.jsonl",
        "old/rollouts_aggregate_metrics.json",
        "real/rows_failures.jsonl",
    ],
)
def test_an_output_naming_an_input_is_a_usage_error(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, option: str, target: str
) -> None:
    args = gate.mixed()
    (gate.path / "link.jsonl").symlink_to(gate.path / "new" / "rollouts.jsonl")
    os.link(gate.path / "old" / "rollouts.jsonl", gate.path / "hard.jsonl")
    # the new side given through a link: its sidecar may also be beside the link's target
    gate.write("real/rows.jsonl", (gate.path / "new" / "rollouts.jsonl").read_bytes())
    (gate.path / "rows.jsonl").symlink_to(gate.path / "real" / "rows.jsonl")
    if target.startswith("real/"):
        args = [args[0], "--parity-new=rows.jsonl"]
    before = {p: p.read_bytes() for p in gate.path.rglob("*") if p.is_file()}
    if option == "step summary":
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(gate.path / target))
        more = []
    else:
        more = [f"{option}={target}"]
    result = gate.run(*args, *more)
    assert result.ret == 4
    lines = [line for line in result.outlines + result.errlines if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ERROR: ") and "an output never overwrites an input" in lines[0]
    assert "Traceback" not in all_text(result)
    assert {p: p.read_bytes() for p in gate.path.rglob("*") if p.is_file()} == before


def test_an_addopts_line_cannot_aim_an_output_at_an_input(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("pytest.ini", "[pytest]\naddopts = --parity-json=new/rollouts.jsonl\n")
    before = (gate.path / NEW).read_bytes()
    result = gate.run(*args)
    assert result.ret == 4 and (gate.path / NEW).read_bytes() == before


# --- a hostile cache entry is ignored, never fatal, never waited on ------------------------------

ENTRIES = ".pytest_cache/d/rollout-parity"


def _entries(gate: Gate) -> list[Path]:
    return sorted((gate.path / ENTRIES).glob("pair-*.json"))


@pytest.mark.parametrize(
    "hostile", [pytest.param("fifo", marks=pytest.mark.slow), "dev-zero", "link-to-entry", "bomb", "oversized"]
)
def test_a_hostile_cache_entry_is_ignored(gate: Gate, hostile: str) -> None:
    args = gate.mixed()
    first = gate.run(*args)
    (entry,) = _entries(gate)
    assert first.ret == 1
    data = entry.read_bytes()
    entry.unlink()
    if hostile == "fifo":
        os.mkfifo(entry)
    elif hostile == "dev-zero":
        entry.symlink_to("/dev/zero")
    elif hostile == "link-to-entry":  # even a link to a good entry: an entry is never followed
        good = gate.path / f"{entry.name}.good"
        good.write_bytes(data)
        entry.symlink_to(good)
    elif hostile == "bomb":  # the key a planter can compute (not the inputs' inodes), a body of nesting
        key = data.partition(b"\n")[0].replace(b"[", b"[ ", 1)
        entry.write_bytes(key + b"\n" + b"[" * 10_000_000)
    else:  # sparse, far larger than any entry of this pair could be
        with open(entry, "wb") as handle:
            handle.truncate(8 << 30)
    # a FIFO is run in a subprocess, so that a regression hangs that process and not this one
    again = gate.run_subprocess(*args) if hostile == "fifo" else gate.run(*args)
    assert again.ret == 1 and "INTERNALERROR" not in all_text(again) and "Traceback" not in all_text(again)
    assert again.parseoutcomes() == first.parseoutcomes()
    # the hostile entry was replaced by a good one
    assert all(
        entry.is_file() and not entry.is_symlink() and entry.stat().st_size < 1 << 20 for entry in _entries(gate)
    )


@pytest.mark.parametrize("hostile", [pytest.param("fifo", marks=pytest.mark.slow), "dev-zero", "sparse"])
def test_a_hostile_metrics_file_is_a_note_never_read_whole(gate: Gate, hostile: str) -> None:
    args = gate.mixed()
    metrics = gate.path / "new" / "rollouts_aggregate_metrics.json"
    if hostile == "fifo":
        os.mkfifo(metrics)
    elif hostile == "dev-zero":
        metrics.symlink_to("/dev/zero")
    else:
        with open(metrics, "wb") as handle:
            handle.truncate(4 << 30)
    # a FIFO is run in a subprocess, so that a regression hangs that process and not this one
    result = gate.run_subprocess(*args) if hostile == "fifo" else gate.run(*args)
    if hostile == "dev-zero":  # a link leading out of the side's directory: refused before anything is read
        assert result.ret == 4 and "Traceback" not in all_text(result)
        assert "new/rollouts_aggregate_metrics.json: a link leading out of its side's directory" in all_text(result)
        return
    assert result.ret == 1 and "Traceback" not in all_text(result)
    if hostile == "sparse":
        assert (
            "note: new side: new/rollouts_aggregate_metrics.json ignored: larger than 8388608 bytes" in result.outlines
        )


# --- nothing from the results directory runs ------------------------------------------------------

PLANT = """\
import pathlib
pathlib.Path({marker!r}).write_text("ran")
raise SystemExit("a planted conftest.py ran")
"""
USER_CONFTEST = """\
import pytest
from pytest_rollout_parity import Verdict

@pytest.fixture
def team():
    return "parity-team"

def pytest_parity_verdict(comparison, config):
    if comparison.task == "fix-git":
        return Verdict.xfail("known flip, tracked by " + "parity-team")
    return None
"""


def _planted(gate: Gate) -> list[str]:
    """Results under `results/`, a conftest.py planted beside each side and above both; the user's own
    tests under `tests/` with a conftest (fixture and verdict hook). Returns the gate args."""
    old = [legacy_row("fix-git", 1.0), legacy_row("same", 1.0), legacy_row("other", 1.0)]
    new = [harbor_row("fix-git", 0.0, index=0), harbor_row("same", 1.0, index=1), harbor_row("other", 0.0, index=2)]
    args = gate.pair(old, new, "results/old/rollouts.jsonl", "results/new/rollouts.jsonl")
    for where in ("results", "results/old", "results/new"):
        marker = gate.path / f"PLANTED-{where.replace('/', '-')}"
        gate.write(f"{where}/conftest.py", PLANT.format(marker=str(marker)))
    gate.write("tests/conftest.py", USER_CONFTEST)
    gate.write("tests/test_own.py", "def test_own(team):\n    assert team == 'parity-team'\n")
    return args


def _no_plant_ran(gate: Gate, result: pytest.RunResult) -> None:
    assert sorted(p.name for p in gate.path.glob("PLANTED-*")) == []
    assert "a planted conftest.py ran" not in all_text(result)


@pytest.mark.parametrize(
    "how", ["gate alone", "with test paths", "node id", "-k", "--lf", pytest.param("xdist", marks=pytest.mark.slow)]
)
def test_a_conftest_beside_the_results_never_runs(gate: Gate, how: str) -> None:
    args = _planted(gate)
    new = "results/new/rollouts.jsonl"
    if how == "gate alone":
        # pytest itself loads the conftest of the invocation dir's `test*` directories
        result = gate.run(*args, "-rA")
        result.assert_outcomes(failed=1, passed=1, xfailed=1)
    elif how == "with test paths":  # the user's conftest, fixture and hook work; the planted ones never run
        result = gate.run(*args, "tests", "-rA")
        result.assert_outcomes(failed=1, passed=2, xfailed=1)
        assert "XFAIL results/new/rollouts.jsonl::fix-git - known flip, tracked by parity-team" in result.outlines
    elif how == "node id":
        result = gate.run(*args, f"{new}::other", "tests", "-rA")
        result.assert_outcomes(failed=1, passed=1)
    elif how == "-k":
        result = gate.run(*args, "tests", "-k", "other or own")
        result.assert_outcomes(failed=1, passed=1, deselected=2)
    elif how == "--lf":
        gate.run(*args, "tests")
        result = gate.run(*args, "tests", "--lf", "-rA")
        assert [line.split(" ")[1] for line in result.outlines if line.startswith("FAILED ")] == [f"{new}::other"]
    else:
        pytest.importorskip("xdist")
        result = gate.run(*args, "tests", "-n", "2")
        result.assert_outcomes(failed=1, passed=2, xfailed=1)
    _no_plant_ran(gate, result)


def test_a_node_id_naming_no_task_is_a_usage_error(gate: Gate) -> None:
    args = _planted(gate)
    result = gate.run(*args, "results/new/rollouts.jsonl::nope")
    assert result.ret == 4
    assert "ERROR: not found: results/new/rollouts.jsonl::nope" in all_text(result)
    _no_plant_ran(gate, result)


def test_naming_the_results_directory_as_a_test_path_is_the_users_choice(gate: Gate) -> None:
    # pytest walks a directory it is given and imports its conftest files: the items are the same
    args = _planted(gate)
    for where in ("results", "results/old", "results/new"):
        gate.write(f"{where}/conftest.py", "")
    result = gate.run(*args, "results/new", "-rA")
    result.assert_outcomes(failed=2, passed=1)
    assert sorted(line.split(" ")[1] for line in result.outlines if line.startswith("FAILED ")) == [
        "results/new/rollouts.jsonl::fix-git",
        "results/new/rollouts.jsonl::other",
    ]
    # with a node id beside the directory, pytest collects the whole directory: every task runs
    result = gate.run(*args, "results", "results/new/rollouts.jsonl::fix-git")
    result.assert_outcomes(failed=2, passed=1)


# --- memory does not grow with the logs ---------------------------------------------------------

MEASURE = """\
import resource, sys
import pytest
status = pytest.main(sys.argv[1:])
print("MAXRSS-KIB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_kib(gate: Gate, log_bytes: int, flips: int = 40) -> int:
    """Peak memory of one gate run (its own process: logs are read there) with every report on."""
    old, new = [], []
    for i in range(flips):
        logs = gate.path / "new" / "logs" / f"s{i}"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "test-stdout.txt", "wb") as handle:
            handle.write(b"L" * log_bytes)  # one line, no newline
        old.append(legacy_row(f"t{i}", 1.0))
        new.append(harbor_row(f"t{i}", 0.0, index=i, logs_dir=f"logs/s{i}"))
    args = gate.pair(old, new)
    gate.write("measure.py", MEASURE)
    result = gate.pytester.run(
        __import__("sys").executable,
        "measure.py",
        *args,
        "-p",
        "no:cacheprovider",
        "--junitxml=j.xml",
        "--parity-json=s.json",
        "--parity-markdown=s.md",
        "-rA",
        timeout=600,
    )
    (line,) = [line for line in result.outlines if line.startswith("MAXRSS-KIB ")]
    return int(line.split()[1])


@pytest.mark.slow
def test_peak_memory_does_not_grow_with_log_size(gate: Gate) -> None:
    small = _peak_kib(gate, 100)
    hostile = _peak_kib(gate, 4 << 20)  # 40 flips, 160 MiB of logs, each one line
    # generous margin: the 160 MiB of logs, read whole, would add hundreds of MiB
    assert hostile < small + 40 * 1024, (small, hostile)
    assert (gate.path / "j.xml").stat().st_size < 1 << 20


def test_an_input_error_quoting_the_data_stays_one_plain_line(gate: Gate) -> None:
    # the rows of two agents: the error lists their names, which come from the file
    rows = [
        {"task_id": "a", "reward": 1.0, "agent_ref": {"name": "x\n::error::forged\x1b[2J"}},
        {"task_id": "b", "reward": 1.0, "agent_ref": {"name": "::warning::y"}},
    ]
    args = gate.pair(rows, rows[:1])
    result = gate.run(*args)
    lines = [line for line in result.outlines + result.errlines if line.strip()]
    assert result.ret == 4 and len(lines) == 1 and lines[0].startswith("ERROR: "), lines
    assert _command_lines(all_text(result)) == [] and not any(char in all_text(result) for char in CONTROLS)
    assert "x\\n::error::forged\\x1b[2J" in lines[0]


def test_annotation_titles_carry_no_control_character(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    args = _hostile_pair(gate)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = gate.run(*args)
    commands = _command_lines(all_text(result))
    assert commands and not any(char in line for line in commands for char in CONTROLS)
    assert any("esc\\x1b[2J\\rcr\\x07bel\\x00nul" in line for line in commands)

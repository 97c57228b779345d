"""The README's GitHub Actions workflow: valid YAML, complete, naming only real options, its install
steps build and install the gate from a pinned checkout, and its gate command runs on the bundled
pair. The packages `python -m build` makes of this repository pass `twine check`."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_rollout_parity.plugin.options import OPTIONS

REPO = Path(__file__).resolve().parents[2]
#: what a fresh checkout of this repository does not hold
NOT_CHECKED_OUT = shutil.ignore_patterns(
    ".git",
    ".venv",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
    "build",
    "dist",
)


def _workflows() -> dict[str, dict[Any, Any]]:
    """The README's workflows by name: the one-job gate and the run split over a matrix of groups."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```$", text, flags=re.S | re.M)
    found = {}
    for block in blocks:
        if "jobs:" in block:
            data = yaml.safe_load(block)
            assert isinstance(data, dict)
            found[str(data["name"])] = data
    assert set(found) == {"rollout parity", "rollout parity, split"}, list(found)
    return found


def _workflow() -> dict[Any, Any]:
    return _workflows()["rollout parity"]


def _steps() -> list[dict[str, Any]]:
    jobs = _workflow()["jobs"]
    assert len(jobs) == 1
    job = next(iter(jobs.values()))
    assert job["runs-on"]
    steps = job["steps"]
    assert isinstance(steps, list)
    return steps


def _gate_command() -> list[str]:
    commands = [
        line for step in _steps() for line in str(step.get("run", "")).splitlines() if line.strip().startswith("pytest")
    ]
    assert len(commands) == 1, commands
    return shlex.split(commands[0])


def test_workflow_is_complete() -> None:
    steps = _steps()
    uses = [str(step.get("uses", "")).split("@")[0] for step in steps]
    assert uses[:2] == ["actions/checkout", "actions/setup-python"]
    assert any("pip install" in str(step.get("run", "")) for step in steps)
    upload = next(step for step in steps if str(step.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()"
    command = _gate_command()
    options = {arg.split("=", 1)[0]: arg.split("=", 1)[1] for arg in command if arg.startswith("--")}
    # both reports are uploaded: they lie under the uploaded path
    uploaded = str(upload["with"]["path"]).rstrip("/")
    for option in ("--parity-json", "--junitxml"):
        assert options[option].startswith(uploaded + "/"), (option, uploaded)


def test_workflow_names_only_real_options() -> None:
    named = {arg.split("=", 1)[0] for arg in _gate_command() if arg.startswith("--parity-")}
    assert named, "the gate command names no --parity-* option"
    flags = {option.flag for option in OPTIONS}
    assert named <= flags, named - flags


def _clean_env() -> dict[str, str]:
    """The environment a workflow step gets: none of this run's GitHub or pytest settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A step's command, its output kept for the assertion's message."""
    return subprocess.run(argv, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=300)


def _run_gate_step(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The one-job workflow's gate step, line by line (`pytest` as this Python's), each line's
    exit status as the README says (the bundled pair's flips fail); the gate's run is returned."""
    step = next(str(step["run"]) for step in _steps() if "--parity-old" in str(step.get("run", "")))
    gate = None
    for line in step.splitlines():
        argv = shlex.split(line)
        if argv[0] == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
        done = _run(argv, cwd, env)
        expected = 1 if "pytest" in argv else 0
        assert done.returncode == expected, done.stdout + done.stderr
        gate = done if "pytest" in argv else gate
    assert gate is not None
    return gate


@pytest.mark.slow
def test_workflow_gate_command_runs_on_the_bundled_pair(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    env = _clean_env()
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step.md")
    _run_gate_step(tmp_path, env)
    reports = tmp_path / "parity-report"
    assert {p.name for p in reports.iterdir()} == {"summary.json", "summary.md", "report.html", "junit.xml"}
    assert (tmp_path / "step.md").read_text() == (reports / "summary.md").read_text()


def _split_jobs() -> tuple[dict[str, Any], dict[str, Any]]:
    jobs = _workflows()["rollout parity, split"]["jobs"]
    assert set(jobs) == {"parity", "verdict"}
    return jobs["parity"], jobs["verdict"]


def test_split_workflow_runs_a_matrix_of_groups_then_one_merge_that_gates() -> None:
    parity, verdict = _split_jobs()
    groups = parity["strategy"]["matrix"]["group"]
    assert groups == list(range(1, len(groups) + 1)) and parity["strategy"]["fail-fast"] is False
    command = next(
        line
        for step in parity["steps"]
        for line in str(step.get("run", "")).splitlines()
        if line.strip().startswith("pytest")
    )
    assert f"--splits={len(groups)}" in command and "--group=${{ matrix.group }}" in command
    upload = next(step for step in parity["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()"
    assert verdict["needs"] == "parity" and verdict["if"] == "always()"
    download = next(
        step for step in verdict["steps"] if str(step.get("uses", "")).startswith("actions/download-artifact@")
    )
    assert download["with"]["merge-multiple"] is True
    merge = str(verdict["steps"][-1]["run"])
    assert merge.startswith("python -m pytest_rollout_parity merge parts/*.json")
    named = {arg.split("=", 1)[0] for arg in shlex.split(command) if arg.startswith("--parity-")}
    assert named <= {option.flag for option in OPTIONS}


@pytest.mark.slow
def test_split_workflow_commands_merge_into_the_unsplit_exit_status(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    parity, verdict = _split_jobs()
    env = _clean_env()
    run = next(str(step["run"]) for step in parity["steps"] if "--parity-old" in str(step.get("run", "")))
    for group in parity["strategy"]["matrix"]["group"]:
        for line in run.replace("${{ matrix.group }}", str(group)).splitlines():
            argv = shlex.split(line)
            if argv[0] == "pytest":
                argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
            subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    merge = shlex.split(str(verdict["steps"][-1]["run"]))
    parts = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "parts").glob("*.json"))
    assert len(parts) == len(parity["strategy"]["matrix"]["group"])
    argv = [sys.executable, *merge[1:3], merge[3], *parts, *merge[5:]]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    whole = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--parity-old=examples/old/rollouts.jsonl",
            "--parity-new=examples/new/rollouts.jsonl",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == whole.returncode == 1, done.stdout + done.stderr
    assert (tmp_path / "parity-summary.md").read_text(encoding="utf-8").startswith("## rollout parity\n")


# --- the gate installed as a clean runner installs it ---------------------------------------------


def _checkout(root: Path, path: str) -> Path:
    """This repository as `actions/checkout` leaves it at ``path`` under ``root``: the tracked files."""
    target = root / path
    shutil.copytree(REPO, target, ignore=NOT_CHECKED_OUT)
    return target


def _install_steps(steps: list[dict[str, Any]]) -> tuple[dict[str, Any], list[list[str]]]:
    """The checkout of the gate (its `with:`) and the install step's commands, from a job's steps."""
    gate = [step for step in steps if "repository" in (step.get("with") or {})]
    assert len(gate) == 1, gate
    checkout = gate[0]
    assert str(checkout["uses"]).startswith("actions/checkout@")
    install = next(step for step in steps if str(step.get("name", "")).startswith("Install the gate"))
    return checkout["with"], [shlex.split(line) for line in str(install["run"]).splitlines() if line.strip()]


@pytest.mark.parametrize("job", ["rollout parity", "rollout parity, split/parity", "rollout parity, split/verdict"])
def test_every_job_pins_the_gate_and_builds_it_from_the_checkout(job: str) -> None:
    """No job asks an index for the gate (it is on none) nor installs the workflow's own checkout."""
    name, _, which = job.partition("/")
    jobs = _workflows()[name]["jobs"]
    steps = (jobs[which] if which else next(iter(jobs.values())))["steps"]
    where, commands = _install_steps(steps)
    assert where["ref"] and where["path"].startswith(".")  # pinned; a dot-directory pytest does not collect
    assert commands[0] == ["python", "-m", "pip", "install", "build"]
    assert commands[1] == ["python", "-m", "build", "--wheel", "--outdir", f"{where['path']}/dist", where["path"]]
    installed = commands[2][4:]
    assert commands[2][:4] == ["python", "-m", "pip", "install"] and installed[0] == f"{where['path']}/dist/*.whl"
    assert "pytest-rollout-parity" not in installed and "." not in installed


@pytest.mark.slow
def test_the_install_steps_build_a_wheel_that_runs_the_gate(tmp_path: Path) -> None:
    """The one-job workflow's steps on a copy of this repository: the install step's build as
    written, its wheel installed (into a directory of the test's, not the suite's environment),
    and the gate command run with that wheel's plugin, exit status 1 on the bundled pair."""
    where, commands = _install_steps(_steps())
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    _checkout(tmp_path, where["path"])
    env = _clean_env()
    site = tmp_path / "site"
    for argv in commands:
        assert argv[0] == "python"
        if argv[1:] == ["-m", "pip", "install", "build"]:
            __import__("build")  # the test extra has it: nothing to fetch
            continue
        if argv[1:4] == ["-m", "pip", "install"]:
            wheels = [str(path) for pattern in argv[4:] for path in tmp_path.glob(pattern)]
            assert len(wheels) == 1, wheels
            argv = [*argv[:4], "--no-deps", "--no-index", "--target", str(site), *wheels]
        done = _run([sys.executable, *argv[1:]], tmp_path, env)
        assert done.returncode == 0, done.stdout + done.stderr
    env["PYTHONPATH"] = str(site)
    where_from = _run(
        [sys.executable, "-c", "import pytest_rollout_parity.plugin.entry as e; print(e.__file__)"], tmp_path, env
    )
    assert where_from.stdout.startswith(str(site)), where_from.stdout  # the wheel's plugin, not the suite's
    run = _run_gate_step(tmp_path, env)
    assert "parity: FAIL:" in run.stdout and (tmp_path / "parity-report" / "report.html").is_file()
    assert "4 failed, 3 passed, 7 xfailed" in run.stdout  # the gate's items alone: not the checkout's tests


@pytest.mark.slow
def test_the_sdist_and_the_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    source = _checkout(tmp_path, "checkout")
    dist = tmp_path / "dist"
    build = _run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)], tmp_path)
    assert build.returncode == 0, build.stdout + build.stderr
    built = sorted(path.name for path in dist.iterdir())
    assert len(built) == 2 and built[0].endswith(".whl") and built[1].endswith(".tar.gz"), built
    check = _run(
        [sys.executable, "-m", "twine", "check", "--strict", *(str(path) for path in sorted(dist.iterdir()))], tmp_path
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == 2, check.stdout

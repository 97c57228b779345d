"""The README's GitHub Actions workflow: valid YAML, complete, naming only real options, and its gate
command runs on the bundled pair."""

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


@pytest.mark.slow
def test_workflow_gate_command_runs_on_the_bundled_pair(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.py"))
    run = next(str(step["run"]) for step in _steps() if "pytest" in str(step.get("run", "")))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step.md")
    for line in run.splitlines():
        argv = shlex.split(line)
        if argv[0] == "pytest":
            argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        expected = 1 if "pytest" in argv else 0  # the bundled pair's flips fail, as the README says
        assert done.returncode == expected, done.stdout + done.stderr
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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}
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

"""What `plugin/_pytest_compat.py` assumes of pytest, held: each test fails if pytest changes under it."""

from __future__ import annotations

import pytest

from .conftest import NEW, Gate
from .test_selection import ran

#: a conftest that must never run: it would end the run at once
PLANTED = "raise SystemExit('a conftest beside the results was imported')\n"


def test_initial_paths_are_in_the_early_namespace(pytester: pytest.Pytester) -> None:
    """`hide_initial_paths` edits `known_args_namespace.file_or_dir`, where pytest keeps the path
    arguments whose conftests it imports first."""
    pytester.makepyfile(test_a="def test_a():\n    pass\n")
    config = pytester.parseconfig("test_a.py", "sub/x.jsonl::task")
    assert config.known_args_namespace.file_or_dir == ["test_a.py", "sub/x.jsonl::task"]


def test_no_conftest_beside_the_results_is_imported_by_node_id(gate: Gate) -> None:
    args = gate.mixed()
    gate.write("new/conftest.py", PLANTED)
    result = gate.run(*args, "-rA", "-vv", f"{NEW}::regex-log")
    assert "was imported" not in result.stdout.str() + result.stderr.str()
    assert ran(result) == {f"{NEW}::regex-log": "FAILED"}


def test_test_paths_are_config_args(gate: Gate) -> None:
    """`set_test_paths` writes `Config.args`, which the session collects from; with no argument the
    paths come from the invocation directory, as `ArgsSource.INVOCATION_DIR` says."""
    args = gate.mixed()
    gate.write("new/conftest.py", PLANTED)
    beside = gate.beside()
    result = gate.run(*args, "-rA", "-vv", beside, NEW)
    outcomes = ran(result)
    assert outcomes[f"{beside}::test_beside"] == "PASSED"
    assert outcomes[f"{NEW}::fix-git"] == "PASSED"
    assert "was imported" not in result.stdout.str()
    assert pytest.Config.ArgsSource.INVOCATION_DIR.name == "INVOCATION_DIR"


def test_rootdir_conftest_hooks_see_the_gate_items(gate: Gate) -> None:
    """`hooks_at` keeps the conftests at or above the new file (the rootdir's) for its items."""
    args = gate.mixed()
    gate.pytester.makeconftest(
        "import pytest\n\n"
        "def pytest_runtest_setup(item):\n"
        "    if item.name == 'fix-git':\n"
        "        pytest.skip('seen by the rootdir conftest')\n"
    )
    gate.write("new/conftest.py", PLANTED)
    result = gate.run(*args, "-rA", "-vv")
    result.assert_outcomes(passed=0, failed=2, skipped=1, xfailed=4)
    result.stdout.fnmatch_lines(["SKIPPED *seen by the rootdir conftest"])
    assert "was imported" not in result.stdout.str()


@pytest.mark.parametrize("style", ["short", "line"])
def test_crash_line_and_body_of_a_finding(gate: Gate, style: str) -> None:
    """`set_crash_message` and `refit_message_lines` find `reprcrash` and the last entry's lines
    where they write, in the representation `Item.repr_failure(style="value")` builds."""
    args = gate.mixed()
    reprec = gate.pytester.inline_run(*args, f"--tb={style}")
    failed = {
        report.nodeid: report
        for report in reprec.getreports("pytest_runtest_logreport")
        if report.when == "call" and report.failed
    }
    report = failed[f"{NEW}::regex-log"]
    crash = report.longrepr.reprcrash  # type: ignore[union-attr]
    # under --tb=line the one line names the task; under --tb=short the whole message is kept
    assert crash.message == {"short": "", "line": "regex-log: "}[style] + "new regressed: old=1.0 new=0.0"
    assert crash.path.endswith("rollouts.jsonl") and crash.lineno == 2
    lines = report.longrepr.reprtraceback.reprentries[-1].lines  # type: ignore[union-attr]
    if style == "short":
        assert lines[0] == "regex-log: new regressed: old=1.0 new=0.0"
        assert any("verifier output (last" in line for line in lines[1:])
    else:
        assert lines == []


def test_pytest_version_is_one_the_module_names() -> None:
    """The module docstring names the versions it was tested on: the floor and the newest line."""
    from pytest_rollout_parity.plugin import _pytest_compat

    major = int(pytest.__version__.split(".")[0])
    assert major in (8, 9), f"pytest {pytest.__version__}: check _pytest_compat and update its docstring"
    assert "pytest 8.0" in (_pytest_compat.__doc__ or "")


def test_the_junit_suite_property_reaches_the_file(gate: Gate) -> None:
    """`add_junit_suite_property` finds junitxml's writer under its stash key and adds a suite property."""
    import xml.etree.ElementTree as ET

    args = gate.mixed()
    gate.run(*args, "--junitxml=j.xml")
    root = ET.parse(gate.path / "j.xml").getroot()
    suite = next(root.iter("testsuite"))
    properties = suite.find("properties")
    assert properties is not None
    assert {p.get("name"): p.get("value") for p in properties} == {"parity_verdict": "fail"}

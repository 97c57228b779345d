"""The gate's items run through the lean protocol, and nothing a user or plugin reads changes."""

from __future__ import annotations

import pytest

from .conftest import Gate, junit_cases, junit_properties

NEW = "new/rollouts.jsonl"

# Records which items reach pytest's phase hooks; registered with -p (as a plugin), or as a conftest,
# whose phase hook switches the lean protocol off.
PHASE_SPY_PLUGIN = '''
SEEN = []

def pytest_runtest_setup(item):
    SEEN.append(item.name)

def pytest_sessionfinish(session):
    print("\\nphase hooks saw:", ",".join(SEEN))
'''


def test_gate_items_skip_the_phase_hooks_but_the_last(gate: Gate) -> None:
    """Only the last gate item (which tears down for what follows) runs pytest's default protocol."""
    args = gate.mixed()
    gate.pytester.makepyfile(phase_spy=PHASE_SPY_PLUGIN)
    gate.pytester.syspathinsert()
    result = gate.run(*args, "-s", "-p", "phase_spy")
    outcomes = result.parseoutcomes()
    assert outcomes == {"failed": 2, "passed": 1, "xfailed": 4}, outcomes
    seen = [line for line in result.outlines if line.startswith("phase hooks saw:")]
    assert seen == ["phase hooks saw: regex-log"], seen  # the last task in sorted order


def test_a_conftest_phase_hook_sees_every_gate_item(gate: Gate) -> None:
    """A conftest's setup hook runs for every task, and can skip one, as for any test."""
    args = gate.mixed()
    gate.pytester.makeconftest("import pytest\n" + PHASE_SPY_PLUGIN + '''

def pytest_runtest_call(item):
    if item.name == "regex-log":
        pytest.skip("skipped by conftest")
''')
    result = gate.run(*args, "-s")
    assert result.parseoutcomes() == {"failed": 1, "passed": 1, "skipped": 1, "xfailed": 4}
    (seen,) = [line for line in result.outlines if line.startswith("phase hooks saw:")]
    assert sorted(seen.split(": ", 1)[1].split(",")) == sorted(
        ["build-cython-ext", "cancel-async-tasks", "fix-git", "git-multibranch", "new-only", "old-only", "regex-log"])


def test_a_plugins_own_protocol_sees_every_gate_item(gate: Gate) -> None:
    """Another runtest protocol (as pytest-rerunfailures has) is not bypassed."""
    args = gate.mixed()
    gate.pytester.makeconftest('''
SEEN = []

def pytest_runtest_protocol(item, nextitem):
    SEEN.append(item.name)
    return None

def pytest_sessionfinish(session):
    print("\\nprotocol saw", len(SEEN))
''')
    result = gate.run(*args, "-s")
    assert "protocol saw 7" in result.outlines


# A user test module with a module-scoped fixture that records its setup and teardown.
USER_MODULE = '''
import pytest
from conftest import EVENTS

@pytest.fixture(scope="module")
def mod_{name}():
    EVENTS.append("{name} up")
    yield
    EVENTS.append("{name} down")

def test_{name}(session_res, mod_{name}):
    pass
'''


def test_user_tests_before_and_after_keep_their_fixtures(gate: Gate) -> None:
    """Module and session fixtures of user tests around the gate's items set up and tear down once."""
    args = gate.mixed()
    gate.pytester.makepyfile(
        conftest='''
import pytest

EVENTS = []

@pytest.fixture(scope="session")
def session_res():
    EVENTS.append("session up")
    yield
    EVENTS.append("session down")

def pytest_sessionfinish(session):
    print("\\nevents:", ",".join(EVENTS))
''',
        test_a=USER_MODULE.format(name="a"),
        test_z=USER_MODULE.format(name="z"),
    )
    result = gate.run(*args, "test_a.py", NEW, "test_z.py", "-s", "-p", "no:randomly")
    outcomes = result.parseoutcomes()
    assert outcomes == {"failed": 2, "passed": 3, "xfailed": 4}, outcomes
    events = [line for line in result.outlines if line.startswith("events:")]
    assert events == ["events: session up,a up,a down,z up,z down,session down"], events
    assert "previous item was not torn down properly" not in result.stdout.str()


def test_a_marked_gate_item_runs_the_default_protocol(gate: Gate) -> None:
    """A mark a conftest puts on a task is evaluated as on any test."""
    args = gate.mixed()
    gate.pytester.makeconftest('''
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "cancel-async-tasks":
            item.add_marker(pytest.mark.skip(reason="reviewed by hand"))
''')
    result = gate.run(*args, "-rs", "-v")
    result.stdout.fnmatch_lines([f"{NEW}::cancel-async-tasks SKIPPED (reviewed by hand)*"])
    result.stdout.fnmatch_lines([f"{NEW}::regex-log FAILED*"])
    assert result.parseoutcomes() == {"failed": 1, "passed": 1, "skipped": 1, "xfailed": 4}


def test_a_verdict_hook_prints_into_its_items_report(gate: Gate) -> None:
    """With a conftest verdict hook, the items run as any test: its output is captured per item."""
    args = gate.mixed()
    gate.pytester.makeconftest('''
from pytest_rollout_parity import Verdict

def pytest_parity_verdict(comparison, config):
    print(f"judging {comparison.task}")
    if comparison.task == "fix-git":
        return Verdict.failed("fix-git: blocked by policy")
    return None
''')
    result = gate.run(*args)
    assert result.ret == 1
    text = result.stdout.str()
    assert "judging fix-git" in text and "Captured stdout call" in text
    assert "judging new-only" not in text  # a passing or xfailed item's output is not shown


@pytest.mark.parametrize("extra", [[], ["-p", "no:logging"], ["--capture=no"]])
def test_reports_other_plugins_read_are_unchanged(gate: Gate, extra: list[str]) -> None:
    """JUnit properties, --durations phases and -x stay as with pytest's own protocol."""
    args = gate.mixed()
    result = gate.run(*args, "--junitxml=j.xml", "--durations=0", "-vv", *extra)
    cases = junit_cases(gate.path / "j.xml")
    assert set(cases) == {"build-cython-ext", "cancel-async-tasks", "fix-git", "git-multibranch",
                          "new-only", "old-only", "regex-log"}
    assert junit_properties(cases["regex-log"])["parity_category"] == "flipped"
    durations = [line for line in result.outlines if " setup " in line or " call " in line or " teardown " in line]
    assert len(durations) == 3 * 7, durations
    stopped = gate.run(*args, "-x")
    assert stopped.parseoutcomes().get("failed") == 1
    assert "stopping after 1 failures" in stopped.stdout.str()


QUIET_COUNT = '''
import pytest

@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    print("quiet reports kept:", len(terminalreporter.stats.get("", [])))
'''


@pytest.mark.parametrize(("extra", "kept"), [([], 0), (["--durations=0"], 14)])
def test_quiet_phase_reports_are_kept_only_for_durations(gate: Gate, extra: list[str], kept: int) -> None:
    """Passed setup/teardown reports of the gate's items are only read by --durations (memory)."""
    args = gate.mixed()
    gate.pytester.makeconftest(QUIET_COUNT)
    result = gate.run(*args, *extra)
    assert result.parseoutcomes() == {"failed": 2, "passed": 1, "xfailed": 4}
    assert f"quiet reports kept: {kept}" in result.outlines


def test_setup_only_runs_no_gate_item(gate: Gate) -> None:
    """--setup-only (and --setup-plan) run no test's call phase: the gate's items neither."""
    args = gate.mixed()
    result = gate.run(*args, "--setup-only")
    assert result.ret == 0
    assert "failed" not in result.parseoutcomes()

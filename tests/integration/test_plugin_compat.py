"""Other pytest plugins see the gate's items as ordinary tests.

Each run has pytest-json-report, allure-pytest, pytest-reportlog, pytest-html, pytest-timeout,
pytest-rerunfailures (and, under ``-n 2``, pytest-xdist) active beside the gate, and a plugin
installed through a real ``pytest11`` entry point (a dist-info on ``PYTHONPATH``) that records the
phase hooks it sees. For each plugin, what it records for a gate item (its fields and statuses) must
be what it records for a plain test of the same outcome: alone, in one session with the user's own
tests, and under ``-n 2``. The plain tests report their failures as the gate's items do, through
``pytest.fail(message, pytrace=False)``, an expected failure under an xfail mark; they record a user
property, as each gate item records its task.

Installed by the `compat` extra (``pip install -e '.[test,compat]'``); skipped without it.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from .conftest import Gate

pytestmark = pytest.mark.slow  # every run is a subprocess with the plugins loaded

for _plugin in (
    "pytest_jsonreport",
    "allure_pytest",
    "pytest_reportlog",
    "pytest_html",
    "pytest_timeout",
    "pytest_rerunfailures",
    "xdist",
):
    pytest.importorskip(_plugin)

GATE_PREFIX = "new/rollouts.jsonl::"
PLAIN = "plain/test_plain.py"  # one directory down, as the new file is (allure names the directory)
#: the outcomes of the gate's items in `Gate.mixed()`, and plain tests with the same outcomes
OUTCOMES = {"passed": 1, "failed": 2, "xfailed": 4}
PLAIN_TESTS = "import pytest\n\n" + "".join(
    f"{mark}def test_{outcome}_{n}(record_property):\n    record_property('parity_task', 't{n}')\n    {body}\n\n"
    for outcome, mark, body in (
        ("passed", "", "pass"),
        ("failed", "", 'pytest.fail("new regressed: old=1.0 new=0.0", pytrace=False)'),
        (
            "xfailed",
            '@pytest.mark.xfail(reason="only in the old file")\n',
            'pytest.fail("only in the old file", pytrace=False)',
        ),
    )
    for n in range(OUTCOMES[outcome])
)

RECORDER = '''"""Records the phase hooks it sees, one JSON line per hook call, in $PHASE_RECORDER_DIR."""
import json, os, signal


ROLE = ["main"]


def pytest_configure(config):
    ROLE[0] = "worker" if hasattr(config, "workerinput") else "main"


def _write(nodeid, event):
    path = os.path.join(os.environ["PHASE_RECORDER_DIR"], f"{os.getpid()}.jsonl")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps([nodeid, ROLE[0], event]) + "\\n")


def pytest_runtest_logstart(nodeid, location):
    _write(nodeid, "logstart")


def pytest_runtest_setup(item):
    _write(item.nodeid, "setup")


def pytest_runtest_call(item):
    # pytest-timeout (timeout_func_only, signal method) arms its timer around the call phase alone
    _write(item.nodeid, "call timer=%s" % (signal.getitimer(signal.ITIMER_REAL)[0] > 0))


def pytest_runtest_teardown(item, nextitem):
    _write(item.nodeid, "teardown")


def pytest_runtest_makereport(item, call):
    _write(item.nodeid, "makereport " + call.when)


def pytest_runtest_logreport(report):
    _write(report.nodeid, f"logreport {report.when} {report.outcome}")


def pytest_runtest_logfinish(nodeid, location):
    _write(nodeid, "logfinish")
'''


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recording plugin, installed through a dist-info whose entry point pytest loads."""
    site = tmp_path / "site"
    info = site / "parity_phase_recorder-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "parity_phase_recorder.py").write_text(RECORDER, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: parity-phase-recorder\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pytest11]\nphase_recorder = parity_phase_recorder\n")
    records = tmp_path / "records"
    records.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("PHASE_RECORDER_DIR", str(records))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # when this suite runs under xdist itself
    return records


class Records:
    """What every plugin recorded in one run, by node id."""

    def __init__(self, path: Path, records: Path) -> None:
        self.path = path
        self.records = records

    def outcome(self) -> dict[str, str]:
        """Each item's outcome as pytest-json-report has it (the grouping key)."""
        return {test["nodeid"]: test["outcome"] for test in self.json_report()["tests"]}

    def json_report(self) -> Any:
        return json.loads((self.path / "report.json").read_text(encoding="utf-8"))

    def by_plugin(self) -> dict[str, dict[str, Any]]:
        """plugin -> node id -> what the plugin recorded, its values that name the test left out."""
        result: dict[str, dict[str, Any]] = {}
        result["pytest-json-report"] = {
            test["nodeid"]: (
                test["outcome"],
                sorted(test),
                [
                    (when, test[when]["outcome"], sorted(test[when]))
                    for when in ("setup", "call", "teardown")
                    if when in test
                ],
            )
            for test in self.json_report()["tests"]
        }
        reportlog: dict[str, list[Any]] = {}
        for line in (self.path / "log.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("$report_type") == "TestReport":
                reportlog.setdefault(record["nodeid"], []).append(
                    (record["when"], record["outcome"], sorted(record), bool(record.get("longrepr")))
                )
        result["pytest-reportlog"] = reportlog
        result["pytest-html"] = {
            nodeid: [(entry["result"], sorted(entry), len(entry["resultsTableRow"])) for entry in entries]
            for nodeid, entries in _html_tests(self.path / "report.html").items()
        }
        result["allure-pytest"] = {
            _allure_nodeid(found): (
                found["status"],
                sorted(found),
                sorted({label["name"] for label in found["labels"]}),
                sorted(found.get("statusDetails", {})),
            )
            for found in _allure_results(self.path / "allure")
        }
        recorded: dict[str, dict[str, list[str]]] = {}
        for file in sorted(self.records.glob("*.jsonl")):
            for line in file.read_text(encoding="utf-8").splitlines():
                nodeid, role, event = json.loads(line)
                recorded.setdefault(nodeid, {}).setdefault(role, []).append(event)
        result["entry-point plugin"] = recorded
        return result


def _html_tests(path: Path) -> dict[str, list[dict[str, Any]]]:
    match = re.search(r'data-jsonblob="([^"]*)"', path.read_text(encoding="utf-8"))
    assert match is not None, "pytest-html wrote no data"
    tests: dict[str, list[dict[str, Any]]] = json.loads(html.unescape(match.group(1)))["tests"]
    return tests


def _allure_results(directory: Path) -> Iterable[dict[str, Any]]:
    for path in sorted(directory.glob("*-result.json")):
        yield json.loads(path.read_text(encoding="utf-8"))


def _allure_nodeid(found: dict[str, Any]) -> str:
    """Which test an allure result is of: the gate's by its task label, a plain test by its name."""
    name = str(found.get("name"))
    return f"{PLAIN}::{name}" if name.startswith("test_") else GATE_PREFIX + name


PLUGIN_ARGS = (
    "--json-report",
    "--json-report-file=report.json",
    "--report-log=log.jsonl",
    "--html=report.html",
    "--alluredir=allure",
    "--timeout=120",
    "-o",
    "timeout_func_only=true",
    "-o",
    "timeout_method=signal",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:randomly",
)


def run_with_plugins(gate: Gate, recorder: Path, *args: str) -> tuple[pytest.RunResult, Records]:
    for stale in recorder.glob("*.jsonl"):
        stale.unlink()
    result = gate.run_subprocess(*args, *PLUGIN_ARGS)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    return result, Records(gate.path, recorder)


def by_outcome(records: Records, prefix: str) -> dict[str, dict[str, list[str]]]:
    """outcome -> plugin -> the distinct records of the items under ``prefix`` (as JSON text)."""
    outcome_of = records.outcome()
    grouped: dict[str, dict[str, set[str]]] = {}
    for plugin, items in records.by_plugin().items():
        for nodeid, recorded in items.items():
            if nodeid.startswith(prefix):
                grouped.setdefault(outcome_of[nodeid], {}).setdefault(plugin, set()).add(json.dumps(recorded))
    return {outcome: {plugin: sorted(seen) for plugin, seen in plugins.items()} for outcome, plugins in grouped.items()}


def assert_every_plugin_saw_every_item(records: Records, prefix: str, count: int) -> None:
    for plugin, items in records.by_plugin().items():
        assert sum(nodeid.startswith(prefix) for nodeid in items) == count, plugin


def assert_alike(gate_side: dict[str, dict[str, list[str]]], plain_side: dict[str, dict[str, list[str]]]) -> None:
    assert set(gate_side) == set(plain_side) == set(OUTCOMES)
    for outcome in OUTCOMES:
        for plugin in plain_side[outcome]:
            assert gate_side[outcome].get(plugin) == plain_side[outcome][plugin], (outcome, plugin)
            assert len(plain_side[outcome][plugin]) == 1, (outcome, plugin)  # one shape per outcome


def test_plugins_record_the_gate_alone_as_plain_tests(gate: Gate, recorder: Path) -> None:
    args = gate.mixed()
    gate.write(PLAIN, PLAIN_TESTS)
    result, records = run_with_plugins(gate, recorder, *args)
    assert result.ret == 1
    assert records.json_report()["exitcode"] == 1
    gate_side = by_outcome(records, GATE_PREFIX)
    assert_every_plugin_saw_every_item(records, GATE_PREFIX, sum(OUTCOMES.values()))
    _, plain = run_with_plugins(gate, recorder, PLAIN)
    assert_alike(gate_side, by_outcome(plain, PLAIN))
    # pytest-timeout armed its timer in every gate item's call phase, as in every plain test's
    for nodeid, roles in records.by_plugin()["entry-point plugin"].items():
        assert "call timer=True" in roles["main"], nodeid


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_plugins_record_gate_items_as_the_users_tests_in_one_session(
    gate: Gate, recorder: Path, xdist: list[str]
) -> None:
    args = gate.mixed()
    gate.write(PLAIN, PLAIN_TESTS)
    result, records = run_with_plugins(gate, recorder, *args, PLAIN, *xdist)
    assert result.ret == 1
    if xdist:
        assert "created: 2/2 workers" in result.stdout.str()
    count = sum(OUTCOMES.values())
    assert_every_plugin_saw_every_item(records, GATE_PREFIX, count)
    assert_every_plugin_saw_every_item(records, PLAIN, count)
    assert_alike(by_outcome(records, GATE_PREFIX), by_outcome(records, PLAIN))


def test_reruns_are_recorded_alike_and_counted_once(gate: Gate, recorder: Path) -> None:
    """pytest-rerunfailures reruns a failed gate item as any test; the gate's JSON counts each task once."""
    args = gate.mixed()
    gate.write(PLAIN, PLAIN_TESTS)
    result, records = run_with_plugins(gate, recorder, *args, PLAIN, "--reruns=1", "--parity-json=parity.json")
    assert result.ret == 1
    reportlog = records.by_plugin()["pytest-reportlog"]
    rerun = [nodeid for nodeid, reports in reportlog.items() if any(when[1] == "rerun" for when in reports)]
    assert sorted(rerun) == sorted(
        [
            f"{GATE_PREFIX}regex-log",
            f"{GATE_PREFIX}cancel-async-tasks",
            f"{PLAIN}::test_failed_0",
            f"{PLAIN}::test_failed_1",
        ]
    )
    assert_alike(by_outcome(records, GATE_PREFIX), by_outcome(records, PLAIN))
    summary = json.loads((gate.path / "parity.json").read_text(encoding="utf-8"))
    outcomes = summary["run"]["outcomes"]
    assert outcomes == {"failed": 2, "passed": 1, "xfailed": 4}

"""The JSON summary's one layout, the summary's dataclasses: the schema docs/json.md shows is theirs,
a file the gate writes reads back into the same summary, and a key or a value they do not name is
refused. (Every summary the integration runs write is read back too: `tests/integration/conftest.py`,
`summaries_checked`.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import VERSION, ValidationError

from pytest_rollout_parity import compare_rollouts
from pytest_rollout_parity.__main__ import main
from pytest_rollout_parity.core.reports.json_file import json_dict, read_summary, schema_text
from pytest_rollout_parity.core.reports.summary import BySide, RunInfo, RunOutcome, SideFile, build_summary

DOC = Path(__file__).parents[2] / "docs" / "json.md"


def schema_block() -> str:
    """The one ```json block under the page's "The schema" heading."""
    section = DOC.read_text(encoding="utf-8").split("\n### The schema\n", 1)[1]
    found = re.search(r"^```json\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert found is not None
    return found.group(1)


#: the pydantic release the published schema is generated with; older releases generate
#: parts of it otherwise (2.5 does), though they validate the same files
SCHEMA_FROM = (2, 14)


@pytest.mark.skipif(
    tuple(int(part) for part in VERSION.split(".")[:2]) < SCHEMA_FROM,
    reason=f"docs/json.md's schema is pydantic {SCHEMA_FROM[0]}.{SCHEMA_FROM[1]}'s; this is pydantic {VERSION}",
)
def test_the_page_shows_the_summarys_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0  # `python -m pytest_rollout_parity schema`
    assert schema_block() == schema_text() + "\n" == capsys.readouterr().out


def _summary() -> dict[str, Any]:
    old = [{"task_id": t, "reward": r} for t, r in {"a": 1.0, "b": 1.0, "c": 0.0, "gone": 1.0}.items()]
    new = [{"task_id": t, "reward": r} for t, r in {"a": 1.0, "b": 0.0, "c": 1.0, "fresh": 0.0}.items()]
    info = RunInfo(
        BySide(SideFile("o"), SideFile("n")), RunOutcome(6, 0, {}), task_outcomes={"a": "passed", "b": "failed"}
    )
    return json_dict(build_summary(compare_rollouts(old, new), info, margin=0.05))


def test_a_written_summary_reads_back_into_the_same_summary() -> None:
    data = _summary()
    assert "aggregate" in data and "run" in data
    summary = read_summary(data)
    assert summary.counts.flipped == 2 and summary.tasks[1].ran_here is True
    assert json_dict(summary) == data


@pytest.mark.parametrize(
    "change",
    [
        lambda data: data.update(surprise=1),
        lambda data: data["tasks"][0].update(surprise=1),
        lambda data: data["paired"]["left_out"].update(surprise=1),
        lambda data: data["counts"].update(surprise=1),
        lambda data: data["counts"].update(tasks=4.0),
        lambda data: data["join"].update(keyed_by_taskset=1),
        lambda data: data["paired"]["sign_test"].update(p=float("nan")),
        lambda data: data.update(compared="3"),
        lambda data: data.update(verdict="maybe"),
        lambda data: data["paired"].update(ci95=[0.1]),
        lambda data: data["run"]["options"].update(alpha="0.05") if data["run"]["options"] else data.update(x=1),
        lambda data: data["task_outcomes"].update(vanished=1),
    ],
)
def test_a_key_or_a_value_the_layout_does_not_name_is_refused(change: Any) -> None:
    data = _summary()
    change(data)
    with pytest.raises((ValidationError, ValueError)):  # NaN: not JSON, refused before the model
        read_summary(data)

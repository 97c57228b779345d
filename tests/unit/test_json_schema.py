"""The JSON summary's published model: the schema docs/json.md shows is the model's, the model
takes what the gate writes and refuses a key it does not name. (Every summary the integration
runs write is validated against it too: `tests/integration/conftest.py`, `summaries_checked`.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import VERSION, ValidationError

from pytest_rollout_parity import compare_rollouts, summary_dict
from pytest_rollout_parity.json_schema import ParitySummaryFile, check, schema_text

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
def test_the_page_shows_the_models_schema() -> None:
    block = schema_block()
    assert json.loads(block) == ParitySummaryFile.model_json_schema()
    assert block == schema_text() + "\n"  # as `python -m pytest_rollout_parity.json_schema` prints it


def _summary() -> dict[str, Any]:
    old = [{"task_id": t, "reward": r} for t, r in {"a": 1.0, "b": 1.0, "c": 0.0, "gone": 1.0}.items()]
    new = [{"task_id": t, "reward": r} for t, r in {"a": 1.0, "b": 0.0, "c": 1.0, "fresh": 0.0}.items()]
    return summary_dict(compare_rollouts(old, new), margin=0.05)


def test_the_apis_summary_validates() -> None:
    data = _summary()
    assert "aggregate" in data and "run" not in data
    assert check(data).counts.flipped == 2


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
    ],
)
def test_a_key_or_a_value_the_model_does_not_name_is_refused(change: Any) -> None:
    data = _summary()
    change(data)
    with pytest.raises((ValidationError, ValueError)):  # NaN: not JSON, refused before the model
        check(data)


@pytest.mark.slow
def test_a_gate_run_never_imports_the_model() -> None:
    code = (
        "import sys\n"
        "from pytest_rollout_parity import compare_rollouts, summary_dict\n"
        "summary_dict(compare_rollouts([{'task_id': 'a', 'reward': 1.0}], [{'task_id': 'a', 'reward': 1.0}]))\n"
        "import pytest_rollout_parity.plugin.activate\n"
        "print('pytest_rollout_parity.json_schema' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False"]

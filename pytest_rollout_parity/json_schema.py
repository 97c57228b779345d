"""`python -m pytest_rollout_parity.json_schema`: the JSON summary's schema, as docs/json.md publishes it.

The schema is the summary's dataclasses' own (:func:`.core.reports.json_file.schema`); this lays it
out for reading, each object on one line when it fits.
"""

from __future__ import annotations

import json
from typing import Any

#: the widest line :func:`schema_text` writes where an object or a list can be broken
SCHEMA_WIDTH = 110


def schema_text() -> str:
    """The summary's JSON Schema, each object on one line when it fits."""
    from .core.reports.json_file import schema

    return _laid_out(schema(), 0, 0)


def _laid_out(value: Any, indent: int, used: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if indent + used + len(flat) <= SCHEMA_WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        body = [f"{pad}{json.dumps(k)}: {_laid_out(v, indent + 2, len(json.dumps(k)) + 3)}" for k, v in value.items()]
    else:
        body = [f"{pad}{_laid_out(v, indent + 2, 1)}" for v in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + "\n" + ",\n".join(body) + "\n" + " " * indent + closing


if __name__ == "__main__":
    print(schema_text())

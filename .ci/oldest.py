#!/usr/bin/env python3
"""Print one `name==X` pin for every `name>=X` lower bound in pyproject.toml (runtime deps and the
`test` extra), so CI can install the oldest versions the project declares and prove them.

Usage: python3 .ci/oldest.py > pins.txt   (needs Python 3.11+ for tomllib; the pins serve any Python)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

EXTRAS = ("test",)
BOUND = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)")


def oldest_pins(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"])
    for extra in EXTRAS:
        specs += project["optional-dependencies"][extra]
    pins: dict[str, str] = {}
    for spec in specs:
        match = BOUND.match(spec)
        if match is None:
            sys.exit(f"ERROR: {pyproject}: no '>=' lower bound in {spec!r}")
        pins[match.group(1).lower()] = match.group(3)
    return [f"{name}=={version}" for name, version in pins.items()]


if __name__ == "__main__":
    print("\n".join(oldest_pins(Path(__file__).resolve().parent.parent / "pyproject.toml")))

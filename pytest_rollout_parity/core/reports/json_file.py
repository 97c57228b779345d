"""The JSON summary file: the :class:`.summary.Summary` as pydantic writes it, read back the same way."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..escaping import utf8_safe
from .summary import Summary

if TYPE_CHECKING:
    from pydantic import TypeAdapter

#: the sections that apply only somewhere (margin mode, a pytest run, a merge...): absent from the file when None
ABSENT_WHEN_NONE = frozenset(f.metadata.get("alias", f.name) for f in fields(Summary) if f.default is None)


@cache
def _adapter() -> TypeAdapter[Summary]:
    """pydantic's adapter of the summary, built once a process (building it costs tens of ms), and
    only where a file is written or read: a run without `--parity-json` imports no pydantic."""
    from pydantic import TypeAdapter

    from .. import model
    from ..judging import companions, completeness, verdicts
    from ..statistics import margin, paired, paired_tests, plan
    from . import summary

    # pydantic 2.5 resolves a nested dataclass's annotations in the namespace it is called from, not
    # in the dataclass's own module: it is called where the names of every module holding one are
    namespace: dict[str, Any] = {}
    for module in (model, companions, completeness, margin, paired, paired_tests, plan, verdicts):
        namespace.update(vars(module))
    namespace.update(vars(summary), TypeAdapter=TypeAdapter)
    adapter: TypeAdapter[Summary] = eval("TypeAdapter(Summary)", namespace)
    return adapter


def json_dict(summary: Summary) -> dict[str, Any]:
    """The summary as the JSON file holds it."""
    data: dict[str, Any] = _adapter().dump_python(summary, mode="json", by_alias=True)
    return {key: value for key, value in data.items() if value is not None or key not in ABSENT_WHEN_NONE}


def read_summary(data: Any) -> Summary:
    """A parsed summary (a merge's part) held strictly to the layout as JSON text, then read back.

    A lone surrogate, which the gate writes as its escape and pydantic's JSON parser refuses, is
    checked there as any other character and read back as it is."""
    adapter = _adapter()
    adapter.validate_json(json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8", "replace"))
    return adapter.validate_python(data, strict=False)


#: the widest line :func:`schema_text` writes where an object or a list can be broken
SCHEMA_WIDTH = 110


def schema_text() -> str:
    """The file's JSON Schema as docs/json.md publishes it, each object on one line when it fits."""

    def laid_out(value: Any, indent: int, used: int) -> str:
        flat = json.dumps(value, ensure_ascii=False)
        if indent + used + len(flat) <= SCHEMA_WIDTH or not isinstance(value, (dict, list)) or not value:
            return flat
        pad = " " * (indent + 2)
        if isinstance(value, dict):
            body = [
                f"{pad}{json.dumps(k)}: {laid_out(v, indent + 2, len(json.dumps(k)) + 3)}" for k, v in value.items()
            ]
        else:
            body = [f"{pad}{laid_out(v, indent + 2, 1)}" for v in value]
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        return opening + "\n" + ",\n".join(body) + "\n" + " " * indent + closing

    return laid_out(_adapter().json_schema(by_alias=True, mode="serialization"), 0, 0)


def json_text(data: dict[str, Any]) -> str:
    """The summary as UTF-8-safe JSON: raw text, but a lone surrogate (no UTF-8 form, only ever inside
    a JSON string) as its escape, which reads back as the same text."""
    return utf8_safe(json.dumps(data, indent=2, ensure_ascii=False))


def write_text(path: Path, text: str) -> None:
    """Write ``text`` through a temporary file beside ``path``, so a reader never sees half a file."""
    try:  # the permissions a plain `open(path, "w")` would give: the existing file's, else 0666 & ~umask
        mode = path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

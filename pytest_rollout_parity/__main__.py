"""`python -m pytest_rollout_parity merge PART.json...` and `python -m pytest_rollout_parity schema`.

`merge` joins a split run's `--parity-json` parts into one verdict, shown, written and published as
the gate's own: exit 0 for `pass`, 1 otherwise, 4 for parts that cannot be merged or a wrong
argument (one `ERROR:` line, nothing written). `schema` prints the JSON Schema docs/json.md publishes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from itertools import zip_longest
from pathlib import Path
from typing import NoReturn, Optional

from pydantic import ValidationError

from . import core
from .core.escaping import utf8_safe
from .core.model import Side
from .core.reading.loading import load_side
from .core.reports.json_file import read_summary, schema_text
from .core.reports.merge import MergeError, merge_parts
from .core.reports.summary import task_summary

USAGE_EXIT = 4
#: the largest part read: a summary of a few hundred thousand tasks
PART_CAP = 1 << 30
USAGE = "python -m pytest_rollout_parity merge PART.json... [--markdown=PATH] [--json=PATH] [--old=PATH] [--new=PATH]"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (usage: {USAGE})")


def _fail(message: str) -> NoReturn:
    print(f"ERROR: {core.terminal_line(message)}", file=sys.stderr)
    raise SystemExit(USAGE_EXIT)


def _read(path: str) -> core.Summary:
    """The part's summary, held to the layout before any use: parts come from CI artifacts."""
    try:
        raw = core.read_capped(Path(path), PART_CAP)
    except OSError as exc:
        _fail(f"{path}: cannot read: {exc.strerror or exc}")
    try:
        return read_summary(json.loads(raw))
    except UnicodeDecodeError:
        _fail(f"{path}: not UTF-8 text: a --parity-json summary is needed")
    except json.JSONDecodeError as exc:
        _fail(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno}); a --parity-json summary is needed")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(step) for step in first["loc"]) or "the top level"
        what = "a key the layout does not name" if first["type"] == "unexpected_keyword_argument" else first["msg"]
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        _fail(f"{path}: {where}: {what.lower()}{more}: not a --parity-json summary")
    except ValueError as exc:  # NaN, Infinity: the layout holds JSON numbers only
        _fail(f"{path}: {exc}: a --parity-json summary is needed")
    except RecursionError:
        _fail(f"{path}: nested too deep for a --parity-json summary")


def _check_inputs(merged: core.Summary, old: Optional[str], new: Optional[str]) -> None:
    """Each side given holds what the parts read (its digest); with both, the files classify each task
    as the parts do, so parts edited alike cannot pass for these files."""
    run = merged.run
    assert run is not None and run.options is not None  # every part records them
    options, sides = run.options, {}
    given: dict[Side, Optional[str]] = {"old": old, "new": new}
    for side, path in given.items():
        if path is None:
            continue
        try:
            sides[side] = load_side(core.SideRequest(path, key=options.key.side(side), agent=options.agent.side(side)))
        except core.CompareInputError as exc:
            _fail(f"--{side}: {exc}")
        if sides[side].digest != run.inputs.get(side):
            _fail(
                f"--{side}: {path} is not the {side} side the parts read "
                f"(digest {sides[side].digest} against {run.inputs.get(side)})"
            )
    if len(sides) < 2:
        return
    result = core.compare_loaded(sides["old"], sides["new"], old_key=options.key.old, new_key=options.key.new)
    for claimed, task in zip_longest(merged.tasks, result.tasks):
        actual = task_summary(task) if task is not None else None
        shown = [
            (each.task, each.category, each.winner, each.old, each.new) if each else None for each in (claimed, actual)
        ]
        if shown[0] != shown[1]:
            name = (claimed or actual).task  # type: ignore[union-attr]  # one of them is there
            _fail(
                f"--old/--new: these files classify task {name!r} otherwise than the parts "
                f"({actual.category if actual else 'absent'} against {claimed.category if claimed else 'absent'}, "
                "or other rewards): an edited part?"
            )


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; returns its exit status."""
    parser = _Parser(prog="python -m pytest_rollout_parity", description="Tools around the rollout parity gate.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    merge = commands.add_parser("merge", help="join the --parity-json files of a split run into one verdict")
    merge.add_argument("parts", nargs="+", metavar="PART.json", help="each part's --parity-json file")
    merge.add_argument("--markdown", type=Path, help="write the merged verdict as Markdown here")
    merge.add_argument("--json", type=Path, help="write the merged run as one run's JSON summary here")
    for side in ("old", "new"):
        merge.add_argument(f"--{side}", help=f"the {side} rollouts file: check the parts' digest of it against it")
    commands.add_parser("schema", help="print the JSON summary's schema (docs/json.md publishes it)")
    args = parser.parse_args(argv)
    if args.command == "schema":
        print(schema_text())
        return 0
    outputs = (("--markdown", args.markdown), ("--json", args.json))
    refused = core.refused_output(
        [*outputs, *core.ci_files()], [("one of the parts", Path(part)) for part in args.parts]
    )
    if refused is not None:
        _fail(refused)
    try:
        merged = merge_parts([(path, _read(path)) for path in args.parts])
    except MergeError as exc:
        _fail(str(exc))
    assert merged.run is not None and merged.merge is not None  # a merge of parts
    _check_inputs(merged, args.old, args.new)
    try:  # every output is made before any is written, from figures a part may have had edited
        lines = [utf8_safe(line) for line in core.summary_lines(merged)]
        markdown = core.render_markdown(merged, exit_status=merged.merge.exit_status)
        texts = {"--markdown": markdown, "--json": core.json_text(core.json_dict(merged)) + "\n"}
    except (TypeError, ValueError, ArithmeticError, LookupError) as exc:
        _fail(f"the parts' figures contradict each other ({exc}): an edited part?")
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`): the outputs are still written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    for option, path in outputs:
        try:
            skipped = core.write_output(path, texts[option]) if path is not None else None
        except OSError as exc:
            _fail(f"{option}: cannot write {path}: {exc.strerror or exc}")
        if skipped is not None:
            print(core.skipped_line(option, path, skipped), file=sys.stderr)
    # the job page or a later step lacks it; the verdict stands
    for line in core.publish_to_ci(markdown, merged.verdict):
        print(line, file=sys.stderr)
    return merged.merge.exit_status


if __name__ == "__main__":
    sys.exit(main())

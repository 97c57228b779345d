"""`python -m pytest_rollout_parity merge PART.json... [--markdown=PATH] [--json=PATH]`.

Joins the `--parity-json` files of a run split over CI jobs into one verdict (the core's
:func:`~.core.reports.merge.merge_parts`), prints it, writes it where asked and, under GitHub
Actions, appends its Markdown to the job page and `verdict=...` to the step's outputs, by the gate's
rule for outputs (:mod:`.core.reports.outputs`). The exit status is the gate's: 0 when no item
failed, 1 when one failed or ran in no part, 4 for parts that cannot be merged or a wrong argument
(one `ERROR:` line, nothing written), a part that does not hold the summary's published layout
among them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, Optional

USAGE_EXIT = 4
#: the largest part read: a summary of a few hundred thousand tasks
PART_CAP = 1 << 30


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (usage: python -m pytest_rollout_parity merge PART.json... [--markdown=PATH] [--json=PATH])")


def _fail(message: str) -> NoReturn:
    from .core import terminal_line

    print(f"ERROR: {terminal_line(message)}", file=sys.stderr)
    raise SystemExit(USAGE_EXIT)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m pytest_rollout_parity", description="Tools around the rollout parity gate.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    merge = commands.add_parser("merge", help="join the --parity-json files of a split run into one verdict")
    merge.add_argument("parts", nargs="+", metavar="PART.json", help="each part's --parity-json file")
    merge.add_argument("--markdown", type=Path, help="write the merged verdict as Markdown here")
    merge.add_argument("--json", type=Path, help="write the merged run as one run's JSON summary here")
    return parser


def _read(path: str) -> Any:
    from .core.reading.bounded import read_capped

    try:
        data = read_capped(Path(path), PART_CAP)
    except OSError as exc:
        _fail(f"{path}: cannot read: {exc.strerror or exc}")
    try:
        return json.loads(data)
    except UnicodeDecodeError:
        _fail(f"{path}: not UTF-8 text: a --parity-json summary is needed")
    except json.JSONDecodeError as exc:
        _fail(f"{path}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno}); a --parity-json summary is needed")


def _check_layout(parts: Sequence[tuple[str, Any]]) -> None:
    """Each part holds the summary's published layout (:mod:`.json_schema`), no key it does not name:
    the parts come from CI artifacts, and the merged file keeps their layout."""
    from pydantic import ValidationError

    from .json_schema import ParitySummaryFile

    for path, data in parts:
        try:
            ParitySummaryFile.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(step) for step in first["loc"]) or "the top level"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            _fail(f"{path}: {where}: {first['msg'].lower()}{more}: not a --parity-json summary")


def _check_outputs(parts: Sequence[str], outputs: Sequence[tuple[str, Optional[Path]]]) -> None:
    """Nothing given as a part is written to (an option or a CI file naming one is a usage error), and
    every output's directory exists."""
    from .core.reports.outputs import named_input

    given = [(part, Path(part)) for part in parts]
    for option, path in outputs:
        if path is None:
            continue
        if named_input(path, given) is not None:
            _fail(f"{option}: {path} is one of the parts: it is read, never written to")
        if not option.startswith("$") and not path.parent.is_dir():
            _fail(f"{option}: cannot write {path}: no such directory")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command; returns its exit status."""
    args = _parser().parse_args(argv)
    from .core.reports.json_file import json_text
    from .core.reports.merge import MergeError, merge_parts, merged_json
    from .core.reports.merge_reports import merged_lines, merged_markdown
    from .core.reports.outputs import ci_files, publish_to_ci, skipped_line, write_output

    outputs = (("--markdown", args.markdown), ("--json", args.json))
    _check_outputs(args.parts, [*outputs, *ci_files()])
    parts = [(path, _read(path)) for path in args.parts]
    try:
        merged = merge_parts(parts)
    except MergeError as exc:
        _fail(str(exc))
    _check_layout(parts)  # after the merge's own checks, which name what a part lacks in its words
    try:
        for line in merged_lines(merged):
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`): the outputs are still written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    markdown = merged_markdown(merged)
    for option, path in outputs:
        if path is None:
            continue
        text = markdown if option == "--markdown" else json_text(merged_json(merged)) + "\n"
        try:
            skipped = write_output(path, text)
        except OSError as exc:
            _fail(f"{option}: cannot write {path}: {exc.strerror or exc}")
        if skipped is not None:
            print(skipped_line(option, path, skipped), file=sys.stderr)
    for line in publish_to_ci(markdown, merged.verdict):  # the job page or a later step lacks it; the verdict stands
        print(line, file=sys.stderr)
    return merged.exit_status


if __name__ == "__main__":
    sys.exit(main())

"""The gate switched on: the run's settings read and checked, both sides read, its plugins registered.

Imported only when a run gives a parity option, so runs without the gate never import the core,
tabulate or pydantic-core. The command line wins over the ini file; a relative path resolves
against the invocation directory, or the ini file's for a value from it, so an ini file means the
same wherever pytest is run from.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TextIO

import pytest

from .. import core
from .collect import ParityCollection
from .options import OPTION, OPTIONS, ParitySettings, ini_value
from .placement import resolve
from .reporting import ParitySummary
from .run import RUN_KEY, ParityRun

SHOW_FROM = 100 * 1000 * 1000  # bytes: a side this large shows progress (a smaller one loads too fast)
INTERVAL = 0.25  # seconds between two updates of the progress line


def stderr_is_tty() -> bool:
    """Whether stderr is a terminal (a person watching), not a CI log or a pipe (the seam tests replace)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress_for(config: pytest.Config) -> Optional[LoadProgress]:
    """The run's progress display, or None when no person at a terminal would see it (xdist, -q, a log)."""
    if hasattr(config, "workerinput") or config.getoption("verbose", 0) < 0 or not stderr_is_tty():
        return None
    return LoadProgress(sys.stderr, show_from=SHOW_FROM)


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"


@dataclass
class LoadProgress:
    """One progress line for the side being read, updated in place, then the time it took; a side a
    reader child reads shows only its end. Written straight to ``sys.stderr``: the sides are read in
    ``pytest_configure``, before pytest's terminal reporter writes anything."""

    stream: TextIO
    clock: Callable[[], float] = time.monotonic
    show_from: int = SHOW_FROM
    interval: float = INTERVAL
    #: the side on the line, its size and when it started, while a large one is read
    reading: Optional[tuple[str, int]] = field(default=None, init=False)
    started: dict[str, float] = field(default_factory=dict, init=False)
    last_write: float = field(default=float("-inf"), init=False)
    width: int = field(default=0, init=False)

    def side(self, name: str) -> core.Progress:
        """The callback for one side's main file (``name``: how messages name it)."""
        self.started[name] = self.clock()

        def report(done: int, total: int) -> None:
            if total < self.show_from:
                return
            self.reading, now = (name, total), self.clock()
            if now - self.last_write >= self.interval or done >= total:
                self.last_write = now
                self._write(f"reading {name}: {_size(done)} of {_size(total)} ({100 * done // max(total, 1)}%)")

        return report

    def finished(self, name: str) -> None:
        """Replace a large side's progress line by the time it took."""
        if self.reading is not None and self.reading[0] == name:
            seconds = self.clock() - self.started[name]
            self._write(f"{name}: read {_size(self.reading[1])} in {seconds:.1f} s", end="\n")
            self.reading = None

    def close(self) -> None:
        """End a progress line left in place (a load stopped by an input error)."""
        if self.width:
            self.stream.write("\n")
            self.stream.flush()
            self.width = 0
        self.reading = None

    def _write(self, line: str, end: str = "") -> None:
        padding = " " * max(self.width - len(line), 0)  # clear what a longer line left behind
        self.stream.write("\r" + line + padding + end)
        self.stream.flush()
        self.width = 0 if end else len(line)


class ParityGate:
    """Reads both sides, then registers the collection side everywhere and the summary where reports arrive."""

    def __init__(self, settings: ParitySettings) -> None:
        self.settings = settings

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        """An unusable input stops the run here with one `ERROR:` line and status 4."""
        progress = progress_for(config)
        try:
            run = ParityRun.load(self.settings, config, progress)
        except core.CompareInputError as exc:
            if progress is not None:
                progress.close()
            # the message may quote the data (an agent's name, a key): one line, never a workflow command
            how = exc.how_to_set(lambda setting: OPTION[setting].flag)
            raise pytest.UsageError(core.terminal_line(f"{exc}{how}")) from None
        config.stash[RUN_KEY] = run
        config.pluginmanager.register(ParityCollection(config, run), "rollout-parity-collection")
        if not hasattr(config, "workerinput"):
            config.pluginmanager.register(ParitySummary(config), "rollout-parity-summary")

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Let go of the run, which every plugin of the gate reads from here, before pytest's closing
        full collections (two in pytest 9) walk each of its objects: a tenth of a one-task rerun's CPU."""
        if RUN_KEY in config.stash:
            del config.stash[RUN_KEY]


def settings_from_config(config: pytest.Config) -> Optional[ParitySettings]:
    """The validated settings, or None when neither side is given (the plugin then does nothing)."""
    cwd = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    raw: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for option in OPTIONS:
        # the command line over the ini file; for a path or a list of them, an empty one is none
        value, from_ini = config.getoption(option.dest), False
        if not (value if option.path else value is not None) and option.ini is not None:
            value, from_ini = ini_value(config, option.ini), True
        if not (value if option.path else value is not None):
            continue
        source = sources[option.field] = option.ini if from_ini and option.ini else option.flag
        if from_ini and not option.repeated and isinstance(value, list):  # `[tool.pytest.ini_options]`
            raise pytest.UsageError(f"{source}: one value, not a TOML list")
        base = ini_dir if from_ini else cwd
        if option.field in ("old", "new"):
            # the side's file, or its shards when the value is a glob or comma-separated globs matching
            # several; named as typed (or as matched) from the command line, resolved from an ini file
            left_out: list[tuple[str, str]] = []
            try:
                files = [(path, str(path) if from_ini else shown) for path, shown in core.expand(value, base, left_out)]
            except core.ShardPatternError as exc:
                raise pytest.UsageError(core.visible(f"{source}: {exc}")) from None
            raw[option.field], raw[f"{option.field}_left_out"] = files[0][0], tuple(left_out)
            raw[f"{option.field}_shown"] = files[0][1] if len(files) == 1 else value
            raw[f"{option.field}_files"] = tuple(files)
        elif option.repeated:
            raw[option.field] = tuple(resolve(each, base) for each in value)
        elif option.path:
            raw[option.field] = resolve(value, base)
            if option.field == "known_flips":  # shown as typed on the command line, resolved from an ini file
                raw["known_flips_shown"] = str(raw["known_flips"]) if from_ini else value
        else:
            raw[option.field] = value
    for own in ("old_key", "new_key", "old_agent", "new_agent"):
        both = own.split("_")[1]
        # the command line wins over the ini file; on the same level the per-side value wins
        in_ini = {name: not sources[name].startswith("--") for name in (own, both) if name in sources}
        if both in sources and (own not in sources or (in_ini[own] and not in_ini[both])):
            raw[own], sources[own] = raw[both], sources[both]
        sources.setdefault(own, OPTION[both].flag)  # the option a message asks for
    sides = [side for side in ("old", "new") if side in sources]
    if not sides:
        return None
    if len(sides) == 1:
        missing = OPTION["new" if "old" in sources else "old"].flag
        raise pytest.UsageError(f"{sources[sides[0]]} was given without {missing}: the gate needs both sides")
    raw["sources"] = sources
    settings = ParitySettings(**raw)  # each value checked: a usage error names the first unusable one
    # both sides naming one file (by any path, symlink or hard link) compare nothing
    shared = settings.shared_file
    if shared is not None and not settings.allow_same_file:
        raise pytest.UsageError(
            f"{sources['old']} and {sources['new']} name the same file ({core.visible(shared)}): "
            "a file compared with itself shows nothing; give --parity-allow-same-file for a smoke test"
        )
    inputs: list[tuple[str, Path]] = []
    for side in ("old", "new"):
        for path, shown in getattr(settings, f"{side}_files"):
            # a sidecar, metrics or coverage file linked out of its side's directory stops the run before
            # anything is read (the core refuses a linked sidecar again when it reads one)
            try:
                core.check_companions(path, shown)
            except core.CompareInputError as exc:
                raise pytest.UsageError(core.visible(str(exc))) from None
            # every file the gate reads, beside the path as given and beside the file it resolves to
            # (present or not: a file written there would be read by the next run)
            inputs.append((f"the {side} rollouts file", path))
            inputs.extend((f"the {side} side's failures sidecar", place) for place in core.sidecar_places(path))
            inputs.extend((f"the {side} side's {what}", place) for what, place in core.companion_places(path))
    if settings.known_flips is not None:
        inputs.append(("the known-flips list", settings.known_flips))
    outputs = [(OPTION[name].flag, getattr(settings, name)) for name in ("json_path", "markdown_path", "html_path")]
    refused = core.refused_output([*outputs, *core.ci_files()], inputs)
    for flag, dest in (("--junitxml", "xmlpath"), ("--html", "htmlpath")):  # pytest's and pytest-html's
        given = config.getoption(dest, None)
        what = core.named_input(Path(given), inputs) if given else None
        refused = refused or (f"{flag}: {given} is {what}: an output never overwrites an input" if what else None)
    if refused is not None:
        raise pytest.UsageError(core.visible(refused))
    for root in settings.logs_roots:
        if not root.is_dir():
            raise pytest.UsageError(core.visible(f"{sources['logs_roots']}: {root} is not a directory"))
    return settings

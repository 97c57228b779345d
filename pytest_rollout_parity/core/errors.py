"""The one exception the core raises for unusable input, and the place in a file it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Optional


class Place(NamedTuple):
    """Where something is: a file as the user named it, the line in it, and how messages show both."""

    path: str
    line: Optional[int] = None
    #: the place as messages show it when not `<path>:<line>` (a row given in memory, two rows at once)
    shown: Optional[str] = None

    @property
    def where(self) -> str:
        if self.shown is not None:
            return self.shown
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def error(self, reason: str, setting: Optional[str] = None) -> CompareInputError:
        """The input error ``reason`` at this place (``setting``: see :class:`CompareInputError`)."""
        return CompareInputError(self.path, reason, self.line, self.shown, setting)


class CompareInputError(Exception):
    """An input file could not be used: the one line the user sees, `<path>:<line>: <reason>` (``path``
    empty when no one file is concerned, ``line`` None for a whole file), or ``where`` in place of
    `<path>:<line>` (an option naming the file, two rows at once). ``setting``: the setting that settles
    it (`key`, `agent`) or None; the plugin and the Python API spell it differently, so the surface
    showing the error adds how to give it there (:meth:`how_to_set`).
    """

    def __init__(
        self,
        path: str,
        reason: str,
        line: Optional[int] = None,
        where: Optional[str] = None,
        setting: Optional[str] = None,
    ) -> None:
        super().__init__(path, reason, line, where, setting)
        self.path = path
        self.reason = reason
        self.line = line
        self.where = Place(path, line, where).where
        self.setting = setting

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}" if self.where else self.reason

    def how_to_set(self, name: Callable[[str], str]) -> str:
        """How to give :attr:`setting`, as the error line ends (empty without one), each setting
        spelled as ``name`` spells it (`key` as `--parity-key` or `key=`, say)."""
        if self.setting == "key":
            return f" (use {name('key')})"
        if self.setting == "agent":
            both, old, new = name("agent"), name("old_agent"), name("new_agent")
            return f"; choose one with {both} NAME (both sides) or {old} / {new} NAME"
        return ""

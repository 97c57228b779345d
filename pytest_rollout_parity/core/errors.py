"""The one exception the core raises for unusable input."""

from __future__ import annotations


class CompareInputError(Exception):
    """An input file could not be used: its message names the file and, where there is one, the line."""

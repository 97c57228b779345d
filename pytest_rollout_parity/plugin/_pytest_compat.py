"""The one place where the plugin reaches past pytest's public API, because no public way exists.

Tested with pytest 8.0 (the declared floor) and 9.2 (the newest). It touches only the failure
representation the item's own ``repr_failure`` has just built and is about to return (an object
made for this one failure, which nothing else holds yet): no state of pytest's or of another
plugin's. If its shape changes, both functions do nothing and the run stays correct; only the
crash line and the --tb=line/short body fall back to pytest's own (``Failed: <whole message>``).

Why there is no public way: pytest, JUnit, pytest-json-report (``crash``), pytest-html and the
short summary all read the crash line from ``longrepr.reprcrash``, which pytest fills from the
exception's type and text and the raising line of code. A ``repr_failure`` that returns a plain
string (as pytest-mypy's does) has no ``reprcrash`` at all: the short summary would then name the
node id alone, JUnit's ``message`` would be the whole message, and pytest-json-report would record
no ``crash`` for the gate's failures where it records one for any failing test.

The crash line of a flip, and its body per --tb style: pytest takes a failure's one-line
crash message (the short summary line, in CI the whole line; JUnit's ``message``; the
``path:line: message`` of ``--tb=line``) from the exception text and the code location:
``pytest.fail(text, pytrace=False)`` gives ``"Failed: " + text`` with every line of the text
(the verifier log tail included) at a line of the plugin's own code. No hook or option chooses
that line, so :func:`set_crash_message` writes the flip's header, and the task's row in the new
file as its location, into the representation ``Item.repr_failure`` has just built. With a
``pytrace=False`` failure pytest renders every style as the whole message, and ``--tb=line``
prints that body before the crash line; :func:`keep_message_lines` cuts the body to what the
style asks for (none for line, the header for short).
"""

from __future__ import annotations

from typing import Optional


def set_crash_message(representation: object, message: str, location: Optional[tuple[str, int]] = None) -> None:
 """Make ``message`` (at ``location``: path, 1-based line) the crash line of a failure (module docstring)."""
 crash = getattr(representation, "reprcrash", None)
 if crash is not None and hasattr(crash, "message"):
     crash.message = message
     if location is not None and hasattr(crash, "path") and hasattr(crash, "lineno"):
         crash.path, crash.lineno = location


def keep_message_lines(representation: object, count: int) -> None:
 """Keep the first ``count`` lines of a ``pytrace=False`` failure's message body (module docstring)."""
 traceback = getattr(representation, "reprtraceback", None)
 entries = getattr(traceback, "reprentries", None)
 if not entries or not isinstance(getattr(entries[-1], "lines", None), list):
     return
 del entries[-1].lines[count:]


def add_junit_suite_property(config: object, name: str, value: str) -> None:
    """A `<property>` of the JUnit file's test suite (``--junitxml``), when one is being written.

    pytest's public `record_testsuite_property` is a fixture, for a test to call; the run's verdict
    is known only once every item has run, so it goes through the same object that fixture uses.
    If pytest's shape changes, this does nothing: the verdict is still in every other report.
    """
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without it
        return
    stash = getattr(config, "stash", None)
    xml = stash.get(xml_key, None) if stash is not None else None
    add = getattr(xml, "add_global_property", None)
    if callable(add):
        add(name, value)

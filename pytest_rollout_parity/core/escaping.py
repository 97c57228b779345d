"""Text from the rows made safe to show, for display only: terminal lines and Markdown.

Task labels, reasons and log lines come from files the gate did not write. Shown raw, a carriage
return or an ANSI escape rewrites the terminal, a newline starts a line of the data's choosing, a
line starting with `::` is a GitHub Actions workflow command (`::error`, `::stop-commands::`; the
runner reads one after leading blanks), and Markdown in a label renders as links, images or
headings. These functions only change how a text is shown: node ids, `-k`, `--lf`, the JSON file,
JUnit properties and the hooks keep the labels as they are.
"""

from __future__ import annotations

import html
import re

#: Everything that is not shown as itself: the C0 and C1 controls and DEL (category Cc), every Unicode
#: format character (category Cf: the zero-width characters, the byte order mark, the soft hyphen, the
#: bidirectional marks, embeddings, overrides and isolates, the tag characters...), and the line and
#: paragraph separators (Zl, Zp). As ranges, so no table is built at import; a unit test holds them to
#: every such character of the running Python's Unicode database (the Egyptian format controls
#: U+13430-U+1343F are listed whole, as newer Unicode versions have them).
_INVISIBLE = (
    "\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_CONTROL = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
_CONTROL_KEEP_TAB = re.compile(f"[\x00-\x08\x0a-\x1f{_INVISIBLE}]")
#: the starts of a line data may not take: a workflow command, and the gate's verdict line
_RESERVED = ("::", "parity:", "partial:")


def _escape(match: re.Match[str]) -> str:
    """`\\n`, `\\x1b`, `\\u200b`, `\\U000e0001`: the character as Python writes it in a string."""
    return match.group().encode("unicode_escape").decode("ascii")


def visible(text: str, *, keep_tabs: bool = False) -> str:
    """``text`` on one line: each control character (newline included) as a visible escape (`\\x1b`, `\\r`)."""
    return (_CONTROL_KEEP_TAB if keep_tabs else _CONTROL).sub(_escape, text)


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds a character :func:`visible` would escape: such a name would not read as
    what it is."""
    return _CONTROL.search(text) is not None


def terminal_line(line: str, *, keep_tabs: bool = False) -> str:
    """One printed line built from data: controls as escapes, never a workflow command nor a line
    that reads as the gate's verdict (`parity: PASS`): its first `:`, after blanks, is shown as
    `\\x3a`."""
    line = visible(line, keep_tabs=keep_tabs)
    stripped = line.lstrip()
    if stripped.startswith(_RESERVED):
        colon = len(line) - len(stripped) + stripped.index(":")
        return f"{line[:colon]}\\x3a{line[colon + 1 :]}"
    return line


def terminal_text(text: str) -> str:
    """A text of several lines (a failure message, a reason): each line as :func:`terminal_line`."""
    return "\n".join(terminal_line(line, keep_tabs=True) for line in text.split("\n"))


#: the characters with a meaning in GitHub's Markdown inside a line (emphasis, code, links, images,
#: tags, entities, tables, strikethrough, math, footnotes, mentions), and the backslash itself; `(`
#: and `)` only close a link whose `[` is escaped, so they stay as written
_MARKDOWN = re.compile(r"""[\\`*_{}\[\]<>#+!|~&$@^]|:(?=//)|(?i:(?<=www)\.)""")


def markdown_text(text: str) -> str:
    """Text that Markdown shows as written: each character with a meaning there backslash-escaped, as
    `\\[` is always a literal `[` (never a link, emphasis, a heading, a table cell's end, a tag, an
    entity), so no text from the data becomes a link, an image or HTML; the `:` of `://` and the `.`
    after `www` too, so no URL in the data is linked. The text stays readable with `cat`. Inside an
    HTML element Markdown is not read: use :func:`html_text` there."""
    return _MARKDOWN.sub(lambda match: "\\" + match.group(), visible(text))


def html_text(text: str, *, lines: bool = False) -> str:
    """Text safe inside an HTML element (and so inside a Markdown HTML block such as `<pre>`, which
    Markdown does not read): `<`, `>`, `&` and quotes as character references, controls as escapes;
    with ``lines`` newlines (and tabs) are kept."""
    if lines:
        return "\n".join(html.escape(visible(line, keep_tabs=True)) for line in text.split("\n"))
    return html.escape(visible(text))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_safe(text: str) -> str:
    """The text with each lone surrogate (a label decoded from broken UTF-8 has them) as its `\\udXXXX`
    escape, so it can be written as UTF-8."""
    return _LONE_SURROGATE.sub(_escape, text)

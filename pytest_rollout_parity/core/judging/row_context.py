"""What a flip's rows say besides their reward: the prompt, and the agent's last message.

A task keyed on its index (`_ng_task_index`) or on its prompt has a label that tells a reader
little: a short excerpt of the prompt's last user message says what the task is. A server that
writes no verifier logs leaves a flip without output; the losing and the winning rows' last
assistant messages, side by side, say what changed. Both are cut to a few hundred characters, so a
row of any size adds a bounded amount to a report; the renderers escape them for where they go.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Optional

from ..reading.fields import PROMPT, TASK_INDEX
from ..reading.prompt_labels import content_text, decoded, last_user_text

#: characters of a prompt excerpt
EXCERPT_CHARS = 120
#: characters kept of a last assistant message (its end: where an answer usually is)
MESSAGE_CHARS = 600
#: lines kept of a last assistant message
MESSAGE_LINES = 8
#: flips a report carries a prompt excerpt for, at most (in task order: the ones its lists show)
EXCERPT_CAP = 200
#: the join keys whose labels say little about the task, so a report shows a prompt excerpt beside them
CONTEXT_KEYS: tuple[str, ...] = (TASK_INDEX, PROMPT)

_BLANKS = re.compile(r"\s+")


def wants_excerpt(key: str) -> bool:
    """A side keyed on this field names tasks by an index or a hash: a prompt excerpt helps."""
    return key in CONTEXT_KEYS


def _field(row: Any, dotted: str) -> Any:
    value = row
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def prompt_excerpt(row: dict[str, Any], chars: int = EXCERPT_CHARS) -> Optional[str]:
    """The start of the row's last user message on one line, cut at about ``chars``; None without one."""
    text = _BLANKS.sub(" ", last_user_text(decoded(_field(row, PROMPT)))).strip()
    if not text:
        return None
    if len(text) <= chars:
        return text
    cut = text.rfind(" ", 0, chars)
    return text[: cut if cut > chars // 2 else chars].rstrip(" ,.;:") + " …"


def last_assistant_message(
    row: dict[str, Any], chars: int = MESSAGE_CHARS, lines: int = MESSAGE_LINES
) -> Optional[list[str]]:
    """The end of the row's last assistant message (`response.output`): at most ``lines`` lines and
    about ``chars`` characters, the first marked when cut; None when the row has none."""
    output = _field(row, "response.output")
    if not isinstance(output, list):
        return None
    for item in reversed(output):
        if isinstance(item, dict) and item.get("type", "message") == "message" and item.get("role") == "assistant":
            text = content_text(item.get("content"), "\n").strip()
            if text:
                return _end(text, chars, lines)
    return None


def _end(text: str, chars: int, lines: int) -> list[str]:
    cut = len(text) > chars
    text = text[-chars:]
    kept = [line.rstrip() for line in text.split("\n") if line.strip()]
    if len(kept) > lines:
        kept, cut = kept[-lines:], True
    if cut and kept:
        kept[0] = f"[... cut] {kept[0]}"
    return kept


def task_excerpt(rows: Iterable[dict[str, Any]]) -> Optional[str]:
    """The prompt excerpt of the first of a task's rows that has one."""
    for row in rows:
        shown = prompt_excerpt(row)
        if shown is not None:
            return shown
    return None

"""What a flip's rows say besides their reward. A task keyed on its index or its prompt has a label
that tells little: an excerpt of the prompt says what the task is. A server that writes no verifier
logs leaves a flip without output: the losing and winning rows' last assistant messages say what
changed. Each is cut, so a row of any size adds a bounded amount to a report.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from ..identity.item_names import clipped
from ..reading.fields import EMBEDDED_OUTPUT_FIELDS, PROMPT, TASK_INDEX, TRAJECTORY
from ..reading.row_facts import lookup
from ..reading.task_idents import content_text, last_user_text
from .verifier_output import cut_line

EXCERPT_CHARS = 120
#: characters and lines kept of a last assistant message (its end: where an answer usually is)
MESSAGE_CHARS = 600
MESSAGE_LINES = 8
#: flips a report carries a prompt excerpt for, at most (in task order: the ones its lists show)
EXCERPT_CAP = 200


def _one_line(text: str) -> str:
    return " ".join(text.split())


def wants_excerpt(key: str) -> bool:
    """A side keyed on this field names tasks by an index or a hash: a prompt excerpt helps."""
    return key in (TASK_INDEX, PROMPT)


def prompt_excerpt(row: dict[str, Any], chars: int = EXCERPT_CHARS) -> Optional[str]:
    """The start of the row's last user message on one line, cut at about ``chars``; None without one."""
    text = _one_line(last_user_text(lookup(row, PROMPT)))
    return clipped(text, chars, " …") if text else None


def last_assistant_message(
    row: dict[str, Any], chars: int = MESSAGE_CHARS, lines: int = MESSAGE_LINES
) -> Optional[list[str]]:
    """The end of the row's last assistant message (`response.output`): at most ``lines`` lines and
    about ``chars`` characters, the first marked when cut; None when the row has none."""
    output = lookup(row, TRAJECTORY)
    for item in reversed(output if isinstance(output, list) else []):
        if isinstance(item, dict) and item.get("type", "message") == "message" and item.get("role") == "assistant":
            text = content_text(item.get("content"), "\n").strip()
            if not text:
                continue
            kept = [line.rstrip() for line in text[-chars:].split("\n") if line.strip()]
            if len(text) > chars or len(kept) > lines:
                kept = kept[-lines:]
                kept[0] = f"[... cut] {kept[0]}"
            return kept
    return None


# The losing row's evidence: what its verifier wrote into the row besides the reward.

#: lines of a row's evidence block, at most
EVIDENCE_LINES = 12
#: characters of one line of the block; a longer one is cut with a marker
EVIDENCE_LINE_CHARS = 240
#: characters of the whole block, at most
EVIDENCE_CHARS = 2400
#: how deep the walk goes into a row's objects and lists
EVIDENCE_DEPTH = 6
#: items of one list read, at most (a check list is summed up over them)
EVIDENCE_ITEMS = 50
#: values visited in one row, at most: a row of any size costs a bounded walk
EVIDENCE_VISITS = 5000


_WORD = re.compile(r"[a-z0-9]+")


def _words(key: str) -> frozenset[str]:
    return frozenset(_WORD.findall(key.lower()))


# the block's order: what each line is
_ERROR, _PAIR, _CHECKS, _SCALARS, _JUDGE, _TEST, _STATE = range(7)

#: the row's trajectory and its verifier output proper (top-level keys: the output lookup reads
#: those, docs/semantics.md "Verifier output lookup"), left out
_TRAJECTORY = frozenset({"response", "responses_create_params", "output", "reward", *EMBEDDED_OUTPUT_FIELDS})
#: words of a key that leave its value out: ids and names, times, tokens and cost, the prompt,
#: configuration and places, and the masking flag (the gate's own input, not the verifier's word)
_LEFT_OUT = _words(
    "id ids uuid index name names checksum hash sha ref type "
    "time times at sec secs seconds ms msec duration timestamp date elapsed latency created "
    "token tokens usage cost billing "
    "prompt question context input messages instructions problem statement query system text "
    "config kwargs url uri path dir file host port version "
    "mask"
)
_ERROR_WORDS = _words("error errors failure failures exception exceptions")
_TEST_WORDS = _words("stderr stdout traceback stacktrace log logs compiler test tests details")
_JUDGE_WORDS = _words(
    "judge rationale explanation reasoning critique feedback justification judgment judgement comment"
)
_EXPECTED_WORDS = _words("expected target ground truth gold reference")
_GOT_WORDS = _words("extracted predicted prediction parsed generation generated got actual model")
_VERDICT_WORDS = _words(
    "verdict label status result outcome resolved passed pass correct match grade decision score valid"
)
_STATE_WORDS = _words("info terminated truncated done finished naturally turns steps episode")
#: the words of a key that holds a check's result, and of one that holds what a check requires instead
_RESULT_WORDS = _words("verdict result passed pass status valid satisfied met correct success outcome ok followed")
_REQUIRED_WORDS = _words("criteria criterion required requirement")
_NOT_RESULT = _REQUIRED_WORDS | {"expected"}
#: what an answer field's other words may be, shown alone (`extracted_answer`, `ground_truth`)
_ANSWER_WORDS = _words("answer answers output solution value")
_PASS = _words("yes pass passed true correct met satisfied ok success")
_FAIL = _words("no fail failed false incorrect unsatisfied failure") | {"not met", "not satisfied", "not passed"}
#: a line of a traceback that names the exception raised
_EXCEPTION_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:Error|Exception|Failure|Failed|Interrupt|Exit)\b")


def _shown(value: Any) -> str:
    """A scalar as the block shows it: JSON's words for booleans and null, a float in 6 digits, a string quoted."""
    if isinstance(value, float):
        text = format(value, ".6g")
        return text if any(char in text for char in ".ena") else f"{text}.0"
    if isinstance(value, int) or value is None:  # a bool is an int
        return json.dumps(value)
    return json.dumps(_one_line(str(value)), ensure_ascii=False)


def _answer(value: Any) -> str:
    """An answer as the block shows it: a multi-line one (a model's whole reasoning, as reasoning_gym's
    `extracted_answer` holds it; a program's output) by its last exception line, else by its last
    lines, where it concludes."""
    if isinstance(value, str) and "\n" in value.strip():
        exception = _exception_or_tail(value)
        value = exception if _EXCEPTION_LINE.match(exception) else _last_lines(value)
    return _shown(value)


def _passed(value: Any) -> Optional[bool]:
    """A check's result: a boolean, or a verdict word (`yes`, `PASS`, `not met`); None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        words = " ".join(_WORD.findall(value.lower()))
        if words in _PASS:
            return True
        if words in _FAIL:
            return False
    return None


def _exception_or_tail(text: str) -> str:
    """A test output's last exception line (a traceback's), else its last non-blank line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in reversed(lines) if _EXCEPTION_LINE.match(line)), lines[-1] if lines else "")


def _last_lines(text: str, count: int = 2, chars: int = EVIDENCE_LINE_CHARS // 2) -> str:
    """A judge's last ``count`` lines on one line, their last ``chars`` characters (where its conclusion is)."""
    text = " / ".join(line.strip() for line in text.splitlines()[-count:] if line.strip())
    return text if len(text) <= chars else f"[... cut] {text[-chars:]}"


def _checks_line(where: str, results: list[bool], labels: Optional[list[str]], total: Optional[int] = None) -> str:
    """`<where>: 2/3 passed; first failing: <its label>` over the first :data:`EVIDENCE_ITEMS` results."""
    total = len(results) if total is None else total
    results = results[:EVIDENCE_ITEMS]
    text = f"{where}: {sum(results)}/{len(results)} passed"
    if total > len(results):
        text += f" (the first {len(results)} of {total})"
    failing = next((index for index, result in enumerate(results) if not result), None)
    if failing is not None:
        text += f"; first failing: {_one_line(labels[failing] if labels else f'#{failing + 1}')}"
    return text


class _Walk:
    """One row's evidence, gathered by rank (:data:`_ERROR` ... :data:`_STATE`)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []
        self.scalars: dict[int, list[str]] = {_SCALARS: [], _STATE: []}
        self.visits = 0

    def lines(self, limit: int) -> list[str]:
        found = list(self.found)
        for rank, items in self.scalars.items():
            line = ""
            for item in items:
                if line and len(line) + len(item) + 2 > EVIDENCE_LINE_CHARS:
                    found.append((rank, line))
                    line = ""
                line = f"{line}, {item}" if line else item
            if line:
                found.append((rank, line))
        found.sort(key=lambda entry: entry[0])
        kept: list[str] = []
        for index, (_, text) in enumerate(found):
            text = cut_line(text, EVIDENCE_LINE_CHARS)
            left = len(found) - index
            if (len(kept) == limit - 1 and left > 1) or sum(map(len, kept)) + len(text) > EVIDENCE_CHARS:
                kept.append(f"[... {left} more line(s) of evidence cut]")
                break
            kept.append(text)
        return kept

    def value(self, value: Any, path: str, words: frozenset[str], depth: int, own: frozenset[str]) -> None:
        self.visits += 1
        if self.visits > EVIDENCE_VISITS or depth > EVIDENCE_DEPTH:
            return
        if isinstance(value, dict):
            self.object(value, path, words, depth)
        elif isinstance(value, list):
            self.items(value, path, words, depth, own)
        else:
            self.scalar(value, path, words, own)

    def object(self, row: dict[str, Any], path: str, words: frozenset[str], depth: int) -> None:
        keys = {key: _words(key) for key in row if isinstance(key, str)}
        used = self.check_lists(row, path) | self.pair(row, path, keys)
        for key, own in keys.items():
            skipped = key in used or key == "responses_create_params" or (not path and key in _TRAJECTORY)
            if skipped or (own & _LEFT_OUT and not own & _ERROR_WORDS):
                continue
            where = f"{path}.{key}" if path else key
            value = row[key]
            if key == "response" and isinstance(value, dict):  # a judge's own Responses object
                if message := last_assistant_message({"response": value}):
                    self.found.append((_JUDGE, f"{where}: {_last_lines(chr(10).join(message))}"))
                continue
            self.value(value, where, words | own, depth + 1, own)

    def check_lists(self, row: dict[str, Any], path: str) -> set[str]:
        """Lists of check results beside the list naming the checks (`follow_instruction_list` and
        `instruction_id_list`), summed up on one line each."""
        used: set[str] = set()
        texts = {
            key: items
            for key, items in row.items()
            if isinstance(items, list) and all(isinstance(item, str) for item in items[:EVIDENCE_ITEMS])
        }
        for key, value in row.items():
            if key in used or not isinstance(value, list) or not value or not all(isinstance(v, bool) for v in value):
                continue
            names = next((other for other, items in texts.items() if other != key and len(items) == len(value)), None)
            used.update((key, names) if names is not None else (key,))
            where = f"{path}.{key}" if path else key
            self.found.append((_CHECKS, _checks_line(where, value, row[names] if names is not None else None)))
        return used

    def pair(self, row: dict[str, Any], path: str, keys: dict[str, frozenset[str]]) -> set[str]:
        """An expected answer and the one the verifier got, on one line."""

        def first(wanted: frozenset[str]) -> Optional[str]:
            scalars = (key for key, own in keys.items() if own & wanted and not own & _LEFT_OUT)
            return next((key for key in scalars if isinstance(row[key], (str, int, float))), None)

        expected, got = first(_EXPECTED_WORDS), first(_GOT_WORDS)
        if expected is None or got is None or expected == got:
            return set()
        rest = keys[expected] - _EXPECTED_WORDS
        if rest and not rest & (keys[got] - _GOT_WORDS):  # `target_language` is no answer to `generation`
            return set()
        prefix = f"{path}." if path else ""
        self.found.append((_PAIR, f"{prefix}{expected}={_answer(row[expected])} vs {prefix}{got}={_answer(row[got])}"))
        return {expected, got}

    def items(self, items: list[Any], path: str, words: frozenset[str], depth: int, own: frozenset[str]) -> None:
        """A list: summed up when its items are checks with a result each, else each item walked."""
        shown = items[:EVIDENCE_ITEMS]
        if shown and all(isinstance(item, dict) for item in shown) and self.checks(shown, path, len(items)):
            return
        for index, item in enumerate(shown):
            self.value(item, f"{path}[{index}]", words, depth + 1, own)

    def checks(self, items: list[dict[str, Any]], path: str, total: int) -> bool:
        """`rubric_evaluations: 2/3 passed; first failing: C2 - <why>` for checks with a result each."""
        answered = [key for key in items[0] if isinstance(key, str) and _passed(items[0][key]) is not None]
        result_key = next(
            (key for key in answered if _words(key) & _RESULT_WORDS and not _words(key) & _NOT_RESULT), None
        )
        if result_key is None or any(_passed(item.get(result_key)) is None for item in items):
            return False

        def label(index: int, item: dict[str, Any]) -> str:
            named = [key for key in item if isinstance(key, str) and _words(key) & {"id", "name", "criterion"}]
            name = str(item[named[0]]) if named else f"#{index + 1}"
            why = [text for key, text in item.items() if key not in (result_key, *named) and isinstance(text, str)]
            return next((f"{name} - {text}" for text in why if text.strip()), name)

        results = [bool(_passed(item[result_key])) for item in items]
        labels = [label(index, item) for index, item in enumerate(items)]
        self.found.append((_CHECKS, _checks_line(path, results, labels, total)))
        return True

    def scalar(self, value: Any, path: str, words: frozenset[str], own: frozenset[str]) -> None:
        """A value by its own key's words first (`verdict_label` in `judge_evaluations` is a verdict),
        then by the words of the keys above it."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return
        if words & _ERROR_WORDS:
            if value is not False and value != 0:
                shown = _exception_or_tail(value) if isinstance(value, str) else _shown(value)
                self.found.append((_ERROR, f"{path}: {shown}"))
            return
        state = _STATE if words & _STATE_WORDS else _SCALARS
        if not isinstance(value, str):
            if isinstance(value, (bool, int, float)):
                self.scalars[state].append(f"{path}={_shown(value)}")
            return
        short = "\n" not in value.strip()
        answer = own & (_EXPECTED_WORDS | _GOT_WORDS) and own - _EXPECTED_WORDS - _GOT_WORDS <= _ANSWER_WORDS
        verdict = own & (_VERDICT_WORDS | _STATE_WORDS) and not own & _REQUIRED_WORDS
        if (short and verdict) or answer:
            self.scalars[state].append(f"{path}={_answer(value)}")
        elif words & _TEST_WORDS:
            self.found.append((_TEST, f"{path}: {_exception_or_tail(value)}"))
        elif words & _JUDGE_WORDS:
            self.found.append((_JUDGE, f"{path}: {_last_lines(value)}"))
        elif short and words & (_VERDICT_WORDS | _STATE_WORDS) and not words & _REQUIRED_WORDS:
            self.scalars[state].append(f"{path}={_shown(value)}")


def row_evidence(row: dict[str, Any], lines: int = EVIDENCE_LINES) -> list[str]:
    """What a row's verifier wrote into it besides the reward, at most ``lines`` lines, in the order
    and with the omissions docs/semantics.md gives ("A flip's evidence"); never opens a path."""
    walk = _Walk()
    walk.object(row, "", frozenset(), 0)
    return walk.lines(lines) if lines > 0 else []

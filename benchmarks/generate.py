#!/usr/bin/env python3
"""Generate a realistic, deterministic old/new pair of rollout files for benchmarking the gate.

Old side (legacy TB 2.1 server): ``task_name: "terminal-bench/<task>"``, embedded ``test_output``.
New side (Harbor path): ``_ng_task_id: {"taskset": "terminal-bench-2-1", "task_id": <task>}``,
``_ng_task_index`` / ``_ng_rollout_index`` / ``_ng_attempt_index``, ``mask_sample``,
``failure_kind``, ``failure_reason``, a relative ``verifier_logs_dir`` ("verifier/<session>"), a
``rollouts_failures.jsonl`` sidecar, and ``test-stdout.txt`` files on disk for the rows of flipped
tasks only (so disk use stays bounded whatever the row count).

Every row carries a full ``responses_create_params`` / ``response`` trajectory whose
``response.output`` (function_call / function_call_output / message items) pads it to the
requested size (each template is drawn within +-8% of it). Rows are written in completion order
(shuffled within windows of 256, like a concurrent collector), compact and raw UTF-8 like orjson.

Speed: a handful of row templates is serialized once; each row is a ``b"".join`` of the template's
literal pieces and ~15 small per-row values, so writing is bound by the disk, not by ``json``.

Layout written under OUT::

    OUT/old/rollouts.jsonl
    OUT/new/rollouts.jsonl
    OUT/new/rollouts_failures.jsonl
    OUT/new/verifier/<session>/test-stdout.txt, reward.txt   (rows of flipped tasks only)
    OUT/manifest.json   parameters, sizes, and the categories the gate should report

Usage::

    python benchmarks/generate.py OUT --tasks 500 --repeats 5 --row-bytes 40000 --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 5  # 5: the expected categories leave lost rollouts out of their side, as the gate does
TASKSET = "terminal-bench-2-1"
WINDOW = 256  # completion-order shuffle window (rows in flight at once)
N_TEMPLATES = 8
BUFFER = 8 * 1024 * 1024

MODEL = "nvidia/nvidia/nemotron-3-super-v3"
_PH = re.compile(r'"@@([A-Za-z0-9_]+)@@"')

WORDS_A = (
    "regex",
    "fix",
    "build",
    "sqlite",
    "git",
    "crack",
    "train",
    "path",
    "reshard",
    "cobol",
    "modernize",
    "extract",
    "compile",
    "tune",
    "schedule",
    "qemu",
    "polyglot",
    "mteb",
    "log",
    "count",
    "merge",
    "decode",
    "bench",
    "sanitize",
    "chess",
    "openssl",
    "raman",
    "kv",
)
WORDS_B = (
    "log",
    "git",
    "cython",
    "wal",
    "7z",
    "fasttext",
    "tracing",
    "c4-data",
    "modernizer",
    "scientific-stack",
    "elf",
    "pmars",
    "startup",
    "retrieve",
    "dna",
    "leaderboard",
    "gcode",
    "ctf",
    "cache",
    "server",
    "inference",
    "puzzle",
    "fit",
    "hash",
    "sandbox",
    "alpine",
)

# ---------------------------------------------------------------------------------------------
# Realistic text for trajectory items and verifier output


def _pip_lines(rng: random.Random) -> Callable[[], str]:
    pkgs = ("numpy", "pandas", "scipy", "requests", "pytest", "regex", "torch", "tqdm", "pyyaml")

    def line() -> str:
        p = rng.choice(pkgs)
        v = f"{rng.randint(0, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
        return rng.choice(
            (
                f"Collecting {p}=={v}",
                f"  Downloading {p}-{v}-cp311-cp311-manylinux_2_17_x86_64.whl ({rng.randint(1, 900) / 10} MB)",
                f"Requirement already satisfied: {p} in /usr/local/lib/python3.11/site-packages ({v})",
                f"Successfully installed {p}-{v}",
            )
        )

    return line


def _ls_lines(rng: random.Random) -> Callable[[], str]:
    names = (
        "src",
        "tests",
        "README.md",
        "main.py",
        "data.csv",
        "config.yaml",
        "Makefile",
        "build",
        "run.sh",
        "model.bin",
        "notes.txt",
        "requirements.txt",
        "setup.py",
        "lib",
        "out.log",
    )

    def line() -> str:
        d = rng.random() < 0.3
        return (
            f"{'d' if d else '-'}rw{'x' if d else '-'}r-{'x' if d else '-'}r-{'x' if d else '-'} "
            f"{rng.randint(1, 9)} root root {rng.randint(0, 99999):>6} Nov {rng.randint(1, 30):>2} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {rng.choice(names)}"
        )

    return line


def _log_lines(rng: random.Random) -> Callable[[], str]:
    def line() -> str:
        return rng.choice(
            (
                f"2026-08-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
                f"{rng.randint(0, 59):02d} INFO worker-{rng.randint(0, 15)} processed batch {rng.randint(0, 9999)}"
                f" in {rng.random() * 3:.3f}s (loss={rng.random():.4f})",
                f"gcc -O2 -Wall -c src/mod_{rng.randint(0, 99)}.c -o build/mod_{rng.randint(0, 99)}.o",
                f"warning: unused variable 'tmp{rng.randint(0, 9)}' [-Wunused-variable]",
                f"[{rng.randint(1, 100):>3}%] Built target obj_{rng.randint(0, 300)}",
                f"error: cannot find symbol at line {rng.randint(1, 2000)}: expected ';' before '}}' token",
                f"{rng.randint(100, 999)}/{rng.randint(1000, 2000)} tests passed — café ✓",
            )
        )

    return line


def _text_block(rng: random.Random, size: int) -> str:
    gen = rng.choice((_pip_lines, _ls_lines, _log_lines))(rng)
    out: list[str] = []
    n = 0
    while n < size:
        s = gen()
        out.append(s)
        n += len(s) + 1
    return "\n".join(out)[:size]


_COMMANDS = (
    "cd /app && ls -la",
    "cat /app/README.md | head -50",
    "pip install -r requirements.txt 2>&1 | tail -20",
    "python3 -m pytest -x -q tests/ 2>&1 | tail -30",
    "grep -rn 'TODO' src/ | head -40",
    "make -j4 2>&1 | tail -25",
    "git log --oneline | head -20 && git status",
    "cat > /app/solution.py << 'EOF'\nimport re\nimport sys\n\n\ndef main() -> None:\n    pattern = re.compile(r'(\\d{4})-(\\d{2})-(\\d{2})')\n    for line in sys.stdin:\n        if pattern.search(line):\n            print(line.rstrip())\n\n\nif __name__ == '__main__':\n    main()\nEOF",
    "sed -i 's/timeout=30/timeout=300/' /app/config.yaml && cat /app/config.yaml",
    "find / -name '*.so' -path '*python3*' 2>/dev/null | head -20",
)

_MESSAGES = (
    "Let me look at the project layout first to understand what needs to change.",
    "The tests fail because the regex does not anchor on word boundaries. I'll fix the pattern and rerun.",
    "The build succeeded. Now I need to verify the output matches the expected format described in the task.",
    "I've installed the dependencies; next I'll run the test-suite to see which cases still fail.",
    "The migration is done: the old API calls were replaced and every test passes locally.\u2028Summary follows.",
    "Checking the logs for the worker crash — the traceback points at the config loader (naïve parsing).",
)


def _output_item(rng: random.Random, kind: str, size_hint: int) -> dict[str, Any]:
    cid = uuid.UUID(int=rng.getrandbits(128)).hex[:24]
    if kind == "function_call":
        return {
            "arguments": json.dumps({"command": rng.choice(_COMMANDS)}),
            "call_id": f"call_{cid}",
            "name": "bash",
            "type": "function_call",
            "id": f"fc_{cid}",
            "status": "completed",
        }
    if kind == "function_call_output":
        return {"call_id": f"call_{cid}", "output": _text_block(rng, size_hint), "type": "function_call_output"}
    return {
        "id": f"msg_{cid}",
        "content": [{"annotations": [], "text": rng.choice(_MESSAGES), "type": "output_text", "logprobs": []}],
        "role": "assistant",
        "status": "completed",
        "type": "message",
    }


def _test_stdout(rng: random.Random, task: str, passed: bool, size: int) -> str:
    """A test.sh stdout in the shape of Terminal-Bench's (apt/uv noise, then a pytest run)."""
    if size < 600:  # tiny rows: the pytest summary alone
        if passed:
            return f"../tests/test_outputs.py ..  [100%]\n===== 2 passed in {rng.random() * 9:.2f}s =====\n"
        return (
            f"../tests/test_outputs.py F.  [100%]\nFAILED ../tests/test_outputs.py::test_layout - "
            f"AssertionError: {task}: mismatch\n===== 1 failed, 1 passed in {rng.random() * 9:.2f}s =====\n"
        )
    head = (
        "Hit:1 http://deb.debian.org/debian bookworm InRelease\n"
        "debconf: delaying package configuration, since apt-utils is not installed\n"
        "Reading package lists...\nBuilding dependency tree...\n"
        "downloading uv 0.9.5 x86_64-unknown-linux-gnu\neverything's installed!\n"
    )
    names = [
        f"test_{w}"
        for w in ("layout", "output_format", "edge_cases", "performance", "regression", "about_file", "cleanup")
    ][: rng.randint(2, 6)]
    body = (
        "============================= test session starts ==============================\n"
        "platform linux -- Python 3.13.7, pytest-8.4.1, pluggy-1.6.0\nrootdir: /tests\n"
        f"collected {len(names)} items\n\n"
    )
    if passed:
        body += f"../tests/test_outputs.py {'.' * len(names)}{' ' * 30}[100%]\n\n"
        tail = "".join(f"PASSED ../tests/test_outputs.py::{n}\n" for n in names)
        tail += f"============================== {len(names)} passed in {rng.random() * 9:.2f}s ==============================\n"
    else:
        body += f"../tests/test_outputs.py F{'.' * (len(names) - 1)}{' ' * 30}[100%]\n\n"
        body += (
            "=================================== FAILURES ===================================\n"
            f"________________________________ {names[0]} ________________________________\n\n"
            f"    def {names[0]}():\n>       assert result == expected, f'{task}: mismatch'\n"
            f"E       AssertionError: {task}: mismatch\nE       assert 'got' == 'want'\n\n"
            "/tests/test_outputs.py:42: AssertionError\n"
        )
        tail = f"FAILED ../tests/test_outputs.py::{names[0]} - AssertionError: {task}: mismatch\n"
        tail += "".join(f"PASSED ../tests/test_outputs.py::{n}\n" for n in names[1:])
        tail += (
            f"========================= 1 failed, {len(names) - 1} passed in {rng.random() * 9:.2f}s "
            "=========================\n"
        )
    filler_size = max(0, size - len(head) - len(body) - len(tail))
    filler = _text_block(rng, filler_size) + "\n" if filler_size > 40 else ""
    return (
        head
        + filler
        + body
        + "=========================== short test summary info ============================\n"
        + tail
    )


# ---------------------------------------------------------------------------------------------
# Templates


class Template:
    """A serialized row with ``"@@name@@"`` holes; ``render`` joins bytes, no json per row."""

    def __init__(self, obj: dict[str, Any]) -> None:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        pieces = _PH.split(text)
        self.literals = [p.encode("utf-8") for p in pieces[0::2]]
        self.names = tuple(pieces[1::2])
        self.fixed = sum(len(p) for p in self.literals)

    def render(self, values: dict[str, bytes]) -> bytes:
        lits = self.literals
        out = [lits[0]]
        for i, name in enumerate(self.names, 1):
            out.append(values[name])
            out.append(lits[i])
        return b"".join(out)


def _ph(name: str) -> str:
    return f"@@{name}@@"


def _skeleton(side: str, lean: bool) -> dict[str, Any]:
    instruction = (
        "Write a regex expression that matches dates in the format YYYY-MM-DD appearing in lines "
        "that contain an IPv4 address in /app/access.log, and save it to /app/regex.txt."
    )
    metadata = (
        {
            "terminus2_completed": _ph("t2_completed"),
            "terminus2_error_type": _ph("t2_error_type"),
            "terminus2_n_episodes": _ph("t2_episodes"),
        }
        if side == "new"
        else {}
    )
    rcp: dict[str, Any]
    response: dict[str, Any]
    if lean:  # ~1 KB rows: the smallest trajectory that still has every field the gate reads
        rcp = {"input": [{"content": instruction[:40], "role": "user"}], "model": MODEL}
        response = {
            "id": _ph("resp_id"),
            "created_at": _ph("created_at"),
            "metadata": metadata,
            "model": MODEL,
            "object": "response",
            "output": [],
            "status": "completed",
            "usage": {"input_tokens": _ph("in_tok"), "output_tokens": _ph("out_tok"), "total_tokens": _ph("tot_tok")},
        }
    else:
        rcp = {
            "input": [{"content": instruction, "role": "user", "type": "message"}],
            "model": MODEL,
            "parallel_tool_calls": False,
            "temperature": 0.6,
            "top_p": 0.95,
            "tool_choice": "auto",
            "tools": [
                {
                    "type": "function",
                    "name": "bash",
                    "description": "Run a shell command in the task container and return its output.",
                    "parameters": {
                        "type": "object",
                        "properties": {"command": {"type": "string"}},
                        "required": ["command"],
                    },
                    "strict": False,
                }
            ],
            "max_output_tokens": 16384,
        }
        response = {
            "id": _ph("resp_id"),
            "created_at": _ph("created_at"),
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": metadata,
            "model": MODEL,
            "object": "response",
            "output": [],
            "parallel_tool_calls": False,
            "temperature": 0.6,
            "tool_choice": "auto",
            "tools": [],
            "top_p": 0.95,
            "status": "completed",
            "usage": {
                "input_tokens": _ph("in_tok"),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": _ph("out_tok"),
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": _ph("tot_tok"),
            },
        }
    row: dict[str, Any] = {"responses_create_params": rcp, "response": response, "reward": _ph("reward")}
    if side == "old":
        row.update(
            {
                "task_name": _ph("task_name"),
                "evaluation_completed": True,
                "test_output": _ph("test_output"),
                "_ng_task_index": _ph("task_index"),
                "_ng_rollout_index": _ph("rollout_index"),
                "agent_ref": {"type": "responses_api_agents", "name": "remote_agent"},
            }
        )
    else:
        row.update(
            {
                "mask_sample": _ph("mask_sample"),
                "failure_kind": _ph("failure_kind"),
                "failure_reason": _ph("failure_reason"),
                "verifier_logs_dir": _ph("logs_dir"),
                "verifier_return_code": _ph("return_code"),
                "_ng_task_id": {"taskset": TASKSET, "task_id": _ph("task_id")},
                "_ng_task_index": _ph("task_index"),
                "_ng_rollout_index": _ph("rollout_index"),
                "_ng_attempt_index": _ph("attempt_index"),
                "_ng_environment_server": f"harbor_{TASKSET}_environment",
                "_ng_result_type": "single_agent_turn",
                "task_source": "harbor_terminal_bench_2_1",
                "agent_ref": {"type": "responses_api_agents", "name": "terminus_2_sandboxed_agent"},
            }
        )
    return row


# Typical per-row value sizes, so that a template is sized for what will be put in its holes.
_TYPICAL = {
    "resp_id": 43,
    "created_at": 12,
    "t2_completed": 6,
    "t2_error_type": 2,
    "t2_episodes": 3,
    "in_tok": 5,
    "out_tok": 4,
    "tot_tok": 5,
    "reward": 3,
    "task_name": 40,
    "task_index": 4,
    "rollout_index": 1,
    "mask_sample": 5,
    "failure_kind": 4,
    "failure_reason": 4,
    "logs_dir": 47,
    "return_code": 1,
    "task_id": 25,
    "attempt_index": 1,
}


def build_template(side: str, rng: random.Random, target: int) -> tuple[Template, int]:
    """A template whose rendered rows come out near ``target`` bytes; returns (template, test_output size)."""
    test_output_size = min(2500, max(120, target // 16)) if side == "old" else 0
    lean = target < 2500
    row = _skeleton(side, lean)
    budget = target - Template(row).fixed - sum(_TYPICAL.get(n, 0) for n in Template(row).names) - test_output_size
    items: list[dict[str, Any]] = []
    kinds = ("function_call", "function_call_output", "message")
    turn = 0
    while budget > 0:
        kind = kinds[turn % 2] if rng.random() > 0.12 else "message"
        turn += 1
        hint = min(budget, rng.randint(300, 3500)) if kind == "function_call_output" else 0
        item = _output_item(rng, kind, hint)
        size = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()) + 1
        if size > budget:
            # Land on the target: a last function_call_output trimmed to the bytes left.
            if kind != "function_call_output":
                item = _output_item(rng, "function_call_output", 4000)
            text = item["output"]
            item["output"] = ""
            room = budget - len(json.dumps(item, separators=(",", ":")).encode()) - 1
            if room > 16:
                item["output"] = text.encode("utf-8")[:room].decode("utf-8", "ignore")
                items.append(item)
            break
        items.append(item)
        budget -= size
    row["response"]["output"] = items
    return Template(row), test_output_size


# ---------------------------------------------------------------------------------------------
# The pair


def task_names(n: int, rng: random.Random) -> list[str]:
    names = []
    for i in range(n):
        names.append(f"{rng.choice(WORDS_A)}-{rng.choice(WORDS_B)}-{i:05d}")
    return names


def _completion_order(n_tasks: int, repeats: int, present: bytearray, rng: random.Random):
    """(task, repeat) pairs of present tasks, shuffled within windows like a concurrent collector."""
    window: list[tuple[int, int]] = []
    for t in range(n_tasks):
        if not present[t]:
            continue
        for r in range(repeats):
            window.append((t, r))
            if len(window) >= WINDOW:
                rng.shuffle(window)
                yield from window
                window = []
    rng.shuffle(window)
    yield from window


def _session(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def generate(
    out: Path,
    tasks: int,
    repeats: int,
    row_bytes: int,
    flip_rate: float = 0.02,
    mask_rate: float = 0.01,
    missing_rate: float = 0.005,
    seed: int = 0,
    agent_error_share: float = 0.1,
    max_logs: int = 20000,
    quiet: bool = False,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    old_dir, new_dir = out / "old", out / "new"
    for d in (old_dir, new_dir):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()

    names = task_names(tasks, rng)
    # Per task: kind 0 identical, 1 flip (new loses), 2 flip (new wins), + missing flags.
    kind = bytearray(tasks)
    old_present = bytearray(b"\x01") * tasks
    new_present = bytearray(b"\x01") * tasks
    agent_err = bytearray(tasks)
    for t in range(tasks):
        u = rng.random()
        if u < missing_rate:
            (new_present if rng.random() < 0.7 else old_present)[t] = 0
        elif u < missing_rate + flip_rate:
            kind[t] = 1 if rng.random() < 0.7 else 2
            # The agent error sits on the losing new-side rows, so only new-loses flips carry one.
            agent_err[t] = rng.random() < agent_error_share and kind[t] == 1
    # Per (task, repeat): reward bit shared by both sides for identical tasks; new-side mask state:
    # 0 none, 1 masked in the main file, 2 failed (sidecar records only), 3 retried (superseded sidecar line).
    n_rows = tasks * repeats
    reward_bit = bytearray(rng.random() < 0.55 for _ in range(n_rows))
    new_state = bytearray(n_rows)
    for i in range(n_rows):
        u = rng.random()
        if u < mask_rate / 2:
            new_state[i] = 1
        elif u < mask_rate:
            new_state[i] = 2
        elif u < mask_rate + 0.02:
            new_state[i] = 3

    def rewards(t: int, r: int) -> tuple[int, int]:
        if kind[t] == 1:
            return 1, 0
        if kind[t] == 2:
            return 0, 1
        b = reward_bit[t * repeats + r]
        return b, b

    # Templates and pre-encoded per-row variants.
    old_templates = [
        build_template("old", random.Random(seed * 7919 + k), int(row_bytes * rng.uniform(0.92, 1.08)))
        for k in range(N_TEMPLATES)
    ]
    new_templates = [
        build_template("new", random.Random(seed * 7927 + k), int(row_bytes * rng.uniform(0.92, 1.08)))
        for k in range(N_TEMPLATES)
    ]
    to_variants = {}
    for k, (_, size) in enumerate(old_templates):
        vr = random.Random(seed * 31 + k)
        to_variants[k] = (
            json.dumps(_test_stdout(vr, "task", False, size), ensure_ascii=False).encode(),
            json.dumps(_test_stdout(vr, "task", True, size), ensure_ascii=False).encode(),
        )
    timeout_reason = json.dumps(
        "verifier timed out after 900s (exit 137); last output:\n"
        + _test_stdout(random.Random(seed), "task", False, 600)[-min(600, row_bytes // 16) :],
        ensure_ascii=False,
    ).encode()
    mask_kinds = (b'"provider_unavailable"', b'"verifier_error"')
    mask_reasons = (
        json.dumps("Daytona sandbox create failed: 503 Service Unavailable (provider capacity)").encode(),
        json.dumps("verifier exec failed: container exited before test.sh ran (OOMKilled)").encode(),
    )
    B = {0: b"0.0", 1: b"1.0"}

    counts = {"old_rows": 0, "new_rows": 0, "sidecar_lines": 0, "log_files": 0}
    row_sizes: list[int] = []
    vrng = random.Random(seed + 1)
    base_time = 1785600000

    # ---- old side
    with open(old_dir / "rollouts.jsonl", "wb", buffering=BUFFER) as fh:
        for t, r in _completion_order(tasks, repeats, old_present, random.Random(seed + 2)):
            k = (t * 31 + r) % N_TEMPLATES
            tmpl = old_templates[k][0]
            ro, _ = rewards(t, r)
            in_tok = 20000 + (t * 7 + r * 13) % 30000
            out_tok = 1000 + (t * 11 + r) % 4000
            line = tmpl.render(
                {
                    "resp_id": b'"resp_' + _session(vrng).encode() + b'"',
                    "created_at": str(float(base_time + t * 60 + r)).encode(),
                    "in_tok": str(in_tok).encode(),
                    "out_tok": str(out_tok).encode(),
                    "tot_tok": str(in_tok + out_tok).encode(),
                    "reward": B[ro],
                    "task_name": b'"terminal-bench/' + names[t].encode() + b'"',
                    "test_output": to_variants[k][ro],
                    "task_index": str(t).encode(),
                    "rollout_index": str(r).encode(),
                }
            )
            fh.write(line)
            fh.write(b"\n")
            counts["old_rows"] += 1
            if len(row_sizes) < 2000:
                row_sizes.append(len(line) + 1)

    # ---- new side (+ sidecar, + logs for flipped tasks)
    logs_budget = max_logs
    verifier_root = new_dir / "verifier"
    with (
        open(new_dir / "rollouts.jsonl", "wb", buffering=BUFFER) as fh,
        open(new_dir / "rollouts_failures.jsonl", "wb") as side,
    ):
        for t, r in _completion_order(tasks, repeats, new_present, random.Random(seed + 3)):
            i = t * repeats + r
            state = new_state[i]
            tid = json.dumps(names[t]).encode()
            common = b'{"_ng_task_id":{"taskset":"' + TASKSET.encode() + b'","task_id":' + tid + b"}"
            tail = b',"_ng_task_index":' + str(t).encode() + b',"_ng_rollout_index":' + str(r).encode()
            if state == 2:
                # The rollout never produced a row: its attempts are in the sidecar (last one terminal).
                attempts = 1 + (t + r) % 3
                for a in range(attempts):
                    side.write(
                        common
                        + b',"_ng_failure_class":"environment_server_failed","_ng_failure_terminal":'
                        + (b"true" if a == attempts - 1 else b"false")
                        + b',"_ng_failure_message":'
                        + mask_reasons[a % 2]
                        + b',"_ng_failure_stage":"environment_setup","failure_kind":'
                        + mask_kinds[a % 2]
                        + tail
                        + b',"_ng_attempt_index":'
                        + str(a).encode()
                        + b',"_ng_environment_server":"harbor_'
                        + TASKSET.encode()
                        + b'_environment","task_source":"harbor_terminal_bench_2_1"}\n'
                    )
                    counts["sidecar_lines"] += 1
                continue
            if state == 3:
                side.write(
                    common + b',"_ng_failure_class":"environment_server_failed","_ng_failure_terminal":false,'
                    b'"_ng_failure_message":"episode request failed: ReadTimeout after 1800.0s",'
                    b'"_ng_failure_stage":"agent_run"' + tail + b',"_ng_attempt_index":0}\n'
                )
                counts["sidecar_lines"] += 1
            k = (t * 17 + r) % N_TEMPLATES
            tmpl = new_templates[k][0]
            _, rn = rewards(t, r)
            session = _session(vrng)
            masked = state == 1
            in_tok = 20000 + (t * 5 + r * 17) % 30000
            out_tok = 1000 + (t * 3 + r) % 4000
            if masked:
                fk, reason, rc, rw = mask_kinds[i % 2], mask_reasons[i % 2], b"null", b"0.0"
            elif rn == 0 and kind[t] == 0 and i % 5 == 0:
                fk, reason, rc, rw = b'"harbor:verifier_timeout"', timeout_reason, b"null", b"0.0"
            else:
                fk, reason, rc, rw = b"null", b"null", (b"0" if rn else b"1"), B[rn]
            err = agent_err[t] and rn == 0
            line = tmpl.render(
                {
                    "resp_id": b'"resp_' + session.encode() + b'"',
                    "created_at": str(float(base_time + 86400 + t * 60 + r)).encode(),
                    "t2_completed": b'"false"' if err else b'"true"',
                    "t2_error_type": b'"TimeoutError"' if err else b'""',
                    "t2_episodes": b'"' + str(3 + (t + r) % 40).encode() + b'"',
                    "in_tok": str(in_tok).encode(),
                    "out_tok": str(out_tok).encode(),
                    "tot_tok": str(in_tok + out_tok).encode(),
                    "reward": rw,
                    "mask_sample": b"true" if masked else b"false",
                    "failure_kind": fk,
                    "failure_reason": reason,
                    "logs_dir": b'"verifier/' + session.encode() + b'"',
                    "return_code": rc,
                    "task_id": tid,
                    "task_index": str(t).encode(),
                    "rollout_index": str(r).encode(),
                    "attempt_index": b"1" if state == 3 else b"0",
                }
            )
            fh.write(line)
            fh.write(b"\n")
            counts["new_rows"] += 1
            if len(row_sizes) < 4000:
                row_sizes.append(len(line) + 1)
            if kind[t] and logs_budget > 0 and not masked:
                d = verifier_root / session
                d.mkdir(parents=True)
                (d / "test-stdout.txt").write_text(
                    _test_stdout(random.Random(i), names[t], bool(rn), 3000), encoding="utf-8"
                )
                (d / "reward.txt").write_text(f"{rn}\n")
                logs_budget -= 1
                counts["log_files"] += 1

    # ---- what the gate should find (docs/semantics.md, "Categories")
    cats = {"identical": 0, "flipped": 0, "flipped_agent_error": 0, "masked": 0, "missing": 0}
    for t in range(tasks):
        if not (old_present[t] and new_present[t]):
            cats["missing"] += 1
            continue
        # a lost rollout (masked, or failed with only sidecar records) is left out of its side's
        # mean; the side is masked only when fewer of its rows scored than were lost
        scored = [r for r in range(repeats) if new_state[t * repeats + r] not in (1, 2)]
        if not scored or len(scored) < repeats - len(scored):
            cats["masked"] += 1
            continue
        old_mean = sum(rewards(t, r)[0] for r in range(repeats)) / repeats
        new_mean = sum(rewards(t, r)[1] for r in scored) / len(scored)
        if abs(old_mean - new_mean) <= 1e-9:
            cats["identical"] += 1
        elif agent_err[t]:
            cats["flipped_agent_error"] += 1
        else:
            cats["flipped"] += 1

    sizes = {
        p: os.path.getsize(out / p) for p in ("old/rollouts.jsonl", "new/rollouts.jsonl", "new/rollouts_failures.jsonl")
    }
    elapsed = time.perf_counter() - t0
    total = sum(sizes.values())
    row_sizes.sort()
    manifest = {
        "params": dict(
            tasks=tasks,
            repeats=repeats,
            row_bytes=row_bytes,
            flip_rate=flip_rate,
            mask_rate=mask_rate,
            missing_rate=missing_rate,
            seed=seed,
            agent_error_share=agent_error_share,
            max_logs=max_logs,
            version=GENERATOR_VERSION,
        ),
        "counts": counts,
        "sizes": sizes,
        "expected": cats,
        "tasks_joined": sum(cats.values()),
        "row_bytes_sample": {"min": row_sizes[0], "median": row_sizes[len(row_sizes) // 2], "max": row_sizes[-1]},
        "generate_seconds": round(elapsed, 3),
        "generate_mb_per_s": round(total / 1e6 / max(elapsed, 1e-9), 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if not quiet:
        print(
            f"wrote {total / 1e6:.1f} MB in {elapsed:.2f}s ({manifest['generate_mb_per_s']} MB/s) to {out}",
            file=sys.stderr,
        )
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="output directory (old/ and new/ are created in it)")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--row-bytes", type=int, default=40_000, help="approximate bytes per row (+-10%%)")
    ap.add_argument("--flip-rate", type=float, default=0.02, help="share of tasks whose reward flips")
    ap.add_argument(
        "--mask-rate",
        type=float,
        default=0.01,
        help="share of new-side rollouts masked (half as mask_sample rows, half as standing sidecar failures)",
    )
    ap.add_argument("--missing-rate", type=float, default=0.005, help="share of tasks on one side only")
    ap.add_argument(
        "--agent-error-share",
        type=float,
        default=0.1,
        help="share of new-loses flips whose new side reports an agent error",
    )
    ap.add_argument("--max-logs", type=int, default=20000, help="cap on test-stdout.txt files written")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    m = generate(
        a.out,
        a.tasks,
        a.repeats,
        a.row_bytes,
        a.flip_rate,
        a.mask_rate,
        a.missing_rate,
        a.seed,
        a.agent_error_share,
        a.max_logs,
    )
    print(json.dumps(m, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Regenerate the bundled example pair under examples/ (deterministic, stdlib only).

    python examples/make_examples.py

Writes:
    old/rollouts.jsonl                      TB 2.1 legacy resources server rows
    new/rollouts.jsonl                      Harbor-path rows
    new/rollouts_failures.jsonl             the failures sidecar of the Harbor-path run
    new/verifier/<session-id>/test-stdout.txt (+ reward.txt)
                                            verifier logs; rows point at them through a
                                            relative ``verifier_logs_dir``

README.md beside this script lists the category each task is expected to get.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
OLD_DIR = HERE / "old"
NEW_DIR = HERE / "new"

TASKSET = "terminal-bench-2-1"
MODEL = "nvidia/nvidia/nemotron-3-super-v3"
OLD_AGENT = {"type": "responses_api_agents", "name": "remote_agent"}
NEW_AGENT = {"type": "responses_api_agents", "name": "terminus_2_sandboxed_agent"}
ENV_SERVER = f"harbor_{TASKSET}_environment"
TASK_SOURCE = "harbor_terminal_bench_2_1"
MAX_ROW_BYTES = 6 * 1024


# ---------------------------------------------------------------------------------------------
# Deterministic ids


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def _uuid(*parts: object) -> str:
    return str(uuid.UUID(_digest(*parts)[:32], version=4))


def _created_at(*parts: object) -> float:
    # 2026-08-0x, a few hours of spread; one decimal like the real rows.
    return 1785600000.0 + int(_digest(*parts)[:6], 16) % 40000


# ---------------------------------------------------------------------------------------------
# The tasks: what the agent was asked, what it did, what the verifier checks.

TASKS: dict[str, dict] = {
    "fix-git": {
        "instruction": "I just made some changes to my personal site and checked out master, but now I "
        "can't find those changes. Please help me find them and merge them into master.",
        "steps": [
            (
                "cd /app/personal-site && git reflog | head -4",
                "d7d3e4b HEAD@{0}: checkout: moving from 650dba4 to master\n650dba4 HEAD@{1}: commit: "
                "Move to Stanford\nc4e38a1 HEAD@{2}: checkout: moving from master to c4e38a1\n",
            ),
            (
                "git merge 650dba4 -m 'Recover detached changes'",
                "Auto-merging _includes/about.md\nMerge made by the 'ort' strategy.\n"
                " _includes/about.md | 2 +-\n _layouts/default.html | 4 ++--\n",
            ),
        ],
        "final": "The commit 650dba4 was made on a detached HEAD; it is now merged into master.",
        "tests": ["test_about_file", "test_layout_file"],
        "distro": "debian",
    },
    "regex-log": {
        "instruction": "Write a regex expression that matches dates in the format YYYY-MM-DD appearing in "
        "lines that contain an IPv4 address in a log file. If multiple dates are present in a line, "
        "the regex should match only the last date in that line. Save your regex in /app/regex.txt.",
        "steps": [
            (
                "cat > /app/regex.txt << 'EOF'\n(?=.*\\b(?:\\d{1,3}\\.){3}\\d{1,3}\\b).*\\b(\\d{4}-\\d{2}-\\d{2})\\b\nEOF",
                "",
            ),
            (
                "python3 -c \"import re;p=open('/app/regex.txt').read().strip();"
                "print(re.findall(p,'10.0.0.1 2024-01-02 x 2024-03-04',re.M))\"",
                "['2024-03-04']\n",
            ),
        ],
        "final": "Saved the regex to /app/regex.txt; it keeps only the last date on lines with an IPv4 address.",
        "tests": ["test_regex_file_exists", "test_regex_matches_dates"],
        "distro": "debian",
        "fail": {
            "test": "test_regex_matches_dates",
            "line": 58,
            "body": [
                "    def test_regex_matches_dates():",
                '        pattern = Path("/app/regex.txt").read_text().strip()',
                "        matches = re.findall(pattern, SAMPLE_LOG, re.MULTILINE)",
                ">       assert matches == EXPECTED_DATES",
                "E       AssertionError: assert ['2025-01-09'...'2024-11-11'] == ['2025-01-09'...'2024-11-11']",
                "E         At index 2 diff: '2023-02-29' != '2024-02-29'",
                "E         Left contains one more item: '1999-13-45'",
                "E         Use -v to get more diff",
            ],
            "short": "AssertionError: assert ['2025-01-09'...'2024-11-11'] == ['2025-01-0...",
        },
    },
    "openssl-selfsigned-cert": {
        "instruction": "Create a self-signed TLS certificate for dev-internal.company.local: a 2048-bit RSA "
        "key at /app/ssl/server.key, a certificate valid for 365 days at /app/ssl/server.crt with "
        'Organization "DevOps Team", a combined /app/ssl/server.pem, and /app/check_cert.py that '
        "verifies it.",
        "steps": [
            (
                "mkdir -p /app/ssl && cd /app/ssl && openssl req -x509 -newkey rsa:2048 -nodes "
                "-keyout server.key -out server.crt -days 365 -subj '/CN=dev-internal.company.local'",
                "-----\n",
            ),
            (
                "cat server.crt server.key > server.pem && chmod 600 server.key && ls -l",
                "total 12\n-rw-r--r-- 1 root root 1289 Aug  2 09:14 server.crt\n"
                "-rw------- 1 root root 1704 Aug  2 09:14 server.key\n"
                "-rw-r--r-- 1 root root 2993 Aug  2 09:14 server.pem\n",
            ),
        ],
        "final": "Created the key, certificate and combined PEM under /app/ssl.",
        "tests": [
            "test_key_file",
            "test_certificate_file",
            "test_certificate_details",
            "test_combined_pem",
            "test_verification_script",
        ],
        "distro": "ubuntu",
        "fail": {
            "test": "test_certificate_details",
            "line": 77,
            "body": [
                "    def test_certificate_details():",
                '        out = run(["openssl", "x509", "-in", CERT, "-noout", "-subject"])',
                '>       assert "O = DevOps Team" in out, f"wrong subject: {out!r}"',
                "E       AssertionError: wrong subject: 'subject=CN = dev-internal.company.local\\n'",
                "E       assert 'O = DevOps Team' in 'subject=CN = dev-internal.company.local\\n'",
            ],
            "short": "AssertionError: wrong subject: 'subject=CN = dev-internal.company.local\\n'",
        },
    },
    "gpt2-codegolf": {
        "instruction": "I have downloaded the gpt-2 weights stored as a TF .ckpt. Write me a dependency-free "
        "C file that samples from the model with arg-max sampling. Call your program /app/gpt2.c; I "
        "will compile with gcc -O3 -lm. It should read the .ckpt and the .bpe file. Your C program "
        "must be <5000 bytes.",
        "steps": [
            (
                "ls -la /app",
                "total 486452\n-rw-r--r-- 1 root root 497759232 gpt2-124M.ckpt\n"
                "-rw-r--r-- 1 root root    456318 vocab.bpe\n",
            ),
            ("gcc -O3 /app/gpt2.c -lm -o /app/a.out && wc -c /app/gpt2.c", "4871 /app/gpt2.c\n"),
            (
                "cd /app && ./a.out gpt2-124M.ckpt vocab.bpe 'THIS SOFTWARE IS PROVIDED \"AS IS\", WITHOUT'",
                'THIS SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED\n',
            ),
        ],
        "final": "/app/gpt2.c is 4871 bytes, compiles with gcc -O3 -lm and continues the prompt.",
        "tests": ["test_gpt2_file_size", "test_gpt2_compiles", "test_gpt2_output"],
        "distro": "debian",
        "fail": {
            "test": "test_gpt2_output",
            "line": 41,
            "body": [
                "    def test_gpt2_output():",
                "        result = subprocess.run(",
                '            ["/app/a.out", "gpt2-124M.ckpt", "vocab.bpe", PROMPT],',
                '            capture_output=True, text=True, timeout=120, cwd="/app",',
                "        )",
                '>       assert "WARRANTY OF ANY KIND, EXPRESS OR IMPLIED" in result.stdout',
                "E       assert 'WARRANTY OF ANY KIND, EXPRESS OR IMPLIED' in 'THIS SOFTWARE IS "
                'PROVIDED "AS IS", WITHOUT ANY ANY ANY ANY ANY ANY\\n\'',
                'E        +  where \'THIS SOFTWARE IS PROVIDED "AS IS", WITHOUT ANY ANY ANY ANY ANY '
                "ANY\\n' = CompletedProcess(args=['/app/a.out', ...], returncode=0).stdout",
            ],
            "short": "assert 'WARRANTY OF ANY KIND, EXPRESS OR IMPLIED' in 'THIS SOFTWARE IS PROVIDED...",
        },
    },
    "crack-7z-hash": {
        "instruction": 'You need to create a file called "/app/solution.txt" with the word found in '
        '"secret_file.txt" in the "secrets.7z" archive.',
        "steps": [
            (
                "cd /app && 7z2john.pl secrets.7z > hash.txt && john --wordlist=/usr/share/john/password.lst hash.txt",
                "Loaded 1 password hash (7z, 7-Zip archive encryption [SHA256 256/256 AVX2 8x AES])\n"
                "1998             (secrets.7z)\n1g 0:00:01:12 DONE\n",
            ),
            ("7z x -p1998 secrets.7z -o/tmp/s >/dev/null && cat /tmp/s/secrets/secret_file.txt", "honeybear\n"),
        ],
        "final": "The archive password is 1998 and the secret word is in /app/solution.txt.",
        "tests": ["test_solution_file_exists", "test_solution_content"],
        "distro": "debian",
        "fail": {
            "test": "test_solution_content",
            "line": 19,
            "body": [
                "    def test_solution_content():",
                '        solution = Path("/app/solution.txt").read_text().strip()',
                '>       assert solution == "honeybear", f"unexpected solution: {solution!r}"',
                "E       AssertionError: unexpected solution: '1998'",
                "E       assert '1998' == 'honeybear'",
                "E         ",
                "E         - honeybear",
                "E         + 1998",
            ],
            "short": "AssertionError: unexpected solution: '1998'",
        },
    },
    "sqlite-with-gcov": {
        "instruction": "Compile SQLite in /app/sqlite with gcov instrumentation and make it available in the PATH.",
        "steps": [
            (
                "cd /app/sqlite && CFLAGS='-g -O0 --coverage' LDFLAGS='--coverage' ./configure --prefix=/usr/local",
                "checking build system type... x86_64-pc-linux-gnu\nchecking for gcc... gcc\n"
                "config.status: creating Makefile\n",
            ),
            (
                "make -j4 && make install",
                "gcc -g -O0 --coverage -o sqlite3 shell.c sqlite3.c -lm\n/usr/bin/install -c sqlite3 /usr/local/bin\n",
            ),
        ],
        "final": "SQLite is built with --coverage and installed as /usr/local/bin/sqlite3.",
        "tests": ["test_sqlite_compiled_with_gcov", "test_sqlite_in_path"],
        "distro": "ubuntu",
        "fail": {
            "test": "test_sqlite_in_path",
            "line": 33,
            "body": [
                "    def test_sqlite_in_path():",
                '        path = shutil.which("sqlite3")',
                '>       assert path is not None, "sqlite3 is not on PATH"',
                "E       AssertionError: sqlite3 is not on PATH",
                "E       assert None is not None",
            ],
            "short": "AssertionError: sqlite3 is not on PATH",
            "also_failed": [
                {
                    "test": "test_sqlite_compiled_with_gcov",
                    "line": 24,
                    "body": [
                        "    def test_sqlite_compiled_with_gcov():",
                        '        gcno = list(Path("/app/sqlite").rglob("*.gcno"))',
                        '>       assert gcno, "no .gcno files under /app/sqlite"',
                        "E       AssertionError: no .gcno files under /app/sqlite",
                        "E       assert []",
                    ],
                    "short": "AssertionError: no .gcno files under /app/sqlite",
                }
            ],
        },
    },
    "polyglot-c-py": {
        "instruction": "Write me a single file in /app/polyglot/main.py.c which is a polyglot: I can run "
        "`python3 main.py.c N` or `gcc main.py.c -o cmain && ./cmain N` and both print the Nth "
        "Fibonacci number f(N), with f(0) = 0.",
        "steps": [
            (
                "mkdir -p /app/polyglot && cat /app/polyglot/main.py.c | head -5",
                "#if 0\nimport sys\ndef f(n):\n    a, b = 0, 1\n",
            ),
            ("cd /app/polyglot && python3 main.py.c 10 && gcc main.py.c -o cmain && ./cmain 10", "55\n55\n"),
        ],
        "final": "main.py.c runs under both python3 and gcc and prints f(N).",
        "tests": ["test_polyglot_file_exists", "test_fibonacci_polyglot"],
        "distro": "debian",
        "fail": {
            "test": "test_fibonacci_polyglot",
            "line": 47,
            "body": [
                "    def test_fibonacci_polyglot():",
                "        for n, expected in [(0, 0), (1, 1), (10, 55), (42, 267914296)]:",
                '            py_out = run(["python3", "main.py.c", str(n)], cwd=POLYGLOT_DIR)',
                '            c_out = run(["./cmain", str(n)], cwd=POLYGLOT_DIR)',
                '>           assert py_out == c_out == str(expected), f"f({n}): python={py_out!r} c={c_out!r}"',
                "E           AssertionError: f(0): python='0' c=''",
                "E           assert '0' == ''",
            ],
            "short": "AssertionError: f(0): python='0' c=''",
        },
    },
    "reshard-c4-data": {
        "instruction": "Help me create two scripts for managing the resharding of my dataset: "
        "/app/compress.py and /app/decompress.py. Each output folder may hold at most 30 files and "
        "each file must be under 15MB; decompress must restore the original layout exactly.",
        "steps": [
            (
                "python3 /app/compress.py /app/c4_sample /app/c4_resharded && find /app/c4_resharded -type f | wc -l",
                "9898\n",
            ),
            (
                "python3 /app/decompress.py /app/c4_resharded /tmp/restored && diff -r /app/c4_sample /tmp/restored && echo same",
                "same\n",
            ),
        ],
        "final": "compress.py and decompress.py round-trip the data within the shard limits.",
        "tests": ["test_compress_decompress_roundtrip", "test_shard_limits"],
        "distro": "debian",
    },
    "modernize-scientific-stack": {
        "instruction": "The legacy Python 2.7 climate analysis code at /app/climate_analyzer/analyze_climate.py "
        "must run on Python 3 with modern numpy/pandas. Port it, pin the dependencies in "
        "/app/requirements.txt and write the results to /app/output/summary.csv.",
        "steps": [
            (
                "2to3 -w /app/climate_analyzer/analyze_climate.py | tail -2",
                "RefactoringTool: Files that were modified:\nRefactoringTool: /app/climate_analyzer/analyze_climate.py\n",
            ),
            (
                "python3 /app/climate_analyzer/analyze_climate.py && head -3 /app/output/summary.csv",
                "station_id,mean_temp_c,max_temp_c\n101,12.84,31.2\n102,9.07,27.9\n",
            ),
        ],
        "final": "Ported to Python 3, pinned numpy/pandas in requirements.txt, wrote summary.csv.",
        "tests": ["test_no_python2_syntax", "test_requirements_file", "test_analysis_output"],
        "distro": "debian",
    },
    "cobol-modernization": {
        "instruction": "You are given a COBOL program at /app/src/program.cbl that reads ACCOUNTS.DAT and "
        "BOOKS.DAT. Re-implement it in Python as /app/program.py so that it writes byte-identical "
        "output files.",
        "steps": [
            (
                "cobc -x -o /tmp/prog /app/src/program.cbl && cd /app/data && /tmp/prog && md5sum *.DAT",
                "3b5d5c3712955042212316173ccf37be  ACCOUNTS.DAT\n1f3870be274f6c49b3e31a0c6728957f  BOOKS.DAT\n",
            ),
            (
                "cd /app/data && python3 /app/program.py && md5sum *.DAT",
                "3b5d5c3712955042212316173ccf37be  ACCOUNTS.DAT\n1f3870be274f6c49b3e31a0c6728957f  BOOKS.DAT\n",
            ),
        ],
        "final": "program.py reproduces the COBOL output byte for byte — checksums match.",
        "tests": ["test_program_py_exists", "test_output_files_match"],
        "distro": "ubuntu",
    },
    "nginx-request-logging": {
        "instruction": "Set up an Nginx web server on port 8080 with a custom access log format "
        "(timestamp, method, status, user agent) at /var/log/nginx/benchmark-access.log, rate "
        "limiting of 10 requests per second per IP, and a custom 404 page.",
        "steps": [
            (
                "apt-get install -y nginx >/dev/null && nginx -t",
                "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
                "nginx: configuration file /etc/nginx/nginx.conf test is successful\n",
            ),
            (
                "service nginx start && curl -s -o /dev/null -w '%{http_code}\\n' localhost:8080/missing",
                "Starting nginx: nginx.\n404\n",
            ),
        ],
        "final": "Nginx serves on 8080 with the benchmark log format, rate limiting and a 404 page.",
        "tests": [
            "test_nginx_installed",
            "test_nginx_running",
            "test_custom_log_format",
            "test_rate_limiting",
            "test_custom_404",
        ],
        "distro": "debian",
    },
    "git-multibranch": {
        "instruction": "Set up a Git server reachable over SSH at git@localhost:/git/project with password "
        "'password', and deploy pushes to the main and dev branches to https://localhost:8443/ and "
        "https://localhost:8443/dev/ with Nginx.",
        "steps": [
            (
                "git init --bare /git/project && cat /git/project/hooks/post-receive | head -3",
                "Initialized empty Git repository in /git/project/\n#!/bin/bash\nwhile read oldrev newrev ref; do\n",
            ),
            ("curl -sk https://localhost:8443/dev/index.html", "dev branch\n"),
        ],
        "final": "Pushes to main and dev now deploy to /var/www/main and /var/www/dev behind HTTPS.",
        "tests": ["test_multi_branch_https_deploy"],
        "distro": "ubuntu",
    },
    "log-summary-date-ranges": {
        "instruction": "Analyze the logs in /app/logs and write /app/summary.csv with the number of ERROR, "
        "WARNING and INFO lines for the periods today, last_7_days, last_30_days, month_to_date and "
        "total (today is 2025-08-12).",
        "steps": [
            (
                "ls /app/logs | head -3 && ls /app/logs | wc -l",
                "2025-07-03_api.log\n2025-07-03_app.log\n2025-07-03_db.log\n120\n",
            ),
            (
                "python3 /app/summarize.py && head -4 /app/summary.csv",
                "period,severity,count\ntoday,ERROR,370\ntoday,WARNING,463\ntoday,INFO,1433\n",
            ),
        ],
        "final": "Wrote /app/summary.csv with counts per period and severity.",
        "tests": ["test_summary_file_exists", "test_summary_structure", "test_summary_counts"],
        "distro": "debian",
    },
}

# The legacy agent's error on the old sqlite-with-gcov row (multi-line, chained, trailing newline).
OLD_AGENT_ERROR = """Traceback (most recent call last):
  File "/opt/Gym/.venv/lib/python3.12/site-packages/httpx/_transports/default.py", line 101, in map_httpcore_exceptions
    yield
  File "/opt/Gym/.venv/lib/python3.12/site-packages/httpx/_transports/default.py", line 394, in handle_async_request
    resp = await self._pool.handle_async_request(req)
httpcore.ReadTimeout: timed out

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/opt/Gym/responses_api_agents/remote_agent/app.py", line 212, in run
    response = await self._step(body, turn)
  File "/opt/Gym/responses_api_agents/remote_agent/app.py", line 167, in _step
    return await self._client.responses.create(**params)
  File "/opt/Gym/.venv/lib/python3.12/site-packages/openai/_base_client.py", line 1602, in request
    raise APITimeoutError(request=request) from err
openai.APITimeoutError: Request timed out.
"""


# ---------------------------------------------------------------------------------------------
# Verifier output: what `bash /tests/test.sh` prints (apt + uv + pytest -rA).


def _sep(char: str, title: str = "", width: int = 80) -> str:
    """A separator line the way pytest's TerminalWriter.sep draws it."""
    if not title:
        return char * width
    n = max((width - len(title) - 2) // 2, 1)
    line = f"{char * n} {title} {char * n}"
    if len(line) + 1 <= width:
        line += char
    return line


def _apt_lines(distro: str) -> list[str]:
    if distro == "ubuntu":
        return [
            "Hit:1 http://archive.ubuntu.com/ubuntu noble InRelease",
            "Hit:2 http://security.ubuntu.com/ubuntu noble-security InRelease",
            "Reading package lists...",
            "Reading package lists...",
            "Building dependency tree...",
            "Reading state information...",
            "curl is already the newest version (8.5.0-2ubuntu10.6).",
            "0 upgraded, 0 newly installed, 0 to remove and 4 not upgraded.",
        ]
    return [
        "Hit:1 http://deb.debian.org/debian bookworm InRelease",
        "Hit:2 http://deb.debian.org/debian bookworm-updates InRelease",
        "Reading package lists...",
        "Reading package lists...",
        "Building dependency tree...",
        "Reading state information...",
        "curl is already the newest version (7.88.1-10+deb12u14).",
        "0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.",
    ]


DEBCONF = "debconf: delaying package configuration, since apt-utils is not installed"
UV_LINES = [
    "downloading uv 0.9.5 x86_64-unknown-linux-gnu",
    "no checksums to verify",
    "installing to /root/.local/bin",
    "everything's installed!",
]
TEST_FILE = "../tests/test_outputs.py"


def _pytest_lines(task: str, passed: bool, seconds: float, timed_out: bool = False) -> list[str]:
    spec = TASKS[task]
    tests: list[str] = spec["tests"]
    fail = spec.get("fail") if not passed else None
    failed: dict[str, str] = {}
    if fail:
        sections = {f["test"]: f for f in [fail, *fail.get("also_failed", [])]}
        failed = {t: sections[t]["short"] for t in tests if t in sections}
    lines = [
        _sep("=", "test session starts"),
        "platform linux -- Python 3.13.7, pytest-8.4.1, pluggy-1.6.0",
        "rootdir: /tests",
        "plugins: json-ctrf-0.3.5",
        f"collected {len(tests)} items",
        "",
    ]
    dots = "".join("F" if t in failed else "." for t in tests)
    if timed_out:
        # test.sh was killed while the third test hung: no newline, no summary.
        lines.append(f"{TEST_FILE} {dots[:2]}")
        return lines
    progress = f"{TEST_FILE} {dots}"
    lines += [progress + "[100%]".rjust(79 - len(progress)), ""]  # as pytest pads it
    if fail:
        lines.append(_sep("=", "FAILURES"))
        for test in failed:  # in collection order, as pytest reports them
            section = sections[test]
            lines += [
                _sep("_", test),
                "",
                *section["body"],
                "",
                f"/tests/test_outputs.py:{section['line']}: AssertionError",
            ]
    n_passed = len(tests) - len(failed)
    if n_passed:
        lines.append(_sep("=", "PASSES"))
    lines.append(_sep("=", "short test summary info"))
    lines += [f"PASSED {TEST_FILE}::{t}" for t in tests if t not in failed]
    lines += [f"FAILED {TEST_FILE}::{t} - {failed[t]}" for t in tests if t in failed]
    parts = ([f"{len(failed)} failed"] if failed else []) + ([f"{n_passed} passed"] if n_passed else [])
    lines.append(_sep("=", f"{', '.join(parts)} in {seconds:.2f}s"))
    return lines


def verifier_log(task: str, passed: bool, seconds: float, timed_out: bool = False) -> str:
    """test-stdout.txt on the Harbor path: stdout and stderr interleaved as they came."""
    apt = _apt_lines(TASKS[task]["distro"])
    lines = apt[:2] + [DEBCONF] + apt[2:] + UV_LINES + _pytest_lines(task, passed, seconds, timed_out)
    text = "\n".join(lines)
    return text if timed_out else text + "\n"


def legacy_test_output(task: str, passed: bool, seconds: float) -> str:
    """The TB 2.1 legacy server's embedded `test_output`: stderr of test.sh, then its stdout."""
    stderr = [DEBCONF] + UV_LINES
    stdout = _apt_lines(TASKS[task]["distro"]) + _pytest_lines(task, passed, seconds)
    return "\n".join(stderr) + "\n" + "\n".join(stdout) + "\n"


# ---------------------------------------------------------------------------------------------
# Rows

BASH_TOOL = {
    "type": "function",
    "name": "bash",
    "description": "Run a shell command in the task container and return its output.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    "strict": False,
}


def _trajectory(
    side: str, task: str, rollout: int, final: str | None = None, steps: list[tuple[str, str]] | None = None
) -> list[dict]:
    spec = TASKS[task]
    out: list[dict] = []
    for i, (cmd, result) in enumerate(spec["steps"] if steps is None else steps):
        call_id = "call_" + _digest(side, task, rollout, i)[:24]
        out.append(
            {
                "arguments": json.dumps({"command": cmd}, ensure_ascii=False),
                "call_id": call_id,
                "name": "bash",
                "type": "function_call",
                "id": "fc_" + call_id[5:],
                "status": "completed",
            }
        )
        out.append({"call_id": call_id, "output": result, "type": "function_call_output"})
    text = spec["final"] if final is None else final
    if text:  # an agent that crashed or timed out never wrote its closing message
        out.append(
            {
                "id": "msg_" + _digest(side, task, rollout, "msg")[:24],
                "content": [{"annotations": [], "text": text, "type": "output_text"}],
                "role": "assistant",
                "status": "completed",
                "type": "message",
            }
        )
    return out


def _create_params(task: str) -> dict:
    return {
        "input": [{"content": TASKS[task]["instruction"], "role": "user", "type": "message"}],
        "model": MODEL,
        "parallel_tool_calls": False,
        "temperature": 0.6,
        "top_p": 0.95,
        "tool_choice": "auto",
        "tools": [BASH_TOOL],
        "max_output_tokens": 16384,
    }


def _response(side: str, task: str, rollout: int, output: list[dict], metadata: dict | None) -> dict:
    seed = int(_digest(side, task, rollout, "usage")[:6], 16)
    inp, outp = 18000 + seed % 40000, 900 + seed % 4000
    return {
        "id": "resp_" + _uuid(side, task, rollout),
        "created_at": _created_at(side, task, rollout),
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": metadata,
        "model": MODEL,
        "object": "response",
        "output": output,
        "parallel_tool_calls": False,
        "temperature": 0.6,
        "tool_choice": "auto",
        "tools": [],
        "top_p": 0.95,
        "status": "completed",
        "usage": {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": outp,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + outp,
        },
    }


def old_row(
    task: str,
    index: int,
    rollout: int,
    reward: float | None,
    *,
    passed: bool,
    seconds: float,
    evaluation_completed: bool = True,
    test_output: str | None = None,
    error: str | None = None,
    final: str | None = None,
    steps: list[tuple[str, str]] | None = None,
) -> dict:
    """A row of the TB 2.1 legacy resources server (resources_servers/terminal_bench_2_1)."""
    row = {
        "responses_create_params": _create_params(task),
        "response": _response("old", task, rollout, _trajectory("old", task, rollout, final, steps), {}),
        "reward": reward,
        "task_name": f"terminal-bench/{task}",
        "evaluation_completed": evaluation_completed,
        "test_output": legacy_test_output(task, passed, seconds) if test_output is None else test_output,
    }
    if error is not None:
        row["error"] = error
    row.update({"_ng_task_index": index, "_ng_rollout_index": rollout, "agent_ref": OLD_AGENT})
    return row


def session_id(task: str, rollout: int) -> str:
    return _uuid("harbor-session", task, rollout)


def new_row(
    task: str,
    index: int,
    rollout: int,
    reward: float,
    *,
    attempt: int | None = None,
    mask_sample: bool = False,
    failure_kind: str | None = None,
    failure_reason: str | None = None,
    has_logs: bool = True,
    return_code: int | None = 0,
    metadata: dict | None = None,
    final: str | None = None,
    steps: list[tuple[str, str]] | None = None,
) -> dict:
    """A row of the Harbor resources server on the newer collector (environment-server path)."""
    meta = {"terminus2_completed": "true", "terminus2_error_type": "", "terminus2_n_episodes": "6"}
    meta.update(metadata or {})
    row = {
        "responses_create_params": _create_params(task),
        "response": _response("new", task, rollout, _trajectory("new", task, rollout, final, steps), meta),
        "reward": reward,
        "mask_sample": mask_sample,
        "failure_kind": failure_kind,
        "failure_reason": failure_reason,
        "verifier_logs_dir": f"verifier/{session_id(task, rollout)}" if has_logs else None,
        "verifier_return_code": return_code,
        "_ng_task_id": {"taskset": TASKSET, "task_id": task},
        "_ng_task_index": index,
        "_ng_rollout_index": rollout,
    }
    if attempt is not None:
        row["_ng_attempt_index"] = attempt
    row.update(
        {
            "_ng_environment_server": ENV_SERVER,
            "_ng_result_type": "single_agent_turn",
            "task_source": TASK_SOURCE,
            "agent_ref": NEW_AGENT,
        }
    )
    return row


def failure_record(
    task: str,
    index: int,
    rollout: int,
    attempt: int,
    message: str,
    *,
    terminal: bool,
    stage: str,
    failure_kind: str | None = None,
) -> dict:
    """A failures-sidecar line for an environment-server episode failure."""
    rec: dict = {
        "_ng_task_id": {"taskset": TASKSET, "task_id": task},
        "_ng_failure_class": "environment_server_failed",
        "_ng_failure_terminal": terminal,
        "_ng_failure_message": message,
        "_ng_failure_stage": stage,
    }
    if failure_kind is not None:
        rec["failure_kind"] = failure_kind
    rec.update(
        {
            "_ng_task_index": index,
            "_ng_rollout_index": rollout,
            "_ng_attempt_index": attempt,
            "_ng_environment_server": ENV_SERVER,
            "task_source": TASK_SOURCE,
            "agent_ref": NEW_AGENT,
        }
    )
    return rec


# ---------------------------------------------------------------------------------------------
# The two runs


def _index(tasks: list[str]) -> dict[str, int]:
    return {t: i for i, t in enumerate(tasks)}


OLD_INDEX = _index(sorted(set(TASKS) - {"log-summary-date-ranges"}))
NEW_INDEX = _index(sorted(set(TASKS) - {"git-multibranch"}))

# Failed-trajectory variants (the agent's own view of a run that did not pass).
GPT2_BAD = [
    TASKS["gpt2-codegolf"]["steps"][1],
    (
        "cd /app && ./a.out gpt2-124M.ckpt vocab.bpe 'THIS SOFTWARE IS PROVIDED \"AS IS\", WITHOUT'",
        'THIS SOFTWARE IS PROVIDED "AS IS", WITHOUT ANY ANY ANY ANY ANY ANY\n',
    ),
]
CRACK_BAD = TASKS["crack-7z-hash"]["steps"][:1] + [("echo 1998 > /app/solution.txt && cat /app/solution.txt", "1998\n")]
SQLITE_BAD = TASKS["sqlite-with-gcov"]["steps"][:1]
POLYGLOT_BAD = [TASKS["polyglot-c-py"]["steps"][0], ("cd /app/polyglot && python3 main.py.c 10", "55\n")]
REGEX_BAD = [
    ("cat > /app/regex.txt << 'EOF'\n\\d{4}-\\d{2}-\\d{2}\nEOF", ""),
    ("grep -cE '[0-9]{4}-[0-9]{2}-[0-9]{2}' /app/sample.log", "11\n"),
]
OPENSSL_BAD = TASKS["openssl-selfsigned-cert"]["steps"]
NGINX_HANG = [TASKS["nginx-request-logging"]["steps"][0], ("nginx -g 'daemon off;' &", "[1] 2317\n")]

OPENSSL_LEGACY_TIMEOUT = (
    DEBCONF
    + "\n"
    + "\n".join(UV_LINES)
    + "\n"
    + "\n".join(_apt_lines("ubuntu"))
    + "\n"
    + "\n".join(_pytest_lines("openssl-selfsigned-cert", False, 0.0, timed_out=True))
    + "\n\nCommand timed out after 900 seconds: bash /tests/test.sh\n"
)

COBOL_LEGACY_BROKEN = (
    "Error response from daemon: container 4f1c9e0a2b7d3e6f8a1b2c3d4e5f60718293a4b5c6d7e8f9"
    "0a1b2c3d4e5f6a7b is not running\n"
)


def old_rows() -> list[dict]:
    i = OLD_INDEX
    return [  # completion order
        old_row(
            "regex-log",
            i["regex-log"],
            2,
            1.0,
            passed=True,
            seconds=2.11,
            final="Saved the regex to /app/regex.txt.\u2028It keeps only the last date on lines with an IPv4 address.",
        ),
        old_row(
            "crack-7z-hash",
            i["crack-7z-hash"],
            0,
            0.0,
            passed=False,
            seconds=0.41,
            steps=CRACK_BAD,
            final="The archive password is 1998; I wrote it to /app/solution.txt.",
        ),
        old_row("fix-git", i["fix-git"], 0, 1.0, passed=True, seconds=0.38),
        old_row("regex-log", i["regex-log"], 0, 1.0, passed=True, seconds=2.07),
        old_row(
            "openssl-selfsigned-cert",
            i["openssl-selfsigned-cert"],
            0,
            0.0,
            passed=False,
            seconds=0.0,
            evaluation_completed=False,
            test_output=OPENSSL_LEGACY_TIMEOUT,
            steps=OPENSSL_BAD,
            final="Created the key and certificate under /app/ssl.",
        ),
        old_row(
            "sqlite-with-gcov",
            i["sqlite-with-gcov"],
            0,
            0.0,
            passed=False,
            seconds=1.93,
            error=OLD_AGENT_ERROR,
            steps=SQLITE_BAD,
            final="",
        ),
        old_row("gpt2-codegolf", i["gpt2-codegolf"], 0, 1.0, passed=True, seconds=46.80),
        old_row(
            "regex-log",
            i["regex-log"],
            1,
            0.0,
            passed=False,
            seconds=2.16,
            steps=REGEX_BAD,
            final="Saved a date regex to /app/regex.txt.",
        ),
        old_row(
            "cobol-modernization",
            i["cobol-modernization"],
            0,
            None,
            passed=False,
            seconds=0.0,
            evaluation_completed=False,
            test_output=COBOL_LEGACY_BROKEN,
        ),
        old_row("reshard-c4-data", i["reshard-c4-data"], 0, 1.0, passed=True, seconds=88.52),
        old_row("nginx-request-logging", i["nginx-request-logging"], 0, 1.0, passed=True, seconds=14.03),
        old_row("polyglot-c-py", i["polyglot-c-py"], 0, 1.0, passed=True, seconds=1.12),
        old_row("modernize-scientific-stack", i["modernize-scientific-stack"], 0, 1.0, passed=True, seconds=9.64),
        old_row("git-multibranch", i["git-multibranch"], 0, 1.0, passed=True, seconds=21.37),
    ]


# (task, rollout) -> (passed, seconds, timed_out) for every new row with logs on disk.
NEW_LOGS: dict[tuple[str, int], tuple[bool, float, bool]] = {
    ("fix-git", 0): (True, 0.41, False),
    ("regex-log", 0): (False, 2.14, False),
    ("regex-log", 1): (True, 2.09, False),
    ("regex-log", 2): (True, 2.12, False),
    ("openssl-selfsigned-cert", 0): (False, 1.87, False),
    ("gpt2-codegolf", 0): (False, 51.26, False),
    ("crack-7z-hash", 0): (True, 0.36, False),
    ("sqlite-with-gcov", 0): (True, 2.48, False),
    ("polyglot-c-py", 0): (False, 1.73, False),
    ("cobol-modernization", 0): (True, 3.05, False),
    ("nginx-request-logging", 0): (True, 13.88, False),
    ("nginx-request-logging", 1): (False, 0.0, True),
    ("log-summary-date-ranges", 0): (True, 4.62, False),
}


def _timeout_reason() -> str:
    tail = verifier_log("nginx-request-logging", False, 0.0, timed_out=True)[-600:]
    return "verifier timed out after 900.0s (exec timeout); last 600 characters of test-stdout.txt:\n" + tail


def new_rows() -> list[dict]:
    i = NEW_INDEX
    return [  # completion order
        new_row("fix-git", i["fix-git"], 0, 1.0, attempt=1),  # scored after a failed attempt 0
        new_row("regex-log", i["regex-log"], 1, 1.0),
        new_row("nginx-request-logging", i["nginx-request-logging"], 0, 1.0),
        new_row(
            "gpt2-codegolf",
            i["gpt2-codegolf"],
            0,
            0.0,
            steps=GPT2_BAD,
            final="/app/gpt2.c compiles and generates text from the prompt.",
        ),
        new_row("log-summary-date-ranges", i["log-summary-date-ranges"], 0, 1.0),
        new_row("regex-log", i["regex-log"], 0, 0.0, steps=REGEX_BAD, final="Saved a date regex to /app/regex.txt."),
        new_row("crack-7z-hash", i["crack-7z-hash"], 0, 1.0),
        new_row(
            "polyglot-c-py",
            i["polyglot-c-py"],
            0,
            0.0,
            steps=POLYGLOT_BAD,
            final="",
            metadata={
                "terminus2_completed": "false",
                "terminus2_error_type": "TimeoutError",
                "terminus2_n_episodes": "41",
            },
        ),
        new_row(
            "nginx-request-logging",
            i["nginx-request-logging"],
            1,
            0.0,
            steps=NGINX_HANG,
            failure_kind="harbor:verifier_timeout",
            failure_reason=_timeout_reason(),
            return_code=None,
            final="Nginx is running in the foreground on port 8080.",
        ),
        new_row(
            "reshard-c4-data",
            i["reshard-c4-data"],
            0,
            0.0,
            mask_sample=True,
            failure_kind="verifier_error",
            failure_reason="verifier exec failed: sandbox connection reset while running bash "
            "/tests/test.sh (Daytona API 502 Bad Gateway)",
            has_logs=False,
            return_code=None,
        ),
        new_row(
            "openssl-selfsigned-cert",
            i["openssl-selfsigned-cert"],
            0,
            0.0,
            steps=OPENSSL_BAD,
            final="Created the key and certificate under /app/ssl.",
        ),
        new_row("regex-log", i["regex-log"], 2, 1.0),
        new_row("sqlite-with-gcov", i["sqlite-with-gcov"], 0, 1.0),
        new_row("cobol-modernization", i["cobol-modernization"], 0, 1.0),
    ]


def failure_records() -> list[dict]:
    i = NEW_INDEX
    mss = "modernize-scientific-stack"
    return [  # one line per failed attempt, in the order they happened
        failure_record(
            mss,
            i[mss],
            0,
            0,
            "Daytona sandbox create failed: 503 Service Unavailable (provider capacity)",
            terminal=False,
            stage="environment_setup",
            failure_kind="provider_unavailable",
        ),
        failure_record(
            "fix-git",
            i["fix-git"],
            0,
            0,
            "episode request to harbor_terminal-bench-2-1_environment failed: ReadTimeout after 1800.0s",
            terminal=False,
            stage="agent_run",
        ),
        failure_record(
            mss,
            i[mss],
            0,
            1,
            "Daytona sandbox create failed: image alexgshaw/modernize-scientific-stack:20251031 "
            "could not be pulled: toomanyrequests: You have reached your pull rate limit.",
            terminal=True,
            stage="environment_setup",
        ),
    ]


# ---------------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> None:
    lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in rows]
    for n, line in enumerate(lines, 1):
        size = len(line.encode())
        if size > MAX_ROW_BYTES:
            raise SystemExit(f"{path}:{n}: row is {size} bytes, over {MAX_ROW_BYTES}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.writelines(lines)


def main() -> None:
    write_jsonl(OLD_DIR / "rollouts.jsonl", old_rows())
    rows = new_rows()
    write_jsonl(NEW_DIR / "rollouts.jsonl", rows)
    write_jsonl(NEW_DIR / "rollouts_failures.jsonl", failure_records())

    logs = NEW_DIR / "verifier"
    shutil.rmtree(logs, ignore_errors=True)
    for row in rows:
        if not row["verifier_logs_dir"]:
            continue
        task, rollout = row["_ng_task_id"]["task_id"], row["_ng_rollout_index"]
        passed, seconds, timed_out = NEW_LOGS[(task, rollout)]
        text = verifier_log(task, passed, seconds, timed_out)
        n_lines = len(text.splitlines())
        if not 20 <= n_lines <= 40:
            raise SystemExit(f"{task} #{rollout}: verifier log has {n_lines} lines, want 20-40")
        out = NEW_DIR / row["verifier_logs_dir"]
        out.mkdir(parents=True)
        with (out / "test-stdout.txt").open("w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if not timed_out:  # test.sh never reached its last lines on a timeout
            with (out / "reward.txt").open("w", encoding="utf-8", newline="") as fh:
                fh.write("1\n" if passed else "0\n")


if __name__ == "__main__":
    main()

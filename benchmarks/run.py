#!/usr/bin/env python3
"""Benchmark the rollout-parity gate against two floors, at a chosen scale.

    python benchmarks/run.py --scale small            # 500 tasks x 5 repeats x 40 KB rows (~100 MB a side)
    python benchmarks/run.py --scale items small      # several scales in one go
    python benchmarks/run.py --scale rowsize          # same rows at 40 KB and 160 KB: memory vs row size
    python benchmarks/run.py --tasks 1000 --repeats 3 --row-kb 80   # a custom scale
    python benchmarks/run.py --scale unused --pairs 30  # the plugin's cost in a run that does not use it
    python benchmarks/run.py --scale shards --pair small --shards 8  # a side in 8 shard files vs one file

For each scale the pair is generated into benchmarks/.data/<name>/ (reused when its manifest has the
same parameters), the files are read once to warm the page cache, then three child processes are
timed one after the other, each via os.wait4 (wall clock, user+sys CPU, peak RSS of that child):

The user-facing scales (see benchmarks/README.md): rerun, xdist and cores on the pair --pair names;
protocol (10,000 small tasks against as many parametrized tests with the same outcomes), memory
(100,000 small tasks against as many trivial parametrized tests) and flips (100,000 tasks, 5% of
them flipped, under --tb=line, against parametrized tests of the same outcomes) on their own pairs.

  gate          python -m pytest -q -p no:cacheprovider --parity-old=.. --parity-new=..
  json.loads    a stdlib json.loads of every line of both files and the sidecar (floor 1)
  trivial       python -m pytest -q -p no:cacheprovider on N no-op parametrized tests, N = the
                number of tasks the gate makes items for (floor 2)

The `unused` scale times pytest on one trivial test, with the plugin and with `-p no:rollout_parity`,
in pairs (alternating which goes first), and prints the median of the per-pair differences beside
the 15 ms the plugin may cost a run that gives no parity option.

See benchmarks/README.md for what the figures mean.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate  # noqa: E402

DATA = HERE / ".data"
PY = sys.executable
FAILURES: list[str] = []
WARMED: list[bool] = []

SCALES = {
    # name: (tasks, repeats, row KB)
    "items": (10_000, 1, 1),
    "small": (500, 5, 40),
    "medium": (2_000, 5, 40),
    "large": (5_000, 5, 40),
    "tasks100k": (100_000, 1, 0.5),  # 100,000 small tasks: the memory of that many items
    "flips100k": (100_000, 1, 0.5),  # the same with 5% of the tasks flipped: a large run's many failures
}
ROWSIZE_DEFAULT = (1_000, 2, 40)  # run at row-kb and 4 x row-kb
USER_SCALES = ("rerun", "xdist", "cores", "protocol", "memory", "shards", "flips")
#: the pair each user-facing scale runs on when it is not the one --pair names
OWN_PAIR = {"protocol": "items", "memory": "tasks100k", "flips": "flips100k"}
#: the flip rate of the pairs that fix their own (a large run with many failures)
OWN_FLIP_RATE = {"flips100k": 0.05}
SHARDS_DEFAULT = 8  # how many shard files the shards scale splits a side into
UNUSED_FLOOR_MS = 15.0  # what the installed plugin may add to a pytest run that does not use it

JSON_FLOOR = r"""
import json, sys
n = 0
for p in sys.argv[1:]:
    with open(p, "rb") as fh:
        for line in fh:
            if line.strip():
                json.loads(line)
                n += 1
print(n)
"""


@dataclass
class Measure:
    label: str
    wall: float
    user: float
    sys: float
    rss_mb: float
    rc: int
    tail: str
    #: peak RSS summed over the child and every process it started (see ProcessTreePeaks)
    tree_mb: float = 0.0
    processes: int = 1
    #: the largest RSS the whole tree held at one moment (sampled; a lower bound)
    at_once_mb: float = 0.0


CHILD_ENV = dict(os.environ)


def child_env(as_is: bool) -> str:
    """Unless ``as_is``: let children cache bytecode (and pytest its rewritten modules) under .data/.

    With PYTHONDONTWRITEBYTECODE=1 every pytest start re-compiles and assertion-rewrites every plugin
    module (~0.5 s here), which would be charged to both the gate and the trivial floor.
    """
    if as_is:
        return f"inherited (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', 'unset')})"
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(DATA / "pycache")
    # pytest-xdist asks pytest for a base temporary directory, and pytest then deletes the oldest of
    # the user's /tmp/pytest-of-<user> directories: after a test suite, thousands of files (3 s) charged
    # to whichever `-n 2` command runs first. The children share one directory of their own instead.
    temproot = DATA / "temproot"
    temproot.mkdir(parents=True, exist_ok=True)
    CHILD_ENV["PYTEST_DEBUG_TEMPROOT"] = str(temproot)
    return f"bytecode cached under {DATA / 'pycache'} (PYTHONDONTWRITEBYTECODE unset for children), temporary directories under {temproot}"


class ProcessTreePeaks(threading.Thread):
    """Each descendant's peak RSS (VmHWM), sampled every 2 ms from /proc while the child runs.

    ``ru_maxrss`` from wait4 is exact for the child but, for the processes the child started and
    reaped (the gate's reader child, xdist workers), it gives only the largest one, not their sum.
    VmHWM is a high-water mark: a sample keeps everything a process reached before it, so a
    descendant's figure misses at most what it grew in the last 2 ms of its life. A descendant
    caught between fork and exec (its command line still its parent's) shares its parent's memory
    and reports the parent's figures: it is skipped, or one such sample counted the gate twice.
    Linux only.
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peaks: dict[int, int] = {}
        #: the largest sum of the tree's current RSS (VmRSS) seen in one sample: what was held at once
        self.at_once = 0
        self.done = threading.Event()

    def _children(self, pid: int) -> list[int]:
        found = []
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    found.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
        return found

    @staticmethod
    def _cmdline(pid: int) -> bytes:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                return fh.read()
        except OSError:
            return b""

    def _sample(self) -> None:
        stack = [(self.pid, b"")]
        now = 0
        while stack:
            pid, parent_cmdline = stack.pop()
            cmdline = self._cmdline(pid)
            if pid != self.pid and cmdline == parent_cmdline:  # forked, not yet exec'd
                continue
            try:
                with open(f"/proc/{pid}/status") as fh:
                    for line in fh:
                        if line.startswith("VmHWM:") and pid != self.pid:
                            self.peaks[pid] = max(self.peaks.get(pid, 0), int(line.split()[1]))
                        elif line.startswith("VmRSS:"):
                            now += int(line.split()[1])
            except OSError:
                continue
            stack.extend((child, cmdline) for child in self._children(pid))
        self.at_once = max(self.at_once, now)

    def run(self) -> None:
        while not self.done.wait(0.002):
            self._sample()


def measure(label: str, argv: list[str], cwd: Path, out_path: Path, env: dict | None = None) -> Measure:
    """Run argv once; wall clock around spawn..reap, CPU and peak RSS of that child from wait4."""
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env={**CHILD_ENV, **(env or {})})
        peaks = ProcessTreePeaks(proc.pid)
        if sys.platform == "linux":
            peaks.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        peaks.done.set()
        if peaks.is_alive():
            peaks.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    rss = ru.ru_maxrss / 1024 if sys.platform != "darwin" else ru.ru_maxrss / 2**20
    tree = rss + sum(peaks.peaks.values()) / 1024
    lines = [ln for ln in out_path.read_text(errors="replace").splitlines() if ln.strip()]
    return Measure(
        label,
        wall,
        ru.ru_utime,
        ru.ru_stime,
        rss,
        proc.returncode,
        lines[-1] if lines else "",
        tree,
        1 + len(peaks.peaks),
        peaks.at_once / 1024,
    )


def warm(paths: list[Path]) -> None:
    for p in paths:
        with open(p, "rb", buffering=0) as fh:
            while fh.read(16 << 20):
                pass


def ensure_pair(name: str, tasks: int, repeats: int, row_kb: float, seed: int, rates: dict) -> tuple[Path, dict]:
    out = DATA / name
    params = dict(tasks=tasks, repeats=repeats, row_bytes=int(row_kb * 1000), seed=seed, **rates)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        have = manifest.get("params", {})
        if all(have.get(k) == v for k, v in params.items()) and have.get("version") == generate.GENERATOR_VERSION:
            print(f"[{name}] reusing {out}")
            return out, manifest
    need = 2 * tasks * repeats * row_kb * 1000 * 1.1
    free = shutil.disk_usage(DATA.parent if not DATA.exists() else DATA).free
    if need > free * 0.8:
        sys.exit(f"[{name}] needs ~{need / 1e9:.1f} GB, only {free / 1e9:.1f} GB free: refusing")
    print(
        f"[{name}] generating {tasks} tasks x {repeats} repeats x ~{row_kb:g} KB rows (~{need / 2.2e6:.0f} MB a side)"
    )
    manifest = generate.generate(out, tasks, repeats, int(row_kb * 1000), seed=seed, quiet=True, **rates)
    total = sum(manifest["sizes"].values())
    print(
        f"[{name}] wrote {total / 1e6:.0f} MB in {manifest['generate_seconds']:.1f}s "
        f"({manifest['generate_mb_per_s']:.0f} MB/s)"
    )
    return out, manifest


def trivial_test_file(out: Path, n: int) -> Path:
    path = out / f"test_trivial_{n}.py"
    if not path.exists():
        path.write_text(f'import pytest\n\n\n@pytest.mark.parametrize("i", range({n}))\ndef test_t(i):\n    pass\n')
    return path


def outcome_test_file(out: Path, passed: int, failed: int, xfailed: int) -> Path:
    """Parametrized tests with the given outcomes, failing and xfailing as the gate's items do.

    Each test's id is its number: parametrizing over repeated values would make pytest
    disambiguate as many equal ids, work the gate's items (one name a task) never cause.
    """
    path = out / f"test_outcomes_{passed}_{failed}_{xfailed}_ids.py"
    if not path.exists():
        path.write_text(
            "import pytest\n\n\n"
            f"@pytest.mark.parametrize('i', range({passed + failed + xfailed}))\n"
            "def test_t(i, request):\n"
            f"    kind = 'p' if i < {passed} else 'f' if i < {passed + failed} else 'x'\n"
            "    if kind == 'f':\n"
            "        pytest.fail('task: new regressed: old=1.0 new=0.0', pytrace=False)\n"
            "    if kind == 'x':\n"
            "        request.node.add_marker(pytest.mark.xfail(reason='task: masked'))\n"
            "        pytest.fail('task: masked', pytrace=False)\n"
        )
    return path


def outcome_counts(tail: str) -> dict[str, int]:
    """passed/failed/xfailed from pytest's last line (`175 failed, 9700 passed, 125 xfailed in 3.1s`)."""
    found = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|xfailed)", tail)}
    return {word: found.get(word, 0) for word in ("passed", "failed", "xfailed")}


def bench(name: str, tasks: int, repeats: int, row_kb: float, seed: int, rates: dict, runs: int) -> dict:
    out, manifest = ensure_pair(name, tasks, repeats, row_kb, seed, rates)
    old, new = out / "old" / "rollouts.jsonl", out / "new" / "rollouts.jsonl"
    sidecar = out / "new" / "rollouts_failures.jsonl"
    files = [old, new] + ([sidecar] if sidecar.exists() else [])
    warm(files)
    n_items = manifest["tasks_joined"]
    trivial = trivial_test_file(out, n_items)
    rel = lambda p: str(p.relative_to(out))  # noqa: E731
    commands = [
        ("json.loads", [PY, "-c", JSON_FLOOR, *map(rel, files)], out / "out_json.txt"),
        ("trivial pytest", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", rel(trivial)], out / "out_trivial.txt"),
        (
            "gate",
            [
                PY,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--parity-old={rel(old)}",
                f"--parity-new={rel(new)}",
            ],
            out / "out_gate.txt",
        ),
    ]
    if not WARMED:  # one untimed pass, so that bytecode caches exist before anything is timed
        for label, argv, log in commands:
            measure(label, argv, out, log)
        WARMED.append(True)
    best: dict[str, Measure] = {}
    for _ in range(runs):  # interleaved, so a burst of load elsewhere hits all three alike
        for label, argv, log in commands:
            m = measure(label, argv, out, log)
            if label not in best or m.wall < best[label].wall:
                best[label] = m
    runs = [best[label] for label, _, _ in commands]
    size = sum(p.stat().st_size for p in files)
    rows = manifest["counts"]["old_rows"] + manifest["counts"]["new_rows"]
    report(name, manifest, size, rows, n_items, runs)
    return {"name": name, "size": size, "rows": rows, "items": n_items, "runs": runs}


def report(name: str, manifest: dict, size: int, rows: int, n_items: int, runs: list[Measure]) -> None:
    p = manifest["params"]
    rs = manifest["row_bytes_sample"]
    print(
        f"\n== {name}: {p['tasks']} tasks x {p['repeats']} repeats, rows ~{p['row_bytes'] / 1000:g} KB "
        f"(sample {rs['min']}..{rs['max']} B, median {rs['median']} B); {rows} rows, "
        f"{size / 1e6:.0f} MB both sides; {n_items} items"
    )
    e = manifest["expected"]
    print("   expected: " + ", ".join(f"{k} {v}" for k, v in e.items()))
    print(
        f"   {'run':<15} {'wall s':>8} {'user s':>8} {'sys s':>7} {'peak RSS MB':>12} {'MB/s':>7} {'rc':>3}  last line"
    )
    for m in runs:
        rate = size / 1e6 / m.wall if m.label != "trivial pytest" else float("nan")
        print(
            f"   {m.label:<15} {m.wall:8.2f} {m.user:8.2f} {m.sys:7.2f} {m.rss_mb:12.1f} "
            f"{rate:7.0f} {m.rc:>3}  {m.tail[:70]}"
        )
    j, t, g = runs
    print(
        f"   gate/json.loads wall {g.wall / j.wall:.2f}x   gate/trivial-pytest wall {g.wall / t.wall:.2f}x   "
        f"gate - json.loads {g.wall - j.wall:+.2f}s   gate RSS - trivial RSS {g.rss_mb - t.rss_mb:+.1f} MB"
    )
    found = {}
    for line in (DATA / name / "out_gate.txt").read_text(errors="replace").splitlines():
        m = re.match(r"(identical|flipped|flipped_agent_error|masked|missing)\s+(\d+)\b", line)
        if m:
            found[m.group(1)] = int(m.group(2))
    ok = found == e
    print(
        f"   gate categories {'match' if ok else 'DO NOT match'} the generator's expectation"
        + ("" if ok else f": {found} -- the gate did not complete; see {DATA / name / 'out_gate.txt'}")
    )
    FAILURES.extend([] if ok else [name])
    if g.rc not in (0, 1):
        print(f"   WARNING: gate exit status {g.rc} (see {DATA / name / 'out_gate.txt'})")


# The floors of the user-facing scales (rerun, xdist, cores): each ratio is printed beside its floor.
FLOORS = {
    "cache write": 1.05,  # the first run writing the gate's entries / the same run writing none (pytest's cache on)
    "2 cores": 0.80,  # default install, whole gate / json.loads
    "protocol": 1.00,  # 10k small tasks / 10k parametrized tests with the same outcomes
    "-k rerun": 1.30,  # -k <one task> rerun / pytest alone selecting one of as many no-op tests
    "xdist adds": 1.10,  # (gate -n 2 - gate serial) / (no-op -n 2 - no-op serial), as many tests
    "memory 100k": 1.20,  # peak RSS summed, 100k small tasks / 100k trivial parametrized tests
    "shards": 1.10,  # the new side in N shard files / the same rows in one file
    "flips wall": 1.20,  # 100k tasks, 5% flipped, --tb=line / parametrized tests of the same outcomes
    "flips memory": 1.20,  # the same, peak RSS summed over the processes
}
MEMORY_FLOOR_MB = 100.0  # MiB: the most a gate run holds at once over every process it starts (2 GB pair)
#: one core (taskset -c 0), whole gate / json.loads before the two sides were read at once,
#: measured on the large pair: the one-core run may be no slower than that
ONE_CORE_BEFORE = 1.15


def one_task(old: Path) -> str:
    """A task of the pair, as its item is named (the legacy side's task_name without its taskset)."""
    with open(old, "rb") as fh:
        return json.loads(fh.readline())["task_name"].rsplit("/", 1)[-1]


def timed_best(commands: list[tuple[str, list[str], dict, object]], cwd: Path, runs: int) -> dict[str, Measure]:
    """Each command ``runs`` times, interleaved; the fastest wall of each (``before`` runs untimed first)."""
    best: dict[str, Measure] = {}
    for _ in range(runs):
        for label, argv, env, before in commands:
            if callable(before):
                before()
            m = measure(label, argv, cwd, cwd / f"out_{re.sub(r'[^a-z0-9]+', '_', label)}.txt", env)
            if label not in best or m.wall < best[label].wall:
                best[label] = m
    return best


def floor_line(name: str, ratio: float, floor: float, detail: str) -> bool:
    ok = ratio <= floor
    print(f"   {name:<13} {ratio:6.2f}x   floor {floor:.2f}x   {'ok   ' if ok else 'ABOVE'}  {detail}")
    FAILURES.extend([] if ok else [f"{name} {ratio:.2f}x > {floor:.2f}x"])
    return ok


def memory_line(measures: list[Measure], pair: str) -> None:
    """The most memory any of these runs held at once over all its processes (the tree's total RSS,
    sampled every 2 ms), against the floor on the 2 GB pair; each process's own peak summed beside it
    (an upper bound: the reader child ends before the gate's process reaches its peak)."""
    worst = max(measures, key=lambda m: m.at_once_mb)
    bound = max(measures, key=lambda m: m.tree_mb)
    enforced = pair == "large"
    ok = not enforced or worst.at_once_mb <= MEMORY_FLOOR_MB
    verdict = ("ok   " if ok else "ABOVE") if enforced else "(floor for the large pair)"
    print(
        f"   {'memory':<13} {worst.at_once_mb:6.1f} MiB floor {MEMORY_FLOOR_MB:.0f} MiB {verdict}  "
        f"the most held at once over every process, the largest of these runs: {worst.label} "
        f"(each process's peak summed: {bound.tree_mb:.1f} MiB over {bound.processes} process(es), {bound.label})"
    )
    FAILURES.extend([] if ok else [f"memory {worst.at_once_mb:.0f} MiB"])


def split_side(main: Path, out_dir: Path, shards: int) -> Path:
    """``main`` (and its sidecar) split into ``shards`` files in ``out_dir``, as a sharded run leaves them:
    the tasks dealt out to the shards, each shard holding its tasks' rows (byte for byte, in their order)
    and its sidecar the records of its own tasks. Returns the glob's directory (reused when already split)."""
    done = out_dir / f"split-{shards}.done"
    if done.exists():
        return out_dir
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    home: dict[object, int] = {}
    parts: list[list[bytes]] = [[] for _ in range(shards)]
    for line in main.read_bytes().splitlines(keepends=True):
        row = json.loads(line)
        task = row.get("_ng_task_index", row.get("task_name"))
        parts[home.setdefault(task, len(home) % shards)].append(line)
    for k, part in enumerate(parts):
        (out_dir / f"shard-{k:03d}.jsonl").write_bytes(b"".join(part))
    sidecar = main.with_name(main.stem + "_failures.jsonl")
    if sidecar.exists():
        records: list[list[bytes]] = [[] for _ in range(shards)]
        for line in sidecar.read_bytes().splitlines(keepends=True):
            records[home.get(json.loads(line).get("_ng_task_index"), 0)].append(line)
        for k, chunk in enumerate(records):
            if chunk:
                (out_dir / f"shard-{k:03d}_failures.jsonl").write_bytes(b"".join(chunk))
    done.write_text("")
    return out_dir


def bench_users(
    kind: str, pair: str, seed: int, rates: dict, runs: int, baseline: str | None = None, shards: int = SHARDS_DEFAULT
) -> None:
    """The user-facing scales on a named pair: rerun, xdist, cores, shards; protocol and memory on their own."""
    pair = OWN_PAIR.get(kind, pair)
    tasks, repeats, kb = SCALES[pair]
    if pair in OWN_FLIP_RATE:
        rates = {**rates, "flip_rate": OWN_FLIP_RATE[pair]}
    out, manifest = ensure_pair(pair, tasks, repeats, kb, seed, rates)
    old, new = out / "old" / "rollouts.jsonl", out / "new" / "rollouts.jsonl"
    sidecar = out / "new" / "rollouts_failures.jsonl"
    files = [old, new] + ([sidecar] if sidecar.exists() else [])
    warm(files)
    rel = lambda p: str(p.relative_to(out))  # noqa: E731
    gate = [PY, "-m", "pytest", "-q", f"--parity-old={rel(old)}", f"--parity-new={rel(new)}"]
    no_cache = ["-p", "no:cacheprovider"]
    # an install reads with the pydantic-core skeleton; one before the skeleton read with the full parser
    default, before_default = {}, {"PARITY_PARSER": "full"}
    json_cmd = ("json.loads", [PY, "-c", JSON_FLOOR, *map(rel, files)], {}, None)
    if not WARMED:  # one untimed run, so that bytecode caches exist before anything is timed
        # (--tb=line: on a pair of many flips pytest's own failure section would otherwise take most of it)
        measure("warm-up", [*gate, "-p", "no:cacheprovider", "--tb=line"], out, out / "out_warmup.txt")
        WARMED.append(True)
    print(
        f"\n== {kind} on the {pair} pair ({sum(p.stat().st_size for p in files) / 1e6:.0f} MB both sides, "
        f"{manifest['tasks_joined']} items), fastest of {runs}"
    )
    if kind == "rerun":
        cache, blocked = out / "bench-cache", out / "bench-cache-blocked"
        clear = lambda: shutil.rmtree(cache, ignore_errors=True)  # noqa: E731

        def block() -> None:
            """pytest's cache, where a file stands in the gate's directory: no entry can be written."""
            shutil.rmtree(blocked, ignore_errors=True)
            (blocked / "d").mkdir(parents=True)
            (blocked / "d" / "rollout-parity").write_text("")

        cached = [*gate, "-o", f"cache_dir={cache}"]
        task = one_task(old)
        items = manifest["tasks_joined"]
        trivial = rel(trivial_test_file(out, items))
        commands = [
            ("no cacheprovider", [*gate, *no_cache], default, None),
            ("no gate entries", [*gate, "-o", f"cache_dir={blocked}"], default, block),
            ("first run", cached, default, clear),
            (f"-k {task}", [*cached, "-k", task], default, None),
            (
                "trivial -k one",
                [PY, "-m", "pytest", "-q", *no_cache, trivial, "-k", f"test_t and {items // 2}"],
                {},
                None,
            ),
        ]
        best = timed_best(commands, out, runs)
        nc, without, first, rerun, alone = (best[c[0]] for c in commands)
        table(list(best.values()))
        print(f"   (-k one task / first run, for information: {rerun.wall / first.wall:.2f}x)")
        floor_line(
            "cache write",
            first.wall / without.wall,
            FLOORS["cache write"],
            f"first run {first.wall:.2f}s / the same run writing no gate entry {without.wall:.2f}s",
        )
        print(
            f"   (first run / -p no:cacheprovider, which also drops pytest's own lastfailed and node-id "
            f"files: {first.wall / nc.wall:.2f}x)"
        )
        floor_line(
            "-k rerun",
            rerun.wall / alone.wall,
            FLOORS["-k rerun"],
            f"-k one task {rerun.wall:.2f}s / pytest alone, -k one of {items} no-op tests {alone.wall:.2f}s",
        )
        memory_line(list(best.values()), pair)
    elif kind == "xdist":
        trivial = [PY, "-m", "pytest", "-q", *no_cache, rel(trivial_test_file(out, manifest["tasks_joined"]))]
        beside = rel(trivial_test_file(out, 1))  # a test of the user's own: then the run is distributed
        # for information: as many tests with the gate's outcomes, whose failures each xdist worker's
        # terminal reporter also renders (no-op tests all pass, so they never pay for that)
        measure("warm-up", [*gate, *no_cache], out, out / "out_gate.txt")
        counts = outcome_counts((out / "out_gate.txt").read_text(errors="replace").strip().splitlines()[-1])
        same = [PY, "-m", "pytest", "-q", *no_cache, rel(outcome_test_file(out, *counts.values()))]
        commands = [
            ("serial", [*gate, *no_cache], default, None),
            ("-n 2", [*gate, *no_cache, "-n", "2"], default, None),
            ("-n 2, a test beside", [*gate, *no_cache, "-n", "2", beside], default, None),
            ("trivial serial", trivial, {}, None),
            ("trivial -n 2", [*trivial, "-n", "2"], {}, None),
            ("same outcomes serial", same, {}, None),
            ("same outcomes -n 2", [*same, "-n", "2"], {}, None),
        ]
        best = timed_best(commands, out, runs)
        serial, dist = best["serial"], best["-n 2"]
        t_serial, t_dist = best["trivial serial"], best["trivial -n 2"]
        table(list(best.values()))
        added, t_added = dist.wall - serial.wall, t_dist.wall - t_serial.wall
        floor_line(
            "xdist adds",
            added / t_added if t_added > 0 else float("inf"),
            FLOORS["xdist adds"],
            f"-n 2 adds {added:+.2f}s to the gate, {t_added:+.2f}s to as many no-op tests",
        )
        o_serial, o_dist = best["same outcomes serial"], best["same outcomes -n 2"]
        o_added = o_dist.wall - o_serial.wall
        cpu = lambda m: m.user + m.sys  # noqa: E731
        print(
            f"   (-n 2 adds {added / o_added if o_added > 0 else float('inf'):.2f}x what it adds to as many tests "
            f"with the gate's outcomes: {added:+.2f}s / {o_added:+.2f}s wall; by CPU "
            f"{cpu(dist) - cpu(serial):+.2f}s / {cpu(o_dist) - cpu(o_serial):+.2f}s, no-op tests "
            f"{cpu(t_dist) - cpu(t_serial):+.2f}s)"
        )
        mixed = best["-n 2, a test beside"]
        print(
            f"   (-n 2 / serial: the gate {dist.wall / serial.wall:.2f}x, no-op tests {t_dist.wall / t_serial.wall:.2f}x; "
            f"with a test file beside the gate's {mixed.wall / serial.wall:.2f}x, {mixed.tree_mb:.0f} MB summed over "
            f"{mixed.processes} processes)"
        )
        memory_line([serial, dist], pair)
    elif kind == "protocol":
        measure("warm-up", [*gate, *no_cache], out, out / "out_gate.txt")
        counts = outcome_counts((out / "out_gate.txt").read_text(errors="replace").strip().splitlines()[-1])
        same = rel(outcome_test_file(out, counts["passed"], counts["failed"], counts["xfailed"]))
        commands = [
            ("gate", [*gate, *no_cache], default, None),
            ("same outcomes", [PY, "-m", "pytest", "-q", *no_cache, same], {}, None),
        ]
        best = timed_best(commands, out, runs)
        table(list(best.values()))
        gate_run, plain = best["gate"], best["same outcomes"]
        shown = ", ".join(f"{n} {word}" for word, n in counts.items())
        floor_line(
            "protocol",
            gate_run.wall / plain.wall,
            FLOORS["protocol"],
            f"gate {gate_run.wall:.2f}s / {sum(counts.values())} parametrized tests ({shown}) {plain.wall:.2f}s",
        )
    elif kind == "flips":
        # pytest's failure section compares every failure with every stored report unless --tb=line or
        # --tb=no: with thousands of failures that is most of the run, for any suite; the gate's floor
        # is plain parametrized tests of the same outcomes under the same --tb=line
        line = ["--tb=line"]
        measure("warm-up", [*gate, *no_cache, *line], out, out / "out_gate.txt")
        counts = outcome_counts((out / "out_gate.txt").read_text(errors="replace").strip().splitlines()[-1])
        same = rel(outcome_test_file(out, counts["passed"], counts["failed"], counts["xfailed"]))
        commands = [
            ("gate --tb=line", [*gate, *no_cache, *line], default, None),
            ("same outcomes --tb=line", [PY, "-m", "pytest", "-q", *no_cache, *line, same], {}, None),
        ]
        best = timed_best(commands, out, runs)
        table(list(best.values()))
        gate_run, plain = best["gate --tb=line"], best["same outcomes --tb=line"]
        shown = ", ".join(f"{n} {word}" for word, n in counts.items())
        floor_line(
            "flips wall",
            gate_run.wall / plain.wall,
            FLOORS["flips wall"],
            f"gate {gate_run.wall:.2f}s / {sum(counts.values())} parametrized tests ({shown}) {plain.wall:.2f}s",
        )
        floor_line(
            "flips memory",
            gate_run.tree_mb / plain.tree_mb,
            FLOORS["flips memory"],
            f"peak RSS summed {gate_run.tree_mb:.1f} MB / {plain.tree_mb:.1f} MB",
        )
    elif kind == "memory":
        trivial = [PY, "-m", "pytest", "-q", *no_cache, rel(trivial_test_file(out, manifest["tasks_joined"]))]
        commands = [("gate", [*gate, *no_cache], default, None), ("trivial", trivial, {}, None)]
        best = timed_best(commands, out, runs)
        table(list(best.values()))
        gate_run, plain = best["gate"], best["trivial"]
        floor_line(
            "memory 100k",
            gate_run.tree_mb / plain.tree_mb,
            FLOORS["memory 100k"],
            f"peak RSS summed {gate_run.tree_mb:.1f} MB / {manifest['tasks_joined']} trivial parametrized "
            f"tests {plain.tree_mb:.1f} MB (wall {gate_run.wall:.2f}s / {plain.wall:.2f}s)",
        )
    elif kind == "shards":
        new_dir, old_dir = split_side(new, out / "new-shards", shards), split_side(old, out / "old-shards", shards)
        warm(sorted(new_dir.glob("*.jsonl")) + sorted(old_dir.glob("*.jsonl")))
        one_file = [PY, "-m", "pytest", "-q", *no_cache, f"--parity-old={rel(old)}"]
        commands = [
            ("one file a side", [*one_file, f"--parity-new={rel(new)}"], default, None),
            (f"new in {shards} shards", [*one_file, f"--parity-new={rel(new_dir)}/shard-*.jsonl"], default, None),
            (
                f"old in {shards} shards",
                [
                    PY,
                    "-m",
                    "pytest",
                    "-q",
                    *no_cache,
                    f"--parity-old={rel(old_dir)}/shard-*.jsonl",
                    f"--parity-new={rel(new)}",
                ],
                default,
                None,
            ),
        ]
        best = timed_best(commands, out, runs)
        table(list(best.values()))
        whole, sharded, old_sharded = (best[c[0]] for c in commands)
        outcome = lambda m: re.sub(r" in [0-9.]+s.*", "", m.tail)  # noqa: E731 - the counts, not the time
        for other in (sharded, old_sharded):
            if outcome(other) != outcome(whole) or other.rc != whole.rc:
                FAILURES.append(f"shards: another outcome ({other.tail!r} vs {whole.tail!r})")
        floor_line(
            "shards",
            sharded.wall / whole.wall,
            FLOORS["shards"],
            f"new side in {shards} shards {sharded.wall:.2f}s / in one file {whole.wall:.2f}s",
        )
        print(
            f"   (the old side in {shards} shards: {old_sharded.wall / whole.wall:.2f}x, read in the reader child as "
            "one old file is)"
        )
        memory_line(list(best.values()), pair)
    else:  # cores
        one = ["taskset", "-c", "0"]
        commands = [
            json_cmd,
            ("default, 2 cores", [*gate, *no_cache], default, None),
            ("default, 1 core", [*one, *gate, *no_cache], default, None),
        ]
        if baseline:  # the same one-core runs with another install (the version before), in this run
            before = [baseline, *gate[1:], *no_cache]
            commands += [
                ("before, default, 1 core", [*one, *before], before_default, None),
            ]
        best = timed_best(commands, out, runs)
        j = best["json.loads"]
        table(list(best.values()))
        floor_line("2 cores", best["default, 2 cores"].wall / j.wall, FLOORS["2 cores"], "default install / json.loads")
        now = best["default, 1 core"]
        if baseline:
            was = best["before, default, 1 core"]
            floor_line(
                "1 core",
                now.wall / was.wall,
                1.0,
                f"taskset -c 0, this install / {baseline} (CPU {now.user + now.sys:.2f}s vs {was.user + was.sys:.2f}s)",
            )
        else:
            floor_line(
                "1 core",
                now.wall / j.wall,
                ONE_CORE_BEFORE,
                "taskset -c 0, gate / json.loads; floor: the same, measured before (pass --baseline)",
            )
        memory_line([m for label, m in best.items() if label != "json.loads" and not label.startswith("before")], pair)


def table(measures: list[Measure]) -> None:
    print(
        f"   {'run':<22} {'wall s':>7} {'user s':>7} {'sys s':>6} {'RSS MB':>7} {'sum MB':>7} {'at once':>7} "
        f"{'procs':>5} {'rc':>3}  last line"
    )
    for m in measures:
        print(
            f"   {m.label:<22} {m.wall:7.2f} {m.user:7.2f} {m.sys:6.2f} {m.rss_mb:7.1f} {m.tree_mb:7.1f} "
            f"{m.at_once_mb:7.1f} {m.processes:5d} {m.rc:>3}  {m.tail[:60]}"
        )


def bench_unused(pairs: int) -> bool:
    """The installed plugin's cost in a run without parity options: paired runs, median difference."""
    out = DATA / "unused"
    out.mkdir(parents=True, exist_ok=True)
    test = out / "test_one.py"
    test.write_text("def test_one():\n    pass\n")
    base = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", test.name]
    with_plugin = ("with plugin", base)
    without = ("-p no:rollout_parity", [*base, "-p", "no:rollout_parity"])
    for label, argv in (with_plugin, without):  # untimed: bytecode caches exist before timing
        measure(label, argv, out, out / "out.txt")
    walls: list[float] = []
    cpus: list[float] = []
    for i in range(pairs):
        order = (with_plugin, without) if i % 2 == 0 else (without, with_plugin)
        got = {label: measure(label, argv, out, out / "out.txt") for label, argv in order}
        a, b = got["with plugin"], got["-p no:rollout_parity"]
        if a.rc != 0 or b.rc != 0:
            print(f"   WARNING: exit status {a.rc}/{b.rc} (see {out / 'out.txt'})")
            return False
        walls.append(a.wall - b.wall)
        cpus.append((a.user + a.sys) - (b.user + b.sys))
    wall_ms, cpu_ms = statistics.median(walls) * 1000, statistics.median(cpus) * 1000
    print(f"\n== unused: pytest -q on one trivial test, with the plugin vs -p no:rollout_parity, {pairs} pairs")
    print(
        f"   median difference: wall {wall_ms:+.1f} ms, user+sys CPU {cpu_ms:+.1f} ms   "
        f"(floor: at most {UNUSED_FLOOR_MS:g} ms)   wall differences p25..p75 "
        f"{_quantile(walls, 0.25) * 1000:+.1f}..{_quantile(walls, 0.75) * 1000:+.1f} ms"
    )
    ok = wall_ms <= UNUSED_FLOOR_MS
    print(f"   {'within' if ok else 'ABOVE'} the floor")
    return ok


def bench_hostile_logs(flips: int = 200, log_mb: int = 8) -> bool:
    """Peak memory and report sizes with hostile logs: each flip's log one line of ``log_mb`` MiB, no newline.

    The same pair with 100-byte logs is the baseline; the gate reads a bounded tail of each log, so
    its peak must not grow with the logs (a margin of 50 MB), nor its JUnit and Markdown files.
    """
    out = DATA / "hostile-logs"
    results = {}
    for label, size in (("100-byte logs", 100), (f"{log_mb} MiB one-line logs", log_mb << 20)):
        shutil.rmtree(out, ignore_errors=True)
        (out / "old").mkdir(parents=True)
        (out / "new").mkdir()
        old_rows, new_rows = [], []
        for i in range(flips):
            logs = out / "new" / "logs" / f"s{i}"
            logs.mkdir(parents=True)
            with open(logs / "test-stdout.txt", "wb") as handle:
                if size > 4096:
                    handle.truncate(size)  # sparse: one line of NUL bytes, no disk used
                else:
                    handle.write(b"L" * size)
            old_rows.append(json.dumps({"task_id": f"t{i}", "reward": 1.0}))
            new_rows.append(json.dumps({"task_id": f"t{i}", "reward": 0.0, "verifier_logs_dir": f"logs/s{i}"}))
        (out / "old" / "rollouts.jsonl").write_text("\n".join(old_rows) + "\n")
        (out / "new" / "rollouts.jsonl").write_text("\n".join(new_rows) + "\n")
        argv = [
            PY,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--parity-old=old/rollouts.jsonl",
            "--parity-new=new/rollouts.jsonl",
            "--junitxml=j.xml",
            "--parity-markdown=s.md",
        ]
        results[label] = (
            measure(label, argv, out, out / "out.txt"),
            (out / "j.xml").stat().st_size,
            (out / "s.md").stat().st_size,
        )
    shutil.rmtree(out, ignore_errors=True)
    print(f"\n== hostile-logs: {flips} flips, each log one line without a newline")
    table([m for m, _, _ in results.values()])
    for label, (_, junit, md) in results.items():
        print(f"   {label:<24} JUnit {junit / 1e3:8.1f} KB   Markdown {md / 1e3:8.1f} KB")
    (base, _, _), (hostile, junit, _) = results.values()
    ok = hostile.rss_mb <= base.rss_mb + 50 and junit < 10 << 20
    print(f"   peak {base.rss_mb:.1f} -> {hostile.rss_mb:.1f} MB: {'bounded' if ok else 'GROWS WITH THE LOGS'}")
    return ok


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def versions() -> None:
    import pytest

    try:
        import xdist

        xd = f", pytest-xdist {xdist.__version__}"
    except ImportError:
        xd = ""
    print(f"Python {platform.python_version()} ({PY}), pytest {pytest.__version__}{xd}")
    print(f"{platform.platform()}, {os.cpu_count()} CPUs, {platform.machine()}")
    git = subprocess.run(
        ["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    )
    print(f"plugin source: {HERE.parent} at {git.stdout.strip() or 'unknown revision'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--scale",
        nargs="+",
        choices=[*SCALES, "rowsize", "unused", "hostile-logs", *USER_SCALES],
        help="default: small (or custom when --tasks/--repeats/--row-kb are given)",
    )
    ap.add_argument(
        "--pair",
        choices=list(SCALES),
        default="large",
        help="the pair the rerun, xdist and cores scales run on (default: large, the 2 GB pair)",
    )
    ap.add_argument(
        "--baseline",
        metavar="PYTHON",
        help="cores scale: also time the one-core runs with this "
        "interpreter (an environment with the previous version installed), as the floor",
    )
    ap.add_argument("--tasks", type=int)
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--row-kb", type=float, help="row size in KB (for rowsize: the smaller of the two sizes)")
    ap.add_argument("--flip-rate", type=float, default=0.02)
    ap.add_argument("--mask-rate", type=float, default=0.01)
    ap.add_argument("--missing-rate", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--runs", type=int, default=1, help="time each command N times (interleaved), keep the fastest wall (default 1)"
    )
    ap.add_argument(
        "--shards",
        type=int,
        default=SHARDS_DEFAULT,
        help=f"shards scale: how many shard files a side is split into (default {SHARDS_DEFAULT})",
    )
    ap.add_argument("--pairs", type=int, default=30, help="paired runs for --scale unused (default 30)")
    ap.add_argument(
        "--env-as-is",
        action="store_true",
        help="run children in the inherited environment (default: bytecode caching on, under benchmarks/.data/pycache)",
    )
    ap.add_argument("--clean", action="store_true", help="delete each scale's generated data after measuring it")
    a = ap.parse_args(argv)
    rates = dict(flip_rate=a.flip_rate, mask_rate=a.mask_rate, missing_rate=a.missing_rate)
    custom = any(v is not None for v in (a.tasks, a.repeats, a.row_kb))
    scales = a.scale or (["custom"] if custom else ["small"])

    versions()
    print(f"child environment: {child_env(a.env_as_is)}")
    DATA.mkdir(exist_ok=True)
    subprocess.run(["df", "-h", str(DATA)], check=False)
    results = []
    unused_ok = True
    for scale in scales:
        if scale == "unused":
            unused_ok = bench_unused(a.pairs)
            continue
        if scale == "hostile-logs":
            if not bench_hostile_logs():
                FAILURES.append("hostile-logs")
            continue
        if scale in USER_SCALES:
            bench_users(scale, a.pair, a.seed, rates, a.runs, a.baseline, a.shards)
            continue
        if scale == "rowsize":
            tasks, repeats, kb = (
                a.tasks or ROWSIZE_DEFAULT[0],
                a.repeats or ROWSIZE_DEFAULT[1],
                a.row_kb or ROWSIZE_DEFAULT[2],
            )
            jobs = [
                (f"rowsize-{tasks}x{repeats}x{kb:g}k", tasks, repeats, kb),
                (f"rowsize-{tasks}x{repeats}x{4 * kb:g}k", tasks, repeats, 4 * kb),
            ]
        elif scale == "custom":
            base = SCALES["small"]
            tasks, repeats, kb = a.tasks or base[0], a.repeats or base[1], a.row_kb or base[2]
            jobs = [(f"custom-{tasks}x{repeats}x{kb:g}k", tasks, repeats, kb)]
        else:
            tasks, repeats, kb = SCALES[scale]
            if custom:
                sys.exit("--tasks/--repeats/--row-kb go with --scale rowsize or no --scale, not with a named scale")
            jobs = [(scale, tasks, repeats, kb)]
        group = []
        for name, tasks, repeats, kb in jobs:
            group.append(bench(name, tasks, repeats, kb, a.seed, rates, a.runs))
            if a.clean:
                shutil.rmtree(DATA / name, ignore_errors=True)
        results.extend(group)
        if scale == "rowsize":
            small, big = (r["runs"][2] for r in group)
            print(
                f"\n   rowsize: rows x4 in size -> gate wall x{big.wall / small.wall:.2f}, "
                f"gate peak RSS {small.rss_mb:.1f} -> {big.rss_mb:.1f} MB ({big.rss_mb - small.rss_mb:+.1f} MB)"
            )
    if len(results) > 1:
        print(
            f"\n{'scale':<24} {'MB':>7} {'rows':>7} {'items':>6} {'gate s':>7} {'json s':>7} {'triv s':>7} "
            f"{'g/json':>6} {'g/triv':>6} {'gate MB':>8} {'json MB':>8} {'triv MB':>8}"
        )
        for r in results:
            j, t, g = r["runs"]
            print(
                f"{r['name']:<24} {r['size'] / 1e6:7.0f} {r['rows']:7d} {r['items']:6d} {g.wall:7.2f} {j.wall:7.2f} "
                f"{t.wall:7.2f} {g.wall / j.wall:6.2f} {g.wall / t.wall:6.2f} {g.rss_mb:8.1f} {j.rss_mb:8.1f} "
                f"{t.rss_mb:8.1f}"
            )
    if FAILURES:
        print(f"\nnot as expected (categories, or a ratio above its floor): {', '.join(FAILURES)}")
    if not unused_ok:
        print(f"\nthe unused plugin cost more than {UNUSED_FLOOR_MS:g} ms a run (median wall difference)")
    return 1 if FAILURES or not unused_ok else 0


if __name__ == "__main__":
    sys.exit(main())

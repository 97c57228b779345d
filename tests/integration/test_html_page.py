"""`--parity-html`: the self-contained report page, written by the plugin, and flips with context.

The page is rendered in headless Chromium when a chromium binary is on the machine (CI installs
the system's package); elsewhere that test skips and says why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, NEW, Gate, all_text, output_lines

REPO = EXAMPLES.parent
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def test_the_page_is_written_with_the_runs_verdict(gate: Gate) -> None:
    args = gate.mixed()
    (gate.path / "report").mkdir()
    result = gate.run(*args, "--parity-html=report/parity.html")
    assert result.ret == 1
    page = (gate.path / "report/parity.html").read_text(encoding="utf-8")
    assert '<span class="verdict v-fail">FAIL</span>' in page and "(exit status 1)" in page
    assert page.count('<tr class="flip">') == 3
    assert "| regex line 30" in page  # the failed flip's evidence, from its report
    assert "<svg" in page and not re.search(r"""(src|href)=["']?(https?:)?//""", page)


@pytest.mark.parametrize("target", ["missing-dir/parity.html", "adir"])
def test_an_unwritable_page_is_a_usage_error(gate: Gate, target: str) -> None:
    (gate.path / "adir").mkdir()
    args = gate.mixed()
    result = gate.run(*args, f"--parity-html={target}")
    assert result.ret == 4
    assert any(line.startswith("ERROR: --parity-html:") for line in output_lines(result)), output_lines(result)
    assert "Traceback" not in all_text(result)


def test_the_page_may_not_name_an_input(gate: Gate) -> None:
    args = gate.mixed()
    before = (gate.path / NEW).read_bytes()
    result = gate.run(*args, f"--parity-html={NEW}")
    assert result.ret == 4 and "--parity-html" in all_text(result)
    assert (gate.path / NEW).read_bytes() == before


@pytest.mark.slow
def test_under_xdist_the_page_is_written_once_with_every_flip(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-html=parity.html", "-n", "2")
    assert result.ret == 1
    page = (gate.path / "parity.html").read_text(encoding="utf-8")
    assert page.count('<tr class="flip">') == 3 and "| regex line 30" in page


# --- flips with context -------------------------------------------------------------------------


def _indexed_row(index: int, reward: float, question: str, answer: str) -> dict[str, object]:
    """A row of a server whose tasks have no id (flores200-like): `_ng_task_index`, a prompt, an answer."""
    return {
        "_ng_task_index": index,
        "_ng_rollout_index": 0,
        "reward": reward,
        "responses_create_params": {"input": [{"role": "user", "type": "message", "content": question}]},
        "response": {
            "output": [
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "let me think"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
            ]
        },
    }


def _indexed_pair(gate: Gate) -> list[str]:
    """40 tasks keyed on their index, no verifier logs: tasks 3 and 13 flip."""
    old, new = [], []
    for i in range(40):
        question = f"Translate sentence number {i} into French: the cat sleeps on the mat."
        old.append(_indexed_row(i, 1.0, question, f"Le chat dort sur le tapis ({i})."))
        new.append(
            _indexed_row(
                i,
                0.0 if i in (3, 13) else 1.0,
                question,
                f"The cat sleeps ({i})." if i in (3, 13) else f"Le chat dort sur le tapis ({i}).",
            )
        )
    return gate.pair(old, new)


def test_a_flip_without_logs_shows_both_last_messages_and_the_reason_once(gate: Gate) -> None:
    args = _indexed_pair(gate)
    result = gate.run(*args, "--parity-json=s.json", "--parity-markdown=s.md")
    assert result.ret == 1
    text = all_text(result)
    assert text.count("no verifier_logs_dir and no embedded verifier output") == 1  # the note, not each flip
    assert "2 flip(s) have no verifier output" in text
    assert "    new (losing) row's last assistant message:" in text and "    | The cat sleeps (3)." in text
    assert "    old (winning) row's last assistant message:" in text and "    | Le chat dort sur le tapis (3)." in text
    assert "    prompt: Translate sentence number 3 into French: the cat sleeps on the mat." in text
    markdown = (gate.path / "s.md").read_text(encoding="utf-8")
    assert "<em>Translate sentence number 13 into French: the cat sleeps on the mat.</em>" in markdown
    notes = json.loads((gate.path / "s.json").read_text(encoding="utf-8"))["notes"]
    assert sum("have no verifier output" in note for note in notes) == 1


def test_the_node_id_selects_exactly_one_task_keyed_on_its_index(gate: Gate) -> None:
    args = _indexed_pair(gate)
    by_k = gate.run(*args, "-k", "3")
    by_k.assert_outcomes(failed=2, passed=11)  # -k matches substrings: 3, 13, 23, 30-39
    one = gate.run(*args, f"{NEW}::3")
    one.assert_outcomes(failed=1)


def test_the_page_shows_the_prompt_beside_an_index(gate: Gate) -> None:
    args = _indexed_pair(gate)
    gate.run(*args, "--parity-html=parity.html")
    page = (gate.path / "parity.html").read_text(encoding="utf-8")
    assert re.search(r'<code>3</code><span class="excerpt">Translate sentence number 3 into French', page)


# --- in a real browser --------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _render(chromium: str, page: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """Chromium headless on the page, offline: no network, no profile of the user's."""
    return subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-extensions",
            "--no-first-run",
            f"--user-data-dir={page.parent / 'chromium-profile'}",
            "--proxy-server=127.0.0.1:9",
            "--window-size=1400,2600",
            *more,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_the_bundled_pairs_page_in_headless_chromium(tmp_path: Path) -> None:
    """The page README's picture shows (margin mode), as a 1400-pixel-wide browser builds and draws it."""
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no chromium binary on PATH (CI installs the system's `chromium` package)")
    page = tmp_path / "parity.html"
    run = subprocess.run(
        # the new file as the one test path: the gate alone, whatever the repository's testpaths say
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "examples/new/rollouts.jsonl",
            "--parity-old=examples/old/rollouts.jsonl",
            "--parity-new=examples/new/rollouts.jsonl",
            "--parity-margin=0.05",
            f"--parity-html={page}",
            "-q",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    # the DOM as Chromium built it after loading the page: what a reviewer's browser shows
    dom = _render(chromium, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr
    shown = dom.stdout
    assert '<span class="verdict v-inconclusive">INCONCLUSIVE</span>' in shown
    assert len(re.findall(r'<tr class="flip">', shown)) == 5  # three flips and two rerun candidates
    for task in ("gpt2-codegolf", "crack-7z-hash", "nginx-request-logging"):
        assert f"<code>{task}</code>" in shown
    # the eight compared tasks, each counted once by the circle it is drawn in
    assert sum(int(count) for count in re.findall(r'<circle [^>]*data-tasks="(\d+)"', shown)) == 8
    assert "1/1 → 0/1" in shown and "1/1 → 1/2" in shown  # pass counts, old → new
    assert '<line x1="' in shown and 'class="bounds-out"' in shown  # the bounds that decide, outside ±M
    assert '<table class="statistics">' in shown and "<td>aggregate at margin ±0.05</td>" in shown
    assert re.search(r'<details class="identical"><summary>identical tasks \(3\)</summary>', shown)
    footer = re.search(r"<footer>(.*?)</footer>", shown, flags=re.S)
    assert footer is not None and "--parity-margin=0.05" in footer.group(1)
    assert re.search(r"old: <code>examples/old/rollouts.jsonl</code> \(crc32:[0-9a-f]{8}:\d+:\d+\)", footer.group(1))
    assert "--parity" not in shown.split("<footer>")[0].split("</style>")[1]  # no option but in the footer's command
    screenshot = tmp_path / "parity.png"
    shot = _render(chromium, page, f"--screenshot={screenshot}")
    assert shot.returncode == 0, shot.stderr
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a page was drawn, not a blank one

"""Every text the plugin shows names the gate's settings by their command-line options: the core
leaves a slot where a message names a setting, and no slot reaches a terminal, a report file or
an error line (`core/vocabulary.py`)."""

from __future__ import annotations

from .conftest import Gate, all_text, harbor_row, legacy_row, output_lines

SLOT_CHARS = ("\ue000", "\ue001")


def test_reports_and_notes_name_the_options(gate: Gate) -> None:
    names = [f"t{i:02d}" for i in range(12)]
    old = [legacy_row(name, 1.0) for name in names for _ in range(2)]
    new = [harbor_row(name, 1.0 if i % 3 else 0.0, index=i) for i, name in enumerate(names)]
    args = gate.pair(old, new)
    outputs = ["--parity-json=s.json", "--parity-markdown=s.md", "--parity-html=s.html", "--junitxml=j.xml"]
    result = gate.run(*args, *outputs, "--parity-margin=0.05")
    texts = {"terminal": all_text(result)}
    texts.update(
        {name: (gate.path / name).read_text(encoding="utf-8") for name in ("s.json", "s.md", "s.html", "j.xml")}
    )
    assert {name: [c for c in SLOT_CHARS if c in text] for name, text in texts.items()} == {name: [] for name in texts}
    note = "several rows on a side; they are compared on the mean reward: t00, t01"
    assert "and 2 more (see --parity-json)" in next(line for line in output_lines(result) if note in line)
    assert "and 2 more (see --parity-json)" in texts["s.json"]
    assert "and 2 more \\(see --parity-json\\)" in texts["s.md"]  # escaped for Markdown
    assert "the HTML report, `--parity-html=FILE`." in texts["s.md"]


def test_the_html_page_names_the_margin_option(gate: Gate) -> None:
    args = gate.mixed()
    result = gate.run(*args, "--parity-html=s.html")
    page = (gate.path / "s.html").read_text(encoding="utf-8")
    assert result.ret == 1 and not any(c in page for c in SLOT_CHARS)
    assert "no margin given: the interval against 0 (with --parity-margin, against the ±margin band)" in page


def test_an_input_error_names_the_option(gate: Gate) -> None:
    rows = [{**legacy_row("a", 1.0), "agent_ref": {"name": name}} for name in ("x", "y")]
    args = gate.pair(rows, rows)
    result = gate.run(*args)
    assert result.ret == 4
    (line,) = [line for line in output_lines(result) if line.startswith("ERROR:")]
    assert line.endswith(
        "choose one with --parity-agent NAME (both sides) or --parity-old-agent / --parity-new-agent NAME"
    )

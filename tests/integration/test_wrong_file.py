"""An input dataset or a Git LFS pointer given as a side: one line naming the file and what it is."""

from __future__ import annotations

from pathlib import Path

from .conftest import Gate, all_text, output_lines

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
DATASET = REAL_FILES / "resources_servers" / "multichallenge" / "data" / "example_rollouts.jsonl"
ROLLOUTS = REAL_FILES / "resources_servers" / "bigcodebench" / "data" / "example_rollouts.jsonl"


def assert_one_error(gate: Gate, *args: str) -> str:
    result = gate.run(*args)
    lines = output_lines(result)
    assert result.ret == 4, lines
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), lines
    assert "Traceback" not in all_text(result)
    return lines[0]


def test_input_dataset_as_new_side(gate: Gate) -> None:
    gate.write("old.jsonl", ROLLOUTS.read_bytes())
    gate.write("new.jsonl", DATASET.read_bytes())
    line = assert_one_error(gate, "--parity-old=old.jsonl", "--parity-new=new.jsonl")
    assert line == "ERROR: new.jsonl: an input dataset, not rollouts (no row has a reward field)"


def test_lfs_pointer_as_old_side(gate: Gate) -> None:
    gate.write("old.jsonl", "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 9\n")
    gate.write("new.jsonl", ROLLOUTS.read_bytes())
    line = assert_one_error(gate, "--parity-old=old.jsonl", "--parity-new=new.jsonl", "--parity-json=s.json")
    assert line == "ERROR: old.jsonl: a Git LFS pointer, not the file: run git lfs pull"
    assert not (gate.path / "s.json").exists()

"""A wrong file given as a side (a dataset, an LFS pointer, a sidecar, a JSON array, zstd, the other
side's file): one line naming the file and what it is. Compressed files are read as they are."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from .conftest import OLD, Gate, assert_one_error, dump, harbor_row, legacy_row, output_lines

REAL_FILES = Path(__file__).resolve().parents[1] / "data" / "real_files"
DATASET = REAL_FILES / "resources_servers" / "multichallenge" / "data" / "example_rollouts.jsonl"
ROLLOUTS = REAL_FILES / "resources_servers" / "bigcodebench" / "data" / "example_rollouts.jsonl"


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


SAME_FILE = "--parity-allow-same-file for a smoke test"


@pytest.mark.parametrize("spelling", ["same path", "symlink", "hard link"])
def test_both_sides_the_same_file_is_a_usage_error(gate: Gate, spelling: str) -> None:
    gate.write("new.jsonl", ROLLOUTS.read_bytes())
    old = {"same path": "new.jsonl", "symlink": "latest.jsonl", "hard link": "copy.jsonl"}[spelling]
    if spelling == "symlink":
        (gate.path / old).symlink_to(gate.path / "new.jsonl")
    elif spelling == "hard link":
        os.link(gate.path / "new.jsonl", gate.path / old)
    line = assert_one_error(gate, f"--parity-old={old}", "--parity-new=new.jsonl")
    assert line == (
        "ERROR: --parity-old and --parity-new name the same file (new.jsonl): a file compared with itself "
        f"shows nothing; give {SAME_FILE}"
    )


def test_same_file_allowed_by_the_ini_key(gate: Gate) -> None:
    gate.write("new.jsonl", ROLLOUTS.read_bytes())
    gate.pytester.makeini("[pytest]\nparity_allow_same_file = true\n")
    result = gate.run("--parity-old=new.jsonl", "--parity-new=new.jsonl")
    assert result.ret == 0, output_lines(result)
    assert "note: both sides are the same file" in result.outlines


def test_a_copy_is_not_the_same_file(gate: Gate) -> None:
    gate.write("old.jsonl", ROLLOUTS.read_bytes())
    gate.write("new.jsonl", ROLLOUTS.read_bytes())
    # two files, not one: the run goes on, and the copy item fails (a copy is no evidence)
    result = gate.run("--parity-old=old.jsonl", "--parity-new=new.jsonl")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["FAILED new.jsonl::parity-copy - *"])


def test_sidecar_as_a_side(gate: Gate) -> None:
    gate.write("old.jsonl", ROLLOUTS.read_bytes())
    gate.write(
        "new/rollouts_failures.jsonl",
        json.dumps(
            {"_ng_failure_class": "agent_run_error", "task_id": "x", "_ng_task_index": 0, "_ng_rollout_index": 0}
        )
        + "\n",
    )
    line = assert_one_error(gate, "--parity-old=old.jsonl", "--parity-new=new/rollouts_failures.jsonl")
    assert line.startswith("ERROR: new/rollouts_failures.jsonl: a failures sidecar")
    assert "give its main file new/rollouts.jsonl" in line


def test_json_array_as_a_side(gate: Gate) -> None:
    rows = [json.loads(line) for line in ROLLOUTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    gate.write("old.jsonl", ROLLOUTS.read_bytes())
    gate.write("new.json", json.dumps(rows, indent=2))
    line = assert_one_error(gate, "--parity-old=old.jsonl", "--parity-new=new.json")
    assert line == "ERROR: new.json:1: a JSON array, not JSON Lines (one object per line): convert it with jq -c '.[]'"


def test_zstd_as_a_side(gate: Gate) -> None:
    gate.write("old.jsonl", ROLLOUTS.read_bytes())
    gate.write("new.jsonl.zst", b"\x28\xb5\x2f\xfd\x04\x00")
    line = assert_one_error(gate, "--parity-old=old.jsonl", "--parity-new=new.jsonl.zst")
    assert "a zstd-compressed file" in line and "(zstd -d new.jsonl.zst)" in line


def test_gzip_side_with_its_flip_output(gate: Gate) -> None:
    """A gzip new side runs like the plain file; the flip's embedded output is read again from it."""
    gate.write(OLD, [legacy_row("fix-git", 1.0), legacy_row("regex-log", 1.0)])
    new = dump([harbor_row("fix-git", 1.0), harbor_row("regex-log", 0.0, index=1, test_output="boom: 42\n")])
    gate.write("new/rollouts.jsonl.gz", gzip.compress(new.encode()))
    result = gate.run(f"--parity-old={OLD}", "--parity-new=new/rollouts.jsonl.gz", "--parity-json=s.json")
    result.assert_outcomes(passed=1, failed=1)
    assert "    | boom: 42" in result.outlines
    assert json.loads((gate.path / "s.json").read_text(encoding="utf-8"))["counts"]["flipped"] == 1

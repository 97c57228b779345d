"""Pairing a task's rows per rollout when both sides hold the same trajectories (docs/semantics.md,
"Verifier disagreements"): by `_ng_rollout_index`, by `_ng_rollout_id` where indices are reused, else
by an equal trajectory; never for a rerun. Paired once, by the comparison."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_rollout_parity.core.api import compare_loaded
from pytest_rollout_parity.core.judging.classify import (
    categorize,
    first_disagreement,
    rollout_pairs,
    summarize_side,
    trajectory_digest,
    with_rollout_pairs,
)
from pytest_rollout_parity.core.model import CompareResult, Join, RowCounts, TaskComparison
from pytest_rollout_parity.core.reading import jsonl_lines, loading
from pytest_rollout_parity.core.reading.loaded_side import SideRequest
from pytest_rollout_parity.core.reading.row_facts import reduce_row


def row(reward: float, text: str, rollout: Optional[int] = None, prompt: str = "2+2?", **extra: Any) -> dict[str, Any]:
    """A row shaped as NeMo Gym writes one: the trajectory is its input and `response.output`."""
    found: dict[str, Any] = {
        "responses_create_params": {"input": [{"role": "user", "content": prompt}]},
        "response": {"id": "resp_x", "output": [{"id": f"msg_{text}", "type": "message", "content": text}]},
        "reward": reward,
        **extra,
    }
    if rollout is not None:
        found["_ng_rollout_index"] = rollout
    return found


def task(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> TaskComparison:
    """The task as the comparison leaves it: categorized, then paired."""
    sides = [summarize_side([reduce_row(r, line=i + 1, keep=True) for i, r in enumerate(rows)]) for rows in (old, new)]
    return with_rollout_pairs([categorize("t", sides[0], sides[1])])[0]


def test_same_trajectories_pair_by_rollout_index_whatever_the_order() -> None:
    old = [row(1.0, "a", 0), row(0.0, "b", 1), row(1.0, "c", 2)]
    new = [row(1.0, "c", 2), row(1.0, "b", 1), row(1.0, "a", 0)]
    found = task(old, new)
    pairs = rollout_pairs(found)
    assert pairs is not None
    assert [(p.old.rollout, p.new.rollout, p.agrees) for p in pairs] == [(0, 0, True), (1, 1, False), (2, 2, True)]
    assert sum(not p.agrees for p in pairs) == 1


def test_without_rollout_indices_rows_pair_by_equal_trajectories() -> None:
    old = [row(1.0, "a"), row(0.0, "b")]
    new = [row(1.0, "b"), row(1.0, "a")]
    pairs = rollout_pairs(task(old, new))
    assert pairs is not None
    assert [(p.old.line, p.new.line) for p in pairs] == [(1, 2), (2, 1)]
    assert sum(not p.agrees for p in pairs) == 1


def test_a_repeated_rollout_index_leaves_the_pairing_to_the_trajectories() -> None:
    pairs = rollout_pairs(task([row(1.0, "a", 0), row(1.0, "b", 0)], [row(0.0, "a", 0), row(1.0, "b", 1)]))
    assert pairs is not None and [(p.old.line, p.new.line, p.agrees) for p in pairs] == [(1, 1, False), (2, 2, True)]


def test_a_rollout_one_side_lacks_leaves_the_others_paired() -> None:
    found = task([row(1.0, "a", 0)], [row(0.0, "a", 0), row(1.0, "b", 1)])
    assert found.pairs is not None and [p.old.rollout for p in found.pairs] == [0] and found.disagreements == 1


def test_a_rerun_does_not_pair() -> None:
    """The same indices, other trajectories (a real rerun): no pairs, judged as independent runs."""
    assert rollout_pairs(task([row(1.0, "a", 0), row(1.0, "b", 1)], [row(0.0, "x", 0), row(1.0, "b", 1)])) is None
    assert rollout_pairs(task([row(1.0, "a"), row(1.0, "b")], [row(0.0, "b"), row(1.0, "y")])) is None


def test_rows_that_cannot_pair_one_to_one_do_not() -> None:
    # a repeated trajectory, no trajectory at all
    assert rollout_pairs(task([row(1.0, "a"), row(1.0, "b")], [row(0.0, "a"), row(1.0, "a")])) is None
    bare = [{"reward": 1.0, "_ng_rollout_index": 0}]
    assert rollout_pairs(task(bare, [{"reward": 0.0, "_ng_rollout_index": 0}])) is None


@pytest.mark.parametrize("indexed", [True, False])
def test_a_masked_row_takes_no_part_and_the_rest_still_pair(indexed: bool) -> None:
    """One masked row on one side hides no disagreement: the other rows pair (by index, or by
    their trajectories), and the masked row's partner stays unpaired."""
    at = (lambda i: i) if indexed else (lambda i: None)
    old = [row(1.0, "a", at(0)), row(1.0, "b", at(1)), row(1.0, "c", at(2), mask_sample=True)]
    new = [row(0.0, "a", at(0)), row(1.0, "b", at(1)), row(1.0, "c", at(2))]
    found = task(old, new)
    assert found.pairs is not None and [(p.old.line, p.new.line) for p in found.pairs] == [(1, 1), (2, 2)]
    assert (found.category, found.disagreements) == ("flipped", 1)
    new[0]["mask_sample"] = True  # the disagreeing rollout masked on the other side too: nothing left to disagree
    assert task(old, new).disagreements == 0


def test_another_trajectory_under_the_same_index_is_a_rerun_however_the_rows_are_masked() -> None:
    old = [row(1.0, "a", 0), row(1.0, "b", 1, mask_sample=True)]
    assert task(old, [row(0.0, "x", 0), row(1.0, "b", 1)]).pairs is None


def test_an_agent_error_row_takes_no_part_and_a_disagreement_beside_it_fails() -> None:
    """One rollout rescored 1 -> 0 in a task whose other rollout broke on a side: a verifier
    disagreement fails like any other, whatever else the task holds (not a rerun candidate), and
    the broken row does not pair. One rule, whether the disagreement cancels in the mean or not."""
    old = [row(1.0, "a", 0), row(1.0, "b", 1), row(0.0, "c", 2)]
    regressed = task(old, [row(0.0, "a", 0), row(1.0, "b", 1), row(0.0, "c", 2, error="sandbox died")])
    assert (regressed.category, regressed.winner, regressed.disagreements) == ("flipped", "old", 1)
    assert regressed.pairs is not None and [p.old.rollout for p in regressed.pairs] == [0, 1]
    assert regressed.new is not None and regressed.new.agent_error == "error: sandbox died"
    cancelled = task(old, [row(0.0, "a", 0), row(1.0, "b", 1), row(1.0, "c", 2, error="sandbox died")])
    assert (cancelled.category, cancelled.winner, cancelled.disagreements) == ("flipped", None, 1)
    broken = task(old, [row(1.0, "a", 0), row(1.0, "b", 1), row(1.0, "c", 2, error="sandbox died")])
    assert (broken.category, broken.disagreements) == ("flipped_agent_error", 0)  # only the broken row differs


def test_a_game_whose_state_is_the_prompt_pairs_nothing_on_a_bare_answer() -> None:
    """Every rollout plays its own game (its state in the prompt) and answers `hit` with no message
    ids: the outputs are equal, the trajectories are not, and nothing pairs."""
    old = [row(float(r % 2 == 0), "hit", r, prompt=f"game {r} old") for r in range(4)]
    new = [row(float(r % 2 == 1), "hit", r, prompt=f"game {r} new") for r in range(4)]
    for rows in (old, new):
        for each in rows:
            del each["response"]["output"][0]["id"]
    assert task(old, new).pairs is None and task(old, new).category == "identical"
    for each in (*old, *new):
        del each["_ng_rollout_index"]
    assert task(old, new).pairs is None


def test_the_trajectory_digest_reads_the_value_not_its_spelling() -> None:
    a = {"response": {"output": [{"b": 1, "a": "é"}]}}
    b = {"response": {"output": [{"a": "é", "b": 1}]}}
    assert trajectory_digest(a) == trajectory_digest(b) is not None
    other = row(1.0, "a", prompt="another game state")  # the same output on another input
    assert trajectory_digest(other) != trajectory_digest(row(1.0, "a")) == trajectory_digest(row(0.0, "a"))
    assert trajectory_digest({"response": {"output": []}}) is None
    assert trajectory_digest({"reward": 1.0}) is None


def test_every_compared_task_is_paired_once_and_a_rerun_or_a_constant_task_stays_unpaired() -> None:
    flip = task([row(1.0, "a", 0), row(1.0, "b", 1)], [row(0.0, "a", 0), row(1.0, "b", 1)])
    agreeing = task([row(1.0, "a", 0), row(0.0, "b", 1)], [row(1.0, "a", 0), row(0.0, "b", 1)])
    same = task([row(1.0, "a", 0)], [row(1.0, "a", 0)])
    rerun = task([row(1.0, "a", 0)], [row(0.0, "x", 0)])
    assert [t.disagreements for t in (flip, agreeing, same, rerun)] == [1, 0, 0, 0]
    assert agreeing.category == "identical" and agreeing.pairs is not None and len(agreeing.pairs) == 2
    assert same.pairs is None and rerun.pairs is None  # one reward throughout: no pair can disagree
    pairs = rollout_pairs(same)  # paired when asked
    assert pairs is not None and pairs[0].agrees
    assert rollout_pairs(rerun) is None


def test_disagreements_that_cancel_in_the_mean_are_a_flip_without_a_winner() -> None:
    """Old 1, 0 and new 0, 1 on the same two trajectories: equal means, two verifier disagreements."""
    found = task([row(1.0, "a", 0), row(0.0, "b", 1)], [row(0.0, "a", 0), row(1.0, "b", 1)])
    assert (found.category, found.winner, found.disagreements) == ("flipped", None, 2)
    first = first_disagreement(found)
    assert first is not None and (first.rollout, first.loser) == (0, "new")
    result = CompareResult([found], Join("k", "k"), RowCounts(2, 2))
    counts = result.counts()
    assert (counts["flipped"], counts["flipped_old_win"], counts["flipped_new_win"]) == (1, 0, 0)
    assert counts["verifier_disagreements"] == 1 and counts["identical"] == 0


def test_the_first_disagreement_is_one_the_losing_side_lost() -> None:
    """Old 1, 0, 1 and new 0, 1, 0: the new side loses the task, and its first lost rollout is shown."""
    found = task(
        [row(0.0, "a", 0), row(1.0, "b", 1), row(1.0, "c", 2)], [row(1.0, "a", 0), row(0.0, "b", 1), row(0.0, "c", 2)]
    )
    assert found.loser == "new"
    first = first_disagreement(found)
    assert first is not None and first.rollout == 1 and first.loser == "new"


def test_reused_indices_pair_by_the_capture_id() -> None:
    """Two dispatches reuse rollout index 0; `_ng_rollout_id` tells them apart, the trajectories agree."""
    old = [row(1.0, "a", 0, _ng_rollout_id="r-1"), row(0.0, "b", 0, _ng_rollout_id="r-2")]
    new = [row(0.0, "b", 0, _ng_rollout_id="r-2"), row(0.0, "a", 0, _ng_rollout_id="r-1")]
    found = task(old, new)
    assert found.pairs is not None and [(p.old.line, p.new.line) for p in found.pairs] == [(1, 2), (2, 1)]
    assert found.disagreements == 1
    new[0]["response"]["output"][0]["content"] = "other"  # the id pairs it, but the trajectory differs
    assert task(old, new).pairs is None


def test_pairing_reads_each_row_at_most_once() -> None:
    """The comparison pairs; the flip message's first disagreement reads the pairing, no row."""
    reads: list[int] = []
    rows = {1: row(1.0, "a", 0), 2: row(0.0, "b", 1)}
    news = {1: row(0.0, "a", 0), 2: row(0.0, "b", 1)}

    def reader(source: dict[int, dict[str, Any]]) -> Any:
        return lambda facts: reads.append(facts.line) or source[facts.line]

    sides = [
        summarize_side([reduce_row(r, line=n) for n, r in source.items()], reader(source)) for source in (rows, news)
    ]
    paired = with_rollout_pairs([categorize("t", *sides)])[0]
    assert len(reads) == 4 and paired.disagreements == 1
    assert first_disagreement(paired) is not None and len(reads) == 4


@pytest.mark.parametrize("rollouts", [2, 8])
def test_a_rerun_without_indices_stops_at_its_first_row_with_no_equal(rollouts: int) -> None:
    """No index and no capture id: the old side's rows are read for their digests, then the new
    side's one at a time, and the first that finds no equal trajectory ends the pairing."""
    reads: list[str] = []
    old = {n: row(float(n % 2), f"old{n}") for n in range(1, rollouts + 1)}
    new = {n: row(float(n % 2 == 0), f"new{n}") for n in range(1, rollouts + 1)}

    def reader(name: str, source: dict[int, dict[str, Any]]) -> Any:
        return lambda facts: reads.append(name) or source[facts.line]

    sides = [
        summarize_side([reduce_row(r, line=n) for n, r in source.items()], reader(name, source))
        for name, source in (("old", old), ("new", new))
    ]
    assert with_rollout_pairs([categorize("t", *sides)])[0].pairs is None
    assert reads.count("old") == rollouts and reads.count("new") == 1


@pytest.mark.parametrize("indexed", [True, False])
def test_a_rerun_whose_responses_have_their_own_ids_reads_no_row(indexed: bool) -> None:
    """Each model call has its own `response.id`, and a re-verification keeps the row's response:
    where the ids differ the sides ran the task apart, told from the facts without reading a row (on
    a 2 GB pair, reading each mixed task's rows again doubled the run)."""
    reads: list[int] = []

    def called(reward: float, text: str, rollout: int, side: str) -> dict[str, Any]:
        found = row(reward, text, rollout if indexed else None)
        found["response"]["id"] = f"resp_{side}{rollout}"
        return found

    sources = [{n: called(float(n % 2 == k), f"t{n}", n, side) for n in (1, 2)} for k, side in enumerate("on")]
    sides = [
        summarize_side(
            [reduce_row(r, line=n) for n, r in source.items()], lambda f, s=source: reads.append(f.line) or s[f.line]
        )
        for source in sources
    ]
    assert with_rollout_pairs([categorize("t", *sides)])[0].pairs is None and reads == []
    for source in sources:  # the same calls on both sides (a re-verification): read, and paired
        for n, found in source.items():
            found["response"]["id"] = f"resp_{n}"
    sides = [
        summarize_side(
            [reduce_row(r, line=n) for n, r in source.items()], lambda f, s=source: reads.append(f.line) or s[f.line]
        )
        for source in sources
    ]
    assert with_rollout_pairs([categorize("t", *sides)])[0].disagreements == 2 and reads


@given(
    rewards=st.lists(st.sampled_from([0.0, 1.0, 0.5]), min_size=1, max_size=8),
    data=st.data(),
    indexed=st.booleans(),
)
def test_a_rescored_copy_pairs_and_counts_each_changed_reward_whatever_is_masked_or_broken(
    rewards: list[float], data: st.DataObject, indexed: bool
) -> None:
    """A rescored copy in any order on the new side, up to half its rollouts masked or broken (an
    agent error): with indices on either side; without, on the new side only (a re-verification's
    failed judge calls). The other rollouts pair, each with its own trajectory, every disagreement
    among them is counted, and a task holding one fails as a flip whatever else it holds."""
    n = len(rewards)
    changed = data.draw(st.sets(st.integers(0, n - 1)))
    left_out = data.draw(st.sets(st.integers(0, n - 1), max_size=n // 2))
    how = {i: data.draw(st.sampled_from(["mask_sample", "error"])) for i in left_out}
    where = {i: data.draw(st.sampled_from(["old", "new"])) if indexed else "new" for i in left_out}
    sides: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for i, r in enumerate(rewards):
        for name, reward in (("old", r), ("new", 1.0 - r if i in changed else r)):
            extra = {how[i]: True if how[i] == "mask_sample" else "sandbox died"} if where.get(i) == name else {}
            sides[name].append(row(reward, f"t{i}", i if indexed else None, **extra))
    found = task(sides["old"], data.draw(st.permutations(sides["new"])))
    pairs = rollout_pairs(found)
    assert pairs is not None and len(pairs) == n - len(left_out)
    assert all(p.old.row["response"] == p.new.row["response"] for p in pairs)  # type: ignore[index]
    assert found.disagreements == sum(1 for i in changed if rewards[i] != 0.5 and i not in left_out)
    assert found.category == "flipped" or not found.disagreements


def test_a_compressed_pair_is_read_again_in_one_pass_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairing a gzipped re-verification reads each side's rows again through one open stream, in
    file order, whatever order the new side wrote them in: a row read through a fresh stream would
    decompress its file from the start again, so the pairing would cost rows x file size."""
    old = [row(float(r % 2), f"t{t}r{r}", r, prompt=f"task {t}", _ng_task_index=t) for t in range(20) for r in range(3)]
    new = [{**each, "reward": 1.0 - each["reward"] if n % 7 == 0 else each["reward"]} for n, each in enumerate(old)]
    paths = tmp_path / "old.jsonl.gz", tmp_path / "new.jsonl.gz"
    for path, rows in zip(paths, (old, new[::-1])):
        with gzip.open(path, "wt") as file:
            file.writelines(json.dumps(each) + "\n" for each in rows)
    opened: list[str] = []
    unpack = jsonl_lines.decompressed
    monkeypatch.setattr(jsonl_lines, "decompressed", lambda raw, shown: opened.append(shown) or unpack(raw, shown))
    loaded = [loading.load_side(SideRequest(str(path))) for path in paths]
    opened.clear()  # reading each side once, as the loading does, is not what is counted
    result = compare_loaded(*loaded)
    assert sum(task.pairs is not None for task in result.tasks) == 20
    assert sum(task.disagreements for task in result.tasks) == 9
    # in file order: one pass a file for the pairing, one for the verifier sample (not one a row)
    assert sorted(set(opened)) == sorted(map(str, paths)) and len(opened) <= 4


def test_a_side_of_many_shards_keeps_one_shards_files_open_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pairing every row of 300 shards a side must not hold 300 files open (a common limit is
    1,024 a process): the reader closes a shard's files when it moves to the next."""
    requests = []
    for name, flipped in (("old", False), ("new", True)):
        files = []
        for shard in range(300):
            rows = [row(float((r + flipped) % 2), f"s{shard}r{r}", r, prompt=f"task {shard}") for r in range(2)]
            path = tmp_path / name / f"part-{shard:03d}.jsonl"
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(json.dumps({**each, "task_id": f"t{shard}"}) + "\n" for each in rows))
            files.append((str(path), f"{name}/{path.name}"))
        requests.append(SideRequest(files[0][0], display=f"{name}/part-*.jsonl", shards=tuple(files)))
    loaded = [loading.load_side(request) for request in requests]
    live: set[int] = set()
    most = [0]
    opener = open

    class Counted:
        def __init__(self, handle: Any) -> None:
            self.handle = handle
            live.add(id(self))
            most[0] = max(most[0], len(live))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.handle, name)

        def close(self) -> None:
            live.discard(id(self))
            self.handle.close()

    monkeypatch.setattr(jsonl_lines, "open", lambda *args: Counted(opener(*args)), raising=False)
    result = compare_loaded(*loaded)
    assert sum(task.disagreements > 0 for task in result.tasks) == 300  # every row was paired and read
    assert not live and 1 <= most[0] <= 4

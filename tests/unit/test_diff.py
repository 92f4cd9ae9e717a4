"""How the main index proves itself the last snapshot from the diff's own rows
(engine/diff.py, ``MainIndex.paired`` and ``MainIndex.mismatch``): generated index and
staging contents, diffed here as the diff's job pairs them by key."""

from __future__ import annotations

import random

import pytest

from dbt.adapters.spark_refreshable.engine.diff import BAD_KEYS, MainIndex
from dbt.adapters.spark_refreshable.engine.load import StagedTotals

HASHES = (-(2**63), -1, 0, 1, 2**63 - 1)  # the ends of a 64-bit hash, besides drawn ones


def drawn_hash(rng: random.Random) -> int:
    return rng.choice(HASHES) if rng.random() < 0.2 else rng.randrange(-(2**63), 2**63)


def diffed(index: dict[int, int], staging: dict[int, int]) -> dict[str, tuple[int, int, int]]:
    """The diff's rows per op, as the job sums them: (rows, staging's hashes, the index's)."""
    ops: dict[str, tuple[int, int, int]] = {}
    for key in index.keys() | staging.keys():
        staged, main = staging.get(key), index.get(key)
        if staged == main:
            continue
        op = "I" if main is None else "D" if staged is None else "U"
        rows, staged_sum, main_sum = ops.get(op, (0, 0, 0))
        ops[op] = (rows + 1, staged_sum + (staged or 0), main_sum + (main or 0))
    return ops


def as_recorded(index: dict[int, int], staging_version: int = 7) -> MainIndex:
    return MainIndex(staging_version, len(index), str(sum(index.values())), ())


CASES = 300  # generated per test; a failure names its seed


def test_the_index_paired_with_any_snapshot_adds_up_to_what_was_recorded():
    for seed in range(CASES):
        rng = random.Random(seed)
        index = {key: drawn_hash(rng) for key in rng.sample(range(50), rng.randint(0, 30))}
        staging = {}
        for key in rng.sample(range(60), rng.randint(0, 40)):
            kept = key in index and rng.random() < 0.6
            staging[key] = index[key] if kept else drawn_hash(rng)
        staged = StagedTotals(len(staging), str(sum(staging.values())), 0)

        paired = as_recorded(index).paired(staged, diffed(index, staging))

        assert paired == (len(index), sum(index.values())), f"seed {seed}"
        assert as_recorded(index).mismatch(paired) is None, f"seed {seed}"


def test_an_index_that_is_not_the_recorded_snapshot_is_refused():
    for seed in range(CASES):
        rng = random.Random(seed)
        recorded = {key: drawn_hash(rng) for key in rng.sample(range(50), rng.randint(1, 30))}
        index = dict(recorded)  # staging's version read: one row lost, added or changed
        key = rng.choice(sorted(recorded))
        change = rng.choice(["lost", "added", "changed"])
        if change == "lost":
            del index[key]
        elif change == "added":
            index[100 + key] = drawn_hash(rng)
        else:
            index[key] = recorded[key] ^ (1 << rng.randrange(63))
        staging = {k: h if rng.random() < 0.7 else drawn_hash(rng) for k, h in recorded.items()}
        staged = StagedTotals(len(staging), str(sum(staging.values())), 0)

        paired = as_recorded(recorded).paired(staged, diffed(index, staging))

        refused = as_recorded(recorded).mismatch(paired)
        assert refused == "staging's version 7 is not the last snapshot", f"seed {seed} ({change})"


@pytest.mark.parametrize("bad", BAD_KEYS)
def test_a_key_not_paired_one_to_one_refuses_the_index(bad):
    index = as_recorded({1: 10, 2: 20})
    ops = {"U": (1, 11, 10), bad: (1, 20, 20)}

    assert index.paired(StagedTotals(2, "31", 0), ops) is None
    assert "could not pair one to one with staging's version 7" in index.mismatch(None)

"""The differential test's generator (tests/support/snapshots.py): reproducible from its
seed, and its canonical form compares content, not SQL equality."""

from __future__ import annotations

from tests.support.snapshots import KEY_KINDS, canonical, generate, move


def test_the_same_seed_generates_the_same_model() -> None:
    for kinds in KEY_KINDS:
        first, again = generate(5, 20, key_kinds=kinds), generate(5, 20, key_kinds=kinds)
        assert first.ddl() == again.ddl()
        assert all(canonical(first.day(d)) == canonical(again.day(d)) for d in (1, 2, 3))
    assert generate(5, 20).ddl() != generate(6, 20).ddl()


def test_keys_are_unique_within_every_day() -> None:
    model = generate(7, 40, key_kinds=("STRING", "DATE"))
    for day in (1, 2, 3):
        keys = [row[:3] for row in model.day(day)]
        assert len(keys) == len(set(keys))


def test_moves_keep_the_concatenation() -> None:
    assert move([1, 2], [3], True) == ([1], [2, 3])
    assert move([], [3, 4], True) == ([3], [4])
    assert move(None, None, True) == ([], [])  # NULL arrays stay arrays
    assert move("ab", None, False) == ("a", "b")


def test_canonical_compares_content() -> None:
    assert canonical(float("nan")) == canonical(float("nan"))
    assert canonical(-0.0) != canonical(0.0)
    assert canonical({"a": 1, "b": None}) == canonical({"b": None, "a": 1})
    assert canonical([None]) != canonical([])
    assert canonical(bytearray(b"x")) == canonical(b"x")

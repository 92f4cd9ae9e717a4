"""The differential test's generator (tests/support/snapshots.py): reproducible from its
seed, and its canonical form compares content, not SQL equality."""

from __future__ import annotations

import itertools

from pyspark.sql.types import VariantVal

from dbt.adapters.spark_refreshable.engine.naming import fold_name
from tests.support.snapshots import KEY_KINDS, canonical, from_variant, generate, move, quote


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


def variant(text: str) -> VariantVal:
    return VariantVal.parseJson(text)


def test_canonical_compares_variants_by_content_and_type() -> None:
    assert canonical(variant('{"a": 1, "b": [1.5]}')) == canonical(variant('{"b": [1.5], "a": 1}'))
    assert canonical(variant("1.5")) == canonical(variant("1.50"))  # trailing zeros: not shown
    assert canonical(variant("1")) != canonical(variant("1.0"))  # BIGINT, DECIMAL
    assert canonical(variant("1.0")) != canonical(variant("1.0e0"))  # DECIMAL, DOUBLE
    assert canonical(variant("0e0")) != canonical(variant("-0e0"))
    assert canonical(variant('"1"')) != canonical(variant("1"))
    assert canonical(variant("null")) != canonical(None)  # JSON null is not SQL NULL


def test_generated_variant_arrays_mix_types_and_swap_them_under_the_same_json() -> None:
    """Arrays inside variants hold elements of several types, and from one day to the next
    an array keeps its numbers while their types change (`[1, 1.0]` to `[1.0, 1]`, both
    `[1,1]` to Spark's to_json): what `schema_of_variant` alone does not tell apart."""

    def arrays(document):
        if isinstance(document, list):
            yield document
            document = dict(enumerate(document))
        if isinstance(document, dict):
            for inner in document.values():
                yield from arrays(inner)

    def retyped(old, new) -> bool:
        """The same numbers in the same order, of other types (as Spark prints them: 1)."""
        if not (isinstance(old, list) and isinstance(new, list) and len(old) == len(new)):
            return False
        numeric = ("int", "decimal", "double")
        pairs = list(zip(old, new, strict=True))
        return all(
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and {a[0], b[0]} <= set(numeric)
            and a[1] == b[1]
            for a, b in pairs
        ) and any(a[0] != b[0] for a, b in pairs)

    mixed = swapped = 0
    for seed in range(20):
        model = generate(seed, 30, key_kinds=KEY_KINDS[seed % len(KEY_KINDS)])
        keys = len(model.unique_key)
        days = [{row[:keys]: row for row in model.day(day)} for day in (1, 2, 3)]
        for before, after in itertools.pairwise(days):
            for key in before.keys() & after.keys():
                for old, new in zip(before[key], after[key], strict=True):
                    if not (isinstance(old, VariantVal) and isinstance(new, VariantVal)):
                        continue
                    document = from_variant(old)
                    mixed += sum(
                        len({e[0] for e in a if isinstance(e, tuple)}) > 1 for a in arrays(document)
                    )
                    swapped += retyped(document, from_variant(new))
    assert mixed > 50
    assert swapped > 0


def test_column_days_drop_bring_back_move_and_recase_value_columns() -> None:
    changed = {"late": 0, "gone": 0, "back": 0, "moved": 0, "recased": 0, "alike": 0}
    for seed in range(30):
        model = generate(seed, 5, key_kinds=KEY_KINDS[1], evolve_columns=True)
        again = generate(seed, 5, key_kinds=KEY_KINDS[1], evolve_columns=True)
        assert model.column_days == again.column_days
        assert generate(seed, 5, key_kinds=KEY_KINDS[1]).column_days is None
        days = model.column_days
        fixed = len(model.unique_key)
        for n, on in enumerate(days, 1):
            assert len(on.names) == fixed + len(on.present)
            spots = [model.ddl(n).find(quote(name) + " ") for name in on.names]
            assert -1 not in spots and spots == sorted(spots), (on.names, model.ddl(n))
            assert all(len(row) == len(on.names) for row in model.day(n))
            assert [*map(fold_name, on.names[:fixed])] == [*map(fold_name, model.unique_key)]
        one, two, three = (set(d.present) for d in days)
        changed["late"] += bool(two - one)
        changed["gone"] += bool(one - two)
        changed["back"] += bool((three - two) & one)
        changed["moved"] += list(days[1].present) != sorted(days[1].present)
        names = {fold_name(m): m for m in days[0].names}
        day1 = [names.get(fold_name(m), m) for m in days[2].names]  # late ones as they are
        changed["recased"] += any(a != m for a, m in zip(day1, days[2].names, strict=True))
        changed["alike"] += any(
            a.lower() != m.lower() for a, m in zip(day1, days[2].names, strict=True)
        )
    assert all(count >= 5 for count in changed.values()), changed


def test_nested_keys_hold_nulls_nans_and_zeros_respelled_under_the_same_key() -> None:
    """The struct and array keys (KEY_KINDS[1] and [2], last) draw NULL fields and elements,
    NaN, empty arrays, and keep their key while a zero inside them changes sign."""
    found = {"null": 0, "nan": 0, "empty": 0, "respelled": 0}
    for kinds in (KEY_KINDS[1], KEY_KINDS[2]):
        model = generate(3, 40, key_kinds=kinds)
        at = len(model.unique_key) - 1  # the nested key, last of the keys
        for day in (1, 2, 3):
            parts = [row[at] for row in model.day(day)]
            assert all(isinstance(p, tuple) for p in parts)
            found["null"] += sum(None in p for p in parts)
            found["nan"] += sum(any(v != v for v in p if isinstance(v, float)) for p in parts)
            found["empty"] += sum(p == () for p in parts)
        keys = len(model.unique_key)
        for before, after in itertools.pairwise(model.day(d) for d in (1, 2, 3)):
            earlier = {row[:keys]: row[at] for row in before}
            found["respelled"] += sum(
                canonical(earlier[row[:keys]]) != canonical(row[at])
                for row in after
                if row[:keys] in earlier
            )
    assert all(count > 0 for count in found.values()), found

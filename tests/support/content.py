"""Main compared with a snapshot by content, never by the engine's own row hash: collected
values in a canonical form (maps unordered, floats by their bits)."""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark_refreshable.engine.naming import fold_name
from tests.support.snapshots import canonical, quote


def collected(rows: list[Any], key_count: int) -> dict[Any, tuple]:
    """Rows (columns in the snapshot's order) by canonical key, canonical."""
    out: dict[Any, tuple] = {}
    for row in rows:
        values = tuple(canonical(v) for v in row)
        out[values[:key_count]] = values
    return out


def content_problems(
    spark: Any, main_table: str, snapshot: Any, key_count: int
) -> list[tuple[tuple | None, str]]:
    """How main differs from ``snapshot`` (a DataFrame) by content, as (key, what) pairs;
    [] when equal. Main's columns are matched to the snapshot's case-insensitively (Spark
    resolves names so, as ``fold_name`` folds them)."""
    names = snapshot.columns
    main = spark.table(main_table)
    by_fold = {fold_name(c): c for c in main.columns}
    missing = [n for n in names if fold_name(n) not in by_fold]
    if missing:
        return [(None, f"main has no column(s) {missing}; main: {main.columns}, snapshot: {names}")]
    main_rows = main.select(*[main[quote(by_fold[fold_name(n)])] for n in names]).collect()
    want = collected(snapshot.collect(), key_count)
    got = collected(main_rows, key_count)
    problems = []
    if len(main_rows) != len(got):
        problems.append((None, f"main has {len(main_rows) - len(got)} duplicate key(s)"))
    for key in sorted(set(want) | set(got), key=repr):
        if want.get(key) != got.get(key):
            what = f"key {key}:\n  snapshot: {want.get(key)}\n  main:     {got.get(key)}"
            problems.append((key, what))
    return problems

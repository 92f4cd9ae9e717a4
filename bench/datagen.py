"""TPC-H lineitem snapshots, generated offline with DuckDB's tpch extension (loaded from the
file the `duckdb-extension-tpch` package installs) and written as Parquet.

The base snapshot is TPC-H's lineitem at a scale factor; each scenario derives the next
snapshot from it, deterministically (hashes of the keys, no random state):

- ``tpch_refresh``: in the spirit of TPC-H's refresh functions, the lines of 0.1% of the
  orders are deleted, the lines of 0.1% new orders inserted, and ``l_comment`` changed in
  1% of the lines;
- ``no_change``: the base itself, in a new file;
- ``inputs_unchanged``: the base, read from a Delta table (``bench/project``'s
  ``lineitem_source``) that did not change since the last refresh;
- ``change_10pct`` / ``change_50pct``: ``l_comment`` changed in that share of the lines.
"""

from __future__ import annotations

from pathlib import Path

SCENARIOS = ("tpch_refresh", "no_change", "inputs_unchanged", "change_10pct", "change_50pct")
INPUTS_UNCHANGED = "inputs_unchanged"

# A line is picked for a change when hash(key) % 10000 < share in basis points.
CHANGED_COMMENT = (
    "CASE WHEN hash(l_orderkey, l_linenumber) % 10000 < {bp} "
    "THEN l_comment || ' (revised)' ELSE l_comment END AS l_comment"
)


def tpch_extension() -> Path:
    import duckdb_extension_tpch

    found = sorted(Path(duckdb_extension_tpch.__file__).parent.glob("extensions/*/tpch.*"))
    if not found:
        raise RuntimeError("duckdb-extension-tpch has no extension file: run `make setup`")
    return found[-1]


def generate(scale_factor: float, folder: Path) -> dict[str, Path]:
    """Write the base and every scenario's snapshot under ``folder``; name -> Parquet path.
    Reuses what an earlier run wrote for the same scale factor."""
    import duckdb

    folder.mkdir(parents=True, exist_ok=True)
    files = ("base", *(s for s in SCENARIOS if s != INPUTS_UNCHANGED))
    paths = {name: folder / f"{name}.parquet" for name in files}
    if all(path.exists() for path in paths.values()):
        return {**paths, INPUTS_UNCHANGED: paths["base"]}
    con = duckdb.connect()
    con.execute(f"LOAD '{tpch_extension()}'")
    con.execute(f"CALL dbgen(sf={float(scale_factor)})")
    columns = [row[0] for row in con.execute("DESCRIBE lineitem").fetchall()]

    def with_comment(bp: int) -> str:
        return ", ".join(CHANGED_COMMENT.format(bp=bp) if c == "l_comment" else c for c in columns)

    max_order = con.execute("SELECT max(l_orderkey) FROM lineitem").fetchone()[0]
    selects = {
        "base": "SELECT * FROM lineitem",
        "no_change": "SELECT * FROM lineitem",
        "tpch_refresh": f"""
            SELECT {with_comment(100)} FROM lineitem WHERE hash(l_orderkey) % 1000 <> 0
            UNION ALL
            SELECT * REPLACE (l_orderkey + {max_order} AS l_orderkey) FROM lineitem
            WHERE hash(l_orderkey) % 1000 = 1""",
        "change_10pct": f"SELECT {with_comment(1000)} FROM lineitem",
        "change_50pct": f"SELECT {with_comment(5000)} FROM lineitem",
    }
    for name, select in selects.items():
        con.execute(f"COPY ({select}) TO '{paths[name]}' (FORMAT parquet)")
    return {**paths, INPUTS_UNCHANGED: paths["base"]}
